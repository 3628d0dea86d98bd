//! Runtime chat (実行チャット): a plan run that still has open questions (vars without a value
//! that nodes read, the run not setting them) asks them at its start instead of being
//! refused. [`ask_at_run_start`] returns the plan with a `ui.interactive_input` node at the
//! head of its graph whose fields are those questions, typed as at design time (file, select
//! with the file's columns, number…), and every `${vars.X}` of an open var pointing at that
//! node's answer instead. The run pauses there like at any other question; its answers are
//! the run's (recorded with it), never written into the plan the user registered.

use serde_json::{Value, json};

use crate::model::{Node, Plan};
use crate::requirements::Requirement;

/// The id the inserted node takes (with `_2`, `_3`… when the plan already has a node of that
/// id).
pub const RUN_INPUTS: &str = "run_inputs";

/// The alias the inserted node publishes its answers under: `${run_inputs.values.X}`.
const VALUES: &str = "values";

/// `plan` asking `open` (requirements whose `target.var` is set) at its start, with
/// `message` (given the var names) over the questions; `None` when none of them names a var.
pub fn ask_at_run_start(
    plan: &Plan,
    open: &[Requirement],
    message: impl FnOnce(&[&str]) -> String,
) -> Option<Plan> {
    let vars: Vec<&str> = open
        .iter()
        .filter_map(|r| r.target.var.as_deref())
        .collect();
    if vars.is_empty() {
        return None;
    }
    let id = free_id(plan);
    let fields: Vec<Value> = open
        .iter()
        .filter_map(|r| {
            let var = r.target.var.as_deref()?;
            let mut field = serde_json::to_value(r).ok()?;
            let map = field.as_object_mut()?;
            map.insert("id".into(), json!(var));
            map.remove("target");
            Some(field)
        })
        .collect();
    let message = message(&vars);
    let node: Node = serde_json::from_value(json!({
        "id": id,
        "description": "実行時の入力 / values asked when the run starts",
        "block": "ui.interactive_input",
        "in": {"mode": "collect", "message": message, "requirements": fields},
        "out": {"collected_data": VALUES},
    }))
    .ok()?;
    let mut asked = plan.clone();
    for var in &vars {
        let to = format!("${{{id}.{VALUES}.{var}");
        rewrite_graph(&mut asked.graph, &format!("${{vars.{var}"), &to, var);
    }
    asked.graph.insert(0, node);
    Some(asked)
}

fn free_id(plan: &Plan) -> String {
    let taken = |id: &str| plan.graph.iter().any(|n| n.id == id);
    if !taken(RUN_INPUTS) {
        return RUN_INPUTS.to_string();
    }
    (2..)
        .map(|i| format!("{RUN_INPUTS}_{i}"))
        .find(|id| !taken(id))
        .unwrap_or_default()
}

/// Every `${vars.<var>}` and `${vars.<var>.path}` in `graph` (loop bodies included, unless a
/// body defines a var of that name itself) rewritten to start with `to`.
fn rewrite_graph(graph: &mut [Node], from: &str, to: &str, var: &str) {
    for node in graph {
        let body = node.body.take();
        if let Ok(text) = serde_json::to_string(&*node) {
            let rewritten = rewrite(&text, from, to);
            if rewritten != text
                && let Ok(n) = serde_json::from_str::<Node>(&rewritten)
            {
                *node = n;
            }
        }
        node.body = body;
        if let Some(body) = node.body.as_mut()
            && !body.plan.vars.contains_key(var)
        {
            rewrite_graph(&mut body.plan.graph, from, to, var);
        }
    }
}

/// `text` with each `from` that is followed by `}` or `.` (a whole name, not a prefix of a
/// longer one) replaced by `to`.
fn rewrite(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let after = &rest[at + from.len()..];
        out.push_str(&rest[..at]);
        if after.starts_with('}') || after.starts_with('.') {
            out.push_str(to);
        } else {
            out.push_str(from);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The open var is read at the top level and inside a loop body: both read the inserted
    /// node's answer; a body that defines a var of that name keeps its own.
    #[test]
    fn the_open_vars_readers_read_the_inserted_nodes_answer_in_loop_bodies_too() {
        let yaml = r#"
id: p
vars: {limit: null, run_inputs: 1}
graph:
  - id: run_inputs
    block: transforms.pick_value
    in: {source: {a: 1}, path: a}
  - id: each
    type: loop
    foreach: {input: [1, 2]}
    body:
      plan:
        id: body
        graph:
          - id: check
            block: transforms.pick_value
            in: {source: {a: "${vars.limit}"}, path: a}
  - id: own
    type: loop
    foreach: {input: [1]}
    body:
      plan:
        id: own_body
        vars: {limit: 5}
        graph:
          - id: keep
            block: transforms.pick_value
            in: {source: {a: "${vars.limit}"}, path: a, default: "${vars.limit_2}"}
"#;
        let plan = crate::io::load_plan(yaml).unwrap().plan;
        let open: Requirement = serde_json::from_value(json!({
            "id": "limit", "type": "number", "label": "上限", "description": "",
            "required": true, "target": {"var": "limit"}
        }))
        .unwrap();
        let asked = ask_at_run_start(&plan, &[open], |v| v.join(",")).unwrap();
        let head = &asked.graph[0];
        assert_eq!(
            head.id, "run_inputs_2",
            "the plan's own run_inputs keeps its id"
        );
        assert_eq!(head.inputs["requirements"][0]["id"], "limit");
        let text = crate::io::save_plan(&asked).unwrap();
        assert!(text.contains("a: ${run_inputs_2.values.limit}"), "{text}");
        assert!(
            text.contains("a: ${vars.limit}"),
            "the own body keeps its var: {text}"
        );
        assert!(text.contains("${vars.limit_2}"), "{text}");
        assert!(ask_at_run_start(&plan, &[], |v| v.join(",")).is_none());
    }

    #[test]
    fn a_whole_name_is_rewritten_and_a_longer_one_is_not() {
        let text = r#"{"a":"${vars.file}","b":"${vars.file.x}","c":"${vars.file_2}","d":"x ${vars.file} y"}"#;
        assert_eq!(
            rewrite(text, "${vars.file", "${run_inputs.values.file"),
            r#"{"a":"${run_inputs.values.file}","b":"${run_inputs.values.file.x}","c":"${vars.file_2}","d":"x ${run_inputs.values.file} y"}"#
        );
    }
}
