//! The planner eval harness: a case file of instructions, each generated several times with
//! whatever provider is configured, and the numbers that say how good the planner is.
//!
//! * [`load_cases`] / [`parse_cases`]: the case file (`evals/planner_cases.yaml`), with a
//!   typed [`CaseFileError`] that carries the line of a bad part.
//! * [`run_outcome`]: what one generation amounts to: first-pass validity (valid after the
//!   first wiring, before any repair), validity after repair, the unknown block ids and
//!   `in`/`out` keys found in any attempt's plan (counted against the catalog: the schema
//!   constraints promise zero), and what the guards rejected before a plan was built.
//! * [`case_report`] / [`summarize`]: consistency over the runs of a case (the share of runs
//!   whose block multiset is the most common one, and the mean pairwise Jaccard of the block
//!   sets), the expected blocks found, and the totals. [`format_report`] prints them.
//!
//! Everything here is a pure function of generated plans except [`run_case`], which calls
//! [`crate::generate_plan`] `runs` times. The caller (keiri-api) builds the model and the
//! catalog; this module never reads the environment.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use keiri_llm::Usage;
use keiri_plan::{Catalog, FindingCode, Node, Plan};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::generate::{ApplyMode, Context, GenerateOptions, GeneratedPlan, Status};
use crate::{Error, generate_plan};

/// Default number of runs per case.
pub const DEFAULT_RUNS: u32 = 3;
/// A case file larger than this is refused (it is a list of instructions, not data).
const MAX_CASE_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One case of the case file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalCase {
    /// Unique within the file; also the id of the generated plans.
    pub id: String,
    /// What the plan should do, as an accountant would write it (Japanese).
    pub instruction: String,
    /// Reference documents (paths inside the workspace).
    #[serde(default)]
    pub docs: Vec<String>,
    /// Template ids; empty = chosen by retrieval (hint mode).
    #[serde(default)]
    pub templates: Vec<String>,
    /// `hint` (default) or `llm-only`; compose needs no model and is not evaluated here.
    #[serde(default)]
    pub apply_mode: Option<ApplyMode>,
    /// Blocks a good plan should contain.
    #[serde(default)]
    pub expect_blocks: Vec<String>,
    /// Plan shapes a good plan should have: `loop`, `subflow`, `policy`, `when`.
    #[serde(default)]
    pub expect_shapes: Vec<Shape>,
    /// Answers to the questions the planner may ask, by requirement id.
    #[serde(default)]
    pub answers: Map<String, Value>,
    /// Plan files (inside the workspace) this case's plan may call as subflows: offered to
    /// the planner as registered plans, besides those in the workspace's `designs/`.
    #[serde(default)]
    pub plans: Vec<String>,
}

/// A plan shape beyond block nodes that a case can expect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    Loop,
    Subflow,
    Policy,
    When,
}

impl Shape {
    /// How the shape is named among the expected blocks of a run (`shape:loop`, …).
    pub fn label(self) -> &'static str {
        match self {
            Shape::Loop => "shape:loop",
            Shape::Subflow => "shape:subflow",
            Shape::Policy => "shape:policy",
            Shape::When => "shape:when",
        }
    }
}

impl EvalCase {
    /// The expected blocks, then the expected shapes as `shape:<name>`.
    pub fn expectations(&self) -> Vec<String> {
        self.expect_blocks
            .iter()
            .cloned()
            .chain(self.expect_shapes.iter().map(|s| s.label().to_string()))
            .collect()
    }
}

/// The shapes `plan` has, as `shape:<name>` labels.
pub fn plan_shapes(plan: &Plan) -> Vec<String> {
    let mut shapes = Vec::new();
    let nodes = crate::generate::all_nodes(&plan.graph);
    if nodes.iter().any(|n| n.kind() == keiri_plan::NodeKind::Loop) {
        shapes.push(Shape::Loop);
    }
    if nodes
        .iter()
        .any(|n| n.kind() == keiri_plan::NodeKind::Subflow)
    {
        shapes.push(Shape::Subflow);
    }
    if plan.policy.is_some() || nodes.iter().any(|n| n.policy.is_some()) {
        shapes.push(Shape::Policy);
    }
    if nodes.iter().any(|n| n.when.is_some()) {
        shapes.push(Shape::When);
    }
    shapes.into_iter().map(|s| s.label().to_string()).collect()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    cases: Vec<EvalCase>,
}

