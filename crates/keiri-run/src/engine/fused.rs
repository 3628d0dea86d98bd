//! One pass over a CSV for the row-by-row steps after it: a `csv.read` hands its table piece by
//! piece ([`crate::block::Pieces`]) to the steps that take its rows in turn (normalising dates
//! and amounts, a fiscal period, picking columns, filtering), and a `group_aggregate` that
//! takes the last step's rows groups each piece as it comes and then the pieces' groups
//! (`GroupsByPiece`). No table of all the rows is built: a journal read, its dates and
//! amounts normalised, a month added and totalled by account and month holds a few pieces
//! and the groups, however many rows it has. Without a group at the end, the last step's
//! table is the only one built whole.
//!
//! What the window shows of each node is what node-by-node execution shows: its first rows
//! ([`crate::block::SHOWN_ROWS`]), its row count, its columns, its other outputs, its
//! groups. The read and the steps are recorded as their first rows of so many, needed whole
//! on a resume (the node runs again, from the file, like any table kept in part; only its
//! row count is compared: the digest of what the pass built whole, the last step's rows or
//! the groups, covers the rows).
//!
//! The pass is a fast path that never changes an answer. It is taken only where a step's rows
//! are each computed from the same row alone (the [`ROW_BY_ROW`] builtins, each checked), and
//! it stands only when every piece went through every step as cleanly as the whole table
//! would: no error, no warning, no unreadable value listed, the same columns and types from
//! piece to piece, summed and averaged columns whole numbers (a sum of sums is then exact),
//! no step left without rows. Anything else — a date that is not one, an amount column that
//! is whole numbers in one piece and not in the next, amounts with sen, a blank-looking row
//! the projection cannot judge, a filter that keeps no row — makes the pass void: the reader
//! reads the file again whole and the steps run one by one, so the error, the warning, the
//! row numbers and the types are the ones node-by-node gives. Chains are found only at the
//! top level of a run that reads only what it uses ([`crate::RunOptions::only_what_is_used`])
//! with [`crate::RunOptions::fused`] on, with no timeout anywhere (a step's time would count
//! against the reader's), and none of whose nodes finished in an earlier attempt of the run.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use keiri_plan::model::{Node, NodeKind, Plan};
use keiri_plan::refs::{Target, scan};
use keiri_plan::{BlockSpec, Catalog};
use polars::prelude::{DataFrame, SchemaRef};
use serde_json::Value as Json;

use super::projection::{Uses, alias_of, builtin};
use crate::block::{
    BlockContext, BlockError, BlockFn, CallSink, FirstRows, Inputs, Note, Outputs, Pieces,
};
use crate::blocks::transforms::group_aggregate::GroupsByPiece;
use crate::value::Value;

/// What a step's outputs other than its rows must be in every piece for the pass to stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Must {
    /// An empty list (the unreadable values: any makes the pass void, as their row numbers
    /// and warnings are the whole table's).
    BeEmpty,
    /// The same in every piece (made of the step's other inputs, not of its rows).
    BeSame,
    /// A count of rows in each piece: the whole table's is their sum.
    Sum,
    /// A table of some of each piece's rows (a filter's `excluded`): kept as a run record
    /// keeps a table handed on. No later node may take it (`chains` ends a chain before a
    /// step whose such output the plan uses).
    Part,
}

/// The builtins whose rows are each computed from the same row alone, in order (one row out
/// for each row in, or none), with the types of their columns decided per value (a piece of
/// the table gives those rows of the whole table's output); and what their other outputs
/// must be. A block joins only once its code is checked for this: `normalize_dates` and
/// `fiscal_period` read each date alone, `normalize_amounts` each amount alone (its column
/// is whole numbers or not per piece: the pass compares the types), `select_columns` only
/// picks columns, `filter_rows` judges each row alone (its condition reads that row's cells).
const ROW_BY_ROW: &[(&str, &[(&str, Must)])] = &[
    ("transforms.normalize_dates", &[("errors", Must::BeEmpty)]),
    ("transforms.normalize_amounts", &[("errors", Must::BeEmpty)]),
    ("transforms.fiscal_period", &[("period", Must::BeSame)]),
    ("transforms.select_columns", &[]),
    (
        "transforms.filter_rows",
        &[("excluded", Must::Part), ("count", Must::Sum)],
    ),
];

