use keiri_agent::{Scope, ToolError};
use serde_json::{Value, json};

use super::{block_on, tool_ctx, workspace};

/// Calls a built-in tool with every tool in scope.
fn call(ws: &std::path::Path, tool: &str, args: Value) -> Result<Value, ToolError> {
    let registry = keiri_agent::builtin_registry();
    let scope = Scope::new("test", registry.names());
    block_on(registry.call(tool, &args, &scope, &tool_ctx(ws)))
}

/// Every built-in tool has an object schema for its arguments and is offered on a front-end
/// (a tool no front-end offers could never be called); the chat and MCP shares are derived
/// from what each tool declares.
#[test]
fn the_registry_has_the_builtin_tools_with_schemas() {
    use keiri_agent::Front;
    let registry = keiri_agent::builtin_registry();
    let specs = registry.specs(&Scope::new("t", registry.names()));
    assert_eq!(specs.len(), registry.names().len());
    assert!(specs.len() >= 2, "{:?}", registry.names());
    for spec in &specs {
        assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
        assert!(spec.parameters.get("$schema").is_none());
        let fronts = registry.get(&spec.name).unwrap().fronts();
        assert!(
            fronts.chat || fronts.mcp,
            "{} is offered nowhere",
            spec.name
        );
    }
    let chat = registry.names_on(Front::Chat);
    assert_eq!(
        keiri_agent::builtin_registry()
            .offered_on(Front::Chat)
            .names(),
        chat
    );
    // Both front-ends apply a unified diff; only the chat reads a file through a tool.
    assert!(chat.contains(&"apply_patch".to_string()));
    assert!(
        registry
            .names_on(Front::Mcp)
            .contains(&"apply_patch".to_string())
    );
    assert!(
        !registry
            .names_on(Front::Mcp)
            .contains(&"read_file".to_string())
    );
    let apply = specs.iter().find(|s| s.name == "apply_patch").unwrap();
    assert_eq!(
        apply.description.as_deref(),
        Some(keiri_diff::TOOL_DESCRIPTION)
    );
    assert_eq!(apply.parameters, keiri_diff::tool_parameters());
    assert!(
        !registry
            .read_only_names()
            .contains(&"exstruct_patch".to_string())
    );
}

#[test]
fn read_file_reads_line_ranges() {
    let ws = workspace();
    let r = call(
        ws.path(),
        "read_file",
        json!({"path": "plan.yaml", "start_line": 3}),
    )
    .unwrap();
    assert_eq!(
        r["content"],
        "  - id: read\n    block: csv.read\n    in: {path: invoices.csv, encoding: utf-8}\n    out: {rows: rows}\n"
    );
    assert_eq!(
        (r["start_line"].clone(), r["end_line"].clone()),
        (json!(3), json!(6))
    );
    let err = call(
        ws.path(),
        "read_file",
        json!({"path": "plan.yaml", "start_line": 0}),
    )
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    let err = call(
        ws.path(),
        "read_file",
        json!({"path": "plan.yaml", "extra": 1}),
    )
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    super::put(ws.path().join("sjis.txt"), b"\x8c\x6f\x97\x9d\n");
    let r = call(ws.path(), "read_file", json!({"path": "sjis.txt"})).unwrap();
    assert_eq!(r["content"], "経理\n");
}

#[test]
fn plan_tools_validate_and_dry_run() {
    let ws = workspace();
    let r = call(ws.path(), "validate_plan", json!({})).unwrap();
    assert_eq!(r["valid"], true, "{r}");
    let r = call(
        ws.path(),
        "validate_plan",
        json!({"yaml": "id: p\ngraph:\n  - id: a\n    block: no.such\n"}),
    )
    .unwrap();
    assert_eq!(r["valid"], false);
    assert_eq!(r["findings"][0]["line"], 4, "{r}");
    let r = call(ws.path(), "dry_run_plan", json!({})).unwrap();
    assert_eq!(r["order"], json!(["read"]));
    let err = call(
        ws.path(),
        "dry_run_plan",
        json!({"yaml": "id: p\ngraph:\n  - id: a\n    block: no.such\n"}),
    )
    .unwrap_err();
    assert_eq!(err.to_model_json("dry_run_plan")["cause"], "PLAN_INVALID");
}

