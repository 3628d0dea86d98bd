use keiri_api::*;
use keiri_api::{Context, ErrorCode};
use keiri_llm::CancellationToken;
use serde_json::Value as Json;
use std::path::Path;

fn ctx(dir: &Path) -> Context {
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
    Context::new(dir).with_catalog_dirs(vec![catalog])
}

/// `field` of each `event` the run recorded, in order (through run_get, as the window reads
/// them).
fn event_fields(ctx: &Context, plan_id: &str, run_id: &str, event: &str, field: &str) -> Vec<Json> {
    let got = run_get(
        ctx,
        RunGetRequest {
            plan_id: plan_id.into(),
            run_id: run_id.into(),
        },
    )
    .unwrap();
    got.events
        .iter()
        .filter(|e| e["event"] == event)
        .map(|e| e[field].clone())
        .collect()
}

/// Reads a file that is not there: the run records a failed node.
const PLAN: &str = "id: api_run\nvars: {m: missing.csv}\ngraph:\n  - {id: ask, block: csv.read, in: {path: \"${vars.m}\"}}\n";

#[test]
fn run_list_get_and_resume() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = ctx(ws.path());
    let mut seen = Vec::new();
    let req = PlanRunRequest {
        yaml: Some(PLAN.into()),
        ..Default::default()
    };
    let res = crate::support::drive(
        &mut |e: keiri_run::Event| {
            let e = serde_json::to_value(e).unwrap();
            seen.push(e["event"].as_str().unwrap_or("").to_string());
        },
        async |sink| plan_run(&ctx, req, sink, &CancellationToken::new()).await,
    )
    .unwrap();
    assert_eq!(res.status, keiri_run::RunStatus::Failed, "{res:?}");
    assert_eq!(res.failures[0].node, "ask");
    assert_eq!(res.failures[0].code, "FILE_NOT_FOUND");
    assert!(res.run_dir.starts_with("runs/api_run/"), "{}", res.run_dir);
    assert_eq!(
        seen.as_slice(),
        ["run_start", "node_start", "node_error", "run_finish"]
    );

    let list = run_list(&ctx, RunListRequest::default()).unwrap();
    assert_eq!(list.runs.len(), 1);
    assert_eq!(list.runs[0].run_id, res.run_id);
    let got = run_get(
        &ctx,
        RunGetRequest {
            plan_id: "api_run".into(),
            run_id: res.run_id.clone(),
        },
    )
    .unwrap();
    assert_eq!(got.status, keiri_run::RunStatus::Failed);
    assert_eq!(got.failures[0].code, "FILE_NOT_FOUND");
    assert_eq!(
        got.events.first().map(|e| e["event"].clone()),
        Some(Json::from("run_start"))
    );

    // Resume from the run's own plan.yaml: the failed node runs again in the same run.
    let resumed = crate::support::drive(&mut |_| {}, async |sink| {
        let req = RunResumeRequest {
            run_id: res.run_id.clone(),
            plan_id: Some("api_run".into()),
            ..Default::default()
        };
        run_resume(&ctx, req, sink, &CancellationToken::new()).await
    })
    .unwrap();
    assert_eq!(resumed.run_id, res.run_id);
    assert_eq!(resumed.status, keiri_run::RunStatus::Failed);
    let starts = event_fields(&ctx, "api_run", &res.run_id, "run_start", "resumed");
    assert_eq!(starts, [Json::Bool(false), Json::Bool(true)]);
}