/// The rows input of every [`ROW_BY_ROW`] block, and the output its rows come out of.
pub(super) const ROWS: &str = "rows";

/// The steps that take a reader's rows one after the other, in order, and the
/// `group_aggregate` that takes the last one's rows, if one does ([`GROUPS`]).
#[derive(Debug, Clone)]
pub(super) struct Chain {
    pub steps: Vec<Node>,
    pub group: Option<Node>,
}

/// The block a pass may end with: it groups each piece's rows, then the pieces' groups
/// (`GroupsByPiece`), so no table of all the rows is ever built.
pub(super) const GROUPS: &str = "transforms.group_aggregate";

/// Each top-level reader that a pass may run with the steps after it, by its node id: a
/// `csv.read` whose columns read are all known (`used`, from `projection.rs`: a header, no
/// `columns`, every use known), whose rows only the first step takes (`${read.rows}` as its
/// `rows`, once in the whole plan, no other output used), and so on from step to step while
/// the next is a [`ROW_BY_ROW`] block with no condition, no policy and no input that refers
/// to another node. The chain ends at the step whose rows something else takes.
pub(super) fn chains(
    plan: &Plan,
    catalog: &Catalog,
    used: &HashMap<String, Vec<String>>,
) -> HashMap<String, Chain> {
    let mut out = HashMap::new();
    if plan.policy.as_ref().is_some_and(|p| p.timeout_ms.is_some()) {
        return out;
    }
    let uses = Uses::of(plan);
    if uses.malformed {
        return out;
    }
    for reader in &plan.graph {
        if !used.contains_key(&reader.id)
            || builtin(reader, catalog) != Some("csv.read")
            || reader
                .policy
                .as_ref()
                .is_some_and(|p| p.timeout_ms.is_some())
        {
            continue;
        }
        let (mut steps, mut group) = (Vec::new(), None);
        let mut from = reader;
        while let Some(step) = only_taker(plan, catalog, &uses, from) {
            if builtin(step, catalog) == Some(GROUPS) {
                group = Some(step.clone());
                break;
            }
            steps.push(step.clone());
            from = step;
        }
        // A table the last step hands on only in part (a filter's `excluded`) must be one no
        // later node takes.
        while group.is_none()
            && steps
                .last()
                .is_some_and(|last| hands_on_in_part(last, catalog, &uses))
        {
            steps.pop();
        }
        if !steps.is_empty() || group.is_some() {
            out.insert(reader.id.clone(), Chain { steps, group });
        }
    }
    out
}

/// Whether the plan takes an output of `step` that a pass keeps only in part ([`Must::Part`]).
fn hands_on_in_part(step: &Node, catalog: &Catalog, uses: &Uses<'_>) -> bool {
    let must = builtin(step, catalog).and_then(must_of).unwrap_or_default();
    must.iter()
        .filter(|(_, m)| *m == Must::Part)
        .any(|(key, _)| alias_of(step, key).is_some_and(|a| uses.count(&step.id, Some(a)) > 0))
}

/// The node that alone takes `from`'s rows, when it can be a step of a pass.
fn only_taker<'p>(
    plan: &'p Plan,
    catalog: &Catalog,
    uses: &Uses<'p>,
    from: &Node,
) -> Option<&'p Node> {
    let alias = alias_of(from, ROWS)?;
    if uses.count(&from.id, None) != 1 || uses.count(&from.id, Some(alias)) != 1 {
        return None;
    }
    let &(step, input, _) = uses
        .inputs
        .get(&from.id)?
        .iter()
        .find(|(_, _, a)| a == alias)?;
    let known = ROW_BY_ROW
        .iter()
        .map(|(id, _)| *id)
        .chain([GROUPS])
        .any(|id| builtin(step, catalog) == Some(id));
    let plain = step.kind() == NodeKind::Block && step.when.is_none() && step.policy.is_none();
    let fixed = step
        .inputs
        .iter()
        .filter(|(key, _)| *key != ROWS)
        .all(|(_, value)| refers_to_no_node(value));
    (input == ROWS && known && plain && fixed && plan.graph.iter().any(|n| n.id == step.id))
        .then_some(step)
}

