//! `keiri run PLAN.yaml`: runs a plan with the builtin blocks and records it under
//! `runs/<plan_id>/<run_id>/`.
//!
//! On a terminal each node gets an `indicatif` line (spinner while it runs, with how far a long
//! node has got — `120,000 / 200,000 行（60%）` — then ✓/✗/–);
//! otherwise one plain line per event on stderr. Exit codes: 0 the run finished, 1 a node
//! failed (or the run was cancelled, or the plan is invalid), 2 usage or I/O error.
//!
//! A human-in-the-loop node (`ui.*`, `control.approval`) pauses the run: its answer comes from
//! `--answers FILE` (node id → answer), else it is asked on a terminal (`ask`), and the run
//! resumes; with neither the run ends `paused` (exit 1) and says how to resume it.
//!
//! Ctrl-C (SIGINT) cancels the run: the node in progress is abandoned, `state.json` keeps every
//! finished node, and `--resume RUN_ID` continues from there. A second Ctrl-C exits at once.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::Context as _;
use indexmap::IndexMap;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use keiri_api::{
    CancellationToken, Context, Lang, PlanRunRequest, PlanRunResponse, RunEvent, RunResumeRequest,
};
use serde_json::Value;

use crate::output::print_json;

mod ask;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The plan YAML file (relative paths here and in --input/--out-dir are relative to the
    /// workspace).
    #[arg(value_name = "PLAN")]
    pub plan: PathBuf,
    #[command(flatten)]
    pub given: RunVars,
    /// Where runs are recorded instead of <workspace>/runs.
    #[arg(long = "out-dir", value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Let output blocks write to the paths the plan names; without it every file the run
    /// writes stays in its run directory.
    #[arg(long)]
    pub write: bool,
    /// Continue this run after its last finished node.
    #[arg(long, value_name = "RUN_ID")]
    pub resume: Option<String>,
    /// An environment variable `${env.NAME}` may read (repeatable); others are refused.
    #[arg(long = "allow-env", value_name = "NAME")]
    pub allow_env: Vec<String>,
    /// Answers to human-in-the-loop nodes (`ui.*`, `control.approval`): a YAML or JSON
    /// mapping of node id to answer (relative to the workspace). Without it a paused node is
    /// asked on a terminal, and elsewhere the run stops as `paused` (resume it with
    /// `--resume RUN_ID --answers FILE`). The answers, by the node's block:
    /// `ui.confirmation`, `ui.diff_viewer`: `yes` / `no` (or `{approved: yes, comment: …}`);
    /// `ui.table_review`: `yes`, or `{approved: yes, excluded: [row index], changes:
    /// [{row_index, field, after}]}`; `ui.interactive_input`: `{values: {field id: value}}`;
    /// `control.approval`: `{decisions: [{approver: 佐藤, decision: 承認, comment: …}]}`.
    /// A yes or a no may be written true/false, yes/no, はい/いいえ or 承認/却下.
    #[arg(long = "answers", value_name = "FILE")]
    pub answers: Option<PathBuf>,
}

/// The vars and input files a run is given (`keiri run`, and `keiri validate`, which checks
/// the plan as that run would be).
#[derive(Debug, Default, clap::Args)]
pub struct RunVars {
    /// Set a plan var (`NAME=VALUE`; the value is read as JSON when it parses, else as text).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// A YAML or JSON file of vars (a mapping); `--var` wins over it.
    #[arg(long = "vars-file", value_name = "FILE")]
    pub vars_file: Option<PathBuf>,
    /// An input file: sets `vars.NAME` to PATH. Inputs are read, never modified.
    #[arg(long = "input", value_name = "NAME=PATH")]
    pub inputs: Vec<String>,
}

fn split_pair<'a>(raw: &'a str, what: &str) -> anyhow::Result<(&'a str, &'a str)> {
    raw.split_once('=')
        .filter(|(k, _)| !k.trim().is_empty())
        .map(|(k, v)| (k.trim(), v))
        .with_context(|| format!("{what} {raw:?} is not NAME=VALUE"))
}

