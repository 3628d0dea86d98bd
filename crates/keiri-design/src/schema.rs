//! The request schemas, built for each generation from its candidate blocks, and the checks
//! run on what comes back.
//!
//! Strict structured-output modes refuse deep or recursive schemas, so both schemas are flat:
//! a node is one object whose `block` is an enum of the candidates. In the wiring schema each
//! candidate gets its own node variant (`anyOf`), whose `inputs[].key` and `outputs[].key` are
//! enums of that block's ports only: a provider that enforces the schema cannot send an
//! unknown block or key. Input values travel as JSON text (`value_json`) because a strict
//! schema cannot say "any JSON value". Providers that do not enforce schemas are covered by
//! [`check_wiring`], which applies the same whitelists (and the `ai.process_llm` contract) to
//! the parsed answer, so no unknown id or key ever reaches the validator.
//!
//! Beyond block nodes, stage 1 says per node whether it repeats (`repeat`: foreach over
//! what, while until what) or calls a registered plan (`calls_plan`, an enum of the plans in
//! `designs/`), and stage 2 has a loop variant (foreach/while with a body of block variants,
//! one level deep, because strict schemas cannot recurse), a subflow variant (`plan_id` from
//! the same enum), plan and node `policy`, and `ui_layout` — all strict, so loops, subflows
//! and policies cannot carry an invented key either.

use indexmap::IndexMap;
use keiri_plan::{BlockSpec, Catalog, FindingCode};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The block that needs a non-empty `output_schema` and a `prompt` or `instruction`.
pub const PROCESS_LLM: &str = "ai.process_llm";

/// One candidate block (or, as [`PlanCandidate`], a registered plan) with its port
/// whitelists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateBlock {
    pub id: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

impl CandidateBlock {
    pub fn from_spec(spec: &BlockSpec) -> CandidateBlock {
        CandidateBlock {
            id: spec.id.clone(),
            inputs: spec.inputs.keys().cloned().collect(),
            outputs: spec.outputs.keys().cloned().collect(),
        }
    }

    /// A registered plan as a subflow candidate ([`PlanCandidate`]): its vars as inputs, the
    /// aliases its top-level nodes publish as outputs.
    pub fn from_plan(plan: &keiri_plan::Plan) -> PlanCandidate {
        let mut outputs: Vec<String> = Vec::new();
        for alias in plan.graph.iter().flat_map(|n| n.out.values()) {
            if let Some(alias) = alias.as_str()
                && !outputs.iter().any(|o| o == alias)
            {
                outputs.push(alias.to_string());
            }
        }
        CandidateBlock {
            id: plan.id.clone(),
            inputs: plan.vars.keys().cloned().collect(),
            outputs,
        }
    }
}

/// A registered plan a node may call as a subflow, with the whitelists of the call: the
/// vars the plan takes (`call.inputs` keys) and the aliases its nodes publish (`out` keys).
/// The same shape as a candidate block, and whitelisted the same way.
pub type PlanCandidate = CandidateBlock;

/// The ids of `plans`.
pub fn plan_ids(plans: &[PlanCandidate]) -> Vec<String> {
    plans.iter().map(|p| p.id.clone()).collect()
}

/// The candidates of `ids` that are in the catalog, in order, without duplicates.
pub fn candidate_blocks(catalog: &Catalog, ids: &[String]) -> Vec<CandidateBlock> {
    let mut out: Vec<CandidateBlock> = Vec::new();
    for id in ids {
        if out.iter().any(|c| &c.id == id) {
            continue;
        }
        if let Some(spec) = catalog.get(id) {
            out.push(CandidateBlock::from_spec(spec));
        }
    }
    out
}

fn string() -> Value {
    json!({"type": "string"})
}

fn string_enum(values: &[String]) -> Value {
    json!({"type": "string", "enum": values})
}

/// Which plan shapes a generation's schemas allow, besides block nodes.
#[derive(Debug, Clone, Copy)]
pub struct Shapes<'a> {
    /// Registered plans a node may call as a subflow (none: no subflow variant).
    pub plans: &'a [PlanCandidate],
    /// Loop nodes (`suggest_foreach`): stage 1's `repeat` and stage 2's loop variant.
    pub loops: bool,
    /// `when` conditions on nodes (`suggest_when`).
    pub conditions: bool,
}

