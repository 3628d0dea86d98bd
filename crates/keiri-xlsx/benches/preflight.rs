//! Benchmark of the preflight formula check's bounds (issue #20): a dry run of one `set_value`
//! at `XFD1048576` with `preflight_formula_check` on every sheet of every fixture workbook, and
//! the formula engine's rate in cells covered by references per second (what
//! `MAX_ENGINE_WORK` is set from).
//!
//! `cargo bench -p keiri-xlsx --bench preflight`. Needs `../shared/fixtures` beside the
//! repository. Numbers go in the crate README; nothing here asserts on time.

use std::io::Write;
use std::time::Instant;

use calamine::Reader;

const RUNS: usize = 3;

fn main() {
    if let Err(e) = run() {
        eprintln!("benchmark failed: {e}");
        std::process::exit(1);
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Median seconds of a dry run of `op` with the preflight check on `bytes`.
fn time_dry_run(bytes: &[u8], op: serde_json::Value) -> Result<(f64, Vec<String>), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    keiri_fs::write_atomic(&dir.path().join("book.xlsx"), bytes).map_err(|e| e.to_string())?;
    let env = keiri_xlsx::PatchEnv::new(keiri_fs::PathPolicy::new([dir.path()]));
    let req: keiri_xlsx::PatchRequest = serde_json::from_value(serde_json::json!({
        "xlsx_path": "book.xlsx",
        "ops": [op],
        "preflight_formula_check": true,
        "dry_run": true,
    }))
    .map_err(|e| e.to_string())?;
    let mut times = Vec::new();
    let mut warnings = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let res = keiri_xlsx::patch(&req, &env).map_err(|e| e.to_string())?;
        times.push(start.elapsed().as_secs_f64());
        warnings = res.warnings;
    }
    Ok((median(times), warnings))
}

/// A one-sheet workbook: `rows` numbers in A and `formulas` formulas in C, each summing
/// `A1:A{rows}` — `formulas × rows` cells of references for the engine.
fn sum_book(rows: u32, formulas: u32) -> Vec<u8> {
    let mut data = String::new();
    for r in 1..=rows.max(formulas) {
        data.push_str(&format!(r#"<row r="{r}">"#));
        if r <= rows {
            data.push_str(&format!(r#"<c r="A{r}"><v>{r}</v></c>"#));
        }
        if r <= formulas {
            data.push_str(&format!(
                r#"<c r="C{r}"><f>SUM($A$1:$A${rows})+{r}</f></c>"#
            ));
        }
        data.push_str("</row>");
    }
    let files = [
        ("[Content_Types].xml", r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#.to_string()),
        ("_rels/.rels", r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#.to_string()),
        ("xl/workbook.xml", r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>"#.to_string()),
        ("xl/_rels/workbook.xml.rels", r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#.to_string()),
        ("xl/worksheets/sheet1.xml", format!(r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{data}</sheetData></worksheet>"#)),
    ];
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in files {
        let _ = w.start_file(name, zip::write::SimpleFileOptions::default());
        let _ = w.write_all(text.as_bytes());
    }
    w.finish().map(|c| c.into_inner()).unwrap_or_default()
}

fn run() -> Result<(), String> {
    if keiri_testkit::skip_without_shared("fixtures/accounting/*.xlsx and fixtures/xlsx/*.xlsx") {
        return Ok(());
    }
    let fixtures = keiri_testkit::shared_fixtures_dir();
    let mut books = Vec::new();
    for dir in ["accounting", "xlsx"] {
        let entries = std::fs::read_dir(fixtures.join(dir)).map_err(|e| e.to_string())?;
        for entry in entries.flatten() {
            if entry.path().extension().is_some_and(|e| e == "xlsx") {
                books.push(entry.path());
            }
        }
    }
    books.sort();
    println!("## set_value XFD1048576, preflight on, dry run (median of {RUNS})\n");
    println!("| workbook | sheet | seconds |");
    println!("|---|---|---:|");
    let mut worst: f64 = 0.0;
    for path in &books {
        let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
        let book: calamine::Xlsx<_> =
            calamine::open_workbook(path).map_err(|e| format!("{}: {e}", path.display()))?;
        for sheet in book.sheet_names() {
            let op = serde_json::json!({"op": "set_value", "sheet": sheet, "cell": "XFD1048576", "value": 1});
            let (seconds, _) = time_dry_run(&bytes, op)?;
            worst = worst.max(seconds);
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            println!("| {name} | {sheet} | {seconds:.3} |");
        }
    }
    println!("\nslowest: {worst:.3} s\n");

    println!("## engine rate: formulas × SUM over rows (both evaluations of the check)\n");
    println!("| formulas | rows | cells covered | seconds | cells/s |");
    println!("|---:|---:|---:|---:|---:|");
    for (rows, formulas) in [(10_000u32, 100u32), (10_000, 500), (10_000, 1_000)] {
        let bytes = sum_book(rows, formulas);
        let op = serde_json::json!({"op": "set_value", "sheet": "S", "cell": "B1", "value": 1});
        let (seconds, warnings) = time_dry_run(&bytes, op)?;
        let cells = u64::from(rows) * u64::from(formulas);
        let skipped = warnings.iter().any(|w| w.contains("only static"));
        // The check evaluates the original and the patched workbook.
        let rate = 2.0 * cells as f64 / seconds;
        println!(
            "| {formulas} | {rows} | {cells} | {seconds:.3} | {} |",
            if skipped {
                "engine skipped".to_string()
            } else {
                format!("{:.1} M", rate / 1e6)
            }
        );
    }
    Ok(())
}
