use keiri_api::*;
use keiri_api::{Context, ErrorCode};
use serde_json::Value;

fn ctx(dir: &std::path::Path) -> Context {
    crate::support::test_context(dir)
}

/// Compares a checked-in generated file with what the sources generate now, rewriting it
/// first when `KEIRI_UPDATE_GENERATED` is set (`make generated`).
fn assert_current(relative: &str, want: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative);
    if std::env::var_os("KEIRI_UPDATE_GENERATED").is_some() {
        keiri_fs::write_atomic(&path, want.as_bytes()).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(have == want, "{relative} is stale: run `make generated`");
}

#[test]
fn the_generated_typescript_is_current() {
    assert_current("ui/src/api/functions.ts", &typescript());
}

/// The schema the UI's types are generated from (`ui/scripts/api-types.mjs`; the UI's own
/// unit test checks `generated.ts` against it).
#[test]
fn the_generated_schema_is_current() {
    let text = serde_json::to_string_pretty(&schema()).unwrap() + "\n";
    assert_current("ui/src/api/schema.json", &text);
}

#[test]
fn the_schema_names_every_function_and_resolves_every_reference() {
    let doc = schema();
    let functions = doc["properties"].as_object().unwrap();
    assert_eq!(
        functions.keys().map(String::as_str).collect::<Vec<_>>(),
        *FUNCTIONS
    );
    let definitions = doc["definitions"].as_object().unwrap();
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (key, value) in map {
                    match value.as_str() {
                        Some(r) if key == "$ref" => out.push(r.to_owned()),
                        _ => refs(value, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    refs(&doc, &mut all);
    for r in all {
        let name = r.strip_prefix("#/definitions/").unwrap();
        assert!(definitions.contains_key(name), "{r} has no definition");
    }
}

#[test]
fn a_type_read_and_written_differently_is_split_and_its_readers_follow() {
    // ExtractLimits has defaults: optional to send, always written back.
    let doc = schema();
    let defs = &doc["definitions"];
    let required = |name: &str| -> Vec<String> {
        serde_json::from_value(defs[name]["required"].clone()).unwrap_or_default()
    };
    assert!(required("ExtractLimitsInput").is_empty());
    assert!(required("ExtractLimits").contains(&"max_pages".to_owned()));
    // The request that holds the limits refers to the read form.
    let request = doc["properties"]["documents_extract"]["properties"]["request"].to_string();
    assert!(request.contains("ExtractRequestInput"), "{request}");
    assert!(
        defs["ExtractRequestInput"]
            .to_string()
            .contains("#/definitions/ExtractLimitsInput")
    );
    // A type both sides agree on is there once.
    assert!(defs.get("FindingInput").is_none());
    assert!(defs.get("Finding").is_some());
}

/// docs/api.md is prose, not a definition, but it must not fall behind the table: every
/// function has its row or section there.
#[test]
fn the_api_reference_documents_every_function() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/api.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let missing: Vec<&str> = FUNCTIONS
        .iter()
        .copied()
        .filter(|name| !doc.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/api.md does not document {missing:?}"
    );
}

#[test]
fn names_are_unique_and_streaming_ones_are_functions() {
    let mut names = FUNCTIONS.to_vec();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), FUNCTIONS.len());
    for name in STREAMING_FUNCTIONS.iter() {
        assert!(FUNCTIONS.contains(name), "{name}");
    }
}

#[test]
fn every_function_parses_its_body_before_running() {
    // A body no request type accepts: each function is found, then refuses it.
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    for name in FUNCTIONS.iter().copied() {
        let err = crate::support::call(&ctx, name, serde_json::json!(42)).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest, "{name}: {err:?}");
    }
    let err = crate::support::call(&ctx, "no_such_function", Value::Null).unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
}
