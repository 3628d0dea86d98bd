//! Validating and repair: each attempt's findings, which the user must answer and which
//! the model may repair, the dry-run record, and what changed between attempts.

use std::collections::HashSet;

use keiri_llm::Event;
use keiri_plan::{
    Finding, FindingCode, Node, Plan, Requirement, Templates, apply_answers, build_requirements,
    validate,
};
use serde_json::Value;

use crate::Error;
use crate::schema::{self, ContractProblem, Skeleton, Wiring};

use super::context::*;

pub(super) struct Evaluated {
    pub(super) plan: Plan,
    pub(super) issues: Vec<Finding>,
    pub(super) requirements: Vec<Requirement>,
}

impl Evaluated {
    pub(super) fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.issues.iter().filter(|i| i.is_error())
    }
}

/// Validates, builds the requirements, applies the answers that fit them, and validates again.
pub(super) async fn evaluate(
    plan: Plan,
    problems: &[ContractProblem],
    options: &GenerateOptions,
    ctx: &Context<'_>,
    extra_requirements: &[Requirement],
) -> Result<Evaluated, Error> {
    let catalog = ctx.catalog;
    let validate_options = validate_options(options, ctx);
    let mut plan = plan;
    let mut findings = validate(&plan, catalog, &validate_options);
    let mut requirements = build_requirements(&plan, &findings, catalog);
    let to_apply: Vec<Requirement> = requirements
        .iter()
        .filter(|r| options.answers.contains_key(&r.id))
        .cloned()
        .collect();
    if !to_apply.is_empty() {
        plan = apply_answers(&plan, &to_apply, &options.answers).map_err(Error::Answers)?;
        findings = validate(&plan, catalog, &validate_options);
        requirements = build_requirements(&plan, &findings, catalog);
    }
    for r in extra_requirements {
        let var = r.target.var.as_deref();
        let asked = requirements
            .iter()
            .any(|x| x.id == r.id || x.target.var.as_deref() == var);
        let answered = var.is_some_and(|v| options.answers.contains_key(v));
        if !asked && !answered && !options.answers.contains_key(&r.id) {
            let mut r = r.clone();
            // What the plan holds until answered is the pre-filled answer.
            if let Some(default) = var.and_then(|v| plan.vars.get(v)).filter(|d| !d.is_null()) {
                r.default = Some(default.clone());
            }
            requirements.push(r);
        }
    }
    let mut issues: Vec<Finding> = problems.iter().map(ContractProblem::finding).collect();
    issues.extend(findings);
    // A plan with no static error and nothing left to ask is run on the sample files: what
    // fails there is an error like any other.
    let open = requirements.iter().any(|r| {
        r.required
            && r.target
                .var
                .as_deref()
                .is_some_and(|v| plan.vars.get(v).is_none_or(Value::is_null))
    });
    if let Some(verify) = ctx.verify
        && !open
        && !issues.iter().any(Finding::is_error)
    {
        ctx.report(
            Stage::Validating,
            None,
            "running the plan on the sample files".to_string(),
        );
        issues.extend(verify(plan.clone()).await);
    }
    Ok(Evaluated {
        plan,
        issues,
        requirements,
    })
}

/// An error that an answer fixes (an undefined var someone must supply): repairing it with
/// the model would only make a value up. Decided on the finding's stable code and JSON
/// pointer, never its (translated) message: the value at `issue.path` is scanned for its
/// `${vars.*}` references, and one of them that is undefined must be asked by a requirement.
pub(super) fn answerable(
    issue: &Finding,
    plan_json: &Value,
    plan: &Plan,
    requirements: &[Requirement],
) -> bool {
    // A column the attached file lacks is answered by picking one of its headers.
    if issue.code == FindingCode::ColumnUnknown {
        return requirements.iter().any(|q| {
            q.answer_use == keiri_plan::AnswerUse::Column
                && q.target.node_id.is_some()
                && q.target.node_id == issue.node_id
        });
    }
    if issue.code != FindingCode::RefUndefinedVar {
        return false;
    }
    let Some(value) = plan_json.pointer(&issue.path) else {
        return false;
    };
    let (mut refs, mut malformed) = (Vec::new(), Vec::new());
    keiri_plan::refs::scan(value, "", &mut refs, &mut malformed);
    refs.iter().any(|r| match &r.target {
        keiri_plan::refs::Target::Var { name, .. } => {
            !plan.vars.contains_key(name)
                && requirements
                    .iter()
                    .any(|q| q.target.var.as_deref() == Some(name.as_str()))
        }
        _ => false,
    })
}

