//! Which columns of a CSV the rest of the plan reads, worked out before the run, so `csv.read`
//! parses only those (its `columns` projection, see `blocks/input/csv_read.rs`) and the text
//! of the others is never stored. On a journal of seven columns grouped by account and month,
//! three are read; at 5M rows the other four held about half a gigabyte.
//!
//! The answer is a set of names only when every use of the table is known. A top-level
//! `csv.read` (with a header, and no `columns` of its own) qualifies when each reference to it
//! anywhere in the plan is a whole `${read.rows}` given as the rows input of a block in
//! [`READS_ONLY_NAMED`]. Such a block reads of its rows only the columns its spec's
//! `column_of` inputs name ([`keiri_plan::column_reads`], the list the engine's
//! `COLUMN_NOT_FOUND` check uses), and hands the rest, untouched, to the outputs whose
//! `columns_from` is that input; those outputs' own uses are followed the same way. An output
//! that keeps only named columns (`keeps_columns_from`: `select_columns`, `group_aggregate`)
//! ends the trail: what it keeps is named by an input, and so already counted. Anything else
//! — another block, a reference inside a longer string, a loop, a condition, a column input
//! holding a reference, a `columns_if` or `default_if_present` input — and the table is read
//! whole. Over-counting is harmless (a name the file lacks is ignored, one a block adds is
//! kept if the file has it); under-counting would change an answer, so every doubt reads all.
//!
//! A read that leaves columns out says so in its `summary` (`unread_columns`), and the run
//! record and the window show its table as read. The planner's sample runs
//! ([`crate::RunOptions::only_what_is_used`] off) read every column, so a failure report
//! lists the file's columns.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use keiri_plan::columns::{
    COLUMN_OF, COLUMNS_FROM, COLUMNS_IF, DEFAULT_IF_PRESENT, JOINS_COLUMNS_FROM,
    KEEPS_COLUMNS_FROM, RENAMES_COLUMNS_FROM,
};
use keiri_plan::model::{Node, Plan};
use keiri_plan::refs::{Target, contains_reference, scan};
use keiri_plan::{BlockSpec, Catalog};
use serde_json::Value;

use crate::records::RunDir;
use crate::state::NodeState;

/// Builtins that read of their rows input only the columns their spec's `column_of` inputs
/// name, and pass every other column on unchanged to the outputs whose `columns_from` is that
/// input (or keep only named ones, `keeps_columns_from`). A block joins this list only once
/// its code is checked to read nothing else (`transforms.deduplicate` without `keys` compares
/// every column, `transforms.compute_columns`' expressions are not checked yet: neither is
/// here).
const READS_ONLY_NAMED: &[&str] = &[
    "transforms.coerce_types",
    "transforms.normalize_dates",
    "transforms.normalize_amounts",
    "transforms.fiscal_period",
    "transforms.group_aggregate",
    "transforms.filter_rows",
    "transforms.select_columns",
    "transforms.sort_rows",
];

/// How far a trail of pass-through outputs is followed.
const MAX_DEPTH: usize = 64;

/// For each top-level `csv.read` node whose later uses are all known, the columns they read
/// (sorted; names the file lacks included). Nodes not listed read every column.
pub(super) fn used_columns(plan: &Plan, catalog: &Catalog) -> HashMap<String, Vec<String>> {
    let uses = Uses::of(plan);
    let mut out = HashMap::new();
    if uses.malformed {
        // A reference that does not parse could name any node: read everything.
        return out;
    }
    for node in &plan.graph {
        if builtin(node, catalog) != Some("csv.read")
            || node.inputs.get("header") == Some(&Value::Bool(false))
            || node.inputs.get("columns").is_some_and(|v| !v.is_null())
        {
            continue;
        }
        let Some(alias) = alias_of(node, "rows") else {
            continue;
        };
        // Its other outputs name or count its columns (`columns`, `summary`): none may be
        // used, or they would tell of the columns read, not the file's.
        if uses.count(&node.id, None) != uses.count(&node.id, Some(alias)) {
            continue;
        }
        if let Some(columns) = uses.demand(catalog, &node.id, alias, 0) {
            out.insert(node.id.clone(), columns.into_iter().collect());
        }
    }
    out
}

