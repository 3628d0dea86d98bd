//! The block interface: a builtin is a plain function from resolved inputs to outputs.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use indexmap::IndexMap;
use tokio_util::sync::CancellationToken;

use polars::prelude::DataFrame;
use serde::{Deserialize, Serialize};

use crate::value::{Row, Value};

/// Stable codes of block failures (serialised as `BLOCK_FAILED`, `INPUT_INVALID`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The block ran and failed (bad data, a missing column, a parse error).
    BlockFailed,
    /// An input is missing, of the wrong type, or outside its enum.
    InputInvalid,
    /// A column the block would read (named by the plan, by the block's default, in a rule,
    /// a condition, an expression or a mapping) is not in the rows it gets. Raised before the
    /// block runs (the engine checks every column the spec declares against the input
    /// tables) and by a block that meets one, never answered with a null, a skip or an empty
    /// result.
    ColumnNotFound,
    /// A file the block needs does not exist or cannot be read.
    FileNotFound,
    /// The run was cancelled.
    Cancelled,
    /// The node took longer than its `timeout_ms`.
    Timeout,
    /// The spec names an entrypoint that has no implementation.
    UnknownBlock,
    /// A `${…}` reference has no value (a missing node output, var or config key).
    RefUnresolved,
    /// `${env.X}` where X is not on the run's allowlist.
    EnvNotAllowed,
    /// A `when`/`while` condition cannot be evaluated.
    ExprInvalid,
    /// A subflow calls a plan that is not registered in `designs/`.
    SubflowNotFound,
    /// A subflow calls itself, directly or through other subflows.
    SubflowCycle,
    /// A human-in-the-loop block (`ui.*`, `control.approval`) needs a person's answer: the
    /// run pauses there ([`BlockError::question`] says what to ask) and `--resume` with the
    /// answer continues it. Not a failure.
    AwaitingInput,
    /// A network block was asked to reach a host that is not on the run's allowlist
    /// ([`BlockContext::allow_hosts`]), directly or through a redirect.
    HostNotAllowed,
    /// A path the plan names is outside the roots of the surface that started the run, or
    /// denied there (`.env`, key files, `--deny` globs) ([`BlockContext::paths`]).
    PathDenied,
    /// An append-only, hash-chained log (`control.audit_log`) no longer verifies: a line was
    /// changed, removed or inserted. Nothing is appended to it.
    AuditChainBroken,
    /// The work would pass a bound of the runtime (a `foreach` over too many items, a `while`
    /// past its iteration ceiling, a join whose result would be too many rows): stopped
    /// before it takes the machine's memory, with the limit and what to do in the message.
    LimitExceeded,
    /// A resume ran a node again whose big tables the first attempt kept as their first rows
    /// only ([`crate::RunDir::save_outputs`]), and it gave other rows than then: a file it
    /// read or a var changed. The run stops rather than mix the rows of two attempts.
    DataChanged,
    /// A model call of an `ai.*` block failed; the code is keiri-llm's
    /// ([`keiri_llm::Error::code`]): `LLM_NOT_CONFIGURED` when the run has no model,
    /// `LLM_OUTPUT_INVALID` when no answer matched the schema, `LLM_TIMEOUT`,
    /// `LLM_RATE_LIMITED`, `LLM_UNAUTHORIZED`, …
    Llm(&'static str),
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BlockFailed => "BLOCK_FAILED",
            ErrorCode::InputInvalid => "INPUT_INVALID",
            ErrorCode::ColumnNotFound => "COLUMN_NOT_FOUND",
            ErrorCode::FileNotFound => "FILE_NOT_FOUND",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::UnknownBlock => "UNKNOWN_BLOCK",
            ErrorCode::RefUnresolved => "REF_UNRESOLVED",
            ErrorCode::EnvNotAllowed => "ENV_NOT_ALLOWED",
            ErrorCode::ExprInvalid => "EXPR_INVALID",
            ErrorCode::SubflowNotFound => "SUBFLOW_NOT_FOUND",
            ErrorCode::SubflowCycle => "SUBFLOW_CYCLE",
            ErrorCode::AwaitingInput => "AWAITING_INPUT",
            ErrorCode::HostNotAllowed => "HOST_NOT_ALLOWED",
            ErrorCode::AuditChainBroken => "AUDIT_CHAIN_BROKEN",
            ErrorCode::LimitExceeded => "LIMIT_EXCEEDED",
            ErrorCode::DataChanged => "DATA_CHANGED",
            ErrorCode::PathDenied => "PATH_DENIED",
            ErrorCode::Llm(code) => code,
        }
    }
}