/// A case file that cannot be used. `line` is 1-based, when known.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaseFileError {
    #[error("reading the case file {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the case file {} is {size} bytes, too large", path.display())]
    TooLarge { path: PathBuf, size: u64 },
    /// Not YAML, or YAML of the wrong shape (unknown field, wrong type).
    #[error("{}{}: {message}", path.display(), at(*line, *column))]
    Yaml {
        path: PathBuf,
        line: Option<usize>,
        column: Option<usize>,
        message: String,
    },
    /// Well-formed, but a case is unusable (duplicate id, empty instruction, compose mode).
    #[error("{}{}: case {case:?}: {message}", path.display(), at(*line, None))]
    Invalid {
        path: PathBuf,
        line: Option<usize>,
        case: String,
        message: String,
    },
}

fn at(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

impl CaseFileError {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            CaseFileError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                "NOT_FOUND"
            }
            CaseFileError::Io { .. } => "IO_ERROR",
            CaseFileError::TooLarge { .. } => "EVAL_CASES_TOO_LARGE",
            CaseFileError::Yaml { .. } => "EVAL_CASES_YAML",
            CaseFileError::Invalid { .. } => "EVAL_CASES_INVALID",
        }
    }

    /// The 1-based line the error points at, when known.
    pub fn line(&self) -> Option<usize> {
        match self {
            CaseFileError::Yaml { line, .. } | CaseFileError::Invalid { line, .. } => *line,
            _ => None,
        }
    }
}

/// Reads and checks a case file (see [`parse_cases`]).
pub fn load_cases(path: &Path) -> Result<Vec<EvalCase>, CaseFileError> {
    parse_cases(&read_case_file(path)?, path)
}

/// The text of a case file, refused when it is larger than a case file should be.
pub(crate) fn read_case_file(path: &Path) -> Result<String, CaseFileError> {
    let io = |source| CaseFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let size = std::fs::metadata(path).map_err(io)?.len();
    if size > MAX_CASE_FILE_BYTES {
        return Err(CaseFileError::TooLarge {
            path: path.to_path_buf(),
            size,
        });
    }
    std::fs::read_to_string(path).map_err(io)
}

/// A case file's YAML as `T`, with the document (for the lines of later errors); a YAML or
/// shape error names its line.
pub(crate) fn read_case_yaml<T: serde::de::DeserializeOwned>(
    text: &str,
    path: &Path,
) -> Result<(T, keiri_plan::yaml::Document), CaseFileError> {
    let doc = keiri_plan::yaml::parse(text).map_err(|e| {
        let pos = e.position();
        CaseFileError::Yaml {
            path: path.to_path_buf(),
            line: pos.map(|p| p.0),
            column: pos.map(|p| p.1),
            message: e.to_string(),
        }
    })?;
    let file: T = serde_path_to_error::deserialize(&doc.value).map_err(|e| {
        let pointer = keiri_plan::io::path_to_pointer(e.path());
        let pos = doc.source_map.locate(&pointer);
        CaseFileError::Yaml {
            path: path.to_path_buf(),
            line: pos.map(|p| p.line),
            column: pos.map(|p| p.column),
            message: format!(
                "{}: {}",
                if pointer.is_empty() { "/" } else { &pointer },
                e.inner()
            ),
        }
    })?;
    Ok((file, doc))
}

/// The checks every case file shares: at least one case, each id usable as a plan id and used
/// once, each instruction non-empty; then `rule`, a case's own problem if it has one. The
/// error names the case and its line.
pub(crate) fn check_cases<C>(
    cases: &[C],
    doc: &keiri_plan::yaml::Document,
    path: &Path,
    id_and_instruction: impl Fn(&C) -> (&str, &str),
    rule: impl Fn(&C) -> Option<&'static str>,
) -> Result<(), CaseFileError> {
    let invalid = |i: usize, case: &str, message: &str| CaseFileError::Invalid {
        path: path.to_path_buf(),
        line: doc
            .source_map
            .locate(&format!("/cases/{i}"))
            .map(|p| p.line),
        case: case.to_string(),
        message: message.to_string(),
    };
    if cases.is_empty() {
        return Err(CaseFileError::Invalid {
            path: path.to_path_buf(),
            line: doc.source_map.locate("/cases").map(|p| p.line),
            case: String::new(),
            message: "the file has no cases".into(),
        });
    }
    let mut seen = HashSet::new();
    for (i, case) in cases.iter().enumerate() {
        let (id, instruction) = id_and_instruction(case);
        if !usable_case_id(id) {
            return Err(invalid(
                i,
                id,
                "the id must be letters, digits, _ or - (it becomes the plan id)",
            ));
        }
        if !seen.insert(id) {
            return Err(invalid(i, id, "the id is used twice"));
        }
        if instruction.trim().is_empty() {
            return Err(invalid(i, id, "the instruction is empty"));
        }
        if let Some(problem) = rule(case) {
            return Err(invalid(i, id, problem));
        }
    }
    Ok(())
}

