use keiri_agent::{Scope, ToolContext, Writes};
use keiri_api::tools::*;
use keiri_api::{Context, Lang};
use serde::de::DeserializeOwned;
use serde_json::Value;

use serde_json::json;

fn context(ws: &std::path::Path) -> Context {
    Context::new(ws)
}

/// Awaits a tool call (tools are `async`) on a runtime of its own, as a front-end does on its.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

fn tools(ctx: &Context, writes: Writes) -> ToolContext {
    tool_context(ctx, ctx.path_policy(), Lang::En, writes)
}

/// One registry: the chat's and MCP's shares are the tools that declare each front-end, every
/// tool is offered somewhere, and a tool that writes directly (it cannot propose its files for
/// approval) is never offered in the chat, where writes are proposed.
#[test]
fn mcp_and_the_chat_serve_one_registry() {
    let ws = tempfile::tempdir().unwrap();
    let registry = registry(&context(ws.path()));
    let chat = chat_registry(&context(ws.path()));
    assert_eq!(chat.names(), registry.names_on(Front::Chat));
    let mcp = mcp_scope(&registry);
    assert_eq!(mcp.allowed, registry.names_on(Front::Mcp));
    for name in registry.names() {
        let tool = registry.get(&name).unwrap();
        let fronts = tool.fronts();
        assert!(fronts.chat || fronts.mcp, "{name} is offered nowhere");
        assert_eq!(chat.get(&name).is_some(), fronts.chat, "{name}");
        assert_eq!(mcp.allows(&name), fronts.mcp, "{name}");
    }
    // The API-backed tools that write directly stay out of the chat.
    for name in ["exstruct_make", "run_plan"] {
        assert!(!registry.get(name).unwrap().read_only(), "{name}");
        assert!(chat.get(name).is_none(), "{name}");
        assert!(mcp.allows(name), "{name}");
    }
}

/// The same `exstruct_patch` writes over MCP and only proposes in the chat.
#[test]
fn a_write_is_direct_over_mcp_and_proposed_in_the_chat() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = context(ws.path());
    let registry = registry(&ctx);
    let scope = mcp_scope(&registry);
    let make = json!({"out_path": "book.xlsx", "ops": [
        {"op": "set_value", "sheet": "Sheet1", "cell": "A1", "value": 1}]});
    block_on(registry.call("exstruct_make", &make, &scope, &tools(&ctx, Writes::Direct))).unwrap();
    let patch = json!({"xlsx_path": "book.xlsx", "ops": [
        {"op": "set_value", "sheet": "Sheet1", "cell": "A1", "value": 2}]});
    let chat = tools(&ctx, Writes::Propose);
    let proposed = block_on(registry.call("exstruct_patch", &patch, &scope, &chat)).unwrap();
    assert_eq!(proposed["status"], "pending_approval", "{proposed}");
    assert!(!ws.path().join("book_patched.xlsx").exists());
    assert_eq!(chat.take_pending().0.len(), 1);

    let written = block_on(registry.call(
        "exstruct_patch",
        &patch,
        &scope,
        &tools(&ctx, Writes::Direct),
    ))
    .unwrap();
    assert!(written.get("status").is_none(), "{written}");
    assert!(ws.path().join("book_patched.xlsx").is_file(), "{written}");
}

/// A tool that can only write directly (creating a workbook, a run) refuses to run where
/// writes are proposed, and writes nothing; a reading API tool runs there.
#[test]
fn a_direct_only_write_refuses_to_run_in_the_chat() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = context(ws.path());
    let registry = registry(&ctx);
    let scope = Scope::new("t", registry.names());
    let chat = tools(&ctx, Writes::Propose);
    let make = json!({"out_path": "book.xlsx", "ops": []});
    let err = block_on(registry.call("exstruct_make", &make, &scope, &chat)).unwrap_err();
    assert_eq!(err.cause(), "WRITES_DIRECTLY", "{err}");
    assert!(!ws.path().join("book.xlsx").exists());

    block_on(registry.call("exstruct_make", &make, &scope, &tools(&ctx, Writes::Direct))).unwrap();
    let cells = block_on(registry.call(
        "exstruct_read_cells",
        &json!({"xlsx_path": "book.xlsx", "addresses": ["A1"]}),
        &scope,
        &chat,
    ))
    .unwrap();
    assert_eq!(cells["missing_cells"], json!(["A1"]), "{cells}");
}

