//! The tool table: one entry per MCP tool. An entry names the tool, describes it for the model,
//! names the request type its input schema is generated from (the same type the API function
//! takes, so the schema cannot drift from what is accepted) and calls one `keiri-api`
//! function. Adding a tool is adding an entry.

use std::sync::Arc;

use keiri_api::docs::{BatchLimits, MetricsRequest, OutputFormat, SectionsRequest};
use keiri_api::json::PlanRequest;
use keiri_api::patches::{self, ApplyPatchInput, ApplyPatchRequest, ApplyPatchResult};
use keiri_api::retrieval::{RetrieveRequest, RetrieveResponse};
use keiri_api::xlsx::{ExtractRequest, ExtractResponse, MakeRequest, PatchRequest, PatchResponse};
use keiri_api::{ApiError, Context, ErrorCode};
use rmcp::handler::server::common::{schema_for_input, schema_for_output};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What a tool does to the files it is given, for the client's tool annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads only.
    ReadOnly,
    /// Writes new files; replaces one only when the request (or `--on-conflict`) says so.
    Writes,
}

/// One MCP tool.
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: String,
    pub effect: Effect,
    /// The JSON Schema of the arguments, generated from the request type.
    pub input_schema: fn() -> Result<Arc<JsonObject>, String>,
    /// The JSON Schema of a successful result, where the response is one object type.
    pub output_schema: Option<fn() -> Arc<JsonObject>>,
    /// Runs the tool: arguments in, the API's JSON response out.
    pub call: Call,
}

/// How a tool runs.
#[derive(Debug, Clone, Copy)]
pub enum Call {
    /// Blocking work on the runtime's blocking pool: arguments in, JSON out.
    Blocking(fn(&Context, Value) -> Result<Value, ApiError>),
    /// The API function of this name, through [`keiri_api::dispatch`] (an `async` streaming
    /// one is awaited with its events dropped).
    Api(&'static str),
}

impl std::fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSpec")
            .field("name", &self.name)
            .finish()
    }
}

