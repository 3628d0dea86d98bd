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

/// An amount as a person reads it: `1,234,567` (decimals, when there are any, kept as
/// [`num_json`] rounds them).
pub(crate) fn grouped(x: f64) -> String {
    let plain = num_json(x).to_string();
    let (sign, rest) = plain
        .strip_prefix('-')
        .map_or(("", plain.as_str()), |r| ("-", r));
    let (int, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(i, f)| (i, Some(f)));
    let mut out = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    match frac {
        Some(f) => format!("{sign}{out}.{f}"),
        None => format!("{sign}{out}"),
    }
}

pub(crate) fn number(v: Option<&Json>) -> Option<f64> {
    match v? {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => parse_amount(s, &NegativeMarkers::default()).ok().flatten(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn grouped_puts_a_comma_every_three_digits() {
        for (x, want) in [
            (0.0, "0"),
            (999.0, "999"),
            (1000.0, "1,000"),
            (3_430_000.0, "3,430,000"),
            (-5500.0, "-5,500"),
            (1234.5, "1,234.5"),
        ] {
            assert_eq!(super::grouped(x), want, "{x}");
        }
    }
}