/// A block failure: a code to branch on, and a message in Japanese and English.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {message_en}", code.as_str())]
pub struct BlockError {
    pub code: ErrorCode,
    pub message_ja: String,
    pub message_en: String,
    /// What the user can do about it, when we know (in Japanese and English).
    pub hint: Option<Box<(String, String)>>,
    /// For [`ErrorCode::AwaitingInput`]: what to ask the person (the block's own JSON shape,
    /// with a `kind` the front-ends render).
    pub question: Option<Box<serde_json::Value>>,
}

impl BlockError {
    pub fn new(
        code: ErrorCode,
        message_ja: impl Into<String>,
        message_en: impl Into<String>,
    ) -> BlockError {
        BlockError {
            code,
            message_ja: message_ja.into(),
            message_en: message_en.into(),
            hint: None,
            question: None,
        }
    }

    /// The run must pause here until a person answers `question`.
    pub fn awaiting(
        question: serde_json::Value,
        message_ja: impl Into<String>,
        message_en: impl Into<String>,
    ) -> BlockError {
        let mut error = BlockError::new(ErrorCode::AwaitingInput, message_ja, message_en);
        error.question = Some(Box::new(question));
        error
    }

    pub fn with_hint(mut self, ja: impl Into<String>, en: impl Into<String>) -> BlockError {
        self.hint = Some(Box::new((ja.into(), en.into())));
        self
    }
}

/// What a block may use besides its inputs.
#[derive(Debug)]
pub struct BlockContext<'a> {
    /// The node being run (for messages).
    pub node_id: &'a str,
    /// Where relative input paths are resolved (the workspace, or the run's input copy).
    pub base_dir: &'a Path,
    /// The node's own output directory inside the run directory; every file a block
    /// writes goes here (never beside its inputs).
    pub out_dir: &'a Path,
    /// Where the paths the plan names may lead ([`crate::RunOptions::paths`]): every read and
    /// every `--write` goes through [`crate::paths`].
    pub paths: &'a keiri_fs::PathPolicy,
    /// Cancelled when the run is cancelled or the node times out; long loops check it.
    pub cancel: &'a CancellationToken,
    /// The user allowed writes outside the run directory (`keiri run --write`): only then
    /// may a block write to an output path the plan names (else it writes under `out_dir`).
    pub write: bool,
    /// A person's answer to this node's question, when the run was resumed with one
    /// (human-in-the-loop blocks; every other block ignores it).
    pub answer: Option<&'a serde_json::Value>,
    /// Hosts the user allowed network blocks to reach (from their settings, through
    /// [`crate::RunOptions::allow_hosts`]); empty means no network at all. An entry is a host
    /// name or IP address (`api.example.com`, `127.0.0.1`), or `*.example.com` for its
    /// subdomains.
    pub allow_hosts: &'a [String],
    /// The run's bounds on work ([`crate::RunOptions::limits`]).
    pub limits: &'a crate::limits::Limits,
    /// The run's clock (the engine's start time, passed in, plus the time elapsed since), so a
    /// block that records or computes times is deterministic under test.
    pub now: DateTime<Utc>,
    /// The model the `ai.*` blocks call ([`crate::RunOptions::llm`], from the user's LLM
    /// settings); `None` fails those blocks with `LLM_NOT_CONFIGURED`.
    pub llm: Option<&'a keiri_llm::Llm>,
    /// Where a block reports each model call it made; the engine records them as `llm_call`
    /// events while the block runs.
    pub calls: &'a CallSink,
    /// The language of the words a block writes into its rows ([`crate::RunOptions::lang`]).
    pub lang: keiri_plan::Lang,
    /// The columns the rest of the plan reads of this node's table, when the engine knows
    /// them all (`engine/projection.rs`): a reader may parse only these. `None`: all.
    pub columns_used: Option<&'a [String]>,
    /// The outputs the plan takes of this node (the keys of its `out`), when the engine runs
    /// only what is used ([`crate::RunOptions::only_what_is_used`]): no node can read the
    /// others, so a block may build one of them only as far as the window shows it
    /// ([`BlockContext::items_to_build`]). `None`: all are taken.
    pub outputs_taken: Option<&'a [String]>,
    /// Where a reader hands its table piece by piece when the engine runs the row-by-row
    /// steps after it in the same pass (`engine/fused.rs`); `None`: the reader builds its
    /// table whole, as every other block does.
    pub pieces: Option<&'a dyn Pieces>,
}

