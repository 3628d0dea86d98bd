//! `control/*`: the checks and the evidence of internal control — input data quality,
//! journal checks, policy rules and variance thresholds (here), audit sampling
//! ([`sampling`]), segregation of duties ([`sod`]) and the hash-chained audit trail
//! ([`audit_log`]). (`control.approval` needs a person and belongs to the interactive
//! runtime.)
//!
//! Policy conditions are row expressions in the one language the transforms use
//! ([`super::transforms::expr`]), so `amount >= 100000` means the same in
//! `transforms.filter_rows` and `control.policy_enforce`. Regular expressions are the
//! `regex` crate's (linear time: a rule from a plan cannot hang the run).

mod approval;
mod audit_log;
mod data_quality;
mod journal_check;
mod policy_enforce;
mod sampling;
mod sod_check;
mod variance_check;

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde_json::Value as Json;

use super::{cancelled, invalid};
use crate::block::{BlockError, Inputs};
use crate::blocks::kit::numbers::number;
use crate::blocks::kit::text::text;
use crate::jp::parse_date;

fn objects(inputs: &Inputs, key: &str) -> Result<Vec<serde_json::Map<String, Json>>, BlockError> {
    match inputs.json(key) {
        None => Ok(Vec::new()),
        Some(Json::Array(items)) => items
            .into_iter()
            .map(|i| match i {
                Json::Object(m) => Ok(m),
                _ => Err(BlockError::input_invalid(
                    key,
                    "オブジェクトの配列が必要です",
                    "expected an array of objects",
                )),
            })
            .collect(),
        Some(_) => Err(BlockError::input_invalid(
            key,
            "オブジェクトの配列が必要です",
            "expected an array of objects",
        )),
    }
}

fn is_blank(v: Option<&Json>) -> bool {
    match v {
        None | Some(Json::Null) => true,
        Some(Json::String(s)) => s.trim().is_empty(),
        _ => false,
    }
}

fn date(v: Option<&Json>) -> Option<NaiveDate> {
    match v? {
        Json::String(s) => parse_date(s),
        Json::Number(n) => parse_date(&n.to_string()),
        _ => None,
    }
}

fn severity(rule: &serde_json::Map<String, Json>, default: &str) -> Result<String, BlockError> {
    match rule
        .get("severity")
        .and_then(Json::as_str)
        .unwrap_or(default)
    {
        s @ ("info" | "warning" | "error") => Ok(s.to_string()),
        other => Err(invalid(
            format!("severity {other:?} は info・warning・error のどれかです"),
            format!("severity {other:?} must be info, warning or error"),
        )),
    }
}

fn count_by(map: &mut BTreeMap<String, usize>, key: &str) {
    *map.entry(key.to_string()).or_default() += 1;
}
