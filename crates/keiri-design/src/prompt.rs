//! The prompts: system rules, the instruction, the document digest, the candidate catalog in
//! TOON (tabular rows cost far fewer tokens than JSON objects; see the README for the
//! measurement), template summaries, and the repair message.

use keiri_plan::{BlockSpec, Catalog, TemplateSpec};
use serde::Serialize;

use crate::schema::{ContractProblem, Skeleton};

/// The catalog row of one block: the compact form the model reads.
#[derive(Debug, Clone, Serialize)]
pub struct CatalogRow {
    pub id: String,
    /// `name:type` (a `*` marks a required input), comma separated.
    pub inputs: String,
    pub outputs: String,
    pub description: String,
}

/// Descriptions are cut here: the first sentence or two say what a block is for, the rest is
/// detail the model does not need to choose and wire it.
const DESCRIPTION_CHARS: usize = 160;

fn cut(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut s: String = one_line.chars().take(max).collect();
    s.push('…');
    s
}

pub fn catalog_row(spec: &BlockSpec) -> CatalogRow {
    let ports = |ports: &indexmap::IndexMap<String, keiri_plan::PortSpec>, mark: bool| {
        ports
            .iter()
            .map(|(name, p)| {
                let star = if mark && p.required { "*" } else { "" };
                format!("{name}{star}:{}", p.ty.display())
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    CatalogRow {
        id: spec.id.clone(),
        inputs: ports(&spec.inputs, true),
        outputs: ports(&spec.outputs, false),
        description: cut(&spec.description, DESCRIPTION_CHARS),
    }
}

/// The rows of `ids` that are in the catalog.
pub fn catalog_rows(catalog: &Catalog, ids: &[String]) -> Vec<CatalogRow> {
    ids.iter()
        .filter_map(|id| catalog.get(id))
        .map(catalog_row)
        .collect()
}

#[derive(Serialize)]
struct Table<'a> {
    blocks: &'a [CatalogRow],
}

/// The rows in TOON. The encoder is the maintained `toon-format` crate; if it ever fails the
/// rows go out as JSON, which the model reads just as well at a higher token cost.
pub fn encode_catalog(rows: &[CatalogRow]) -> String {
    let table = Table { blocks: rows };
    toon_format::encode(&table, &toon_format::EncodeOptions::default())
        .unwrap_or_else(|_| serde_json::to_string(&table).unwrap_or_default())
}

/// The same rows as plain JSON (the baseline the README's measurement compares against).
pub fn encode_catalog_json(rows: &[CatalogRow]) -> String {
    serde_json::to_string(&Table { blocks: rows }).unwrap_or_default()
}

pub const SYSTEM_RULES: &str = "You are the planner of Keiri Studio, a tool that automates \
accounting work in Japanese companies with plans: DAGs of typed blocks. Rules:\n\
- Use only the candidate blocks listed, with only their listed inputs and outputs.\n\
- A node reads another node's output as \"${<node_id>.<alias>}\", where alias is what the \
producing node publishes in its outputs; plan variables are \"${vars.<name>}\".\n\
- Required inputs (marked *) must be set. Anything the user did not state (file paths, \
sheet names, thresholds, recipients) becomes an explicit \"${vars.<name>}\" listed in vars; \
set its value_json to \"null\" when only the user can answer.\n\
- ai.process_llm needs a non-empty output_schema (a JSON Schema object) and a prompt or \
instruction.\n\
- Node ids are short snake_case ascii and unique.\n\
- Answer with JSON only, matching the response schema exactly.";

/// The context shared by both stages: instruction, digest, candidates, templates.
pub fn context(
    instruction: &str,
    digest: &str,
    catalog_toon: &str,
    templates: &[&TemplateSpec],
) -> String {
    let mut s = String::new();
    s.push_str("## Instruction\n");
    s.push_str(instruction.trim());
    s.push_str("\n\n## Documents (digest)\n");
    s.push_str(if digest.trim().is_empty() {
        "No documents provided: the user attached none, so every file, sheet and column the \
flow needs is a question."
    } else {
        digest.trim()
    });
    s.push_str("\n\n## Candidate blocks (TOON: inputs/outputs are name:type, * = required)\n");
    s.push_str(catalog_toon);
    if !templates.is_empty() {
        s.push_str("\n\n## Templates to follow (proven flows; reuse their blocks and wiring)\n");
        for t in templates {
            s.push_str(&template_summary(t));
        }
    }
    s
}

/// A template's summary and snippet: its contract and its node list.
pub fn template_summary(t: &TemplateSpec) -> String {
    let mut s = format!("- {}: {} — {}\n", t.id, t.title, cut(&t.description, 200));
    if !t.imports.is_empty() {
        s.push_str(&format!(
            "  imports: {}\n",
            t.imports.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if !t.exports.is_empty() {
        s.push_str(&format!(
            "  exports: {}\n",
            t.exports
                .iter()
                .map(|(k, e)| format!("{k}<-{}", e.from))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for u in &t.ui_suggestions {
        let reason = u.reason_en.as_deref().unwrap_or(&u.reason);
        s.push_str(&format!(
            "  suggested UI step: {} after {} — {}\n",
            u.block,
            u.after.as_deref().unwrap_or("-"),
            cut(reason, 120)
        ));
    }
    for n in &t.graph_snippet {
        s.push_str(&format!(
            "  node {} {} in[{}] out[{}]\n",
            n.id,
            n.block.as_deref().unwrap_or("-"),
            n.inputs.keys().cloned().collect::<Vec<_>>().join(","),
            n.aliases()
                .map(|(k, a)| format!("{k}:{a}"))
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    s
}

pub fn skeleton_task() -> &'static str {
    "## Task (stage 1: skeleton)\nList the nodes of the flow, input → transform → output, with \
the UI steps the user needs (review, confirmation). For each node give an id, the block and \
its purpose; repeat when it runs once per item of a list (kind foreach, over: which list) or \
until a condition holds (kind while, until: which condition), else null; calls_plan when it \
runs a registered plan instead of a block (then block is null), else null. List as questions \
what only the user can tell (a file to read, a sheet, a threshold), each with the var name \
that will hold the answer."
}

pub fn wiring_task(
    skeleton: &Skeleton,
    answered: &[(String, String)],
    options: &crate::generate::GenerateOptions,
) -> String {
    let mut s = String::from(
        "## Task (stage 2: wiring)\nThe skeleton below is fixed: keep its nodes and blocks. \
Connect each node's inputs to earlier outputs by type and meaning, publish the outputs later \
nodes read, and turn anything ambiguous into a ${vars.<name>} defined in vars.\n\nSkeleton:\n",
    );
    for n in &skeleton.nodes {
        let what = match (&n.calls_plan, &n.block) {
            (Some(plan), _) => format!("subflow calling plan {plan}"),
            (None, Some(block)) => block.clone(),
            (None, None) => "-".into(),
        };
        s.push_str(&format!("- {} ({what}) — {}", n.id, n.purpose));
        if let Some(r) = &n.repeat {
            match r.kind.as_str() {
                "while" => s.push_str(&format!(
                    " [repeats while: until {}]",
                    r.until.as_deref().unwrap_or("?")
                )),
                _ => s.push_str(&format!(
                    " [repeats foreach over {}]",
                    r.over.as_deref().unwrap_or("?")
                )),
            }
        }
        s.push('\n');
    }
    if options.suggest_foreach {
        s.push_str(&format!(
            "\nName the loop variable of a foreach {:?} unless the flow needs another name.",
            options.foreach_var_name
        ));
    }
    if !options.suggest_when {
        s.push_str("\nDo not put when conditions on nodes: set when to null.");
    }
    s.push_str(
        "\nA node marked [repeats …] becomes a loop node (type loop) whose body holds the \
block node(s) run per item: foreach {input_json: the list (a ${node.alias} reference), var: \
the item's name, read in the body as ${vars.<var>}} or while {condition, max_iterations}; the \
loop publishes the body's results as its output collect. A subflow node (type subflow) calls \
a registered plan with plan_id and inputs. Set policy (on_error stop|continue, retries, \
timeout_ms, concurrency) only when the instruction asks for it, node_policies for single \
nodes, and ui_layout to the ids of the UI nodes in the order the user sees them.\n",
    );
    if !answered.is_empty() {
        s.push_str("\nThe user already answered (use these values in vars):\n");
        for (var, value) in answered {
            s.push_str(&format!("- {var} = {value}\n"));
        }
    }
    s
}

/// The attached files' tables for the wiring stage: a column input must name one of these
/// headers exactly. Empty when no CSV or workbook is attached.
pub fn file_columns(files: &[keiri_plan::FileSchema]) -> String {
    if files.iter().all(|f| f.tables.is_empty()) {
        return String::new();
    }
    format!(
        "\n## Columns of the attached files\nWire every input that names a column (…_field, \
fields, by, keys, columns, group_by) to one of these headers, spelled exactly as here. When no \
header fits, put a ${{vars.<name>}} with a question instead of inventing a column name; read \
each file by the path shown.\n{}\n",
        keiri_plan::columns::describe(files)
    )
}

/// One finding as the repair prompt shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepairFinding {
    pub code: String,
    pub node: Option<String>,
    pub path: String,
    pub message: String,
}

impl From<&ContractProblem> for RepairFinding {
    fn from(p: &ContractProblem) -> Self {
        RepairFinding {
            code: p.code.to_string(),
            node: Some(p.node_id.clone()),
            path: p.path.clone(),
            message: p.message.clone(),
        }
    }
}

/// The repair message: findings, the spec excerpts of the blocks involved, the node-level
/// diff from the previous attempt, and the contracts of the templates involved.
pub fn repair_message(
    attempt: u32,
    max: u32,
    findings: &[RepairFinding],
    spec_excerpts: &[CatalogRow],
    diff: &[String],
    template_contracts: &[String],
) -> String {
    let mut s = format!(
        "## Repair {attempt}/{max}\nThe plan you sent does not validate. Fix every finding \
below and send the whole plan again (same schema). Change only what the findings need.\n\n\
### Findings (code | node | path | message)\n"
    );
    for f in findings {
        s.push_str(&format!(
            "- {} | {} | {} | {}\n",
            f.code,
            f.node.as_deref().unwrap_or("-"),
            f.path,
            f.message
        ));
    }
    s.push_str("\n### Spec excerpts of the blocks involved\n");
    s.push_str(&encode_catalog(spec_excerpts));
    s.push_str("\n\n### Node-level diff from the previous attempt\n");
    if diff.is_empty() {
        s.push_str("(no node changed)\n");
    }
    for line in diff {
        s.push_str(line);
        s.push('\n');
    }
    if !template_contracts.is_empty() {
        s.push_str("\n### Template contracts involved\n");
        for c in template_contracts {
            s.push_str(c);
        }
    }
    s
}
