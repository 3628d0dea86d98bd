//! The tool registry, defined once: every tool the chat and MCP offer.
//!
//! [`registry`] is keiri-agent's built-in tools (files, documents, catalog, plans, workbook
//! patch, unified diff) plus the tools whose work is an API function (workbook reads and
//! creation, the planner, runs). Each tool has one name, one argument type (its JSON Schema is
//! derived from it) and one implementation. Each front-end serves the registry through a
//! [`Scope`] and a [`ToolContext`] from [`tool_context`]:
//! - `keiri mcp` serves the tools that declare MCP ([`mcp_scope`]) under [`Writes::Direct`]: a
//!   write happens, as the MCP client asked;
//! - the studio's chat ([`crate::chat_send`]) serves the tools that declare the chat
//!   ([`chat_registry`]; each skill allows some, and the fallback skill the read-only ones)
//!   under [`Writes::Propose`]: a write is proposed with its diff and happens only on approval.
//!   A tool that can only write directly (creating a workbook, a run) refuses to run there.
//!
//! Each tool declares the front-ends that offer it ([`Fronts`], with its name and whether it
//! only reads), so no front-end keeps a list of names: adding a tool is adding an entry to
//! `api_tools` (or a `TypedTool` to keiri-agent), and nothing else.

use std::sync::Arc;

pub use keiri_agent::{
    Front, Fronts, Scope, Tool, ToolContext, ToolError, ToolFuture, ToolRegistry, Writes,
};
pub use keiri_fs::PathPolicy;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{ApiError, Context, ErrorCode, Lang};

/// The chat's share of the registry: the tools that declare the chat ([`Fronts`]); its skills
/// name them, and its fallback skill gets the read-only ones.
pub fn chat_registry(ctx: &Context) -> ToolRegistry {
    registry(ctx).offered_on(Front::Chat)
}

/// MCP's scope of `registry`: the tools that declare MCP, by name (the order `tools/list`
/// shows them).
pub fn mcp_scope(registry: &ToolRegistry) -> Scope {
    Scope::new("mcp", registry.names_on(Front::Mcp))
}

/// Every tool: keiri-agent's built-in ones and the API-backed ones, which run on `ctx`.
pub fn registry(ctx: &Context) -> ToolRegistry {
    let ctx = Arc::new(ctx.clone());
    let mut registry = keiri_agent::builtin_registry();
    for tool in api_tools(&ctx) {
        registry.register(Box::new(tool));
    }
    registry
}

/// What the tools run with: the context's workspace, catalog cache, designs and on-conflict
/// default; `policy` (the front-end's: MCP's roots and denials, or the chat's, which also
/// denies secrets); the message language; whether writes happen. `retrieve_blocks` and
/// `dry_run_plan` are the API's own ([`crate::blocks_retrieve`], [`crate::plan_dry_run`]), so
/// they answer what the studio's panels show.
pub fn tool_context(ctx: &Context, policy: PathPolicy, lang: Lang, writes: Writes) -> ToolContext {
    ToolContext::new(&ctx.workspace, policy.clone())
        .with_retrieve(retrieve(ctx, policy))
        .with_dry_run(dry_run(ctx))
        .with_catalog_dirs(ctx.catalog_dirs.clone())
        .with_specs(ctx.specs.clone())
        .with_designs_dir(ctx.designs_dir.clone())
        .with_lang(lang)
        .with_writes(writes)
        .with_on_conflict_default(ctx.on_conflict_default)
}

/// An API error as a tool's: its code, message and details are kept.
pub fn tool_error(e: ApiError) -> ToolError {
    let details = e.details.clone();
    let err = ToolError::from_code(e.code.as_str(), e.message);
    match details {
        Some(details) => err.with_details(details),
        None => err,
    }
}

/// `retrieve_blocks` on the workspace's shared retriever. Attached documents must pass the
/// tools' path policy (the chat's denies secrets) before the search reads them.
fn retrieve(ctx: &Context, policy: keiri_fs::PathPolicy) -> keiri_agent::Retrieve {
    let ctx = ctx.clone();
    keiri_agent::Retrieve(Arc::new(move |req: crate::retrieval::RetrieveRequest| {
        for doc in &req.docs {
            if let Err(e) = policy.resolve_existing(doc)
                && matches!(
                    ErrorCode::from(&e),
                    ErrorCode::PathDenied | ErrorCode::InvalidRequest
                )
            {
                return Err(tool_error(e.into()));
            }
        }
        crate::blocks_retrieve(&ctx, req).map_err(tool_error)
    }))
}

