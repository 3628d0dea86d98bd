//! `keiri generate`: offline compose end to end, and a clear error when a mode needs an LLM.

use serde_json::Value;

use super::{keiri, put};

use super::LLM_ENV as LLM_VARS;

fn generate(ws: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = keiri(ws);
    for v in LLM_VARS {
        cmd.env_remove(v);
    }
    cmd.args([
        "--json",
        "generate",
        "--instruction",
        "請求書CSVから重複を検出してレポートにする",
    ]);
    cmd
}

#[test]
fn compose_asks_then_registers_a_valid_plan() {
    let ws = tempfile::tempdir().unwrap();
    let out = generate(ws.path())
        .args([
            "--apply-mode",
            "compose",
            "--templates",
            "invoice_duplicate_detection",
        ])
        .assert()
        .code(1);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["result"]["status"], "needs_answers");
    let questions: Vec<&str> = v["result"]["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(questions.contains(&"invoice_csv"), "{questions:?}");
    // Among the notes (compose may also say which part of the instruction it could not
    // serve): the offline composition's note about AI, in the request's language.
    let notes = v["result"]["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("AIを使わずにテンプレートから合成しました")),
        "{notes:?}"
    );

    let answers: serde_json::Map<String, Value> = questions
        .iter()
        .map(|q| (q.to_string(), Value::String("invoices.csv".into())))
        .collect();
    let answers_file = ws.path().join("answers.json");
    put(&answers_file, &serde_json::to_string(&answers).unwrap());
    let out = generate(ws.path())
        .args([
            "--apply-mode",
            "compose",
            "--templates",
            "invoice_duplicate_detection",
        ])
        .arg("--answers")
        .arg(&answers_file)
        .arg("--register")
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["result"]["status"], "valid");
    let path = v["registered"]["path"].as_str().unwrap();
    let saved = std::fs::read_to_string(path).unwrap();
    assert!(saved.contains("invoice_duplicate_detection__"), "{saved}");
}

/// A first generation without a key composes a plan from templates, and says why, instead
/// of failing because the default mode needs a model.
#[test]
fn without_a_model_and_without_a_mode_the_plan_is_composed_and_it_says_so() {
    let ws = tempfile::tempdir().unwrap();
    // Exit 1: the composed plan has questions (the CSV to read, where to notify).
    let out = generate(ws.path()).assert().code(1);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let result = &v["result"];
    assert_eq!(result["status"], "needs_answers", "{v:#}");
    assert!(
        result["plan"]["graph"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["block"] == "matching.duplicate_invoices"),
        "{v:#}"
    );
    assert!(
        result["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("AIが設定されていないため、テンプレート合成で作りました"),
        "{v:#}"
    );
    // Asked for by name, a mode that needs a model still says what to configure.
    let out = generate(ws.path())
        .args(["--apply-mode", "hint"])
        .assert()
        .code(2);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["code"], "LLM_NOT_CONFIGURED");
}

#[test]
fn a_mode_that_needs_an_llm_names_the_env_vars() {
    let ws = tempfile::tempdir().unwrap();
    let out = generate(ws.path())
        .args(["--apply-mode", "llm-only"])
        .assert()
        .code(2);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["code"], "LLM_NOT_CONFIGURED");
    assert!(
        v["message"].as_str().unwrap().contains("OPENAI_API_KEY"),
        "{v}"
    );
}

/// A base URL on loopback where nothing listens: every connection is refused at once.
fn unreachable_llm() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

#[test]
fn unreachable_llm_falls_back_only_with_the_flag() {
    let ws = tempfile::tempdir().unwrap();
    let url = unreachable_llm();
    let with = |cmd: &mut assert_cmd::Command| {
        cmd.env("KEIRI_LLM_BASE_URL", &url)
            .env("KEIRI_LLM_MAX_RETRIES", "0")
            .env("KEIRI_LLM_TIMEOUT_SECS", "5")
            .args(["--apply-mode", "hint"]);
    };

    let mut cmd = generate(ws.path());
    with(&mut cmd);
    let out = cmd.assert().code(2);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert!(v["code"].as_str().unwrap().starts_with("LLM_"), "{v}");

    let mut cmd = generate(ws.path());
    with(&mut cmd);
    let out = cmd.env("KEIRI_AGENT_LLM_FALLBACK", "1").assert().success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["result"]["status"], "fallback", "{v}");
    assert_eq!(v["result"]["fallback"], true);
    let why = v["result"]["notes"][0].as_str().unwrap();
    assert!(
        why.starts_with("FALLBACK PLAN") && why.contains("LLM_"),
        "{why}"
    );
    assert!(
        v["result"]["templates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "invoice_duplicate_detection"),
        "{v}"
    );
}

