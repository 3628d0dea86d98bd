//! The plan model, compatible with the keiri_agent v0 YAML format.
//!
//! Values inside nodes (`in`, `vars`, …) stay `serde_json::Value`: they are free-form data
//! with `${…}` references anywhere. Keys we do not know are kept in `extra` maps and written
//! back, so loading and saving a plan never drops what another tool put there.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A plan: a DAG of typed blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Plan {
    #[serde(
        rename = "apiVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub api_version: Option<String>,
    #[serde(default)]
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_version")]
    #[schemars(with = "Option<String>")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub vars: IndexMap<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Policy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<Ui>,
    #[serde(default)]
    pub graph: Vec<Node>,
    /// Top-level keys this version does not know, kept in order.
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

/// Execution policy of a plan or node.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Policy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    /// The plan's bounds on its run's work (a plan's own policy only; see [`PolicyLimits`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<PolicyLimits>,
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

/// `policy.limits`: what one run of the plan may do before it stops with `LIMIT_EXCEEDED`.
/// Unset fields keep the runtime's defaults; a value above the ceiling of the user's settings
/// is held at the ceiling, so a plan (often written by a model) can lower its bounds and raise
/// them for a large journal, but never past what the user allowed.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct PolicyLimits {
    /// Items one `foreach` may run its body for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreach_items: Option<u64>,
    /// Iterations one `while` may run, whatever its `max_iterations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub while_iterations: Option<u64>,
    /// Rows one `transforms.join` may produce.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join_rows: Option<u64>,
    /// Megabytes (MiB) the process may grow by from the run's start (the tables the run
    /// keeps and the work of the node running).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
}

impl PolicyLimits {
    /// Each bound by its name as written (`foreach_items`, …), set or not: one list for
    /// every check of the bounds (the validator's, the settings').
    pub fn bounds(&self) -> [(&'static str, Option<u64>); 4] {
        [
            ("foreach_items", self.foreach_items),
            ("while_iterations", self.while_iterations),
            ("join_rows", self.join_rows),
            ("memory_mb", self.memory_mb),
        ]
    }
}

/// UI hints: the order in which UI nodes are shown.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ui {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layout: Vec<String>,
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

/// One node of the graph: a block call, a loop or a subflow call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Node {
    #[serde(default)]
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    /// `loop` or `subflow`; absent for a block node.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(rename = "in", default, skip_serializing_if = "IndexMap::is_empty")]
    pub inputs: IndexMap<String, Value>,
    /// `local_key: alias` — the block's output `local_key` is published as `${node.alias}`.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub out: IndexMap<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<When>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreach: Option<Foreach>,
    #[serde(rename = "while", default, skip_serializing_if = "Option::is_none")]
    pub while_loop: Option<While>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Body>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<Call>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Policy>,
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

/// A node's condition. v0 plans write `when: {expr: …}`; a bare string is accepted too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum When {
    Expr { expr: Value },
    Bare(Value),
}

impl When {
    /// The expression text, if it is a string (a non-string literal is an expression too:
    /// `true`, `1`).
    pub fn expr(&self) -> String {
        let v = match self {
            When::Expr { expr } => expr,
            When::Bare(v) => v,
        };
        match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

/// `foreach` of a loop node.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Foreach {
    /// A reference (or literal list) to iterate over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// A literal list to iterate over (alternative to `input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Value>,
    /// The loop variable name; v0 plans call it `itemVar`.
    #[serde(default, alias = "itemVar", skip_serializing_if = "Option::is_none")]
    pub var: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u32>,
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

/// `while` of a loop node.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct While {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<When>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<i64>,
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

/// The body of a loop: an inner plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Body {
    pub plan: Box<Plan>,
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

/// A subflow call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Call {
    #[serde(default)]
    pub plan_id: String,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub inputs: IndexMap<String, Value>,
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

/// What kind of node this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Block,
    Loop,
    Subflow,
    /// A `type` we do not know; the validator reports it.
    Unknown,
}

impl NodeKind {
    /// The word it is serialised as (`block`, `loop`, `subflow`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Block => "block",
            NodeKind::Loop => "loop",
            NodeKind::Subflow => "subflow",
            NodeKind::Unknown => "unknown",
        }
    }
}

impl Node {
    pub fn kind(&self) -> NodeKind {
        match self.kind.as_deref() {
            None | Some("block") => NodeKind::Block,
            Some("loop") => NodeKind::Loop,
            Some("subflow") => NodeKind::Subflow,
            Some(_) => NodeKind::Unknown,
        }
    }

    /// The published aliases: `out` values that are strings (a non-string alias is reported
    /// by the validator).
    pub fn aliases(&self) -> impl Iterator<Item = (&str, &str)> {
        self.out
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|a| (k.as_str(), a)))
    }
}

/// Versions are strings, but v0 plans sometimes write `version: 1` or `1.0`.
mod opt_version {
    use serde::{Deserialize, Deserializer, Serializer};
    use serde_json::Value;

    pub fn serialize<S: Serializer>(v: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_str(v),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Ok(match Option::<Value>::deserialize(d)? {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(other) => Some(other.to_string()),
        })
    }
}