/// Every tool the server offers, in the order `tools/list` shows them.
pub fn all() -> Vec<ToolSpec> {
    let limits = BatchLimits::default();
    vec![
        ToolSpec {
            name: "exstruct_patch",
            title: "Patch an Excel workbook",
            description: EXSTRUCT_PATCH.to_string(),
            effect: Effect::Writes,
            input_schema: schema_for_input::<PatchRequest>,
            output_schema: Some(schema_for_output::<PatchResponse>),
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::workbook_patch)),
        },
        ToolSpec {
            name: "exstruct_list_ops",
            title: "List the workbook patch ops",
            description: EXSTRUCT_LIST_OPS.to_string(),
            effect: Effect::ReadOnly,
            input_schema: no_arguments,
            output_schema: Some(schema_for_output::<keiri_api::ListOpsResponse>),
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::workbook_list_ops)),
        },
        ToolSpec {
            name: "exstruct_describe_op",
            title: "Describe a workbook patch op",
            description: EXSTRUCT_DESCRIBE_OP.to_string(),
            effect: Effect::ReadOnly,
            input_schema: schema_for_input::<keiri_api::DescribeOpRequest>,
            output_schema: Some(schema_for_output::<keiri_api::xlsx::OpSchema>),
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::workbook_describe_op)),
        },
        ToolSpec {
            name: "exstruct_validate_input",
            title: "Check a workbook and patch ops",
            description: EXSTRUCT_VALIDATE_INPUT.to_string(),
            effect: Effect::ReadOnly,
            input_schema: schema_for_input::<keiri_api::xlsx::ValidateInputRequest>,
            output_schema: Some(schema_for_output::<keiri_api::xlsx::ValidateInputResponse>),
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::workbook_validate_input)),
        },
        ToolSpec {
            name: "exstruct_get_runtime_info",
            title: "Show the server's roots, version, ops and limits",
            description: EXSTRUCT_GET_RUNTIME_INFO.to_string(),
            effect: Effect::ReadOnly,
            input_schema: no_arguments,
            output_schema: Some(schema_for_output::<keiri_api::RuntimeInfo>),
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::runtime_info)),
        },
        ToolSpec {
            name: "exstruct_read_range",
            title: "Read a range of workbook cells",
            description: EXSTRUCT_READ_RANGE.to_string(),
            effect: Effect::ReadOnly,
            input_schema: schema_for_input::<keiri_api::xlsx::ReadRangeRequest>,
            output_schema: Some(schema_for_output::<keiri_api::xlsx::ReadRangeResponse>),
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::workbook_read_range)),
        },
        ToolSpec {
            name: "exstruct_read_cells",
            title: "Read workbook cells by address",
            description: EXSTRUCT_READ_CELLS.to_string(),
            effect: Effect::ReadOnly,
            input_schema: schema_for_input::<keiri_api::xlsx::ReadCellsRequest>,
            output_schema: Some(schema_for_output::<keiri_api::xlsx::ReadCellsResponse>),
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::workbook_read_cells)),
        },
        ToolSpec {
            name: "exstruct_read_formulas",
            title: "List a sheet's formulas",
            description: EXSTRUCT_READ_FORMULAS.to_string(),
            effect: Effect::ReadOnly,
            input_schema: schema_for_input::<keiri_api::xlsx::ReadFormulasRequest>,
            output_schema: Some(schema_for_output::<keiri_api::xlsx::ReadFormulasResponse>),
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::workbook_read_formulas)),
        },
        ToolSpec {
            name: "exstruct_extract",
            title: "Extract an Excel workbook's structure",
            description: EXSTRUCT_EXTRACT.to_string(),
            effect: Effect::Writes,
            input_schema: schema_for_input::<ExtractRequest>,
            output_schema: Some(schema_for_output::<ExtractResponse>),
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::workbook_extract)),
        },
        ToolSpec {
            name: "exstruct_make",
            title: "Create an Excel workbook",
            description: EXSTRUCT_MAKE.to_string(),
            effect: Effect::Writes,
            input_schema: schema_for_input::<MakeRequest>,
            output_schema: Some(schema_for_output::<PatchResponse>),
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::workbook_make)),
        },
        ToolSpec {
            name: "extract_code_section",
            title: "Read line ranges of files",
            description: extract_code_section_description(&limits),
            effect: Effect::ReadOnly,
            input_schema: schema_for_input::<SectionsRequest>,
            // The response is TOON or JSON depending on the request: no single object schema.
            output_schema: None,
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::documents_extract_sections)),
        },
        ToolSpec {
            name: "check_code_scale",
            title: "Measure files",
            description: CHECK_CODE_SCALE.to_string(),
            effect: Effect::ReadOnly,
            input_schema: schema_for_input::<CheckCodeScaleRequest>,
            output_schema: None,
            call: Call::Blocking(|ctx, args| run(ctx, args, check_code_scale)),
        },
        ToolSpec {
            // The tool's definition is fixed word for word by its contract (keiri-diff), so
            // its name, description and parameters come from there rather than from schemars.
            name: patches::TOOL_NAME,
            title: "Apply a unified diff to a file",
            description: patches::TOOL_DESCRIPTION.to_string(),
            effect: Effect::Writes,
            input_schema: apply_patch_parameters,
            output_schema: Some(schema_for_output::<ApplyPatchResult>),
            call: Call::Blocking(|ctx, args| {
                // The contract's code for bad arguments (`INVALID_ARGUMENT`).
                let input = ApplyPatchInput::from_json(&args)
                    .map_err(|e| ApiError::new(ErrorCode::InvalidArgument, e.to_string()))?;
                let req = ApplyPatchRequest {
                    file_path: input.file_path,
                    patch: input.patch,
                    backend: Default::default(),
                    dry_run: false,
                };
                to_json(keiri_api::apply_patch(ctx, req)?)
            }),
        },
        ToolSpec {
            name: "validate_plan",
            title: "Validate a plan",
            description: VALIDATE_PLAN.to_string(),
            effect: Effect::ReadOnly,
            input_schema: schema_for_input::<PlanRequest>,
            output_schema: None,
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::plan_validate)),
        },
        ToolSpec {
            name: "retrieve_blocks",
            title: "Find catalog blocks for a job",
            description: RETRIEVE_BLOCKS.to_string(),
            effect: Effect::ReadOnly,
            input_schema: schema_for_input::<RetrieveRequest>,
            output_schema: Some(schema_for_output::<RetrieveResponse>),
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::blocks_retrieve)),
        },
        ToolSpec {
            name: "dry_run_plan",
            title: "Dry-run a plan",
            description: DRY_RUN_PLAN.to_string(),
            effect: Effect::ReadOnly,
            input_schema: schema_for_input::<PlanRequest>,
            output_schema: None,
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::plan_dry_run)),
        },
        // The three planner tools return the plan as YAML plus the planner's own types, which
        // have no schema: no output schema. Nothing is written (a plan is registered only by
        // the user), so they are read-only.
        ToolSpec {
            name: "templates_list",
            title: "List plan templates",
            description: TEMPLATES_LIST.to_string(),
            effect: Effect::ReadOnly,
            input_schema: schema_for_input::<keiri_api::TemplatesListRequest>,
            output_schema: None,
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::templates_list)),
        },
        ToolSpec {
            name: "plan_generate",
            title: "Generate a plan",
            description: PLAN_GENERATE.to_string(),
            effect: Effect::ReadOnly,
            input_schema: schema_for_input::<keiri_api::PlanGenerateRequest>,
            output_schema: None,
            call: Call::Api("plan_generate"),
        },
        ToolSpec {
            name: "requirements_answer",
            title: "Answer a plan's questions",
            description: REQUIREMENTS_ANSWER.to_string(),
            effect: Effect::ReadOnly,
            input_schema: schema_for_input::<keiri_api::RequirementsAnswerRequest>,
            output_schema: None,
            call: Call::Blocking(|ctx, args| run(ctx, args, keiri_api::requirements_answer)),
        },
        // A run writes only its own records under runs/ (`write: true` is refused here), and
        // its result is the run's status, failures and node states.
        ToolSpec {
            name: "run_plan",
            title: "Run a plan",
            description: RUN_PLAN.to_string(),
            effect: Effect::Writes,
            input_schema: schema_for_input::<keiri_api::PlanRunRequest>,
            output_schema: None,
            call: Call::Api("plan_run"),
        },
    ]
}