/// The receiving end of a reader's rows when the engine runs the steps after it in one pass
/// over the file (`engine/fused.rs`): the reader hands each piece of its table as its output
/// would hold those rows, in file order, and itself keeps only its first rows.
pub trait Pieces: Send + Sync + std::fmt::Debug {
    /// The reader starts again from the file's first byte (it tries another encoding): what
    /// it handed over so far is void.
    fn restart(&self);
    /// The next rows. `Ok(false)`: the pass stopped (the engine runs the steps one by one
    /// after the reader has read the file whole), so the reader may stop reading.
    fn take(&self, ctx: &BlockContext<'_>, rows: DataFrame) -> Result<bool, BlockError>;
    /// The reader's table cannot be handed over piece by piece (it needs all of its rows
    /// to decide what it holds): the reader builds it whole, and the steps run one by one.
    fn refuse(&self);
    /// Asked once every piece was handed over: whether the steps' outputs are the ones they
    /// give on the whole table. `false`: the reader builds it whole after all (`refuse`).
    fn stands(&self) -> bool;
}

impl BlockContext<'_> {
    /// `ja` or `en`, in the run's language: the one place a block picks the words it writes
    /// into its rows (warnings and errors carry both).
    pub fn say<T>(&self, ja: T, en: T) -> T {
        self.lang.pick(ja, en)
    }

    /// Whether the plan takes `output` of this node (names it in its `out`), so that a later
    /// node may read it whole.
    pub fn takes(&self, output: &str) -> bool {
        self.outputs_taken
            .is_none_or(|taken| taken.iter().any(|t| t == output))
    }

    /// How many of the `total` items of a list output the block should build: all of them
    /// when the plan takes it, else at most the first [`SHOWN_ROWS`] (what the window and the
    /// run record show of any output). A block that builds fewer than `total` says so with
    /// [`Outputs::with_shown`], so the record keeps the real count. For outputs that are
    /// costly to build and that plans often leave out (a million reconciliation matches as
    /// nested JSON rows are 2 GB of memory).
    pub fn items_to_build(&self, output: &str, total: usize) -> usize {
        if self.takes(output) {
            total
        } else {
            total.min(SHOWN_ROWS)
        }
    }

    /// [`BlockContext::items_to_build`] for a list whose items each hold rows (clusters of
    /// invoices), given each item's number of rows in order: all of them when the plan takes
    /// it, else the first items as far as [`SHOWN_ROWS`] items holding at most [`WHOLE_ROWS`]
    /// rows in all, and always the first item whole. Items keep every row they hold; a few
    /// items of thousands of rows each (invoices of one vendor and amount chained month to
    /// month) would otherwise be hundreds of thousands of rows built as JSON and recorded for
    /// a window that shows the first items.
    pub fn groups_to_build(&self, output: &str, sizes: impl IntoIterator<Item = usize>) -> usize {
        let sizes = sizes.into_iter();
        if self.takes(output) {
            return sizes.count();
        }
        let (mut built, mut rows) = (0, 0);
        for size in sizes.take(SHOWN_ROWS) {
            rows += size;
            if built > 0 && rows > WHOLE_ROWS {
                break;
            }
            built += 1;
        }
        built
    }
}