/// Whether `value` holds no `${node.…}` reference (vars, config and env are known at the
/// reader's start).
fn refers_to_no_node(value: &Json) -> bool {
    let (mut found, mut bad) = (Vec::new(), Vec::new());
    scan(value, "", &mut found, &mut bad);
    bad.is_empty()
        && found
            .iter()
            .all(|r| !matches!(r.target, Target::Node { .. }))
}

/// The engine's checks of a node's resolved inputs just before its block runs (`checks.rs`).
pub(super) type Check =
    fn(&BlockSpec, &Node, &mut IndexMap<String, Value>, &str) -> Result<(), BlockError>;

/// One step of a pass, ready to run on a piece: its block, its other inputs resolved.
#[derive(Debug)]
pub(super) struct Step {
    pub node: Node,
    pub qid: String,
    pub spec: BlockSpec,
    pub f: BlockFn,
    pub inputs: IndexMap<String, Value>,
    pub out_dir: PathBuf,
    pub check: Check,
    pub must: &'static [(&'static str, Must)],
}

impl Step {
    /// Calls `f` with this step's inputs for `rows` (checked as the engine checks a node's)
    /// and a context whose notes are its own. `Ok(None)` when the pass cannot stand on what
    /// came back: a check or the call failed, or the step warned; a cancelled run's error
    /// (a cancel, a timed-out reader, one past its memory) stops the read.
    fn call<T>(
        &self,
        ctx: &BlockContext<'_>,
        rows: DataFrame,
        f: impl FnOnce(&BlockContext<'_>, IndexMap<String, Value>) -> Result<Option<T>, BlockError>,
    ) -> Result<Option<T>, BlockError> {
        let mut inputs = self.inputs.clone();
        inputs.insert(ROWS.to_owned(), Value::Table(rows));
        if (self.check)(&self.spec, &self.node, &mut inputs, &self.qid).is_err() {
            return Ok(None);
        }
        let (calls, notes) = CallSink::channel();
        let step_ctx = BlockContext {
            node_id: &self.qid,
            out_dir: &self.out_dir,
            calls: &calls,
            columns_used: None,
            outputs_taken: None,
            pieces: None,
            ..*ctx
        };
        let result = f(&step_ctx, inputs);
        drop(calls);
        match result {
            Err(e) if ctx.cancel.is_cancelled() => Err(e),
            Err(_) => Ok(None),
            Ok(_) if notes.try_iter().any(|n| matches!(n, Note::Warning(_))) => Ok(None),
            Ok(answer) => Ok(answer),
        }
    }
}

/// What a step's other outputs must be for a pass to stand, when `builtin` can be a step.
pub(super) fn must_of(builtin: &str) -> Option<&'static [(&'static str, Must)]> {
    ROW_BY_ROW
        .iter()
        .find(|(b, _)| *b == builtin)
        .map(|(_, must)| *must)
}

/// A step a pass ran: its node id, its outputs and the time it took in the pass.
pub(super) type Ran = (String, Outputs, Duration);

/// What a pass has seen of one step so far.
#[derive(Debug, Default)]
struct Seen {
    /// The rows it was given, and its rows' first ones and count.
    rows_in: usize,
    rows: FirstRows,
    schema: Option<SchemaRef>,
    /// Its other outputs from the first piece (rows taken out), and where its rows were.
    others: Option<Outputs>,
    rows_at: usize,
    /// Its other outputs that are tables ([`Must::Part`]) and counts ([`Must::Sum`]).
    parts: HashMap<String, FirstRows>,
    sums: HashMap<String, u64>,
    spent: Duration,
}

#[derive(Debug, Default)]
struct State {
    /// The pass cannot stand (a step failed, warned or listed a value; types differed).
    void: bool,
    /// The reader builds its table whole: nothing more is taken, even after a restart.
    refused: bool,
    seen: Vec<Seen>,
    /// The last step's rows so far (no group at the end).
    last: Option<DataFrame>,
    /// The groups of the pieces so far, the rows they hold and the time they took.
    groups: Option<GroupsByPiece>,
    grouped: usize,
    grouping: Duration,
}

/// The steps of one chain run on each piece the reader hands over ([`Pieces`]).
#[derive(Debug)]
pub(super) struct Pass {
    steps: Vec<Step>,
    /// The `group_aggregate` the pass ends with (its `must` unused).
    group: Option<Step>,
    state: Mutex<State>,
}