/// Deserialises the arguments into the API's request type, calls the API function and
/// serialises its response. Arguments that do not match the type are an `INVALID_REQUEST`
/// tool error whose message names the offending field.
fn run<Req, Res>(
    ctx: &Context,
    args: Value,
    f: fn(&Context, Req) -> Result<Res, ApiError>,
) -> Result<Value, ApiError>
where
    Req: DeserializeOwned,
    Res: Serialize,
{
    let req: Req = serde_json::from_value(args)
        .map_err(|e| ApiError::new(ErrorCode::InvalidRequest, format!("invalid arguments: {e}")))?;
    to_json(f(ctx, req)?)
}

fn to_json(res: impl Serialize) -> Result<Value, ApiError> {
    serde_json::to_value(res)
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("serialising the result: {e}")))
}

/// The schema of a tool without arguments. schemars leaves `properties` out for an empty
/// struct, and MCP clients expect the object form with its (empty) `properties`.
fn no_arguments() -> Result<Arc<JsonObject>, String> {
    match serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}) {
        Value::Object(map) => Ok(Arc::new(map)),
        other => Err(format!("not an object: {other}")),
    }
}

/// The fixed parameters of `apply_patch` (`filePath`, `patch`), as its contract states them.
fn apply_patch_parameters() -> Result<Arc<JsonObject>, String> {
    match patches::tool_definition().parameters {
        Value::Object(map) => Ok(Arc::new(map)),
        other => Err(format!("apply_patch parameters are not an object: {other}")),
    }
}

/// `check_code_scale` arguments: the batch metrics form of the tool (`file_paths` with
/// `metrics_only: true`). This server measures files; it does not parse code structure, so
/// `metrics_only: false` is refused rather than silently answered with metrics.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckCodeScaleRequest {
    /// Files to measure (at most 200), absolute or relative to the first root.
    pub file_paths: Vec<String>,
    /// Must be `true` (the default): only file metrics are offered.
    #[serde(default = "yes")]
    pub metrics_only: bool,
    /// `toon` (the default: compact, for models) or `json`.
    #[serde(default = "toon")]
    pub output_format: OutputFormat,
}

fn yes() -> bool {
    true
}

fn toon() -> OutputFormat {
    OutputFormat::Toon
}

fn check_code_scale(
    ctx: &Context,
    req: CheckCodeScaleRequest,
) -> Result<keiri_api::docs::Output<keiri_api::docs::MetricsResponse>, ApiError> {
    if !req.metrics_only {
        return Err(ApiError::new(
            ErrorCode::InvalidRequest,
            "only metrics_only: true is supported (code structure analysis is not offered)",
        ));
    }
    keiri_api::documents_metrics(
        ctx,
        MetricsRequest {
            file_paths: req.file_paths,
            output_format: req.output_format,
        },
    )
}