/// Every node of `graph`, loop bodies included, depth first.
pub(crate) fn all_nodes(graph: &[Node]) -> Vec<&Node> {
    let mut out = Vec::new();
    for node in graph {
        out.push(node);
        if let Some(body) = &node.body {
            out.extend(all_nodes(&body.plan.graph));
        }
    }
    out
}

/// Dry-runs the final plan and records how long that took (the `dry_run` event of the
/// metrics log), so the log shows every stage's cost, not only the model calls.
pub(super) fn record_dry_run(ctx: &Context<'_>, plan: &Plan) {
    if ctx.log.is_none() {
        return;
    }
    let started = std::time::Instant::now();
    let run = keiri_plan::dry_run(plan, ctx.catalog, &Default::default());
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    ctx.record(
        Event::new("validating", "dry_run")
            .with("duration_ms", duration_ms)
            .with("nodes", run.nodes.len()),
    );
}

/// The plan as JSON, for looking findings up by their pointer.
pub(super) fn validate_options(
    options: &GenerateOptions,
    ctx: &Context<'_>,
) -> keiri_plan::Options {
    keiri_plan::Options {
        lang: options.lang,
        known_plans: schema::plan_ids(&ctx.subflow_plans).into_iter().collect(),
        file_schemas: ctx.file_schemas.clone(),
    }
}

/// Defines in `vars`, as `null`, every var the wiring reads but left undefined: those read by
/// the plan's own nodes, and the skeleton's open points wherever they are read. The plan then
/// validates, and the value is still asked: a var without a value is a requirement
/// ([`build_requirements`]) and keeps the status at `needs_answers` until answered. A var
/// read only inside a loop body and unknown to the skeleton (usually a misnamed loop
/// variable) stays undefined: that is the model's mistake to repair, not a question.
pub(super) fn define_open_vars(
    plan: &mut Plan,
    skeleton: &Skeleton,
    options: &GenerateOptions,
    ctx: &Context<'_>,
) {
    let findings = validate(plan, ctx.catalog, &validate_options(options, ctx));
    let json = plan_json(plan);
    for f in findings
        .iter()
        .filter(|f| f.code == keiri_plan::FindingCode::RefUndefinedVar)
    {
        let Some(value) = json.pointer(&f.path) else {
            continue;
        };
        let (mut refs, mut malformed) = (Vec::new(), Vec::new());
        keiri_plan::refs::scan(value, "", &mut refs, &mut malformed);
        let top_level = !f.path.contains("/body/");
        for r in refs {
            if let keiri_plan::refs::Target::Var { name, .. } = r.target
                && (top_level || skeleton.questions.iter().any(|q| q.var == name))
            {
                plan.vars.entry(name).or_insert(Value::Null);
            }
        }
    }
}

pub(super) fn plan_json(plan: &Plan) -> Value {
    serde_json::to_value(plan).unwrap_or(Value::Null)
}

pub(super) fn involved_blocks(issues: &[&Finding], plan: &Plan, wiring: &Wiring) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for issue in issues {
        let Some(node_id) = &issue.node_id else {
            continue;
        };
        let block = plan
            .graph
            .iter()
            .find(|n| &n.id == node_id)
            .and_then(|n| n.block.clone())
            .or_else(|| {
                wiring
                    .nodes
                    .iter()
                    .find(|n| &n.id == node_id)
                    .map(|n| n.block.clone())
            });
        if let Some(b) = block
            && !out.contains(&b)
        {
            out.push(b);
        }
    }
    out
}

