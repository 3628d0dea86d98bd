//! The plan as a graph, for the studio's graph view and missing-items panel: its nodes (loop
//! bodies nested under their loop), the edges its `${node.alias}` references make, and the
//! `${vars.*}` it uses without a value.
//!
//! References are found by [`refs::scan`], the validator's own parser, and resolved with the
//! validator's scope rule (a body sees its own nodes first, then each enclosing level's; the
//! first node with an id wins), so the picture the studio draws is the one the validator
//! checks. Nodes are keyed by their JSON pointer (`/graph/2/body/plan/graph/0`), the prefix of
//! the `path` of their findings.

use std::borrow::Cow;
use std::collections::HashMap;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::model::{Node, NodeKind, Plan};
use crate::refs::{self, Target};
use crate::validate::DEFAULT_LOOP_VAR;

/// The graph of one plan.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PlanGraph {
    /// Pre-order: a loop comes before its body's nodes.
    pub nodes: Vec<GraphNode>,
    /// One edge per (source, target) pair, in the order the references are first met.
    pub edges: Vec<GraphEdge>,
    /// The `${vars.*}` names the nodes use that have no value where they are used.
    pub unresolved_vars: Vec<VarUse>,
}

/// One node of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct GraphNode {
    /// The node's JSON pointer in the plan: unique even when a loop body reuses an id.
    pub key: String,
    /// The plan node id (`""` when the node has none).
    pub id: String,
    pub kind: NodeKind,
    pub block: Option<String>,
    /// The key of the loop whose body holds this node.
    pub parent: Option<String>,
    /// The called plan of a subflow node.
    pub call_plan_id: Option<String>,
    /// The node's condition, as written.
    pub when: Option<String>,
}

/// What a reference feeds: an input, a condition, a loop's items or condition, a subflow call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EdgeKind {
    Data,
    When,
    Loop,
    Call,
}

/// Node `target` reads outputs of node `source` (both node keys).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct GraphEdge {
    pub source: String,
    pub target: String,
    /// The output aliases the target reads, in order, without repeats.
    pub aliases: Vec<String>,
    /// `data` when any reference on the pair feeds an input (what a reader follows).
    pub kind: EdgeKind,
}

/// A `${vars.name}` used where it has no value.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct VarUse {
    pub name: String,
    /// Whether a `vars` in scope has the name (with a null or empty value) or none does.
    pub defined: bool,
    /// The ids of the nodes that use it, in order (nodes without an id are left out).
    pub node_ids: Vec<String>,
}

/// The graph of `plan`.
pub fn plan_graph(plan: &Plan) -> PlanGraph {
    let mut builder = Builder::default();
    let vars = VarScope {
        vars: plan
            .vars
            .iter()
            .map(|(k, v)| (k.as_str(), has_value(v)))
            .collect(),
        parent: None,
    };
    builder.level(plan, "", None, None, &vars);
    PlanGraph {
        nodes: builder.nodes,
        edges: builder.edges.into_values().collect(),
        unresolved_vars: builder.vars.into_values().collect(),
    }
}

/// The node ids of one level of the graph, and the level around it.
struct Scope<'s> {
    ids: HashMap<&'s str, String>,
    parent: Option<&'s Scope<'s>>,
}

impl Scope<'_> {
    fn lookup(&self, id: &str) -> Option<&str> {
        let mut scope = Some(self);
        while let Some(s) = scope {
            if let Some(key) = s.ids.get(id) {
                return Some(key);
            }
            scope = s.parent;
        }
        None
    }
}

/// The vars visible at one level (name → whether it has a value), and the level around it.
struct VarScope<'s> {
    vars: HashMap<&'s str, bool>,
    parent: Option<&'s VarScope<'s>>,
}

impl VarScope<'_> {
    /// `None` when no level defines `name`, else whether it has a value.
    fn find(&self, name: &str) -> Option<bool> {
        let mut scope = Some(self);
        while let Some(s) = scope {
            if let Some(&valued) = s.vars.get(name) {
                return Some(valued);
            }
            scope = s.parent;
        }
        None
    }
}

