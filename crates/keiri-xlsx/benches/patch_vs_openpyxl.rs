//! Benchmark: a generated 100,000-cell workbook patched with 10,000 `set_value` ops —
//! load + apply + save — by keiri-xlsx and by openpyxl (the non-COM backend of ExStruct), each
//! in its own process so peak memory (VmHWM) is measured per side.
//!
//! `cargo bench -p keiri-xlsx --bench patch_vs_openpyxl` (Linux: memory comes from
//! /proc/self/status). openpyxl is installed from PyPI into `target/bench-venv` on the first
//! run; without `python3` the openpyxl side is skipped and said so. Numbers go in the crate
//! README; nothing here asserts on time.

mod common;

use common::{COLS, ROWS, col_name, generate_workbook};

const OPS: usize = 10_000;
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

/// 10,000 `set_value` ops on cells spread over the sheet (a fixed LCG, so every run and both
/// sides patch the same cells): numbers in B–I, text in A.
fn generate_ops() -> serde_json::Value {
    let mut next = common::lcg();
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

    common::ours_against_openpyxl(RUNS, dir.path(), &ops_path, "openpyxl_patch.py")
}
