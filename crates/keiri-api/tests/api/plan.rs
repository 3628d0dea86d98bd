use keiri_api::json;
use keiri_api::*;
use keiri_api::{Context, ErrorCode, Lang};
use serde_json::{Value, json};

fn ctx(dir: &std::path::Path) -> Context {
    let catalog = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
    Context::new(dir).with_catalog_dirs(vec![catalog])
}

/// The validation carries the plan's graph (so the studio draws edges and lists the
/// unvalued vars without parsing `${…}` itself), and none for text that is not a plan.
#[test]
fn validation_sends_the_plan_graph() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = ctx(ws.path());
    let yaml = "id: p\nvars: {to: ''}\ngraph:\n  - id: a\n    block: input.csv\n    in: {path: x.csv}\n    out: {rows: rows}\n  - id: b\n    block: notify.send\n    in: {to: '${vars.to}', body: '${a.rows}'}\n";
    let res = plan_validate(
        &ctx,
        json::PlanValidateRequest {
            yaml: yaml.into(),
            lang: Some(Lang::En),
            ..Default::default()
        },
    )
    .unwrap();
    let graph = serde_json::to_value(res.graph.unwrap()).unwrap();
    assert_eq!(graph["nodes"][1]["key"], "/graph/1");
    assert_eq!(
        graph["edges"],
        json!([{"source": "/graph/0", "target": "/graph/1", "aliases": ["rows"], "kind": "data"}])
    );
    assert_eq!(
        graph["unresolved_vars"],
        json!([{"name": "to", "defined": true, "node_ids": ["b"]}])
    );
    let broken = plan_validate(
        &ctx,
        json::PlanValidateRequest {
            yaml: "graph: [\n".into(),
            lang: None,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(broken.graph.is_none());
    assert!(!broken.valid);
}

/// The catalog is read once per context (and its clones), and again only after a spec file
/// changes: a spec the user adds is in the next validation.
#[test]
fn the_catalog_is_loaded_once_and_reloaded_on_change() {
    let ws = tempfile::tempdir().unwrap();
    let own = ws.path().join("block_specs");
    let ctx = Context::new(ws.path()).with_catalog_dirs(vec![own.clone()]);
    let (first, _) = load_catalog(&ctx);
    let (again, _) = load_catalog(&ctx.clone());
    assert!(
        std::sync::Arc::ptr_eq(&first, &again),
        "the catalog was read again"
    );
    let codes = |ctx: &Context| -> Vec<String> {
        let res = plan_validate(
            ctx,
            json::PlanValidateRequest {
                yaml: "id: p\ngraph:\n  - id: a\n    block: my.block\n".into(),
                lang: Some(Lang::En),
                ..Default::default()
            },
        )
        .unwrap();
        res.findings.iter().map(|f| f.code.to_string()).collect()
    };
    assert!(codes(&ctx).contains(&"block.unknown".to_string()));
    std::fs::create_dir_all(own.join("my")).unwrap();
    keiri_fs::write_atomic(
        &own.join("my/my.block.yaml"),
        "id: my.block\nversion: 1.0.0\nentrypoint: builtin:my.block\ntitle_ja: 私の\n\
         title_en: mine\ndescription: mine\ninputs: {}\noutputs: {}\n"
            .as_bytes(),
    )
    .unwrap();
    assert!(
        !codes(&ctx).contains(&"block.unknown".to_string()),
        "{:?}",
        codes(&ctx)
    );
}

/// A third-party fixture workbook copied into the test workspace (see keiri-testkit).
fn workbook(ws: &std::path::Path) -> std::path::PathBuf {
    let src = keiri_testkit::shared_fixture("accounting/multi_sheet_ja.xlsx");
    let dst = ws.join("book.xlsx");
    std::fs::copy(&src, &dst).unwrap();
    dst
}

fn plan(xlsx_path: &str) -> String {
    format!(
        "id: p\nvars:\n  book: book.xlsx\ngraph:\n  - id: patch\n    block: excel.patch_workbook\n    in:\n      xlsx_path: \"{xlsx_path}\"\n      operations:\n        - {{op: set_value, sheet: 入力データ, cell: D2, value: 確認済}}\n"
    )
}

fn dry_run_json(ctx: &Context, yaml: String) -> Value {
    let res = plan_dry_run(
        ctx,
        json::PlanRequest {
            yaml,
            lang: Some(Lang::En),
        },
    )
    .unwrap();
    serde_json::to_value(res).unwrap()
}

#[test]
fn dry_run_previews_workbook_patch_nodes_without_writing() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let book = workbook(ws.path());
    let before = std::fs::read(&book).unwrap();
    let v = dry_run_json(&ctx(ws.path()), plan("${vars.book}"));
    let preview = &v["nodes"][0]["workbook"];
    assert_eq!(preview["status"], "ready", "{preview:#}");
    let diff = &preview["response"]["patch_diff"][0];
    assert_eq!(diff["sheet"], "入力データ");
    assert_eq!(diff["cell"], "D2");
    assert_eq!(diff["after"], json!({"kind": "value", "value": "確認済"}));
    assert_eq!(diff["status"], "applied");
    assert_eq!(
        preview["response"]["inverse_ops"][0],
        json!({"op": "set_value", "sheet": "入力データ", "cell": "D2", "value": null})
    );
    // The request to apply for real: not a dry run, with inverse ops and the check.
    let request = &preview["request"];
    assert_eq!(request["xlsx_path"], "book.xlsx");
    assert_eq!(request["out_dir"], "outputs");
    assert_eq!(request["dry_run"], false);
    assert_eq!(request["return_inverse_ops"], true);
    assert_eq!(request["preflight_formula_check"], true);
    assert_eq!(request["ops"][0]["cell"], "D2");
    assert_eq!(std::fs::read(&book).unwrap(), before);
    assert!(!ws.path().join("book_patched.xlsx").exists());

    // Applying the returned request and then its inverse ops restores the cell.
    let ctx = ctx(ws.path());
    let apply: keiri_xlsx::PatchRequest = serde_json::from_value(request.clone()).unwrap();
    let applied = keiri_api::workbook_patch(&ctx, apply).unwrap();
    assert!(applied.error.is_none(), "{:?}", applied.error);
    let out = std::path::PathBuf::from(&applied.out_path);
    let mut undo = keiri_xlsx::PatchRequest::new(&applied.out_path, applied.inverse_ops);
    undo.out_name = out.file_name().map(|n| n.to_string_lossy().into_owned());
    undo.on_conflict = Some(keiri_xlsx::OnConflict::Overwrite);
    undo.dry_run = true;
    let undone = keiri_api::workbook_patch(&ctx, undo).unwrap();
    assert_eq!(
        undone.patch_diff[0].before,
        Some(keiri_xlsx::PatchValue {
            kind: keiri_xlsx::ValueKind::Value,
            value: Some(keiri_xlsx::CellValue::Text("確認済".into())),
        })
    );
    assert_eq!(
        undone.patch_diff[0].after,
        Some(keiri_xlsx::PatchValue {
            kind: keiri_xlsx::ValueKind::Value,
            value: None,
        })
    );
}

