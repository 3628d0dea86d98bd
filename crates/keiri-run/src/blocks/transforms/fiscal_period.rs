//! `transforms.fiscal_period`: its inputs and outputs are in `block_specs/transforms/transforms.fiscal_period.yaml`.

use super::{R, column_dates, one_of, pe, require_columns, set_column};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::memo::Memo;
use crate::jp;
use chrono::NaiveDate;
use polars::prelude::*;
use serde_json::{Value as J, json};
use std::rc::Rc;

/// A date's fiscal year, quarter and month, and its `YYYY-MM` (shared, not copied per row).
type Period = (Option<i32>, Option<i32>, Option<i32>, Rc<str>);

fn iso(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

fn fiscal_period(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let start = inputs.i64("fiscal_year_start_month")?.unwrap_or(4);
    let start = u32::try_from(start)
        .ok()
        .filter(|m| (1..=12).contains(m))
        .ok_or_else(|| {
            BlockError::input_invalid(
                "fiscal_year_start_month",
                "1〜12の整数が必要です",
                "expected 1 to 12",
            )
        })?;
    let label = match one_of(
        inputs,
        "fiscal_year_label",
        &["start_year", "end_year"],
        "start_year",
    )? {
        "end_year" => jp::FiscalYearLabel::EndYear,
        _ => jp::FiscalYearLabel::StartYear,
    };
    let date_field = inputs.str("date_field")?.unwrap_or("date");
    if !inputs.has("rows") && !inputs.has("date") {
        return Err(BlockError::input_invalid(
            "rows",
            "rows か date のどちらかが必要です",
            "either rows or date is required",
        ));
    }
    let period = match inputs.str("date")? {
        None => J::Null,
        Some(text) => {
            let d = jp::parse_date(text).ok_or_else(|| {
                BlockError::input_invalid(
                    "date",
                    &format!("「{text}」は日付として読めません"),
                    &format!("{text:?} is not a date"),
                )
            })?;
            let p = jp::fiscal_period(d, start, label).ok_or_else(|| {
                BlockError::failed("期間を計算できません", "cannot compute the period")
            })?;
            json!({
                "fiscal_year": p.fiscal_year, "fiscal_quarter": p.quarter, "fiscal_month": p.month,
                "year_start": iso(p.year_start), "year_end": iso(p.year_end),
                "quarter_start": iso(p.quarter_start), "quarter_end": iso(p.quarter_end),
                "month_start": iso(p.month_start), "month_end": iso(p.month_end),
            })
        }
    };
    let rows = if inputs.has("rows") {
        let mut df = inputs.table("rows")?;
        require_columns(&df, &[date_field.to_owned()])?;
        let dates = column_dates(df.column(date_field).map_err(pe)?, None)?;
        // One pass straight into the four columns: a million rows would otherwise hold a
        // period struct and a heap string per row beside the table. Years, quarters and
        // months are 32-bit: half the memory of 64-bit columns, and every value fits.
        let mut years: Vec<Option<i32>> = Vec::with_capacity(dates.len());
        let mut quarters: Vec<Option<i32>> = Vec::with_capacity(dates.len());
        let mut months: Vec<Option<i32>> = Vec::with_capacity(dates.len());
        let mut ym = StringChunkedBuilder::new("year_month".into(), dates.len());
        // Each distinct date's period and month worked out once (a year has 366 days).
        let mut memo: Memo<NaiveDate, Period> = Memo::default();
        for (d, _) in &dates {
            let Some(d) = *d else {
                years.push(None);
                quarters.push(None);
                months.push(None);
                ym.append_null();
                continue;
            };
            let (year, quarter, month, text) = memo.get_or(d, || {
                let p = jp::fiscal_period(d, start, label);
                (
                    p.map(|p| p.fiscal_year),
                    p.and_then(|p| i32::try_from(p.quarter).ok()),
                    p.and_then(|p| i32::try_from(p.month).ok()),
                    Rc::from(d.format("%Y-%m").to_string()),
                )
            });
            years.push(year);
            quarters.push(quarter);
            months.push(month);
            ym.append_value(&text);
        }
        drop(dates);
        set_column(&mut df, Column::new("fiscal_year".into(), years))?;
        set_column(&mut df, Column::new("fiscal_quarter".into(), quarters))?;
        set_column(&mut df, Column::new("fiscal_month".into(), months))?;
        set_column(&mut df, ym.finish().into_column())?;
        crate::value::Value::Table(df)
    } else {
        crate::value::Value::Json(J::Array(Vec::new()))
    };
    Ok(Outputs::new().with("rows", rows).with("period", period))
}

builtin!("transforms.fiscal_period", fiscal_period);