const EXSTRUCT_PATCH: &str = "\
Edit an Excel workbook (.xlsx/.xlsm) with cell, sheet, styling and structure operations \
(exstruct_list_ops lists them, exstruct_describe_op shows one's fields, constraints, example \
and aliases; exstruct_validate_input checks ops without writing). Ops apply in order; a \
top-level sheet serves every op that names none. A values shape that differs from its range, \
or a fill_formula range of more than one row and column, is an INVALID_REQUEST error. The result is saved atomically to a new file, \
{stem}_patched{suffix} next to the workbook unless out_dir/out_name say otherwise; the \
original is never modified. on_conflict (overwrite | skip | rename) decides what happens when \
the output exists; when left out, the server's --on-conflict default applies. dry_run computes \
everything and writes nothing. Returns out_path, patch_diff (per-cell before/after), warnings, \
error (the op that could not apply, with op_index; nothing is saved then), inverse_ops (with \
return_inverse_ops) and formula_issues (with preflight_formula_check). Paths are absolute or \
relative to the server's first root and must stay inside its roots.";

const EXSTRUCT_MAKE: &str = "\
Create a new Excel workbook (.xlsx/.xlsm) at out_path and apply ops to it in one call; ops \
are exstruct_patch's (add_sheet, set_value, set_formula, set_range_values, styling, tables, \
…) and may be left out. The first sheet is Sheet1, or the top-level sheet's name unless an \
add_sheet op creates that sheet; sheet is also the default of ops that name none. Takes \
on_conflict, auto_formula, dry_run, return_inverse_ops and preflight_formula_check like \
exstruct_patch and returns the same fields (out_path, patch_diff, warnings, error, \
inverse_ops, formula_issues).";

const EXSTRUCT_EXTRACT: &str = "\
Read an Excel workbook's structure (.xlsx/.xlsm) straight from its file, no Excel needed, and \
write it as JSON or TOON (format: json | toon) next to the workbook ({stem}.json) unless \
out_dir/out_name say otherwise. mode: light (cells, table candidates, print areas), standard \
(the default: also shapes with text, connectors with begin_id/end_id, SmartArt node trees, \
charts with type, title and series ranges, merged ranges), verbose (also every shape with its \
size, hyperlinks, formulas_map). Per sheet: rows [{r, c: {A: value}}] (options.alpha_col=false \
for 0-based numeric keys), print_areas and merged_cells with 0-based columns. options: pretty, \
indent, alpha_col, max_cells (cells read, 1,000,000 by default). on_conflict (overwrite | skip \
| rename) decides what happens when the output exists; when left out, the server's \
--on-conflict default applies. Returns out_path, workbook_meta {sheet_names, sheet_count}, \
warnings and engine.";

fn extract_code_section_description(limits: &BatchLimits) -> String {
    format!(
        "Read line ranges (1-based, inclusive) from text, code and documents (PDF, Word, Excel) \
         in one call. Single-range form: file_path, start_line and optional end_line (the end \
         of the file when left out). Batch form: requests: [{{file_path, sections: \
         [{{start_line, end_line, label}}]}}]; give one form, not both. Limits per call: {} \
         files, {} sections per file, {} sections in all, {} bytes and {} lines of content, \
         files up to {} bytes; allow_truncate returns what fits instead of failing, fail_fast \
         stops at the first failing file. format: text | json (numbered lines) | raw (original \
         line endings). output_format: toon (the default, compact) or json. A file that cannot \
         be read is reported in errors[] with a stable code.",
        limits.max_files,
        limits.max_sections_per_file,
        limits.max_sections_total,
        limits.max_total_bytes,
        limits.max_total_lines,
        limits.max_file_size_bytes,
    )
}

const EXSTRUCT_LIST_OPS: &str = "\
List every exstruct_patch op with a one-line description: {ops: [{op, description}]}. The list \
is generated from the op definitions the patch parser uses.";

const EXSTRUCT_DESCRIBE_OP: &str = "\
Describe one exstruct_patch op (op: its name): required and optional fields (sheet may come \
from the request's top-level sheet), constraints, a minimal example that passes the request \
checks, field aliases (e.g. color -> fill_color), and the op's JSON Schema. An unknown op is an \
INVALID_REQUEST error naming the known ones.";