/// `--out` writes whatever plan comes back: a fallback plan (marked) into a folder that did not
/// exist, a plan that needs answers with its questions; a file already there is refused before
/// any model call.
#[test]
fn out_writes_every_plan_that_comes_back_and_never_over_a_file() {
    let ws = tempfile::tempdir().unwrap();
    let url = unreachable_llm();
    let out = ws.path().join("new/dir/plan.yaml");
    let res = generate(ws.path())
        .env("KEIRI_LLM_BASE_URL", &url)
        .env("KEIRI_LLM_MAX_RETRIES", "0")
        .env("KEIRI_LLM_TIMEOUT_SECS", "5")
        .args(["--apply-mode", "hint", "--fallback", "1", "--out"])
        .arg(&out)
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&res.get_output().stdout).unwrap();
    assert_eq!(v["result"]["status"], "fallback", "{v}");
    assert_eq!(v["wrote"], out.display().to_string());
    let written = std::fs::read_to_string(&out).unwrap();
    // Headed by why, as the first note says it (the model could not be reached).
    let why = v["result"]["notes"][0].as_str().unwrap();
    assert!(
        written.starts_with(&format!("# {why}\n# Review it before running it.\n")),
        "{written}"
    );
    assert!(why.contains("LLM_") && !why.contains("  "), "{why}");
    assert!(written.ends_with(v["result"]["yaml"].as_str().unwrap()));
    // The header is a comment: the file is a plan `keiri validate` reads.
    keiri(ws.path())
        .arg("validate")
        .arg(&out)
        .assert()
        .code(predicates::ord::ne(2));

    // A plan that needs answers: written with its questions.
    let asks = ws.path().join("asks.yaml");
    generate(ws.path())
        .args([
            "--apply-mode",
            "compose",
            "--templates",
            "invoice_duplicate_detection",
            "--out",
        ])
        .arg(&asks)
        .assert()
        .code(1);
    let written = std::fs::read_to_string(&asks).unwrap();
    assert!(written.starts_with("# NEEDS ANSWERS:"), "{written}");
    assert!(written.contains("#   - invoice_csv ("), "{written}");

    // The file exists now: refused before the model is called (no server answers here, and
    // an unreachable one would fail with LLM_ rather than name the file).
    let res = generate(ws.path())
        .env("KEIRI_LLM_BASE_URL", &url)
        .args(["--apply-mode", "hint", "--out"])
        .arg(&asks)
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&res.get_output().stderr).into_owned();
    assert!(stderr.contains("exists already"), "{stderr}");
    assert!(!stderr.contains("LLM_"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&asks).unwrap(), written);
}

/// The issue's acceptance journey: a plan composed from the shipped templates runs on the
/// repository's sample data, writes the report workbook under its run directory, and leaves
/// the input byte-identical.
#[test]
fn a_composed_plan_runs_on_the_samples_and_writes_the_report_in_its_run_folder() {
    let ws = tempfile::tempdir().unwrap();
    let sample =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/invoices.csv");
    let original = std::fs::read(&sample).unwrap();
    std::fs::create_dir_all(ws.path().join("samples")).unwrap();
    std::fs::copy(&sample, ws.path().join("samples/invoices.csv")).unwrap();
    put(
        &ws.path().join("answers.json"),
        r#"{"invoice_csv": "samples/invoices.csv", "notify_channel": "file", "notify_to": "keiri@example.co.jp"}"#,
    );
    let out = generate(ws.path())
        .args([
            "--apply-mode",
            "compose",
            "--templates",
            "invoice_duplicate_detection,exception_report",
            "--plan-id",
            "duplicate_report",
        ])
        .arg("--answers")
        .arg(ws.path().join("answers.json"))
        .arg("--out")
        .arg(ws.path().join("plan.yaml"))
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["result"]["status"], "valid", "{v:#}");
    // The report asks before it notifies: the answer comes from a file here.
    put(
        &ws.path().join("confirm.yaml"),
        "exception_report__confirm: {approved: true}\n",
    );
    let out = keiri(ws.path())
        .args(["--json", "run", "plan.yaml", "--answers", "confirm.yaml"])
        .assert()
        .code(0);
    let res: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(res["status"], "finished", "{res:#}");
    let run_dir = ws.path().join(res["run_dir"].as_str().unwrap());
    assert!(run_dir.starts_with(ws.path().join("runs/duplicate_report")));
    let report = run_dir.join("files/exception_report__write/outputs/exception_report.xlsx");
    assert!(report.is_file(), "{}", report.display());
    assert_eq!(
        std::fs::read(ws.path().join("samples/invoices.csv")).unwrap(),
        original
    );
    // The run wrote nothing outside runs/ (`logs/` is the generation's event log).
    let mut top: Vec<String> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    top.sort();
    assert_eq!(
        top,
        [
            "answers.json",
            "confirm.yaml",
            "logs",
            "plan.yaml",
            "runs",
            "samples"
        ]
    );
}

