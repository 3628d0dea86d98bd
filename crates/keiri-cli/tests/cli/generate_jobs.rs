//! Jobs composed without an LLM from the shipped templates and run to their end on the
//! samples, checked against the figures worked out by hand in `samples/README.md`.

use serde_json::Value;

use super::generate::{compose, compose_docs, run_plan, workspace_with};

/// Receivables aged without an LLM from an export of the sales system (Shift_JIS, CRLF, blank
/// lines at the end, dates in three notations, △ for a credit note) whose Japanese headers are
/// fitted by meaning; only the as-of date is asked. The figures are worked out by hand in
/// `samples/README.md`: by due date (the default), then by invoice date as the instruction
/// asks. The table always adds up to the open balances (1,336,500): the invoice without a due
/// date and the one billed after the as-of date are in 区分不能, and the missing due date is a
/// warning of the run.
#[test]
fn receivables_are_aged_by_customer_and_the_table_adds_up() {
    let ws = workspace_with("samples/receivables_aging.csv", "売掛金明細.csv");
    let by_due =
        "3月末時点で入金期日を過ぎている売掛金を得意先別にまとめて、滞留債権を洗い出したい";
    let asked = compose(&ws, "aging", by_due, "inputs/売掛金明細.csv", None);
    let ids = questions(&asked);
    assert_eq!(ids, ["as_of_date"]);

    let as_of = Some(r#"{"as_of_date": "2025-03-31"}"#);
    let composed = compose(&ws, "aging", by_due, "inputs/売掛金明細.csv", as_of);
    assert_eq!(composed["status"], "valid", "{composed:#}");
    let (res, run_dir) = run_plan(&ws);
    let warnings = res["warnings"].to_string();
    assert!(
        warnings.contains("VALUES_MISSING") && warnings.contains("days_between(期日"),
        "{res:#}"
    );
    // 得意先, 件数, 合計, 期日未到来, 30日以内, 31〜60日, 61〜90日, 90日超, 区分不能.
    let table: [(&str, [i64; 8]); 7] = [
        (
            "株式会社山田商事",
            [3, 770_000, 330_000, 0, 330_000, 0, 0, 110_000],
        ),
        (
            "合同会社田中デザイン",
            [2, 198_000, -22_000, 0, 0, 220_000, 0, 0],
        ),
        ("佐藤工業有限会社", [1, 132_000, 132_000, 0, 0, 0, 0, 0]),
        ("鈴木製作所", [2, 132_000, 0, 0, 88_000, 0, 44_000, 0]),
        ("株式会社高橋物産", [2, 88_000, 0, 77_000, 0, 0, 0, 11_000]),
        ("伊藤商店", [1, 16_500, 0, 0, 0, 0, 16_500, 0]),
        (
            "合計",
            [
                11, 1_336_500, 440_000, 77_000, 418_000, 220_000, 60_500, 121_000,
            ],
        ),
    ];
    assert_eq!(
        aging_workbook(&ws, &run_dir),
        table.map(|(c, v)| (c.to_string(), v))
    );
    let ids = |res: &Value, node: &str, key: &str| -> Vec<String> {
        node_output(&ws, res, node, key)
            .iter()
            .map(|r| r["請求書番号"].as_str().unwrap().to_string())
            .collect()
    };
    // Open past 60 days (the default), oldest first; the two that cannot be aged.
    assert_eq!(
        ids(&res, "receivables_aging__long_overdue", "rows"),
        ["A-0112", "A-0106", "A-0105"]
    );
    assert_eq!(
        ids(&res, "receivables_aging__agable", "excluded"),
        ["A-0109", "A-0111"]
    );

    // From the invoice date: nothing is "not yet due", and the instruction's 30/60/90 are the
    // template's buckets.
    let by_invoice = "売掛金の年齢表を作りたい。請求日からの経過日数で30日・60日・90日超に分ける";
    std::fs::remove_file(ws.path().join("plan.yaml")).unwrap();
    let composed = compose(&ws, "aging", by_invoice, "inputs/売掛金明細.csv", as_of);
    assert_eq!(composed["status"], "valid", "{composed:#}");
    assert!(
        composed["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "指示の「請求日から」から設定 aging_basis を invoice_date にしました（既定 due_date）"),
        "{composed:#}"
    );
    let (res, run_dir) = run_plan(&ws);
    let table: [(&str, [i64; 8]); 7] = [
        (
            "株式会社山田商事",
            [3, 770_000, 0, 330_000, 0, 0, 330_000, 110_000],
        ),
        (
            "合同会社田中デザイン",
            [2, 198_000, 0, -22_000, 0, 0, 220_000, 0],
        ),
        ("佐藤工業有限会社", [1, 132_000, 0, 0, 132_000, 0, 0, 0]),
        ("鈴木製作所", [2, 132_000, 0, 0, 0, 88_000, 44_000, 0]),
        ("株式会社高橋物産", [2, 88_000, 0, 11_000, 77_000, 0, 0, 0]),
        ("伊藤商店", [1, 16_500, 0, 0, 0, 0, 16_500, 0]),
        (
            "合計",
            [11, 1_336_500, 0, 319_000, 209_000, 88_000, 610_500, 110_000],
        ),
    ];
    assert_eq!(
        aging_workbook(&ws, &run_dir),
        table.map(|(c, v)| (c.to_string(), v))
    );
    assert_eq!(
        ids(&res, "receivables_aging__long_overdue", "rows"),
        ["A-0112", "A-0106", "A-0105", "A-0104", "A-0103"]
    );
    assert_eq!(
        ids(&res, "receivables_aging__agable", "excluded"),
        ["A-0111"]
    );
}

/// The rows of `node`'s `rows` output in the run `res` answered, read through the API as the
/// window reads them.
fn node_rows(ws: &tempfile::TempDir, res: &Value, node: &str) -> Vec<Value> {
    node_output(ws, res, node, "rows")
}

/// The rows of `node`'s output `key`, read as [`node_rows`] reads them.
fn node_output(ws: &tempfile::TempDir, res: &Value, node: &str, key: &str) -> Vec<Value> {
    let shown = keiri_api::run_output(
        &keiri_api::Context::new(ws.path()),
        keiri_api::RunOutputRequest {
            plan_id: res["plan_id"].as_str().unwrap().into(),
            run_id: res["run_id"].as_str().unwrap().into(),
            node: node.into(),
            limit: Some(100),
        },
    )
    .unwrap();
    shown.outputs[key]["rows"].as_array().unwrap().clone()
}

/// The aging table of the workbook the run wrote (sheet 年齢表): each line below the header
/// row (the one starting 得意先) as its customer and eight whole numbers.
fn aging_workbook(ws: &tempfile::TempDir, run_dir: &std::path::Path) -> Vec<(String, [i64; 8])> {
    let path = run_dir.join("files/receivables_aging__write/outputs/売掛金年齢表.xlsx");
    let read: keiri_api::xlsx::ReadRangeRequest = serde_json::from_value(serde_json::json!({
        "xlsx_path": path.display().to_string(),
        "sheet": "年齢表",
        "range": "A1:I20",
    }))
    .unwrap();
    let cells = keiri_api::workbook_read_range(&keiri_api::Context::new(ws.path()), read).unwrap();
    let cells = serde_json::to_value(cells.cells).unwrap();
    let at = |cell: String| {
        cells
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["cell"] == cell.as_str())
            .map(|c| c["value"].clone())
            .unwrap_or(Value::Null)
    };
    let header = (1..=20)
        .find(|r| at(format!("A{r}")) == "得意先")
        .expect("a header row starting 得意先");
    assert_eq!(at(format!("I{header}")), "区分不能");
    (header + 1..=20)
        .take_while(|r| !at(format!("A{r}")).is_null())
        .map(|r| {
            let customer = at(format!("A{r}")).as_str().unwrap().to_string();
            let figures = ["B", "C", "D", "E", "F", "G", "H", "I"].map(|col| {
                at(format!("{col}{r}"))
                    .as_f64()
                    .unwrap_or_else(|| panic!("{col}{r} is not a number")) as i64
            });
            (customer, figures)
        })
        .collect()
}

/// The vendor master's 名寄せ without an LLM, its headers fitted by meaning, nothing asked:
/// the five groups of `samples/README.md` (法人格, width and spaces folded), the same code on
/// two rows a warning and not a group, 株式会社山田商店 not with 山田商事, and the row without
/// a name left out with a warning of the run.
#[test]
fn a_vendor_master_is_matched_by_name_into_groups_of_codes() {
    let ws = workspace_with("samples/vendor_master.csv", "取引先マスタ.csv");
    let composed = compose(
        &ws,
        "vendors",
        "取引先マスタの名寄せをして、同じ会社が別コードで登録されていないか調べる",
        "inputs/取引先マスタ.csv",
        Some("{}"),
    );
    assert_eq!(composed["status"], "valid", "{composed:#}");
    let (res, _) = run_plan(&ws);
    let warnings: Vec<(&str, &str)> = res["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["node"].as_str().unwrap(), w["code"].as_str().unwrap()))
        .collect();
    assert_eq!(
        warnings,
        [
            ("vendor_master_name_matching__keyed", "VALUES_MISSING"),
            ("vendor_master_name_matching__quality", "ROWS_SKIPPED"),
        ]
    );
    let candidates: Vec<(String, String, String)> =
        node_rows(&ws, &res, "vendor_master_name_matching__candidates")
            .iter()
            .map(|r| {
                let text = |k: &str| r[k].as_str().unwrap().to_string();
                (text("代表コード"), text("取引先コード"), text("取引先名"))
            })
            .collect();
    let want = [
        ("V001", "V001", "株式会社山田商事"),
        ("V001", "V003", "(株)山田商事"),
        ("V001", "V006", "山田商事"),
        ("V002", "V002", "東京事務機株式会社"),
        ("V002", "V009", "東京事務機 株式会社"),
        ("V004", "V004", "大阪運輸株式会社"),
        ("V004", "V010", "大阪運輸(有)"),
        ("V007", "V007", "クリーンサービス合同会社"),
        ("V007", "V008", "クリーンサービス（同）"),
        ("V012", "V012", "ＡＢＣシステム株式会社"),
        ("V012", "V013", "ABCシステム(株)"),
    ];
    assert_eq!(
        candidates,
        want.map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
    let groups: Vec<(String, i64)> = node_rows(&ws, &res, "vendor_master_name_matching__groups")
        .iter()
        .map(|r| {
            (
                r["代表コード"].as_str().unwrap().to_string(),
                r["コード数"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        [
            ("V001", 3),
            ("V002", 2),
            ("V004", 2),
            ("V007", 2),
            ("V012", 2)
        ]
        .map(|(c, n)| (c.to_string(), n))
    );
}

/// A 全銀 transfer file from a payment schedule (Shift_JIS, its headers fitted by meaning,
/// the bank code 9 of a spreadsheet that dropped its zeros): the company's details are asked
/// (seven questions), then the approved payments — V001, V014, V007, 1,177,000 in all — are
/// the file's data records and the others (未承認, 差戻し) are listed as not transferred.
#[test]
fn approved_payments_become_a_zengin_transfer_file() {
    let ws = workspace_with("samples/payables_approved.csv", "支払予定.csv");
    let instruction = "承認済みの買掛金から全銀フォーマットの総合振込ファイルを作る";
    let asked = compose(&ws, "furikomi", instruction, "inputs/支払予定.csv", None);
    let ids = questions(&asked);
    assert_eq!(
        ids,
        [
            "company_code",
            "company_name_kana",
            "transfer_date",
            "paying_bank_code",
            "paying_branch_code",
            "paying_account_type",
            "paying_account_no"
        ]
    );
    let answers = r#"{"company_code": "1234567890", "company_name_kana": "ケイリショウジ（カ",
        "transfer_date": "2025-04-25", "paying_bank_code": "0001", "paying_branch_code": "100",
        "paying_account_type": "普通", "paying_account_no": "7654321"}"#;
    let composed = compose(
        &ws,
        "furikomi",
        instruction,
        "inputs/支払予定.csv",
        Some(answers),
    );
    assert_eq!(composed["status"], "valid", "{composed:#}");
    let (res, run_dir) = run_plan(&ws);
    let bytes = std::fs::read(
        run_dir.join("files/zengin_transfer_file__transfer/outputs/sogofurikomi.txt"),
    )
    .unwrap();
    let records: Vec<&[u8]> = bytes
        .split(|b| *b == b'\n')
        .filter(|r| !r.is_empty())
        .map(|r| r.strip_suffix(b"\r").unwrap())
        .collect();
    assert_eq!(records.len(), 6, "header, three payments, trailer, end");
    assert!(records.iter().all(|r| r.len() == 120));
    assert_eq!(&records[0][..14], b"12101234567890");
    assert_eq!(&records[0][54..58], b"0425");
    // Bank, account, amount and vendor code of each payment, at their offsets.
    let field = |r: &[u8], at: std::ops::Range<usize>| String::from_utf8(r[at].to_vec()).unwrap();
    let payments: Vec<[String; 4]> = records[1..4]
        .iter()
        .map(|r| {
            [
                field(r, 1..5),
                field(r, 43..50),
                field(r, 80..90),
                field(r, 91..95),
            ]
        })
        .collect();
    let want = [
        ["0005", "1234567", "0001100000", "V001"],
        ["0009", "0765432", "0000055000", "V014"],
        ["0001", "0012345", "0000022000", "V007"],
    ];
    assert_eq!(payments, want.map(|p| p.map(str::to_string)));
    // ヤマダショウジ（カ in JIS X 0201: ﾔ ﾏ ﾀ ﾞ ｼ ﾖ ｳ ｼ ﾞ ( ｶ, then spaces to 30.
    let name: &[u8] = &[
        0xD4, 0xCF, 0xC0, 0xDE, 0xBC, 0xD6, 0xB3, 0xBC, 0xDE, 0x28, 0xB6,
    ];
    assert_eq!(&records[1][50..61], name);
    assert!(records[1][61..80].iter().all(|b| *b == b' '));
    assert_eq!(&records[4][..19], b"8000003000001177000");
    assert_eq!(records[5][0], b'9');

    let held: Vec<String> = node_output(&ws, &res, "zengin_transfer_file__approved", "excluded")
        .iter()
        .map(|r| r["仕入先コード"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(held, ["V004", "V016"]);
}

/// The ids of the questions a composition that needs answers asks.
fn questions(asked: &Value) -> Vec<&str> {
    assert_eq!(asked["status"], "needs_answers", "{asked:#}");
    asked["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_str().unwrap())
        .collect()
}

/// A purchase ledger against a ZIP of its evidence, both attached, nothing asked: worked out
/// by hand in `samples/README.md` — INV-2025-0301 is found written in full-width, TJ-2025-08812
/// in a CSV's line (48400 beside 20), OS-5512 in a file name whose text says 50,000 for the
/// ledger's 55,000; CL-2025-031 has no evidence, 12 is too short to look up (a warning), J-006
/// has no number; the receipt and the scan are unused, the scan without text.
#[test]
fn a_ledger_is_vouched_against_a_zip_of_evidence() {
    let ws = workspace_with("samples/purchase_ledger.csv", "仕入帳.csv");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/evidence_2025-03.zip"),
        ws.path().join("inputs/証憑.zip"),
    )
    .unwrap();
    let composed = compose_docs(
        &ws,
        "vouching",
        "証憑ZIPの中の請求書と仕入帳を突き合わせて、証憑のない仕訳を洗い出す",
        &["inputs/仕入帳.csv", "inputs/証憑.zip"],
        Some("{}"),
    );
    assert_eq!(composed["status"], "valid", "{composed:#}");
    let (res, run_dir) = run_plan(&ws);
    let warnings = res["warnings"].to_string();
    assert!(warnings.contains("ROWS_SKIPPED"), "{res:#}");
    let read = |name: &str| -> Value {
        let path = run_dir
            .join("outputs/evidence_reconciliation__lookup")
            .join(name);
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    };
    let pick = |rows: &Value, key: &str| -> Vec<(String, Value)> {
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| (r["伝票番号"].as_str().unwrap().to_string(), r[key].clone()))
            .collect()
    };
    let found = read("found.json");
    assert_eq!(
        pick(&found, "evidence_files"),
        [
            ("J-001".to_string(), Value::from("請求書_山田商事_0301.txt")),
            ("J-002".to_string(), Value::from("tokyo_jimuki_202503.csv")),
            ("J-003".to_string(), Value::from("大阪運輸_OS5512.txt")),
        ]
    );
    assert_eq!(
        pick(&found, "amount_agrees"),
        [
            ("J-001".to_string(), Value::Bool(true)),
            ("J-002".to_string(), Value::Bool(true)),
            ("J-003".to_string(), Value::Bool(false)),
        ]
    );
    assert_eq!(
        pick(&read("missing.json"), "reason"),
        [
            ("J-004".to_string(), Value::from("証憑が見つかりません")),
            ("J-005".to_string(), Value::from("番号が短すぎて探せません")),
            ("J-006".to_string(), Value::from("番号がありません")),
        ]
    );
    let unused: Vec<String> = read("unused_files.json")
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(unused, ["領収書_文具店.txt", "scan_0007.jpg"]);
    let summary = read("summary.json");
    assert_eq!(summary["amount_disagrees"], 1);
    assert_eq!(summary["files_without_text"], 1);
}

/// A range of a workbook's sheet as `(cell, value)` pairs, empty cells left out.
fn sheet_cells(
    ws: &tempfile::TempDir,
    path: &std::path::Path,
    sheet: &str,
) -> Vec<(String, Value)> {
    let read: keiri_api::xlsx::ReadRangeRequest = serde_json::from_value(serde_json::json!({
        "xlsx_path": path.display().to_string(),
        "sheet": sheet,
        "range": "A1:J60",
        "include_empty": false,
    }))
    .unwrap();
    let cells = keiri_api::workbook_read_range(&keiri_api::Context::new(ws.path()), read)
        .unwrap_or_else(|e| panic!("{sheet}: {e:?}"));
    serde_json::to_value(cells.cells)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["cell"].as_str().unwrap().to_string(), c["value"].clone()))
        .collect()
}

/// The result rows go into a workbook the user already keeps (#33 item 2): 「月次報告.xlsxに
/// 『重複一覧』シートを追加して書き込む」 with the workbook attached gives the invoice check plus
/// a step that adds the sheet 重複一覧 to a copy of 月次報告.xlsx — no report template for the
/// 報告 of its file name, nothing asked. The copy keeps the 試算表 sheet cell for cell and
/// holds the four duplicate rows worked out by hand (INV-0412 twice, 0415-77 / 041577); the
/// attached workbook is not changed.
#[test]
fn the_result_rows_go_into_a_sheet_of_a_workbook_the_user_keeps() {
    let ws = workspace_with("evals/offline/invoices_renamed.csv", "請求書一覧.csv");
    let book =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/trial_balance.xlsx");
    let kept = ws.path().join("inputs/月次報告.xlsx");
    std::fs::copy(&book, &kept).unwrap();
    let before = std::fs::read(&kept).unwrap();
    let v = compose_docs(
        &ws,
        "invoice_duplicates",
        "請求書CSVから重複を検出して、月次報告.xlsxに『重複一覧』シートを追加して書き込む",
        &["inputs/請求書一覧.csv", "inputs/月次報告.xlsx"],
        Some("{}"),
    );
    assert_eq!(v["status"], "valid", "{v:#}");
    assert_eq!(v["composition"], "「請求書の重複検出」を使います");
    assert_eq!(v["requirements"], serde_json::json!([]));
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.contains(&"指示にある既存のブック inputs/月次報告.xlsx への書き込みのため、結果の行をそのコピーの「重複一覧」シートに書き、outputs/月次報告.xlsx として保存する手順 excel_output を加えました（元のブックは変えません）"),
        "{notes:#?}"
    );

    let (_, run_dir) = run_plan(&ws);
    let copy = run_dir.join("files/excel_output/outputs/月次報告.xlsx");
    assert_eq!(
        sheet_cells(&ws, &copy, "試算表"),
        sheet_cells(&ws, &kept, "試算表")
    );
    let added = sheet_cells(&ws, &copy, "重複一覧");
    let header = added
        .iter()
        .find(|(_, v)| v == "請求番号")
        .map(|(cell, _)| cell.clone())
        .expect("a header 請求番号");
    let column: String = header
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    let row: u32 = header[column.len()..].parse().unwrap();
    let mut numbers: Vec<&str> = added
        .iter()
        .filter(|(cell, _)| {
            cell.starts_with(&column) && cell[column.len()..].parse::<u32>().is_ok_and(|r| r > row)
        })
        .filter_map(|(_, v)| v.as_str())
        .collect();
    numbers.sort_unstable();
    assert_eq!(numbers, ["0415-77", "041577", "INV-0412", "INV-0412"]);
    assert_eq!(
        std::fs::read(&kept).unwrap(),
        before,
        "the kept workbook changed"
    );
}

/// An approval the instruction asks for (#33 item 2): 「上長の承認を得てからExcelに出力する」
/// adds a confirmation step showing the duplicate rows before the workbook step, which runs
/// only once it is approved. Nothing else is asked. Refused, the run finishes with the
/// workbook step skipped and nothing written; approved, the workbook holds the rows; with no
/// answer the run stops at the approval (paused), showing the four rows worked out by hand.
#[test]
fn an_approval_asked_for_gates_what_the_plan_writes() {
    let ws = workspace_with("evals/offline/invoices_renamed.csv", "請求書一覧.csv");
    let v = compose(
        &ws,
        "invoice_duplicates",
        "請求書CSVから重複を検出し、上長の承認を得てからExcelに出力する",
        "inputs/請求書一覧.csv",
        Some("{}"),
    );
    assert_eq!(v["status"], "valid", "{v:#}");
    assert_eq!(v["requirements"], serde_json::json!([]));
    assert!(
        v["notes"].as_array().unwrap().iter().any(|n| n
            == "指示にある「承認」のため、結果を見せて承認を求める手順 approval を加え、excel_output は承認されたときだけ実行するようにしました（誰がいつ承認したかを実行の記録に残します）"),
        "{v:#}"
    );
    let run = |answers: Option<&str>| -> Value {
        let mut cmd = super::keiri(ws.path());
        cmd.args(["--json", "run", "plan.yaml"]);
        if let Some(answers) = answers {
            super::put(&ws.path().join("answers.json"), answers);
            cmd.args(["--answers", "answers.json"]);
        }
        let out = cmd.write_stdin("").output().unwrap();
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
    };
    let status_of = |res: &Value, node: &str| {
        res["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["id"] == node)
            .map(|n| n["status"].as_str().unwrap().to_string())
    };

    let waiting = run(None);
    assert_eq!(waiting["status"], "paused", "{waiting:#}");
    let shown: Vec<&str> = waiting["paused"][0]["question"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["請求番号"].as_str().unwrap())
        .collect();
    assert_eq!(shown, ["INV-0412", "INV-0412", "0415-77", "041577"]);

    let refused = run(Some(r#"{"approval": "却下"}"#));
    assert_eq!(refused["status"], "finished", "{refused:#}");
    assert_eq!(
        status_of(&refused, "excel_output").as_deref(),
        Some("skipped")
    );
    assert_eq!(refused["files"], serde_json::json!([]));

    let approved = run(Some(
        r#"{"approval": {"approved": "承認", "comment": "確認済み"}}"#,
    ));
    assert_eq!(approved["status"], "finished", "{approved:#}");
    assert_eq!(
        status_of(&approved, "excel_output").as_deref(),
        Some("finished")
    );
    let run_dir = ws.path().join(approved["run_dir"].as_str().unwrap());
    let rows: Value = serde_json::from_slice(
        &std::fs::read(run_dir.join("outputs/excel_output/row_count.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(rows, 4);
}

/// Column questions no header meaning answers are pre-selected from the file (#33 item 3): an
/// export whose headers are in no dictionary (証憑番号, 相手先, 受領日, 税込額, 備考; BOM, CRLF,
/// quoted amounts with separators, a blank line at the end) gets 受領日 proposed for the
/// invoice date (its only column of dates), 税込額 for the amount (its only column of numbers)
/// 証憑番号 for the invoice number (its only header that names a number) and 相手先 for the
/// vendor (its only header that names a party), each saying why. With the proposals accepted
/// as they are, the run finds the one duplicate worked out by hand: A-1001 from 山田商事 twice,
/// 110,000 at risk.
#[test]
fn columns_no_dictionary_knows_are_proposed_from_the_files_values() {
    let ws = workspace_with(
        "evals/offline/invoices_unknown_headers.csv",
        "受領請求書.csv",
    );
    let asked = compose(
        &ws,
        "invoice_duplicates",
        "請求書CSVから重複を検出する",
        "inputs/受領請求書.csv",
        None,
    );
    assert_eq!(asked["status"], "needs_answers", "{asked:#}");
    let proposals: Vec<(String, Value)> = asked["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            let id = q["id"].as_str().unwrap();
            (
                id.rsplit("__").next().unwrap().to_string(),
                q["default"].clone(),
            )
        })
        .collect();
    assert_eq!(
        proposals,
        [
            ("dates_fields_1".to_string(), Value::from("受領日")),
            ("amounts_fields_1".to_string(), Value::from("税込額")),
            ("detect_vendor_field".to_string(), Value::from("相手先")),
            (
                "detect_invoice_no_field".to_string(),
                Value::from("証憑番号")
            ),
        ]
    );
    let date = &asked["requirements"][0];
    assert!(
        date["description"]
            .as_str()
            .unwrap()
            .ends_with("（値が日付の列は「受領日」だけなので、これを選んでおきました）"),
        "{date:#}"
    );
    let answers: serde_json::Map<String, Value> = asked["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| (q["id"].as_str().unwrap().to_string(), q["default"].clone()))
        .collect();
    let answered = compose(
        &ws,
        "invoice_duplicates",
        "請求書CSVから重複を検出する",
        "inputs/受領請求書.csv",
        Some(&Value::Object(answers).to_string()),
    );
    assert_eq!(answered["status"], "valid", "{answered:#}");
    let (_, run_dir) = run_plan(&ws);
    let summary: Value = serde_json::from_slice(
        &std::fs::read(run_dir.join("outputs/invoice_duplicate_detection__detect/summary.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(summary["cluster_count"], 1, "{summary}");
    assert_eq!(summary["row_count"], 2, "{summary}");
    assert_eq!(summary["amount_at_risk"], 110000, "{summary}");
}

/// A receivables export whose customer column is headed お客様名: no dictionary entry, no
/// party word (…先, 社名, 会社), and two other text columns (請求書No, 担当者). The local
/// embedding model proposes it for the template's `customer` (the nearest header in meaning,
/// ahead of 担当者 by more than the margin), saying so; the other columns are fitted by the
/// dictionary. Accepted as proposed, as of 2025-03-31 by due date, the aging is the one
/// worked out by hand: R-501 (due 2/28, 31 days) 31〜60日, R-505 (due 3/10, 21 days) 30日以内,
/// R-504 (due 12/20, 101 days) 90日超, R-502 and R-503 not yet due, R-506 paid and left out.
#[test]
fn a_column_no_rule_knows_is_proposed_by_its_meaning_and_the_aging_adds_up() {
    if super::retrieve::no_model_here() {
        return;
    }
    let ws = workspace_with(
        "evals/offline/receivables_unknown_headers.csv",
        "売掛金一覧.csv",
    );
    let instruction = "売掛金の年齢表を作って";
    let asked = compose(
        &ws,
        "aging_meaning",
        instruction,
        "inputs/売掛金一覧.csv",
        None,
    );
    assert_eq!(asked["status"], "needs_answers", "{asked:#}");
    let customer = asked["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["description"].as_str().unwrap().contains("「customer」"))
        .unwrap_or_else(|| panic!("no question for the customer column: {asked:#}"));
    assert_eq!(customer["default"], "お客様名", "{customer:#}");
    let why = customer["description"].as_str().unwrap();
    assert!(
        why.contains("見出しの意味が「customer」に最も近い列として「お客様名」")
            && why.contains("次は「担当者」"),
        "{why}"
    );
    let mut answers: serde_json::Map<String, Value> = asked["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| !q["default"].is_null())
        .map(|q| (q["id"].as_str().unwrap().to_string(), q["default"].clone()))
        .collect();
    answers.insert("as_of_date".into(), Value::from("2025-03-31"));
    let composed = compose(
        &ws,
        "aging_meaning",
        instruction,
        "inputs/売掛金一覧.csv",
        Some(&Value::Object(answers).to_string()),
    );
    assert_eq!(composed["status"], "valid", "{composed:#}");
    let (_, run_dir) = run_plan(&ws);
    // 得意先, 件数, 合計, 期日未到来, 30日以内, 31〜60日, 61〜90日, 90日超, 区分不能.
    let table: [(&str, [i64; 8]); 4] = [
        (
            "東海精機株式会社",
            [2, 451_000, 121_000, 0, 330_000, 0, 0, 0],
        ),
        (
            "株式会社みなと物産",
            [2, 132_000, 88_000, 44_000, 0, 0, 0, 0],
        ),
        ("北斗商会", [1, 55_000, 0, 0, 0, 0, 55_000, 0]),
        ("合計", [5, 638_000, 209_000, 44_000, 330_000, 0, 55_000, 0]),
    ];
    assert_eq!(
        aging_workbook(&ws, &run_dir),
        table.map(|(c, v)| (c.to_string(), v))
    );
}
