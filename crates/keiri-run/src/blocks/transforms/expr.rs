//! Evaluating row expressions of `transforms.filter_rows`, `transforms.compute_columns` and
//! `control.policy_enforce`; the language's parser is keiri-plan's [`keiri_plan::row_expr`]
//! (the column check before a run reads expressions with it too):
//! column names as bare words (Japanese included; `` `a b` `` or `[a b]` for names with
//! spaces or operators), numbers, strings, `true`/`false`/`null`, `+ - * /`, comparisons
//! (`== != > >= < <=`, `=` too), `and`/`or`/`not` (`&&`/`||`/`!`), `in [..]`/`not in [..]`,
//! and the functions `contains`, `starts_with`, `ends_with`, `is_empty`, `round`, `floor`,
//! `ceil`, `abs`, `if`, `days_between`, `concat`, `len`, `name_key` (a name as
//! [`crate::blocks::kit::text::normalize_party_name`] folds it, the form the matching blocks
//! compare names in).
//!
//! Values are dynamically typed the way accounting data is: a CSV cell `"1,200"` or `"¥1,200"`
//! compares and adds as the number 1200 (through [`crate::jp::parse_amount`]), a null cell
//! equals `""`, and two texts that are both numbers compare as numbers. The language has no
//! assignment, no loops and no access outside the row, so a plan cannot smuggle code in.

use serde_json::Value as J;

pub(crate) use keiri_plan::row_expr::{BinOp, Expr, UnaryOp, columns, parse};

use crate::jp;

/// A float as JSON: whole numbers as integers, so `請求額 - 入金額` of integers stays integral.
pub(crate) fn number(x: f64) -> J {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        J::from(x as i64)
    } else {
        crate::value::float_json(x)
    }
}

