//! `${…}` references, found anywhere in a value: whole strings, inside longer strings, and
//! nested in maps and lists.

use serde_json::Value;

use crate::yaml::escape_pointer;

/// What a reference points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `${node.alias[.path]}`
    Node {
        node: String,
        alias: String,
        path: Option<String>,
    },
    /// `${vars.name[.path]}`
    Var { name: String, path: Option<String> },
    /// `${env.NAME}`
    Env { name: String },
    /// `${config.name[.path]}`
    Config { name: String, path: Option<String> },
}

/// One reference found in a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub target: Target,
    /// The text between `${` and `}`.
    pub raw: String,
    /// JSON pointer of the string that holds it, relative to the scanned value.
    pub pointer: String,
    /// The string is exactly this one reference (so its value keeps its type).
    pub whole: bool,
}

/// A `${` without its `}`, or a reference with an empty part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub raw: String,
    pub pointer: String,
    pub reason: &'static str,
}

/// Parses the inside of `${…}`.
pub fn parse_target(raw: &str) -> Result<Target, &'static str> {
    let raw = raw.trim();
    let (head, rest) = match raw.split_once('.') {
        Some((h, r)) => (h.trim(), Some(r.trim())),
        None => (raw, None),
    };
    if head.is_empty() {
        return Err("empty reference");
    }
    let split = |rest: &str| -> (String, Option<String>) {
        match rest.split_once('.') {
            Some((a, p)) => (a.to_string(), Some(p.to_string()).filter(|p| !p.is_empty())),
            None => (rest.to_string(), None),
        }
    };
    let Some(rest) = rest.filter(|r| !r.is_empty()) else {
        return Err(
            "a reference needs a node and an output alias, or vars./env./config. and a name",
        );
    };
    let (name, path) = split(rest);
    if name.is_empty() {
        return Err("empty name after the dot");
    }
    Ok(match head {
        "vars" => Target::Var { name, path },
        "env" => Target::Env {
            name: rest.to_string(),
        },
        "config" => Target::Config { name, path },
        node => Target::Node {
            node: node.to_string(),
            alias: name,
            path,
        },
    })
}

/// Finds the references in one string. `pointer` is the string's location.
pub fn scan_str(s: &str, pointer: &str, refs: &mut Vec<Reference>, bad: &mut Vec<Malformed>) {
    let mut rest = s;
    let trimmed_whole = s.trim();
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            bad.push(Malformed {
                raw: after.to_string(),
                pointer: pointer.to_string(),
                reason: "unclosed ${",
            });
            return;
        };
        let raw = &after[..end];
        match parse_target(raw) {
            Ok(target) => refs.push(Reference {
                target,
                raw: raw.to_string(),
                pointer: pointer.to_string(),
                whole: trimmed_whole.len() == raw.len() + 3 && trimmed_whole.starts_with("${"),
            }),
            Err(reason) => bad.push(Malformed {
                raw: raw.to_string(),
                pointer: pointer.to_string(),
                reason,
            }),
        }
        rest = &after[end + 1..];
    }
}

/// Finds every reference in `value` (recursively); pointers start with `base`.
pub fn scan(value: &Value, base: &str, refs: &mut Vec<Reference>, bad: &mut Vec<Malformed>) {
    match value {
        Value::String(s) if s.contains("${") => {
            scan_str(s, base, refs, bad);
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                scan(item, &format!("{base}/{i}"), refs, bad);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                scan(v, &format!("{base}/{}", escape_pointer(k)), refs, bad);
            }
        }
        _ => {}
    }
}

/// The references in `values` whose values only a run knows — everything but a var named in
/// `known` — as written (`${…}`), in order: what keeps a dry-run from previewing them.
pub fn known_only_at_run<'a>(
    values: impl IntoIterator<Item = &'a Value>,
    known: &std::collections::HashSet<&str>,
) -> Vec<String> {
    let (mut found, mut malformed) = (Vec::new(), Vec::new());
    for value in values {
        scan(value, "", &mut found, &mut malformed);
    }
    found
        .iter()
        .filter(|r| match &r.target {
            Target::Var { name, .. } => !known.contains(name.as_str()),
            _ => true,
        })
        .map(|r| format!("${{{}}}", r.raw))
        .collect()
}

/// True when `value` holds any reference.
pub fn contains_reference(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains("${"),
        Value::Array(items) => items.iter().any(contains_reference),
        Value::Object(map) => map.values().any(contains_reference),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(value: Value, expect: &[(&str, &str, bool)]) {
        let (mut refs, mut bad) = (Vec::new(), Vec::new());
        scan(&value, "", &mut refs, &mut bad);
        let got: Vec<(&str, &str, bool)> = refs
            .iter()
            .map(|r| (r.raw.as_str(), r.pointer.as_str(), r.whole))
            .collect();
        assert_eq!(got, expect, "{value}");
        assert!(bad.is_empty());
    }

    #[test]
    fn finds_references_everywhere() {
        check(json!("${a.b}"), &[("a.b", "", true)]);
        check(json!("合計: ${a.total} 円"), &[("a.total", "", false)]);
        check(
            json!({"x": [{"y": "${n.o.k}"}]}),
            &[("n.o.k", "/x/0/y", true)],
        );
        check(
            json!("${a.b}${c.d}"),
            &[("a.b", "", false), ("c.d", "", false)],
        );
        check(json!({"a/b": "${vars.x}"}), &[("vars.x", "/a~1b", true)]);
        check(json!(12), &[]);
    }

    #[test]
    fn targets() {
        assert_eq!(
            parse_target("n.alias.path.deep"),
            Ok(Target::Node {
                node: "n".into(),
                alias: "alias".into(),
                path: Some("path.deep".into())
            })
        );
        assert_eq!(
            parse_target("vars.x"),
            Ok(Target::Var {
                name: "x".into(),
                path: None
            })
        );
        assert_eq!(
            parse_target("env.API_KEY"),
            Ok(Target::Env {
                name: "API_KEY".into()
            })
        );
        assert!(parse_target("node").is_err());
        assert!(parse_target("").is_err());
    }

    #[test]
    fn malformed() {
        let (mut refs, mut bad) = (Vec::new(), Vec::new());
        scan(&json!("${a.b"), "", &mut refs, &mut bad);
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].reason, "unclosed ${");
    }

    #[test]
    fn only_vars_a_dry_run_knows_are_known_before_the_run() {
        let known = std::collections::HashSet::from(["period"]);
        let inputs = [
            json!("${vars.period}"),
            json!({"path": "${read.rows}"}),
            json!("支払先: ${vars.payee}"),
            json!(["${env.HOME}", "${config.bank.code}", "月末"]),
        ];
        assert_eq!(
            known_only_at_run(&inputs, &known),
            [
                "${read.rows}",
                "${vars.payee}",
                "${env.HOME}",
                "${config.bank.code}"
            ]
        );
        assert!(known_only_at_run(&[json!("${vars.period}")], &known).is_empty());
    }
}
