//! `state.json`: what a resume needs — the run's vars and allowlist, and which top-level
//! nodes finished (their outputs are in `outputs/<node>/`). It is replaced atomically
//! (keiri-fs) after every node, so a killed run always leaves a complete state behind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::records::RunError;

/// How a run ended (or that it has not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Started and not finished: still going, or killed.
    Running,
    Finished,
    /// At least one node failed.
    Failed,
    Cancelled,
    /// Waiting for a person's answer at a human-in-the-loop node; `--resume` with the
    /// answer continues.
    Paused,
}

impl RunStatus {
    /// The word it is serialised as (`finished`, `paused`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Paused => "paused",
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happened to one top-level node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeStatus {
    Finished,
    Failed,
    Skipped,
    /// Waiting for an answer (its `error` holds the question).
    Paused,
}

/// A failed node's error as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeFailure {
    pub node: String,
    pub code: String,
    pub message_ja: String,
    pub message_en: String,
    /// What to do about it (the block's hint: the sheets a workbook has, the encoding that
    /// reads the file, the columns the rows have), in each language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint_ja: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint_en: Option<String>,
    /// A paused node's question (`AWAITING_INPUT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<Json>,
}

/// A warning on a node that finished (see [`crate::block::Warning`]), as `state.json`,
/// [`crate::RunOutcome::warnings`] and the `node_warning` event record it. `node` is the
/// qualified id (`loop/child` inside a loop body or subflow).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NodeWarning {
    pub node: String,
    pub code: String,
    pub message_ja: String,
    pub message_en: String,
}

impl NodeWarning {
    /// The top-level node the warning belongs to (`loop` for `loop/child`).
    pub fn top_node(&self) -> &str {
        self.node.split('/').next().unwrap_or_default()
    }
}

/// One top-level node in `state.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeState {
    pub status: NodeStatus,
    /// Files under `outputs/<node>/` (finished nodes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<NodeFailure>,
    /// The columns a reader parsed when the engine told it which the plan reads
    /// (`engine/projection.rs`); absent when it read them all. A resume reuses the node only
    /// while the plan, as it is then, reads the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_columns: Option<Vec<String>>,
}

/// The content of `state.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub run_id: String,
    pub plan_id: String,
    pub plan_sha256: String,
    pub status: RunStatus,
    pub started_at: String,
    /// The run's vars after overrides (`--var`, `--input`), reused on resume.
    #[serde(default)]
    pub vars: IndexMap<String, Json>,
    /// Environment variable names the run may read.
    #[serde(default)]
    pub env_allow: Vec<String>,
    /// Whether the user allowed writes outside the run directory.
    #[serde(default)]
    pub write: bool,
    #[serde(default)]
    pub nodes: BTreeMap<String, NodeState>,
    /// The warnings of the nodes that ran, in the order they were given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<NodeWarning>,
    /// How long the last attempt took, once it ended (absent in records from before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The answers human-in-the-loop nodes accepted: who gave each, and when.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answered: Vec<Answered>,
}

/// An answer a node accepted (its question is in the node's record, the answer in `outputs/`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Answered {
    pub node: String,
    /// The user who answered (`unknown` when the caller did not say).
    pub by: String,
    /// When, in the run's clock (RFC 3339).
    pub at: String,
}

impl RunState {
    pub fn path(run_dir: &Path) -> PathBuf {
        run_dir.join("state.json")
    }

    /// Replaces `state.json` atomically.
    pub fn save(&self, run_dir: &Path) -> Result<(), RunError> {
        let path = RunState::path(run_dir);
        let bytes = serde_json::to_vec_pretty(self)
            .map_err(|e| RunError::StateInvalid(format!("serialising the state: {e}")))?;
        keiri_fs::write_atomic(&path, &bytes).map_err(|e| RunError::Write(path, e))
    }

    pub fn load(run_dir: &Path) -> Result<RunState, RunError> {
        let path = RunState::path(run_dir);
        let bytes = std::fs::read(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                RunError::RunNotFound(
                    run_dir
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                )
            } else {
                RunError::Io {
                    action: "reading",
                    path: path.clone(),
                    source: e,
                }
            }
        })?;
        serde_json::from_slice(&bytes)
            .map_err(|e| RunError::StateInvalid(format!("{}: {e}", path.display())))
    }

    /// Failed nodes, in id order.
    pub fn failures(&self) -> Vec<NodeFailure> {
        self.nodes
            .values()
            .filter(|n| n.status == NodeStatus::Failed)
            .filter_map(|n| n.error.clone())
            .collect()
    }

    /// Nodes waiting for an answer, with their questions.
    pub fn paused(&self) -> Vec<NodeFailure> {
        self.nodes
            .values()
            .filter(|n| n.status == NodeStatus::Paused)
            .filter_map(|n| n.error.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::RunStatus;

    #[test]
    fn a_status_is_shown_as_it_is_serialised() {
        for status in [
            RunStatus::Running,
            RunStatus::Finished,
            RunStatus::Failed,
            RunStatus::Cancelled,
            RunStatus::Paused,
        ] {
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                serde_json::json!(status.to_string())
            );
        }
    }
}