/// `--vars-file` then `--var`; `--var` values are JSON when they parse (`10`, `true`,
/// `[1,2]`), else text.
pub fn vars(args: &RunVars) -> anyhow::Result<IndexMap<String, Value>> {
    let mut vars = IndexMap::new();
    if let Some(file) = &args.vars_file {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        vars = keiri_api::parse_vars(&text).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    for raw in &args.vars {
        let (k, v) = split_pair(raw, "--var")?;
        let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_string()));
        vars.insert(k.to_string(), value);
    }
    Ok(vars)
}

pub fn inputs(args: &RunVars) -> anyhow::Result<IndexMap<String, String>> {
    args.inputs
        .iter()
        .map(|raw| split_pair(raw, "--input").map(|(k, v)| (k.to_string(), v.to_string())))
        .collect()
}

/// What an event does to the progress lines: a node's spinner starts, ends with the event's
/// text, or the text is printed above them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    Start,
    End,
    Note,
    /// How far the node has got: its spinner's text.
    Progress,
}

/// `1234567` as `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `120,000 / 200,000 rows (60%)`, `12.3 / 45.6 MB (27%)`, `1,234 files` (no total known).
fn progress_text(
    done: u64,
    total: Option<u64>,
    unit: keiri_api::ProgressUnit,
    lang: Lang,
) -> String {
    use keiri_api::ProgressUnit as U;
    let ja = lang == Lang::Ja;
    let count = |n: u64| match unit {
        U::Bytes => format!("{:.1}", n as f64 / 1e6),
        _ => grouped(n),
    };
    let word = match (unit, ja) {
        (U::Rows, true) => " 行",
        (U::Rows, false) => " rows",
        (U::Bytes, _) => " MB",
        (U::Pages, true) => " ページ",
        (U::Pages, false) => " pages",
        (U::Files, true) => " ファイル",
        (U::Files, false) => " files",
    };
    match total {
        Some(total) if total > 0 => {
            let percent = (done.min(total) * 100) / total;
            if ja {
                format!("{} / {}{word}（{percent}%）", count(done), count(total))
            } else {
                format!("{} / {}{word} ({percent}%)", count(done), count(total))
            }
        }
        _ => format!("{}{word}", count(done)),
    }
}

