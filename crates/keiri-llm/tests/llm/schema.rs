//! The output validator and the strict-mode schema check.

use serde_json::{Value, json};

use keiri_llm::schema::{strict_problems, validate};

/// Validates `instance` and renders each violation as `path: message`.
#[track_caller]
fn check(schema: &Value, instance: Value, expect: &[&str]) {
    let got: Vec<String> = validate(schema, &instance)
        .into_iter()
        .map(|v| format!("{}: {}", v.path, v.message))
        .collect();
    assert_eq!(got, expect, "instance {instance}");
}

fn node_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["id", "block", "in"],
        "properties": {
            "id": {"type": "string", "minLength": 1, "maxLength": 8},
            "block": {"type": "string", "enum": ["csv.read", "excel.write_table"]},
            "in": {"type": "object", "additionalProperties": {"type": "string"}},
            "retries": {"type": ["integer", "null"], "minimum": 0, "maximum": 5},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
        }
    })
}

#[test]
fn objects_enums_and_bounds() {
    let s = node_schema();
    check(
        &s,
        json!({"id": "a", "block": "csv.read", "in": {"path": "x"}}),
        &[],
    );
    check(
        &s,
        json!({"id": "a", "block": "csv.read", "in": {}, "retries": null, "tags": []}),
        &[],
    );
    check(
        &s,
        json!({"id": "", "block": "made.up", "in": {"path": 1}, "extra": true}),
        &[
            "/id: must have at least 1 characters",
            "/block: \"made.up\" is not one of the allowed values (\"csv.read\", \"excel.write_table\")",
            "/in/path: expected string, found number",
            "/extra: unknown property \"extra\" (allowed: id, block, in, retries, tags)",
        ],
    );
    check(
        &s,
        json!({"block": "csv.read"}),
        &[
            ": missing required property \"id\"",
            ": missing required property \"in\"",
        ],
    );
    check(
        &s,
        json!({"id": "abcdefghij", "block": "csv.read", "in": {}, "retries": 9, "tags": ["a", "b", 3]}),
        &[
            "/id: must have at most 8 characters",
            "/retries: must be at most 5",
            "/tags: must have at most 2 items",
            "/tags/2: expected string, found number",
        ],
    );
    check(
        &s,
        json!({"id": "a", "block": "csv.read", "in": {}, "retries": 1.5}),
        &["/retries: expected integer or null, found number"],
    );
    check(&s, json!([1, 2]), &[": expected object, found array"]);
}

#[test]
fn refs_unions_and_constants() {
    let s = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["graph"],
        "properties": {
            "graph": {"type": "array", "items": {"$ref": "#/$defs/node"}}
        },
        "$defs": {
            "node": {
                "anyOf": [
                    {"type": "object", "additionalProperties": false, "required": ["kind", "block"],
                     "properties": {"kind": {"const": "block"}, "block": {"type": "string"}}},
                    {"type": "object", "additionalProperties": false, "required": ["kind", "body"],
                     "properties": {"kind": {"const": "loop"}, "body": {"type": "array"}}}
                ]
            }
        }
    });
    check(
        &s,
        json!({"graph": [{"kind": "block", "block": "x"}, {"kind": "loop", "body": []}]}),
        &[],
    );
    // The closest alternative's problem is reported, not just "no match".
    check(
        &s,
        json!({"graph": [{"kind": "block", "block": 3}]}),
        &[
            "/graph/0: matches none of the 2 alternatives",
            "/graph/0/block: expected string, found number",
        ],
    );
    check(
        &json!({"$ref": "#/$defs/missing"}),
        json!(1),
        &[": the schema's $ref \"#/$defs/missing\" cannot be resolved"],
    );
    check(
        &json!({"oneOf": [{"type": "number"}, {"type": "integer"}]}),
        json!(3),
        &[": matches 2 alternatives where exactly one is allowed"],
    );
    check(&json!({"const": "v1"}), json!("v2"), &[": must be \"v1\""]);
    check(&json!(false), json!(null), &[": no value is allowed here"]);
    check(&json!(true), json!({"anything": [1]}), &[]);
}

#[test]
fn self_referencing_schemas_terminate() {
    let s = json!({"$ref": "#"});
    let v = validate(&s, &json!({}));
    assert_eq!(v.len(), 1);
    assert!(v[0].message.contains("nested too deeply"), "{v:?}");
}

#[test]
fn violations_are_capped() {
    let s = json!({"type": "array", "items": {"type": "string"}});
    let v = validate(&s, &Value::Array(vec![json!(1); 500]));
    assert_eq!(v.len(), keiri_llm::schema::MAX_VIOLATIONS);
}

#[track_caller]
fn check_strict(schema: Value, expect: &[&str]) {
    assert_eq!(strict_problems(&schema), expect, "schema {schema}");
}

#[test]
fn strict_mode_rules() {
    check_strict(
        node_schema(),
        &[
            "at the root: property \"retries\" must be listed in \"required\" (use a null type for optional values)",
            "at the root: property \"tags\" must be listed in \"required\" (use a null type for optional values)",
            "at /properties/in: \"additionalProperties\" must be false",
        ],
    );
    check_strict(
        json!({"type": "object", "additionalProperties": false, "required": ["a"], "properties": {"a": {"type": "string"}}}),
        &[],
    );
    check_strict(
        json!({"type": "array", "items": {"type": "string"}}),
        &["the root must be an object schema (\"type\": \"object\")"],
    );
    // Eleven levels of objects.
    let mut deep = json!({"type": "string"});
    for _ in 0..11 {
        deep = json!({"type": "object", "additionalProperties": false, "required": ["x"], "properties": {"x": deep}});
    }
    let problems = strict_problems(&deep);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("nested deeper than 10 levels"));
    let many: Vec<String> = (0..1001).map(|i| format!("b{i}")).collect();
    check_strict(
        json!({"type": "object", "additionalProperties": false, "required": ["b"], "properties": {"b": {"type": "string", "enum": many}}}),
        &["1001 enum values in total (strict mode allows 1000)"],
    );
}
