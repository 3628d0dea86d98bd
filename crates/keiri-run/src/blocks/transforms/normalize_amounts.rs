//! `transforms.normalize_amounts`: its inputs and outputs are in `block_specs/transforms/transforms.normalize_amounts.yaml`.

use super::{
    R, error_entry, fail_at, num, number_column, one_of, pe, require_columns, set_column,
    warn_unreadable,
};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::cancelled;
use crate::jp;
use crate::value::json_column;
use polars::prelude::*;
use serde_json::Value as J;

// ---------------------------------------------------------------------------------------
// normalize_amounts, normalize_dates, fiscal_period

fn normalize_amounts(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut df = inputs.table("rows")?;
    let fields = inputs
        .strings("fields")?
        .ok_or_else(|| BlockError::input_invalid("fields", "必須です", "it is required"))?;
    require_columns(&df, &fields)?;
    let factor = match one_of(inputs, "unit", &["yen", "thousand", "million"], "yen")? {
        "thousand" => 1_000.0,
        "million" => 1_000_000.0,
        _ => 1.0,
    };
    let markers = match inputs.strings("negative_markers")? {
        Some(list) => jp::NegativeMarkers::from_list(&list),
        None => jp::NegativeMarkers::default(),
    };
    let on_error = one_of(inputs, "on_error", &["empty", "keep", "error"], "keep")?;
    let mut errors = Vec::new();
    for name in &fields {
        cancelled(ctx)?;
        let from = errors.len();
        let column = df.column(name).map_err(pe)?.clone();
        let new = if column.dtype().is_primitive_numeric() {
            let scaled = column.cast(&DataType::Float64).map_err(pe)?;
            let values: Vec<Option<f64>> = scaled
                .f64()
                .map_err(pe)?
                .iter()
                .map(|v| v.map(|x| x * factor))
                .collect();
            number_column(name, &values)?
        } else {
            let text = column.cast(&DataType::String).map_err(pe)?;
            let texts = text.str().map_err(pe)?;
            let mut values: Vec<Option<f64>> = Vec::with_capacity(texts.len());
            let mut kept: Vec<(usize, String)> = Vec::new();
            for (i, t) in texts.iter().enumerate() {
                let Some(t) = t else {
                    values.push(None);
                    continue;
                };
                match jp::parse_amount(t, &markers) {
                    Ok(v) => values.push(v.map(|x| x * factor)),
                    Err(_) => {
                        let value = J::String(t.to_owned());
                        if on_error == "error" {
                            return Err(fail_at(
                                i,
                                name,
                                &value,
                                "金額として読めません",
                                "is not an amount",
                            ));
                        }
                        errors.push(error_entry(i, name, &value, "not an amount"));
                        values.push(None);
                        if on_error == "keep" {
                            kept.push((i, t.to_owned()));
                        }
                    }
                }
            }
            if kept.is_empty() {
                number_column(name, &values)?
            } else {
                // Keeping unreadable text makes the column mixed; it becomes text like any
                // mixed column (see `rows_to_table`).
                let mut mixed: Vec<J> = values.iter().map(|v| v.map_or(J::Null, num)).collect();
                for (i, t) in kept {
                    mixed[i] = J::String(t);
                }
                json_column(name, &mixed)
            }
        };
        set_column(&mut df, new)?;
        let total = df.height();
        warn_unreadable(
            ctx,
            &errors[from..],
            name,
            total,
            on_error,
            ("金額", "amounts"),
        );
    }
    Ok(Outputs::new()
        .with("rows", df)
        .with("errors", J::Array(errors)))
}

builtin!("transforms.normalize_amounts", normalize_amounts);