/// A job no template does gets `no_fit`, not an unrelated plan: the reason, the nearest
/// templates and blocks, exit 1, and no file written for `--out` (there is no plan).
#[test]
fn a_job_no_template_does_is_no_fit_and_writes_nothing() {
    let ws = tempfile::tempdir().unwrap();
    let mut cmd = keiri(ws.path());
    for v in LLM_VARS {
        cmd.env_remove(v);
    }
    let out_path = ws.path().join("plans").join("variance.yaml");
    let out = cmd
        .args([
            "--json",
            "--lang",
            "en",
            "generate",
            "--apply-mode",
            "compose",
            "--instruction",
            "固定資産台帳から今月の減価償却費を計算して仕訳を作る",
            "--out",
        ])
        .arg(&out_path)
        .assert()
        .code(1);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let result = &v["result"];
    assert_eq!(result["status"], "no_fit", "{result}");
    assert_eq!(result["templates"], serde_json::json!([]));
    assert_eq!(result["composition"], Value::Null);
    assert_eq!(result["plan"]["graph"], serde_json::json!([]));
    assert!(
        result["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("no template does the job"),
        "{result}"
    );
    let nearest: Vec<&str> = result["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        nearest.iter().any(|s| s.starts_with("template ")),
        "{nearest:?}"
    );
    assert!(
        nearest.iter().any(|s| s.starts_with("block ")),
        "{nearest:?}"
    );
    assert_eq!(v["wrote"], Value::Null);
    assert!(!out_path.exists());
}

/// The text output says which templates it used, in one line, before the questions.
#[test]
fn the_composition_is_shown_in_one_line() {
    let ws = tempfile::tempdir().unwrap();
    let mut cmd = keiri(ws.path());
    for v in LLM_VARS {
        cmd.env_remove(v);
    }
    let out = cmd
        .args([
            "--lang",
            "ja",
            "generate",
            "--apply-mode",
            "compose",
            "--instruction",
            "請求書CSVから重複を検出してExcelレポートにする",
        ])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(
        stderr.contains("「請求書の重複検出」＋「例外レポートの作成と通知」を使います"),
        "{stderr}"
    );
}

/// The offline path on an export it has never seen: Japanese headers (請求番号, 取引先名,
/// 請求日付, 請求金額（税込）), a BOM, CRLF and trailing blank lines. With nothing answered the
/// attached CSV is the file to read, every template column is fitted to the header that means
/// the same, the Excel file asked for is a plain workbook step, and the run finds the
/// duplicates worked out by hand: rows 1+2 (INV-0412, 山田商事, ¥110,000 twice) and rows 4+5
/// (0415-77 / 041577, 佐藤運輸, 88,000 a day apart): 2 groups, 4 rows, 198,000 at risk.
#[test]
fn an_unseen_invoice_export_is_fitted_by_meaning_and_its_duplicates_are_found() {
    let ws = workspace_with_export("invoices_renamed.csv", "請求書一覧.csv");
    let mut cmd = keiri(ws.path());
    for v in LLM_VARS {
        cmd.env_remove(v);
    }
    let out = cmd
        .args([
            "--json",
            "--lang",
            "ja",
            "generate",
            "--apply-mode",
            "compose",
            "--plan-id",
            "invoice_duplicates",
            "--instruction",
            "請求書CSVから重複を検出してExcelに出力する",
            "--docs",
            "inputs/請求書一覧.csv",
            "--out",
        ])
        .arg(ws.path().join("plan.yaml"))
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let result = &v["result"];
    assert_eq!(result["status"], "valid", "{result:#}");
    assert_eq!(result["requirements"], serde_json::json!([]));
    assert_eq!(result["composition"], "「請求書の重複検出」を使います");
    let notes: Vec<&str> = result["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    for expected in [
        "「請求書一覧のCSVファイル」には添付のファイル inputs/請求書一覧.csv を使います",
        "列「vendor」には、同じ意味のファイルの見出し「取引先名」を使います",
        "列「invoice_date」には、同じ意味のファイルの見出し「請求日付」を使います",
        "列「amount」には、同じ意味のファイルの見出し「請求金額（税込）」を使います",
        "列「invoice_no」には、同じ意味のファイルの見出し「請求番号」を使います",
        "結果の行を outputs/invoice_duplicates.xlsx に書き出す手順 excel_output を加えました",
    ] {
        assert!(
            notes.iter().any(|n| n.contains(expected)),
            "{expected}: {notes:#?}"
        );
    }

    let (_, run_dir) = run_plan(&ws);
    let read = |rel: &str| -> Value {
        serde_json::from_slice(&std::fs::read(run_dir.join(rel)).unwrap()).unwrap()
    };
    let summary = read("outputs/invoice_duplicate_detection__detect/summary.json");
    assert_eq!(summary["cluster_count"], 2, "{summary}");
    assert_eq!(summary["row_count"], 4, "{summary}");
    assert_eq!(summary["amount_at_risk"], 198000, "{summary}");
    // A table (Arrow) in the run: read through the API.
    let duplicates = shown_rows(
        ws.path(),
        &run_dir,
        "invoice_duplicate_detection__detect",
        "duplicates",
    );
    let mut numbers: Vec<&str> = duplicates
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["請求番号"].as_str().unwrap())
        .collect();
    numbers.sort_unstable();
    assert_eq!(numbers, ["0415-77", "041577", "INV-0412", "INV-0412"]);
    // The workbook asked for holds the duplicate rows.
    assert_eq!(read("outputs/excel_output/row_count.json"), 4);
    assert!(
        run_dir
            .join("files/excel_output/outputs/invoice_duplicates.xlsx")
            .is_file()
    );
}