/// Whether `id` is usable as a case id (and so as a plan id).
fn usable_case_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Parses a case file (`cases: [{id, instruction, docs?, templates?, apply_mode?,
/// expect_blocks?, answers?}]`). At least one case; ids unique and usable as plan ids;
/// instructions non-empty; `apply_mode` hint or llm-only. `path` only names the file in
/// errors.
pub fn parse_cases(text: &str, path: &Path) -> Result<Vec<EvalCase>, CaseFileError> {
    let (file, doc): (CaseFile, _) = read_case_yaml(text, path)?;
    check_cases(
        &file.cases,
        &doc,
        path,
        |c| (c.id.as_str(), c.instruction.as_str()),
        |c| {
            (c.apply_mode == Some(ApplyMode::Compose)).then_some(
                "apply_mode compose needs no model and is not evaluated; use hint or llm-only",
            )
        },
    )?;
    Ok(file.cases)
}

/// Expected blocks of the cases that are not in `catalog`, as `(case id, block id)`.
pub fn unknown_expected_blocks(cases: &[EvalCase], catalog: &Catalog) -> Vec<(String, String)> {
    cases
        .iter()
        .flat_map(|c| {
            c.expect_blocks
                .iter()
                .filter(|b| catalog.get(b).is_none())
                .map(|b| (c.id.clone(), b.clone()))
        })
        .collect()
}

/// Unknown block ids and `in` / `out` keys found in plans.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct UnknownCounts {
    pub blocks: usize,
    pub inputs: usize,
    pub outputs: usize,
}

impl UnknownCounts {
    pub fn total(&self) -> usize {
        self.blocks + self.inputs + self.outputs
    }

    fn add(&mut self, other: UnknownCounts) {
        self.blocks += other.blocks;
        self.inputs += other.inputs;
        self.outputs += other.outputs;
    }
}

fn walk<'p>(graph: &'p [Node], f: &mut dyn FnMut(&'p Node)) {
    for node in graph {
        f(node);
        if let Some(body) = &node.body {
            walk(&body.plan.graph, f);
        }
    }
}

/// Block ids of `plan` that the catalog does not know, and `in` / `out` keys of known blocks
/// that are not their ports, loop and subflow bodies included.
pub fn unknown_in_plan(plan: &Plan, catalog: &Catalog) -> UnknownCounts {
    let mut counts = UnknownCounts::default();
    walk(&plan.graph, &mut |node| {
        let Some(block) = node.block.as_deref() else {
            return;
        };
        match catalog.get(block) {
            None => counts.blocks += 1,
            Some(spec) => {
                counts.inputs += node
                    .inputs
                    .keys()
                    .filter(|k| !spec.inputs.contains_key(*k))
                    .count();
                counts.outputs += node
                    .out
                    .keys()
                    .filter(|k| !spec.outputs.contains_key(*k))
                    .count();
            }
        }
    });
    counts
}

/// The block ids of `plan`, sorted, with repeats (loop and subflow bodies included).
pub fn block_multiset(plan: &Plan) -> Vec<String> {
    let mut blocks = Vec::new();
    walk(&plan.graph, &mut |node| {
        if let Some(b) = &node.block {
            blocks.push(b.clone());
        }
    });
    blocks.sort();
    blocks
}

/// The share of runs whose block multiset is the most common one; a failed run (`None`)
/// never agrees. `None` when there are no runs.
pub fn mode_share(runs: &[Option<Vec<String>>]) -> Option<f64> {
    if runs.is_empty() {
        return None;
    }
    let mut counts: BTreeMap<&Vec<String>, usize> = BTreeMap::new();
    for blocks in runs.iter().flatten() {
        *counts.entry(blocks).or_default() += 1;
    }
    let best = counts.values().copied().max().unwrap_or(0);
    Some(best as f64 / runs.len() as f64)
}