/// What the rest of the plan uses of a node, when the engine knows it (top-level nodes of a run
/// that reads and builds only what is used): `None` is all.
#[derive(Debug, Default)]
pub(super) struct Used {
    /// The columns later nodes read of a reader's table (`BlockContext::columns_used`).
    pub columns: Option<Vec<String>>,
    /// The outputs the node's `out` takes (`BlockContext::outputs_taken`).
    pub outputs: Option<Vec<String>>,
    /// The steps that take a reader's rows piece by piece (`BlockContext::pieces`,
    /// `fused.rs`).
    pub pieces: Option<std::sync::Arc<dyn crate::block::Pieces>>,
}

/// The finished nodes a resume must run again: each reader whose recorded columns are not
/// the ones the plan reads now (`used`), each node that built an output in part because the
/// plan did not take it and whose `out` takes it now (the plan was edited between the two
/// attempts), and every node that depends on one, directly or not.
pub(super) fn stale(
    plan: &Plan,
    finished: &BTreeMap<String, NodeState>,
    used: &HashMap<String, Vec<String>>,
    dir: &RunDir,
) -> BTreeSet<String> {
    let taken_now = |id: &str| {
        let Some(node) = plan.graph.iter().find(|n| n.id == id) else {
            return false;
        };
        dir.kept_in_part(id).is_ok_and(|kept| {
            kept.iter()
                .any(|(key, k)| k.untaken && node.aliases().any(|(local, _)| local == key))
        })
    };
    let mut stale: BTreeSet<String> = finished
        .iter()
        .filter(|(id, n)| n.read_columns.as_ref() != used.get(*id) || taken_now(id))
        .map(|(id, _)| id.clone())
        .collect();
    if stale.is_empty() {
        return stale;
    }
    // Dependents, to a fixed point (the graph is small and acyclic).
    let deps: Vec<(&str, Vec<String>)> = plan
        .graph
        .iter()
        .map(|n| (n.id.as_str(), keiri_plan::dry_run::dependencies(n, plan)))
        .collect();
    loop {
        let before = stale.len();
        for (id, on) in &deps {
            if on.iter().any(|d| stale.contains(d)) {
                stale.insert((*id).to_string());
            }
        }
        if stale.len() == before {
            return stale;
        }
    }
}

/// The builtin a node runs (its spec's `builtin:` entrypoint, else its block id).
pub(super) fn builtin<'c>(node: &Node, catalog: &'c Catalog) -> Option<&'c str> {
    let spec = catalog.get(node.block.as_deref()?)?;
    Some(
        spec.entrypoint
            .as_deref()
            .and_then(|e| e.strip_prefix("builtin:"))
            .unwrap_or(spec.id.as_str()),
    )
}

/// The alias a node gives its output `local` (`out: {rows: journal}`).
pub(super) fn alias_of<'n>(node: &'n Node, local: &str) -> Option<&'n str> {
    node.out.get(local).and_then(Value::as_str)
}

/// Every reference to a node in the plan: how many there are in all, by node and by output,
/// and those that are a whole input value of a top-level node (`(consumer, input, alias)`).
pub(super) struct Uses<'p> {
    /// The plan holds a `${…}` that does not parse, or could not be read whole.
    pub malformed: bool,
    /// By `(node, Some(alias))`, and by `(node, None)` for all of a node's outputs.
    all: HashMap<(String, Option<String>), usize>,
    /// By node: `(consumer, input, alias)` for each whole input value referring to it.
    pub inputs: HashMap<String, Vec<(&'p Node, &'p str, String)>>,
}