/// The same job on an export with no date column at all (#33): the one question about the
/// template's invoice_date (read by the date normaliser and the detector) proposes leaving it
/// out; with that default accepted the plan compares without dates, says so in its
/// description and in a run warning, and finds the duplicates worked out by hand: INV-0412
/// twice and 0415-77 / 041577 (the same number once the hyphen is dropped), 198,000 at risk;
/// C-9001 and C-9002 (the same vendor and amount, a month apart) have different numbers and
/// are not paired.
#[test]
fn an_invoice_export_without_dates_is_checked_without_them_and_says_so() {
    let ws = workspace_with_export("invoices_without_dates.csv", "請求書一覧.csv");
    let generate = |answers: Option<&str>| {
        compose(
            &ws,
            "invoice_duplicates",
            "請求書CSVから重複を検出してExcelに出力する",
            "inputs/請求書一覧.csv",
            answers,
        )
    };
    let asked = generate(None);
    assert_eq!(asked["status"], "needs_answers", "{asked:#}");
    let questions = asked["requirements"].as_array().unwrap();
    assert_eq!(questions.len(), 1, "{questions:#?}");
    let date = &questions[0];
    // keiri-plan's NO_COLUMN, the last choice, proposed: no header means a date.
    const NO_COLUMN: &str = "（ファイルにない：この列を使わない）";
    assert_eq!(date["default"], NO_COLUMN, "{date:#}");
    assert_eq!(
        date["options"].as_array().unwrap().last().unwrap(),
        NO_COLUMN
    );
    // The defaults, accepted as they are.
    let defaults: serde_json::Map<String, Value> = questions
        .iter()
        .map(|q| (q["id"].as_str().unwrap().to_string(), q["default"].clone()))
        .collect();
    let answered = generate(Some(&Value::Object(defaults).to_string()));
    assert_eq!(answered["status"], "valid", "{answered:#}");
    let plan = std::fs::read_to_string(ws.path().join("plan.yaml")).unwrap();
    assert!(plan.contains("date_field: ''"), "{plan}");
    assert!(
        plan.contains("inputs left out for columns the file lacks: invoice_duplicate_detection__dates.fields, invoice_duplicate_detection__detect.date_field"),
        "{plan}"
    );

    let (res, run_dir) = run_plan(&ws);
    let warnings: Vec<&str> = res["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["code"].as_str())
        .collect();
    assert_eq!(warnings, ["WITHOUT_COLUMN"], "{res:#}");
    let read = |rel: &str| -> Value {
        serde_json::from_slice(&std::fs::read(run_dir.join(rel)).unwrap()).unwrap()
    };
    let summary = read("outputs/invoice_duplicate_detection__detect/summary.json");
    assert_eq!(summary["cluster_count"], 2, "{summary}");
    assert_eq!(summary["row_count"], 4, "{summary}");
    assert_eq!(summary["amount_at_risk"], 198000, "{summary}");
    // A table (Arrow) in the run: read through the API.
    let duplicates = shown_rows(
        ws.path(),
        &run_dir,
        "invoice_duplicate_detection__detect",
        "duplicates",
    );
    let found: Vec<(&str, &str)> = duplicates
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["請求番号"].as_str().unwrap(),
                r["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("INV-0412", "same_invoice_no"),
            ("INV-0412", "same_invoice_no"),
            ("0415-77", "same_invoice_no"),
            ("041577", "same_invoice_no"),
        ]
    );
}

