//! The one `${…}` resolver: the validator's reference rules, the dry-run's sample values and
//! the runtime's real values all go through [`resolve`].
//!
//! A string that is exactly one reference (`"${n.rows}"`, surrounding spaces allowed) is
//! replaced by the referenced value with its type kept — a table stays a table at run time.
//! A reference inside a longer string is spliced in as text (strings as they are, anything
//! else as compact JSON). References nested in maps and lists are resolved in place; there a
//! value must become JSON ([`Lookup::to_json`]). A `${` without its `}` is kept as text, the
//! way the validator reports it.
//!
//! What a reference means is the caller's business ([`Lookup`]): the dry-run returns samples,
//! the runtime returns node outputs, `vars`, allowlisted environment variables and config.

use serde_json::Value;

use crate::refs::{self, Target};

/// Why a reference could not be resolved. `raw` is the text between `${` and `}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The reference does not parse (`${node}`, `${}`).
    #[error("malformed reference ${{{raw}}}: {reason}")]
    Malformed { raw: String, reason: String },
    /// Nothing answers to the reference (no such node output, var or config key).
    #[error("unresolved reference ${{{raw}}}")]
    Unresolved { raw: String },
    /// `${env.NAME}` where NAME is not on the allowlist of the run.
    #[error("environment variable {name} is not on the allowlist")]
    EnvNotAllowed { name: String },
    /// The value exists but cannot be used here (e.g. too large to become text).
    #[error("reference ${{{raw}}}: {reason}")]
    Unusable { raw: String, reason: String },
}

/// What the references of a value point at.
pub trait Lookup {
    /// The value type of the caller: JSON for the dry-run, JSON-or-table at run time.
    type Value;

    /// The value of one parsed reference.
    fn lookup(&self, raw: &str, target: &Target) -> Result<Self::Value, ResolveError>;

    /// A reference that does not parse; an error unless the caller shows a placeholder.
    fn malformed(&self, raw: &str, reason: &str) -> Result<Self::Value, ResolveError> {
        Err(ResolveError::Malformed {
            raw: raw.to_string(),
            reason: reason.to_string(),
        })
    }

    /// Wraps a literal (a value with no reference left in it).
    fn literal(&self, value: Value) -> Self::Value;

    /// A value placed inside a map, a list or a string becomes JSON.
    fn to_json(&self, raw: &str, value: Self::Value) -> Result<Value, ResolveError>;
}

/// One piece of a string: text or the inside of a `${…}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment<'s> {
    Text(&'s str),
    Reference(&'s str),
}

/// Splits a string into text and references; an unclosed `${` stays text.
pub fn segments(s: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            break;
        };
        if start > 0 {
            out.push(Segment::Text(&rest[..start]));
        }
        out.push(Segment::Reference(&after[..end]));
        rest = &after[end + 1..];
    }
    if !rest.is_empty() {
        out.push(Segment::Text(rest));
    }
    out
}

/// The inside of `s` when `s` is exactly one reference (spaces around allowed).
pub fn whole_reference(s: &str) -> Option<&str> {
    match segments(s.trim()).as_slice() {
        [Segment::Reference(raw)] => Some(raw),
        _ => None,
    }
}

fn lookup_raw<L: Lookup + ?Sized>(raw: &str, lookup: &L) -> Result<L::Value, ResolveError> {
    match refs::parse_target(raw) {
        Ok(target) => lookup.lookup(raw, &target),
        Err(reason) => lookup.malformed(raw, reason),
    }
}

/// Resolves every reference in `value`.
pub fn resolve<L: Lookup + ?Sized>(value: &Value, lookup: &L) -> Result<L::Value, ResolveError> {
    if let Value::String(s) = value
        && let Some(raw) = whole_reference(s)
    {
        return lookup_raw(raw, lookup);
    }
    if !refs::contains_reference(value) {
        return Ok(lookup.literal(value.clone()));
    }
    resolve_json(value, lookup).map(|v| lookup.literal(v))
}

/// Resolves `value` to JSON (every reference's value made JSON).
pub fn resolve_json<L: Lookup + ?Sized>(value: &Value, lookup: &L) -> Result<Value, ResolveError> {
    match value {
        Value::String(s) if s.contains("${") => {
            if let Some(raw) = whole_reference(s) {
                let v = lookup_raw(raw, lookup)?;
                return lookup.to_json(raw, v);
            }
            interpolate(s, lookup).map(Value::String)
        }
        Value::Array(items) => items
            .iter()
            .map(|v| resolve_json(v, lookup))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| resolve_json(v, lookup).map(|v| (k.clone(), v)))
            .collect::<Result<serde_json::Map<_, _>, _>>()
            .map(Value::Object),
        other => Ok(other.clone()),
    }
}

