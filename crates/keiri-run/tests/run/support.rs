//! What the tests that run plans through the builtins share: the shipped catalog, and a run
//! in a throwaway workspace holding small files written out in the test.

use std::path::Path;

use chrono::TimeZone;
use keiri_run::block::Registry;
use keiri_run::{Event, RunOptions, RunOutcome};

/// The shipped block specs.
pub fn catalog() -> keiri_plan::Catalog {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
    keiri_plan::Catalog::load(&[dir]).0
}

/// Runs `yaml` with the builtins in a workspace holding `files`, with the options `configure`
/// leaves; returns the outcome, the events and the workspace (kept alive for the caller to
/// read the run's records).
pub fn run_builtins(
    files: &[(&str, &str)],
    yaml: &str,
    configure: impl FnOnce(&mut RunOptions),
) -> (RunOutcome, Vec<Event>, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    for (name, text) in files {
        keiri_fs::write_atomic(&ws.path().join(name), text.as_bytes()).unwrap();
    }
    let (outcome, events) = run_in(ws.path(), yaml, configure);
    (outcome, events, ws)
}

/// Runs `yaml` with the builtins in the workspace `ws` (a fixed start time, random 1, then
/// what `configure` sets: a resume, answers, limits); returns the outcome and the events.
pub fn run_in(
    ws: &Path,
    yaml: &str,
    configure: impl FnOnce(&mut RunOptions),
) -> (RunOutcome, Vec<Event>) {
    let loaded = keiri_plan::load_plan(yaml).unwrap();
    let now = chrono::Utc
        .with_ymd_and_hms(2026, 11, 29, 10, 0, 0)
        .unwrap();
    let mut options = RunOptions::new(ws, now, 1);
    configure(&mut options);
    let events = std::sync::Mutex::new(Vec::new());
    let outcome = keiri_run::run(
        &loaded.plan,
        yaml,
        &catalog(),
        &Registry::builtins(),
        &options,
        &|e| events.lock().unwrap().push(e.clone()),
    )
    .unwrap();
    (outcome, events.into_inner().unwrap())
}

/// The nodes a resume reused, in the order it reused them.
pub fn reused(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::NodeReused { node } => Some(node.as_str()),
            _ => None,
        })
        .collect()
}
