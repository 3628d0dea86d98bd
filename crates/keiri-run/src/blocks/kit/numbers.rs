//! Numbers as the blocks write them into JSON outputs, and read them from JSON cells.

use serde_json::{Value as Json, json};

use crate::jp::{NegativeMarkers, parse_amount};

/// A number as JSON: an integer when it is one (amounts in yen), else a float rounded to
/// four decimals so sums of cents do not print as 0.30000000000000004.
pub(crate) fn num_json(x: f64) -> Json {
    let r = (x * 10_000.0).round() / 10_000.0;
    if r.fract() == 0.0 && r.abs() < 9.0e15 {
        json!(r as i64)
    } else {
        json!(r)
    }
}

pub(crate) fn number(v: Option<&Json>) -> Option<f64> {
    match v? {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => parse_amount(s, &NegativeMarkers::default()).ok().flatten(),
        _ => None,
    }
}