/// `dry_run_plan` is the studio's [`crate::plan_dry_run`]: the same order, inputs and workbook
/// previews (a patch node's cells before and after), not a second dry-run. An invalid plan's
/// findings are the error's details: the caller needs them to fix it.
fn dry_run(ctx: &Context) -> keiri_agent::DryRun {
    let ctx = ctx.clone();
    keiri_agent::DryRun(Arc::new(move |yaml: &str, lang: Lang| {
        let req = crate::json::PlanRequest {
            yaml: yaml.to_owned(),
            lang: Some(lang),
        };
        let res = crate::plan_dry_run(&ctx, req).map_err(tool_error)?;
        serde_json::to_value(res).map_err(|e| ToolError::failed("INTERNAL", e.to_string()))
    }))
}

/// A tool whose work is one API function.
struct ApiTool {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    /// Whether it only reads; a writing one writes directly and refuses to run where writes
    /// are proposed.
    read_only: bool,
    fronts: Fronts,
    parameters: fn() -> Value,
    output_schema: Option<fn() -> Value>,
    call: Call,
    ctx: Arc<Context>,
}

/// How an [`ApiTool`] runs.
#[derive(Clone, Copy)]
enum Call {
    /// A plain (blocking) API function: arguments in, JSON out.
    Plain(fn(&Context, Value) -> Result<Value, ApiError>),
    /// An `async` API function (a streaming one with its events dropped): arguments and the
    /// call's cancellation token in, the future of its JSON out, awaited on the caller's
    /// runtime.
    Awaited(
        for<'a> fn(
            &'a Context,
            Value,
            &'a keiri_llm::CancellationToken,
        ) -> crate::surface::Call<'a>,
    ),
}

impl Tool for ApiTool {
    fn name(&self) -> &str {
        self.name
    }
    fn title(&self) -> &str {
        self.title
    }
    fn description(&self) -> &str {
        self.description
    }
    fn parameters(&self) -> Value {
        (self.parameters)()
    }
    fn output_schema(&self) -> Option<Value> {
        self.output_schema.map(|f| f())
    }
    fn read_only(&self) -> bool {
        self.read_only
    }
    fn fronts(&self) -> Fronts {
        self.fronts
    }
    fn call<'a>(&'a self, args: &'a Value, tools: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            if !self.read_only && tools.writes == Writes::Propose {
                return Err(ToolError::failed(
                    "WRITES_DIRECTLY",
                    format!(
                        "{} writes its files directly and cannot propose them for approval, so \
                         it is not available here",
                        self.name
                    ),
                ));
            }
            let args = if args.is_null() {
                serde_json::json!({})
            } else {
                args.clone()
            };
            match self.call {
                Call::Plain(f) => keiri_agent::blocking(|| f(&self.ctx, args)).map_err(tool_error),
                Call::Awaited(f) => f(&self.ctx, args, &tools.cancel).await.map_err(tool_error),
            }
        })
    }
}

/// `plan_generate` without its progress events.
fn plan_generate<'a>(
    ctx: &'a Context,
    args: Value,
    cancel: &'a keiri_llm::CancellationToken,
) -> crate::surface::Call<'a> {
    Box::pin(async move {
        let req = parse(args)?;
        crate::surface::to_json(
            crate::plan_generate(ctx, req, &crate::EventSink::none(), cancel).await?,
        )
    })
}

/// `plan_run` without its progress events.
fn plan_run<'a>(
    ctx: &'a Context,
    args: Value,
    cancel: &'a keiri_llm::CancellationToken,
) -> crate::surface::Call<'a> {
    Box::pin(async move {
        let req = parse(args)?;
        crate::surface::to_json(crate::plan_run(ctx, req, &crate::EventSink::none(), cancel).await?)
    })
}

