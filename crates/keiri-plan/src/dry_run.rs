//! Dry-run: what would run, in which order, with which inputs — without running anything.
//!
//! The order is a deterministic topological order (Kahn's algorithm, ties broken by the
//! order in the file). Each reference is resolved to a sample value derived from the
//! declared type of the output it points at, so the user sees the shape of the data each
//! node would get. Loop bodies and called subflows are shown one level deep.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::catalog::{Catalog, TypeSpec, ValueType};
use crate::model::{Node, NodeKind, Plan};
use crate::refs::{self, Target};
use crate::resolve::{self, ResolveError};
use crate::validate::{DEFAULT_LOOP_VAR, node_info};

/// One node as it would run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DryRunNode {
    pub id: String,
    pub kind: NodeKind,
    pub block: Option<String>,
    /// Nodes whose outputs this node reads, in graph order.
    pub depends_on: Vec<String>,
    /// `in` with every reference replaced by a sample value.
    pub inputs: Value,
    /// alias → sample value.
    pub outputs: Value,
    pub when: Option<String>,
    /// Body nodes of a loop, or the called plan's nodes of a subflow.
    pub children: Vec<DryRunNode>,
}

/// The result of a dry-run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DryRun {
    pub plan_id: String,
    pub order: Vec<String>,
    pub nodes: Vec<DryRunNode>,
}

/// Plans a subflow may call, by id (loaded by the caller from the designs directory).
pub type Subflows = HashMap<String, Plan>;

/// Dry-runs a plan. The plan should have validated; unresolvable references become
/// `"<unresolved ${…}>"` strings rather than errors.
pub fn dry_run(plan: &Plan, catalog: &Catalog, subflows: &Subflows) -> DryRun {
    let samples = Samples::new(plan, catalog, None);
    let nodes = run_level(plan, catalog, subflows, &samples, 0);
    DryRun {
        plan_id: plan.id.clone(),
        order: nodes.iter().map(|n| n.id.clone()).collect(),
        nodes,
    }
}

/// Sample values for every alias visible at one level, plus vars.
struct Samples<'p> {
    outputs: HashMap<(String, String), Value>,
    vars: Map<String, Value>,
    parent: Option<&'p Samples<'p>>,
}

impl<'p> Samples<'p> {
    fn new(plan: &Plan, catalog: &Catalog, parent: Option<&'p Samples<'p>>) -> Self {
        let mut outputs = HashMap::new();
        for node in &plan.graph {
            let info = node_info(node, catalog);
            for (alias, ty) in info.aliases {
                let local = node
                    .aliases()
                    .find(|(_, a)| *a == alias)
                    .map(|(l, _)| l)
                    .unwrap_or(alias);
                let items = node
                    .block
                    .as_deref()
                    .and_then(|b| catalog.get(b))
                    .and_then(|s| s.outputs.get(local))
                    .and_then(|p| p.items.clone());
                let label = format!("{}.{alias}", node.id);
                outputs.insert(
                    (node.id.clone(), alias.to_string()),
                    sample(ty.as_ref(), items.as_ref(), &label),
                );
            }
        }
        let vars = plan
            .vars
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Samples {
            outputs,
            vars,
            parent,
        }
    }

    fn output(&self, node: &str, alias: &str) -> Option<&Value> {
        self.outputs
            .get(&(node.to_string(), alias.to_string()))
            .or_else(|| self.parent.and_then(|p| p.output(node, alias)))
    }

    fn var(&self, name: &str) -> Option<&Value> {
        self.vars
            .get(name)
            .or_else(|| self.parent.and_then(|p| p.var(name)))
    }

    /// Replaces references in `value` by samples through the one resolver: a whole
    /// reference keeps the sample's type, an interpolated one is spliced in as text.
    fn substitute(&self, value: &Value) -> Value {
        // The lookup below never fails: what it cannot answer becomes a placeholder.
        resolve::resolve(value, self).unwrap_or_else(|_| value.clone())
    }
}