#[derive(Default)]
struct Builder {
    nodes: Vec<GraphNode>,
    edges: IndexMap<(String, String), GraphEdge>,
    vars: IndexMap<String, VarUse>,
}

impl Builder {
    fn level(
        &mut self,
        plan: &Plan,
        base: &str,
        parent: Option<&str>,
        outer: Option<&Scope<'_>>,
        vars: &VarScope<'_>,
    ) {
        let mut scope = Scope {
            ids: HashMap::new(),
            parent: outer,
        };
        for (index, node) in plan.graph.iter().enumerate() {
            if !node.id.is_empty() {
                scope
                    .ids
                    .entry(node.id.as_str())
                    .or_insert_with(|| format!("{base}/graph/{index}"));
            }
        }
        for (index, node) in plan.graph.iter().enumerate() {
            let key = format!("{base}/graph/{index}");
            self.nodes.push(GraphNode {
                key: key.clone(),
                id: node.id.clone(),
                kind: node.kind(),
                block: node.block.clone(),
                parent: parent.map(str::to_owned),
                call_plan_id: node.call.as_ref().map(|c| c.plan_id.clone()),
                when: node.when.as_ref().map(|w| w.expr()),
            });
            for (value, kind, in_while) in node_values(node) {
                let (mut found, mut malformed) = (Vec::new(), Vec::new());
                refs::scan(&value, "", &mut found, &mut malformed);
                for reference in found {
                    match reference.target {
                        Target::Node {
                            node: id, alias, ..
                        } => {
                            if let Some(source) = scope.lookup(&id) {
                                self.edge(source, &key, alias, kind);
                            }
                        }
                        // A while condition sees the iteration counter.
                        Target::Var { name, .. } if in_while && name == "iteration" => {}
                        Target::Var { name, .. } => self.var(&name, vars, &node.id),
                        Target::Env { .. } | Target::Config { .. } => {}
                    }
                }
            }
            if let Some(body) = &node.body {
                let mut inner: HashMap<&str, bool> = body
                    .plan
                    .vars
                    .iter()
                    .map(|(k, v)| (k.as_str(), has_value(v)))
                    .collect();
                // Loop variables have a value at run time, whatever the text says.
                if let Some(foreach) = &node.foreach {
                    inner.insert(foreach.var.as_deref().unwrap_or(DEFAULT_LOOP_VAR), true);
                    inner.insert("index", true);
                }
                if node.while_loop.is_some() {
                    inner.insert("iteration", true);
                }
                let inner = VarScope {
                    vars: inner,
                    parent: Some(vars),
                };
                self.level(
                    &body.plan,
                    &format!("{key}/body/plan"),
                    Some(&key),
                    Some(&scope),
                    &inner,
                );
            }
        }
    }

    fn edge(&mut self, source: &str, target: &str, alias: String, kind: EdgeKind) {
        if source == target {
            return;
        }
        let edge = self
            .edges
            .entry((source.to_owned(), target.to_owned()))
            .or_insert_with(|| GraphEdge {
                source: source.to_owned(),
                target: target.to_owned(),
                aliases: Vec::new(),
                kind,
            });
        if !edge.aliases.contains(&alias) {
            edge.aliases.push(alias);
        }
        if kind == EdgeKind::Data {
            edge.kind = EdgeKind::Data;
        }
    }

    fn var(&mut self, name: &str, scope: &VarScope<'_>, node_id: &str) {
        let defined = match scope.find(name) {
            Some(true) => return,
            Some(false) => true,
            None => false,
        };
        let use_ = self.vars.entry(name.to_owned()).or_insert_with(|| VarUse {
            name: name.to_owned(),
            defined,
            node_ids: Vec::new(),
        });
        if !node_id.is_empty() && !use_.node_ids.iter().any(|n| n == node_id) {
            use_.node_ids.push(node_id.to_owned());
        }
    }
}