/// Deserialises the arguments into the API's request type, calls the API function and
/// serialises its response. Arguments that do not match the type are an `INVALID_REQUEST`
/// whose message names the offending field.
fn run<Req, Res>(
    ctx: &Context,
    args: Value,
    f: fn(&Context, Req) -> Result<Res, ApiError>,
) -> Result<Value, ApiError>
where
    Req: DeserializeOwned,
    Res: Serialize,
{
    crate::surface::to_json(f(ctx, parse(args)?)?)
}

/// The arguments as the API's request type; a mismatch is an `INVALID_REQUEST` naming the
/// offending field.
fn parse<Req: DeserializeOwned>(args: Value) -> Result<Req, ApiError> {
    serde_json::from_value(args)
        .map_err(|e| ApiError::new(ErrorCode::InvalidRequest, format!("invalid arguments: {e}")))
}

use keiri_agent::{output_schema_of as output, schema_of as input};

/// The API-backed tools, each with its name, title, description, whether it only reads, the
/// front-ends that offer it, its argument and result schemas and its function. Today every one
/// is offered over MCP only: the chat's skills work with keiri-agent's built-in tools.
fn api_tools(ctx: &Arc<Context>) -> Vec<ApiTool> {
    use crate::xlsx;
    let tool =
        |name, title, description, read_only, fronts, parameters, output_schema, call| ApiTool {
            name,
            title,
            description,
            read_only,
            fronts,
            parameters,
            output_schema,
            call,
            ctx: Arc::clone(ctx),
        };
    vec![
        tool(
            "exstruct_list_ops",
            "List the workbook patch ops",
            EXSTRUCT_LIST_OPS,
            true,
            Fronts::MCP,
            input::<crate::ListOpsRequest>,
            Some(output::<crate::ListOpsResponse>),
            Call::Plain(|ctx, args| run(ctx, args, crate::workbook_list_ops)),
        ),
        tool(
            "exstruct_describe_op",
            "Describe a workbook patch op",
            EXSTRUCT_DESCRIBE_OP,
            true,
            Fronts::MCP,
            input::<crate::DescribeOpRequest>,
            Some(output::<xlsx::OpSchema>),
            Call::Plain(|ctx, args| run(ctx, args, crate::workbook_describe_op)),
        ),
        tool(
            "exstruct_validate_input",
            "Check a workbook and patch ops",
            EXSTRUCT_VALIDATE_INPUT,
            true,
            Fronts::MCP,
            input::<xlsx::ValidateInputRequest>,
            Some(output::<xlsx::ValidateInputResponse>),
            Call::Plain(|ctx, args| run(ctx, args, crate::workbook_validate_input)),
        ),
        tool(
            "exstruct_get_runtime_info",
            "Show the server's roots, version, ops and limits",
            EXSTRUCT_GET_RUNTIME_INFO,
            true,
            Fronts::MCP,
            input::<crate::RuntimeInfoRequest>,
            Some(output::<crate::RuntimeInfo>),
            Call::Plain(|ctx, args| run(ctx, args, crate::runtime_info)),
        ),
        tool(
            "exstruct_read_range",
            "Read a range of workbook cells",
            EXSTRUCT_READ_RANGE,
            true,
            Fronts::MCP,
            input::<xlsx::ReadRangeRequest>,
            Some(output::<xlsx::ReadRangeResponse>),
            Call::Plain(|ctx, args| run(ctx, args, crate::workbook_read_range)),
        ),
        tool(
            "exstruct_read_cells",
            "Read workbook cells by address",
            EXSTRUCT_READ_CELLS,
            true,
            Fronts::MCP,
            input::<xlsx::ReadCellsRequest>,
            Some(output::<xlsx::ReadCellsResponse>),
            Call::Plain(|ctx, args| run(ctx, args, crate::workbook_read_cells)),
        ),
        tool(
            "exstruct_read_formulas",
            "List a sheet's formulas",
            EXSTRUCT_READ_FORMULAS,
            true,
            Fronts::MCP,
            input::<xlsx::ReadFormulasRequest>,
            Some(output::<xlsx::ReadFormulasResponse>),
            Call::Plain(|ctx, args| run(ctx, args, crate::workbook_read_formulas)),
        ),
        tool(
            "exstruct_extract",
            "Extract an Excel workbook's structure",
            EXSTRUCT_EXTRACT,
            false,
            Fronts::MCP,
            input::<xlsx::ExtractRequest>,
            Some(output::<xlsx::ExtractResponse>),
            Call::Plain(|ctx, args| run(ctx, args, crate::workbook_extract)),
        ),
        tool(
            "exstruct_make",
            "Create an Excel workbook",
            EXSTRUCT_MAKE,
            false,
            Fronts::MCP,
            input::<xlsx::MakeRequest>,
            Some(output::<xlsx::PatchResponse>),
            Call::Plain(|ctx, args| run(ctx, args, crate::workbook_make)),
        ),
        // The three planner tools return the plan as YAML plus the planner's own types, which
        // have no schema: no output schema. Nothing is written (a plan is registered only by
        // the user), so they are read-only.
        tool(
            "templates_list",
            "List plan templates",
            TEMPLATES_LIST,
            true,
            Fronts::MCP,
            input::<crate::TemplatesListRequest>,
            None,
            Call::Plain(|ctx, args| run(ctx, args, crate::templates_list)),
        ),
        tool(
            "plan_generate",
            "Generate a plan",
            PLAN_GENERATE,
            true,
            Fronts::MCP,
            input::<crate::PlanGenerateRequest>,
            None,
            Call::Awaited(plan_generate),
        ),
        tool(
            "requirements_answer",
            "Answer a plan's questions",
            REQUIREMENTS_ANSWER,
            true,
            Fronts::MCP,
            input::<crate::RequirementsAnswerRequest>,
            None,
            Call::Plain(|ctx, args| run(ctx, args, crate::requirements_answer)),
        ),
        // A run writes only its own records under runs/ (`write: true` is refused here), and
        // its result is the run's status, failures and node states.
        tool(
            "run_plan",
            "Run a plan",
            RUN_PLAN,
            false,
            Fronts::MCP,
            input::<crate::PlanRunRequest>,
            None,
            Call::Awaited(plan_run),
        ),
    ]
}

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

