//! The engine's side of a pass (`fused.rs`): the reader of a chain runs with a [`Pass`] of
//! its steps, and each step the pass ran is recorded and reported at its own turn.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use indexmap::IndexMap;
use keiri_plan::BlockSpec;
use keiri_plan::model::Node;
use serde_json::Value as Json;

use super::checks::{check_columns, check_inputs};
use super::fused::{GROUPS, Pass, ROWS, Step, must_of};
use super::projection::{Used, alias_of, builtin};
use super::scope::Scope;
use super::{Frame, NodeResult, Runner, millis};
use crate::block::{BlockError, ErrorCode, Outputs};
use crate::records::Event;
use crate::value::Value;

impl Runner<'_> {
    pub(super) fn lock_fused(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, (Outputs, Duration)>> {
        self.fused.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The pass of `node` when it is the reader of a chain (top level): `used` then says the
    /// pass takes its rows, so no later node reads them whole.
    pub(super) fn pass(
        &self,
        node: &Node,
        frame: &Frame<'_>,
        scope: &Scope<'_>,
        used: &mut Used,
    ) -> Option<Arc<Pass>> {
        if !frame.prefix.is_empty() || frame.top.is_none() {
            return None;
        }
        let chain = self.chains.get(&node.id)?;
        let steps = chain
            .steps
            .iter()
            .map(|node| self.step(node, scope, frame))
            .collect::<Option<Vec<_>>>()?;
        let group = match &chain.group {
            Some(node) => Some(self.step(node, scope, frame)?),
            None => None,
        };
        let pass = Pass::new(steps, group);
        let rows = alias_of(node, ROWS)?;
        if let Some(taken) = &mut used.outputs {
            taken.retain(|local| {
                local != ROWS || node.out.get(local).and_then(Json::as_str) != Some(rows)
            });
        }
        used.pieces = Some(pass.clone());
        Some(pass)
    }

    /// One step of a pass, its other inputs resolved in `scope`; `None` when one does not
    /// resolve or its block is unknown (the steps then run one by one and say why).
    fn step(&self, node: &Node, scope: &Scope<'_>, frame: &Frame<'_>) -> Option<Step> {
        let spec = self.catalog.get(node.block.as_deref()?)?;
        let entry = builtin(node, self.catalog)?;
        let others: IndexMap<String, Json> = node
            .inputs
            .iter()
            .filter(|(key, _)| *key != ROWS)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let qid = frame.qualified(&node.id);
        let inputs = self.resolve_inputs(&others, &qid, scope).ok()?;
        let mut parts = frame.prefix.clone();
        parts.push(node.id.clone());
        Some(Step {
            node: node.clone(),
            out_dir: self.dir.files_dir(&parts),
            qid,
            spec: spec.clone(),
            f: self.registry.get(entry)?,
            inputs,
            check,
            must: if entry == GROUPS {
                &[]
            } else {
                must_of(entry)?
            },
        })
    }

    /// After the reader of a pass: when it kept its rows in part, the pass ran every step
    /// on all of them, and their outputs wait for their turn (`finish_fused`).
    pub(super) fn take_pass(
        &self,
        qid: &str,
        pass: &Pass,
        outputs: &Outputs,
    ) -> Result<(), BlockError> {
        let Some(&rows) = outputs.in_part().get(ROWS) else {
            return Ok(());
        };
        let steps = pass
            .finish(rows, &self.options.cancel)?
            .ok_or_else(|| unfinished(qid))?;
        let mut fused = self.lock_fused();
        for (id, outputs, spent) in steps {
            fused.insert(id, (outputs, spent));
        }
        Ok(())
    }

    /// A step the pass ran, at its turn: recorded and reported as if it had run then.
    pub(super) fn finish_fused(
        &self,
        node: &Node,
        qid: &str,
        frame: &Frame<'_>,
        (outputs, spent): (Outputs, Duration),
    ) -> NodeResult {
        self.emit(Event::NodeStart {
            node: qid.to_string(),
            attempt: 1,
        });
        self.done(node, qid, frame, outputs, millis(spent))
    }
}

/// The error for a reader that kept its rows in part while its pass did not finish: a bug of
/// the reader, never a silent wrong answer.
fn unfinished(qid: &str) -> BlockError {
    BlockError::new(
        ErrorCode::BlockFailed,
        format!("ノード {qid}: 行を次のステップへ渡しきれませんでした"),
        format!("node {qid}: its rows did not all reach the steps after it"),
    )
}

/// The checks the engine makes before a block runs, on a step's inputs for one piece.
fn check(
    spec: &BlockSpec,
    node: &Node,
    inputs: &mut IndexMap<String, Value>,
    qid: &str,
) -> Result<(), BlockError> {
    check_inputs(spec, inputs, qid)?;
    check_columns(spec, node, inputs, qid)
}
