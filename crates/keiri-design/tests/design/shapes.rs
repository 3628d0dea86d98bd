//! Plan shapes beyond block nodes: stage 1 says which nodes repeat or call a registered
//! plan, stage 2's strict schema has loop and subflow variants, plan and node policies and
//! the UI layout, and a scripted loop becomes a valid plan whose dry-run shows the body.

use keiri_llm::testkit::Reply;
use serde_json::{Value, json};

use super::*;

fn options() -> GenerateOptions {
    GenerateOptions {
        plan_id: "notes_per_invoice".into(),
        apply_mode: ApplyMode::LlmOnly,
        pinned_blocks: vec!["csv.read".into(), "ai.process_llm".into()],
        ..GenerateOptions::default()
    }
}

fn skeleton() -> Value {
    json!({
        "reasoning": "read the CSV, then one note per invoice",
        "nodes": [
            {"id": "read", "block": "csv.read", "purpose": "read the invoices",
             "repeat": null, "calls_plan": null},
            {"id": "summarize", "block": "ai.process_llm", "purpose": "a note per invoice",
             "repeat": {"kind": "foreach", "over": "read.rows", "until": null},
             "calls_plan": null}
        ],
        "questions": []
    })
}

fn input(key: &str, value: Value) -> Value {
    json!({"key": key, "value_json": value.to_string()})
}

fn wiring() -> Value {
    json!({
        "reasoning": "a loop over the rows",
        "vars": [{"name": "invoice_csv", "value_json": "\"invoices.csv\""}],
        "policy": {"on_error": "continue", "retries": 1, "timeout_ms": null, "concurrency": 2},
        "node_policies": [{"node_id": "read", "on_error": "stop", "retries": null, "timeout_ms": 60000}],
        "ui_layout": [],
        "nodes": [
            {"id": "read", "block": "csv.read",
             "inputs": [input("path", json!("${vars.invoice_csv}"))],
             "outputs": [{"key": "rows", "alias": "rows"}], "when": null},
            {"id": "each", "type": "loop",
             "foreach": {"input_json": "\"${read.rows}\"", "var": "row", "max_concurrency": 2},
             "while": null,
             "body": [
                {"id": "summarize", "block": "ai.process_llm",
                 "inputs": [
                    input("prompt", json!("${vars.row}")),
                    input("output_schema", json!({"type": "object", "properties": {"note": {"type": "string"}}}))
                 ],
                 "outputs": [{"key": "results", "alias": "results"}], "when": null}
             ],
             "outputs": [{"key": "collect", "alias": "notes"}], "when": null}
        ]
    })
}

/// The variant of a wiring schema's node `anyOf` whose `type` is `kind`.
fn variant<'a>(schema: &'a Value, kind: &str) -> Option<&'a Value> {
    schema["properties"]["nodes"]["items"]["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["properties"]["type"]["enum"] == json!([kind]))
}

