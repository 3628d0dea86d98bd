//! Benchmark against ExStruct's own Python implementation (PyPI `exstruct`, which edits
//! workbooks with openpyxl when Excel is not there): a generated 100,000-cell workbook
//! (10,000 rows × 10 columns) styled with 1,000 design ops — bold, fills, font sizes and
//! colours, grid borders, alignment, row heights — load + apply + save, each side in its own
//! process so peak memory (VmHWM) is measured per side.
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

    let ours = common::ours(RUNS, dir.path(), &ops_path)?;
    let (ours_t, ours_m, _) = report("keiri-xlsx", &ours);

    let Some(python) = common::python_with("bench-venv-exstruct", &["exstruct"]) else {
        println!("ExStruct: skipped (python3 with venv/pip is not available)");
        return Ok(());
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/exstruct_patch.py");
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