impl Default for Shapes<'_> {
    fn default() -> Self {
        Shapes {
            plans: &[],
            loops: true,
            conditions: true,
        }
    }
}

impl Shapes<'_> {
    fn when(&self) -> Value {
        if self.conditions {
            json!({"type": ["string", "null"]})
        } else {
            json!({"type": "null"})
        }
    }
}

fn nullable(schema: Value) -> Value {
    let mut schema = schema;
    if let Some(t) = schema
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_string)
    {
        schema["type"] = json!([t, "null"]);
    }
    if let Some(Value::Array(values)) = schema.get_mut("enum") {
        values.push(Value::Null);
    }
    schema
}

/// `string` enum of the registered plan ids, or null only when there are none.
fn plan_id_or_null(plans: &[PlanCandidate]) -> Value {
    if plans.is_empty() {
        json!({"type": "null"})
    } else {
        nullable(string_enum(&plan_ids(plans)))
    }
}

/// Stage 1: `{reasoning, nodes: [{id, block, purpose, repeat, calls_plan}], questions:
/// [{var, kind, label, options}]}`. `block` is null for a node that calls a registered plan
/// (`calls_plan`); `repeat` says whether the node runs once per item (`foreach` over what)
/// or until a condition holds (`while`).
pub fn skeleton_schema(candidates: &[CandidateBlock], shapes: &Shapes<'_>) -> Value {
    let ids: Vec<String> = candidates.iter().map(|c| c.id.clone()).collect();
    let repeat = if shapes.loops {
        json!({
            "type": ["object", "null"],
            "additionalProperties": false,
            "required": ["kind", "over", "until"],
            "properties": {
                "kind": {"type": "string", "enum": ["foreach", "while"]},
                "over": {"type": ["string", "null"]},
                "until": {"type": ["string", "null"]},
            }
        })
    } else {
        json!({"type": "null"})
    };
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["reasoning", "nodes", "questions"],
        "properties": {
            "reasoning": string(),
            "nodes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["id", "block", "purpose", "repeat", "calls_plan"],
                    "properties": {
                        "id": string(),
                        "block": nullable(string_enum(&ids)),
                        "purpose": string(),
                        "repeat": repeat,
                        "calls_plan": plan_id_or_null(shapes.plans),
                    }
                }
            },
            "questions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["var", "kind", "label", "options"],
                    "properties": {
                        "var": string(),
                        "kind": {"type": "string", "enum": ["text", "file", "select", "number", "boolean"]},
                        "label": string(),
                        "options": {"type": "array", "items": string()},
                    }
                }
            }
        }
    })
}

fn port_list(keys: &[String], value_field: &str) -> Value {
    let key = if keys.is_empty() {
        string()
    } else {
        string_enum(keys)
    };
    let mut list = json!({
        "type": "array",
        "items": {
            "type": "object",
            "additionalProperties": false,
            "required": ["key", value_field],
            "properties": {"key": key, value_field: string()},
        }
    });
    if keys.is_empty() {
        // A block without ports of this side: nothing may be listed.
        list["maxItems"] = json!(0);
    }
    list
}

/// `policy` of the plan or a node: every field nullable (null = the default).
fn policy_schema() -> Value {
    json!({
        "type": ["object", "null"],
        "additionalProperties": false,
        "required": ["on_error", "retries", "timeout_ms", "concurrency"],
        "properties": {
            "on_error": {"type": ["string", "null"], "enum": ["stop", "continue", null]},
            "retries": {"type": ["integer", "null"]},
            "timeout_ms": {"type": ["integer", "null"]},
            "concurrency": {"type": ["integer", "null"]},
        }
    })
}

/// A loop node: `foreach` or `while`, a body of block nodes (one level: strict schemas
/// cannot recurse), and its `collect` output.
fn loop_variant(block_variants: &[Value], when: Value) -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["id", "type", "foreach", "while", "body", "outputs", "when"],
        "properties": {
            "id": string(),
            "type": string_enum(&["loop".to_string()]),
            "foreach": {
                "type": ["object", "null"],
                "additionalProperties": false,
                "required": ["input_json", "var", "max_concurrency"],
                "properties": {
                    "input_json": string(),
                    "var": string(),
                    "max_concurrency": {"type": ["integer", "null"]},
                }
            },
            "while": {
                "type": ["object", "null"],
                "additionalProperties": false,
                "required": ["condition", "max_iterations"],
                "properties": {
                    "condition": string(),
                    "max_iterations": {"type": "integer"},
                }
            },
            "body": {"type": "array", "items": {"anyOf": block_variants}},
            "outputs": port_list(&["collect".to_string()], "alias"),
            "when": when,
        }
    })
}

