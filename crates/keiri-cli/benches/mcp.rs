//! Benchmark: what the MCP layer costs. How long `keiri mcp` takes from spawn to its answer to
//! `initialize`, and the round trip of a `tools/call` over stdio compared with calling the same
//! `keiri-api` function in-process (so the difference is JSON-RPC framing, (de)serialisation,
//! the blocking-thread hop and the pipe).
//!
//! `cargo bench -p keiri-cli --bench mcp`. Numbers go in the crate README; nothing here
//! asserts on time.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// One measured in-process call.
type Step<'a> = dyn Fn() -> Result<()> + 'a;

const STARTS: usize = 15;
const CALLS: usize = 300;

const PLAN: &str = r#"apiVersion: v1
id: invoice_duplicates
version: 1.0.0
graph:
  - id: read
    block: csv.read
    in: {path: invoices.csv, encoding: cp932}
    out: {rows: rows}
  - id: dupes
    block: matching.duplicate_invoices
    in: {rows: "${read.rows}"}
    out: {clusters: clusters}
"#;

struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Session {
    fn start(root: &Path, catalog: &Path) -> Result<Session> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_keiri"))
            .arg("--catalog")
            .arg(catalog)
            .args(["mcp", "--root"])
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Session {
            child,
            stdin,
            stdout,
            next_id: 1,
        })
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{message}")?;
        self.stdin.flush()?;
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        let answer: Value = serde_json::from_str(&line)?;
        if answer["id"] != id || answer.get("error").is_some() {
            return Err(format!("unexpected answer to {method}: {line}").into());
        }
        Ok(answer)
    }

    fn initialize(&mut self) -> Result<()> {
        self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}),
        )?;
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )?;
        Ok(())
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Result<()> {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        if answer["result"]["isError"] != false {
            return Err(format!("{tool} failed: {answer}").into());
        }
        Ok(())
    }

    fn close(mut self) -> Result<()> {
        drop(self.stdin);
        self.child.wait()?;
        Ok(())
    }
}

/// Median and 95th percentile of `samples`.
fn summary(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95))
}

fn time<F: FnMut() -> Result<()>>(runs: usize, mut f: F) -> Result<(Duration, Duration)> {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        f()?;
        samples.push(start.elapsed());
    }
    Ok(summary(samples))
}

fn row(what: &str, (median, p95): (Duration, Duration)) {
    println!(
        "| {what} | {:.3} ms | {:.3} ms |",
        median.as_secs_f64() * 1e3,
        p95.as_secs_f64() * 1e3
    );
}

fn run() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    let text: String = (1..=200)
        .map(|i| format!("{i}行目: 請求書 {i}\n"))
        .collect();
    write_input(&root.join("notes.txt"), text.as_bytes())?;
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../block_specs")
        .canonicalize()?;

    println!("| measurement | median | p95 |");
    println!("|---|---|---|");

    let cold = time(STARTS, || {
        let mut session = Session::start(&root, &catalog)?;
        session.initialize()?;
        session.close()
    })?;
    row(
        &format!("spawn → `initialize` answered ({STARTS} runs)"),
        cold,
    );

    let metrics_args = json!({"file_paths": ["notes.txt"], "output_format": "json"});
    let section_args = json!({"file_path": "notes.txt", "start_line": 10, "end_line": 60});
    let plan_args = json!({"yaml": PLAN});
    let mut session = Session::start(&root, &catalog)?;
    session.initialize()?;
    let list = time(CALLS, || session.request("tools/list", json!({})).map(drop))?;
    row(&format!("`tools/list` ({CALLS} calls)"), list);
    let over_mcp = [
        ("check_code_scale", metrics_args.clone()),
        ("extract_code_section", section_args.clone()),
        ("validate_plan", plan_args.clone()),
    ]
    .into_iter()
    .map(|(tool, args)| {
        let timing = time(CALLS, || session.call(tool, args.clone()))?;
        row(&format!("`{tool}` over MCP ({CALLS} calls)"), timing);
        Ok(timing)
    })
    .collect::<Result<Vec<_>>>()?;
    session.close()?;

    let mut ctx = keiri_api::Context::new(&root).with_catalog_dirs(vec![catalog.clone()]);
    ctx.allowed_roots = vec![root.clone()];
    let in_process: [(&str, Box<Step<'_>>); 3] = [
        (
            "check_code_scale",
            Box::new(|| {
                let req = serde_json::from_value(metrics_args.clone())?;
                serde_json::to_value(keiri_api::documents_metrics(&ctx, req)?)?;
                Ok(())
            }),
        ),
        (
            "extract_code_section",
            Box::new(|| {
                let req = serde_json::from_value(section_args.clone())?;
                serde_json::to_value(keiri_api::documents_extract_sections(&ctx, req)?)?;
                Ok(())
            }),
        ),
        (
            "validate_plan",
            Box::new(|| {
                let req = serde_json::from_value(plan_args.clone())?;
                serde_json::to_value(keiri_api::plan_validate(&ctx, req)?)?;
                Ok(())
            }),
        ),
    ];
    for ((tool, f), mcp) in in_process.iter().zip(&over_mcp) {
        let direct = time(CALLS, f)?;
        row(&format!("`{tool}` in-process ({CALLS} calls)"), direct);
        println!(
            "| `{tool}`: what MCP adds (median difference) | {:.3} ms | |",
            mcp.0.saturating_sub(direct.0).as_secs_f64() * 1e3
        );
    }
    Ok(())
}

/// Writes the benchmark's input file (setup; atomic like every product write).
fn write_input(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("benchmark failed: {e}");
        std::process::exit(1);
    }
}