/// One model call of an `ai.*` block, as the run's events record it: what was asked for, the
/// model, tokens and time — never a prompt, an answer or a key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LlmCall {
    /// What the call was for (`document invoice_a.pdf`, `rows 1-20`, `overall summary`).
    pub purpose: String,
    /// `openai`, `azure` or `openai_compatible`.
    pub provider: String,
    pub model: String,
    /// How the structured output was obtained (`json_schema`, `function_call`, `free_form`);
    /// `None` when the call failed.
    pub strategy: Option<String>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// HTTP requests made, retries and fallbacks included.
    pub requests: u32,
    pub duration_ms: u64,
    /// The keiri-llm error code when the call failed.
    pub error: Option<String>,
}

/// A redirect a network block was answered with, and what it did about it: the run's events
/// record each one (`redirect`), so a person sees where a request was sent on to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Redirect {
    /// The URL that answered with the redirect (`scheme://host:port/path`, no query).
    pub from: String,
    /// Where it pointed (same form).
    pub to: String,
    pub followed: bool,
    /// `allowed` (on the allowlist), `not_allowed`, `downgrade` (https to http),
    /// `too_many` or `disabled` (`follow_redirects: false`).
    pub reason: String,
}

/// Something a person must see about a node that finished: its result may not be what they
/// meant (the file had no data rows, a check flagged nearly every row, rows were left out of a
/// comparison). The run still finishes; the warning reaches the run's events (`node_warning`),
/// `state.json`, `keiri run`'s summary, the API (`warnings`) and the run panel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Warning {
    /// A stable code: `NO_ROWS` (a table came out with no rows while what it came from had
    /// some, or a file had none), `MOSTLY_FLAGGED` (a check or match flagged 90 % or more of
    /// its rows), `ROWS_SKIPPED` (rows a block left out, and why), `VALUES_UNREADABLE`
    /// (values a block could not read and left empty), `FALLBACK` (a block used a weaker
    /// method than the one asked for), `KEYS_NOT_FOUND` (keys `excel.lookup_rows` found no
    /// row for), `NAMES_DIFFER` (deposits cleared against a customer whose name is only near
    /// the payer's), `CHARACTERS_REPLACED` (a file written with `?` for characters its
    /// encoding cannot hold); the crate README lists them all.
    pub code: String,
    pub message_ja: String,
    pub message_en: String,
}

impl Warning {
    pub fn new(
        code: &str,
        message_ja: impl Into<String>,
        message_en: impl Into<String>,
    ) -> Warning {
        Warning {
            code: code.to_string(),
            message_ja: message_ja.into(),
            message_en: message_en.into(),
        }
    }
}

/// How far a long block has got ([`CallSink::progress`]): the engine reads it while the block
/// runs and reports it as a `node_progress` event once a node has run for a second, then at
/// most once a second, so the window and `keiri run` show more than "running" for a long node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Units done so far.
    pub done: u64,
    /// Units in all, when the block knows it.
    pub total: Option<u64>,
    pub unit: ProgressUnit,
}

/// What a [`Progress`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProgressUnit {
    /// Rows of the block's input table (or the deposits, invoices… it goes through).
    Rows,
    /// Bytes of the file being read.
    Bytes,
    /// Pages of a document.
    Pages,
    /// Files (of a folder, an archive, a list).
    Files,
}

/// The latest [`Progress`] of one block, shared by the block (which writes it at every step
/// of its long loop, a few atomic stores) and the engine (which reads it every poll).
#[derive(Debug, Default)]
struct ProgressCell {
    done: AtomicU64,
    /// `u64::MAX`: unknown.
    total: AtomicU64,
    /// 0: nothing reported yet; else the unit's index plus one.
    unit: AtomicU8,
}

const UNITS: [ProgressUnit; 4] = [
    ProgressUnit::Rows,
    ProgressUnit::Bytes,
    ProgressUnit::Pages,
    ProgressUnit::Files,
];

impl ProgressCell {
    fn set(&self, progress: Progress) {
        self.done.store(progress.done, Ordering::Relaxed);
        self.total
            .store(progress.total.unwrap_or(u64::MAX), Ordering::Relaxed);
        let unit = UNITS.iter().position(|u| *u == progress.unit).unwrap_or(0);
        self.unit.store(unit as u8 + 1, Ordering::Release);
    }