/// A subflow node calling `plan`: its id as the only `plan_id`, the plan's vars as the only
/// input keys and the aliases it publishes as the only output keys.
fn subflow_variant(plan: &PlanCandidate, when: Value) -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["id", "type", "plan_id", "inputs", "outputs", "when"],
        "properties": {
            "id": string(),
            "type": string_enum(&["subflow".to_string()]),
            "plan_id": string_enum(std::slice::from_ref(&plan.id)),
            "inputs": port_list(&plan.inputs, "value_json"),
            "outputs": port_list(&plan.outputs, "alias"),
            "when": when,
        }
    })
}

/// The node variant of one candidate: its id as the only `block`, its ports as the only keys.
fn node_variant(c: &CandidateBlock, when: Value) -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["id", "block", "inputs", "outputs", "when"],
        "properties": {
            "id": string(),
            "block": string_enum(std::slice::from_ref(&c.id)),
            "inputs": port_list(&c.inputs, "value_json"),
            "outputs": port_list(&c.outputs, "alias"),
            "when": when,
        }
    })
}

/// Stage 2: `{reasoning, vars: [{name, value_json}], nodes: [...], policy, node_policies,
/// ui_layout}` with one node variant per candidate, a loop variant, and one subflow variant
/// per registered plan.
pub fn wiring_schema(candidates: &[CandidateBlock], shapes: &Shapes<'_>) -> Value {
    let blocks: Vec<Value> = candidates
        .iter()
        .map(|c| node_variant(c, shapes.when()))
        .collect();
    let mut variants = blocks.clone();
    if shapes.loops {
        variants.push(loop_variant(&blocks, shapes.when()));
    }
    for plan in shapes.plans {
        variants.push(subflow_variant(plan, shapes.when()));
    }
    let mut node_policy = policy_schema();
    node_policy["type"] = json!("object");
    node_policy["required"] = json!(["node_id", "on_error", "retries", "timeout_ms"]);
    node_policy["properties"]["node_id"] = string();
    if let Some(props) = node_policy["properties"].as_object_mut() {
        props.shift_remove("concurrency");
    }
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["reasoning", "vars", "nodes", "policy", "node_policies", "ui_layout"],
        "properties": {
            "policy": policy_schema(),
            "node_policies": {"type": "array", "items": node_policy},
            "ui_layout": {"type": "array", "items": string()},
            "reasoning": string(),
            "vars": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["name", "value_json"],
                    "properties": {"name": string(), "value_json": string()},
                }
            },
            "nodes": {"type": "array", "items": {"anyOf": variants}}
        }
    })
}

/// Stage 1's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skeleton {
    pub reasoning: String,
    pub nodes: Vec<SkeletonNode>,
    pub questions: Vec<Question>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkeletonNode {
    pub id: String,
    /// The candidate block; `None` for a node that calls a registered plan.
    #[serde(default)]
    pub block: Option<String>,
    pub purpose: String,
    /// Whether the node repeats; `None` runs it once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Repeat>,
    /// The registered plan this node calls, if it is a subflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_plan: Option<String>,
}

/// How a skeleton node repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repeat {
    /// `foreach` or `while`.
    pub kind: String,
    /// What a foreach iterates over (a node output or a var, in words or as a reference).
    #[serde(default)]
    pub over: Option<String>,
    /// When a while loop stops.
    #[serde(default)]
    pub until: Option<String>,
}

/// An open point of the skeleton, asked as a typed requirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub var: String,
    pub kind: String,
    pub label: String,
    pub options: Vec<String>,
}

/// Stage 2's (and every repair's) answer.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Wiring {
    pub reasoning: String,
    pub vars: Vec<WiredVar>,
    pub nodes: Vec<WiredNode>,
    /// The plan's policy; `None` keeps the defaults.
    #[serde(default)]
    pub policy: Option<WiredPolicy>,
    /// Policies of single nodes.
    #[serde(default)]
    pub node_policies: Vec<NodePolicy>,
    /// The order in which the window shows the plan's UI nodes.
    #[serde(default)]
    pub ui_layout: Vec<String>,
}

