//! `list_ops` / `describe_op`: each op's fields, required and optional, its aliases and its
//! JSON Schema, generated from the op definitions themselves (the JSON Schema of [`PatchOp`]
//! and [`design::aliases`]), so the description cannot drift from what the parser accepts.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::contract::{OpKind, PatchOp};
use crate::design;

/// One op as `describe_op` shows it (ExStruct's mini schema: op, description, required,
/// optional, aliases), plus the op's JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OpSchema {
    pub op: String,
    pub description: String,
    pub required: Vec<String>,
    pub optional: Vec<String>,
    /// `alias → canonical field`.
    pub aliases: BTreeMap<String, String>,
    pub schema: Value,
}

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
    required.retain(|f| f != "op");
    required.dedup();
    let optional: Vec<String> = props
        .keys()
        .filter(|k| *k != "op" && !required.contains(k))
        .cloned()
        .collect();
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
        aliases,
        schema,
    })
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
                .map(String::as_str)
                .collect();
            fields.sort();
            let mut takes = kind.fields().to_vec();
            takes.sort();
            assert_eq!(fields, takes, "{}", op.op);
            assert!(!op.description.is_empty(), "{} has no description", op.op);
        }
    }

    #[test]
    fn describe_op_shows_required_fields_and_aliases() {
        let fill = describe_op("set_fill_color").unwrap();
        assert_eq!(fill.required, ["fill_color"]);
        assert_eq!(
            fill.aliases.get("color").map(String::as_str),
            Some("fill_color")
        );
        let set_value = describe_op("set_value").unwrap();
        assert_eq!(set_value.required, ["sheet", "cell", "value"]);
        let grid = describe_op("draw_grid_border").unwrap();
        assert_eq!(grid.required, ["base_cell", "row_count", "col_count"]);
        assert!(grid.aliases.contains_key("range"));
        assert_eq!(describe_op("paint_cells"), None);
    }
}
