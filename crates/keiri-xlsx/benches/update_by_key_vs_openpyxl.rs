//! Benchmark: `update_rows_by_key` of 10,000 keys on a generated 100,000-row ledger — load,
//! find each key's row, write two columns, save — by keiri-xlsx and by openpyxl used well
//! (load, index the key column once into a dict, write, save), each in its own process so peak
//! memory (VmHWM) is measured per side.
//!
//! `cargo bench -p keiri-xlsx --bench update_by_key_vs_openpyxl` (Linux). openpyxl is
//! installed from PyPI into `target/bench-venv` on the first run; without `python3` that side
//! is skipped and said so. `-- --prepare DIR` only writes the inputs (`input.xlsx`,
//! `ops.json`) for timing both sides as whole processes with other tools. Numbers go in the
//! crate README; nothing here asserts on time.

mod common;

use std::path::Path;

use common::generate_ledger;

const ROWS: u32 = 100_000;
const KEYS: usize = 10_000;
const RUNS: usize = 5;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("--child-ours") => common::patch_child(&args[2], &args[3]),
        Some("--prepare") => {
            if let Err(e) = prepare(Path::new(&args[2])) {
                eprintln!("preparing failed: {e}");
                std::process::exit(1);
            }
        }
        _ => {
            if let Err(e) = run() {
                eprintln!("benchmark failed: {e}");
                std::process::exit(1);
            }
        }
    }
}

/// One `update_rows_by_key` op: 10,000 distinct keys spread over the ledger (a fixed LCG, so
/// both sides update the same rows), each with new 金額1 and 金額2.
fn generate_ops() -> serde_json::Value {
    let mut next = common::lcg();
    let mut seen = std::collections::HashSet::new();
    let mut rows = Vec::with_capacity(KEYS);
    while rows.len() < KEYS {
        let n = next() % ROWS + 1;
        if !seen.insert(n) {
            continue;
        }
        rows.push(serde_json::json!({
            "伝票番号": format!("伝票{n:07}"),
            "金額1": f64::from(next() % 1_000_000) / 100.0,
            "金額2": next() % 100_000,
        }));
    }
    serde_json::json!([{"op": "update_rows_by_key", "sheet": "明細", "header_row": 1,
        "key_column": "伝票番号", "rows": rows}])
}

fn prepare(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let workbook = generate_ledger(ROWS);
    keiri_fs::write_atomic(&dir.join("input.xlsx"), &workbook).map_err(|e| e.to_string())?;
    let ops = generate_ops();
    keiri_fs::write_atomic(&dir.join("ops.json"), ops.to_string().as_bytes())
        .map_err(|e| e.to_string())?;
    println!(
        "workbook: {ROWS} rows × 10 columns under a header ({} bytes); update_rows_by_key of {KEYS} keys",
        workbook.len()
    );
    Ok(())
}

fn run() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    prepare(dir.path())?;
    let ops_path = dir.path().join("ops.json");
    println!("median of {RUNS} runs");
    common::ours_against_openpyxl(RUNS, dir.path(), &ops_path, "openpyxl_update_by_key.py")
}