#[test]
fn a_previewed_patch_applies_into_the_output_folder_not_beside_the_source() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    workbook(ws.path());
    let ctx = ctx(ws.path());
    let v = dry_run_json(&ctx, plan("book.xlsx"));
    let request = &v["nodes"][0]["workbook"]["request"];
    let apply: keiri_xlsx::PatchRequest = serde_json::from_value(request.clone()).unwrap();
    let applied = keiri_api::workbook_patch(&ctx, apply).unwrap();
    assert!(applied.error.is_none(), "{:?}", applied.error);
    let out = std::path::PathBuf::from(&applied.out_path);
    assert!(
        out.ends_with("outputs/book_patched.xlsx"),
        "{}",
        out.display()
    );
    assert!(ws.path().join("outputs/book_patched.xlsx").is_file());
    assert!(!ws.path().join("book_patched.xlsx").exists());
}

#[test]
fn a_plan_names_its_own_output_folder() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    workbook(ws.path());
    let yaml = plan("book.xlsx").replace(
        "      operations:",
        "      out_dir: 月次/出力\n      operations:",
    );
    let v = dry_run_json(&ctx(ws.path()), yaml);
    assert_eq!(
        v["nodes"][0]["workbook"]["request"]["out_dir"], "月次/出力",
        "{v:#}"
    );
}