/// Splices the references of `s` into it as text.
pub fn interpolate<L: Lookup + ?Sized>(s: &str, lookup: &L) -> Result<String, ResolveError> {
    let mut out = String::new();
    for segment in segments(s) {
        match segment {
            Segment::Text(t) => out.push_str(t),
            Segment::Reference(raw) => {
                let v = lookup_raw(raw, lookup)?;
                match lookup.to_json(raw, v)? {
                    Value::String(v) => out.push_str(&v),
                    other => out.push_str(&other.to_string()),
                }
            }
        }
    }
    Ok(out)
}

/// Follows a dotted path (`a.b.0.c`) into a JSON value: object keys, array indexes.
pub fn descend<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    let mut cur = value;
    for part in path.split('.') {
        cur = match cur {
            Value::Object(m) => m.get(part)?,
            Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A lookup over a fixed JSON document: `{"n": {"alias": …}, "vars": {…}}`.
    struct Doc(Value);

    impl Lookup for Doc {
        type Value = Value;
        fn lookup(&self, raw: &str, target: &Target) -> Result<Value, ResolveError> {
            let (head, name, path) = match target {
                Target::Node { node, alias, path } => (node.as_str(), alias, path),
                Target::Var { name, path } => ("vars", name, path),
                Target::Config { name, path } => ("config", name, path),
                Target::Env { name } => {
                    return Err(ResolveError::EnvNotAllowed { name: name.clone() });
                }
            };
            let base = self.0.get(head).and_then(|h| h.get(name.as_str()));
            let found = match (base, path) {
                (Some(b), Some(p)) => descend(b, p),
                (b, None) => b,
                (None, Some(_)) => None,
            };
            found.cloned().ok_or(ResolveError::Unresolved {
                raw: raw.to_string(),
            })
        }
        fn literal(&self, value: Value) -> Value {
            value
        }
        fn to_json(&self, _raw: &str, value: Value) -> Result<Value, ResolveError> {
            Ok(value)
        }
    }

    fn check(value: Value, expect: Result<Value, &str>) {
        let doc = Doc(json!({
            "n": {"rows": [{"a": 1}, {"a": 2}], "total": 1200, "name": "東京商事"},
            "vars": {"x": "abc", "deep": {"k": [10, 20]}},
            "config": {"mode": "fast"}
        }));
        let got = resolve(&value, &doc).map_err(|e| e.to_string());
        assert_eq!(got, expect.map_err(str::to_string), "{value}");
    }

    #[test]
    fn whole_references_keep_their_type() {
        check(json!("${n.total}"), Ok(json!(1200)));
        check(json!(" ${n.rows} "), Ok(json!([{"a": 1}, {"a": 2}])));
        check(json!("${n.rows.1.a}"), Ok(json!(2)));
        check(json!("${vars.deep.k.0}"), Ok(json!(10)));
        check(json!("${config.mode}"), Ok(json!("fast")));
    }

    #[test]
    fn references_inside_strings_become_text() {
        check(json!("合計 ${n.total} 円"), Ok(json!("合計 1200 円")));
        check(json!("${n.name}/${vars.x}"), Ok(json!("東京商事/abc")));
        check(json!("k=${vars.deep.k}"), Ok(json!("k=[10,20]")));
        check(json!("no ref ${ here"), Ok(json!("no ref ${ here")));
    }

    #[test]
    fn nested_in_maps_and_lists() {
        check(
            json!({"a": ["${n.total}", {"b": "x ${vars.x}"}], "c": 3}),
            Ok(json!({"a": [1200, {"b": "x abc"}], "c": 3})),
        );
    }

    #[test]
    fn failures_name_the_reference() {
        check(
            json!("${n.missing}"),
            Err("unresolved reference ${n.missing}"),
        );
        check(
            json!({"a": "${env.HOME}"}),
            Err("environment variable HOME is not on the allowlist"),
        );
        check(
            json!("${node}"),
            Err(
                "malformed reference ${node}: a reference needs a node and an output alias, or vars./env./config. and a name",
            ),
        );
    }

    #[test]
    fn segments_split_text_and_references() {
        assert_eq!(
            segments("a${b.c}d${e"),
            vec![
                Segment::Text("a"),
                Segment::Reference("b.c"),
                Segment::Text("d${e")
            ]
        );
        assert_eq!(whole_reference(" ${a.b} "), Some("a.b"));
        assert_eq!(whole_reference("${a.b}${c.d}"), None);
    }
}
