//! The `operations` items of the `excel.patch_workbook` block spec, generated from the op
//! definitions ([`list_ops`], itself generated from the JSON Schema of [`crate::PatchOp`]), so
//! the catalog lists every op the runtime accepts, with its fields, and cannot drift from it.
//!
//! The YAML is written by hand here (block style, strings as JSON strings, which YAML reads as
//! double-quoted scalars) rather than by a YAML library, so the crate needs no YAML dependency
//! and the output is stable byte for byte. The block spec holds it between two marker lines
//! ([`GENERATED_BEGIN`], [`GENERATED_END`]); a test compares the two and rewrites the region
//! when `KEIRI_UPDATE_GENERATED=1` (`make generated`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::op_schema::{OpSchema, SHEET_OR_TOP_LEVEL, list_ops};

/// The line before the generated region of the block spec.
pub const GENERATED_BEGIN: &str =
    "# BEGIN generated from keiri-xlsx's op definitions (make generated); do not edit";
/// The line after it.
pub const GENERATED_END: &str = "# END generated";

/// The value type a block spec shows for a JSON Schema node (`any` when it is a union of
/// different types).
fn spec_type(root: &Value, node: &Value) -> String {
    let node = resolve(root, node);
    if node.get("enum").is_some() || node.get("const").is_some() {
        return "string".to_string();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = node.get(key).and_then(Value::as_array) {
            let kinds: Vec<String> = branches
                .iter()
                .filter(|b| resolve(root, b).get("type") != Some(&Value::from("null")))
                .map(|b| spec_type(root, b))
                .collect();
            return match kinds.split_first() {
                Some((first, rest)) if rest.iter().all(|k| k == first) => first.clone(),
                _ => "any".to_string(),
            };
        }
    }
    match node.get("type") {
        Some(Value::String(k)) => k.clone(),
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|k| *k != "null")
                .collect();
            match kinds.as_slice() {
                [one] => (*one).to_string(),
                _ => "any".to_string(),
            }
        }
        _ if node.get("properties").is_some() => "object".to_string(),
        _ => "any".to_string(),
    }
}

fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/$defs/")
            .and_then(|name| root.get("$defs").and_then(|d| d.get(name)))
            .unwrap_or(node),
        None => node,
    }
}

/// A field's schema in an op's schema (following `allOf` and `$ref`).
fn field_schema<'a>(root: &'a Value, node: &'a Value, field: &str) -> Option<&'a Value> {
    let node = resolve(root, node);
    if let Some(p) = node.get("properties").and_then(|p| p.get(field)) {
        return Some(p);
    }
    node.get("allOf")?
        .as_array()?
        .iter()
        .find_map(|part| field_schema(root, part, field))
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}

fn flow_list(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

/// The field names of an op as the block spec shows them: the block has no top-level sheet,
/// so every op names its own.
fn plain_fields(fields: &[String]) -> Vec<String> {
    fields
        .iter()
        .map(|f| {
            if f == SHEET_OR_TOP_LEVEL {
                "sheet".to_string()
            } else {
                f.clone()
            }
        })
        .collect()
}

/// The `items:` block of the `operations` input, each line indented by `indent` spaces.
pub fn patch_workbook_items_yaml(indent: usize) -> String {
    let ops = list_ops();
    render(&ops, indent)
}

fn render(ops: &[OpSchema], indent: usize) -> String {
    // Every field of every op, with the type the ops agree on (else `any`) and the first
    // description the schema gives.
    let mut fields: BTreeMap<String, (String, Option<String>)> = BTreeMap::new();
    for op in ops {
        for name in plain_fields(&op.required)
            .into_iter()
            .chain(op.optional.iter().cloned())
        {
            let schema = field_schema(&op.schema, &op.schema, &name);
            let ty = schema.map_or("any".to_string(), |s| spec_type(&op.schema, s));
            let description = schema
                .map(|s| resolve(&op.schema, s))
                .and_then(|s| s.get("description"))
                .and_then(Value::as_str)
                .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "));
            let entry = fields.entry(name).or_insert((ty.clone(), None));
            if entry.0 != ty {
                entry.0 = "any".to_string();
            }
            if entry.1.is_none() {
                entry.1 = description;
            }
        }
    }
    let pad = " ".repeat(indent);
    let mut out = Vec::new();
    let mut line =
        |depth: usize, text: String| out.push(format!("{pad}{}{text}", "  ".repeat(depth)));
    line(0, "items:".to_string());
    line(1, "type: object".to_string());
    line(1, "properties:".to_string());
    line(2, "op:".to_string());
    line(3, "type: string".to_string());
    let names: Vec<String> = ops.iter().map(|o| o.op.clone()).collect();
    line(3, format!("enum: {}", flow_list(&names)));
    line(
        3,
        format!(
            "description_en: {}",
            quoted("The operation; `ops` lists each one's required and optional fields")
        ),
    );
    for (name, (ty, description)) in &fields {
        line(2, format!("{name}:"));
        line(3, format!("type: {ty}"));
        if let Some(d) = description {
            line(3, format!("description_en: {}", quoted(d)));
        }
    }
    line(1, "ops:".to_string());
    for op in ops {
        line(2, format!("{}:", op.op));
        let description = op
            .description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        line(3, format!("description_en: {}", quoted(&description)));
        line(
            3,
            format!("required: {}", flow_list(&plain_fields(&op.required))),
        );
        line(3, format!("optional: {}", flow_list(&op.optional)));
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_follow_the_schema() {
        let root = serde_json::json!({"$defs": {"E": {"enum": ["a", "b"]}}});
        let check = |node: Value, want: &str| assert_eq!(spec_type(&root, &node), want, "{node}");
        check(serde_json::json!({"type": "string"}), "string");
        check(serde_json::json!({"type": ["integer", "null"]}), "integer");
        check(serde_json::json!({"$ref": "#/$defs/E"}), "string");
        check(
            serde_json::json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            "string",
        );
        check(
            serde_json::json!({"anyOf": [{"type": "string"}, {"type": "number"}]}),
            "any",
        );
        check(serde_json::json!({}), "any");
    }

    #[test]
    fn every_op_is_listed_with_its_fields() {
        let yaml = patch_workbook_items_yaml(4);
        for op in crate::OpKind::ALL {
            assert!(
                yaml.contains(&format!("\n        {}:\n", op.as_str())),
                "{} missing",
                op.as_str()
            );
        }
        // fill_formula needs only its range and base cell.
        assert!(
            yaml.contains("        fill_formula:\n          description_en: \"Fills every cell of")
        );
        assert!(yaml.contains(
            "          required: [sheet, range, base_cell]\n          optional: [formula]\n"
        ));
    }
}