/// Jaccard similarity of two block sets (1.0 for two empty sets).
pub fn jaccard(a: &[String], b: &[String]) -> f64 {
    let a: BTreeSet<&String> = a.iter().collect();
    let b: BTreeSet<&String> = b.iter().collect();
    let union = a.union(&b).count();
    if union == 0 {
        return 1.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

/// Mean Jaccard similarity over every pair of runs' block sets; `None` with fewer than two.
pub fn mean_pairwise_jaccard(runs: &[Vec<String>]) -> Option<f64> {
    let mut sum = 0.0;
    let mut pairs = 0usize;
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[i + 1..] {
            sum += jaccard(a, b);
            pairs += 1;
        }
    }
    (pairs > 0).then(|| sum / pairs as f64)
}

/// A generation that failed, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunError {
    pub code: String,
    pub message: String,
}

/// What one generation of a case amounts to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunOutcome {
    /// 1-based.
    pub run: u32,
    /// The planner's status; `None` when the generation failed (see `error`).
    pub status: Option<Status>,
    pub error: Option<RunError>,
    /// Zero errors after the first wiring, before any repair.
    pub first_pass_valid: bool,
    /// Zero errors at the end (after repair).
    pub valid: bool,
    /// Repair rounds used.
    pub repairs: u32,
    /// Unknown ids and keys in any attempt's plan (must be zero).
    pub unknown: UnknownCounts,
    /// Unknown ids / keys or broken contracts the guards caught before a plan was built:
    /// offenders removed by the wiring check, plus 1 for a run whose answer no schema
    /// accepted (`LLM_OUTPUT_INVALID`).
    pub rejected: usize,
    /// Block ids of the final plan, sorted, with repeats (empty when the run failed).
    pub blocks: Vec<String>,
    /// Expected blocks missing from the final plan.
    pub missing_expected: Vec<String>,
    pub usage: Usage,
}

/// Codes of the wiring check's removals (see [`crate::schema::check_wiring`]).
const GUARD_CODES: &[FindingCode] = &[
    FindingCode::DesignUnknownBlock,
    FindingCode::DesignUnknownInput,
    FindingCode::DesignUnknownOutput,
    FindingCode::DesignProcessLlmContract,
    FindingCode::DesignUnknownPlan,
    FindingCode::DesignUnknownNodeType,
];

/// The outcome of run `run` of a case expecting `expect_blocks` (block ids, and shapes as
/// `shape:<name>`, see [`EvalCase::expectations`]).
pub fn run_outcome(
    run: u32,
    result: Result<&GeneratedPlan, &Error>,
    expect_blocks: &[String],
    catalog: &Catalog,
) -> RunOutcome {
    match result {
        Err(e) => RunOutcome {
            run,
            status: None,
            error: Some(RunError {
                code: e.code().to_string(),
                message: e.to_string(),
            }),
            first_pass_valid: false,
            valid: false,
            repairs: 0,
            unknown: UnknownCounts::default(),
            rejected: usize::from(e.code() == "LLM_OUTPUT_INVALID"),
            blocks: Vec::new(),
            missing_expected: expect_blocks.to_vec(),
            usage: Usage::default(),
        },
        Ok(generated) => {
            let mut unknown = UnknownCounts::default();
            let mut rejected = 0;
            for attempt in &generated.attempts {
                unknown.add(unknown_in_plan(&attempt.plan, catalog));
                rejected += attempt
                    .issues
                    .iter()
                    .filter(|i| GUARD_CODES.contains(&i.code))
                    .count();
            }
            // The final plan is the last attempt's, except a fallback plan: count that too.
            if !generated.attempts.iter().any(|a| a.plan == generated.plan) {
                unknown.add(unknown_in_plan(&generated.plan, catalog));
            }
            let blocks = block_multiset(&generated.plan);
            let shapes = plan_shapes(&generated.plan);
            RunOutcome {
                run,
                status: Some(generated.status),
                error: None,
                first_pass_valid: generated.attempts.first().is_some_and(|a| a.errors == 0),
                valid: generated.status == Status::Valid,
                repairs: generated.attempts.len().saturating_sub(1) as u32,
                unknown,
                rejected,
                missing_expected: expect_blocks
                    .iter()
                    .filter(|b| !blocks.contains(b) && !shapes.contains(b))
                    .cloned()
                    .collect(),
                blocks,
                usage: generated.usage,
            }
        }
    }
}