/// A cell as a number: numbers, and texts that read as amounts (`"1,200"`, `"¥1,200"`, `"△500"`).
pub(crate) fn to_number(v: &J) -> Option<f64> {
    match v {
        J::Number(n) => n.as_f64(),
        J::String(s) => jp::parse_amount(s, &jp::NegativeMarkers::default())
            .ok()
            .flatten(),
        J::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// A cell as text (null is empty).
pub(crate) fn to_text(v: &J) -> String {
    match v {
        J::Null => String::new(),
        J::String(s) => s.clone(),
        J::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => (f as i64).to_string(),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

fn truthy(v: &J) -> bool {
    match v {
        J::Null => false,
        J::Bool(b) => *b,
        J::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        J::String(s) => !s.is_empty(),
        J::Array(a) => !a.is_empty(),
        J::Object(o) => !o.is_empty(),
    }
}

pub(crate) fn is_empty(v: &J) -> bool {
    match v {
        J::Null => true,
        J::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

/// Orders two cells: numerically when both read as numbers, else as text.
fn compare(a: &J, b: &J) -> std::cmp::Ordering {
    if let (J::Bool(x), J::Bool(y)) = (a, b) {
        return x.cmp(y);
    }
    // A number against text compares as numbers only if the text reads as one.
    let numeric = matches!(a, J::Number(_))
        || matches!(b, J::Number(_))
        || (looks_numeric(a) && looks_numeric(b));
    if numeric && let (Some(x), Some(y)) = (to_number(a), to_number(b)) {
        return x.total_cmp(&y);
    }
    to_text(a).cmp(&to_text(b))
}

fn looks_numeric(v: &J) -> bool {
    matches!(v, J::String(s) if !s.trim().is_empty() && to_number(v).is_some())
}

fn equal(a: &J, b: &J) -> bool {
    if is_empty(a) || is_empty(b) {
        return is_empty(a) && is_empty(b);
    }
    compare(a, b) == std::cmp::Ordering::Equal
}

/// Evaluates `e` on one row; `get` reads a column.
pub(crate) fn eval(e: &Expr, get: &dyn Fn(&str) -> J) -> Result<J, String> {
    Ok(match e {
        Expr::Literal(v) => v.clone(),
        Expr::Column(c) => get(c),
        Expr::Unary(UnaryOp::Not, a) => J::Bool(!truthy(&eval(a, get)?)),
        Expr::Unary(UnaryOp::Neg, a) => {
            let v = eval(a, get)?;
            if is_empty(&v) {
                J::Null
            } else {
                number(-to_number(&v).ok_or_else(|| format!("{} is not a number", to_text(&v)))?)
            }
        }
        Expr::Binary(BinOp::And, a, b) => J::Bool(truthy(&eval(a, get)?) && truthy(&eval(b, get)?)),
        Expr::Binary(BinOp::Or, a, b) => J::Bool(truthy(&eval(a, get)?) || truthy(&eval(b, get)?)),
        Expr::Binary(op, a, b) => {
            let (x, y) = (eval(a, get)?, eval(b, get)?);
            match op {
                BinOp::Eq => J::Bool(equal(&x, &y)),
                BinOp::Ne => J::Bool(!equal(&x, &y)),
                BinOp::Gt | BinOp::Ge | BinOp::Lt | BinOp::Le => {
                    // An empty cell is not greater or smaller than anything.
                    if is_empty(&x) || is_empty(&y) {
                        return Ok(J::Bool(false));
                    }
                    // A number has no order with text that does not read as one: 「不明」 >=
                    // 1000 is an error at its row, as 「不明」 + 1 is, not true because the
                    // text sorts after "1000".
                    for (v, other) in [(&x, &y), (&y, &x)] {
                        if matches!(other, J::Number(_))
                            && matches!(v, J::String(_))
                            && to_number(v).is_none()
                        {
                            return Err(format!("{} is not a number", to_text(v)));
                        }
                    }
                    let o = compare(&x, &y);
                    J::Bool(match op {
                        BinOp::Gt => o.is_gt(),
                        BinOp::Ge => o.is_ge(),
                        BinOp::Lt => o.is_lt(),
                        _ => o.is_le(),
                    })
                }
                _ => {
                    if is_empty(&x) || is_empty(&y) {
                        return Ok(J::Null);
                    }
                    let nx =
                        to_number(&x).ok_or_else(|| format!("{} is not a number", to_text(&x)))?;
                    let ny =
                        to_number(&y).ok_or_else(|| format!("{} is not a number", to_text(&y)))?;
                    match op {
                        BinOp::Add => number(nx + ny),
                        BinOp::Sub => number(nx - ny),
                        BinOp::Mul => number(nx * ny),
                        _ => {
                            if ny == 0.0 {
                                return Err("division by zero".into());
                            }
                            number(nx / ny)
                        }
                    }
                }
            }
        }
        Expr::In(a, items, negated) => {
            let x = eval(a, get)?;
            let mut found = false;
            for item in items {
                if equal(&x, &eval(item, get)?) {
                    found = true;
                    break;
                }
            }
            J::Bool(found != *negated)
        }
        Expr::Call(name, args) => call(name, args, get)?,
    })
}

fn call(name: &str, args: &[Expr], get: &dyn Fn(&str) -> J) -> Result<J, String> {
    let arg = |i: usize| eval(&args[i], get);
    let num = |v: &J| to_number(v).ok_or_else(|| format!("{} is not a number", to_text(v)));
    Ok(match name {
        "if" => {
            if truthy(&arg(0)?) {
                arg(1)?
            } else {
                arg(2)?
            }
        }
        "is_empty" => J::Bool(is_empty(&arg(0)?)),
        "contains" => J::Bool(to_text(&arg(0)?).contains(&to_text(&arg(1)?))),
        "starts_with" => J::Bool(to_text(&arg(0)?).starts_with(&to_text(&arg(1)?))),
        "ends_with" => J::Bool(to_text(&arg(0)?).ends_with(&to_text(&arg(1)?))),
        "len" => J::from(to_text(&arg(0)?).chars().count()),
        "name_key" => {
            let v = arg(0)?;
            if is_empty(&v) {
                return Ok(J::Null);
            }
            J::String(crate::blocks::kit::text::normalize_party_name(&to_text(&v)))
        }
        "concat" => J::String(
            args.iter()
                .map(|a| eval(a, get).map(|v| to_text(&v)))
                .collect::<Result<String, _>>()?,
        ),
        "abs" | "floor" | "ceil" | "round" => {
            let v = arg(0)?;
            if is_empty(&v) {
                return Ok(J::Null);
            }
            let x = num(&v)?;
            match name {
                "abs" => number(x.abs()),
                "floor" => number(x.floor()),
                "ceil" => number(x.ceil()),
                _ => {
                    let digits = match args.get(1) {
                        Some(d) => num(&eval(d, get)?)? as i32,
                        None => 0,
                    };
                    let scale = 10f64.powi(digits);
                    // Half away from zero (四捨五入), not banker's rounding.
                    number(jp::Rounding::Round.apply(x * scale) / scale)
                }
            }
        }
        "days_between" => {
            let (a, b) = (arg(0)?, arg(1)?);
            if is_empty(&a) || is_empty(&b) {
                return Ok(J::Null);
            }
            let date = |v: &J| {
                jp::parse_date(&to_text(v)).ok_or_else(|| format!("{} is not a date", to_text(v)))
            };
            J::from((date(&b)? - date(&a)?).num_days())
        }
        other => return Err(format!("unknown function {other}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(src: &str, row: J) -> Result<J, String> {
        let e = parse(src)?;
        eval(&e, &|c| row.get(c).cloned().unwrap_or(J::Null))
    }

    #[test]
    fn cases() {
        let row = json!({"金額": "120,000", "勘定科目": "交際費", "取引先": "", "請求額": 1100, "入金額": 1000,
                         "請求日": "2024-04-01", "入金日": "令和6年4月30日", "a b": 2});
        let cases: &[(&str, J)] = &[
            ("金額 >= 100000 and 勘定科目 == \"交際費\"", json!(true)),
            (
                "金額 > 200000 or 勘定科目 in ['会議費', '交際費']",
                json!(true),
            ),
            ("勘定科目 not in ['交際費']", json!(false)),
            ("取引先 != \"\"", json!(false)),
            ("is_empty(取引先)", json!(true)),
            ("contains(勘定科目, '交際')", json!(true)),
            ("請求額 - 入金額", json!(100)),
            ("round(請求額 / 3)", json!(367)),
            ("if(請求額 > 入金額, '未収', '済')", json!("未収")),
            ("days_between(請求日, 入金日)", json!(29)),
            (
                "name_key(\"(株)ﾔﾏﾀﾞ 商事\") == name_key(\"株式会社ヤマダ商事\")",
                json!(true),
            ),
            (
                "name_key(\"ヤマダ商事\") == name_key(\"ヤマダ商店\")",
                json!(false),
            ),
            ("name_key(取引先)", J::Null),
            ("concat(勘定科目, '-', 請求額)", json!("交際費-1100")),
            ("`a b` * 2", json!(4)),
            ("[a b] * 2", json!(4)),
            ("金額 ＞＝ １００，０００", json!(true)),
            ("not (請求額 < 入金額)", json!(true)),
        ];
        for (src, expect) in cases {
            assert_eq!(run(src, row.clone()).as_ref(), Ok(expect), "{src}");
        }
    }

    #[test]
    fn errors() {
        assert!(parse("金額 >=").is_err());
        assert!(parse("system('x')").is_err());
        assert!(parse("round(1, 2, 3)").is_err());
        assert!(run("1 / 0", json!({})).is_err());
        // A number against text that is no number: an error, either way round; text against
        // text and numbers written as text still compare.
        let row = json!({"金額": "不明", "科目": "旅費", "件数": "1,200"});
        assert_eq!(
            run("金額 >= 1000", row.clone()),
            Err("不明 is not a number".into())
        );
        assert_eq!(
            run("1000 < 金額", row.clone()),
            Err("不明 is not a number".into())
        );
        // 旅 (U+65C5) after 交 (U+4EA4).
        assert_eq!(run("科目 > '交際費'", row.clone()), Ok(json!(true)));
        assert_eq!(run("件数 > 1000", row.clone()), Ok(json!(true)));
        assert_eq!(run("金額 == 1000", row), Ok(json!(false)));
    }
}
