//! A patch stops when its caller goes away (#37.7): the stop is looked at before the workbook
//! is read, before each op, every few thousand cells an op writes and before the save; once it
//! is set the patch is `CANCELLED` and nothing is written. (The wait for the formula engine
//! looks at it too: `engine::tests::a_stop_ends_the_wait_for_the_engine`.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use crate::support::{Cell, Workspace, build_xlsx};

/// Amounts in A1:A{rows}.
fn amounts(rows: usize) -> Vec<u8> {
    let cells: Vec<(&'static str, Cell)> = (1..=rows)
        .map(|r| (format!("A{r}").leak() as &'static str, Cell::N(r as f64)))
        .collect();
    build_xlsx(&[("S", cells)])
}

/// 20,000 values into B1:B20000 beside the amounts, written to `out.xlsx`. Values, not
/// formulas: a formula's preview value comes from the engine, whose wait looks at the stop
/// every 20 ms, which would make the count of looks depend on the machine.
fn values_request(name: &str) -> serde_json::Value {
    let values: Vec<serde_json::Value> = (1..=20_000).map(|r| json!([r * 2])).collect();
    json!({
        "xlsx_path": name,
        "ops": [{"op": "set_range_values", "sheet": "S", "range": "B1:B20000", "values": values}],
        "out_name": "out.xlsx",
    })
}

/// A stop that counts its looks and is set from look `set_at` on (never with `usize::MAX`).
fn counting_stop(set_at: usize) -> (keiri_xlsx::Stop, Arc<AtomicUsize>) {
    let looks = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&looks);
    let stop = keiri_xlsx::Stop::when(move || seen.fetch_add(1, Ordering::SeqCst) + 1 >= set_at);
    (stop, looks)
}

#[test]
fn a_patch_whose_caller_is_gone_reads_and_writes_nothing() {
    let mut ws = Workspace::new();
    let name = ws.add_file("book.xlsx", &amounts(10));
    let before = std::fs::read(ws.path(&name)).unwrap();
    ws.env.stop = keiri_xlsx::Stop::when(|| true);
    let err = ws.run(values_request(&name)).unwrap_err();
    assert_eq!(err.code(), "CANCELLED", "{err}");
    assert!(err.to_string().contains("nothing was written"), "{err}");
    assert!(!ws.path("out.xlsx").exists());
    assert_eq!(std::fs::read(ws.path(&name)).unwrap(), before);
}

#[test]
fn a_long_op_looks_at_the_stop_while_it_writes_and_a_stop_there_writes_nothing() {
    // Not stopped: the stop is looked at before the read, before the op, after each 4,096
    // cells of the 20,000 (4 times) and before the save.
    let mut ws = Workspace::new();
    let name = ws.add_file("book.xlsx", &amounts(20_000));
    let (stop, looks) = counting_stop(usize::MAX);
    ws.env.stop = stop;
    let res = ws.ok(values_request(&name));
    assert_eq!(res.patch_diff.len(), 20_000);
    assert!(ws.path("out.xlsx").is_file());
    assert_eq!(looks.load(Ordering::SeqCst), 1 + 1 + 4 + 1);

    // Stopped at the first look inside the op (after 4,096 cells): nothing is written, and the
    // op's other 15,904 cells are not visited (no later look).
    let mut ws = Workspace::new();
    let name = ws.add_file("book.xlsx", &amounts(20_000));
    let (stop, looks) = counting_stop(3);
    ws.env.stop = stop;
    let err = ws.run(values_request(&name)).unwrap_err();
    assert_eq!(err.code(), "CANCELLED", "{err}");
    assert_eq!(looks.load(Ordering::SeqCst), 3);
    assert!(!ws.path("out.xlsx").exists());
}

#[test]
fn a_stop_before_the_save_leaves_the_workbook_as_it_was() {
    // In place (overwrite): the last look is before the save; the original is untouched.
    let mut ws = Workspace::new();
    let name = ws.add_file("book.xlsx", &amounts(10));
    let before = std::fs::read(ws.path(&name)).unwrap();
    let (stop, looks) = counting_stop(3);
    ws.env.stop = stop;
    let err = ws
        .run(json!({
            "xlsx_path": name,
            "ops": [{"op": "set_value", "sheet": "S", "cell": "B1", "value": 1}],
            "out_name": name,
            "on_conflict": "overwrite",
        }))
        .unwrap_err();
    assert_eq!(err.code(), "CANCELLED", "{err}");
    assert_eq!(looks.load(Ordering::SeqCst), 3);
    assert_eq!(std::fs::read(ws.path(&name)).unwrap(), before);
    let leftovers: Vec<_> = std::fs::read_dir(ws.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != &name)
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