const EXSTRUCT_VALIDATE_INPUT: &str = "\
Check that a workbook (xlsx_path) can be read: is_readable, warnings, errors, plus its \
sheet_names. Give ops (and optionally the top-level sheet and auto_formula) to also check a \
patch request against the workbook exactly as exstruct_patch would, as a dry run: nothing is \
written. valid is true when the file is readable and every op would apply; error_codes gives \
each error's stable code and patch_error the op that would fail.";

const EXSTRUCT_GET_RUNTIME_INFO: &str = "\
Show how this server resolves paths and what it supports: root (relative paths resolve \
against it), cwd, platform, path_examples, every allowed root, the version, the supported \
patch ops, the default on_conflict and the limits (recommended ops per request, cells per \
request and per styling op, workbook size, read max_cells).";

const EXSTRUCT_READ_RANGE: &str = "\
Read a rectangle of cells straight from a workbook (xlsx_path, sheet, range such as A1:G10): \
each cell's value (for a formula, the value cached in the file) and, with include_formulas, \
its formula. include_empty (default true) lists empty cells too. A range larger than \
max_cells (default 10000) is a LIMIT_EXCEEDED error; an unknown sheet SHEET_NOT_FOUND; a bad \
range INVALID_REQUEST. sheet may be left out when the workbook has one worksheet.";

const EXSTRUCT_READ_CELLS: &str = "\
Read specific cells straight from a workbook (xlsx_path, sheet, addresses such as [\"J98\", \
\"J124\"]): each one's value and (by default) its formula, in the order given; missing_cells \
lists the addresses that hold nothing.";

const EXSTRUCT_READ_FORMULAS: &str = "\
List the formulas of a sheet straight from a workbook (xlsx_path, sheet, optional range), row \
by row, each with its cell and, with include_values, the value cached in the file. At most \
max_cells (default 10000) formulas are listed; truncated says when more matched.";

const CHECK_CODE_SCALE: &str = "\
Measure files before reading them: size in bytes, lines, characters, estimated tokens, a \
sha256 content hash, the detected format and encoding, PDF pages and workbook sheets. Give \
file_paths (at most 200) with metrics_only: true. output_format: toon (the default) or json. \
A file that cannot be measured is reported in errors[] with a stable code (e.g. PATH_DENIED, \
NOT_FOUND).";

const VALIDATE_PLAN: &str = "\
Validate a Keiri Studio plan (a YAML DAG of typed blocks) against the block catalog. Returns \
valid, error_count, warning_count and findings, each with a stable code, severity, node_id, \
JSON path, line/column, message and hint. A YAML syntax error is a finding, not a tool error.";

const RETRIEVE_BLOCKS: &str = "\
Find the catalog blocks and templates that fit a job described in Japanese or English (and \
optionally attached documents, given as paths): the top candidates per category, ranked by \
BM25 with Japanese-aware tokenisation fused with embedding similarity when an embedder is \
configured (mode: bm25 | dense | hybrid; without embeddings it runs as bm25 and says so in \
notes). Each candidate has its id, kind, category, title, scores and matched terms; pinned ids \
are always included. k: 5 to 8 per category (default 6).";

const DRY_RUN_PLAN: &str = "\
Dry-run a Keiri Studio plan without executing any block: returns the execution order and, per \
node, its kind, block, dependencies and resolved inputs and outputs (references such as \
${node.alias} shown symbolically). A plan with errors is a tool error with code PLAN_INVALID \
(or YAML_PARSE) whose details carry the findings.";

const TEMPLATES_LIST: &str = "\
List the plan templates (reusable accounting subflows: invoice duplicate detection, bank \
reconciliation, PO policy compliance, 3-way match, payroll anomalies, monthly close, exception \
report, ...) with id, category, titles, descriptions, tags and their import/export names. \
query filters by text.";

const PLAN_GENERATE: &str = "\
Generate a Keiri Studio plan (a YAML DAG of catalog blocks) from an instruction in Japanese or \
English, optionally with reference documents (paths) and templates. apply_mode compose merges \
templates offline without an LLM; hint (default) and llm-only need an LLM provider configured \
on the server (else LLM_NOT_CONFIGURED naming the variables). Returns status (valid | \
needs_answers | invalid | fallback), yaml, requirements (typed questions: answer them with \
answers in a new call or with requirements_answer), errors, suggestions, attempts and usage. \
Nothing is written; the plan is not registered.";

