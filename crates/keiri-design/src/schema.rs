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

use indexmap::IndexMap;
use keiri_plan::{BlockSpec, Catalog};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The block that needs a non-empty `output_schema` and a `prompt` or `instruction`.
pub const PROCESS_LLM: &str = "ai.process_llm";

/// One candidate block with its port whitelists.
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

/// Stage 1: `{reasoning, nodes: [{id, block, purpose}], questions: [{var, kind, label,
/// options}]}`.
pub fn skeleton_schema(candidates: &[CandidateBlock]) -> Value {
    let ids: Vec<String> = candidates.iter().map(|c| c.id.clone()).collect();
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
                    "required": ["id", "block", "purpose"],
                    "properties": {
                        "id": string(),
                        "block": string_enum(&ids),
                        "purpose": string(),
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

/// The node variant of one candidate: its id as the only `block`, its ports as the only keys.
fn node_variant(c: &CandidateBlock) -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["id", "block", "inputs", "outputs", "when"],
        "properties": {
            "id": string(),
            "block": string_enum(std::slice::from_ref(&c.id)),
            "inputs": port_list(&c.inputs, "value_json"),
            "outputs": port_list(&c.outputs, "alias"),
            "when": {"type": ["string", "null"]},
        }
    })
}

/// Stage 2: `{reasoning, vars: [{name, value_json}], nodes: [...]}` with one node variant per
/// candidate.
pub fn wiring_schema(candidates: &[CandidateBlock]) -> Value {
    let variants: Vec<Value> = candidates.iter().map(node_variant).collect();
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["reasoning", "vars", "nodes"],
        "properties": {
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
    pub block: String,
    pub purpose: String,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wiring {
    pub reasoning: String,
    pub vars: Vec<WiredVar>,
    pub nodes: Vec<WiredNode>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WiredVar {
    pub name: String,
    pub value_json: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WiredNode {
    pub id: String,
    pub block: String,
    pub inputs: Vec<WiredInput>,
    pub outputs: Vec<WiredOutput>,
    pub when: Option<String>,
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
    /// `design.process_llm_contract`.
    pub code: String,
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

/// Applies the per-block whitelists and the `ai.process_llm` contract: offending nodes, inputs
/// and outputs are removed from the returned wiring and reported.
pub fn check_wiring(
    wiring: &Wiring,
    candidates: &[CandidateBlock],
) -> (Wiring, Vec<ContractProblem>) {
    let by_id: IndexMap<&str, &CandidateBlock> =
        candidates.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut problems = Vec::new();
    let mut nodes = Vec::new();
    for (i, node) in wiring.nodes.iter().enumerate() {
        let Some(spec) = by_id.get(node.block.as_str()) else {
            problems.push(ContractProblem {
                code: "design.unknown_block".into(),
                node_id: node.id.clone(),
                path: format!("/nodes/{i}/block"),
                message: format!(
                    "block {:?} is not one of the candidate blocks; use one of: {}",
                    node.block,
                    candidates
                        .iter()
                        .map(|c| c.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
            continue;
        };
        let mut kept = node.clone();
        kept.inputs.clear();
        kept.outputs.clear();
        for (j, input) in node.inputs.iter().enumerate() {
            if spec.inputs.contains(&input.key) {
                kept.inputs.push(input.clone());
            } else {
                problems.push(ContractProblem {
                    code: "design.unknown_input".into(),
                    node_id: node.id.clone(),
                    path: format!("/nodes/{i}/inputs/{j}/key"),
                    message: format!(
                        "{} has no input {:?}; its inputs are: {}",
                        spec.id,
                        input.key,
                        spec.inputs.join(", ")
                    ),
                });
            }
        }
        for (j, output) in node.outputs.iter().enumerate() {
            if spec.outputs.contains(&output.key) {
                kept.outputs.push(output.clone());
            } else {
                problems.push(ContractProblem {
                    code: "design.unknown_output".into(),
                    node_id: node.id.clone(),
                    path: format!("/nodes/{i}/outputs/{j}/key"),
                    message: format!(
                        "{} has no output {:?}; its outputs are: {}",
                        spec.id,
                        output.key,
                        spec.outputs.join(", ")
                    ),
                });
            }
        }
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
                problems.push(ContractProblem {
                    code: "design.process_llm_contract".into(),
                    node_id: node.id.clone(),
                    path: format!("/nodes/{i}/inputs"),
                    message: "ai.process_llm needs a non-empty output_schema and a prompt or \
                              instruction"
                        .into(),
                });
            }
        }
        nodes.push(kept);
    }
    (
        Wiring {
            reasoning: wiring.reasoning.clone(),
            vars: wiring.vars.clone(),
            nodes,
        },
        problems,
    )
}