    fn get(&self) -> Option<Progress> {
        let unit = *UNITS.get(usize::from(self.unit.load(Ordering::Acquire)).checked_sub(1)?)?;
        let total = self.total.load(Ordering::Relaxed);
        Some(Progress {
            done: self.done.load(Ordering::Relaxed),
            total: (total != u64::MAX).then_some(total),
            unit,
        })
    }
}

/// What a block reports while it runs, besides its result.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    Llm(LlmCall),
    Redirect(Redirect),
    Warning(Warning),
}

/// The channel a block reports its [`LlmCall`]s, [`Redirect`]s and [`Warning`]s on (the
/// engine drains it as the block runs), and where it keeps its [`Progress`] (the engine reads
/// the latest); [`CallSink::none`] drops them.
#[derive(Debug, Clone, Default)]
pub struct CallSink {
    notes: Option<std::sync::mpsc::Sender<Note>>,
    progress: Arc<ProgressCell>,
}

impl CallSink {
    /// A sink and the receiving end its notes arrive at.
    pub fn channel() -> (CallSink, std::sync::mpsc::Receiver<Note>) {
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = CallSink {
            notes: Some(tx),
            progress: Arc::default(),
        };
        (sink, rx)
    }

    /// A sink that drops every call.
    pub fn none() -> CallSink {
        CallSink::default()
    }

    /// Reports how far the block has got: cheap enough to call at every row of a loop (the
    /// engine reads only the latest, see [`Progress`]).
    pub fn progress(&self, progress: Progress) {
        self.progress.set(progress);
    }

    /// The latest progress the block reported, if any.
    pub fn latest_progress(&self) -> Option<Progress> {
        self.progress.get()
    }

    pub fn record(&self, call: LlmCall) {
        self.note(Note::Llm(call));
    }

    pub fn redirect(&self, redirect: Redirect) {
        self.note(Note::Redirect(redirect));
    }

    /// Reports a [`Warning`] on the node.
    pub fn warn(&self, warning: Warning) {
        self.note(Note::Warning(warning));
    }

    /// Warns `ROWS_SKIPPED` when a block left `skipped` of its `total` rows out: `why` ends
    /// the sentence (`日付が空か読めないため比較していません`, `were not compared: their date
    /// is empty or unreadable`).
    pub fn warn_rows_skipped(&self, skipped: usize, total: usize, why: (&str, &str)) {
        if skipped > 0 {
            self.warn(Warning::new(
                "ROWS_SKIPPED",
                format!("{total} 行中 {skipped} 行は{}", why.0),
                format!("{skipped} of {total} rows {}", why.1),
            ));
        }
    }

    /// Warns `MOSTLY_FLAGGED` when `flagged` of `total` rows (at least 3) is 90 % or more: a
    /// check that flags nearly everything usually reads the wrong column or states its
    /// condition the wrong way round. `what` names what was flagged (`違反`, `violations`).
    pub fn warn_if_mostly_flagged(&self, flagged: usize, total: usize, what: (&str, &str)) {
        if total >= 3 && flagged * 10 >= total * 9 {
            let percent = flagged * 100 / total;
            self.warn(Warning::new(
                "MOSTLY_FLAGGED",
                format!(
                    "{total} 行中 {flagged} 行（{percent}%）が{}になりました。列の指定や条件を確認してください",
                    what.0
                ),
                format!(
                    "{flagged} of {total} rows ({percent}%) came out as {}: check the columns and conditions",
                    what.1
                ),
            ));
        }
    }

    fn note(&self, note: Note) {
        if let Some(tx) = &self.notes {
            // The engine stops listening once the node ended (timeout): nothing to do then.
            let _ = tx.send(note);
        }
    }
}

/// The resolved inputs of one node, spec defaults already applied by the engine.
#[derive(Debug, Clone, Default)]
pub struct Inputs(pub IndexMap<String, Value>);

