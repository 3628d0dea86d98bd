//! `transforms.coerce_types`: its inputs and outputs are in `block_specs/transforms/transforms.coerce_types.yaml`.

use super::expr;
use super::{
    R, cell_date, cells, date_column, error_entry, fail_at, field, is_blank, objects, one_of,
    set_column,
};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::cancelled;
use crate::jp;
use crate::value::json_column;
use serde_json::Value as J;

// ---------------------------------------------------------------------------------------
// coerce_types

fn parse_bool(v: &J) -> Option<bool> {
    match v {
        J::Bool(b) => Some(*b),
        J::Number(n) => n.as_f64().map(|x| x != 0.0),
        J::String(s) => match jp::fold_width(s.trim()).to_lowercase().as_str() {
            "true" | "1" | "yes" | "y" | "はい" | "○" | "〇" | "有" | "あり" | "済" => {
                Some(true)
            }
            "false" | "0" | "no" | "n" | "いいえ" | "×" | "無" | "なし" | "未" => {
                Some(false)
            }
            _ => None,
        },
        _ => None,
    }
}

fn coerce_types(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut df = inputs.table("rows")?;
    let specs = objects(inputs, "columns", true)?;
    let on_error = one_of(inputs, "on_error", &["empty", "keep", "error"], "empty")?;
    let mut errors = Vec::new();
    for spec in &specs {
        cancelled(ctx)?;
        let name = field(spec, "field", "columns")?;
        let to = field(spec, "to", "columns")?;
        let format = spec.get("format").and_then(J::as_str);
        let values = cells(&df, name)?;
        let mut failed = false;
        let mut fail = |i: usize, v: &J, errors: &mut Vec<J>| -> R<()> {
            failed = true;
            if on_error == "error" {
                return Err(fail_at(
                    i,
                    name,
                    v,
                    &format!("{to} に変換できません"),
                    &format!("cannot be converted to {to}"),
                ));
            }
            errors.push(error_entry(i, name, v, &format!("cannot convert to {to}")));
            Ok(())
        };
        let column = match to {
            "date" => {
                let mut dates = Vec::with_capacity(values.len());
                for (i, v) in values.iter().enumerate() {
                    let d = if is_blank(v) {
                        None
                    } else {
                        cell_date(v, format)
                    };
                    if d.is_none() && !is_blank(v) {
                        fail(i, v, &mut errors)?;
                    }
                    dates.push(d);
                }
                if failed && on_error == "keep" {
                    let mixed: Vec<J> = values
                        .iter()
                        .zip(&dates)
                        .map(|(v, d)| {
                            d.map_or_else(
                                || v.clone(),
                                |d| J::String(d.format("%Y-%m-%d").to_string()),
                            )
                        })
                        .collect();
                    json_column(name, &mixed)
                } else {
                    date_column(name, &dates)?
                }
            }
            "number" | "integer" | "string" | "boolean" => {
                let mut out = Vec::with_capacity(values.len());
                for (i, v) in values.iter().enumerate() {
                    if is_blank(v) && to != "string" {
                        out.push(J::Null);
                        continue;
                    }
                    let converted = match to {
                        "string" => Some(if v.is_null() {
                            J::Null
                        } else {
                            J::String(expr::to_text(v))
                        }),
                        "boolean" => parse_bool(v).map(J::Bool),
                        "integer" => expr::to_number(v)
                            .filter(|x| x.fract() == 0.0)
                            .map(|x| J::from(x as i64)),
                        _ => expr::to_number(v)
                            .and_then(|x| serde_json::Number::from_f64(x).map(J::Number)),
                    };
                    match converted {
                        Some(c) => out.push(c),
                        None => {
                            fail(i, v, &mut errors)?;
                            out.push(if on_error == "keep" {
                                v.clone()
                            } else {
                                J::Null
                            });
                        }
                    }
                }
                json_column(name, &out)
            }
            other => {
                return Err(BlockError::input_invalid(
                    "columns",
                    &format!("to={other} は使えません（string, number, integer, date, boolean）"),
                    &format!("to={other} is not string, number, integer, date or boolean"),
                ));
            }
        };
        set_column(&mut df, column)?;
    }
    Ok(Outputs::new()
        .with("rows", df)
        .with("errors", J::Array(errors)))
}

builtin!("transforms.coerce_types", coerce_types);
