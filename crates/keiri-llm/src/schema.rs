//! Checking LLM output against the JSON Schema it was asked for, and checking a schema
//! against the strict-mode rules before it is sent.
//!
//! [`validate`] covers the keywords structured-output schemas use: `type`, `enum`, `const`,
//! `properties`, `required`, `additionalProperties`, `items`, `minItems`/`maxItems`,
//! `minLength`/`maxLength`, `minimum`/`maximum` (and the exclusive forms), `anyOf`, `oneOf`,
//! `allOf` and local `$ref`s (`#/$defs/…`). Other keywords (`pattern`, `format`, …) are not
//! checked. It is a guard for output that no provider constrained (function calling without
//! strict mode, free-form text); the caller's own validation still follows.
//!
//! [`strict_problems`] reports what OpenAI's strict mode would refuse, so a bad schema fails
//! here with a clear message instead of as an HTTP 400 from one provider only.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// At most this many violations are reported; the rest are noise for a repair prompt.
pub const MAX_VIOLATIONS: usize = 50;
/// Deeper schemas or instances (or `$ref` cycles) stop here instead of overflowing the stack.
const MAX_DEPTH: usize = 64;
/// OpenAI's strict-mode limits.
const STRICT_MAX_NESTING: usize = 10;
const STRICT_MAX_PROPERTIES: usize = 5000;
const STRICT_MAX_ENUM_VALUES: usize = 1000;

/// One way the output does not match the schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Violation {
    /// JSON Pointer to the offending value ("" is the root).
    pub path: String,
    pub message: String,
}

/// Every violation of `schema` by `instance` (at most [`MAX_VIOLATIONS`]).
pub fn validate(schema: &Value, instance: &Value) -> Vec<Violation> {
    let mut v = Validator {
        root: schema,
        out: Vec::new(),
    };
    v.check(schema, instance, &mut String::new(), 0);
    v.out.truncate(MAX_VIOLATIONS);
    v.out
}

struct Validator<'s> {
    root: &'s Value,
    out: Vec<Violation>,
}

impl<'s> Validator<'s> {
    fn push(&mut self, path: &str, message: impl Into<String>) {
        if self.out.len() < MAX_VIOLATIONS {
            self.out.push(Violation {
                path: path.to_string(),
                message: message.into(),
            });
        }
    }

