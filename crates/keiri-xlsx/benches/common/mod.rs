//! What the keiri-xlsx benchmarks share: the generated workbook, peak memory from /proc, the
//! medians, and the Python venv the other side runs in.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const ROWS: u32 = 10_000;
pub const COLS: u32 = 10;

/// Column letters for 1-based `col` (A–J here).
pub fn col_name(col: u32) -> char {
    char::from(b'A' + (col - 1) as u8)
}

/// A worksheet of `ROWS` × `COLS`: an id (shared string), eight numbers and a SUM formula.
pub fn generate_workbook() -> Vec<u8> {
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
    package(sheet, sst)
}

/// The package around one worksheet named 明細 and its shared strings.
fn package(sheet: String, sst: String) -> Vec<u8> {
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

/// A ledger of `rows` data rows under a header row (伝票番号, 金額1–金額8, 合計): the key
/// `伝票0000001`… in A (shared strings), eight numbers and a `SUM` formula per row.
pub fn generate_ledger(rows: u32) -> Vec<u8> {
    let mut sheet = String::with_capacity(rows as usize * 260);
    let last = rows + 1;
    sheet.push_str(&format!(r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:J{last}"/><sheetData>"#));
    let mut strings = String::from("<si><t>伝票番号</t></si>");
    sheet.push_str(r#"<row r="1"><c r="A1" t="s"><v>0</v></c>"#);
    for c in 2..COLS {
        strings.push_str(&format!("<si><t>金額{}</t></si>", c - 1));
        sheet.push_str(&format!(
            r#"<c r="{}1" t="s"><v>{}</v></c>"#,
            col_name(c),
            c - 1
        ));
    }
    strings.push_str("<si><t>合計</t></si>");
    sheet.push_str(&format!(r#"<c r="J1" t="s"><v>{}</v></c></row>"#, COLS - 1));
    for r in 2..=last {
        sheet.push_str(&format!(r#"<row r="{r}" spans="1:{COLS}">"#));
        sheet.push_str(&format!(r#"<c r="A{r}" t="s"><v>{}</v></c>"#, r - 2 + COLS));
        strings.push_str(&format!("<si><t>伝票{:07}</t></si>", r - 1));
        for c in 2..COLS {
            let v = (r * 31 + c * 17) % 10_000;
            sheet.push_str(&format!(r#"<c r="{}{r}"><v>{v}.{c}</v></c>"#, col_name(c)));
        }
        sheet.push_str(&format!(
            r#"<c r="J{r}"><f>SUM(B{r}:I{r})</f><v>0</v></c></row>"#
        ));
    }
    sheet.push_str("</sheetData></worksheet>");
    let count = rows + COLS;
    let sst = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="{count}" uniqueCount="{count}">{strings}</sst>"#
    );
    package(sheet, sst)
}

pub fn vm_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

pub struct Sample {
    pub seconds: f64,
    pub peak_kb: f64,
    pub baseline_kb: f64,
}

/// One child's JSON line: `{"seconds", "peak_kb", "baseline_kb"}`.
pub fn parse_sample(stdout: &[u8]) -> Result<Sample, String> {
    let line = String::from_utf8_lossy(stdout);
    let v: serde_json::Value =
        serde_json::from_str(line.trim()).map_err(|e| format!("{e}: {line}"))?;
    Ok(Sample {
        seconds: v["seconds"].as_f64().unwrap_or(f64::NAN),
        peak_kb: v["peak_kb"].as_f64().unwrap_or(f64::NAN),
        baseline_kb: v["baseline_kb"].as_f64().unwrap_or(f64::NAN),
    })
}

/// `target/<venv>` with `packages` installed from PyPI, created on first use; `None` when
/// python3 with venv/pip is not available.
pub fn python_with(venv: &str, packages: &[&str]) -> Option<PathBuf> {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
    let venv = target.join(venv);
    let python = venv.join("bin/python");
    if !python.exists() {
        eprintln!(
            "creating {} and installing {} from PyPI …",
            venv.display(),
            packages.join(", ")
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
            .args(["-m", "pip", "install", "--quiet"])
            .args(packages)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            return None;
        }
    }
    Some(python)
}

/// Runs `command` `runs` times; each run prints one sample line.
pub fn samples(
    runs: usize,
    mut command: impl FnMut() -> Command,
    what: &str,
) -> Result<Vec<Sample>, String> {
    let mut out = Vec::new();
    for _ in 0..runs {
        let run = command().output().map_err(|e| e.to_string())?;
        if !run.status.success() {
            return Err(format!(
                "{what} failed: {}",
                String::from_utf8_lossy(&run.stderr)
            ));
        }
        out.push(parse_sample(&run.stdout)?);
    }
    Ok(out)
}

/// Median time, peak and baseline of `samples`, printed as one line.
pub fn report(name: &str, samples: &[Sample]) -> (f64, f64, f64) {
    let t = median(samples.iter().map(|s| s.seconds).collect());
    let m = median(samples.iter().map(|s| s.peak_kb).collect());
    let b = median(samples.iter().map(|s| s.baseline_kb).collect());
    println!(
        "{name}: {t:.3} s, peak RSS {:.1} MiB (before loading {:.1} MiB)",
        m / 1024.0,
        b / 1024.0
    );
    (t, m, b)
}

/// The keiri-xlsx side of a benchmark, in its own process: patches `input.xlsx` in `dir`
/// with the ops in `ops_path` into `ours.xlsx` and prints one sample line.
pub fn patch_child(dir: &str, ops_path: &str) {
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
    let start = std::time::Instant::now();
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

/// Runs the keiri-xlsx side (this binary, `--child-ours`) `runs` times.
pub fn ours(runs: usize, dir: &Path, ops_path: &Path) -> Result<Vec<Sample>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    samples(
        runs,
        || {
            let mut c = Command::new(&exe);
            c.arg("--child-ours").arg(dir).arg(ops_path);
            c
        },
        "keiri-xlsx run",
    )
}

/// Our side (this binary's `--child-ours`) against the openpyxl `script` on the same input and
/// ops, `runs` times each; prints both medians and the ratios.
pub fn ours_against_openpyxl(
    runs: usize,
    dir: &Path,
    ops_path: &Path,
    script: &str,
) -> Result<(), String> {
    let ours = ours(runs, dir, ops_path)?;
    let (ours_t, ours_m, ours_b) = report("keiri-xlsx", &ours);
    let Some(python) = python_with("bench-venv", &["openpyxl"]) else {
        println!("openpyxl: skipped (python3 with venv/pip is not available)");
        return Ok(());
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches")
        .join(script);
    let theirs = samples(
        runs,
        || {
            let mut c = Command::new(&python);
            c.arg(&script)
                .arg(dir.join("input.xlsx"))
                .arg(ops_path)
                .arg(dir.join("openpyxl.xlsx"));
            c
        },
        "openpyxl run",
    )?;
    let (t, m, b) = report("openpyxl  ", &theirs);
    println!(
        "ratio: {:.1}× faster, {:.2}× the peak memory ({:.2}× counting only what loading and patching added)",
        t / ours_t,
        ours_m / m,
        (ours_m - ours_b) / (m - b)
    );
    Ok(())
}

/// A fixed linear congruential sequence, so every run and both sides of a benchmark touch the
/// same cells and keys.
pub fn lcg() -> impl FnMut() -> u32 {
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as u32
    }
}