/// The values of a node's own fields that may hold references (not its body's): the fields
/// the validator scans, with what each feeds and whether it is a while condition. Inputs are
/// borrowed, not copied; only the conditions' expression text is built.
fn node_values(node: &Node) -> Vec<(Cow<'_, Value>, EdgeKind, bool)> {
    fn borrowed(
        m: &IndexMap<String, Value>,
        kind: EdgeKind,
    ) -> Vec<(Cow<'_, Value>, EdgeKind, bool)> {
        m.values()
            .map(|v| (Cow::Borrowed(v), kind, false))
            .collect()
    }
    let mut values = borrowed(&node.inputs, EdgeKind::Data);
    if let Some(when) = &node.when {
        values.push((
            Cow::Owned(Value::String(when.expr())),
            EdgeKind::When,
            false,
        ));
    }
    if let Some(foreach) = &node.foreach {
        values.extend(
            [&foreach.input, &foreach.items]
                .into_iter()
                .flatten()
                .map(|v| (Cow::Borrowed(v), EdgeKind::Loop, false)),
        );
    }
    if let Some(condition) = node.while_loop.as_ref().and_then(|w| w.condition.as_ref()) {
        values.push((
            Cow::Owned(Value::String(condition.expr())),
            EdgeKind::Loop,
            true,
        ));
    }
    if let Some(call) = &node.call {
        values.extend(borrowed(&call.inputs, EdgeKind::Call));
    }
    values
}

