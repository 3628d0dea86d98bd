//! `list_ops` / `describe_op`: each op's fields, required and optional, its constraints, an
//! example, its aliases and its JSON Schema, generated from the op definitions themselves (the
//! JSON Schema of [`PatchOp`] and [`design::aliases`]), so the description cannot drift from
//! what the parser accepts. ExStruct keeps the same information as a hand-written table.
//!
//! The example is found, not written: the required fields get a sample value (by field name,
//! else by the schema's type), and the smallest set of optional fields that makes the op pass
//! the request checks of a real patch (parsing, then planning) is added.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::contract::{OpKind, PatchOp};
use crate::design;

/// One op as `describe_op` shows it (ExStruct's mini schema: op, description, required,
/// optional, constraints, example, aliases), plus the op's JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OpSchema {
    pub op: String,
    pub description: String,
    /// Required fields; `sheet` is shown as `sheet (or top-level sheet)` for every op but
    /// `add_sheet`, as ExStruct shows it, since the request's `sheet` may stand in for it.
    pub required: Vec<String>,
    pub optional: Vec<String>,
    /// Rules beyond the field types: allowed values, bounds, "exactly one of", sheet
    /// resolution.
    pub constraints: Vec<String>,
    /// A minimal op that passes the request checks.
    pub example: Value,
    /// `alias → canonical field`.
    pub aliases: BTreeMap<String, String>,
    pub schema: Value,
}

/// How `required` names the sheet of an op that may take the request's top-level `sheet`.
pub const SHEET_OR_TOP_LEVEL: &str = "sheet (or top-level sheet)";

/// Every op, in the order of [`OpKind::ALL`].
pub fn list_ops() -> Vec<OpSchema> {
    let root = serde_json::to_value(schemars::schema_for!(PatchOp)).unwrap_or(Value::Null);
    OpKind::ALL
        .iter()
        .filter_map(|k| describe_in(&root, k.as_str()))
        .collect()
}

/// One op by name (`None` for an unknown op).
pub fn describe_op(name: &str) -> Option<OpSchema> {
    OpKind::parse(name)?;
    let root = serde_json::to_value(schemars::schema_for!(PatchOp)).unwrap_or(Value::Null);
    describe_in(&root, name)
}

/// Follows `$ref`s into the root's `$defs`.
fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/$defs/")
            .and_then(|name| root.get("$defs").and_then(|d| d.get(name)))
            .unwrap_or(node),
        None => node,
    }
}

