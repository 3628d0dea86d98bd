//! What a plan level sees while it runs: node outputs by alias, the shapes of loop outputs and
//! the vars, with the outer levels behind them ([`Scope`]); the runtime's side of keiri-plan's
//! one resolver over it ([`RefLookup`]), and the error a failed reference becomes.

use std::collections::{BTreeSet, HashMap};

use indexmap::IndexMap;
use keiri_plan::model::{Node, Plan};
use keiri_plan::refs::Target;
use keiri_plan::resolve::{self, Lookup, ResolveError};
use polars::prelude::DataFrame;
use serde_json::Value as Json;

use super::tables::value_json;
use crate::block::{BlockError, ErrorCode, Outputs};
use crate::value::Value;

/// A loop's output lists' shapes, by alias (`empty.rs`, `shapes.rs`).
pub(super) type Shapes = IndexMap<String, DataFrame>;

/// Values visible at one plan level: node outputs by alias and vars, plus the outer level.
pub(super) struct Scope<'p> {
    pub(super) outputs: HashMap<String, IndexMap<String, Value>>,
    /// The columns of the tables a loop's output lists hold, by node and alias (`empty.rs`).
    pub(super) shapes: HashMap<String, Shapes>,
    pub(super) vars: IndexMap<String, Value>,
    pub(super) parent: Option<&'p Scope<'p>>,
}

impl<'p> Scope<'p> {
    pub(super) fn root(plan: &Plan, overrides: &IndexMap<String, Json>) -> Scope<'p> {
        let mut vars: IndexMap<String, Value> = plan
            .vars
            .iter()
            .map(|(k, v)| (k.clone(), Value::Json(v.clone())))
            .collect();
        for (k, v) in overrides {
            vars.insert(k.clone(), Value::Json(v.clone()));
        }
        Scope {
            outputs: HashMap::new(),
            shapes: HashMap::new(),
            vars,
            parent: None,
        }
    }

    pub(super) fn output(&self, node: &str, alias: &str) -> Option<&Value> {
        match self.outputs.get(node) {
            Some(aliases) => aliases.get(alias),
            None => self.parent.and_then(|p| p.output(node, alias)),
        }
    }

    pub(super) fn shape(&self, node: &str, alias: &str) -> Option<&DataFrame> {
        match self.shapes.get(node) {
            Some(shapes) => shapes.get(alias),
            None => self.parent.and_then(|p| p.shape(node, alias)),
        }
    }

    pub(super) fn var(&self, name: &str) -> Option<&Value> {
        self.vars
            .get(name)
            .or_else(|| self.parent.and_then(|p| p.var(name)))
    }

    /// Publishes a node's outputs under its `out` aliases (`out` names each output once).
    /// They are moved, not copied: a node's JSON can be hundreds of megabytes of
    /// `serde_json` values.
    pub(super) fn publish(&mut self, node: &Node, outputs: Outputs) {
        let mut outputs = outputs.0;
        let aliases = node
            .aliases()
            .filter_map(|(local, alias)| outputs.swap_remove(local).map(|v| (alias.to_string(), v)))
            .collect();
        self.outputs.insert(node.id.clone(), aliases);
    }
}

/// The runtime's side of the one resolver.
pub(super) struct RefLookup<'a> {
    pub(super) scope: &'a Scope<'a>,
    pub(super) config: &'a serde_json::Map<String, Json>,
    pub(super) env: &'a HashMap<String, String>,
    pub(super) env_allow: &'a BTreeSet<String>,
    /// In conditions, a missing output or var reads as null.
    pub(super) lenient: bool,
}

impl Lookup for RefLookup<'_> {
    type Value = Value;

    fn lookup(&self, raw: &str, target: &Target) -> Result<Value, ResolveError> {
        let unresolved = || ResolveError::Unresolved {
            raw: raw.to_string(),
        };
        let (base, path) = match target {
            Target::Node { node, alias, path } => (self.scope.output(node, alias).cloned(), path),
            Target::Var { name, path } => (self.scope.var(name).cloned(), path),
            Target::Config { name, path } => {
                (self.config.get(name).cloned().map(Value::Json), path)
            }
            Target::Env { name } => {
                if !self.env_allow.contains(name) {
                    return Err(ResolveError::EnvNotAllowed { name: name.clone() });
                }
                return match self.env.get(name) {
                    Some(v) => Ok(Value::Json(Json::String(v.clone()))),
                    None if self.lenient => Ok(Value::Json(Json::Null)),
                    None => Err(unresolved()),
                };
            }
        };
        let found = match (base, path) {
            (Some(v), None) => Some(v),
            (Some(v), Some(path)) => {
                let json = value_json(&v).map_err(|e| ResolveError::Unusable {
                    raw: raw.to_string(),
                    reason: e.message_en,
                })?;
                resolve::descend(&json, path).cloned().map(Value::Json)
            }
            (None, _) => None,
        };
        match found {
            Some(v) => Ok(v),
            None if self.lenient => Ok(Value::Json(Json::Null)),
            None => Err(unresolved()),
        }
    }

    fn literal(&self, value: Json) -> Value {
        Value::Json(value)
    }

    fn to_json(&self, raw: &str, value: Value) -> Result<Json, ResolveError> {
        value_json(&value).map_err(|e| ResolveError::Unusable {
            raw: raw.to_string(),
            reason: e.message_en,
        })
    }
}

pub(super) fn resolve_error(node: &str, err: &ResolveError) -> BlockError {
    let code = match err {
        ResolveError::EnvNotAllowed { .. } => ErrorCode::EnvNotAllowed,
        _ => ErrorCode::RefUnresolved,
    };
    let ja = match err {
        ResolveError::EnvNotAllowed { name } => {
            format!("ノード {node}: 環境変数 {name} は許可リストにありません")
        }
        ResolveError::Unresolved { raw } => {
            format!("ノード {node}: 参照 ${{{raw}}} の値がありません")
        }
        other => format!("ノード {node}: 参照を解決できません（{other}）"),
    };
    let error = BlockError::new(code, ja, format!("node {node}: {err}"));
    match err {
        ResolveError::EnvNotAllowed { name } => error.with_hint(
            format!("実行時に --allow-env {name} を指定してください"),
            format!("pass --allow-env {name} to the run"),
        ),
        _ => error,
    }
}