const TEMPLATES_LIST: &str = "\
List the plan templates (reusable accounting subflows: invoice duplicate detection, bank \
reconciliation, PO policy compliance, 3-way match, payroll anomalies, monthly close, exception \
report, ...) with id, category, titles, descriptions, tags and their import/export names. \
query filters by text.";

const PLAN_GENERATE: &str = "\
Generate a Keiri Studio plan (a YAML DAG of catalog blocks) from an instruction in Japanese or \
English, optionally with reference documents (paths) and templates. apply_mode compose merges \
templates offline without an LLM (only templates whose job the instruction names; no_fit when \
none does); hint and llm-only need an LLM provider configured on the server (else \
LLM_NOT_CONFIGURED naming the variables). Left out, apply_mode is hint when a provider is \
configured and compose (with a note saying so) when none is. Returns status (valid | needs_answers | invalid | \
fallback | no_fit), composition (the templates used, in one line), yaml, requirements (typed \
questions: answer them with answers in a new call or with requirements_answer), errors, \
suggestions (with no_fit: the nearest templates and blocks), attempts and usage. \
Nothing is written; the plan is not registered.";

const RUN_PLAN: &str = "\
Run a Keiri Studio plan (yaml, or plan_path inside the workspace) on the workspace's files: \
every node executes its builtin block. vars override the plan's vars; inputs maps a name to a \
file path and sets vars.<name> to it. Input files are only read; every file the run writes \
goes under runs/<plan_id>/<run_id>/ (write: true is refused). Returns run_id, status \
(finished | failed | cancelled), failures (node, code, message, hint), warnings (node, code, \
message: a file with no data rows, a check that flagged nearly every row, rows left out: read \
them before trusting a finished run) and each node's status. PLAN_INVALID with the findings when the plan does not validate.";

const REQUIREMENTS_ANSWER: &str = "\
Apply answers (by requirement id) to the open questions of a plan's YAML: undefined \
${vars.*}, Excel reads without path or sheet, an ai.process_llm without an output schema. Each \
answer is checked against its requirement (type, options, pattern); returns the updated yaml, \
valid, findings and the requirements still open. A bad answer is an INVALID_REQUEST tool error.";