/// `keiri --json generate --apply-mode compose` without an LLM for `instruction` on the
/// attached `doc`; with `answers` (a JSON object) it answers and writes `plan.yaml`. The
/// generation's `result`.
pub(super) fn compose(
    ws: &tempfile::TempDir,
    plan_id: &str,
    instruction: &str,
    doc: &str,
    answers: Option<&str>,
) -> Value {
    compose_docs(ws, plan_id, instruction, &[doc], answers)
}

/// [`compose`] with several attached files.
pub(super) fn compose_docs(
    ws: &tempfile::TempDir,
    plan_id: &str,
    instruction: &str,
    docs: &[&str],
    answers: Option<&str>,
) -> Value {
    let mut cmd = keiri(ws.path());
    for v in LLM_VARS {
        cmd.env_remove(v);
    }
    cmd.args([
        "--json",
        "--lang",
        "ja",
        "generate",
        "--apply-mode",
        "compose",
    ])
    .args(["--plan-id", plan_id, "--instruction", instruction]);
    for doc in docs {
        cmd.args(["--docs", doc]);
    }
    if let Some(answers) = answers {
        put(&ws.path().join("answers.json"), answers);
        cmd.arg("--answers")
            .arg(ws.path().join("answers.json"))
            .arg("--out")
            .arg(ws.path().join("plan.yaml"));
    }
    let out = cmd.output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    v["result"].clone()
}

/// `keiri --json run plan.yaml` in `ws`, which must finish with exit 0: its answer and its run
/// folder.
pub(super) fn run_plan(ws: &tempfile::TempDir) -> (Value, std::path::PathBuf) {
    let out = keiri(ws.path())
        .args(["--json", "run", "plan.yaml"])
        .assert()
        .code(0);
    let res: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(res["status"], "finished", "{res:#}");
    let run_dir = ws.path().join(res["run_dir"].as_str().unwrap());
    (res, run_dir)
}

/// The rows of table output `key` of `node` in the run at `run_dir` (`runs/<plan_id>/<run_id>`
/// of the workspace `ws`), read through the API as the window reads them.
fn shown_rows(ws: &std::path::Path, run_dir: &std::path::Path, node: &str, key: &str) -> Value {
    let name = |p: &std::path::Path| p.file_name().unwrap().to_string_lossy().into_owned();
    let shown = keiri_api::run_output(
        &keiri_api::Context::new(ws),
        keiri_api::RunOutputRequest {
            plan_id: name(run_dir.parent().unwrap()),
            run_id: name(run_dir),
            node: node.into(),
            limit: Some(1000),
        },
    )
    .unwrap();
    let rows = shown.outputs[key]["rows"].clone();
    assert!(rows.is_array(), "{node}.{key}: {:#}", shown.outputs[key]);
    rows
}

/// A workspace whose `inputs/<name>` is the messy export `evals/offline/<export>`.
fn workspace_with_export(export: &str, name: &str) -> tempfile::TempDir {
    workspace_with(&format!("evals/offline/{export}"), name)
}

/// A workspace whose `inputs/<name>` is the repository's file `from` (`samples/…`).
pub(super) fn workspace_with(from: &str, name: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(from);
    std::fs::create_dir_all(ws.path().join("inputs")).unwrap();
    std::fs::copy(&from, ws.path().join("inputs").join(name)).unwrap();
    ws
}

