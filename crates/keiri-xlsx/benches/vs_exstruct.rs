//! Benchmark against ExStruct's own Python implementation (PyPI `exstruct`, which reads and
//! edits workbooks with openpyxl when Excel is not there), on a generated 100,000-cell workbook
//! (10,000 rows × 10 columns), each side in its own process so peak memory (VmHWM) is measured
//! per side:
//! - extract: the workbook's structure in `standard` mode written as JSON (`exstruct_extract`);
//! - styling: 1,000 design ops — bold, fills, font sizes and colours, grid borders, alignment,
//!   row heights — load + apply + save (`exstruct_patch`).
//!
//! `cargo bench -p keiri-xlsx --bench vs_exstruct` (Linux: memory from /proc/self/status).
//! ExStruct is installed from PyPI into `target/bench-venv-exstruct` on the first run; without
//! `python3` its side is skipped and said so. Numbers go in the crate README; nothing here
//! asserts on time.

mod common;

use std::path::Path;
use std::process::Command;

use common::{ROWS, generate_workbook, report, samples};

const OPS: usize = 1_000;
const RUNS: usize = 5;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child-ours") {
        common::patch_child(&args[2], &args[3]);
        return;
    }
    if args.get(1).map(String::as_str) == Some("--child-extract") {
        extract_child(&args[2]);
        return;
    }
    if let Err(e) = run() {
        eprintln!("benchmark failed: {e}");
        std::process::exit(1);
    }
}

/// 1,000 styling ops on row bands spread over the sheet, in ExStruct's documented shapes
/// (both sides take the same JSON).
fn generate_ops() -> serde_json::Value {
    let ops: Vec<serde_json::Value> = (0..OPS)
        .map(|i| {
            // Rows 1..ROWS-4, spread by a step coprime with the row count.
            let r = (i as u32 * 37) % (ROWS - 4) + 1;
            let band = format!("A{r}:J{r}");
            match i % 7 {
                0 => serde_json::json!({"op": "set_bold", "sheet": "明細", "range": band, "bold": true}),
                1 => serde_json::json!({"op": "set_fill_color", "sheet": "明細", "range": band, "fill_color": "#D9E1F2"}),
                2 => serde_json::json!({"op": "set_font_size", "sheet": "明細", "range": band, "font_size": 12}),
                3 => serde_json::json!({"op": "set_font_color", "sheet": "明細", "range": band, "color": "#1F4E79"}),
                4 => serde_json::json!({"op": "draw_grid_border", "sheet": "明細", "base_cell": format!("A{r}"), "row_count": 5, "col_count": 10}),
                5 => serde_json::json!({"op": "set_alignment", "sheet": "明細", "range": band, "horizontal_align": "center"}),
                _ => serde_json::json!({"op": "set_dimensions", "sheet": "明細", "rows": [r], "row_height": 20}),
            }
        })
        .collect();
    serde_json::Value::Array(ops)
}

/// The keiri-xlsx extraction, in its own process: `input.xlsx` in `dir` to `ours.json`.
fn extract_child(dir: &str) {
    let req: keiri_xlsx::ExtractRequest = match serde_json::from_value(serde_json::json!({
        "xlsx_path": "input.xlsx", "mode": "standard", "format": "json",
        "out_name": "ours.json", "on_conflict": "overwrite",
    })) {
        Ok(req) => req,
        Err(e) => {
            eprintln!("bad request: {e}");
            std::process::exit(1);
        }
    };
    let env = keiri_xlsx::PatchEnv::new(keiri_fs::PathPolicy::new([dir]));
    let baseline = common::vm_kb("VmRSS:");
    let start = std::time::Instant::now();
    let res = keiri_xlsx::workbook_extract(&req, &env);
    let seconds = start.elapsed().as_secs_f64();
    match res {
        Ok(_) => println!(
            "{}",
            serde_json::json!({"seconds": seconds, "peak_kb": common::vm_kb("VmHWM:"), "baseline_kb": baseline})
        ),
        Err(e) => {
            eprintln!("extract failed: {e}");
            std::process::exit(1);
        }
    }
}

fn run() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let input = dir.path().join("input.xlsx");
    let workbook = generate_workbook();
    keiri_fs::write_atomic(&input, &workbook).map_err(|e| e.to_string())?;
    let ops_path = dir.path().join("ops.json");
    keiri_fs::write_atomic(&ops_path, generate_ops().to_string().as_bytes())
        .map_err(|e| e.to_string())?;
    println!(
        "workbook: {} cells ({ROWS} rows × {} columns, {} bytes); {OPS} styling ops; median of {RUNS} runs",
        ROWS * common::COLS,
        common::COLS,
        workbook.len()
    );

    let python = common::python_with("bench-venv-exstruct", &["exstruct"]);
    if python.is_none() {
        println!("ExStruct: skipped (python3 with venv/pip is not available)");
    }
    let benches = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches");

    println!("-- extract (standard mode, JSON)");
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let ours = samples(
        RUNS,
        || {
            let mut c = Command::new(&exe);
            c.arg("--child-extract").arg(dir.path());
            c
        },
        "keiri-xlsx extract",
    )?;
    let (ours_t, ours_m, _) = report("keiri-xlsx", &ours);
    if let Some(python) = &python {
        let theirs = samples(
            RUNS,
            || {
                let mut c = Command::new(python);
                c.arg(benches.join("exstruct_extract.py"))
                    .arg(&input)
                    .arg(dir.path().join("exstruct.json"));
                c
            },
            "ExStruct extract",
        )?;
        let (t, m, _) = report("ExStruct  ", &theirs);
        println!(
            "ratio: {:.1}× faster, {:.2}× the peak memory",
            t / ours_t,
            ours_m / m
        );
    }

    println!("-- {OPS} styling ops (load + apply + save)");
    let ours = common::ours(RUNS, dir.path(), &ops_path)?;
    let (ours_t, ours_m, _) = report("keiri-xlsx", &ours);
    let Some(python) = python else {
        return Ok(());
    };
    let script = benches.join("exstruct_patch.py");
    let theirs = samples(
        RUNS,
        || {
            let mut c = Command::new(&python);
            c.arg(&script).arg(&input).arg(&ops_path).arg(dir.path());
            c
        },
        "ExStruct run",
    )?;
    let (t, m, _) = report("ExStruct  ", &theirs);
    println!(
        "ratio: {:.1}× faster, {:.2}× the peak memory",
        t / ours_t,
        ours_m / m
    );
    Ok(())
}
