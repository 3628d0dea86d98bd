//! The block interface: a builtin is a plain function from resolved inputs to outputs.

use std::collections::BTreeMap;
use std::path::Path;

use indexmap::IndexMap;
use tokio_util::sync::CancellationToken;

use crate::value::Value;

/// Stable codes of block failures (serialised as `BLOCK_FAILED`, `INPUT_INVALID`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The block ran and failed (bad data, a missing column, a parse error).
    BlockFailed,
    /// An input is missing, of the wrong type, or outside its enum.
    InputInvalid,
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
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BlockFailed => "BLOCK_FAILED",
            ErrorCode::InputInvalid => "INPUT_INVALID",
            ErrorCode::FileNotFound => "FILE_NOT_FOUND",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::UnknownBlock => "UNKNOWN_BLOCK",
            ErrorCode::RefUnresolved => "REF_UNRESOLVED",
            ErrorCode::EnvNotAllowed => "ENV_NOT_ALLOWED",
            ErrorCode::ExprInvalid => "EXPR_INVALID",
            ErrorCode::SubflowNotFound => "SUBFLOW_NOT_FOUND",
            ErrorCode::SubflowCycle => "SUBFLOW_CYCLE",
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
    pub hint: Option<(String, String)>,
}

impl BlockError {
    pub fn new(code: ErrorCode, message_ja: impl Into<String>, message_en: impl Into<String>) -> BlockError {
        BlockError {
            code,
            message_ja: message_ja.into(),
            message_en: message_en.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, ja: impl Into<String>, en: impl Into<String>) -> BlockError {
        self.hint = Some((ja.into(), en.into()));
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
    /// Cancelled when the run is cancelled or the node times out; long loops check it.
    pub cancel: &'a CancellationToken,
    /// The user allowed writes outside the run directory (`keiri run --write`): only then
    /// may a block write to an output path the plan names (else it writes under `out_dir`).
    pub write: bool,
}

/// The resolved inputs of one node, spec defaults already applied by the engine.
#[derive(Debug, Clone, Default)]
pub struct Inputs(pub IndexMap<String, Value>);

/// The outputs of one node, keyed by the spec's output names.
#[derive(Debug, Clone, Default)]
pub struct Outputs(pub IndexMap<String, Value>);

/// A builtin block implementation.
pub type BlockFn = fn(&BlockContext<'_>, &Inputs) -> Result<Outputs, BlockError>;

/// The builtin implementations by block id (`csv.read`, `transforms.filter_rows`, …).
#[derive(Debug, Clone, Default)]
pub struct Registry {
    blocks: BTreeMap<&'static str, BlockFn>,
}

impl Registry {
    /// Every builtin this crate implements.
    pub fn builtins() -> Registry {
        let mut registry = Registry::default();
        crate::blocks::register_all(&mut registry);
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

// Typed accessors on `Inputs` (`get`, `str`, `require_str`, `bool`, `i64`, `f64`,
// `strings`, `rows`, `table`) live here; each returns `BlockError` with code
// `INPUT_INVALID` naming the key when the value has the wrong type.