/// A purchase-order export under its own headers, checked against the purchasing rules without
/// an LLM. The rule expressions read the template's columns: those of one meaning (発注日,
/// 納期, 金額, 発注者, 見積件数) are written into the expressions in place, and the approver
/// column, which no dictionary can vouch for (決裁欄), is asked once for the three expressions
/// that read it. The run finds the violations worked out by hand (approval threshold 100,000,
/// quotes from 1,000,000): PO-2 is ordered after its delivery date (PO-04), PO-3 is approved
/// by its requester (PO-02) with one quote for 1,500,000 (PO-03), and PO-4 has no approver for
/// 250,000 (PO-01); PO-1 (120,000, approved by another person) breaks nothing.
#[test]
fn a_purchase_order_export_is_checked_by_rules_rewritten_for_its_headers() {
    let ws = workspace_with_export("purchase_orders_renamed.csv", "発注一覧.csv");
    let generate = |answers: Option<&str>| {
        compose(
            &ws,
            "po_check",
            "発注データを購買規程でチェックする",
            "inputs/発注一覧.csv",
            answers,
        )
    };
    let asked = generate(None);
    assert_eq!(asked["status"], "needs_answers", "{asked:#}");
    let questions = asked["requirements"].as_array().unwrap();
    assert_eq!(questions.len(), 1, "{questions:#?}");
    let approver = &questions[0];
    assert_eq!(approver["target"]["column"], "approver");
    assert_eq!(approver["target"]["also"].as_array().map(Vec::len), Some(2));
    assert!(
        approver["options"]
            .as_array()
            .unwrap()
            .contains(&Value::from("決裁欄"))
    );

    let answer = format!(r#"{{"{}": "決裁欄"}}"#, approver["id"].as_str().unwrap());
    let answered = generate(Some(&answer));
    assert_eq!(answered["status"], "valid", "{answered:#}");
    let plan = std::fs::read_to_string(ws.path().join("plan.yaml")).unwrap();
    for expression in [
        "when: 金額 >= ${vars.approval_threshold}",
        "condition: not is_empty(決裁欄)",
        "condition: 発注者 != 決裁欄",
        "condition: 見積件数 >= 2",
        "condition: 発注日 <= 納期",
    ] {
        assert!(plan.contains(expression), "{expression}:\n{plan}");
    }

    let (_, run_dir) = run_plan(&ws);
    let violations: Value = serde_json::from_slice(
        &std::fs::read(run_dir.join("outputs/po_policy_compliance__policy/violations.json"))
            .unwrap(),
    )
    .unwrap();
    let found: Vec<(&str, &str)> = violations
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["row"]["発注番号"].as_str().unwrap(),
                v["rule_id"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("PO-2", "PO-04"),
            ("PO-3", "PO-02"),
            ("PO-3", "PO-03"),
            ("PO-4", "PO-01")
        ]
    );
}

/// The journal by account and month, composed without an LLM for a 弥生-style export whose
/// headers are Japanese (fitted by meaning, nothing asked), run to its end: the totals and the
/// month-on-month variances worked out by hand in `samples/README.md` (諸口 left out, the rent
/// not booked in May found, April not compared). The same export saved from Excel as
/// 「Unicode テキスト」 (UTF-16 with a BOM, tab-separated, `.txt`, an empty last column) gives
/// the same answer.
#[test]
fn a_journal_is_totalled_by_account_and_month_and_its_variances_listed() {
    let sample = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/journal_quarter.csv"),
    )
    .unwrap();
    let mut unicode_text = vec![0xFF, 0xFE];
    for line in sample
        .trim_start_matches('\u{feff}')
        .lines()
        .filter(|l| !l.is_empty())
    {
        // The quoted amounts ("1,100,000") are plain cells in a tab-separated file.
        let mut cells = Vec::new();
        let mut rest = line;
        while !rest.is_empty() {
            let (cell, next) = match rest.strip_prefix('"') {
                Some(quoted) => {
                    let end = quoted.find('"').unwrap();
                    (
                        &quoted[..end],
                        quoted[end + 1..].strip_prefix(',').unwrap_or(""),
                    )
                }
                None => rest.split_once(',').unwrap_or((rest, "")),
            };
            cells.push(cell.to_string());
            rest = next;
        }
        cells.push(String::new());
        let text = cells.join("\t") + "\r\n";
        unicode_text.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    }
    for (name, bytes) in [
        ("仕訳帳.csv", sample.as_bytes().to_vec()),
        ("仕訳帳.txt", unicode_text),
    ] {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join("inputs")).unwrap();
        keiri_fs::write_atomic(&ws.path().join("inputs").join(name), &bytes).unwrap();
        journal_variances(&ws, &format!("inputs/{name}"));
    }
}