/// The node an event is about (empty for the run), its line of text in the user's language,
/// and what it does to the node's progress line.
fn describe(event: &RunEvent, lang: Lang) -> (&str, String, Line) {
    use RunEvent as E;
    let ja = lang == Lang::Ja;
    let pick = |j: String, e: String| lang.pick(j, e);
    match event {
        E::RunStart {
            run_id, plan_id, ..
        } => (
            "",
            pick(
                format!("実行 {run_id}（{plan_id}）"),
                format!("run {run_id} ({plan_id})"),
            ),
            Line::Note,
        ),
        E::NodeStart { node, .. } => (node, format!("… {node}"), Line::Start),
        E::NodeProgress {
            node,
            done,
            total,
            unit,
        } => (
            node,
            format!("… {node} {}", progress_text(*done, *total, *unit, lang)),
            Line::Progress,
        ),
        E::NodeFinish {
            node,
            duration_ms,
            rows,
            ..
        } => {
            let text = match rows {
                Some(rows) => pick(
                    format!("✓ {node}（{duration_ms} ms、{rows} 行）"),
                    format!("✓ {node} ({duration_ms} ms, {rows} rows)"),
                ),
                None => pick(
                    format!("✓ {node}（{duration_ms} ms）"),
                    format!("✓ {node} ({duration_ms} ms)"),
                ),
            };
            (node, text, Line::End)
        }
        E::NodeError {
            node,
            code,
            message_ja,
            message_en,
            retrying,
            ..
        } => {
            let text = match (ja, *retrying) {
                (true, true) => format!("✗ {node} {code}: {message_ja}（再試行します）"),
                (true, false) => format!("✗ {node} {code}: {message_ja}"),
                (false, true) => format!("✗ {node} {code}: {message_en} (retrying)"),
                (false, false) => format!("✗ {node} {code}: {message_en}"),
            };
            (node, text, Line::End)
        }
        E::NodeWarning {
            node,
            code,
            message_ja,
            message_en,
        } => (
            node,
            format!(
                "  ⚠ {node} {code}: {}",
                if ja { message_ja } else { message_en }
            ),
            Line::Note,
        ),
        E::NodeSkipped { node, reason } => (
            node,
            pick(
                format!("– {node} 実行しません: {reason}"),
                format!("– {node} skipped: {reason}"),
            ),
            Line::End,
        ),
        E::NodeReused { node } => (
            node,
            pick(
                format!("✓ {node}（前回の実行の結果）"),
                format!("✓ {node} (from the earlier run)"),
            ),
            Line::End,
        ),
        E::NodeAnswered { node, by, at } => (
            node,
            pick(
                format!("  ✓ {node} 回答: {by}（{at}）"),
                format!("  ✓ {node} answered by {by} at {at}"),
            ),
            Line::Note,
        ),
        E::LlmCall { node, call } => {
            let outcome = match (&call.error, ja) {
                (Some(code), true) => format!("失敗 {code}"),
                (Some(code), false) => format!("failed: {code}"),
                (None, true) => format!("{} トークン", call.total_tokens),
                (None, false) => format!("{} tokens", call.total_tokens),
            };
            let text = format!(
                "  ↳ {node} AI {} · {}: {outcome}, {} ms",
                call.model, call.purpose, call.duration_ms
            );
            (node, text, Line::Note)
        }
        E::NodePaused {
            node,
            message_ja,
            message_en,
            ..
        } => (
            node,
            pick(
                format!("? {node} 回答待ち: {message_ja}"),
                format!("? {node} waiting for an answer: {message_en}"),
            ),
            Line::End,
        ),
        E::Redirect { node, redirect } => {
            let done = match (redirect.followed, ja) {
                (true, true) => "たどりました",
                (false, true) => "たどっていません",
                (true, false) => "followed",
                (false, false) => "not followed",
            };
            let text = format!(
                "  ↳ {node} redirect {} → {}: {done} ({})",
                redirect.from, redirect.to, redirect.reason
            );
            (node, text, Line::Note)
        }
        E::RunFinish { status, .. } => {
            let text = if ja {
                let word = match status.as_str() {
                    "finished" => "完了",
                    "failed" => "失敗",
                    "cancelled" => "中止",
                    "paused" => "回答待ちで一時停止",
                    other => other,
                };
                format!("実行 {word}")
            } else {
                format!("run {}", status.as_str())
            };
            ("", text, Line::Note)
        }
    }
}

/// Shows the events: a progress line per node on a terminal, plain lines otherwise.
struct Progress {
    lang: Lang,
    multi: Option<MultiProgress>,
    bars: Mutex<HashMap<String, ProgressBar>>,
}