    fn check(&mut self, schema: &'s Value, inst: &Value, path: &mut String, depth: usize) {
        if self.out.len() >= MAX_VIOLATIONS {
            return;
        }
        if depth > MAX_DEPTH {
            self.push(path, "the value or schema is nested too deeply to check");
            return;
        }
        let obj = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                self.push(path, "no value is allowed here");
                return;
            }
            Value::Object(o) => o,
            _ => return,
        };
        if let Some(Value::String(r)) = obj.get("$ref") {
            match resolve_ref(self.root, r) {
                Some(target) => self.check(target, inst, path, depth + 1),
                None => self.push(path, format!("the schema's $ref {r:?} cannot be resolved")),
            }
        }
        if let Some(t) = obj.get("type")
            && !type_matches(t, inst)
        {
            self.push(
                path,
                format!("expected {}, found {}", type_names(t), kind_of(inst)),
            );
            return;
        }
        if let Some(Value::Array(options)) = obj.get("enum")
            && !options.iter().any(|o| o == inst)
        {
            self.push(
                path,
                format!(
                    "{} is not one of the allowed values{}",
                    short(inst),
                    allowed_list(options)
                ),
            );
        }
        if let Some(c) = obj.get("const")
            && c != inst
        {
            self.push(path, format!("must be {}", short(c)));
        }
        match inst {
            Value::Object(map) => self.check_object(obj, map, path, depth),
            Value::Array(items) => self.check_array(obj, items, path, depth),
            Value::String(s) => {
                let n = s.chars().count() as u64;
                if let Some(min) = obj.get("minLength").and_then(Value::as_u64)
                    && n < min
                {
                    self.push(path, format!("must have at least {min} characters"));
                }
                if let Some(max) = obj.get("maxLength").and_then(Value::as_u64)
                    && n > max
                {
                    self.push(path, format!("must have at most {max} characters"));
                }
            }
            Value::Number(n) => {
                if let Some(x) = n.as_f64() {
                    self.check_number(obj, x, path);
                }
            }
            _ => {}
        }
        if let Some(Value::Array(all)) = obj.get("allOf") {
            for s in all {
                self.check(s, inst, path, depth + 1);
            }
        }
        for (key, exactly_one) in [("anyOf", false), ("oneOf", true)] {
            if let Some(Value::Array(alts)) = obj.get(key) {
                self.check_alternatives(alts, exactly_one, inst, path, depth);
            }
        }
    }

    fn check_object(
        &mut self,
        obj: &'s Map<String, Value>,
        map: &Map<String, Value>,
        path: &mut String,
        depth: usize,
    ) {
        let props = obj.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = obj.get("required") {
            for r in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(r) {
                    self.push(path, format!("missing required property {r:?}"));
                }
            }
        }
        for (key, value) in map {
            let len = path.len();
            path.push('/');
            path.push_str(&key.replace('~', "~0").replace('/', "~1"));
            match props.and_then(|p| p.get(key)) {
                Some(s) => self.check(s, value, path, depth + 1),
                None => match obj.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        let known = props
                            .map(|p| {
                                let names: Vec<&str> = p.keys().map(String::as_str).collect();
                                format!(" (allowed: {})", truncate_list(&names))
                            })
                            .unwrap_or_default();
                        self.push(path, format!("unknown property {key:?}{known}"));
                    }
                    Some(s @ Value::Object(_)) => self.check(s, value, path, depth + 1),
                    _ => {}
                },
            }
            path.truncate(len);
        }
    }

    fn check_array(
        &mut self,
        obj: &'s Map<String, Value>,
        items: &[Value],
        path: &mut String,
        depth: usize,
    ) {
        let n = items.len() as u64;
        if let Some(min) = obj.get("minItems").and_then(Value::as_u64)
            && n < min
        {
            self.push(path, format!("must have at least {min} items"));
        }
        if let Some(max) = obj.get("maxItems").and_then(Value::as_u64)
            && n > max
        {
            self.push(path, format!("must have at most {max} items"));
        }
        if let Some(item_schema) = obj.get("items").filter(|s| s.is_object() || s.is_boolean()) {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                self.check(item_schema, item, path, depth + 1);
                path.truncate(len);
            }
        }
    }

    fn check_number(&mut self, obj: &Map<String, Value>, x: f64, path: &str) {
        let bound = |k: &str| obj.get(k).and_then(Value::as_f64);
        if let Some(min) = bound("minimum")
            && x < min
        {
            self.push(path, format!("must be at least {min}"));
        }
        if let Some(max) = bound("maximum")
            && x > max
        {
            self.push(path, format!("must be at most {max}"));
        }
        if let Some(min) = bound("exclusiveMinimum")
            && x <= min
        {
            self.push(path, format!("must be greater than {min}"));
        }
        if let Some(max) = bound("exclusiveMaximum")
            && x >= max
        {
            self.push(path, format!("must be less than {max}"));
        }
    }

    /// Valid when one (`anyOf`) or exactly one (`oneOf`) alternative matches. When none does,
    /// the violations of the closest alternative are reported: for a union of node shapes
    /// that points at the field that is wrong, not just "matches nothing".
    fn check_alternatives(
        &mut self,
        alts: &'s [Value],
        exactly_one: bool,
        inst: &Value,
        path: &str,
        depth: usize,
    ) {
        let mut best: Option<Vec<Violation>> = None;
        let mut matches = 0;
        for alt in alts {
            let mut sub = Validator {
                root: self.root,
                out: Vec::new(),
            };
            sub.check(alt, inst, &mut path.to_string(), depth + 1);
            if sub.out.is_empty() {
                matches += 1;
            } else if best.as_ref().is_none_or(|b| sub.out.len() < b.len()) {
                best = Some(sub.out);
            }
        }
        if matches == 0 {
            match best {
                Some(b) => {
                    self.push(
                        path,
                        format!("matches none of the {} alternatives", alts.len()),
                    );
                    for v in b {
                        self.push(&v.path, v.message);
                    }
                }
                None => self.push(path, "matches none of the alternatives"),
            }
        } else if exactly_one && matches > 1 {
            self.push(
                path,
                format!("matches {matches} alternatives where exactly one is allowed"),
            );
        }
    }
}

/// Resolves `#` or `#/a/b` against the root schema.
fn resolve_ref<'s>(root: &'s Value, r: &str) -> Option<&'s Value> {
    let pointer = r.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