/// Gathers properties, required names and a description from a schema node and the nodes it
/// combines (`allOf`, `$ref`).
fn gather(
    root: &Value,
    node: &Value,
    props: &mut serde_json::Map<String, Value>,
    required: &mut Vec<String>,
    description: &mut Option<String>,
) {
    let node = resolve(root, node);
    if description.is_none() {
        *description = node
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    if let Some(p) = node.get("properties").and_then(Value::as_object) {
        for (k, v) in p {
            props.insert(k.clone(), v.clone());
        }
    }
    if let Some(r) = node.get("required").and_then(Value::as_array) {
        required.extend(r.iter().filter_map(Value::as_str).map(str::to_string));
    }
    if let Some(all) = node.get("allOf").and_then(Value::as_array) {
        for part in all {
            gather(root, part, props, required, description);
        }
    }
}

fn op_name_of(variant: &Value) -> Option<&str> {
    let op = variant.get("properties")?.get("op")?;
    op.get("const")
        .and_then(Value::as_str)
        .or_else(|| op.get("enum")?.get(0)?.as_str())
}

fn describe_in(root: &Value, name: &str) -> Option<OpSchema> {
    let variants = root.get("oneOf")?.as_array()?;
    let variant = variants.iter().find(|v| op_name_of(v) == Some(name))?;
    let mut props = serde_json::Map::new();
    let mut required = Vec::new();
    let mut description = None;
    gather(root, variant, &mut props, &mut required, &mut description);
    required.retain(|f| f != "op" && f != "sheet");
    required.dedup();
    let optional: Vec<String> = props
        .keys()
        .filter(|k| *k != "op" && *k != "sheet" && !required.contains(k))
        .cloned()
        .collect();
    let example = example(root, name, &props, &required, &optional);
    let constraints = constraints(root, name, &props);
    let sheet = if name == "add_sheet" {
        "sheet"
    } else {
        SHEET_OR_TOP_LEVEL
    };
    let required: Vec<String> = std::iter::once(sheet.to_string()).chain(required).collect();
    let aliases = design::aliases(name)
        .iter()
        .map(|(a, c)| (a.to_string(), c.to_string()))
        .chain((name == "draw_grid_border").then(|| {
            (
                "range".to_string(),
                "base_cell/row_count/col_count".to_string(),
            )
        }))
        .collect();
    let mut schema = variant.clone();
    if let Some(defs) = root.get("$defs") {
        schema["$defs"] = defs.clone();
    }
    Some(OpSchema {
        op: name.to_string(),
        description: description.unwrap_or_default(),
        required,
        optional,
        constraints,
        example,
        aliases,
        schema,
    })
}

/// A sample value for a field, by its name where the name says what it holds (a cell, a
/// range, a colour…), else by its schema.
fn sample(root: &Value, op: &str, field: &str, schema: &Value) -> Value {
    use serde_json::json;
    match field {
        "sheet" if op == "add_sheet" => json!("Data"),
        "sheet" => json!("Sheet1"),
        "cell" | "base_cell" => json!("A2"),
        // One column of three cells: a valid range for every op that takes one (a fill is
        // one row or one column), with `values` of the same shape.
        "range" => json!("A2:A4"),
        "values" => json!([[1], [2], [3]]),
        "formula" => json!("=B2*2"),
        "value" => json!("Hello"),
        "expected" => json!("old"),
        "color" => json!("#1F4E79"),
        "fill_color" => json!("#D9E1F2"),
        "font_size" => json!(14),
        "row_count" => json!(3),
        "col_count" => json!(4),
        "rows" if op == "update_rows_by_key" => {
            json!([{"社員番号": "EMP001", "退職年月日": "2025-03-31"}])
        }
        "rows" if op == "append_rows" => json!([{"A": "EMP010", "B": "2025-04-01"}]),
        "rows" => json!([1]),
        "key_column" => json!("社員番号"),
        "new_sheet" => json!("2025.3"),
        "columns" => json!(["A", 2]),
        "row_height" => json!(22),
        "column_width" => json!(18),
        "min_width" => json!(8),
        "max_width" => json!(40),
        "style" => json!("TableStyleMedium9"),
        "table_name" => json!("Table1"),
        _ => sample_of_schema(root, schema, 0),
    }
}

/// A value of a schema's type: the first allowed value of an enum, the first non-null branch
/// of a union, an object with its required properties.
fn sample_of_schema(root: &Value, schema: &Value, depth: usize) -> Value {
    let schema = resolve(root, schema);
    if depth > 8 {
        return Value::Null;
    }
    if let Some(v) = schema.get("const") {
        return v.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let branch = branches
                .iter()
                .find(|b| resolve(root, b).get("type") != Some(&Value::from("null")));
            if let Some(b) = branch {
                return sample_of_schema(root, b, depth + 1);
            }
        }
    }
    let kind = match schema.get("type") {
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null")
            .unwrap_or("null"),
        Some(Value::String(k)) => k.as_str(),
        _ => "object",
    };
    match kind {
        "string" => Value::from("text"),
        "integer" | "number" => Value::from(1),
        "boolean" => Value::from(true),
        "array" => Value::Array(Vec::new()),
        "object" => {
            let mut props = serde_json::Map::new();
            let mut required = Vec::new();
            let mut description = None;
            gather(root, schema, &mut props, &mut required, &mut description);
            let object = required
                .iter()
                .filter_map(|name| {
                    let value = sample_of_schema(root, props.get(name)?, depth + 1);
                    Some((name.clone(), value))
                })
                .collect();
            Value::Object(object)
        }
        _ => Value::Null,
    }
}

/// Whether an op passes the checks a patch request makes before opening the workbook.
fn passes(example: &Value) -> bool {
    PatchOp::from_json(example.clone())
        .ok()
        .is_some_and(|op| crate::patch::check_ops(std::slice::from_ref(&op)).is_ok())
}

/// The op with its required fields, plus the first smallest set of optional fields (in the
/// schema's order) with which it passes the request checks.
fn example(
    root: &Value,
    name: &str,
    props: &serde_json::Map<String, Value>,
    required: &[String],
    optional: &[String],
) -> Value {
    let field = |f: &str| sample(root, name, f, props.get(f).unwrap_or(&Value::Null));
    let mut base = serde_json::Map::new();
    base.insert("op".into(), Value::from(name));
    base.insert("sheet".into(), field("sheet"));
    for f in required {
        base.insert(f.clone(), field(f));
    }
    // Optional fields are few (nine at most), so trying every subset by size is cheap.
    let n = optional.len().min(12);
    let mut subsets: Vec<u32> = (0..1u32 << n).collect();
    // Smallest first; among equals, the one holding the earliest fields.
    subsets.sort_by_key(|m| (m.count_ones(), std::cmp::Reverse(m.reverse_bits())));
    for mask in subsets {
        let mut candidate = base.clone();
        for (i, f) in optional.iter().take(n).enumerate() {
            if mask & (1 << i) != 0 {
                candidate.insert(f.clone(), field(f));
            }
        }
        let candidate = Value::Object(candidate);
        if passes(&candidate) {
            return candidate;
        }
    }
    Value::Object(base)
}

