//! Skeleton and wiring: the planner's structured answers turned into a plan (nodes,
//! inputs, outputs, policies), and its open questions into requirements.

use indexmap::IndexMap;
use keiri_plan::model::{Policy, When};
use keiri_plan::{Node, Plan, Requirement, RequirementKind, RequirementTarget};
use serde_json::Value;

use crate::schema::{self, Skeleton, Wiring, parse_value};

pub(super) fn question_requirement(q: &schema::Question) -> Requirement {
    let kind = match q.kind.as_str() {
        "file" => RequirementKind::File,
        "select" => RequirementKind::Select,
        "number" => RequirementKind::Number,
        "boolean" => RequirementKind::Boolean,
        _ => RequirementKind::Text,
    };
    Requirement {
        id: q.var.clone(),
        kind,
        label: q.label.clone(),
        label_en: None,
        description: q.label.clone(),
        description_en: None,
        options: q.options.iter().cloned().map(Value::String).collect(),
        required: true,
        accept: None,
        hint: None,
        hint_en: None,
        validation: None,
        default: None,
        value_type: None,
        answer_use: Default::default(),
        target: RequirementTarget {
            var: Some(q.var.clone()),
            node_id: None,
            input: None,
            ..Default::default()
        },
    }
}

/// The skeleton as a plan without wiring: the baseline of the first repair's diff.
pub(super) fn skeleton_plan(skeleton: &Skeleton, plan_id: &str) -> Plan {
    let mut plan = empty_plan(plan_id, "");
    plan.graph = skeleton
        .nodes
        .iter()
        .map(|n| Node {
            id: n.id.clone(),
            block: n.block.clone(),
            kind: n.calls_plan.as_ref().map(|_| "subflow".to_string()),
            call: n
                .calls_plan
                .as_ref()
                .map(|plan_id| keiri_plan::model::Call {
                    plan_id: plan_id.clone(),
                    ..Default::default()
                }),
            ..Node::default()
        })
        .collect();
    plan
}

pub(super) fn empty_plan(plan_id: &str, description: &str) -> Plan {
    Plan {
        api_version: None,
        id: plan_id.to_string(),
        description: (!description.trim().is_empty()).then(|| description.trim().to_string()),
        version: Some("0.1.0".into()),
        vars: IndexMap::new(),
        policy: None,
        ui: None,
        graph: Vec::new(),
        extra: IndexMap::new(),
    }
}

/// The plan of a (checked) wiring. Vars whose value is `null` are left out here: the
/// generation defines, as `null`, those the plan reads (and only those), so a var nobody
/// reads does not linger in the plan.
pub fn to_plan(wiring: &Wiring, plan_id: &str, instruction: &str) -> Plan {
    let mut plan = empty_plan(plan_id, instruction);
    for v in &wiring.vars {
        let value = parse_value(&v.value_json);
        if !value.is_null() && !v.name.trim().is_empty() {
            plan.vars.insert(v.name.clone(), value);
        }
    }
    plan.graph = wiring.nodes.iter().map(wired_node).collect();
    plan.policy = wiring
        .policy
        .as_ref()
        .map(to_policy)
        .filter(|p| *p != Policy::default());
    for np in &wiring.node_policies {
        let policy = to_policy(&schema::WiredPolicy {
            on_error: np.on_error.clone(),
            retries: np.retries,
            timeout_ms: np.timeout_ms,
            concurrency: None,
        });
        if policy == Policy::default() {
            continue;
        }
        if let Some(node) = plan.graph.iter_mut().find(|n| n.id == np.node_id) {
            node.policy = Some(policy);
        }
    }
    let layout: Vec<String> = wiring
        .ui_layout
        .iter()
        .filter(|id| !id.trim().is_empty())
        .cloned()
        .collect();
    if !layout.is_empty() {
        plan.ui = Some(keiri_plan::model::Ui {
            layout,
            extra: IndexMap::new(),
        });
    }
    plan
}

pub(super) fn to_policy(p: &schema::WiredPolicy) -> Policy {
    Policy {
        on_error: p.on_error.clone().filter(|s| !s.trim().is_empty()),
        retries: p.retries,
        timeout_ms: p.timeout_ms,
        concurrency: p.concurrency,
        // A drafted plan never sets its own bounds; the user may, in the editor.
        limits: None,
        extra: IndexMap::new(),
    }
}

pub(super) fn wired_when(when: &Option<String>) -> Option<When> {
    when.as_ref()
        .filter(|w| !w.trim().is_empty())
        .map(|w| When::Expr {
            expr: Value::String(w.clone()),
        })
}

pub(super) fn wired_outputs(n: &schema::WiredNode) -> IndexMap<String, Value> {
    n.outputs
        .iter()
        .map(|o| (o.key.clone(), Value::String(o.alias.clone())))
        .collect()
}

pub(super) fn wired_inputs(n: &schema::WiredNode) -> IndexMap<String, Value> {
    n.inputs
        .iter()
        .map(|i| (i.key.clone(), parse_value(&i.value_json)))
        .collect()
}

/// One wired node as a plan node: a block call, a loop with its body plan, or a subflow.
pub(super) fn wired_node(n: &schema::WiredNode) -> Node {
    match n.kind.as_deref() {
        Some("loop") => Node {
            id: n.id.clone(),
            kind: Some("loop".into()),
            out: wired_outputs(n),
            when: wired_when(&n.when),
            foreach: n.foreach.as_ref().map(|f| keiri_plan::model::Foreach {
                input: Some(parse_value(&f.input_json)),
                var: Some(f.var.clone()).filter(|v| !v.trim().is_empty()),
                max_concurrency: f.max_concurrency,
                ..Default::default()
            }),
            while_loop: n.while_loop.as_ref().map(|w| keiri_plan::model::While {
                condition: Some(When::Expr {
                    expr: Value::String(w.condition.clone()),
                }),
                max_iterations: Some(w.max_iterations),
                ..Default::default()
            }),
            body: Some(keiri_plan::model::Body {
                plan: Box::new(Plan {
                    graph: n.body.iter().map(wired_node).collect(),
                    ..empty_plan(&format!("{}_body", n.id), "")
                }),
                extra: IndexMap::new(),
            }),
            ..Node::default()
        },
        Some("subflow") => Node {
            id: n.id.clone(),
            kind: Some("subflow".into()),
            out: wired_outputs(n),
            when: wired_when(&n.when),
            call: Some(keiri_plan::model::Call {
                plan_id: n.plan_id.clone().unwrap_or_default(),
                inputs: wired_inputs(n),
                extra: IndexMap::new(),
            }),
            ..Node::default()
        },
        _ => Node {
            id: n.id.clone(),
            block: Some(n.block.clone()),
            inputs: wired_inputs(n),
            out: wired_outputs(n),
            when: wired_when(&n.when),
            ..Node::default()
        },
    }
}