/// An API error reaches the caller with its code, message and details: an invalid plan's
/// dry-run carries its findings, a bad argument its `INVALID_REQUEST`.
#[test]
fn api_errors_keep_their_code_and_details() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = context(ws.path());
    let registry = registry(&ctx);
    let scope = mcp_scope(&registry);
    let direct = tools(&ctx, Writes::Direct);
    let err = block_on(registry.call(
        "dry_run_plan",
        &json!({"yaml": "id: p\ngraph:\n  - id: a\n    block: no.such\n"}),
        &scope,
        &direct,
    ))
    .unwrap_err();
    assert_eq!(err.cause(), "PLAN_INVALID", "{err}");
    assert!(err.details().unwrap()["findings"][0]["code"].is_string());
    let err = block_on(registry.call("exstruct_read_cells", &json!({"nope": 1}), &scope, &direct))
        .unwrap_err();
    assert_eq!(err.cause(), "INVALID_REQUEST", "{err}");
    assert!(err.message().contains("nope"), "{err}");
}

/// The planner tools' schemas (derived on the API requests, with hand-written schemas for
/// the enums that live in schema-less crates) list every field, and a sample that sets
/// every one is accepted.
#[test]
fn planner_tool_schemas_match_the_api_requests() {
    let ws = tempfile::tempdir().unwrap();
    let registry = registry(&context(ws.path()));
    let check = |tool: &str, full: Value, parse: fn(Value) -> Result<(), String>| {
        let schema = registry.get(tool).unwrap().parameters();
        let props: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        let given: Vec<&String> = full.as_object().unwrap().keys().collect();
        assert_eq!(props, given, "{tool}: the sample must set every property");
        parse(full).unwrap_or_else(|e| panic!("{tool}: {e}"));
    };
    fn parse<Req: DeserializeOwned>(v: Value) -> Result<(), String> {
        serde_json::from_value::<Req>(v)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    check(
        "templates_list",
        json!({"query": "x"}),
        parse::<keiri_api::TemplatesListRequest>,
    );
    check(
        "plan_generate",
        json!({
            "instruction": "x", "docs": ["a.csv"], "templates": ["t"],
            "apply_mode": "llm-only", "fallback": true, "max_repair": 1,
            "answers": {"a": 1}, "plan_id": "p", "pinned_blocks": ["csv.read"], "lang": "en",
            "topk_per_category": 6, "max_docs_chars": 2000, "suggest_when": false,
            "suggest_foreach": true, "foreach_var_name": "row", "verify_by_running": true
        }),
        parse::<keiri_api::PlanGenerateRequest>,
    );
    check(
        "requirements_answer",
        json!({"yaml": "id: p", "answers": {}, "lang": "ja"}),
        parse::<keiri_api::RequirementsAnswerRequest>,
    );
}

#[test]
fn every_input_schema_is_an_object_with_properties() {
    let ws = tempfile::tempdir().unwrap();
    let registry = registry(&context(ws.path()));
    for name in registry.names() {
        let schema = registry.get(&name).unwrap().parameters();
        assert_eq!(schema.get("type"), Some(&Value::from("object")), "{name}");
        assert!(
            schema.get("properties").is_some_and(Value::is_object),
            "{name}"
        );
    }
}

#[test]
fn apply_patch_keeps_its_fixed_definition() {
    let ws = tempfile::tempdir().unwrap();
    let registry = registry(&context(ws.path()));
    let fixed = keiri_api::patches::tool_definition();
    let tool = registry.get(&fixed.name).unwrap();
    assert_eq!(tool.description(), fixed.description);
    assert_eq!(tool.parameters(), fixed.parameters);
}