impl resolve::Lookup for Samples<'_> {
    type Value = Value;

    fn lookup(&self, raw: &str, target: &Target) -> Result<Value, ResolveError> {
        let unresolved = || Value::String(format!("<unresolved ${{{raw}}}>"));
        Ok(match target {
            Target::Node { node, alias, path } => match self.output(node, alias) {
                Some(v) => path
                    .as_ref()
                    .map_or_else(|| v.clone(), |p| descend(v, p, &format!("{node}.{alias}"))),
                None => unresolved(),
            },
            Target::Var { name, path } => match self.var(name) {
                Some(v) => path
                    .as_ref()
                    .map_or_else(|| v.clone(), |p| descend(v, p, &format!("vars.{name}"))),
                None => Value::String(format!("<vars.{name}>")),
            },
            Target::Env { name } => Value::String(format!("<env.{name}>")),
            Target::Config { name, .. } => Value::String(format!("<config.{name}>")),
        })
    }

    fn malformed(&self, raw: &str, _reason: &str) -> Result<Value, ResolveError> {
        Ok(Value::String(format!("<unresolved ${{{raw}}}>")))
    }

    fn literal(&self, value: Value) -> Value {
        value
    }

    fn to_json(&self, _raw: &str, value: Value) -> Result<Value, ResolveError> {
        Ok(value)
    }
}

/// Follows `path` into a sample; a list stands for its first item when the index is not a
/// number (`rows.amount` on a sample list of rows), since a sample shows one item's shape.
fn descend(value: &Value, path: &str, label: &str) -> Value {
    let mut cur = value;
    for part in path.split('.') {
        let next = match cur {
            Value::Object(m) => m.get(part),
            Value::Array(a) => part
                .parse::<usize>()
                .ok()
                .and_then(|i| a.get(i))
                .or(a.first()),
            _ => None,
        };
        match next {
            Some(v) => cur = v,
            None => return Value::String(format!("<{label}.{path}>")),
        }
    }
    cur.clone()
}

/// A sample value of a declared type.
fn sample(ty: Option<&TypeSpec>, items: Option<&Value>, label: &str) -> Value {
    let first = ty
        .and_then(|t| t.types().first().copied())
        .unwrap_or(ValueType::Any);
    match first {
        ValueType::String => Value::String(format!("<{label}>")),
        ValueType::Integer => json!(1),
        ValueType::Number => json!(1.0),
        ValueType::Boolean => json!(true),
        ValueType::Null => Value::Null,
        ValueType::Object => json!({}),
        ValueType::Array => {
            let item_ty = items.and_then(|i| i.get("type")).and_then(Value::as_str);
            let item = match item_ty {
                Some(t) => sample(
                    Some(&TypeSpec::One(t.to_string())),
                    None,
                    &format!("{label}[0]"),
                ),
                None => json!({}),
            };
            Value::Array(vec![item])
        }
        ValueType::Any => Value::String(format!("<{label}>")),
    }
}

fn run_level(
    plan: &Plan,
    catalog: &Catalog,
    subflows: &Subflows,
    samples: &Samples<'_>,
    depth: usize,
) -> Vec<DryRunNode> {
    let order = topological_order(plan);
    order
        .into_iter()
        .map(|i| {
            let node = &plan.graph[i];
            let mut children = Vec::new();
            if depth == 0 {
                children = child_nodes(node, catalog, subflows, samples);
            }
            DryRunNode {
                id: node.id.clone(),
                kind: node.kind(),
                block: node.block.clone(),
                depends_on: dependencies(node, plan),
                inputs: samples.substitute(&Value::Object(
                    node.inputs
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                )),
                outputs: Value::Object(
                    node.aliases()
                        .map(|(_, a)| {
                            (
                                a.to_string(),
                                samples.output(&node.id, a).cloned().unwrap_or(Value::Null),
                            )
                        })
                        .collect(),
                ),
                when: node.when.as_ref().map(|w| w.expr()),
                children,
            }
        })
        .collect()
}

