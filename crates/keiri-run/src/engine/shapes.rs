//! The runner's side of the shapes a foreach keeps for its output lists of tables (see
//! `empty.rs`): the finished loops' shapes until they are published, and a body node's
//! inputs resolved without running anything, for a loop that ran 0 times.

use std::collections::HashMap;

use indexmap::IndexMap;
use keiri_plan::model::Node;
use keiri_plan::resolve;
use serde_json::Value as Json;

use super::empty::Published;
use super::{Runner, Scope, Shapes};
use crate::value::Value;

impl Runner<'_> {
    pub(super) fn lock_loop_shapes(&self) -> std::sync::MutexGuard<'_, HashMap<String, Shapes>> {
        self.loop_shapes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A loop body node's inputs resolved without running anything (`empty::body_shapes`).
    pub(super) fn dry_inputs(
        &self,
        inner: &Node,
        published: &Published,
        scope: &Scope<'_>,
    ) -> IndexMap<String, Value> {
        let view = Scope {
            outputs: published.clone(),
            shapes: HashMap::new(),
            vars: IndexMap::new(),
            parent: Some(scope),
        };
        let lookup = self.lookup(&view, true);
        let resolved =
            |(k, v): (&String, &Json)| Some((k.clone(), resolve::resolve(v, &lookup).ok()?));
        inner.inputs.iter().filter_map(resolved).collect()
    }
}