#[test]
fn register_saves_under_the_stamp_the_client_previewed() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = ctx(ws.path());
    // The server's clock has moved on to the next minute; the previewed name still wins.
    let later = chrono::NaiveDate::from_ymd_opt(2026, 4, 1)
        .unwrap()
        .and_hms_opt(9, 31, 2)
        .unwrap();
    let req = json::PlanRegisterRequest {
        yaml: "id: 請求書の重複チェック\ngraph: []\n".into(),
        lang: Some(Lang::Ja),
        stamp: Some("202604010930".into()),
    };
    let res = plan_register_at(&ctx, req, later).unwrap();
    assert_eq!(res.file_name, "請求書の重複チェック_202604010930.yaml");
    assert!(
        ws.path()
            .join("designs/請求書の重複チェック_202604010930.yaml")
            .is_file()
    );
    // Without a stamp the server's time names the file.
    let res = plan_register_at(
        &ctx,
        json::PlanRequest {
            yaml: "id: p\ngraph: []\n".into(),
            lang: None,
        }
        .into(),
        later,
    )
    .unwrap();
    assert_eq!(res.file_name, "p_202604010931.yaml");
}

#[test]
fn register_refuses_a_stamp_that_is_not_a_minute_and_writes_nothing() {
    let ws = tempfile::tempdir().unwrap();
    let now = chrono::NaiveDate::from_ymd_opt(2026, 4, 1)
        .unwrap()
        .and_hms_opt(9, 30, 0)
        .unwrap();
    for stamp in ["2026040109", "../../x", "202613010930"] {
        let req = json::PlanRegisterRequest {
            yaml: "id: p\ngraph: []\n".into(),
            lang: None,
            stamp: Some(stamp.into()),
        };
        let err = plan_register_at(&ctx(ws.path()), req, now).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest, "{stamp}");
    }
    assert!(!ws.path().join("designs").exists());
}

#[test]
fn dry_run_preview_carries_the_real_neighbours_of_a_change() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    // The grid around 入力データ!D2 used to draw its header row and the amounts beside it
    // blank: the preview carried only the changed cell.
    let ws = tempfile::tempdir().unwrap();
    workbook(ws.path());
    let v = dry_run_json(&ctx(ws.path()), plan("${vars.book}"));
    let context = &v["nodes"][0]["workbook"]["context"];
    assert_eq!(
        context,
        &json!([{
            "sheet": "入力データ",
            "cells": [
                {"cell": "C1", "value": "予定金額", "formula": null},
                {"cell": "D1", "value": "備考", "formula": null},
                {"cell": "C2", "value": 55000.0, "formula": null},
                {"cell": "C3", "value": 82500.0, "formula": null},
            ],
        }]),
        "{v:#}"
    );
}

#[test]
fn workbook_preview_is_unresolved_when_inputs_are_known_only_at_run_time() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    workbook(ws.path());
    let v = dry_run_json(&ctx(ws.path()), plan("${env.BOOK}"));
    let preview = &v["nodes"][0]["workbook"];
    assert_eq!(preview["status"], "unresolved", "{preview:#}");
    assert!(
        preview["message"].as_str().unwrap().contains("${env.BOOK}"),
        "{preview:#}"
    );
    assert!(preview["response"].is_null() && preview["request"].is_null());
}

#[test]
fn workbook_preview_failure_carries_the_api_code() {
    let ws = tempfile::tempdir().unwrap();
    let v = dry_run_json(&ctx(ws.path()), plan("missing.xlsx"));
    let preview = &v["nodes"][0]["workbook"];
    assert_eq!(preview["status"], "failed", "{preview:#}");
    assert_eq!(preview["code"], "NOT_FOUND");
}

#[test]
fn nodes_of_other_blocks_have_no_workbook_preview() {
    let ws = tempfile::tempdir().unwrap();
    let yaml = "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: a.csv}\n    out: {rows: rows}\n  - id: save\n    block: csv.write\n    in: {rows: \"${read.rows}\"}\n";
    let v = dry_run_json(&ctx(ws.path()), yaml.to_string());
    for node in v["nodes"].as_array().unwrap() {
        assert!(node["workbook"].is_null(), "{node:#}");
    }
}

#[test]
fn loop_body_patch_nodes_fed_by_the_loop_item_are_unresolved() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    workbook(ws.path());
    let yaml = "id: p\nvars:\n  books: [book.xlsx]\ngraph:\n  - id: each\n    type: loop\n    foreach: {input: \"${vars.books}\", var: item}\n    body:\n      plan:\n        id: inner\n        graph:\n          - id: patch\n            block: excel.patch_workbook\n            in:\n              xlsx_path: \"${vars.item}\"\n              operations: [{op: add_sheet, sheet: 追加}]\n";
    let v = dry_run_json(&ctx(ws.path()), yaml.to_string());
    let inner = &v["nodes"][0]["children"][0];
    assert_eq!(inner["id"], "patch");
    assert_eq!(inner["workbook"]["status"], "unresolved", "{v:#}");
}