impl Progress {
    /// Runs `f` (a terminal prompt) with the progress lines out of its way.
    fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.multi {
            Some(multi) => multi.suspend(f),
            None => f(),
        }
    }

    fn new(lang: Lang) -> Progress {
        let multi = std::io::stderr().is_terminal().then(MultiProgress::new);
        Progress {
            lang,
            multi,
            bars: Mutex::new(HashMap::new()),
        }
    }

    fn show(&self, event: &RunEvent) {
        let (node, text, line) = describe(event, self.lang);
        let Some(multi) = &self.multi else {
            eprintln!("{text}");
            return;
        };
        let mut bars = self.bars.lock().unwrap_or_else(|p| p.into_inner());
        match line {
            Line::Start => {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(
                    ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                bar.set_message(node.to_string());
                bar.enable_steady_tick(Duration::from_millis(100));
                if let Some(old) = bars.insert(node.to_string(), bar) {
                    old.finish_and_clear();
                }
            }
            Line::End => {
                let bar = bars
                    .remove(node)
                    .unwrap_or_else(|| multi.add(ProgressBar::new_spinner()));
                bar.set_style(
                    ProgressStyle::with_template("{msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                bar.finish_with_message(text);
            }
            Line::Note => {
                let _ = multi.println(text);
            }
            // A node's spinner says how far it has got (no line of its own).
            Line::Progress => {
                if let Some(bar) = bars.get(node) {
                    bar.set_message(text.trim_start_matches("… ").to_string());
                }
            }
        }
    }
}

pub fn run(
    ctx: &Context,
    args: &Args,
    json: bool,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<ExitCode> {
    // The names the user allowed on the command line belong to the context, not to the
    // request: a request may only narrow the user's list.
    let mut own = ctx.clone();
    own.allow_env.extend(args.allow_env.iter().cloned());
    let ctx = &own;
    let vars = vars(&args.given)?;
    let inputs = inputs(&args.given)?;
    let given = match &args.answers {
        Some(file) => {
            // Relative to the workspace, like the plan and --input paths.
            let file = ctx.workspace.join(file);
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            keiri_api::parse_vars(&text).map_err(|e| anyhow::anyhow!("the answers file: {e}"))?
        }
        None => IndexMap::new(),
    };
    let interactive = !json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let plan_path = Some(args.plan.to_string_lossy().into_owned());
    let runs_dir = args
        .out_dir
        .as_ref()
        .map(|d| d.to_string_lossy().into_owned());
    let progress = Progress::new(ctx.lang);
    let show = |event: RunEvent| progress.show(&event);
    let cancel = CancellationToken::new();
    cancel_on_ctrl_c(runtime, &cancel, ctx.lang);
    let resume = |run_id: &str, answers: IndexMap<String, Value>| {
        let (sink, events) = keiri_api::events();
        let call = keiri_api::run_resume(
            ctx,
            RunResumeRequest {
                run_id: run_id.to_string(),
                plan_path: plan_path.clone(),
                yaml: None,
                plan_id: None,
                vars: vars.clone(),
                inputs: inputs.clone(),
                allow_env: Vec::new(),
                write: args.write,
                answers,
                runs_dir: runs_dir.clone(),
                lang: Some(ctx.lang),
            },
            &sink,
            &cancel,
        );
        runtime.block_on(events.drive(call, show))
    };
    let mut result = match &args.resume {
        None => {
            let (sink, events) = keiri_api::events();
            let call = keiri_api::plan_run(
                ctx,
                PlanRunRequest {
                    plan_path: plan_path.clone(),
                    yaml: None,
                    vars: vars.clone(),
                    inputs: inputs.clone(),
                    allow_env: Vec::new(),
                    write: args.write,
                    runs_dir: runs_dir.clone(),
                    lang: Some(ctx.lang),
                },
                &sink,
                &cancel,
            );
            runtime.block_on(events.drive(call, show))
        }
        Some(run_id) => resume(run_id, given.clone()),
    };
    // A paused run continues as long as there are answers: from the file, else asked here.
    let mut asked: Vec<String> = Vec::new();
    while let Ok(res) = &result
        && res.status == keiri_api::RunStatus::Paused
        && !cancel.is_cancelled()
    {
        let mut answers = IndexMap::new();
        for p in &res.paused {
            let answer = match given.get(&p.node) {
                Some(a) if !asked.contains(&p.node) => Some(a.clone()),
                _ if interactive => progress.suspend(|| ask::answer(p, ctx.lang))?,
                _ => None,
            };
            if let Some(answer) = answer {
                asked.push(p.node.clone());
                answers.insert(p.node.clone(), answer);
            }
        }
        if answers.is_empty() {
            break;
        }
        result = resume(&res.run_id, answers);
    }
    match result {
        Ok(res) => report(&res, json, ctx.lang),
        // An invalid plan: each finding with its line, node and hint, as `keiri validate` says.
        Err(err) => super::plan::findings_or_error(err, &args.plan.display().to_string(), json),
    }
}

/// Cancels `cancel` at the first Ctrl-C; the second one ends the process with the shell's
/// usual 130. The handler is in place when this returns (tokio registers the signal at once),
/// so a Ctrl-C right after the run starts cannot kill the process half-way. It listens on the
/// CLI's runtime.
fn cancel_on_ctrl_c(runtime: &tokio::runtime::Runtime, cancel: &CancellationToken, lang: Lang) {
    #[cfg(unix)]
    let interrupts = {
        let _entered = runtime.enter();
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()) {
            Ok(signal) => signal,
            // Without it a run still works; it just cannot be interrupted cleanly.
            Err(_) => return,
        }
    };
    let cancel = cancel.clone();
    runtime.spawn(async move {
        #[cfg(unix)]
        let mut interrupts = interrupts;
        #[cfg(unix)]
        let mut next = async || interrupts.recv().await.is_some();
        #[cfg(not(unix))]
        let next = async || tokio::signal::ctrl_c().await.is_ok();
        if next().await {
            eprintln!(
                "{}",
                lang.pick(
                    "中断しています…（もう一度 Ctrl-C で即終了）",
                    "cancelling… (Ctrl-C again to quit now)"
                )
            );
            cancel.cancel();
        }
        if next().await {
            std::process::exit(130);
        }
    });
}

/// The run's summary on stdout: `key: value` lines whose keys stay the same in every language
/// (scripts read them; `--json` is the whole response), their free text in `lang`.
fn report(res: &PlanRunResponse, json: bool, lang: Lang) -> anyhow::Result<ExitCode> {
    if json {
        print_json(res)?;
    } else {
        println!("run_id: {}", res.run_id);
        println!("run_dir: {}", res.run_dir);
        println!("status: {}", res.status);
        for f in &res.failures {
            println!("failed: {} {}: {}", f.node, f.code, f.message);
            if let Some(hint) = &f.hint {
                println!("    = {hint}");
            }
        }
        for w in &res.warnings {
            println!("warning: {} {}: {}", w.node, w.code, w.message);
        }
        // Every file the run wrote; a node that wrote many (an unzipped archive) is cut short.
        const SHOWN: usize = 20;
        for f in res.files.iter().take(SHOWN) {
            println!("wrote: {} {}", f.node, f.path);
        }
        if res.files.len() > SHOWN {
            let more = res.files.len() - SHOWN;
            let dir = &res.run_dir;
            println!(
                "wrote: {}",
                lang.pick(
                    format!("…ほか {more} 件（{dir} の下。すべては --json で一覧できます）"),
                    format!("… {more} more under {dir} (--json lists them all)"),
                )
            );
        }
        for p in &res.paused {
            println!("paused: {}: {}", p.node, p.message);
        }
        if !res.paused.is_empty() {
            println!(
                "resume: keiri run PLAN --resume {} --answers FILE   {}",
                res.run_id,
                lang.pick(
                    "（FILE: ノードIDごとの回答を書いたファイル）",
                    "(FILE: node id → answer)"
                )
            );
        }
    }
    Ok(match res.status {
        // Failures `on_error: continue` let through: finished, but not cleanly.
        keiri_api::RunStatus::Finished if !res.failures.is_empty() => ExitCode::from(3),
        keiri_api::RunStatus::Finished => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(event: serde_json::Value) -> (String, String, Line) {
        let event: RunEvent = serde_json::from_value(event).unwrap();
        let (node, text, line) = describe(&event, Lang::En);
        (node.to_string(), text, line)
    }

    #[test]
    fn each_event_has_its_line_and_its_effect_on_the_node_spinner() {
        let node_start = serde_json::json!({"event": "node_start", "node": "read", "attempt": 1});
        assert_eq!(
            line(node_start),
            ("read".into(), "… read".into(), Line::Start)
        );
        let finish = serde_json::json!({"event": "node_finish", "node": "read", "duration_ms": 12,
            "rows": 3, "outputs": {}});
        assert_eq!(
            line(finish),
            ("read".into(), "✓ read (12 ms, 3 rows)".into(), Line::End)
        );
        let error = serde_json::json!({"event": "node_error", "node": "read", "code": "FILE_NOT_FOUND",
            "message_ja": "ない", "message_en": "missing", "attempt": 1, "retrying": true});
        assert_eq!(
            line(error),
            (
                "read".into(),
                "✗ read FILE_NOT_FOUND: missing (retrying)".into(),
                Line::End
            )
        );
        let call = serde_json::json!({"event": "llm_call", "node": "ask", "call": {
            "purpose": "rows 1-20", "provider": "openai", "model": "m", "strategy": null,
            "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "requests": 1,
            "duration_ms": 40, "error": "LLM_TIMEOUT"}});
        assert_eq!(
            line(call).1,
            "  ↳ ask AI m · rows 1-20: failed: LLM_TIMEOUT, 40 ms"
        );
        let progress = serde_json::json!({"event": "node_progress", "node": "read",
            "done": 1_234_567, "total": 3_000_000, "unit": "rows"});
        assert_eq!(
            line(progress),
            (
                "read".into(),
                "… read 1,234,567 / 3,000,000 rows (41%)".into(),
                Line::Progress
            )
        );
        let bytes = serde_json::json!({"event": "node_progress", "node": "read",
            "done": 12_345_678, "total": 45_600_000, "unit": "bytes"});
        assert_eq!(line(bytes).1, "… read 12.3 / 45.6 MB (27%)");
        let unknown = serde_json::json!({"event": "node_progress", "node": "list",
            "done": 999, "total": null, "unit": "files"});
        assert_eq!(line(unknown).1, "… list 999 files");
        let end = serde_json::json!({"event": "run_finish", "status": "paused", "duration_ms": 5,
            "failed": []});
        assert_eq!(line(end), (String::new(), "run paused".into(), Line::Note));
    }

    /// In Japanese the lines are Japanese, messages included: no English sentence on the way.
    #[test]
    fn in_japanese_the_progress_lines_are_japanese() {
        let ja = |event: serde_json::Value| {
            let event: RunEvent = serde_json::from_value(event).unwrap();
            describe(&event, Lang::Ja).1
        };
        for (event, want) in [
            (
                serde_json::json!({"event": "node_finish", "node": "read", "duration_ms": 12, "rows": 3, "outputs": {}}),
                "✓ read（12 ms、3 行）",
            ),
            (
                serde_json::json!({"event": "node_error", "node": "read", "code": "FILE_NOT_FOUND",
                    "message_ja": "ファイルがありません", "message_en": "missing", "attempt": 1, "retrying": true}),
                "✗ read FILE_NOT_FOUND: ファイルがありません（再試行します）",
            ),
            (
                serde_json::json!({"event": "node_warning", "node": "dups", "code": "NO_ROWS",
                    "message_ja": "0 行です", "message_en": "no rows"}),
                "  ⚠ dups NO_ROWS: 0 行です",
            ),
            (
                serde_json::json!({"event": "node_progress", "node": "read", "done": 100, "total": 200, "unit": "rows"}),
                "… read 100 / 200 行（50%）",
            ),
            (
                serde_json::json!({"event": "node_reused", "node": "read"}),
                "✓ read（前回の実行の結果）",
            ),
            (
                serde_json::json!({"event": "node_paused", "node": "ok", "question": {},
                    "message_ja": "確認待ち", "message_en": "waiting"}),
                "? ok 回答待ち: 確認待ち",
            ),
            (
                serde_json::json!({"event": "node_answered", "node": "ok", "by": "sato", "at": "2026-11-30T01:00:00Z"}),
                "  ✓ ok 回答: sato（2026-11-30T01:00:00Z）",
            ),
            (
                serde_json::json!({"event": "run_finish", "status": "finished", "duration_ms": 5, "failed": []}),
                "実行 完了",
            ),
        ] {
            assert_eq!(ja(event), want);
        }
    }
}
