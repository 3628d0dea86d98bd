//! A 1,000,000-row Shift_JIS journal CSV (generated) → `csv.read` → `transforms.normalize_dates`
//! → `transforms.fiscal_period` (year_month) → `transforms.normalize_amounts` →
//! `transforms.group_aggregate` by account and month → `transforms.pivot` (months as columns)
//! → `control.variance_check` (March against February) → `excel.write_table`, run through the
//! builtin registry the engine uses. Prints the median wall time of each stage over the runs
//! and the peak resident memory of the pipeline alone: the file is generated first, then the
//! pipeline runs in a child process of this binary (`KEIRI_BENCH_CSV`), so its peak is not
//! the generator's.
//!
//! `KEIRI_BENCH_ROWS` changes the row count, `KEIRI_BENCH_RUNS` the runs (default 5).
//! The whole-process comparison with pandas, Polars and DuckDB is `benches/journal/`
//! (README, "Benchmark: a journal by account × month").
//!
//! Run once, in release: `cargo bench -p keiri-run --bench journal`.

use std::path::Path;
use std::time::{Duration, Instant};

use keiri_run::block::{BlockContext, CallSink, Inputs, Outputs, Registry};
use keiri_run::value::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const ACCOUNTS: &[&str] = &[
    "現金",
    "普通預金",
    "売掛金",
    "買掛金",
    "旅費交通費",
    "会議費",
    "交際費",
    "消耗品費",
    "通信費",
    "水道光熱費",
    "支払手数料",
    "売上高",
];

/// A deterministic journal in the shapes accounting software exports: 和暦 and slash dates,
/// amounts with commas, ¥ and △.
fn journal(rows: usize) -> Vec<u8> {
    let mut text = String::with_capacity(rows * 64);
    text.push_str("伝票番号,伝票日付,勘定科目,金額,摘要\r\n");
    let mut seed: u64 = 0x5eed;
    for i in 0..rows {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = (seed >> 33) as usize;
        let month = r % 12 + 1;
        let day = r / 12 % 28 + 1;
        let year = if month >= 4 { 2024 } else { 2025 };
        let date = match r % 3 {
            0 => format!("{year}/{month:02}/{day:02}"),
            1 => format!("令和{}年{month}月{day}日", year - 2018),
            _ => format!("R{}.{month}.{day}", year - 2018),
        };
        let amount = (r / 336) % 1_000_000 + 1;
        let amount_text = match r % 4 {
            0 => format!("\"{}\"", group(amount)),
            1 => format!("\"¥{}\"", group(amount)),
            2 => format!("\"△{}\"", group(amount)),
            _ => amount.to_string(),
        };
        let account = ACCOUNTS[(r >> 7) % ACCOUNTS.len()];
        text.push_str(&format!(
            "{i},{date},{account},{amount_text},取引{}\r\n",
            r % 1000
        ));
    }
    encoding_rs::SHIFT_JIS.encode(&text).0.into_owned()
}

fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

type Error = Box<dyn std::error::Error>;

fn call(registry: &Registry, dir: &Path, id: &str, inputs: Inputs) -> Result<Outputs, Error> {
    let cancel = CancellationToken::new();
    let out_dir = dir.join("out");
    let ctx = BlockContext {
        node_id: id,
        base_dir: dir,
        paths: &keiri_fs::PathPolicy::trusted(dir),
        out_dir: &out_dir,
        cancel: &cancel,
        write: false,
        answer: None,
        allow_hosts: &[],
        limits: &Default::default(),
        now: chrono::Utc::now(),
        llm: None,
        calls: &CallSink::none(),
        lang: keiri_plan::Lang::Ja,
        columns_used: None,
        outputs_taken: None,
        pieces: None,
    };
    let block = registry.get(id).ok_or(format!("{id} is not registered"))?;
    Ok(block(&ctx, &inputs)?)
}

/// The `rows` output of a node, the rest of its outputs dropped: like the engine, which
/// drops a node's outputs once the last node that refers to them has run, the pipeline does
/// not keep a stage's table after the next stage has read it.
fn rows_of(outputs: Outputs) -> Result<Value, Error> {
    let mut outputs = outputs.0;
    Ok(outputs.shift_remove("rows").ok_or("no rows output")?)
}