/// Appends `prefix.key added/changed/removed` lines for the differences of two maps.
pub(super) fn map_changes(
    prefix: &str,
    old: &indexmap::IndexMap<String, Value>,
    new: &indexmap::IndexMap<String, Value>,
    changes: &mut Vec<String>,
) {
    for (k, v) in new {
        match old.get(k) {
            None => changes.push(format!("{prefix}.{k} added = {v}")),
            Some(o) if o != v => changes.push(format!("{prefix}.{k} {o} -> {v}")),
            _ => {}
        }
    }
    for k in old.keys().filter(|k| !new.contains_key(*k)) {
        changes.push(format!("{prefix}.{k} removed"));
    }
}

/// Node-level diff, one line per node: `+ id (block)`, `- id (block)`, or `~ id: ...` listing
/// what changed (block, inputs added / removed / changed, outputs).
pub fn node_diff(before: &Plan, after: &Plan) -> Vec<String> {
    let mut lines = Vec::new();
    graph_diff(&before.graph, &after.graph, "", &mut lines);
    lines
}

/// [`node_diff`] of one graph, its nodes named with `prefix` (`loop/` inside a loop body), and
/// of the bodies of the loops both graphs have.
fn graph_diff(before: &[Node], after: &[Node], prefix: &str, lines: &mut Vec<String>) {
    let find = |graph: &[Node], id: &str| graph.iter().find(|n| n.id == id).cloned();
    for old in before {
        if find(after, &old.id).is_none() {
            lines.push(format!(
                "- {prefix}{} ({})",
                old.id,
                old.block.as_deref().unwrap_or("-")
            ));
        }
    }
    for new in after {
        let Some(old) = find(before, &new.id) else {
            lines.push(format!(
                "+ {prefix}{} ({})",
                new.id,
                new.block.as_deref().unwrap_or("-")
            ));
            continue;
        };
        let mut changes = Vec::new();
        if old.block != new.block {
            changes.push(format!(
                "block {} -> {}",
                old.block.as_deref().unwrap_or("-"),
                new.block.as_deref().unwrap_or("-")
            ));
        }
        map_changes("in", &old.inputs, &new.inputs, &mut changes);
        map_changes("out", &old.out, &new.out, &mut changes);
        if !changes.is_empty() {
            lines.push(format!("~ {prefix}{}: {}", new.id, changes.join("; ")));
        }
        let body = |n: &Node| {
            n.body
                .as_ref()
                .map(|b| b.plan.graph.clone())
                .unwrap_or_default()
        };
        let (old_body, new_body) = (body(&old), body(new));
        if !old_body.is_empty() || !new_body.is_empty() {
            graph_diff(&old_body, &new_body, &format!("{prefix}{}/", new.id), lines);
        }
    }
}

pub(super) fn suggestions(
    errors: &[Finding],
    plan: &Plan,
    requirements: &[Requirement],
    templates: &Templates,
) -> Vec<String> {
    let mut out = Vec::new();
    for r in requirements {
        out.push(format!("answer the question {:?}: {}", r.id, r.label));
    }
    let failing: HashSet<&str> = errors
        .iter()
        .filter_map(|e| e.node_id.as_deref())
        .filter_map(|id| plan.graph.iter().find(|n| n.id == id))
        .filter_map(|n| n.block.as_deref())
        .collect();
    for t in templates.iter() {
        let covers: Vec<&str> = t
            .graph_snippet
            .iter()
            .filter_map(|n| n.block.as_deref())
            .filter(|b| failing.contains(b))
            .collect();
        if !covers.is_empty() {
            out.push(format!(
                "the template {} ({}) wires {} already: try --templates {} (hint or compose)",
                t.id,
                t.title,
                covers.join(", "),
                t.id
            ));
        }
    }
    out
}