#[tokio::test]
async fn a_scripted_foreach_loop_becomes_a_valid_plan_with_policies() {
    let (result, requests) = run_scripted(
        vec![
            Reply::json_content(&skeleton()),
            Reply::json_content(&wiring()),
        ],
        &options(),
    )
    .await;
    let result = result.unwrap();
    assert_eq!(
        result.status,
        keiri_design::Status::Valid,
        "{:#?}",
        result.errors
    );

    // The requests: stage 1 asks per node for repeat / calls_plan, stage 2's strict schema
    // has the loop variant, the policies and the layout.
    let skeleton_schema = &requests[0].body["response_format"]["json_schema"]["schema"];
    let node = &skeleton_schema["properties"]["nodes"]["items"];
    for key in ["repeat", "calls_plan"] {
        assert!(node["properties"].get(key).is_some(), "{key}: {node}");
        assert!(node["required"].as_array().unwrap().contains(&json!(key)));
    }
    let wiring_schema = &requests[1].body["response_format"]["json_schema"]["schema"];
    assert!(keiri_llm::schema::strict_problems(wiring_schema).is_empty());
    let looped = variant(wiring_schema, "loop").expect("a loop variant");
    for key in ["foreach", "while", "body"] {
        assert!(looped["properties"].get(key).is_some(), "{key}");
    }
    // The body's nodes are the candidates' block variants: still no invented key.
    let body_blocks: Vec<&Value> = looped["properties"]["body"]["items"]["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["properties"]["block"]["enum"][0])
        .collect();
    assert!(body_blocks.contains(&&json!("ai.process_llm")));
    assert!(
        variant(wiring_schema, "subflow").is_none(),
        "no plan is registered"
    );
    for key in ["policy", "node_policies", "ui_layout"] {
        assert!(wiring_schema["properties"].get(key).is_some(), "{key}");
    }
    let on_error = &wiring_schema["properties"]["policy"]["properties"]["on_error"]["enum"];
    assert_eq!(on_error, &json!(["stop", "continue", null]));
    // The wiring prompt tells the model which node repeats.
    assert!(messages_text(&requests[1]).contains("[repeats foreach over read.rows]"));

    // The plan: a loop with its body, the policies in place.
    let plan = &result.plan;
    let each = plan.graph.iter().find(|n| n.id == "each").unwrap();
    assert_eq!(each.kind.as_deref(), Some("loop"));
    assert_eq!(each.foreach.as_ref().unwrap().var.as_deref(), Some("row"));
    assert_eq!(each.body.as_ref().unwrap().plan.graph[0].id, "summarize");
    let policy = plan.policy.as_ref().unwrap();
    assert_eq!(
        (
            policy.on_error.as_deref(),
            policy.retries,
            policy.concurrency
        ),
        (Some("continue"), Some(1), Some(2))
    );
    let read = plan.graph.iter().find(|n| n.id == "read").unwrap();
    assert_eq!(read.policy.as_ref().unwrap().timeout_ms, Some(60_000));

    // Its dry-run shows the loop and the body node.
    let run = keiri_plan::dry_run(plan, &catalog(), &Default::default());
    let each = run.nodes.iter().find(|n| n.id == "each").unwrap();
    assert_eq!(each.depends_on, ["read"]);
    assert_eq!(each.children.len(), 1);
    assert_eq!(each.children[0].id, "summarize");
}

/// The registered plan the subflow tests call: it takes `month` and publishes `checklist`.
fn monthly_close() -> Vec<keiri_design::schema::PlanCandidate> {
    vec![keiri_design::schema::PlanCandidate {
        id: "monthly_close".into(),
        inputs: vec!["month".into()],
        outputs: vec!["checklist".into()],
    }]
}

fn subflow_wiring(plan_id: &str) -> Value {
    let mut wiring = wiring();
    wiring["nodes"] = json!([
        {"id": "close", "type": "subflow", "plan_id": plan_id,
         "inputs": [{"key": "month", "value_json": "\"2026-10\""}],
         "outputs": [{"key": "checklist", "alias": "checklist"}], "when": null}
    ]);
    wiring["vars"] = json!([]);
    wiring["node_policies"] = json!([]);
    wiring
}

fn subflow_skeleton() -> Value {
    let mut skeleton = skeleton();
    skeleton["nodes"] = json!([
        {"id": "close", "block": null, "purpose": "run the monthly close",
         "repeat": null, "calls_plan": "monthly_close"}
    ]);
    skeleton
}

#[tokio::test]
async fn a_registered_plan_is_called_as_a_subflow() {
    let scripted = Scripted::start(vec![
        Reply::json_content(&subflow_skeleton()),
        Reply::json_content(&subflow_wiring("monthly_close")),
    ])
    .await;
    let ctx = scripted.ctx().with_subflow_plans(monthly_close());
    let result = keiri_design::generate_plan(INSTRUCTION, "", &options(), &ctx)
        .await
        .unwrap();
    let requests = scripted.server.requests();
    let skeleton_schema = &requests[0].body["response_format"]["json_schema"]["schema"];
    assert_eq!(
        skeleton_schema["properties"]["nodes"]["items"]["properties"]["calls_plan"]["enum"],
        json!(["monthly_close", null])
    );
    let wiring_schema = &requests[1].body["response_format"]["json_schema"]["schema"];
    let subflow = variant(wiring_schema, "subflow").expect("a subflow variant");
    assert_eq!(
        subflow["properties"]["plan_id"]["enum"],
        json!(["monthly_close"])
    );
    // The call's keys are the plan's vars and aliases, as a block's are its ports.
    let key_enum =
        |side: &str| subflow["properties"][side]["items"]["properties"]["key"]["enum"].clone();
    assert_eq!(key_enum("inputs"), json!(["month"]));
    assert_eq!(key_enum("outputs"), json!(["checklist"]));
    assert_eq!(
        result.status,
        keiri_design::Status::Valid,
        "{:#?}",
        result.errors
    );
    let close = &result.plan.graph[0];
    assert_eq!(close.kind.as_deref(), Some("subflow"));
    assert_eq!(close.call.as_ref().unwrap().plan_id, "monthly_close");
    assert_eq!(
        close.call.as_ref().unwrap().inputs["month"],
        json!("2026-10")
    );
    assert_eq!(close.out["checklist"], json!("checklist"));
}

#[tokio::test]
async fn an_unregistered_plan_cannot_be_called() {
    // Through the model: the strict schema refuses the answer outright.
    let scripted = Scripted::start(
        keiri_llm::testkit::Script::new(vec![Reply::json_content(&subflow_skeleton())])
            .then_repeat(Reply::json_content(&subflow_wiring("not_registered"))),
    )
    .await;
    let ctx = scripted.ctx().with_subflow_plans(monthly_close());
    let err = keiri_design::generate_plan(INSTRUCTION, "", &options(), &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "LLM_OUTPUT_INVALID", "{err}");
    // And the wiring check drops it for a provider that ignores schemas.
    let wiring: keiri_design::schema::Wiring =
        serde_json::from_value(subflow_wiring("not_registered")).unwrap();
    let (kept, problems) = keiri_design::schema::check_wiring(&wiring, &[], &monthly_close());
    assert!(kept.nodes.is_empty());
    let codes: Vec<&str> = problems.iter().map(|p| p.code.as_str()).collect();
    assert_eq!(codes, ["design.unknown_plan"]);
    assert_eq!(problems[0].path, "/nodes/0/plan_id");
    // A key the called plan does not have is dropped and reported, as for a block.
    let mut call = subflow_wiring("monthly_close");
    call["nodes"][0]["inputs"][0]["key"] = json!("year");
    call["nodes"][0]["outputs"][0]["key"] = json!("ghost");
    let wiring: keiri_design::schema::Wiring = serde_json::from_value(call).unwrap();
    let (kept, problems) = keiri_design::schema::check_wiring(&wiring, &[], &monthly_close());
    assert!(kept.nodes[0].inputs.is_empty() && kept.nodes[0].outputs.is_empty());
    let codes: Vec<&str> = problems.iter().map(|p| p.code.as_str()).collect();
    assert_eq!(codes, ["design.unknown_input", "design.unknown_output"]);
}