#[test]
fn validate_plan_checks_the_columns_of_the_files_the_plan_reads() {
    // The plan names `vendor`; the CSV it reads calls that column 取引先名. The studio's
    // validation says so, and the chat's tool must say the same.
    let ws = workspace();
    super::put(
        ws.path().join("bills.csv"),
        "請求書番号,取引先名,金額\nINV-1,山田商事,1000\n".as_bytes(),
    );
    let yaml = "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: bills.csv}\n    out: {rows: invoices}\n  - id: detect\n    block: matching.duplicate_invoices\n    in: {rows: \"${read.invoices}\", vendor_field: vendor, amount_field: 金額, invoice_no_field: 請求書番号}\n    out: {duplicates: duplicates}\n";
    let r = call(ws.path(), "validate_plan", json!({ "yaml": yaml })).unwrap();
    let columns: Vec<&Value> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "column.unknown")
        .collect();
    // vendor_field, and date_field left at its default (invoice_date), which the file lacks.
    assert_eq!(columns.len(), 2, "{r}");
    assert_eq!(columns[0]["path"], "/graph/1/in/vendor_field");
    assert_eq!(columns[1]["path"], "/graph/1/in/date_field");
    assert_eq!(columns[0]["line"], 9, "{r}");
    assert!(
        columns[0]["hint"].as_str().unwrap().contains("取引先名"),
        "{r}"
    );
    assert_eq!(r["valid"], false);
}

#[test]
fn catalog_tools_find_and_describe_blocks() {
    let ws = workspace();
    let r = call(
        ws.path(),
        "retrieve_blocks",
        json!({"instruction": "CSVを読み込む"}),
    )
    .unwrap();
    let ids: Vec<&str> = r["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"csv.read"), "{ids:?}");
    let r = call(ws.path(), "describe_block", json!({"id": "csv.read"})).unwrap();
    assert!(r["inputs"].get("path").is_some(), "{r}");
    let err = call(ws.path(), "describe_block", json!({"id": "nope"})).unwrap_err();
    assert_eq!(err.to_model_json("describe_block")["cause"], "NOT_FOUND");
}

#[test]
fn document_tools_read_sections_and_metrics() {
    let ws = workspace();
    super::put(ws.path().join("a.txt"), "一行目\n二行目\n");
    let r = call(
        ws.path(),
        "extract_code_section",
        json!({"file_path": "a.txt", "start_line": 2, "output_format": "json"}),
    )
    .unwrap();
    assert_eq!(r["results"][0]["sections"][0]["content"], "二行目", "{r}");
    let r = call(
        ws.path(),
        "check_code_scale",
        json!({"file_paths": ["a.txt"], "output_format": "json"}),
    )
    .unwrap();
    assert_eq!(r["files"][0]["lines"], 2, "{r}");
}

#[test]
fn apply_patch_proposes_and_never_writes() {
    let ws = workspace();
    let r = call(
        ws.path(),
        "apply_patch",
        json!({"filePath": "plan.yaml", "patch": super::PLAN_PATCH}),
    )
    .unwrap();
    assert_eq!(r["status"], "pending_approval");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("plan.yaml")).unwrap(),
        super::PLAN
    );
    let err = call(
        ws.path(),
        "apply_patch",
        json!({"filePath": "", "patch": "x"}),
    )
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    let err = call(
        ws.path(),
        "apply_patch",
        json!({"filePath": "nope.yaml", "patch": "x"}),
    )
    .unwrap_err();
    assert_eq!(err.to_model_json("apply_patch")["cause"], "NOT_FOUND");
}

/// Under `Writes::Direct` (MCP's setting) the same tool writes the patched file, and a patch
/// that does not apply fails with `APPLY_FAILED` and the backend in its details.
#[test]
fn apply_patch_writes_when_writes_are_direct() {
    let ws = workspace();
    let registry = keiri_agent::builtin_registry();
    let scope = Scope::new("test", registry.names());
    let direct = tool_ctx(ws.path()).with_writes(keiri_agent::Writes::Direct);
    let args = json!({"filePath": "plan.yaml", "patch": super::PLAN_PATCH});
    let r = block_on(registry.call("apply_patch", &args, &scope, &direct)).unwrap();
    assert_eq!(r["changed"], true, "{r}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("plan.yaml")).unwrap(),
        super::PLAN_AFTER
    );
    assert!(direct.take_pending().0.is_empty(), "nothing is proposed");
    let err = block_on(registry.call("apply_patch", &args, &scope, &direct)).unwrap_err();
    assert_eq!(err.cause(), "APPLY_FAILED", "{err}");
    assert_eq!(err.details().unwrap()["backend"], "native", "{err:?}");
}