/// A var has a value unless it is null or blank text.
fn has_value(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::String(s) => !s.trim().is_empty(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::io::load_plan;

    fn graph(yaml: &str) -> PlanGraph {
        plan_graph(&load_plan(yaml).unwrap().plan)
    }

    fn pairs(g: &PlanGraph) -> Vec<(String, String, String, EdgeKind)> {
        g.edges
            .iter()
            .map(|e| {
                (
                    e.source.clone(),
                    e.target.clone(),
                    e.aliases.join(", "),
                    e.kind,
                )
            })
            .collect()
    }

    #[test]
    fn references_make_edges_with_their_aliases_and_kinds() {
        let g = graph(
            "id: p\nvars: {limit: 10}\ngraph:\n\
             - id: read\n  block: input.csv\n  out: {rows: rows, meta: meta}\n\
             - id: sum\n  block: transforms.group_aggregate\n  in: {rows: '${read.rows}', note: 'from ${read.meta.name} and ${read.rows}'}\n  out: {rows: totals}\n\
             - id: write\n  block: output.excel\n  when: {expr: '${sum.totals} != null'}\n  in: {rows: '${read.rows}', limit: '${vars.limit}', home: '${env.HOME}'}\n",
        );
        assert_eq!(
            pairs(&g),
            vec![
                (
                    "/graph/0".into(),
                    "/graph/1".into(),
                    "rows, meta".into(),
                    EdgeKind::Data
                ),
                (
                    "/graph/0".into(),
                    "/graph/2".into(),
                    "rows".into(),
                    EdgeKind::Data
                ),
                (
                    "/graph/1".into(),
                    "/graph/2".into(),
                    "totals".into(),
                    EdgeKind::When
                ),
            ]
        );
        assert_eq!(g.nodes.len(), 3);
        assert_eq!(g.nodes[2].when.as_deref(), Some("${sum.totals} != null"));
        assert_eq!(
            g.nodes[1].block.as_deref(),
            Some("transforms.group_aggregate")
        );
        assert!(g.unresolved_vars.is_empty());
    }

    #[test]
    fn a_data_reference_wins_the_kind_of_a_pair_and_self_references_draw_nothing() {
        let g = graph(
            "id: p\ngraph:\n\
             - id: a\n  block: x.y\n  out: {v: v}\n\
             - id: b\n  block: x.y\n  when: '${a.v}'\n  in: {v: '${a.v}', w: '${b.v}'}\n",
        );
        assert_eq!(
            pairs(&g),
            vec![(
                "/graph/0".into(),
                "/graph/1".into(),
                "v".into(),
                EdgeKind::Data
            )]
        );
    }

    #[test]
    fn loop_bodies_nest_under_their_loop_and_see_the_outer_level() {
        let g = graph(
            "id: p\ngraph:\n\
             - id: files\n  block: input.folder\n  out: {paths: paths}\n\
             - id: each\n  type: loop\n  foreach: {input: '${files.paths}', var: path}\n  body:\n    plan:\n      id: inner\n      graph:\n\
             \x20       - id: files\n          block: input.csv\n          in: {path: '${vars.path}', i: '${vars.index}'}\n          out: {rows: rows}\n\
             \x20       - id: check\n          block: x.y\n          in: {rows: '${files.rows}', all: '${each.results}'}\n\
             - id: sub\n  type: subflow\n  call: {plan_id: other, inputs: {p: '${files.paths}'}}\n",
        );
        let keys: Vec<(&str, Option<&str>)> = g
            .nodes
            .iter()
            .map(|n| (n.key.as_str(), n.parent.as_deref()))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("/graph/0", None),
                ("/graph/1", None),
                ("/graph/1/body/plan/graph/0", Some("/graph/1")),
                ("/graph/1/body/plan/graph/1", Some("/graph/1")),
                ("/graph/2", None),
            ]
        );
        assert_eq!(g.nodes[1].kind, NodeKind::Loop);
        assert_eq!(g.nodes[4].call_plan_id.as_deref(), Some("other"));
        assert_eq!(
            pairs(&g),
            vec![
                (
                    "/graph/0".into(),
                    "/graph/1".into(),
                    "paths".into(),
                    EdgeKind::Loop
                ),
                // The body's own `files` shadows the outer one.
                (
                    "/graph/1/body/plan/graph/0".into(),
                    "/graph/1/body/plan/graph/1".into(),
                    "rows".into(),
                    EdgeKind::Data
                ),
                (
                    "/graph/1".into(),
                    "/graph/1/body/plan/graph/1".into(),
                    "results".into(),
                    EdgeKind::Data
                ),
                (
                    "/graph/0".into(),
                    "/graph/2".into(),
                    "paths".into(),
                    EdgeKind::Call
                ),
            ]
        );
        // The loop variable and index have values inside the body.
        assert!(g.unresolved_vars.is_empty(), "{:?}", g.unresolved_vars);
    }

    #[test]
    fn vars_without_a_value_are_listed_once_with_the_nodes_that_use_them() {
        let g = graph(
            "id: p\nvars: {to: '', cc: null, from: keiri@example.com}\ngraph:\n\
             - id: a\n  block: notify.send\n  in: {to: '${vars.to}', from: '${vars.from}', sub: '${ vars.subject.ja }'}\n\
             - id: b\n  block: notify.send\n  in: {to: '${vars.to}', cc: '${vars.cc}'}\n\
             - block: notify.send\n  in: {to: '${vars.to}'}\n\
             - id: m\n  block: x.y\n  in: {i: '${vars.iteration}'}\n\
             - id: w\n  type: loop\n  while: {condition: '${vars.iteration} < 3'}\n  body:\n    plan:\n      id: inner\n      vars: {page: ''}\n      graph:\n\
             \x20       - id: n\n          block: x.y\n          in: {i: '${vars.iteration}', p: '${vars.page}'}\n",
        );
        let uses: Vec<(&str, bool, Vec<&str>)> = g
            .unresolved_vars
            .iter()
            .map(|u| {
                (
                    u.name.as_str(),
                    u.defined,
                    u.node_ids.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            uses,
            vec![
                ("to", true, vec!["a", "b"]),
                ("subject", false, vec!["a"]),
                ("cc", true, vec!["b"]),
                // Outside a while loop the counter has no value; its condition and body see it.
                ("iteration", false, vec!["m"]),
                ("page", true, vec!["n"]),
            ]
        );
    }

    #[test]
    fn unknown_nodes_and_the_first_of_duplicate_ids() {
        let g = graph(
            "id: p\ngraph:\n\
             - id: a\n  block: x.y\n  out: {v: v}\n\
             - id: a\n  block: x.z\n  out: {v: v}\n\
             - id: b\n  type: magic\n  in: {v: '${a.v}', w: '${ghost.v}'}\n",
        );
        assert_eq!(g.nodes[2].kind, NodeKind::Unknown);
        assert_eq!(
            pairs(&g),
            vec![(
                "/graph/0".into(),
                "/graph/2".into(),
                "v".into(),
                EdgeKind::Data
            )]
        );
    }
}