/// The rows of an output the window and the run record show at most (`run_output`): what a
/// table kept in part keeps, and what a block builds of an output the plan does not take.
pub const SHOWN_ROWS: usize = 1_000;

/// Tables up to this many rows are always saved whole in the run record: they cost next to
/// nothing. Also the most rows the items of a list no node takes hold in all
/// ([`BlockContext::groups_to_build`]).
pub const WHOLE_ROWS: usize = 10_000;

/// The first rows of a table that comes piece by piece, and how many rows it has: a reader
/// handing its rows to the steps of a pass, and each step's outputs (`engine/fused.rs`). It
/// keeps one row more than a run record keeps whole ([`WHOLE_ROWS`]), so a table of that
/// size or less comes out whole, as a table built whole would be recorded.
#[derive(Debug, Default)]
pub struct FirstRows {
    head: Option<DataFrame>,
    rows: usize,
}

impl FirstRows {
    /// Adds the next rows; an error when their columns are not the ones before.
    pub fn add(&mut self, table: &DataFrame) -> polars::prelude::PolarsResult<()> {
        self.rows += table.height();
        let kept = self.head.as_ref().map_or(0, DataFrame::height);
        if kept > WHOLE_ROWS {
            return Ok(());
        }
        let more = table.head(Some(WHOLE_ROWS + 1 - kept));
        match &mut self.head {
            Some(head) => head.vstack_mut_owned(more).map(|_| ()),
            None => {
                self.head = Some(more);
                Ok(())
            }
        }
    }

    /// The rows added so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The first rows kept (at most one more than [`WHOLE_ROWS`]); `None` when none came.
    pub fn into_head(self) -> Option<DataFrame> {
        self.head
    }

    /// The table as an output ([`shown_part`]); `None` when no rows came.
    pub fn into_output(self) -> Option<(DataFrame, Option<usize>)> {
        let rows = self.rows;
        self.head.map(|head| shown_part(head, rows))
    }
}

/// A table of `rows` rows given by its first ones (`head`, at least [`WHOLE_ROWS`] + 1 of
/// them when there are more) as an output: whole when it has at most [`WHOLE_ROWS`], else its
/// first [`SHOWN_ROWS`] and its row count (an output built in part, [`Outputs::in_part`]).
pub fn shown_part(head: DataFrame, rows: usize) -> (DataFrame, Option<usize>) {
    if rows <= WHOLE_ROWS {
        (head, None)
    } else {
        (head.head(Some(SHOWN_ROWS)), Some(rows))
    }
}

/// The outputs of one node, keyed by the spec's output names; then the outputs the block built
/// only in part because the plan does not take them ([`BlockContext::items_to_build`]), each
/// with the number of items it has in full.
#[derive(Debug, Clone, Default)]
pub struct Outputs(pub IndexMap<String, Value>, pub BTreeMap<String, usize>);