/// A memory figure of this process from /proc (Linux): `VmHWM` is the peak resident set so
/// far, `VmRSS` the current one.
fn status_mb(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn peak_rss_mb() -> Option<f64> {
    status_mb("VmHWM:")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), Error> {
    // `cargo bench` passes --bench; a filter argument that does not name us skips the run.
    if std::env::args()
        .skip(1)
        .any(|a| !a.starts_with('-') && !"journal".contains(a.as_str()))
    {
        return Ok(());
    }
    let rows: usize = std::env::var("KEIRI_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let runs: usize = std::env::var("KEIRI_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    if let Ok(csv) = std::env::var("KEIRI_BENCH_CSV") {
        return pipeline(Path::new(&csv), runs);
    }
    let dir = tempfile::tempdir()?;
    let csv = dir.path().join("journal.csv");
    keiri_fs::write_atomic(&csv, &journal(rows))?;
    let size_mb = std::fs::metadata(&csv)
        .map(|m| m.len() as f64 / 1e6)
        .unwrap_or(0.0);
    println!("journal: {rows} rows, {size_mb:.1} MB Shift_JIS");
    let status = std::process::Command::new(std::env::current_exe()?)
        .env("KEIRI_BENCH_CSV", &csv)
        .env("KEIRI_BENCH_RUNS", runs.to_string())
        .status()?;
    if !status.success() {
        return Err(format!("the pipeline run failed: {status}").into());
    }
    Ok(())
}

/// The pipeline, `runs` times, on `csv`; prints the median per stage and the peak RSS.
fn pipeline(csv: &Path, runs: usize) -> Result<(), Error> {
    let dir = csv.parent().ok_or("the journal has no folder")?;
    let registry = Registry::builtins();
    let stages = [
        "csv.read",
        "normalize_dates",
        "fiscal_period",
        "normalize_amounts",
        "group_aggregate",
        "pivot",
        "variance_check",
        "excel.write_table",
        "total",
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); stages.len()];
    // Resident and peak memory after each stage of the first run: where the peak happens.
    let mut memory: Vec<(f64, f64)> = Vec::new();
    let mut groups = 0;
    let mut flagged = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let mut t = Instant::now();
        let mut lap = |i: usize, times: &mut Vec<Vec<Duration>>| {
            times[i].push(t.elapsed());
            if times[i].len() == 1 {
                memory.push((
                    status_mb("VmRSS:").unwrap_or(0.0),
                    peak_rss_mb().unwrap_or(0.0),
                ));
            }
            t = Instant::now();
        };
        let read = call(
            &registry,
            dir,
            "csv.read",
            Inputs::from_pairs([("path", json!("journal.csv"))]),
        )?;
        lap(0, &mut times);
        let dated = call(
            &registry,
            dir,
            "transforms.normalize_dates",
            Inputs::from_pairs([
                ("rows", rows_of(read)?),
                ("fields", json!(["伝票日付"]).into()),
            ]),
        )?;
        lap(1, &mut times);
        let period = call(
            &registry,
            dir,
            "transforms.fiscal_period",
            Inputs::from_pairs([
                ("rows", rows_of(dated)?),
                ("date_field", json!("伝票日付").into()),
            ]),
        )?;
        lap(2, &mut times);
        let amounts = call(
            &registry,
            dir,
            "transforms.normalize_amounts",
            Inputs::from_pairs([
                ("rows", rows_of(period)?),
                ("fields", json!(["金額"]).into()),
            ]),
        )?;
        lap(3, &mut times);
        let grouped = call(
            &registry,
            dir,
            "transforms.group_aggregate",
            Inputs::from_pairs([
                ("rows", rows_of(amounts)?),
                ("by", json!(["勘定科目", "year_month"]).into()),
                ("aggregations", json!([{"field": "金額", "op": "sum", "as": "金額合計"}, {"field": "金額", "op": "count", "as": "件数"}]).into()),
            ]),
        )?;
        lap(4, &mut times);
        groups = grouped
            .get("group_count")
            .map(|v| v.to_json())
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        let pivoted = call(
            &registry,
            dir,
            "transforms.pivot",
            Inputs::from_pairs([
                ("rows", rows_of(grouped)?),
                ("index", json!(["勘定科目"]).into()),
                ("columns", json!("year_month").into()),
                ("values", json!("金額合計").into()),
                ("fill_value", json!(0).into()),
            ]),
        )?;
        lap(5, &mut times);
        let checked = call(
            &registry,
            dir,
            "control.variance_check",
            Inputs::from_pairs([
                ("rows", rows_of(pivoted)?),
                ("key_field", json!("勘定科目").into()),
                ("current_field", json!("2025-03").into()),
                ("comparison_field", json!("2025-02").into()),
                ("threshold_rate", json!(0.01).into()),
            ]),
        )?;
        lap(6, &mut times);
        flagged = checked
            .get("issues")
            .map(|v| v.to_json())
            .and_then(|v| v.as_array().map(Vec::len))
            .unwrap_or(0);
        call(
            &registry,
            dir,
            "excel.write_table",
            Inputs::from_pairs([
                ("rows", rows_of(checked)?),
                ("out_name", json!("variance.xlsx").into()),
                ("sheet_name", json!("増減").into()),
                ("on_conflict", json!("overwrite").into()),
            ]),
        )?;
        lap(7, &mut times);
        times[8].push(start.elapsed());
    }
    println!("groups: {groups} (accounts × months), flagged: {flagged}, runs: {runs}");
    for (i, (name, t)) in stages.iter().zip(times).enumerate() {
        let memory = memory
            .get(i)
            .map(|(rss, peak)| {
                format!("   (run 1 after it: RSS {rss:>4.0} MB, peak {peak:>4.0} MB)")
            })
            .unwrap_or_default();
        println!(
            "  {name:<18} median {:>8.1} ms{memory}",
            median(t).as_secs_f64() * 1e3
        );
    }
    if let Some(mb) = peak_rss_mb() {
        println!("  peak RSS           {mb:>8.0} MB");
    }
    Ok(())
}