/// A var without a value (asked at the run's start unless given) and a second file missing
/// the first time.
const OPEN_VAR_PLAN: &str = "id: api_resume_vars
vars: {invoices: null}
graph:
  - {id: read, block: csv.read, in: {path: \"${vars.invoices}\"}, out: {rows: rows}}
  - {id: extra, block: csv.read, in: {path: inputs/extra.csv}, out: {rows: rows}}
";

/// A run given its file as an input fails on the second; resumed by its ids alone (as after
/// a kill), it is not asked for the file again: it reads the one the first attempt was given.
#[test]
fn a_resume_is_not_asked_again_for_the_inputs_its_run_was_given() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = ctx(ws.path());
    with_invoices(ws.path());
    let req = PlanRunRequest {
        yaml: Some(OPEN_VAR_PLAN.into()),
        inputs: [("invoices".to_string(), "inputs/請求書.csv".to_string())]
            .into_iter()
            .collect(),
        ..Default::default()
    };
    let first = crate::support::drive(&mut |_| {}, async |sink| {
        plan_run(&ctx, req, sink, &CancellationToken::new()).await
    })
    .unwrap();
    assert_eq!(first.status, keiri_run::RunStatus::Failed, "{first:?}");
    assert_eq!(first.failures[0].node, "extra");
    keiri_fs::write_atomic(
        &ws.path().join("inputs/extra.csv"),
        "請求書番号,金額\nINV-004,800\n".as_bytes(),
    )
    .unwrap();
    let resumed = crate::support::drive(&mut |_| {}, async |sink| {
        let req = RunResumeRequest {
            run_id: first.run_id.clone(),
            plan_id: Some("api_resume_vars".into()),
            ..Default::default()
        };
        run_resume(&ctx, req, sink, &CancellationToken::new()).await
    })
    .unwrap();
    assert_eq!(
        resumed.status,
        keiri_run::RunStatus::Finished,
        "{resumed:?}"
    );
    assert!(resumed.paused.is_empty(), "{:?}", resumed.paused);
    // The invoices were read once, by the first attempt; the resume read only the new file.
    let reads = event_fields(&ctx, "api_resume_vars", &first.run_id, "node_start", "node");
    assert_eq!(reads, ["read", "extra", "extra"]);
}

const CSV_PLAN: &str = "id: api_csv
graph:
  - {id: read, block: csv.read, in: {path: inputs/請求書.csv}, out: {rows: rows}}
  - {id: pick, block: transforms.select_columns, in: {rows: \"${read.rows}\", columns: [取引先, 金額]}, out: {rows: picked}}
";

fn with_invoices(ws: &Path) {
    std::fs::create_dir_all(ws.join("inputs")).unwrap();
    keiri_fs::write_atomic(
        &ws.join("inputs/請求書.csv"),
        "請求書番号,取引先,金額\nINV-001,株式会社山田商事,10000\nINV-002,ヤマダ商事,5500\nINV-003,佐藤工業,1200\n".as_bytes(),
    )
    .unwrap();
}

/// A rule every invoice violates: the run finishes, and plan_run and run_get both carry the
/// warning in the context's language, as the window and MCP read them.
#[test]
fn a_finished_run_carries_its_warnings_to_plan_run_and_run_get() {
    let ws = tempfile::tempdir().unwrap();
    with_invoices(ws.path());
    let ctx = ctx(ws.path());
    let yaml = "id: api_warn
graph:
  - {id: read, block: csv.read, in: {path: inputs/請求書.csv}, out: {rows: rows}}
  - {id: policy, block: control.policy_enforce, in: {rows: \"${read.rows}\", rules: [{id: 上限, condition: '金額 > 100000'}]}, out: {violations: v}}
";
    let req = PlanRunRequest {
        yaml: Some(yaml.into()),
        ..Default::default()
    };
    let res = crate::support::drive(&mut |_| {}, async |sink| {
        plan_run(&ctx, req, sink, &CancellationToken::new()).await
    })
    .unwrap();
    assert_eq!(res.status, keiri_run::RunStatus::Finished, "{res:?}");
    let expected = vec![RunWarning {
        node: "policy".into(),
        code: "MOSTLY_FLAGGED".into(),
        message:
            "3 行中 3 行（100%）がルール 上限 の違反になりました。列の指定や条件を確認してください"
                .into(),
    }];
    assert_eq!(res.warnings, expected);
    let got = run_get(
        &ctx,
        RunGetRequest {
            plan_id: "api_warn".into(),
            run_id: res.run_id.clone(),
        },
    )
    .unwrap();
    assert_eq!(got.warnings, expected);
    assert!(
        got.events
            .iter()
            .any(|e| e["event"] == "node_warning" && e["node"] == "policy"),
        "{:?}",
        got.events
    );
}

/// Runtime chat: a run of a plan with an open var (how a generated plan marks what only the
/// user can say) pauses at a `run_inputs` node inserted at its head, asking the plan's own
/// typed question (a CSV file); answered through run_resume by ids alone (as the window
/// does, from the run's recorded plan), it reads the file named. The plan text given is not
/// changed; a run that sets the var is not asked.
#[test]
fn a_run_of_a_plan_with_open_vars_asks_them_at_its_start() {
    let ws = tempfile::tempdir().unwrap();
    with_invoices(ws.path());
    let ctx = ctx(ws.path());
    let plan = "id: open_vars\nvars:\n  src: null\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: \"${vars.src}\"}\n    out: {rows: rows}\n";
    let res = crate::support::call(&ctx, "plan_run", serde_json::json!({"yaml": plan})).unwrap();
    assert_eq!(res["status"], "paused", "{res:#}");
    let paused = &res["paused"][0];
    assert_eq!(paused["node"], "run_inputs", "{res:#}");
    let field = &paused["question"]["fields"][0];
    assert_eq!(
        (&field["id"], &field["type"]),
        (&serde_json::json!("src"), &serde_json::json!("file")),
        "{res:#}"
    );
    assert_eq!(field["accept"], ".csv", "{res:#}");
    assert_eq!(
        res["nodes"].as_array().unwrap().len(),
        1,
        "read waits: {res:#}"
    );

    // A wrong answer fails the run, naming the field; resumed with the right one, it runs.
    let ids = |answer: serde_json::Value| {
        serde_json::json!({"run_id": res["run_id"], "plan_id": "open_vars",
                           "answers": {"run_inputs": answer}})
    };
    let refused = crate::support::call(
        &ctx,
        "run_resume",
        ids(serde_json::json!({"values": {"src": 3}})),
    )
    .unwrap();
    assert_eq!(refused["status"], "failed", "{refused:#}");
    assert_eq!(
        refused["failures"][0]["code"], "INPUT_INVALID",
        "{refused:#}"
    );
    assert!(
        refused["failures"][0]["message"]
            .as_str()
            .unwrap()
            .contains("src"),
        "{refused:#}"
    );
    let resumed = crate::support::call(
        &ctx,
        "run_resume",
        ids(serde_json::json!({"values": {"src": "inputs/請求書.csv"}})),
    )
    .unwrap();
    assert_eq!(resumed["status"], "finished", "{resumed:#}");
    let rows = crate::support::call(
        &ctx,
        "run_output",
        serde_json::json!({"plan_id": "open_vars", "run_id": res["run_id"], "node": "read"}),
    )
    .unwrap();
    assert_eq!(rows["outputs"]["rows"]["row_count"], 3, "{rows:#}");

    // Set for the run, nothing is asked.
    let res = crate::support::call(
        &ctx,
        "plan_run",
        serde_json::json!({"yaml": plan, "vars": {"src": "inputs/請求書.csv"}}),
    )
    .unwrap();
    assert_eq!(res["status"], "finished", "{res:#}");
    assert!(
        res["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["id"] != "run_inputs")
    );
}

#[test]
fn plan_run_streams_through_the_surface_and_run_output_previews_each_node() {
    let ws = tempfile::tempdir().unwrap();
    with_invoices(ws.path());
    let ctx = ctx(ws.path());
    let mut events = Vec::new();
    let res = crate::support::call_stream(
        &ctx,
        "plan_run",
        serde_json::json!({"yaml": CSV_PLAN}),
        &mut |e| events.push(e),
        &CancellationToken::new(),
    )
    .unwrap();
    assert_eq!(res["status"], "finished", "{res:#}");
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "run_start",
            "node_start",
            "node_finish",
            "node_start",
            "node_finish",
            "run_finish"
        ]
    );
    let ids = |node: &str, limit: Option<usize>| serde_json::json!({"plan_id": "api_csv", "run_id": res["run_id"], "node": node, "limit": limit});
    let out = crate::support::call(&ctx, "run_output", ids("pick", None)).unwrap();
    let rows = &out["outputs"]["rows"];
    assert_eq!(rows["kind"], "table");
    assert_eq!(rows["row_count"], 3);
    assert_eq!(rows["truncated"], false);
    let names: Vec<&str> = rows["columns"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["取引先", "金額"]);
    assert_eq!(rows["rows"][1]["取引先"], "ヤマダ商事");
    // A limit cuts the rows, not the count.
    let out = crate::support::call(&ctx, "run_output", ids("read", Some(1))).unwrap();
    assert_eq!(out["outputs"]["rows"]["rows"].as_array().unwrap().len(), 1);
    assert_eq!(out["outputs"]["rows"]["row_count"], 3);
    assert_eq!(out["outputs"]["rows"]["truncated"], true);
    // A node the plan does not have.
    let err = crate::support::call(&ctx, "run_output", ids("nope", None)).unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
}

/// A list the plan does not take is built only as far as the window shows it: run_output gives
/// its first rows with the real count, as it does for a big table kept in part.
#[test]
fn run_output_counts_every_item_of_a_list_the_plan_does_not_take() {
    let ws = tempfile::tempdir().unwrap();
    // 1,100 invoices each entered twice, five days apart: 1,100 clusters of two.
    let mut csv = String::from("請求書番号,取引先,金額,請求日\n");
    for i in 0..1100 {
        for (day, copy) in [(1, "a"), (6, "b")] {
            csv.push_str(&format!(
                "INV-{i}-{copy},株式会社取引先{i:04},{},2025-04-{day:02}\n",
                1000 + 13 * i
            ));
        }
    }
    std::fs::create_dir_all(ws.path().join("inputs")).unwrap();
    keiri_fs::write_atomic(&ws.path().join("inputs/請求書.csv"), csv.as_bytes()).unwrap();
    let ctx = ctx(ws.path());
    let yaml = "id: api_untaken
graph:
  - {id: read, block: csv.read, in: {path: inputs/請求書.csv}, out: {rows: rows}}
  - {id: detect, block: matching.duplicate_invoices, in: {rows: \"${read.rows}\", vendor_field: 取引先, amount_field: 金額, date_field: 請求日}, out: {duplicates: duplicates}}
";
    let res = crate::support::call_stream(
        &ctx,
        "plan_run",
        serde_json::json!({"yaml": yaml}),
        &mut |_| {},
        &CancellationToken::new(),
    )
    .unwrap();
    assert_eq!(res["status"], "finished", "{res:#}");
    let out = crate::support::call(
        &ctx,
        "run_output",
        serde_json::json!({"plan_id": "api_untaken", "run_id": res["run_id"], "node": "detect"}),
    )
    .unwrap();
    let clusters = &out["outputs"]["clusters"];
    assert_eq!(clusters["row_count"], 1100, "{clusters:#}");
    assert_eq!(clusters["truncated"], true);
    assert_eq!(clusters["rows"].as_array().unwrap().len(), 200);
    assert_eq!(clusters["rows"][0]["rows"][1]["請求書番号"], "INV-0-b");
    assert_eq!(out["outputs"]["duplicates"]["row_count"], 2200);
    assert_eq!(out["outputs"]["summary"]["value"]["cluster_count"], 1100);
}

#[test]
fn a_patched_workbook_shows_the_patch_s_own_change_among_its_neighbours() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/multi_sheet_ja.xlsx") {
        return;
    }
    // The patched copy is a new file of the outputs folder: against nothing, every cell
    // would look added. The grid shows what the patch changed in the source instead.
    let ws = tempfile::tempdir().unwrap();
    let src = keiri_testkit::shared_fixture("accounting/multi_sheet_ja.xlsx");
    std::fs::copy(&src, ws.path().join("book.xlsx")).unwrap();
    let ctx = ctx(ws.path());
    let plan = "id: api_patch\ngraph:\n  - id: patch\n    block: excel.patch_workbook\n    in:\n      xlsx_path: book.xlsx\n      operations:\n        - {op: set_value, sheet: 入力データ, cell: D2, value: 確認済}\n    out: {out_path: book}\n";
    let res = crate::support::call(&ctx, "plan_run", serde_json::json!({"yaml": plan})).unwrap();
    assert_eq!(res["status"], "finished", "{res:#}");
    let out = crate::support::call(
        &ctx,
        "run_output",
        serde_json::json!({"plan_id": "api_patch", "run_id": res["run_id"], "node": "patch"}),
    )
    .unwrap();
    let book = &out["workbook"];
    let diff = book["patch_diff"].as_array().unwrap();
    assert_eq!(diff.len(), 1, "{book:#}");
    assert_eq!(
        (&diff[0]["sheet"], &diff[0]["cell"], &diff[0]["status"]),
        (
            &Json::from("入力データ"),
            &Json::from("D2"),
            &Json::from("applied")
        )
    );
    assert_eq!(diff[0]["after"]["value"], "確認済");
    // The cells around it are read from the written copy, as the dry run shows them.
    let context = book["context"].as_array().unwrap();
    assert_eq!(context[0]["sheet"], "入力データ", "{book:#}");
    assert!(
        context[0]["cells"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["cell"] == "C2" && !c["value"].is_null()),
        "{book:#}"
    );
}

#[test]
fn run_output_shows_the_written_workbook_cell_by_cell_and_workbooks_compare() {
    let ws = tempfile::tempdir().unwrap();
    with_invoices(ws.path());
    let ctx = ctx(ws.path());
    let plan = format!(
        "{CSV_PLAN}  - {{id: report, block: excel.write_table, in: {{rows: \"${{pick.picked}}\", sheet_name: 請求, out_name: 請求一覧.xlsx}}, out: {{out_path: book}}}}\n"
    );
    let run = |plan: &str| {
        let res =
            crate::support::call(&ctx, "plan_run", serde_json::json!({"yaml": plan})).unwrap();
        assert_eq!(res["status"], "finished", "{res:#}");
        let out = crate::support::call(
            &ctx,
            "run_output",
            serde_json::json!({"plan_id": "api_csv", "run_id": res["run_id"], "node": "report"}),
        )
        .unwrap();
        out["workbook"].clone()
    };
    let book = run(&plan);
    let after = book["after"].as_str().unwrap().to_string();
    assert!(
        after.starts_with("runs/api_csv/") && after.ends_with("請求一覧.xlsx"),
        "{after}"
    );
    let cells: Vec<(String, Json)> = book["patch_diff"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                format!(
                    "{}!{}",
                    d["sheet"].as_str().unwrap(),
                    d["cell"].as_str().unwrap_or("-")
                ),
                d["after"]["value"].clone(),
            )
        })
        .collect();
    // A new workbook: its sheet is added, then every written cell, row by row.
    assert_eq!(cells[0], ("請求!-".to_string(), Json::from("請求")));
    assert!(
        cells.contains(&("請求!A1".to_string(), Json::from("取引先"))),
        "{cells:?}"
    );
    assert!(
        cells.contains(&("請求!B1".to_string(), Json::from("金額"))),
        "{cells:?}"
    );
    assert!(
        cells.contains(&("請求!A3".to_string(), Json::from("ヤマダ商事"))),
        "{cells:?}"
    );
    // csv.read keeps every cell as text (normalize_amounts makes numbers of amounts).
    assert!(
        cells.contains(&("請求!B4".to_string(), Json::from("1200"))),
        "{cells:?}"
    );
    assert_eq!(book["before"], Json::Null);

    // The same report after one amount changed: exactly that cell differs.
    keiri_fs::write_atomic(
        &ws.path().join("inputs/請求書.csv"),
        "請求書番号,取引先,金額\nINV-001,株式会社山田商事,10000\nINV-002,ヤマダ商事,5500\nINV-003,佐藤工業,1300\n".as_bytes(),
    )
    .unwrap();
    let second = run(&plan);
    let diff = crate::support::call(
        &ctx,
        "workbook_compare",
        serde_json::json!({"before": after, "after": second["after"]}),
    )
    .unwrap();
    let changed = diff["patch_diff"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "{diff:#}");
    assert_eq!(changed[0]["cell"], "B4");
    assert_eq!(changed[0]["before"]["value"], "1200");
    assert_eq!(changed[0]["after"]["value"], "1300");
    // With the cells around it as the new workbook holds them: the grid draws the vendor
    // beside the amount and the amount above it, not blanks.
    let context: Vec<(Json, Json)> = diff["context"][0]["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["cell"].clone(), c["value"].clone()))
        .collect();
    assert_eq!(diff["context"][0]["sheet"], "請求", "{diff:#}");
    for (cell, value) in [("A4", "佐藤工業"), ("B3", "5500"), ("B4", "1300")] {
        assert!(
            context.contains(&(Json::from(cell), Json::from(value))),
            "{cell} = {value} missing from {context:?}"
        );
    }
    // Outside the workspace is refused like every other path.
    let err = crate::support::call(
        &ctx,
        "workbook_compare",
        serde_json::json!({"after": "/etc/hostname"}),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::PathDenied);
}

#[test]
fn a_paused_run_is_listed_with_its_question_and_resumes_with_answers() {
    let ws = tempfile::tempdir().unwrap();
    with_invoices(ws.path());
    let ctx = ctx(ws.path());
    let plan = format!(
        "{CSV_PLAN}  - {{id: ok, block: ui.confirmation, in: {{message: 重複を確認しましたか}}, out: {{approved: approved}}}}\n  - {{id: after, block: transforms.select_columns, in: {{rows: \"${{pick.picked}}\", columns: [取引先]}}, when: {{expr: \"${{ok.approved}} == true\"}}}}\n"
    );
    let res = crate::support::call(
        &ctx,
        "plan_run",
        serde_json::json!({"yaml": plan, "inputs": {"invoices": "inputs/請求書.csv"}}),
    )
    .unwrap();
    assert_eq!(res["status"], "paused", "{res:#}");
    assert_eq!(res["paused"][0]["node"], "ok");
    assert_eq!(res["paused"][0]["question"]["kind"], "confirmation");
    assert_eq!(
        res["paused"][0]["question"]["message"],
        "重複を確認しましたか"
    );
    let ids = serde_json::json!({"plan_id": "api_csv", "run_id": res["run_id"]});
    // The pause is on disk: a new process (the app reopened) sees it.
    let got = crate::support::call(&ctx, "run_get", ids.clone()).unwrap();
    assert_eq!(got["status"], "paused");
    assert_eq!(got["paused"][0]["question"]["kind"], "confirmation");
    let listed =
        crate::support::call(&ctx, "run_list", serde_json::json!({"plan_id": "api_csv"})).unwrap();
    assert_eq!(listed["runs"][0]["status"], "paused");
    // The file it was given, for a rerun to start from.
    let given = listed["runs"][0]["vars"]["invoices"].as_str().unwrap();
    assert!(given.ends_with("inputs/請求書.csv"), "{given}");
    let mut events = Vec::new();
    let resumed = crate::support::call_stream(
        &ctx,
        "run_resume",
        serde_json::json!({"run_id": res["run_id"], "plan_id": "api_csv", "answers": {"ok": {"approved": true}}}),
        &mut |e| events.push(e),
        &CancellationToken::new(),
    )
    .unwrap();
    assert_eq!(resumed["status"], "finished", "{resumed:#}");
    assert_eq!(resumed["run_id"], res["run_id"]);
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(
        kinds,
        // `ok` has no inputs from other nodes, so it shared the first level with `read`:
        // the pause stopped the run before `pick`. Now `read` is reused, the rest runs.
        [
            "run_start",
            "node_reused",
            "node_start",
            "node_answered",
            "node_finish",
            "node_start",
            "node_finish",
            "node_start",
            "node_finish",
            "run_finish"
        ]
    );
    // The run says who answered the question, and when: the user the process runs as.
    let user = ["USER", "USERNAME", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "unknown".into());
    let answered = events
        .iter()
        .find(|e| e["event"] == "node_answered")
        .unwrap();
    assert_eq!(answered["node"], "ok");
    assert_eq!(answered["by"], user.as_str());
    let listed =
        crate::support::call(&ctx, "run_list", serde_json::json!({"plan_id": "api_csv"})).unwrap();
    let entry = &listed["runs"][0];
    assert_eq!(entry["answered"][0]["node"], "ok", "{entry:#}");
    assert_eq!(entry["answered"][0]["by"], user.as_str());
    assert!(entry["answered"][0]["at"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn a_run_s_workbook_is_applied_to_the_workspace_and_undone_byte_for_byte() {
    let ws = tempfile::tempdir().unwrap();
    with_invoices(ws.path());
    let ctx = ctx(ws.path());
    let plan = format!(
        "{CSV_PLAN}  - {{id: report, block: excel.write_table, in: {{rows: \"${{pick.picked}}\", sheet_name: 請求, out_dir: outputs, out_name: 請求一覧.xlsx}}, out: {{out_path: book}}}}\n"
    );
    let run = || {
        let res =
            crate::support::call(&ctx, "plan_run", serde_json::json!({"yaml": plan})).unwrap();
        assert_eq!(res["status"], "finished", "{res:#}");
        serde_json::json!({"plan_id": "api_csv", "run_id": res["run_id"], "node": "report"})
    };
    let target = ws.path().join("outputs/請求一覧.xlsx");
    // First run: nothing in the workspace yet; the grid is every written cell.
    let first = run();
    let out = crate::support::call(&ctx, "run_output", first.clone()).unwrap();
    assert_eq!(out["apply_to"], "outputs/請求一覧.xlsx");
    assert_eq!(out["apply_replaces"], false, "nothing is there to replace");
    assert_eq!(out["applied"], false);
    assert_eq!(out["workbook"]["before"], Json::Null);
    assert!(!target.exists(), "a run alone writes nothing outside runs/");
    let applied = crate::support::call(&ctx, "run_apply", first.clone()).unwrap();
    assert_eq!(applied["to"], "outputs/請求一覧.xlsx");
    assert_eq!(applied["existed"], false);
    let run_file = ws.path().join(out["workbook"]["after"].as_str().unwrap());
    assert_eq!(
        std::fs::read(&target).unwrap(),
        std::fs::read(&run_file).unwrap()
    );
    assert_eq!(
        crate::support::call(&ctx, "run_output", first.clone()).unwrap()["applied"],
        true
    );
    let again = crate::support::call(&ctx, "run_apply", first.clone()).unwrap_err();
    assert_eq!(again.code, ErrorCode::AlreadyExists);
    // The runs list says how long the run took and who wrote what from it, when.
    let list =
        crate::support::call(&ctx, "run_list", serde_json::json!({"plan_id": "api_csv"})).unwrap();
    let entry = list["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["run_id"] == first["run_id"])
        .unwrap()
        .clone();
    assert!(entry["duration_ms"].is_u64(), "{entry:#}");
    // …and the file it wrote in its run folder, the one applied.
    assert_eq!(
        entry["files"],
        serde_json::json!([{"node": "report", "path": out["workbook"]["after"]}])
    );
    let writes = entry["applied"].as_array().unwrap();
    assert_eq!(writes.len(), 1, "{entry:#}");
    assert_eq!(writes[0]["node"], "report");
    assert_eq!(writes[0]["to"], "outputs/請求一覧.xlsx");
    // The user the process runs as (the first of USER, USERNAME, LOGNAME that is set).
    let user = ["USER", "USERNAME", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "unknown".into());
    assert_eq!(writes[0]["by"], user.as_str());
    assert!(writes[0]["at"].as_str().unwrap().ends_with('Z'));
    let original = std::fs::read(&target).unwrap();

    // Second run after one amount changed: the grid compares with the workbook it would
    // replace, so exactly the changed cell shows.
    keiri_fs::write_atomic(
        &ws.path().join("inputs/請求書.csv"),
        "請求書番号,取引先,金額\nINV-001,株式会社山田商事,10000\nINV-002,ヤマダ商事,5500\nINV-003,佐藤工業,1300\n".as_bytes(),
    )
    .unwrap();
    let second = run();
    let out = crate::support::call(&ctx, "run_output", second.clone()).unwrap();
    assert_eq!(out["workbook"]["before"], "outputs/請求一覧.xlsx");
    assert_eq!(
        out["apply_replaces"], true,
        "the first run's file is there now"
    );
    let diff = out["workbook"]["patch_diff"].as_array().unwrap();
    assert_eq!(diff.len(), 1, "{diff:?}");
    assert_eq!(diff[0]["cell"], "B4");
    let applied = crate::support::call(&ctx, "run_apply", second.clone()).unwrap();
    assert_eq!(applied["existed"], true);
    assert_ne!(std::fs::read(&target).unwrap(), original);
    // Undo puts the earlier workbook back, byte for byte.
    let undone = crate::support::call(&ctx, "run_undo_apply", second.clone()).unwrap();
    assert_eq!(undone["restored"], true);
    assert_eq!(std::fs::read(&target).unwrap(), original);
    assert_eq!(
        crate::support::call(&ctx, "run_output", second.clone()).unwrap()["applied"],
        false
    );
    // A file someone changed after the apply is not undone.
    crate::support::call(&ctx, "run_apply", second.clone()).unwrap();
    keiri_fs::write_atomic(&target, b"edited by hand").unwrap();
    let err = crate::support::call(&ctx, "run_undo_apply", second.clone()).unwrap_err();
    assert_eq!(err.code, ErrorCode::ChangeConflict);
    assert_eq!(std::fs::read(&target).unwrap(), b"edited by hand");
    // The first run's apply made the file: undoing it (the file changed since) is refused
    // too, and a file written straight into the node's folder has nowhere to go.
    let err = crate::support::call(&ctx, "run_undo_apply", first).unwrap_err();
    assert_eq!(err.code, ErrorCode::ChangeConflict);
    let ids = serde_json::json!({"plan_id": "api_csv", "run_id": second["run_id"], "node": "pick"});
    let err = crate::support::call(&ctx, "run_apply", ids).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
}

/// A drafted plan that reads the invoices, reshapes them with `middle` (block, inputs, alias)
/// and picks `[column, also]` from the result: the skeleton and the wiring the fake model
/// answers with.
fn reshaping_draft(middle: (&str, Json, &str), column: &str, also: &str) -> (Json, Json) {
    let (block, inputs, alias) = middle;
    let skeleton = serde_json::json!({
        "reasoning": "CSVを読み、形を変え、必要な列を取り出す",
        "nodes": [
            {"id": "read", "block": "csv.read", "purpose": "請求書を読む", "repeat": null, "calls_plan": null},
            {"id": "shape", "block": block, "purpose": "形を変える", "repeat": null, "calls_plan": null},
            {"id": "pick", "block": "transforms.select_columns", "purpose": "列を取り出す", "repeat": null, "calls_plan": null},
        ],
        "questions": [],
    });
    let input =
        |key: &str, value: Json| serde_json::json!({"key": key, "value_json": value.to_string()});
    let mut shape_inputs = vec![input("rows", Json::from("${read.rows}"))];
    for (key, value) in inputs.as_object().unwrap() {
        shape_inputs.push(input(key, value.clone()));
    }
    let wiring = serde_json::json!({
        "reasoning": "接続",
        "policy": null, "node_policies": [], "ui_layout": [], "vars": [],
        "nodes": [
            {"id": "read", "block": "csv.read", "when": null,
             "inputs": [input("path", Json::from("inputs/請求書.csv"))],
             "outputs": [{"key": "rows", "alias": "rows"}]},
            {"id": "shape", "block": block, "when": null, "inputs": shape_inputs,
             "outputs": [{"key": "rows", "alias": alias}]},
            {"id": "pick", "block": "transforms.select_columns", "when": null,
             "inputs": [input("rows", Json::from(format!("${{shape.{alias}}}"))), input("columns", serde_json::json!([column, also]))],
             "outputs": [{"key": "rows", "alias": "picked"}]},
        ],
    });
    (skeleton, wiring)
}

/// Generates with the fake model answering `replies`, pinned to the three blocks, with the
/// invoices attached and verify-by-running on; returns the result and the requests made.
fn generate_reshaping(
    block: &str,
    replies: Vec<keiri_llm::testkit::Reply>,
) -> (Json, Vec<String>, tempfile::TempDir) {
    use keiri_llm::testkit::FakeServer;
    let (url, server) = FakeServer::start_background(replies).unwrap();
    let (ws, _config, ctx) = with_fake_llm(&url, "");
    let res = crate::support::call(
        &ctx,
        "plan_generate",
        serde_json::json!({
            "instruction": "請求書CSVの形を変えて必要な列を取り出す",
            "apply_mode": "llm-only",
            "pinned_blocks": ["csv.read", block, "transforms.select_columns"],
            "docs": ["inputs/請求書.csv"],
            "verify_by_running": true,
            "lang": "en",
        }),
    )
    .unwrap();
    let requests = server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    (res, requests, ws)
}

/// The codes of the issues of attempt `i`.
fn attempt_codes(res: &Json, i: usize) -> Vec<String> {
    res["attempts"][i]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["code"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_planner_repairs_what_fails_when_the_plan_runs_on_the_attached_file() {
    use keiri_llm::testkit::Reply;
    // A pivot's columns are the vendors in the file, known only when it runs: the first
    // wiring picks `山田商事`, which the file writes 株式会社山田商事, so only running it shows
    // that.
    let pivot = |column: &str| {
        reshaping_draft(
            (
                "transforms.pivot",
                serde_json::json!({"index": ["請求書番号"], "columns": "取引先", "values": "金額"}),
                "wide",
            ),
            column,
            "請求書番号",
        )
    };
    let (skeleton, first) = pivot("山田商事");
    let (_, second) = pivot("株式会社山田商事");
    let (res, requests, ws) = generate_reshaping(
        "transforms.pivot",
        vec![
            Reply::json_content(&skeleton),
            Reply::json_content(&first),
            Reply::json_content(&second),
        ],
    );
    assert_eq!(res["status"], "valid", "{res:#}");
    assert_eq!(res["attempts"].as_array().unwrap().len(), 2, "{res:#}");
    let codes = attempt_codes(&res, 0);
    assert!(
        codes.contains(&"run.column_not_found".to_string()),
        "{codes:?}"
    );
    // The repair request carried the run-time error and the columns the node read.
    assert_eq!(requests.len(), 3);
    let repair = &requests[2];
    assert!(repair.contains("run.column_not_found"), "{repair}");
    assert!(repair.contains("山田商事"), "{repair}");
    assert!(
        repair.contains("shape.wide: [請求書番号, 株式会社山田商事, ヤマダ商事, 佐藤工業]"),
        "{repair}"
    );
    assert!(res["yaml"].as_str().unwrap().contains("株式会社山田商事"));
    // The verification left no run behind.
    assert!(!ws.path().join(".keiri/verify-runs").exists());
    assert!(!ws.path().join("runs").exists());
}

#[test]
fn a_column_the_grouped_rows_lack_is_asked_before_anything_runs() {
    use keiri_llm::testkit::Reply;
    // A group's columns are its keys and its aggregates: `vendor` after grouping by 取引先
    // is the checker's finding, before a run, and a question offering the grouped rows'
    // columns (取引先 proposed: it means the vendor), not a run-time failure to repair.
    let (skeleton, wiring) = reshaping_draft(
        (
            "transforms.group_aggregate",
            serde_json::json!({"by": ["取引先"], "aggregations": [{"field": "金額", "op": "sum", "as": "合計"}]}),
            "totals",
        ),
        "vendor",
        "合計",
    );
    let (res, requests, ws) = generate_reshaping(
        "transforms.group_aggregate",
        vec![Reply::json_content(&skeleton), Reply::json_content(&wiring)],
    );
    assert_eq!(res["status"], "needs_answers", "{res:#}");
    assert_eq!(requests.len(), 2, "no repair asked of the model");
    let codes = attempt_codes(&res, 0);
    assert!(codes.contains(&"column.unknown".to_string()), "{codes:?}");
    assert!(!codes.iter().any(|c| c.starts_with("run.")), "{codes:?}");
    let question = &res["requirements"][0];
    assert_eq!(question["target"]["node_id"], "pick");
    assert_eq!(question["options"], serde_json::json!(["取引先", "合計"]));
    assert_eq!(question["default"], "取引先");
    let error = &res["errors"][0];
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("the output of shape (from inputs/請求書.csv)"),
        "{error}"
    );
    assert!(!ws.path().join("runs").exists());
}

/// A workspace with the invoices whose `.env` points the planner at the fake model at `url`
/// (then the `extra` lines), and its context with a settings folder of its own.
fn with_fake_llm(url: &str, extra: &str) -> (tempfile::TempDir, tempfile::TempDir, Context) {
    let ws = tempfile::tempdir().unwrap();
    with_invoices(ws.path());
    keiri_fs::write_atomic(
        &ws.path().join(".env"),
        format!("KEIRI_LLM_BASE_URL={url}\nKEIRI_LLM_MAX_RETRIES=0\n{extra}").as_bytes(),
    )
    .unwrap();
    let config = tempfile::tempdir().unwrap();
    let ctx = ctx(ws.path()).with_config_dir(config.path().to_path_buf());
    (ws, config, ctx)
}

/// A hostile model (steered, say, by text inside an attached document) drafts a plan that reads
/// a workspace file the user did not attach, the workspace's `.env` or a file outside the
/// workspace, followed by a node that fails on what it read. Verify-by-running reads none of
/// them, so nothing of any of them reaches the model's requests.
#[test]
fn a_hostile_plan_gets_nothing_back_from_verify_by_running() {
    use keiri_llm::testkit::{FakeServer, Reply};
    let outside = tempfile::tempdir().unwrap();
    let outside_file = outside.path().join("secret.csv");
    keiri_fs::write_atomic(&outside_file, "outside-marker-51c2,x\n1,2\n".as_bytes()).unwrap();
    let outside_path = outside_file.to_string_lossy().into_owned();
    let skeleton = serde_json::json!({
        "reasoning": "読む",
        "nodes": [
            {"id": "read", "block": "csv.read", "purpose": "読む", "repeat": null, "calls_plan": null},
            {"id": "pick", "block": "transforms.select_columns", "purpose": "選ぶ", "repeat": null, "calls_plan": null},
        ],
        "questions": [],
    });
    let input =
        |key: &str, value: Json| serde_json::json!({"key": key, "value_json": value.to_string()});
    let wiring = |path: &str| {
        serde_json::json!({
            "reasoning": "接続", "policy": null, "node_policies": [], "ui_layout": [], "vars": [],
            "nodes": [
                {"id": "read", "block": "csv.read", "when": null,
                 "inputs": [input("path", Json::from(path))],
                 "outputs": [{"key": "rows", "alias": "rows"}]},
                {"id": "pick", "block": "transforms.select_columns", "when": null,
                 "inputs": [input("rows", Json::from("${read.rows}")), input("columns", serde_json::json!(["vendor"]))],
                 "outputs": [{"key": "rows", "alias": "picked"}]},
            ],
        })
    };
    for path in ["inputs/給与.csv", ".env", outside_path.as_str()] {
        // Replies enough for repairs: a verifier that read the file would send its header back.
        let (url, server) = FakeServer::start_background(vec![
            Reply::json_content(&skeleton),
            Reply::json_content(&wiring(path)),
            Reply::json_content(&wiring(path)),
            Reply::json_content(&wiring(path)),
        ])
        .unwrap();
        let (ws, _config, ctx) = with_fake_llm(&url, "DOTENV_MARKER=dotenv-marker-9e4b\n");
        keiri_fs::write_atomic(
            &ws.path().join("inputs/給与.csv"),
            "社員,unattached-marker-77d0\n山田,420000\n".as_bytes(),
        )
        .unwrap();
        let res = crate::support::call(
            &ctx,
            "plan_generate",
            serde_json::json!({
                "instruction": "請求書CSVから取引先の列を取り出す",
                "apply_mode": "llm-only",
                "pinned_blocks": ["csv.read", "transforms.select_columns"],
                "docs": ["inputs/請求書.csv"],
                "verify_by_running": true,
                "max_repair": 2,
                "lang": "en",
            }),
        );
        let requests = server.requests();
        assert!(requests.len() >= 2, "{path}: {res:?}");
        for request in &requests {
            let body = request.body.to_string();
            for marker in [
                "dotenv-marker-9e4b",
                "outside-marker-51c2",
                "unattached-marker-77d0",
                "420000",
            ] {
                assert!(
                    !body.contains(marker),
                    "{path}: {marker} reached the model: {body}"
                );
            }
        }
        assert!(!ws.path().join(".keiri/verify-runs").exists());
    }
}

/// Verify-by-running with nothing attached reads nothing, and says so rather than passing in
/// silence.
#[test]
fn verify_by_running_without_attachments_says_it_ran_nothing() {
    let ws = tempfile::tempdir().unwrap();
    with_invoices(ws.path());
    let ctx = ctx(ws.path());
    let body = |verify: bool| {
        serde_json::json!({
            "instruction": "請求書CSVから重複を検出する",
            "apply_mode": "compose",
            "templates": ["invoice_duplicate_detection"],
            "verify_by_running": verify,
            "lang": "en",
        })
    };
    let note = "verify-by-running ran nothing: no file is attached (a verification run reads only the attached files)";
    let res = crate::support::call(&ctx, "plan_generate", body(true)).unwrap();
    let notes = res["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n == note), "{notes:?}");
    let res = crate::support::call(&ctx, "plan_generate", body(false)).unwrap();
    let notes = res["notes"].as_array().unwrap();
    assert!(!notes.iter().any(|n| n == note), "{notes:?}");
}

#[test]
fn write_is_refused_over_the_api_and_allowed_to_the_cli() {
    let ws = tempfile::tempdir().unwrap();
    with_invoices(ws.path());
    let mut ctx = ctx(ws.path());
    let body = serde_json::json!({"yaml": CSV_PLAN, "write": true});
    let err = crate::support::call(&ctx, "plan_run", body.clone()).unwrap_err();
    assert_eq!(err.code, ErrorCode::PathDenied);
    assert!(!ws.path().join("runs").exists());
    ctx.trust_arguments = true;
    let res = crate::support::call(&ctx, "plan_run", body).unwrap();
    assert_eq!(res["status"], "finished");
}

/// Reads the file up to 100,000 times: far longer than a cancellation takes to arrive.
const LONG_PLAN: &str = "id: api_long
graph:
  - id: again
    type: loop
    while: {condition: {expr: \"${vars.iteration} >= 0\"}, max_iterations: 100000}
    body: {plan: {id: b, graph: [{id: read, block: csv.read, in: {path: inputs/請求書.csv}, out: {rows: rows}}]}}
";

#[test]
fn run_cancel_stops_a_run_in_progress() {
    let ws = tempfile::tempdir().unwrap();
    with_invoices(ws.path());
    let ctx = ctx(ws.path());
    let plan = LONG_PLAN;
    let mut cancelled = None;
    let res = crate::support::call_stream(
        &ctx,
        "plan_run",
        serde_json::json!({"yaml": plan}),
        &mut |e| {
            if e["event"] == "run_start" {
                let run_id = e["run_id"].as_str().unwrap_or_default().to_string();
                cancelled = Some(run_cancel(&ctx, RunCancelRequest { run_id }).unwrap());
            }
        },
        &CancellationToken::new(),
    )
    .unwrap();
    assert_eq!(cancelled.map(|c| c.cancelled), Some(true));
    assert_eq!(res["status"], "cancelled", "{res:#}");
    // The run is over: there is nothing left to cancel.
    let again = run_cancel(
        &ctx,
        RunCancelRequest {
            run_id: res["run_id"].as_str().unwrap().into(),
        },
    )
    .unwrap();
    assert!(!again.cancelled);
}

/// A front-end that stops awaiting a run (an HTTP client gone, a plain call dropped) stops
/// the run itself, not only its own wait: the blocks do not go on in the background, and nobody
/// calls `run_cancel`.
#[test]
fn dropping_a_run_call_stops_the_run() {
    let ws = tempfile::tempdir().unwrap();
    with_invoices(ws.path());
    let ctx = ctx(ws.path());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let run_id = runtime.block_on(async {
        let (tx, mut started) = tokio::sync::mpsc::unbounded_channel::<String>();
        let sink = EventSink::new(move |e: keiri_run::Event| {
            let e = serde_json::to_value(e).unwrap_or_default();
            if e["event"] == "run_start" {
                let _ = tx.send(e["run_id"].as_str().unwrap_or_default().to_string());
            }
        });
        let req = PlanRunRequest {
            yaml: Some(LONG_PLAN.into()),
            ..Default::default()
        };
        let cancel = CancellationToken::new();
        tokio::select! {
            res = plan_run(&ctx, req, &sink, &cancel) => panic!("the run ended first: {res:?}"),
            id = started.recv() => id.unwrap(),
        }
    });
    // The call is dropped. Bounded, so a regression fails here instead of waiting out 100,000
    // iterations.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let got = run_get(
            &ctx,
            RunGetRequest {
                plan_id: "api_long".into(),
                run_id: run_id.clone(),
            },
        )
        .unwrap();
        if got.status != keiri_run::RunStatus::Running {
            assert_eq!(got.status, keiri_run::RunStatus::Cancelled);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the run went on after its call was dropped"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn errors_have_codes() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = ctx(ws.path());
    let err = run_get(
        &ctx,
        RunGetRequest {
            plan_id: "x".into(),
            run_id: "20990101T000000000Z-000000".into(),
        },
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::RunNotFound);
    let err = run_get(
        &ctx,
        RunGetRequest {
            plan_id: "x".into(),
            run_id: "../x".into(),
        },
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
    let invalid = PlanRunRequest {
        yaml: Some("id: bad\ngraph:\n  - {id: a, block: no.such_block}\n".into()),
        ..Default::default()
    };
    let err = crate::support::drive(&mut |_| {}, async |sink| {
        plan_run(&ctx, invalid, sink, &CancellationToken::new()).await
    })
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::PlanInvalid);
    assert_eq!(
        parse_vars("a: 1\nb: [x]\n").unwrap()["b"],
        serde_json::json!(["x"])
    );
    assert_eq!(
        parse_vars("- 1\n").unwrap_err().code,
        ErrorCode::InvalidRequest
    );
}