/// A plan or node policy as the model sends it (null = the default).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WiredPolicy {
    #[serde(default)]
    pub on_error: Option<String>,
    #[serde(default)]
    pub retries: Option<u32>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub concurrency: Option<u32>,
}

/// The policy of one node.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NodePolicy {
    pub node_id: String,
    #[serde(default)]
    pub on_error: Option<String>,
    #[serde(default)]
    pub retries: Option<u32>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// `foreach` of a wired loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WiredForeach {
    /// What to iterate over, as JSON text (usually a `${node.alias}` reference).
    pub input_json: String,
    /// The loop variable, read in the body as `${vars.<var>}`.
    pub var: String,
    #[serde(default)]
    pub max_concurrency: Option<u32>,
}

/// `while` of a wired loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WiredWhile {
    pub condition: String,
    pub max_iterations: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WiredVar {
    pub name: String,
    pub value_json: String,
}

/// A wired node: a block node (`block` set), a loop (`kind` = `loop`, with `foreach` or
/// `while` and a `body`) or a subflow (`kind` = `subflow`, with `plan_id`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WiredNode {
    pub id: String,
    #[serde(default)]
    pub block: String,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default)]
    pub inputs: Vec<WiredInput>,
    #[serde(default)]
    pub outputs: Vec<WiredOutput>,
    #[serde(default)]
    pub when: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreach: Option<WiredForeach>,
    #[serde(rename = "while", default, skip_serializing_if = "Option::is_none")]
    pub while_loop: Option<WiredWhile>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub body: Vec<WiredNode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WiredInput {
    pub key: String,
    pub value_json: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WiredOutput {
    pub key: String,
    pub alias: String,
}

/// A problem found in the model's answer before the plan is built (the validator never sees
/// the offending part).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractProblem {
    /// `design.unknown_block`, `design.unknown_input`, `design.unknown_output`,
    /// `design.process_llm_contract`, `design.unknown_plan` (a subflow of a plan that is not
    /// registered), `design.unknown_node_type`.
    pub code: FindingCode,
    pub node_id: String,
    pub path: String,
    pub message: String,
}

/// A `value_json` that is not JSON is taken as the string it is: models often send a bare
/// string there, and a literal string is what they meant.
pub fn parse_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

fn non_empty(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::String(s) => !s.trim().is_empty(),
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => true,
    }
}

/// Applies the per-block whitelists and the `ai.process_llm` contract to every block node
/// (loop bodies included), keeps loop outputs to `collect` and subflow calls to the
/// registered `plans`: offending nodes, inputs and outputs are removed from the returned
/// wiring and reported.
pub fn check_wiring(
    wiring: &Wiring,
    candidates: &[CandidateBlock],
    plans: &[PlanCandidate],
) -> (Wiring, Vec<ContractProblem>) {
    let checker = WiringChecker {
        by_id: candidates.iter().map(|c| (c.id.as_str(), c)).collect(),
        candidates,
        plans,
    };
    let mut problems = Vec::new();
    let nodes = checker.nodes(&wiring.nodes, "/nodes", &mut problems);
    (
        Wiring {
            nodes,
            ..wiring.clone()
        },
        problems,
    )
}

struct WiringChecker<'a> {
    by_id: IndexMap<&'a str, &'a CandidateBlock>,
    candidates: &'a [CandidateBlock],
    plans: &'a [PlanCandidate],
}

/// `node` with only the inputs and outputs whose keys are in `inputs` / `outputs` (the ports
/// of `what`, a block or a called plan); every other one is a problem.
fn keep_ports(
    node: &WiredNode,
    path: &str,
    inputs: &[String],
    outputs: &[String],
    what: &str,
    problems: &mut Vec<ContractProblem>,
) -> WiredNode {
    let mut kept = node.clone();
    kept.inputs.clear();
    kept.outputs.clear();
    for (j, input) in node.inputs.iter().enumerate() {
        if inputs.contains(&input.key) {
            kept.inputs.push(input.clone());
        } else {
            problems.push(problem(
                FindingCode::DesignUnknownInput,
                node,
                format!("{path}/inputs/{j}/key"),
                format!(
                    "{what} has no input {:?}; its inputs are: {}",
                    input.key,
                    inputs.join(", ")
                ),
            ));
        }
    }
    for (j, output) in node.outputs.iter().enumerate() {
        if outputs.contains(&output.key) {
            kept.outputs.push(output.clone());
        } else {
            problems.push(problem(
                FindingCode::DesignUnknownOutput,
                node,
                format!("{path}/outputs/{j}/key"),
                format!(
                    "{what} has no output {:?}; its outputs are: {}",
                    output.key,
                    outputs.join(", ")
                ),
            ));
        }
    }
    kept
}

