//! Fuzz harnesses (stable Rust, proptest) over what a patch request and a workbook bring in:
//! A1 references and formulas (seeds in `fuzz/corpus/a1` and `fuzz/corpus/formula`, one per
//! line) and workbook bytes (`fuzz/corpus/xlsx`, mutated inside the package). Every input gives
//! a result or a coded error; nothing panics, inputs are bounded, and the formula engine runs
//! under its work and time budgets. The case budget is `KEIRI_FUZZ_CASES` (`make fuzz`), else a
//! small fixed one.

#[path = "../../../../fuzz/support.rs"]
mod fuzz_support;
#[path = "../../../../fuzz/ooxml.rs"]
mod ooxml;

use keiri_xlsx::{Area, CellRef, PatchResponse};
use proptest::prelude::*;
use serde_json::json;

use crate::support::Workspace;

/// Formula syntax the mutator inserts.
const FORMULA_TOKENS: &[&[u8]] = &[
    b"(",
    b")",
    b",",
    b":",
    b"!",
    b"$",
    b"'",
    b"\"",
    b"#REF!",
    b"A1",
    b"XFD1048576",
    b"A:XFD",
    b"1:1048576",
    b"SUM(",
    b"_xlfn.",
    b"_xlpm.",
    b"LET(",
    b"LAMBDA(",
    b"[1]",
    b"Sheet1!",
    b"'My sheet'!",
    b"Table1[",
    b"[#This Row]",
    b"]",
    b"{",
    b"}",
    b";",
    b"%",
    b"&",
    b"^",
    b"-",
    b"+",
    b" ",
    b"@",
    b"#",
    b"1E+308",
    b"\xE3\x80\x80",
];

/// The non-empty lines of every seed file of a target.
fn lines(target: &str) -> Vec<Vec<u8>> {
    fuzz_support::corpus(target)
        .iter()
        .flat_map(|f| f.split(|b| *b == b'\n').map(<[u8]>::to_vec))
        .filter(|l| !l.is_empty())
        .collect()
}

fn patch_dry_run(
    ws: &Workspace,
    op: serde_json::Value,
) -> Result<PatchResponse, keiri_xlsx::Error> {
    ws.run(json!({
        "xlsx_path": "book.xlsx",
        "ops": [op],
        "preflight_formula_check": true,
        "return_inverse_ops": true,
        "dry_run": true,
    }))
}

fn seed_workspace() -> Workspace {
    let ws = Workspace::new();
    let seed = std::fs::read(fuzz_support::corpus_dir("xlsx").join("invoice.xlsx")).unwrap();
    ws.add_file("book.xlsx", &seed);
    ws
}

fn coded(result: Result<PatchResponse, keiri_xlsx::Error>) -> Result<(), TestCaseError> {
    if let Err(e) = result {
        prop_assert!(!e.code().is_empty(), "{e}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz_support::config())]

    #[test]
    fn fuzz_a1_refs(bytes in fuzz_support::input(lines("a1"), FORMULA_TOKENS, 64)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Some(cell) = CellRef::parse(&text) {
            prop_assert_eq!(CellRef::parse(&cell.to_a1()), Some(cell));
        }
        if let Some(area) = Area::parse(&text) {
            prop_assert_eq!(Area::parse(&area.to_a1()), Some(area));
            prop_assert!(!area.is_empty());
        }
    }

    #[test]
    fn fuzz_formulas(
        bytes in fuzz_support::input(lines("formula"), FORMULA_TOKENS, 1024),
        rows in -1_100_000i64..1_100_000,
        cols in -17_000i64..17_000,
    ) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = keiri_xlsx::shift_formula(&text, rows, cols);
        // Through a patch with the preflight check: the syntax check, the reference
        // bounding and the engine under its budgets.
        let ws = seed_workspace();
        let op = json!({"op": "set_formula", "sheet": "請求", "cell": "E5", "formula": format!("={text}")});
        coded(patch_dry_run(&ws, op))?;
    }

    #[test]
    fn fuzz_xlsx_patch_open(bytes in ooxml::input(fuzz_support::corpus("xlsx"), 64 * 1024)) {
        let ws = Workspace::new();
        ws.add_file("book.xlsx", &bytes);
        let op = json!({"op": "set_value", "sheet": "請求", "cell": "B2", "value": 7});
        coded(patch_dry_run(&ws, op))?;
    }
}