/// Composes the journal job for `doc` with the defaults, runs it and checks the hand-worked
/// totals and variances of `samples/journal_quarter.csv`.
fn journal_variances(ws: &tempfile::TempDir, doc: &str) {
    let composed = compose(
        ws,
        "journal_variance",
        "仕訳帳から勘定科目別・月別に集計して、前月比で20%以上かつ5万円を超えて増減した科目を一覧にする",
        doc,
        Some("{}"),
    );
    assert_eq!(composed["status"], "valid", "{doc}: {composed:#}");
    let (res, run_dir) = run_plan(ws);
    let read = |rel: &str| -> Vec<Value> {
        let v: Value = serde_json::from_slice(&std::fs::read(run_dir.join(rel)).unwrap()).unwrap();
        v.as_array().unwrap().clone()
    };
    // The monthly table is a table (Arrow) in the run: read through the API, as the window does.
    let ctx = keiri_api::Context::new(ws.path());
    let shown = keiri_api::run_output(
        &ctx,
        keiri_api::RunOutputRequest {
            plan_id: "journal_variance".into(),
            run_id: res["run_id"].as_str().unwrap().into(),
            node: "journal_monthly_variance__monthly".into(),
            limit: Some(100),
        },
    )
    .unwrap();
    let monthly = shown.outputs["rows"]["rows"].as_array().unwrap().clone();
    assert_eq!(monthly.len(), 19);
    let net = |account: &str, month: &str| {
        monthly
            .iter()
            .find(|r| r["勘定科目"] == account && r["年月"] == month)
            .map(|r| r["純額"].as_f64().unwrap())
    };
    assert_eq!(net("普通預金", "2025-05"), Some(988_000.0));
    assert_eq!(net("売上高", "2025-04"), Some(-1_100_000.0));
    assert_eq!(net("旅費交通費", "2025-04"), Some(30_000.0));
    assert_eq!(net("地代家賃", "2025-05"), None);
    assert!(monthly.iter().all(|r| r["勘定科目"] != "諸口"));
    let compared = read("outputs/journal_monthly_variance__compare/rows.json");
    assert_eq!(compared.len(), 16);
    assert!(compared.iter().all(|r| r["年月"] != "2025-04"));
    let over: Vec<(String, String, f64)> =
        read("outputs/journal_monthly_variance__compare/issues.json")
            .iter()
            .map(|r| {
                (
                    r["年月"].as_str().unwrap().to_string(),
                    r["勘定科目"].as_str().unwrap().to_string(),
                    r["change_amount"].as_f64().unwrap(),
                )
            })
            .collect();
    let want = [
        ("2025-05", "仕入高", 160_000.0),
        ("2025-05", "地代家賃", -200_000.0),
        ("2025-05", "買掛金", -160_000.0),
        ("2025-06", "仕入高", -140_000.0),
        ("2025-06", "地代家賃", 200_000.0),
        ("2025-06", "買掛金", 140_000.0),
    ];
    assert_eq!(
        over,
        want.map(|(m, a, c)| (m.to_string(), a.to_string(), c))
    );
}