/// The rules the schema states beyond field types, in words.
fn constraints(root: &Value, name: &str, props: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    if props.contains_key("cell") && props.contains_key("range") {
        out.push("exactly one of cell or range".to_string());
    }
    for (field, schema) in props {
        if field == "op" {
            continue;
        }
        let schema = resolve(root, schema);
        let values: Vec<String> = schema
            .get("enum")
            .or_else(|| {
                schema
                    .get("anyOf")
                    .and_then(Value::as_array)
                    .and_then(|b| b.iter().find_map(|b| resolve(root, b).get("enum")))
            })
            .and_then(Value::as_array)
            .map(|e| {
                e.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        if !values.is_empty() {
            out.push(format!("{field} is one of {}", values.join(", ")));
        }
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
            out.push(format!("{field} >= {min}"));
        }
        if let Some(text) = schema.get("description").and_then(Value::as_str) {
            out.push(format!("{field}: {text}"));
        }
    }
    out.push(if name == "add_sheet" {
        "top-level sheet is not used for add_sheet".to_string()
    } else {
        "op.sheet overrides top-level sheet when both are set".to_string()
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_is_listed_with_its_fields() {
        let ops = list_ops();
        let names: Vec<&str> = ops.iter().map(|o| o.op.as_str()).collect();
        let want: Vec<&str> = OpKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names, want);
        for op in &ops {
            let kind = OpKind::parse(&op.op).unwrap();
            let mut fields: Vec<&str> = op
                .required
                .iter()
                .chain(&op.optional)
                .map(|f| if f == SHEET_OR_TOP_LEVEL { "sheet" } else { f })
                .collect();
            fields.sort();
            let mut takes = kind.fields().to_vec();
            takes.sort();
            assert_eq!(fields, takes, "{}", op.op);
            assert!(!op.description.is_empty(), "{} has no description", op.op);
            // The generated example is an op the parser and the request checks accept.
            assert!(passes(&op.example), "{}: {}", op.op, op.example);
            assert_eq!(op.example["op"], op.op.as_str());
        }
    }

    #[test]
    fn examples_and_constraints_come_from_the_definitions() {
        let bold = describe_op("set_bold").unwrap();
        assert_eq!(
            bold.example,
            serde_json::json!({"op": "set_bold", "sheet": "Sheet1", "cell": "A2"})
        );
        assert!(
            bold.constraints
                .contains(&"exactly one of cell or range".into())
        );
        let style = describe_op("set_style").unwrap();
        assert!(
            style.example.get("cell").is_some() && style.example.as_object().unwrap().len() == 4
        );
        let align = describe_op("set_alignment").unwrap();
        assert!(
            align
                .constraints
                .iter()
                .any(|c| c.starts_with("horizontal_align is one of general, left, center")),
            "{:?}",
            align.constraints
        );
        // Rows need a height and columns a width: the smallest passing example holds a pair.
        let dims = describe_op("set_dimensions").unwrap();
        let fields = dims.example.as_object().unwrap().len();
        assert_eq!(fields, 4, "{}", dims.example);
        let add = describe_op("add_sheet").unwrap();
        assert_eq!(add.required, ["sheet"]);
        assert_eq!(
            add.example,
            serde_json::json!({"op": "add_sheet", "sheet": "Data"})
        );
        let fill = describe_op("fill_formula").unwrap();
        assert_eq!(fill.example["range"], "A2:A4");
    }

    #[test]
    fn describe_op_shows_required_fields_and_aliases() {
        let fill = describe_op("set_fill_color").unwrap();
        // ExStruct's own answer for this op.
        assert_eq!(fill.required, [SHEET_OR_TOP_LEVEL, "fill_color"]);
        assert_eq!(
            fill.aliases.get("color").map(String::as_str),
            Some("fill_color")
        );
        let set_value = describe_op("set_value").unwrap();
        assert_eq!(set_value.required, [SHEET_OR_TOP_LEVEL, "cell", "value"]);
        let grid = describe_op("draw_grid_border").unwrap();
        assert_eq!(
            grid.required,
            [SHEET_OR_TOP_LEVEL, "base_cell", "row_count", "col_count"]
        );
        assert!(grid.aliases.contains_key("range"));
        assert_eq!(describe_op("paint_cells"), None);
    }
}
