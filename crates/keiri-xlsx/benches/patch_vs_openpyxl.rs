//! Benchmark: a generated 100,000-cell workbook patched with 10,000 `set_value` ops —
//! load + apply + save — by keiri-xlsx and by openpyxl (the non-COM backend of ExStruct), each
//! in its own process so peak memory (VmHWM) is measured per side.
//!
//! `cargo bench -p keiri-xlsx --bench patch_vs_openpyxl` (Linux: memory comes from
//! /proc/self/status). openpyxl is installed from PyPI into `target/bench-venv` on the first
//! run; without `python3` the openpyxl side is skipped and said so. Numbers go in the crate
//! README; nothing here asserts on time.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const ROWS: u32 = 10_000;
const COLS: u32 = 10;
const OPS: usize = 10_000;
const RUNS: usize = 5;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child-ours") {
        child_ours(&args[2], &args[3]);
        return;
    }
    if let Err(e) = run() {
        eprintln!("benchmark failed: {e}");
        std::process::exit(1);
    }
}

/// Column letters for 1-based `col` (A–J here).
fn col_name(col: u32) -> char {
    char::from(b'A' + (col - 1) as u8)
}

/// A worksheet of `ROWS` × `COLS`: an id (shared string), eight numbers and a SUM formula.
fn generate_workbook() -> Vec<u8> {
    let mut sheet = String::with_capacity(8 << 20);
    sheet.push_str(r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:J10000"/><sheetData>"#);
    let mut strings = String::new();
    for r in 1..=ROWS {
        sheet.push_str(&format!(r#"<row r="{r}" spans="1:{COLS}">"#));
        sheet.push_str(&format!(r#"<c r="A{r}" t="s"><v>{}</v></c>"#, r - 1));
        strings.push_str(&format!("<si><t>伝票{r:05}</t></si>"));
        for c in 2..COLS {
            let v = (r * 31 + c * 17) % 10_000;
            sheet.push_str(&format!(
                r#"<c r="{}{r}"><v>{v}.{}</v></c>"#,
                col_name(c),
                c
            ));
        }
        sheet.push_str(&format!(
            r#"<c r="J{r}"><f>SUM(B{r}:I{r})</f><v>0</v></c></row>"#
        ));
    }
    sheet.push_str("</sheetData></worksheet>");
    let sst = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="{ROWS}" uniqueCount="{ROWS}">{strings}</sst>"#
    );
    let files: Vec<(&str, String)> = vec![
        ("[Content_Types].xml", r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>"#.to_string()),
        ("_rels/.rels", r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#.to_string()),
        ("xl/workbook.xml", r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="明細" sheetId="1" r:id="rId1"/></sheets><calcPr calcId="191029"/></workbook>"#.to_string()),
        ("xl/_rels/workbook.xml.rels", r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>"#.to_string()),
        ("xl/sharedStrings.xml", sst),
        ("xl/worksheets/sheet1.xml", sheet),
    ];
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in files {
        let _ = w.start_file(name, zip::write::SimpleFileOptions::default());
        let _ = w.write_all(text.as_bytes());
    }
    w.finish().map(|c| c.into_inner()).unwrap_or_default()
}

/// 10,000 `set_value` ops on cells spread over the sheet (a fixed LCG, so every run and both
/// sides patch the same cells): numbers in B–I, text in A.
fn generate_ops() -> serde_json::Value {
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as u32
    };
    let ops: Vec<serde_json::Value> = (0..OPS)
        .map(|i| {
            let row = next() % ROWS + 1;
            let col = next() % (COLS - 1) + 1;
            let cell = format!("{}{row}", col_name(col));
            let value = if col == 1 {
                serde_json::json!(format!("修正{i}"))
            } else {
                serde_json::json!(f64::from(next() % 100_000) / 100.0)
            };
            serde_json::json!({"op": "set_value", "sheet": "明細", "cell": cell, "value": value})
        })
        .collect();
    serde_json::Value::Array(ops)
}

fn vm_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// The keiri-xlsx side, in its own process.
fn child_ours(dir: &str, ops_path: &str) {
    // The request is parsed straight from its text, as the CLI and server receive it.
    let ops = std::fs::read_to_string(ops_path).unwrap_or_default();
    let text = format!(
        r#"{{"xlsx_path":"input.xlsx","ops":{ops},"out_name":"ours.xlsx","on_conflict":"overwrite"}}"#
    );
    drop(ops);
    let parsed = serde_json::from_str::<keiri_xlsx::PatchRequest>(&text);
    drop(text);
    let Ok(req) = parsed else {
        eprintln!("bad request");
        std::process::exit(1);
    };
    let env = keiri_xlsx::PatchEnv::new(keiri_fs::PathPolicy::new([dir]));
    let baseline = vm_kb("VmRSS:");
    let start = Instant::now();
    let res = keiri_xlsx::patch(&req, &env);
    let seconds = start.elapsed().as_secs_f64();
    match res {
        Ok(r) if r.error.is_none() => {
            println!(
                "{}",
                serde_json::json!({"seconds": seconds, "peak_kb": vm_kb("VmHWM:"), "baseline_kb": baseline, "diff_items": r.patch_diff.len()})
            );
        }
        other => {
            eprintln!("patch failed: {other:?}");
            std::process::exit(1);
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

struct Sample {
    seconds: f64,
    peak_kb: f64,
    baseline_kb: f64,
}

fn parse_sample(stdout: &[u8]) -> Result<Sample, String> {
    let line = String::from_utf8_lossy(stdout);
    let v: serde_json::Value =
        serde_json::from_str(line.trim()).map_err(|e| format!("{e}: {line}"))?;
    Ok(Sample {
        seconds: v["seconds"].as_f64().unwrap_or(f64::NAN),
        peak_kb: v["peak_kb"].as_f64().unwrap_or(f64::NAN),
        baseline_kb: v["baseline_kb"].as_f64().unwrap_or(f64::NAN),
    })
}

/// `target/bench-venv` with openpyxl, created on first use.
fn python_with_openpyxl() -> Option<PathBuf> {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
    let venv = target.join("bench-venv");
    let python = venv.join("bin/python");
    if !python.exists() {
        eprintln!(
            "creating {} and installing openpyxl from PyPI …",
            venv.display()
        );
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            return None;
        }
        let ok = Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "openpyxl"])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            return None;
        }
    }
    Some(python)
}

fn run() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let input = dir.path().join("input.xlsx");
    let workbook = generate_workbook();
    keiri_fs::write_atomic(&input, &workbook).map_err(|e| e.to_string())?;
    let ops = generate_ops();
    let ops_path = dir.path().join("ops.json");
    keiri_fs::write_atomic(&ops_path, ops.to_string().as_bytes()).map_err(|e| e.to_string())?;
    println!(
        "workbook: {} cells ({ROWS} rows × {COLS} columns, {} bytes); {OPS} set_value ops; median of {RUNS} runs",
        ROWS * COLS,
        workbook.len()
    );

    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut ours = Vec::new();
    for _ in 0..RUNS {
        let out = Command::new(&exe)
            .arg("--child-ours")
            .arg(dir.path())
            .arg(&ops_path)
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "keiri-xlsx run failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        ours.push(parse_sample(&out.stdout)?);
    }
    let ours_t = median(ours.iter().map(|s| s.seconds).collect());
    let ours_m = median(ours.iter().map(|s| s.peak_kb).collect());
    let ours_b = median(ours.iter().map(|s| s.baseline_kb).collect());
    println!(
        "keiri-xlsx: {:.3} s, peak RSS {:.1} MiB (before loading {:.1} MiB)",
        ours_t,
        ours_m / 1024.0,
        ours_b / 1024.0
    );

    let Some(python) = python_with_openpyxl() else {
        println!("openpyxl: skipped (python3 with venv/pip is not available)");
        return Ok(());
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/openpyxl_patch.py");
    let mut theirs = Vec::new();
    for _ in 0..RUNS {
        let out = Command::new(&python)
            .arg(&script)
            .arg(&input)
            .arg(&ops_path)
            .arg(dir.path().join("openpyxl.xlsx"))
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "openpyxl run failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        theirs.push(parse_sample(&out.stdout)?);
    }
    let t = median(theirs.iter().map(|s| s.seconds).collect());
    let m = median(theirs.iter().map(|s| s.peak_kb).collect());
    let b = median(theirs.iter().map(|s| s.baseline_kb).collect());
    println!(
        "openpyxl:   {:.3} s, peak RSS {:.1} MiB (before loading {:.1} MiB)",
        t,
        m / 1024.0,
        b / 1024.0
    );
    println!(
        "ratio: {:.1}× faster, {:.2}× the peak memory ({:.2}× counting only what loading and patching added)",
        t / ours_t,
        ours_m / m,
        (ours_m - ours_b) / (m - b)
    );
    Ok(())
}