fn child_nodes(
    node: &Node,
    catalog: &Catalog,
    subflows: &Subflows,
    samples: &Samples<'_>,
) -> Vec<DryRunNode> {
    match node.kind() {
        NodeKind::Loop => {
            let Some(body) = &node.body else {
                return Vec::new();
            };
            let mut inner = Samples::new(&body.plan, catalog, Some(samples));
            if let Some(f) = &node.foreach {
                let source = f
                    .input
                    .as_ref()
                    .or(f.items.as_ref())
                    .map(|v| samples.substitute(v));
                let item = match source {
                    Some(Value::Array(items)) => items.first().cloned().unwrap_or(Value::Null),
                    Some(other) => other,
                    None => Value::Null,
                };
                inner.vars.insert(
                    f.var.clone().unwrap_or_else(|| DEFAULT_LOOP_VAR.into()),
                    item,
                );
                inner.vars.insert("index".into(), json!(0));
            }
            if node.while_loop.is_some() {
                inner.vars.insert("iteration".into(), json!(0));
            }
            run_level(&body.plan, catalog, subflows, &inner, 1)
        }
        NodeKind::Subflow => {
            let Some(call) = &node.call else {
                return Vec::new();
            };
            let Some(called) = subflows.get(call.plan_id.trim()) else {
                return Vec::new();
            };
            let mut inner = Samples::new(called, catalog, None);
            for (k, v) in &call.inputs {
                inner.vars.insert(k.clone(), samples.substitute(v));
            }
            run_level(called, catalog, subflows, &inner, 1)
        }
        _ => Vec::new(),
    }
}

/// Node ids of this plan level that `node` references (directly or from its body).
pub fn dependencies(node: &Node, plan: &Plan) -> Vec<String> {
    let ids: HashMap<&str, usize> = plan
        .graph
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut deps = BTreeSet::new();
    collect_deps(node, &ids, &mut deps);
    deps.remove(&usize::MAX);
    deps.into_iter().map(|i| plan.graph[i].id.clone()).collect()
}

fn collect_deps(node: &Node, ids: &HashMap<&str, usize>, deps: &mut BTreeSet<usize>) {
    let (mut found, mut bad) = (Vec::new(), Vec::new());
    for v in node.inputs.values() {
        refs::scan(v, "", &mut found, &mut bad);
    }
    if let Some(w) = &node.when {
        refs::scan(&Value::String(w.expr()), "", &mut found, &mut bad);
    }
    if let Some(f) = &node.foreach {
        for v in [&f.input, &f.items].into_iter().flatten() {
            refs::scan(v, "", &mut found, &mut bad);
        }
    }
    if let Some(c) = node.while_loop.as_ref().and_then(|w| w.condition.as_ref()) {
        refs::scan(&Value::String(c.expr()), "", &mut found, &mut bad);
    }
    if let Some(call) = &node.call {
        for v in call.inputs.values() {
            refs::scan(v, "", &mut found, &mut bad);
        }
    }
    for r in found {
        if let Target::Node { node, .. } = r.target
            && let Some(&i) = ids.get(node.as_str())
        {
            deps.insert(i);
        }
    }
    if let Some(body) = &node.body {
        for inner in &body.plan.graph {
            collect_deps(inner, ids, deps);
        }
    }
}

/// Kahn's algorithm with ties broken by file order; nodes on a cycle come last, in file order.
pub fn topological_order(plan: &Plan) -> Vec<usize> {
    let n = plan.graph.len();
    let ids: HashMap<&str, usize> = plan
        .graph
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for (i, node) in plan.graph.iter().enumerate() {
        let mut deps = BTreeSet::new();
        collect_deps(node, &ids, &mut deps);
        for d in deps {
            if d != i {
                dependents[d].push(i);
                indegree[i] += 1;
            }
        }
    }
    let mut ready: BTreeSet<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &j in &dependents[i] {
            indegree[j] -= 1;
            if indegree[j] == 0 {
                ready.insert(j);
            }
        }
    }
    if order.len() < n {
        let placed: std::collections::HashSet<usize> = order.iter().copied().collect();
        order.extend((0..n).filter(|i| !placed.contains(i)));
    }
    order
}