impl Pass {
    /// The pass of `steps`, in order, then `group`.
    pub(super) fn new(steps: Vec<Step>, group: Option<Step>) -> Arc<Pass> {
        let seen = steps.iter().map(|_| Seen::default()).collect();
        Arc::new(Pass {
            steps,
            group,
            state: Mutex::new(State {
                seen,
                ..State::default()
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether every step saw every one of the `rows` the reader handed over: the first step
    /// was given them all, each later one the rows of the one before, and the group the last
    /// one's.
    fn saw_all(&self, state: &State, rows: usize) -> bool {
        let given = std::iter::once(rows).chain(state.seen.iter().map(|s| s.rows.rows()));
        let steps = state
            .seen
            .iter()
            .zip(given.clone())
            .all(|(s, g)| s.rows_in == g);
        let grouped = self.group.is_none() || Some(state.grouped) == given.last();
        steps && grouped
    }

    /// Each step's outputs and the time it took in the pass, in order, once the reader handed
    /// `rows` rows in all (the count its output records): the last step's rows whole (or the
    /// groups of a `group_aggregate` at the end), the others' as a run record keeps them.
    /// `Ok(None)` when the pass is void or did not see them all.
    pub(super) fn finish(
        &self,
        rows: usize,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Option<Vec<Ran>>, BlockError> {
        let mut state = self.lock();
        if state.void || state.refused || !self.saw_all(&state, rows) {
            return Ok(None);
        }
        let count = self.steps.len();
        let mut out = Vec::with_capacity(count + 1);
        let last = match (&self.group, state.groups.take()) {
            (Some(step), Some(groups)) => {
                let started = Instant::now();
                let outputs = groups.finish(cancel)?;
                let spent = state.grouping + started.elapsed();
                out.push((step.node.id.clone(), outputs, spent));
                None
            }
            (None, _) => state.last.take(),
            (Some(_), None) => return Ok(None),
        };
        for (i, (step, seen)) in self.steps.iter().zip(state.seen.iter_mut()).enumerate() {
            let Some(mut outputs) = seen.others.take() else {
                return Ok(None);
            };
            for (key, must) in step.must {
                let value = match must {
                    Must::Part => seen
                        .parts
                        .remove(*key)
                        .and_then(|first| shown(first, key, &mut outputs)),
                    Must::Sum => seen.sums.get(*key).map(|n| Value::Json(Json::from(*n))),
                    Must::BeEmpty | Must::BeSame => continue,
                };
                let Some(value) = value else {
                    return Ok(None);
                };
                outputs.0.insert((*key).to_owned(), value);
            }
            let rows = match (&last, i + 1 == count) {
                (Some(last), true) => Value::Table(last.clone()),
                _ => match shown(std::mem::take(&mut seen.rows), ROWS, &mut outputs) {
                    Some(rows) => rows,
                    None => return Ok(None),
                },
            };
            // In its place among the outputs, as the block returned them.
            let at = seen.rows_at.min(outputs.0.len());
            outputs.0.shift_insert(at, ROWS.to_owned(), rows);
            out.insert(i, (step.node.id.clone(), outputs, seen.spent));
        }
        Ok(Some(out))
    }

    /// Groups `rows` (the last step's, or the reader's) with the pass's `group_aggregate`;
    /// `Ok(false)` when the pass became void.
    fn group(
        &self,
        ctx: &BlockContext<'_>,
        state: &mut State,
        step: &Step,
        rows: DataFrame,
    ) -> Result<bool, BlockError> {
        let started = Instant::now();
        let height = rows.height();
        let added = step.call(ctx, rows, |step_ctx, mut inputs| {
            let Some(Value::Table(rows)) = inputs.shift_remove(ROWS) else {
                return Ok(None);
            };
            let groups = match &mut state.groups {
                Some(groups) => groups,
                None => state.groups.insert(GroupsByPiece::new(&Inputs(inputs))?),
            };
            Ok(groups.add(step_ctx, rows)?.then_some(()))
        })?;
        if added.is_none() {
            return Ok(false);
        }
        state.grouped += height;
        state.grouping += started.elapsed();
        Ok(true)
    }

    /// Runs every step on `rows`; `Ok(None)` when the pass became void.
    fn run_steps(
        &self,
        ctx: &BlockContext<'_>,
        state: &mut State,
        mut rows: DataFrame,
    ) -> Result<Option<DataFrame>, BlockError> {
        for (step, seen) in self.steps.iter().zip(state.seen.iter_mut()) {
            let started = Instant::now();
            seen.rows_in += rows.height();
            let called = step.call(ctx, rows, |step_ctx, inputs| {
                (step.f)(step_ctx, &Inputs(inputs)).map(Some)
            })?;
            let Some(mut outputs) = called else {
                return Ok(None);
            };
            let Some((rows_at, _, Value::Table(out))) = outputs.0.shift_remove_full(ROWS) else {
                return Ok(None);
            };
            seen.rows_at = rows_at;
            if !outputs.in_part().is_empty() || !others_stand(step.must, &outputs, seen) {
                return Ok(None);
            }
            match &seen.schema {
                Some(schema) if **schema != **out.schema() => return Ok(None),
                Some(_) => {}
                None => seen.schema = Some(out.schema().clone()),
            }
            if seen.rows.add(&out).is_err() {
                return Ok(None);
            }
            seen.others.get_or_insert(outputs);
            seen.spent += started.elapsed();
            rows = out;
        }
        Ok(Some(rows))
    }
}

/// A table a pass handed on, as a step's output `key`: whole, or its first rows with its
/// row count recorded in `outputs` (built in part); `None` when no rows came.
fn shown(first: FirstRows, key: &str, outputs: &mut Outputs) -> Option<Value> {
    let (table, in_part) = first.into_output()?;
    if let Some(rows) = in_part {
        outputs.1.insert(key.to_owned(), rows);
    }
    Some(Value::Table(table))
}

/// Whether a step's outputs other than its rows (`outputs`, rows taken out) are what `must`
/// asks of each, and nothing else; adds the tables and counts among them to `seen`.
fn others_stand(must: &[(&str, Must)], outputs: &Outputs, seen: &mut Seen) -> bool {
    outputs.0.iter().all(|(key, value)| {
        match must.iter().find(|(k, _)| k == key).map(|(_, m)| *m) {
            Some(Must::BeEmpty) => matches!(value, Value::Json(Json::Array(a)) if a.is_empty()),
            Some(Must::BeSame) => {
                seen.others
                    .as_ref()
                    .is_none_or(|first| match (first.get(key), value) {
                        (Some(Value::Json(a)), Value::Json(b)) => a == b,
                        _ => false,
                    })
            }
            Some(Must::Sum) => match value {
                Value::Json(Json::Number(n)) => n.as_u64().is_some_and(|n| {
                    *seen.sums.entry(key.clone()).or_default() += n;
                    true
                }),
                _ => false,
            },
            Some(Must::Part) => match value {
                Value::Table(table) => seen
                    .parts
                    .entry(key.clone())
                    .or_default()
                    .add(table)
                    .is_ok(),
                Value::Json(_) => false,
            },
            None => false,
        }
    })
}

impl Pieces for Pass {
    fn restart(&self) {
        let mut state = self.lock();
        state.void = false;
        state.last = None;
        state.groups = None;
        state.grouped = 0;
        state.grouping = Duration::ZERO;
        for seen in &mut state.seen {
            *seen = Seen::default();
        }
    }

    fn take(&self, ctx: &BlockContext<'_>, rows: DataFrame) -> Result<bool, BlockError> {
        let mut state = self.lock();
        if state.void || state.refused {
            return Ok(false);
        }
        let Some(out) = self.run_steps(ctx, &mut state, rows)? else {
            state.void = true;
            state.last = None;
            return Ok(false);
        };
        if let Some(step) = &self.group {
            let grouped = self.group(ctx, &mut state, step, out)?;
            state.void = !grouped;
            return Ok(grouped);
        }
        let stacked = match &mut state.last {
            Some(last) => last.vstack_mut_owned(out).is_ok(),
            None => {
                state.last = Some(out);
                true
            }
        };
        if !stacked {
            state.void = true;
            state.last = None;
        }
        Ok(stacked)
    }

    /// A step that gave no rows (a filter that kept none) is warned about node by node
    /// (`NO_ROWS`): the pass gives way to it.
    fn stands(&self) -> bool {
        let state = self.lock();
        !state.void && !state.refused && state.seen.iter().all(|s| s.rows.rows() > 0)
    }

    fn refuse(&self) {
        let mut state = self.lock();
        state.refused = true;
        state.last = None;
        state.groups = None;
    }
}