/// A builtin block implementation.
pub type BlockFn = fn(&BlockContext<'_>, &Inputs) -> Result<Outputs, BlockError>;

/// The builtin implementations by block id (`csv.read`, `transforms.filter_rows`, …).
#[derive(Debug, Clone, Default)]
pub struct Registry {
    blocks: BTreeMap<&'static str, BlockFn>,
}

/// One builtin block as its own file registers it (`builtin!`, in `lib.rs`): the block id and the
/// function that implements it. [`Registry::builtins`] collects them all.
#[derive(Debug)]
pub struct Builtin {
    pub id: &'static str,
    pub block: BlockFn,
}

inventory::collect!(Builtin);

impl Registry {
    /// Every builtin this crate implements (each registered in its own file under `blocks/`).
    pub fn builtins() -> Registry {
        let mut registry = Registry::default();
        for builtin in inventory::iter::<Builtin> {
            registry.insert(builtin.id, builtin.block);
        }
        registry
    }

    pub fn insert(&mut self, id: &'static str, block: BlockFn) {
        self.blocks.insert(id, block);
    }

    pub fn get(&self, id: &str) -> Option<BlockFn> {
        self.blocks.get(id).copied()
    }

    pub fn ids(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.blocks.keys().copied()
    }
}

impl BlockError {
    /// `INPUT_INVALID` for input `key`: `expected` says what it should have been.
    pub fn input_invalid(key: &str, expected_ja: &str, expected_en: &str) -> BlockError {
        BlockError::new(
            ErrorCode::InputInvalid,
            format!("入力 {key} が不正です: {expected_ja}"),
            format!("input {key} is invalid: {expected_en}"),
        )
    }

    /// `BLOCK_FAILED` with a message in both languages.
    pub fn failed(message_ja: impl Into<String>, message_en: impl Into<String>) -> BlockError {
        BlockError::new(ErrorCode::BlockFailed, message_ja, message_en)
    }

    /// `COLUMN_NOT_FOUND` for a column that does not exist; the hint lists the real columns,
    /// or says there are none (a file read empty, or without a header row: no name, or only
    /// blank ones) rather than list nothing.
    pub fn missing_column(column: &str, columns: &[String]) -> BlockError {
        let list = columns.join(", ");
        let error = BlockError::new(
            ErrorCode::ColumnNotFound,
            format!("列 {column} がありません"),
            format!("column {column} does not exist"),
        );
        if columns.iter().all(|c| c.trim().is_empty()) {
            return error.with_hint(
                "列がひとつもありません。空のファイルか、見出し行のないファイルを読んでいないか確かめてください",
                "there are no columns at all: check that the file read is not empty and has a header row",
            );
        }
        error.with_hint(
            format!("存在する列: {list}"),
            format!("existing columns: {list}"),
        )
    }
}

/// Typed accessors. A JSON `null` counts as absent. Each accessor returns `INPUT_INVALID`
/// naming the key when the value has the wrong type. Strings that spell a boolean or a
/// number are accepted for `bool`/`i64`/`f64`, because `--var k=v` and `${…}` inside text
/// resolve to strings.
impl Inputs {
    /// The value of `key`, or `None` when it is absent or null.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    /// Whether `key` is present and not null.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    fn json_ref(&self, key: &str) -> Option<&serde_json::Value> {
        match self.get(key) {
            Some(Value::Json(v)) => Some(v),
            _ => None,
        }
    }

    /// An optional string.
    pub fn str(&self, key: &str) -> Result<Option<&str>, BlockError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Json(serde_json::Value::String(s))) => Ok(Some(s.as_str())),
            Some(_) => Err(BlockError::input_invalid(
                key,
                "文字列が必要です",
                "expected a string",
            )),
        }
    }

    /// A required string.
    pub fn require_str(&self, key: &str) -> Result<&str, BlockError> {
        self.str(key)?
            .ok_or_else(|| BlockError::input_invalid(key, "必須です", "it is required"))
    }

    /// An optional boolean (`true`/`false`, or the strings `"true"`/`"false"`).
    pub fn bool(&self, key: &str) -> Result<Option<bool>, BlockError> {
        let bad = || BlockError::input_invalid(key, "真偽値が必要です", "expected a boolean");
        match (self.get(key), self.json_ref(key)) {
            (None, _) => Ok(None),
            (_, Some(serde_json::Value::Bool(b))) => Ok(Some(*b)),
            (_, Some(serde_json::Value::String(s))) => match s.trim().to_ascii_lowercase().as_str()
            {
                "true" => Ok(Some(true)),
                "false" => Ok(Some(false)),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }

    /// An optional integer (a whole JSON number or a string that parses as one).
    pub fn i64(&self, key: &str) -> Result<Option<i64>, BlockError> {
        let bad = || BlockError::input_invalid(key, "整数が必要です", "expected an integer");
        match (self.get(key), self.json_ref(key)) {
            (None, _) => Ok(None),
            (_, Some(serde_json::Value::Number(n))) => match n.as_i64() {
                Some(i) => Ok(Some(i)),
                None => match n.as_f64() {
                    Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Some(f as i64)),
                    _ => Err(bad()),
                },
            },
            (_, Some(serde_json::Value::String(s))) => {
                s.trim().parse().map(Some).map_err(|_| bad())
            }
            _ => Err(bad()),
        }
    }

    /// An optional number (a JSON number or a string that parses as one).
    pub fn f64(&self, key: &str) -> Result<Option<f64>, BlockError> {
        let bad = || BlockError::input_invalid(key, "数値が必要です", "expected a number");
        match (self.get(key), self.json_ref(key)) {
            (None, _) => Ok(None),
            (_, Some(serde_json::Value::Number(n))) => n.as_f64().map(Some).ok_or_else(bad),
            (_, Some(serde_json::Value::String(s))) => {
                s.trim().parse().map(Some).map_err(|_| bad())
            }
            _ => Err(bad()),
        }
    }

    /// An optional list of strings (a single string counts as a list of one).
    pub fn strings(&self, key: &str) -> Result<Option<Vec<String>>, BlockError> {
        let bad = || {
            BlockError::input_invalid(key, "文字列の配列が必要です", "expected a list of strings")
        };
        match (self.get(key), self.json_ref(key)) {
            (None, _) => Ok(None),
            (_, Some(serde_json::Value::String(s))) => Ok(Some(vec![s.clone()])),
            (_, Some(serde_json::Value::Array(items))) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned).ok_or_else(bad))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            _ => Err(bad()),
        }
    }

    /// Required rows (a table or a JSON array of objects).
    pub fn rows(&self, key: &str) -> Result<Vec<Row>, BlockError> {
        let value = self
            .get(key)
            .ok_or_else(|| BlockError::input_invalid(key, "必須です", "it is required"))?;
        value.to_rows().map_err(|e| rename_input_error(key, e))
    }

    /// A required table (a table, or a JSON array of objects converted to one).
    pub fn table(&self, key: &str) -> Result<DataFrame, BlockError> {
        let value = self
            .get(key)
            .ok_or_else(|| BlockError::input_invalid(key, "必須です", "it is required"))?;
        value.to_table().map_err(|e| rename_input_error(key, e))
    }

    /// An optional value as JSON (a table becomes its rows).
    pub fn json(&self, key: &str) -> Option<serde_json::Value> {
        self.get(key).map(Value::to_json)
    }
}