/// `check_code_scale` only measures: `metrics_only: false` asks for what it does not do.
#[test]
fn check_code_scale_refuses_structure_analysis() {
    let ws = workspace();
    let err = call(
        ws.path(),
        "check_code_scale",
        json!({"file_paths": ["plan.yaml"], "metrics_only": false}),
    )
    .unwrap_err();
    assert_eq!(err.cause(), "INVALID_REQUEST", "{err}");
    let toon = call(
        ws.path(),
        "check_code_scale",
        json!({"file_paths": ["plan.yaml"]}),
    )
    .unwrap();
    assert_eq!(toon["output_format"], "toon", "{toon}");
}

/// `extract_code_section`'s description states the batch limits the tool applies.
#[test]
fn extract_code_section_describes_its_limits() {
    let registry = keiri_agent::builtin_registry();
    let description = registry.get("extract_code_section").unwrap().description();
    let limits = keiri_docs::BatchLimits::default();
    for (what, n) in [
        ("files", limits.max_files),
        ("sections per file", limits.max_sections_per_file),
        ("sections in all", limits.max_sections_total),
        ("bytes and", limits.max_total_bytes),
        ("lines of content", limits.max_total_lines),
    ] {
        assert!(
            description.contains(&format!("{n} {what}")),
            "{what}: {description}"
        );
    }
    assert!(description.contains(&format!("files up to {} bytes", limits.max_file_size_bytes)));
}

/// A one-sheet workbook with numbers in A1 and A2.
fn tiny_xlsx() -> Vec<u8> {
    use std::io::Write;
    let files = [
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#,
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#,
        ),
        (
            "xl/workbook.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>"#,
        ),
        (
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#,
        ),
        (
            "xl/worksheets/sheet1.xml",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1"><v>1</v></c></row><row r="2"><c r="A2"><v>2</v></c></row></sheetData></worksheet>"#,
        ),
    ];
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in files {
        w.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(text.as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn exstruct_patch_proposes_unless_it_is_a_dry_run() {
    use keiri_agent::{Session, SessionStore, approve, undo};

    let ws = workspace();
    super::put(ws.path().join("book.xlsx"), tiny_xlsx());
    let ctx = tool_ctx(ws.path());
    let registry = keiri_agent::builtin_registry();
    let scope = Scope::new("test", registry.names());
    let ops = json!([{"op": "set_value", "sheet": "Sheet1", "cell": "B1", "value": 5}]);
    let preview = block_on(registry.call(
        "exstruct_patch",
        &json!({"xlsx_path": "book.xlsx", "ops": ops, "dry_run": true}),
        &scope,
        &ctx,
    ))
    .unwrap();
    assert_eq!(preview["status"], "preview");
    assert_eq!(preview["patch_diff"][0]["cell"], "B1", "{preview}");
    let proposed = block_on(registry.call(
        "exstruct_patch",
        &json!({"xlsx_path": "book.xlsx", "ops": ops}),
        &scope,
        &ctx,
    ))
    .unwrap();
    assert_eq!(proposed["status"], "pending_approval");
    assert!(!ws.path().join("book_patched.xlsx").exists());
    let (pending, next_change) = ctx.take_pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].file, "book_patched.xlsx");
    assert_eq!(
        pending[0].diff,
        "--- a/book.xlsx\n+++ b/book_patched.xlsx\n@@ Sheet1!B1 (set_value) @@\n+5\n"
    );
    let err = block_on(registry.call(
        "exstruct_patch",
        &json!({"xlsx_path": "book.xlsx", "ops": ops, "dry_run": "yes"}),
        &scope,
        &ctx,
    ))
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");

    let store = SessionStore::new(ws.path());
    let mut session = Session {
        pending,
        next_change,
        ..Session::new("s1")
    };
    let policy = keiri_fs::PathPolicy::new([ws.path()]);
    let approval = approve(&store, &mut session, &policy, "chg-1", true).unwrap();
    assert_eq!(approval.file, "book_patched.xlsx");
    assert!(ws.path().join("book_patched.xlsx").is_file());
    // The output did not exist before, so undo removes it.
    undo(&store, &mut session, &policy).unwrap();
    assert!(!ws.path().join("book_patched.xlsx").exists());
    assert!(ws.path().join("book.xlsx").is_file());
}