/// The registered plans, newest registration per id, with what a run must be given;
/// a file in designs/ that is not a plan is not listed.
#[test]
fn plan_list_lists_the_newest_registration_of_each_plan() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = ctx(ws.path());
    let plan = |version: &str| {
        format!(
            "id: monthly\ndescription: 月次集計\nversion: '{version}'\nvars: {{month: null, out: out.csv}}\ngraph:\n  - id: a\n    block: csv.read\n    in: {{path: '${{vars.month}}.csv'}}\n    out: {{rows: rows}}\n"
        )
    };
    let register = |yaml: String, stamp: &str| {
        plan_register(
            &ctx,
            json::PlanRegisterRequest {
                yaml,
                lang: Some(Lang::En),
                stamp: Some(stamp.into()),
            },
        )
        .unwrap()
    };
    register(plan("1.0"), "202611010900");
    let newest = register(plan("1.1"), "202611020900");
    keiri_fs::write_atomic(&ctx.designs_dir.join("broken.yaml"), b"graph: [").unwrap();
    keiri_fs::write_atomic(&ctx.designs_dir.join("notes.txt"), b"id: x").unwrap();

    let res = crate::support::call(&ctx, "plan_list", Value::Null).unwrap();
    assert_eq!(
        res,
        json!({"plans": [{
            "id": "monthly",
            "description": "月次集計",
            "version": "1.1",
            "file": format!("designs/{}", newest.file_name),
            "nodes": 1,
            "open_vars": ["month"],
        }]})
    );
    let err = crate::support::call(&ctx, "plan_list", json!({"all": true})).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
}

/// A registered plan's text by id is its newest registration's; an unknown id is
/// `NOT_FOUND`.
#[test]
fn plan_get_returns_the_newest_registration_of_a_plan() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = ctx(ws.path());
    let plan = |version: &str| {
        format!(
            "id: monthly\nversion: '{version}'\ngraph:\n  - id: a\n    block: csv.read\n    in: {{path: a.csv}}\n    out: {{rows: rows}}\n"
        )
    };
    let mut newest = None;
    for (version, stamp) in [("1.0", "202611010900"), ("1.1", "202611020900")] {
        let req = json::PlanRegisterRequest {
            yaml: plan(version),
            lang: Some(Lang::En),
            stamp: Some(stamp.into()),
        };
        newest = Some(plan_register(&ctx, req).unwrap());
    }
    let res = crate::support::call(&ctx, "plan_get", json!({"id": "monthly"})).unwrap();
    assert_eq!(
        res,
        json!({
            "id": "monthly",
            "file": format!("designs/{}", newest.unwrap().file_name),
            "yaml": plan("1.1"),
            "inputs": [],
        })
    );
    let err = crate::support::call(&ctx, "plan_get", json!({"id": "nope"})).unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
}

/// What a rerun of a registered plan asks for: each var the nodes read, typed by the input it
/// feeds, the file first, with the plan's own value as the default; a var no node reads is
/// not asked.
#[test]
fn plan_get_lists_what_a_rerun_takes() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = ctx(ws.path());
    let yaml = "id: payables\nvars: {limit: 500000, invoices: inputs/3月.csv, unused: x}\ngraph:\n  - id: ask\n    block: control.approval\n    in: {subject: 支払, approvers: [{name: 部長, limit: 1000000}], threshold_amount: '${vars.limit}'}\n    out: {approved: ok}\n  - id: read\n    block: csv.read\n    in: {path: '${vars.invoices}'}\n    out: {rows: rows}\n";
    plan_register(
        &ctx,
        json::PlanRegisterRequest {
            yaml: yaml.into(),
            lang: Some(Lang::En),
            stamp: Some("202611010900".into()),
        },
    )
    .unwrap();
    let res = crate::support::call(&ctx, "plan_get", json!({"id": "payables"})).unwrap();
    let inputs = res["inputs"].as_array().unwrap();
    let asked: Vec<(&str, &str, &Value)> = inputs
        .iter()
        .map(|r| {
            (
                r["target"]["var"].as_str().unwrap(),
                r["type"].as_str().unwrap(),
                &r["default"],
            )
        })
        .collect();
    assert_eq!(
        asked,
        [
            ("invoices", "file", &json!("inputs/3月.csv")),
            ("limit", "number", &json!(500000)),
        ],
        "{res:#}"
    );
    assert_eq!(res["yaml"], yaml);
}