fn rename_input_error(key: &str, e: BlockError) -> BlockError {
    if e.code == ErrorCode::InputInvalid {
        BlockError::new(
            ErrorCode::InputInvalid,
            format!("入力 {key} が不正です: {}", e.message_ja),
            format!("input {key} is invalid: {}", e.message_en),
        )
    } else {
        e
    }
}

impl Inputs {
    /// Inputs from `(key, value)` pairs (for tests and for blocks that call blocks).
    pub fn from_pairs<K: Into<String>, V: Into<Value>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Inputs {
        Inputs(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

impl Outputs {
    pub fn new() -> Outputs {
        Outputs::default()
    }

    /// Adds (or replaces) output `key`.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Outputs {
        self.0.insert(key.to_owned(), value.into());
        self
    }

    pub fn insert(&mut self, key: &str, value: impl Into<Value>) {
        self.0.insert(key.to_owned(), value.into());
    }

    /// Adds output `key`, a list built as far as [`BlockContext::items_to_build`] said, of
    /// `total` items in full: recorded as shown in part when it holds fewer.
    pub fn with_shown(mut self, key: &str, items: Vec<serde_json::Value>, total: usize) -> Outputs {
        if items.len() < total {
            self.1.insert(key.to_owned(), total);
        }
        self.0
            .insert(key.to_owned(), Value::Json(serde_json::Value::Array(items)));
        self
    }

    /// The outputs built only in part, with their full number of items.
    pub fn in_part(&self) -> &BTreeMap<String, usize> {
        &self.1
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Every block is registered once: two files registering the same id would silently keep
    /// one of them in [`Registry::builtins`].
    #[test]
    fn no_block_id_is_registered_twice() {
        let mut seen = BTreeSet::new();
        let mut twice = Vec::new();
        for builtin in inventory::iter::<Builtin> {
            if !seen.insert(builtin.id) {
                twice.push(builtin.id);
            }
        }
        assert!(twice.is_empty(), "registered more than once: {twice:?}");
        assert_eq!(Registry::builtins().ids().count(), seen.len());
    }
}