fn type_matches(t: &Value, inst: &Value) -> bool {
    match t {
        Value::String(name) => one_type_matches(name, inst),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .any(|n| one_type_matches(n, inst)),
        _ => true,
    }
}

fn one_type_matches(name: &str, inst: &Value) -> bool {
    match name {
        "object" => inst.is_object(),
        "array" => inst.is_array(),
        "string" => inst.is_string(),
        "boolean" => inst.is_boolean(),
        "null" => inst.is_null(),
        "number" => inst.is_number(),
        "integer" => match inst {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => true,
    }
}

fn type_names(t: &Value) -> String {
    match t {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "a valid type".into(),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        let mut t: String = s.chars().take(80).collect();
        t.push('…');
        t
    } else {
        s
    }
}

fn allowed_list(options: &[Value]) -> String {
    let names: Vec<String> = options.iter().map(short).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    format!(" ({})", truncate_list(&names))
}

fn truncate_list(names: &[&str]) -> String {
    const SHOWN: usize = 20;
    let mut s = names
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(", … {} more", names.len() - SHOWN));
    }
    s
}

/// What OpenAI's strict mode would refuse in `schema` (empty when it is fine):
/// the root must be an object; every object must set `additionalProperties: false` and list
/// every property in `required`; at most 10 levels of nesting, 5000 properties and 1000 enum
/// values in total.
pub fn strict_problems(schema: &Value) -> Vec<String> {
    let mut s = Strict::default();
    if !is_object_schema(schema) {
        s.problems
            .push("the root must be an object schema (\"type\": \"object\")".into());
    }
    s.walk(schema, "", 0);
    if let Some(defs) = schema.get("$defs").or_else(|| schema.get("definitions"))
        && let Some(defs) = defs.as_object()
    {
        for (name, d) in defs {
            s.walk(d, &format!("/$defs/{name}"), 1);
        }
    }
    if s.properties > STRICT_MAX_PROPERTIES {
        s.problems.push(format!(
            "{} properties in total (strict mode allows {STRICT_MAX_PROPERTIES})",
            s.properties
        ));
    }
    if s.enum_values > STRICT_MAX_ENUM_VALUES {
        s.problems.push(format!(
            "{} enum values in total (strict mode allows {STRICT_MAX_ENUM_VALUES})",
            s.enum_values
        ));
    }
    s.problems.truncate(MAX_VIOLATIONS);
    s.problems
}

#[derive(Default)]
struct Strict {
    problems: Vec<String>,
    properties: usize,
    enum_values: usize,
}

fn is_object_schema(s: &Value) -> bool {
    match s.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    }
}

impl Strict {
    fn walk(&mut self, schema: &Value, path: &str, nesting: usize) {
        if self.problems.len() >= MAX_VIOLATIONS {
            return;
        }
        let Some(obj) = schema.as_object() else {
            return;
        };
        if nesting > STRICT_MAX_NESTING {
            self.problems.push(format!(
                "at {}: nested deeper than {STRICT_MAX_NESTING} levels",
                display_path(path)
            ));
            return;
        }
        if let Some(Value::Array(e)) = obj.get("enum") {
            self.enum_values += e.len();
        }
        let props = obj.get("properties").and_then(Value::as_object);
        if is_object_schema(schema) || props.is_some() {
            if obj.get("additionalProperties") != Some(&Value::Bool(false)) {
                self.problems.push(format!(
                    "at {}: \"additionalProperties\" must be false",
                    display_path(path)
                ));
            }
            let required: Vec<&str> = obj
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(props) = props {
                self.properties += props.len();
                for name in props.keys() {
                    if !required.contains(&name.as_str()) {
                        self.problems.push(format!(
                            "at {}: property {name:?} must be listed in \"required\" (use a null type for optional values)",
                            display_path(path)
                        ));
                    }
                }
                for (name, p) in props {
                    self.walk(p, &format!("{path}/properties/{name}"), nesting + 1);
                }
            }
        }
        if let Some(items) = obj.get("items") {
            self.walk(items, &format!("{path}/items"), nesting + 1);
        }
        for key in ["anyOf", "allOf", "oneOf"] {
            if let Some(Value::Array(alts)) = obj.get(key) {
                for (i, alt) in alts.iter().enumerate() {
                    self.walk(alt, &format!("{path}/{key}/{i}"), nesting + 1);
                }
            }
        }
    }
}

fn display_path(path: &str) -> &str {
    if path.is_empty() { "the root" } else { path }
}