fn problem(code: FindingCode, node: &WiredNode, path: String, message: String) -> ContractProblem {
    ContractProblem {
        code,
        node_id: node.id.clone(),
        path,
        message,
    }
}

impl WiringChecker<'_> {
    fn nodes(
        &self,
        nodes: &[WiredNode],
        base: &str,
        problems: &mut Vec<ContractProblem>,
    ) -> Vec<WiredNode> {
        nodes
            .iter()
            .enumerate()
            .filter_map(|(i, node)| self.node(node, &format!("{base}/{i}"), problems))
            .collect()
    }

    fn node(
        &self,
        node: &WiredNode,
        path: &str,
        problems: &mut Vec<ContractProblem>,
    ) -> Option<WiredNode> {
        match node.kind.as_deref() {
            None | Some("block") => self.block_node(node, path, problems),
            Some("loop") => {
                let mut kept = node.clone();
                kept.body = self.nodes(&node.body, &format!("{path}/body"), problems);
                kept.outputs.clear();
                for (j, output) in node.outputs.iter().enumerate() {
                    if output.key == "collect" {
                        kept.outputs.push(output.clone());
                    } else {
                        problems.push(problem(
                            FindingCode::DesignUnknownOutput,
                            node,
                            format!("{path}/outputs/{j}/key"),
                            format!(
                                "a loop has only the output \"collect\", not {:?}",
                                output.key
                            ),
                        ));
                    }
                }
                Some(kept)
            }
            Some("subflow") => {
                let plan_id = node.plan_id.clone().unwrap_or_default();
                if let Some(plan) = self.plans.iter().find(|p| p.id == plan_id) {
                    Some(keep_ports(
                        node,
                        path,
                        &plan.inputs,
                        &plan.outputs,
                        &format!("plan {plan_id}"),
                        problems,
                    ))
                } else {
                    problems.push(problem(
                        FindingCode::DesignUnknownPlan,
                        node,
                        format!("{path}/plan_id"),
                        format!(
                            "plan {plan_id:?} is not registered; registered plans: {}",
                            if self.plans.is_empty() {
                                "(none)".to_string()
                            } else {
                                plan_ids(self.plans).join(", ")
                            }
                        ),
                    ));
                    None
                }
            }
            Some(other) => {
                problems.push(problem(
                    FindingCode::DesignUnknownNodeType,
                    node,
                    format!("{path}/type"),
                    format!("node type {other:?} is not one of block, loop, subflow"),
                ));
                None
            }
        }
    }

    fn block_node(
        &self,
        node: &WiredNode,
        path: &str,
        problems: &mut Vec<ContractProblem>,
    ) -> Option<WiredNode> {
        let Some(spec) = self.by_id.get(node.block.as_str()) else {
            problems.push(problem(
                FindingCode::DesignUnknownBlock,
                node,
                format!("{path}/block"),
                format!(
                    "block {:?} is not one of the candidate blocks; use one of: {}",
                    node.block,
                    self.candidates
                        .iter()
                        .map(|c| c.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
            return None;
        };
        let kept = keep_ports(node, path, &spec.inputs, &spec.outputs, &spec.id, problems);
        if spec.id == PROCESS_LLM {
            let value = |key: &str| {
                kept.inputs
                    .iter()
                    .find(|x| x.key == key)
                    .map(|x| parse_value(&x.value_json))
            };
            let has_schema = value("output_schema").is_some_and(|v| non_empty(&v));
            let has_prompt = ["prompt", "instruction"]
                .iter()
                .any(|k| value(k).is_some_and(|v| non_empty(&v)));
            if !has_schema || !has_prompt {
                problems.push(problem(
                    FindingCode::DesignProcessLlmContract,
                    node,
                    format!("{path}/inputs"),
                    "ai.process_llm needs a non-empty output_schema and a prompt or instruction"
                        .into(),
                ));
            }
        }
        Some(kept)
    }
}