const RUN_PLAN: &str = "\
Run a Keiri Studio plan (yaml, or plan_path inside the workspace) on the workspace's files: \
every node executes its builtin block. vars override the plan's vars; inputs maps a name to a \
file path and sets vars.<name> to it. Input files are only read; every file the run writes \
goes under runs/<plan_id>/<run_id>/ (write: true is refused). Returns run_id, status \
(finished | failed | cancelled), failures (node, code, message) and each node's status. \
PLAN_INVALID with the findings when the plan does not validate.";

const REQUIREMENTS_ANSWER: &str = "\
Apply answers (by requirement id) to the open questions of a plan's YAML: undefined \
${vars.*}, Excel reads without path or sheet, an ai.process_llm without an output schema. Each \
answer is checked against its requirement (type, options, pattern); returns the updated yaml, \
valid, findings and the requirements still open. A bad answer is an INVALID_REQUEST tool error.";

#[cfg(test)]
mod tests {
    use super::*;

    /// One name per capability: a chat tool that does what an MCP tool does has the MCP
    /// tool's name (the MCP names are the seed contract) and takes the same arguments; only
    /// the write differs (MCP writes, the chat proposes for approval). The chat-only tools
    /// are listed here.
    #[test]
    fn the_chat_names_its_tools_as_mcp_does() {
        const CHAT_ONLY: [&str; 2] = ["read_file", "describe_block"];
        let mcp: Vec<&str> = all().iter().map(|t| t.name).collect();
        for name in keiri_agent::builtin_registry().names() {
            assert!(
                mcp.contains(&name.as_str()) || CHAT_ONLY.contains(&name.as_str()),
                "the chat tool {name} is not an MCP tool's name; MCP has {mcp:?}"
            );
        }
    }

    /// The planner tools' schemas (derived on the API requests, with hand-written schemas for
    /// the enums that live in schema-less crates) list every field, and a sample that sets
    /// every one is accepted.
    #[test]
    fn planner_tool_schemas_match_the_api_requests() {
        fn check<Req: DeserializeOwned>(tool: &str, full: Value) {
            let tools = all();
            let spec = tools.iter().find(|t| t.name == tool).unwrap();
            let schema = (spec.input_schema)().unwrap();
            let props: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
            let given: Vec<&String> = full.as_object().unwrap().keys().collect();
            assert_eq!(props, given, "{tool}: the sample must set every property");
            serde_json::from_value::<Req>(full).unwrap_or_else(|e| panic!("{tool}: {e}"));
        }
        check::<keiri_api::TemplatesListRequest>(
            "templates_list",
            serde_json::json!({"query": "x"}),
        );
        check::<keiri_api::PlanGenerateRequest>(
            "plan_generate",
            serde_json::json!({
                "instruction": "x", "docs": ["a.csv"], "templates": ["t"],
                "apply_mode": "llm-only", "fallback": true, "max_repair": 1,
                "answers": {"a": 1}, "plan_id": "p", "pinned_blocks": ["csv.read"], "lang": "en",
                "topk_per_category": 6, "max_docs_chars": 2000, "suggest_when": false,
                "suggest_foreach": true, "foreach_var_name": "row", "verify_by_running": true
            }),
        );
        check::<keiri_api::RequirementsAnswerRequest>(
            "requirements_answer",
            serde_json::json!({"yaml": "id: p", "answers": {}, "lang": "ja"}),
        );
    }

    #[test]
    fn every_input_schema_is_an_object_with_properties() {
        for tool in all() {
            let schema = (tool.input_schema)().unwrap_or_else(|e| panic!("{}: {e}", tool.name));
            assert_eq!(
                schema.get("type"),
                Some(&Value::from("object")),
                "{}",
                tool.name
            );
            assert!(
                schema.get("properties").is_some_and(Value::is_object),
                "{}",
                tool.name
            );
        }
    }

    #[test]
    fn apply_patch_keeps_its_fixed_definition() {
        let fixed = patches::tool_definition();
        let tools = all();
        let tool = tools.iter().find(|t| t.name == fixed.name).unwrap();
        assert_eq!(tool.description, fixed.description);
        let schema = (tool.input_schema)().unwrap();
        assert_eq!(Value::Object(schema.as_ref().clone()), fixed.parameters);
    }

    #[test]
    fn tool_names_are_unique() {
        let mut names: Vec<_> = all().into_iter().map(|t| t.name).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
    }
}