/// The numbers of one case over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaseReport {
    pub id: String,
    pub runs: Vec<RunOutcome>,
    pub first_pass_valid: usize,
    pub valid_after_repair: usize,
    /// Runs that ended in an error instead of a plan.
    pub errors: usize,
    pub unknown: UnknownCounts,
    pub rejected: usize,
    /// Share of runs whose block multiset is the most common one.
    pub consistency: Option<f64>,
    /// Mean pairwise Jaccard of the block sets of the runs that made a plan.
    pub jaccard: Option<f64>,
    /// Share of the expected blocks and shapes found, averaged over the runs; `None`
    /// without any.
    pub expected_found: Option<f64>,
}

/// Aggregates the runs of one case.
pub fn case_report(case: &EvalCase, runs: Vec<RunOutcome>) -> CaseReport {
    let mut unknown = UnknownCounts::default();
    for r in &runs {
        unknown.add(r.unknown);
    }
    let multisets: Vec<Option<Vec<String>>> = runs
        .iter()
        .map(|r| r.error.is_none().then(|| r.blocks.clone()))
        .collect();
    let made: Vec<Vec<String>> = multisets.iter().flatten().cloned().collect();
    let expectations = case.expectations();
    let expected_found = (!expectations.is_empty() && !runs.is_empty()).then(|| {
        let total = expectations.len() as f64;
        runs.iter()
            .map(|r| (total - r.missing_expected.len() as f64) / total)
            .sum::<f64>()
            / runs.len() as f64
    });
    CaseReport {
        id: case.id.clone(),
        first_pass_valid: runs.iter().filter(|r| r.first_pass_valid).count(),
        valid_after_repair: runs.iter().filter(|r| r.valid).count(),
        errors: runs.iter().filter(|r| r.error.is_some()).count(),
        unknown,
        rejected: runs.iter().map(|r| r.rejected).sum(),
        consistency: mode_share(&multisets),
        jaccard: mean_pairwise_jaccard(&made),
        expected_found,
        runs,
    }
}

/// Totals over every case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Totals {
    pub cases: usize,
    pub runs: usize,
    pub first_pass_valid: usize,
    pub first_pass_valid_rate: f64,
    pub valid_after_repair: usize,
    pub valid_after_repair_rate: f64,
    pub errors: usize,
    /// Unknown ids / keys that reached a plan; anything but zero is a failure.
    pub unknown: UnknownCounts,
    pub rejected: usize,
    /// Mean of the cases' consistency (cases with runs).
    pub consistency: Option<f64>,
    /// Mean of the cases' pairwise Jaccard (cases with two plans or more).
    pub jaccard: Option<f64>,
    /// Mean of the cases' expected-block share (cases that list expected blocks).
    pub expected_found: Option<f64>,
    pub usage: Usage,
}

/// The result of an eval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EvalReport {
    pub cases: Vec<CaseReport>,
    pub total: Totals,
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

