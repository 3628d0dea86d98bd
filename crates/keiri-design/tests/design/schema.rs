//! The request schemas carry the candidate enum and the per-block key whitelists; answers
//! that break them never reach the validator.

use keiri_design::schema::{
    CandidateBlock, Shapes, WiredInput, WiredNode, WiredOutput, Wiring, check_wiring,
    skeleton_schema, wiring_schema,
};
use keiri_llm::testkit::{Reply, Script};
use serde_json::{Value, json};

use super::*;

fn candidates() -> Vec<CandidateBlock> {
    vec![
        CandidateBlock {
            id: "csv.read".into(),
            inputs: vec!["path".into(), "encoding".into()],
            outputs: vec!["rows".into()],
        },
        CandidateBlock {
            id: "ai.process_llm".into(),
            inputs: vec![
                "prompt".into(),
                "instruction".into(),
                "output_schema".into(),
            ],
            outputs: vec!["results".into()],
        },
    ]
}

fn node(id: &str, block: &str, inputs: &[(&str, &str)], outputs: &[&str]) -> WiredNode {
    WiredNode {
        id: id.into(),
        block: block.into(),
        inputs: inputs
            .iter()
            .map(|(k, v)| WiredInput {
                key: (*k).into(),
                value_json: (*v).into(),
            })
            .collect(),
        outputs: outputs
            .iter()
            .map(|k| WiredOutput {
                key: (*k).into(),
                alias: (*k).into(),
            })
            .collect(),
        ..WiredNode::default()
    }
}

/// Checks one node against the whitelists: the problem codes, and the input keys kept.
fn check(n: WiredNode, expect_codes: &[&str], expect_kept_inputs: &[&str]) {
    let wiring = Wiring {
        reasoning: String::new(),
        vars: Vec::new(),
        nodes: vec![n],
        ..Wiring::default()
    };
    let (kept, problems) = check_wiring(&wiring, &candidates(), &[]);
    let codes: Vec<&str> = problems.iter().map(|p| p.code.as_str()).collect();
    assert_eq!(codes, expect_codes, "{problems:?}");
    let inputs: Vec<&str> = kept
        .nodes
        .iter()
        .flat_map(|n| n.inputs.iter().map(|i| i.key.as_str()))
        .collect();
    assert_eq!(inputs, expect_kept_inputs);
}

#[test]
fn whitelists_and_the_process_llm_contract() {
    check(
        node("r", "csv.read", &[("path", "\"a.csv\"")], &["rows"]),
        &[],
        &["path"],
    );
    check(
        node("r", "csv.bogus", &[("path", "\"a.csv\"")], &[]),
        &["design.unknown_block"],
        &[],
    );
    check(
        node(
            "r",
            "csv.read",
            &[("path", "\"a.csv\""), ("prompt", "\"x\"")],
            &[],
        ),
        &["design.unknown_input"],
        &["path"],
    );
    check(
        node("r", "csv.read", &[], &["results"]),
        &["design.unknown_output"],
        &[],
    );
    check(
        node("a", "ai.process_llm", &[("prompt", "\"classify\"")], &[]),
        &["design.process_llm_contract"],
        &["prompt"],
    );
    check(
        node(
            "a",
            "ai.process_llm",
            &[("prompt", "\"classify\""), ("output_schema", "{}")],
            &[],
        ),
        &["design.process_llm_contract"],
        &["prompt", "output_schema"],
    );
    check(
        node(
            "a",
            "ai.process_llm",
            &[
                ("instruction", "\"classify\""),
                ("output_schema", "{\"type\":\"object\"}"),
            ],
            &[],
        ),
        &[],
        &["instruction", "output_schema"],
    );
}

#[test]
fn schemas_pass_the_strict_mode_rules() {
    for schema in [
        skeleton_schema(&candidates(), &Shapes::default()),
        wiring_schema(&candidates(), &Shapes::default()),
    ] {
        let problems = keiri_llm::schema::strict_problems(&schema);
        assert!(problems.is_empty(), "{problems:?}");
    }
}

#[test]
fn an_unknown_block_breaks_the_wiring_schema() {
    let schema = wiring_schema(&candidates(), &Shapes::default());
    let answer = json!({"reasoning": "", "vars": [], "policy": null, "node_policies": [], "ui_layout": [], "nodes": [
        {"id": "x", "block": "csv.bogus", "inputs": [], "outputs": [], "when": null}]});
    assert!(!keiri_llm::schema::validate(&schema, &answer).is_empty());
    let answer = json!({"reasoning": "", "vars": [], "policy": null, "node_policies": [], "ui_layout": [], "nodes": [
        {"id": "x", "block": "csv.read", "inputs": [{"key": "prompt", "value_json": "1"}],
         "outputs": [], "when": null}]});
    assert!(
        !keiri_llm::schema::validate(&schema, &answer).is_empty(),
        "a key of another block"
    );
}