impl<'p> Uses<'p> {
    pub(super) fn of(plan: &'p Plan) -> Uses<'p> {
        let mut all: HashMap<(String, Option<String>), usize> = HashMap::new();
        let (mut found, mut bad) = (Vec::new(), Vec::new());
        // The whole plan: inputs, conditions, loops, bodies, calls, outputs.
        let malformed = match serde_json::to_value(plan) {
            Ok(value) => {
                scan(&value, "", &mut found, &mut bad);
                !bad.is_empty()
            }
            Err(_) => true,
        };
        for r in &found {
            if let Target::Node { node, alias, .. } = &r.target {
                *all.entry((node.clone(), None)).or_default() += 1;
                *all.entry((node.clone(), Some(alias.clone()))).or_default() += 1;
            }
        }
        let mut inputs: HashMap<String, Vec<(&Node, &str, String)>> = HashMap::new();
        for consumer in &plan.graph {
            for (key, value) in &consumer.inputs {
                let Some(Target::Node {
                    node,
                    alias,
                    path: None,
                }) = value
                    .as_str()
                    .and_then(keiri_plan::resolve::whole_reference)
                    .and_then(|raw| keiri_plan::refs::parse_target(raw).ok())
                else {
                    continue;
                };
                inputs
                    .entry(node)
                    .or_default()
                    .push((consumer, key.as_str(), alias));
            }
        }
        Uses {
            malformed,
            all,
            inputs,
        }
    }

    /// How many references the plan makes to `node`'s output `alias`, or to any of its
    /// outputs.
    pub(super) fn count(&self, node: &str, alias: Option<&str>) -> usize {
        let key = (node.to_string(), alias.map(str::to_string));
        self.all.get(&key).copied().unwrap_or(0)
    }

    /// The columns the uses of `node`'s output `alias` read, or `None` when one is not known.
    fn demand(
        &self,
        catalog: &Catalog,
        node: &str,
        alias: &str,
        depth: usize,
    ) -> Option<BTreeSet<String>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let whole: Vec<_> = self
            .inputs
            .get(node)
            .into_iter()
            .flatten()
            .filter(|(_, _, a)| a == alias)
            .collect();
        // Every reference to this output must be a whole input value.
        if self.count(node, Some(alias)) != whole.len() {
            return None;
        }
        let mut columns = BTreeSet::new();
        for &&(consumer, input, _) in &whole {
            let spec = catalog.get(consumer.block.as_deref()?)?;
            if !READS_ONLY_NAMED.contains(&builtin(consumer, catalog)?) {
                return None;
            }
            columns.extend(reads(spec, consumer, input)?);
            for (local, port) in &spec.outputs {
                if port.extra.get(COLUMNS_FROM).and_then(Value::as_str) != Some(input) {
                    continue;
                }
                if port.extra.contains_key(RENAMES_COLUMNS_FROM)
                    || port.extra.contains_key(JOINS_COLUMNS_FROM)
                {
                    return None;
                }
                // Keeping only named columns (not `mode: exclude`, which keeps the others).
                let keeps = port.extra.contains_key(KEEPS_COLUMNS_FROM)
                    && consumer.inputs.get("mode").and_then(Value::as_str) != Some("exclude");
                if keeps {
                    continue;
                }
                let Some(next) = alias_of(consumer, local) else {
                    // Not given an alias: nothing can reference it.
                    continue;
                };
                columns.extend(self.demand(catalog, &consumer.id, next, depth + 1)?);
            }
        }
        Some(columns)
    }
}

/// The columns `consumer` reads of the rows it gets in `input`, or `None` when they are not
/// all known before the run.
fn reads(spec: &BlockSpec, consumer: &Node, input: &str) -> Option<BTreeSet<String>> {
    for (key, port) in &spec.inputs {
        let of = match port.extra.get(COLUMN_OF) {
            Some(Value::String(one)) => one == input,
            Some(Value::Array(many)) => many.iter().any(|v| v.as_str() == Some(input)),
            _ => false,
        };
        if !of {
            continue;
        }
        let set = consumer.inputs.get(key).filter(|v| !v.is_null());
        // A name known only at run time, or read only when present or when another input is.
        if set.is_some_and(contains_reference)
            || port.extra.contains_key(COLUMNS_IF)
            || (set.is_none() && port.extra.get(DEFAULT_IF_PRESENT) == Some(&Value::Bool(true)))
        {
            return None;
        }
    }
    let get = |key: &str| consumer.inputs.get(key);
    Some(
        keiri_plan::column_reads(spec, &get)
            .into_iter()
            .filter(|r| r.rows == input)
            .map(|r| r.column)
            .collect(),
    )
}