/// Received invoices by tax rate, checked against the qualified invoice rules without an LLM,
/// their Japanese headers fitted by meaning: the problems worked out by hand in
/// `samples/README.md` — INV-103's registration number is too short, INV-104 has none (no
/// input tax credit), INV-106 states 10,001 where one rounding of 99,999 × 10 % gives 9,999 or
/// 10,000, INV-107 charged 10 % on an 8 % line (100 for 80), INV-108 is at 5 %. INV-102 (1,235,
/// rounded up) and INV-105 (3,334, rounded up) are right.
#[test]
fn received_invoices_are_checked_for_registration_numbers_and_rounded_tax() {
    let ws = workspace_with("samples/qualified_invoices.csv", "受領請求書.csv");
    let composed = compose(
        &ws,
        "invoice_tax",
        "請求書の登録番号の形式と、税率別の消費税の端数処理が正しいかチェックする",
        "inputs/受領請求書.csv",
        Some("{}"),
    );
    assert_eq!(composed["status"], "valid", "{composed:#}");
    let (_, run_dir) = run_plan(&ws);
    let read = |rel: &str| -> Vec<Value> {
        let v: Value = serde_json::from_slice(&std::fs::read(run_dir.join(rel)).unwrap()).unwrap();
        v.as_array().unwrap().clone()
    };
    // Row indexes count from 0: INV-103 is the fourth line, INV-104 the fifth.
    let registration: Vec<(u64, String)> =
        read("outputs/invoice_tax_check__registration/issues.json")
            .iter()
            .map(|i| {
                (
                    i["row_index"].as_u64().unwrap(),
                    i["rule"].as_str().unwrap().to_string(),
                )
            })
            .collect();
    assert_eq!(
        registration,
        [(4, "required".to_string()), (3, "regex".to_string())]
    );
    let tax: Vec<(String, String)> = read("outputs/invoice_tax_check__tax/violations.json")
        .iter()
        .map(|v| {
            (
                v["row"]["請求書番号"].as_str().unwrap().to_string(),
                v["rule_id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        tax,
        [
            ("INV-106".to_string(), "TX-02".to_string()),
            ("INV-107".to_string(), "TX-02".to_string()),
            ("INV-108".to_string(), "TX-01".to_string()),
        ]
    );

    // A line without its rate is named as such, never checked against an assumed 10 %.
    let sample = std::fs::read_to_string(ws.path().join("inputs/受領請求書.csv")).unwrap();
    put(
        &ws.path().join("inputs/受領請求書.csv"),
        &sample.replacen("T1234567890123,8%,", "T1234567890123,,", 1),
    );
    let (_, run_dir) = run_plan(&ws);
    let issues: Vec<Value> = serde_json::from_slice(
        &std::fs::read(run_dir.join("outputs/invoice_tax_check__registration/issues.json"))
            .unwrap(),
    )
    .unwrap();
    assert!(
        issues
            .iter()
            .any(|i| i["row_index"] == 1 && i["rule"] == "required" && i["field"] == "記載の税率"),
        "{issues:?}"
    );
}

/// A workspace template that does not load is named in the answer's notes, with its line: a
/// team's template with a typo is not a silent "no template fits".
#[test]
fn a_template_that_does_not_load_is_said() {
    let ws = workspace_with("samples/receivables_aging.csv", "売掛金明細.csv");
    std::fs::create_dir_all(ws.path().join("templates/mine")).unwrap();
    put(
        &ws.path().join("templates/mine/aging_by_branch.yaml"),
        "id: aging_by_branch\ngraph_snippet:\n  - id: x\n    in: {tables: [${a.rows}]}\n",
    );
    let result = compose(
        &ws,
        "aging",
        "支店別の売掛金年齢表を作りたい",
        "inputs/売掛金明細.csv",
        None,
    );
    let notes = result["notes"].to_string();
    assert!(
        notes.contains("templates/mine/aging_by_branch.yaml:4 を読めないため"),
        "{result:#}"
    );
}

/// The codes of a plan's error findings, sorted: `findings` of `keiri validate`, `errors` of a
/// generation.
fn error_codes(findings: &Value) -> Vec<String> {
    let mut codes: Vec<String> = findings
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| format!("{} {}", f["code"], f["path"]))
        .collect();
    codes.sort();
    codes
}

/// A file named in an answer, never attached with --docs, is read like an attached one: its
/// headers (伝票番号/取引先/日付/金額) are fitted and what cannot be fitted is asked, and the
/// generation's verdict is the one `keiri validate` gives the plan it wrote. Before, the
/// generation said `valid` with no question while validate found 6 `column.unknown` errors.
#[test]
fn a_file_named_in_an_answer_is_checked_like_an_attached_one() {
    let ws = tempfile::tempdir().unwrap();
    let csv = ws.path().join("受領請求書.csv");
    put(
        &csv,
        "伝票番号,取引先,日付,金額\nA-1,東京商事,2026/10/01,1000\nA-1,東京商事,2026/10/03,1000\nB-7,大阪物産,2026/10/05,2500\n",
    );
    let file = csv.display().to_string();
    let validate = |ws: &tempfile::TempDir| -> Value {
        let out = keiri(ws.path())
            .args(["--json", "validate"])
            .arg(ws.path().join("plan.yaml"))
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    const JOB: &str = "請求書の重複を検出する";
    let answers = serde_json::json!({"invoice_csv": file});
    let first = compose_docs(&ws, "dup", JOB, &[], Some(&answers.to_string()));
    assert_eq!(first["status"], "needs_answers", "{first:#}");
    let asked: Vec<&str> = first["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let checked = validate(&ws);
    assert_eq!(checked["valid"], false, "{checked:#}");
    assert_eq!(
        error_codes(&first["errors"]),
        error_codes(&checked["findings"]),
        "one verdict"
    );
    // The headers one dictionary vouches for are fitted, not asked: 金額 for the amount and
    // 取引先 for the vendor.
    let plan = std::fs::read_to_string(ws.path().join("plan.yaml")).unwrap();
    assert!(plan.contains("金額") && plan.contains("取引先"), "{plan}");
    assert!(!asked.is_empty(), "{first:#}");

    // Answered with the file's own headers, the plan is valid for both.
    let mut all = answers.as_object().unwrap().clone();
    for id in asked {
        let column = if id.contains("date") {
            "日付"
        } else {
            "伝票番号"
        };
        all.insert(id.to_string(), Value::String(column.into()));
    }
    std::fs::remove_file(ws.path().join("plan.yaml")).unwrap();
    let answered = compose_docs(&ws, "dup", JOB, &[], Some(&Value::Object(all).to_string()));
    assert_eq!(answered["status"], "valid", "{answered:#}");
    let checked = validate(&ws);
    assert_eq!(checked["valid"], true, "{checked:#}");
}