fn enum_of(v: &Value) -> Vec<String> {
    // A nullable enum ends in null (the skeleton's `block` of a subflow node): not an id.
    v["enum"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn the_requests_carry_the_candidate_enum_and_key_whitelists() {
    let (result, requests) = run_scripted(
        vec![
            Reply::json_content(&skeleton(json!([]))),
            Reply::json_content(&wiring("invoices.csv", "${read.rows}", json!([]))),
        ],
        &options(),
    )
    .await;
    let result = result.unwrap();
    assert_eq!(
        result.status,
        keiri_design::Status::Valid,
        "{:?}",
        result.errors
    );
    assert_eq!(requests.len(), 2);

    let skeleton_schema = &requests[0].body["response_format"]["json_schema"]["schema"];
    let ids = enum_of(&skeleton_schema["properties"]["nodes"]["items"]["properties"]["block"]);
    assert_eq!(ids, result.candidates);
    assert!(ids.contains(&"csv.read".to_string()));

    let wiring_schema = &requests[1].body["response_format"]["json_schema"]["schema"];
    assert_eq!(
        requests[1].body["response_format"]["json_schema"]["strict"],
        json!(true)
    );
    let variants = wiring_schema["properties"]["nodes"]["items"]["anyOf"]
        .as_array()
        .unwrap();
    // One variant per candidate block, plus the loop variant (no plan is registered, so no
    // subflow variant).
    let blocks = variants
        .iter()
        .filter(|v| v["properties"].get("block").is_some())
        .count();
    assert_eq!((blocks, variants.len()), (ids.len(), ids.len() + 1));
    let csv = variants
        .iter()
        .find(|v| enum_of(&v["properties"]["block"]) == ["csv.read"])
        .unwrap();
    let in_keys = enum_of(&csv["properties"]["inputs"]["items"]["properties"]["key"]);
    let catalog = catalog();
    let spec = catalog.get("csv.read").unwrap();
    assert_eq!(in_keys, spec.inputs.keys().cloned().collect::<Vec<_>>());
    let out_keys = enum_of(&csv["properties"]["outputs"]["items"]["properties"]["key"]);
    assert_eq!(out_keys, spec.outputs.keys().cloned().collect::<Vec<_>>());
    // The catalog goes out in TOON, not as JSON objects.
    let text = messages_text(&requests[0]);
    assert!(text.contains("blocks["), "{text}");
    assert!(text.contains(INSTRUCTION));
}

#[tokio::test]
async fn an_unknown_block_id_is_rejected_with_a_clear_error_under_free_form() {
    let mut bad = wiring("invoices.csv", "${read.rows}", json!([]));
    bad["nodes"][1]["block"] = json!("matching.magic_dedupe");
    let (result, mut requests) = run_scripted(
        Script::new(vec![Reply::json_content(&skeleton(json!([])))])
            .then_repeat(Reply::content(bad.to_string())),
        &options(),
    )
    .await;
    let err = result.unwrap_err();
    assert_eq!(err.code(), "LLM_OUTPUT_INVALID", "{err}");
    let message = err.to_string();
    assert!(message.contains("wiring"), "{message}");
    assert!(message.contains("free_form"), "{message}");
    // The last request was the free-form one: no response_format, no tools.
    let last = requests.pop().unwrap();
    assert!(last.body.get("response_format").is_none_or(Value::is_null));
    assert!(last.body.get("tools").is_none_or(Value::is_null));
}

#[tokio::test]
async fn hint_mode_puts_template_summaries_and_blocks_into_the_request() {
    let options = GenerateOptions {
        apply_mode: keiri_design::ApplyMode::Hint,
        templates: vec!["invoice_duplicate_detection".into()],
        pinned_blocks: Vec::new(),
        ..options()
    };
    let (result, requests) = run_scripted(
        vec![
            Reply::json_content(&skeleton(json!([]))),
            Reply::json_content(&wiring("invoices.csv", "${read.rows}", json!([]))),
        ],
        &options,
    )
    .await;
    let result = result.unwrap();
    assert_eq!(result.templates, ["invoice_duplicate_detection"]);
    let templates = templates();
    let spec = templates.get("invoice_duplicate_detection").unwrap();
    for n in &spec.graph_snippet {
        let block = n.block.clone().unwrap();
        assert!(
            result.candidates.contains(&block),
            "{block} not a candidate"
        );
    }
    let text = messages_text(&requests[0]);
    assert!(text.contains("## Templates to follow"), "{text}");
    assert!(
        text.contains("- invoice_duplicate_detection: 請求書の重複検出"),
        "{text}"
    );
    assert!(text.contains("imports: invoice_csv"), "{text}");
}
