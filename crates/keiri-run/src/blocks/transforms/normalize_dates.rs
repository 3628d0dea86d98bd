//! `transforms.normalize_dates`: its inputs and outputs are in `block_specs/transforms/transforms.normalize_dates.yaml`.

use super::{
    R, column_dates, date_column, error_entry, fail_at, one_of, pe, require_columns, set_column,
    warn_unreadable,
};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::cancelled;
use crate::value::column_to_json;
use chrono::NaiveDate;
use polars::prelude::*;
use serde_json::Value as J;

fn normalize_dates(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut df = inputs.table("rows")?;
    let mut fields = inputs
        .strings("fields")?
        .ok_or_else(|| BlockError::input_invalid("fields", "必須です", "it is required"))?;
    // An empty name: the file has no such column (`absent_ok`; a plan answered "not in the
    // file"). The other columns are normalised; the rows pass through.
    fields.retain(|f| !f.trim().is_empty());
    require_columns(&df, &fields)?;
    let output_format = inputs.str("output_format")?.unwrap_or("%Y-%m-%d");
    let on_error = one_of(inputs, "on_error", &["empty", "keep", "error"], "keep")?;
    // The format is checked once on a known date so a bad one fails before any row.
    if chrono::format::StrftimeItems::new(output_format)
        .any(|i| matches!(i, chrono::format::Item::Error))
    {
        return Err(BlockError::input_invalid(
            "output_format",
            "日付の書式が不正です",
            "invalid date format",
        ));
    }
    let mut errors = Vec::new();
    for name in &fields {
        cancelled(ctx)?;
        let from = errors.len();
        let column = df.column(name).map_err(pe)?.clone();
        let dates = column_dates(&column, None)?;
        let mut kept: Vec<usize> = Vec::new();
        for (i, (d, present)) in dates.iter().enumerate() {
            if d.is_none() && *present {
                let value = column_to_json(&column.slice(i as i64, 1))?
                    .pop()
                    .unwrap_or(J::Null);
                if on_error == "error" {
                    return Err(fail_at(
                        i,
                        name,
                        &value,
                        "日付として読めません",
                        "is not a date",
                    ));
                }
                errors.push(error_entry(i, name, &value, "not a date"));
                if on_error == "keep" {
                    kept.push(i);
                }
            }
        }
        let only_dates: Vec<Option<NaiveDate>> = dates.iter().map(|d| d.0).collect();
        let new = if output_format == "%Y-%m-%d" && kept.is_empty() {
            // The ISO form is a Date column: compact, and it reads back as YYYY-MM-DD.
            date_column(name, &only_dates)?
        } else {
            let mut texts: Vec<Option<String>> = only_dates
                .iter()
                .map(|d| d.map(|d| d.format(output_format).to_string()))
                .collect();
            if !kept.is_empty() {
                let original = column.cast(&DataType::String).map_err(pe)?;
                let original = original.str().map_err(pe)?;
                for i in kept {
                    texts[i] = original.get(i).map(str::to_owned);
                }
            }
            Column::new(name.as_str().into(), texts)
        };
        set_column(&mut df, new)?;
        let total = df.height();
        warn_unreadable(
            ctx,
            &errors[from..],
            name,
            total,
            on_error,
            ("日付", "dates"),
        );
    }
    Ok(Outputs::new()
        .with("rows", df)
        .with("errors", J::Array(errors)))
}

builtin!("transforms.normalize_dates", normalize_dates);