fn rate(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// Totals over `cases`.
pub fn summarize(cases: Vec<CaseReport>) -> EvalReport {
    let runs: usize = cases.iter().map(|c| c.runs.len()).sum();
    let first_pass_valid = cases.iter().map(|c| c.first_pass_valid).sum();
    let valid_after_repair = cases.iter().map(|c| c.valid_after_repair).sum();
    let mut unknown = UnknownCounts::default();
    let mut usage = Usage::default();
    for c in &cases {
        unknown.add(c.unknown);
        for r in &c.runs {
            usage += r.usage;
        }
    }
    let total = Totals {
        cases: cases.len(),
        runs,
        first_pass_valid,
        first_pass_valid_rate: rate(first_pass_valid, runs),
        valid_after_repair,
        valid_after_repair_rate: rate(valid_after_repair, runs),
        errors: cases.iter().map(|c| c.errors).sum(),
        unknown,
        rejected: cases.iter().map(|c| c.rejected).sum(),
        consistency: mean(cases.iter().filter_map(|c| c.consistency)),
        jaccard: mean(cases.iter().filter_map(|c| c.jaccard)),
        expected_found: mean(cases.iter().filter_map(|c| c.expected_found)),
        usage,
    };
    EvalReport { cases, total }
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{:.0}%", v * 100.0))
}

fn ratio(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

/// The report as text: one line per case, then the totals.
pub fn format_report(report: &EvalReport) -> String {
    let mut out = String::new();
    out.push_str(
        "case                      runs  first-pass  after-repair  errors  unknown  rejected  consistency  jaccard  expected\n",
    );
    for c in &report.cases {
        out.push_str(&format!(
            "{:<25} {:>4}  {:>10}  {:>12}  {:>6}  {:>7}  {:>8}  {:>11}  {:>7}  {:>8}\n",
            c.id,
            c.runs.len(),
            format!("{}/{}", c.first_pass_valid, c.runs.len()),
            format!("{}/{}", c.valid_after_repair, c.runs.len()),
            c.errors,
            c.unknown.total(),
            c.rejected,
            percent(c.consistency),
            ratio(c.jaccard),
            percent(c.expected_found),
        ));
        for r in &c.runs {
            if let Some(e) = &r.error {
                out.push_str(&format!("  run {}: {} {}\n", r.run, e.code, e.message));
            }
        }
    }
    let t = &report.total;
    out.push_str(&format!(
        "\ntotal: {} case(s), {} run(s)\n\
         first-pass validity:   {}/{} ({})\n\
         validity after repair: {}/{} ({})\n\
         errors:                {}\n\
         unknown ids/keys:      {} (blocks {}, in {}, out {}) — must be 0\n\
         rejected by the guards: {}\n\
         consistency:           {} same block multiset, mean pairwise Jaccard {}\n\
         expected blocks found: {}\n\
         tokens:                {} prompt + {} completion\n",
        t.cases,
        t.runs,
        t.first_pass_valid,
        t.runs,
        percent(Some(t.first_pass_valid_rate)),
        t.valid_after_repair,
        t.runs,
        percent(Some(t.valid_after_repair_rate)),
        t.errors,
        t.unknown.total(),
        t.unknown.blocks,
        t.unknown.inputs,
        t.unknown.outputs,
        t.rejected,
        percent(t.consistency),
        ratio(t.jaccard),
        percent(t.expected_found),
        t.usage.prompt_tokens,
        t.usage.completion_tokens,
    ));
    out
}

/// The generation options of `case` (its answers, templates and mode over `base`).
pub fn case_options(case: &EvalCase, base: &GenerateOptions) -> GenerateOptions {
    GenerateOptions {
        plan_id: case.id.clone(),
        apply_mode: case.apply_mode.unwrap_or(ApplyMode::Hint),
        templates: case.templates.clone(),
        answers: case.answers.clone(),
        ..base.clone()
    }
}

/// Generates `case` `runs` times (with the document digest `digest`) and returns the
/// outcome of each run; `on_run` is called after each one. A failed run is an outcome, not
/// an error, except a missing provider, which fails every run alike.
pub async fn run_case(
    case: &EvalCase,
    digest: &str,
    runs: u32,
    base: &GenerateOptions,
    ctx: &Context<'_>,
    on_run: &mut (dyn FnMut(&RunOutcome) + Send),
) -> Result<Vec<RunOutcome>, Error> {
    let options = case_options(case, base);
    let mut outcomes = Vec::new();
    for run in 1..=runs {
        let result = generate_plan(&case.instruction, digest, &options, ctx).await;
        if let Err(e @ Error::LlmRequired { .. }) = result {
            return Err(e);
        }
        let outcome = run_outcome(run, result.as_ref(), &case.expectations(), ctx.catalog);
        on_run(&outcome);
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn check_parse(text: &str, expect: Result<usize, (&str, Option<usize>)>) {
        let got = parse_cases(text, Path::new("cases.yaml"));
        match (got, expect) {
            (Ok(cases), Ok(n)) => assert_eq!(cases.len(), n, "{text}"),
            (Err(e), Err((code, line))) => {
                assert_eq!(e.code(), code, "{e}");
                assert_eq!(e.line(), line, "{e}");
                if let Some(l) = line {
                    assert!(e.to_string().contains(&format!("cases.yaml:{l}")), "{e}");
                }
            }
            (got, expect) => panic!("{text}: got {got:?}, expected {expect:?}"),
        }
    }

    #[test]
    fn case_files() {
        check_parse(
            "cases:\n  - id: a\n    instruction: 請求書の重複を検出\n    expect_blocks: [matching.duplicate_invoices]\n    answers: {src: a.csv}\n    apply_mode: llm-only\n",
            Ok(1),
        );
        // Bad YAML: the line of the syntax error.
        check_parse(
            "cases:\n  - id: a\n    instruction: [unclosed\n",
            Err(("EVAL_CASES_YAML", Some(4))),
        );
        // Wrong shape: the line of the offending field.
        check_parse(
            "cases:\n  - id: a\n    instruction: x\n  - id: b\n    instruction: y\n    expect_block: [csv.read]\n",
            Err(("EVAL_CASES_YAML", Some(6))),
        );
        check_parse(
            "cases:\n  - id: a\n    instruction: x\n    docs: 3\n",
            Err(("EVAL_CASES_YAML", Some(4))),
        );
        check_parse(
            "cases:\n  - id: a\n    instruction: x\n  - id: a\n    instruction: y\n",
            Err(("EVAL_CASES_INVALID", Some(4))),
        );
        check_parse(
            "cases:\n  - id: a\n    instruction: x\n  - id: b\n    instruction: '  '\n",
            Err(("EVAL_CASES_INVALID", Some(4))),
        );
        check_parse(
            "cases:\n  - id: 'a b'\n    instruction: x\n",
            Err(("EVAL_CASES_INVALID", Some(2))),
        );
        check_parse(
            "cases:\n  - id: a\n    instruction: x\n    apply_mode: compose\n",
            Err(("EVAL_CASES_INVALID", Some(2))),
        );
        check_parse("cases: []\n", Err(("EVAL_CASES_INVALID", Some(1))));
        check_parse("", Err(("EVAL_CASES_YAML", None)));
    }

    #[test]
    fn a_missing_case_file_is_not_found() {
        let err = load_cases(Path::new("/nonexistent/cases.yaml")).unwrap_err();
        assert_eq!(err.code(), "NOT_FOUND");
    }

    #[test]
    fn mode_share_counts_failed_runs_as_disagreeing() {
        let a = Some(strings(&["csv.read", "matching.duplicate_invoices"]));
        let b = Some(strings(&["csv.read"]));
        assert_eq!(mode_share(&[]), None);
        assert_eq!(
            mode_share(&[a.clone(), a.clone(), b.clone()]),
            Some(2.0 / 3.0)
        );
        assert_eq!(mode_share(&[a.clone(), None, None]), Some(1.0 / 3.0));
        assert_eq!(mode_share(&[None, None]), Some(0.0));
        // A multiset: a repeated block is a different plan.
        let twice = Some(strings(&["csv.read", "csv.read"]));
        assert_eq!(mode_share(&[b, twice]), Some(0.5));
    }

    #[test]
    fn jaccard_of_block_sets() {
        let a = strings(&["csv.read", "matching.duplicate_invoices"]);
        let b = strings(&["csv.read", "excel.write_table"]);
        assert_eq!(jaccard(&a, &a), 1.0);
        assert!((jaccard(&a, &b) - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(jaccard(&[], &[]), 1.0);
        assert_eq!(mean_pairwise_jaccard(std::slice::from_ref(&a)), None);
        let m = mean_pairwise_jaccard(&[a.clone(), a.clone(), b.clone()]).unwrap();
        assert!(
            (m - (1.0 + 1.0 / 3.0 + 1.0 / 3.0) / 3.0).abs() < 1e-9,
            "{m}"
        );
    }

    fn catalog() -> Catalog {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
        Catalog::load(&[dir]).0
    }

    fn plan(yaml: &str) -> Plan {
        keiri_plan::load_plan(yaml).unwrap().plan
    }

    #[test]
    fn unknown_ids_and_keys_are_counted_against_the_catalog() {
        let catalog = catalog();
        let p = plan(
            "id: p\ngraph:\n  - id: a\n    block: csv.read\n    in: {path: x.csv, nope: 1}\n    out: {rows: rows, ghost: g}\n  - id: b\n    block: matching.magic\n    in: {anything: 1}\n  - id: loop\n    type: loop\n    foreach: {input: '${a.rows}'}\n    body:\n      plan:\n        id: inner\n        graph:\n          - id: c\n            block: csv.read\n            in: {path: y.csv, typo_key: 2}\n",
        );
        assert_eq!(
            unknown_in_plan(&p, &catalog),
            UnknownCounts {
                blocks: 1,
                inputs: 2,
                outputs: 1
            }
        );
        assert_eq!(
            block_multiset(&p),
            strings(&["csv.read", "csv.read", "matching.magic"])
        );
    }

    #[test]
    fn outcomes_aggregate_into_case_and_total_numbers() {
        let case = EvalCase {
            id: "dup".into(),
            instruction: "請求書の重複".into(),
            docs: Vec::new(),
            templates: Vec::new(),
            apply_mode: None,
            expect_blocks: strings(&["csv.read", "matching.duplicate_invoices"]),
            expect_shapes: Vec::new(),
            plans: Vec::new(),
            answers: Map::new(),
        };
        let ok = |run: u32, first: bool, blocks: &[&str]| RunOutcome {
            run,
            status: Some(Status::Valid),
            error: None,
            first_pass_valid: first,
            valid: true,
            repairs: u32::from(!first),
            unknown: UnknownCounts::default(),
            rejected: 0,
            blocks: strings(blocks),
            missing_expected: case
                .expect_blocks
                .iter()
                .filter(|b| !blocks.contains(&b.as_str()))
                .cloned()
                .collect(),
            usage: Usage::new(10, 5),
        };
        let failed = run_outcome(
            3,
            Err(&Error::InvalidArgument("x".into())),
            &case.expect_blocks,
            &catalog(),
        );
        assert_eq!(failed.missing_expected.len(), 2);
        let report = case_report(
            &case,
            vec![
                ok(1, true, &["csv.read", "matching.duplicate_invoices"]),
                ok(2, false, &["csv.read"]),
                failed,
            ],
        );
        assert_eq!(report.first_pass_valid, 1);
        assert_eq!(report.valid_after_repair, 2);
        assert_eq!(report.errors, 1);
        assert_eq!(report.consistency, Some(1.0 / 3.0));
        assert_eq!(report.jaccard, Some(0.5));
        assert_eq!(report.expected_found, Some((1.0 + 0.5 + 0.0) / 3.0));
        let total = summarize(vec![report]).total;
        assert_eq!((total.runs, total.valid_after_repair), (3, 2));
        assert!((total.valid_after_repair_rate - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(total.usage.prompt_tokens, 20);
        assert_eq!(total.unknown.total(), 0);
    }

    #[test]
    fn a_run_counts_unknowns_in_every_attempt_once_and_the_guards_removals() {
        use crate::generate::Attempt;
        use keiri_plan::Finding;
        let bad =
            plan("id: p\ngraph:\n  - id: a\n    block: csv.read\n    in: {path: x.csv, typo: 1}\n");
        let good = plan("id: p\ngraph:\n  - id: a\n    block: csv.read\n    in: {path: x.csv}\n");
        let attempt = |n: u32, plan: &Plan, errors: usize, issues: Vec<Finding>| Attempt {
            n,
            stage: if n == 1 { "wiring" } else { "repair" }.into(),
            plan: plan.clone(),
            issues,
            errors,
            strategy: "json_schema".into(),
            usage: Usage::new(3, 1),
        };
        let removed = Finding::error(
            FindingCode::DesignUnknownBlock,
            Some("b".into()),
            "/nodes/1/block",
            "unknown block",
        );
        let generated = GeneratedPlan {
            plan: good.clone(),
            status: Status::Valid,
            mode: ApplyMode::LlmOnly,
            fallback: false,
            reasoning: String::new(),
            candidates: Vec::new(),
            templates: Vec::new(),
            composition: None,
            attempts: vec![
                attempt(1, &bad, 2, vec![removed]),
                attempt(2, &good, 0, Vec::new()),
            ],
            requirements: Vec::new(),
            errors: Vec::new(),
            suggestions: Vec::new(),
            notes: Vec::new(),
            usage: Usage::new(6, 2),
        };
        let outcome = run_outcome(1, Ok(&generated), &strings(&["csv.read"]), &catalog());
        assert_eq!(
            outcome.unknown,
            UnknownCounts {
                blocks: 0,
                inputs: 1,
                outputs: 0
            }
        );
        assert_eq!(outcome.rejected, 1);
        assert!(!outcome.first_pass_valid);
        assert!(outcome.valid);
        assert_eq!(outcome.repairs, 1);
        assert!(outcome.missing_expected.is_empty());
        assert_eq!(outcome.blocks, strings(&["csv.read"]));
    }

    #[test]
    fn an_output_no_schema_accepted_counts_as_rejected() {
        let err = Error::Llm {
            stage: "wiring",
            source: keiri_llm::Error::Timeout {
                after: std::time::Duration::from_secs(5),
                attempts: 1,
            },
        };
        let timeout = run_outcome(1, Err(&err), &[], &catalog());
        assert_eq!(timeout.rejected, 0);
        assert_eq!(timeout.error.unwrap().code, "LLM_TIMEOUT");
        let err = Error::Llm {
            stage: "wiring",
            source: keiri_llm::Error::StructuredOutput {
                failures: Vec::new(),
            },
        };
        let invalid = run_outcome(1, Err(&err), &[], &catalog());
        assert_eq!(invalid.rejected, 1);
    }
}
