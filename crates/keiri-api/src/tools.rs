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
//! only reads), so no front-end keeps a list of names. An API-backed tool is declared where
//! its function is written, by one [`crate::surface::tool!`] beside it (its name, title, description, whether
//! it only reads, its front-ends); `inventory` collects them. Adding a tool is that line (or a
//! `TypedTool` in keiri-agent), and nothing else.

use std::sync::Arc;

pub use keiri_agent::{
    Front, Fronts, Scope, Tool, ToolContext, ToolError, ToolFuture, ToolRegistry, Writes,
};
pub use keiri_fs::PathPolicy;
use serde_json::Value;

use crate::surface::{ToolCall as Call, ToolEntry};
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
    entry: &'static ToolEntry,
    ctx: Arc<Context>,
}

impl Tool for ApiTool {
    fn name(&self) -> &str {
        self.entry.name
    }
    fn title(&self) -> &str {
        self.entry.title
    }
    fn description(&self) -> &str {
        self.entry.description
    }
    fn parameters(&self) -> Value {
        (self.entry.parameters)()
    }
    fn output_schema(&self) -> Option<Value> {
        self.entry.output_schema.map(|f| f())
    }
    fn read_only(&self) -> bool {
        self.entry.read_only
    }
    fn fronts(&self) -> Fronts {
        self.entry.fronts
    }
    fn call<'a>(&'a self, args: &'a Value, tools: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            if !self.entry.read_only && tools.writes == Writes::Propose {
                return Err(ToolError::failed(
                    "WRITES_DIRECTLY",
                    format!(
                        "{} writes its files directly and cannot propose them for approval, so \
                         it is not available here",
                        self.entry.name
                    ),
                ));
            }
            let args = if args.is_null() {
                serde_json::json!({})
            } else {
                args.clone()
            };
            match self.entry.call {
                Call::Plain(f) => keiri_agent::blocking(|| f(&self.ctx, args)).map_err(tool_error),
                Call::Awaited(f) => f(&self.ctx, args, &tools.cancel).await.map_err(tool_error),
            }
        })
    }
}

/// The API-backed tools ([`crate::surface::tool!`]), by name, each running on `ctx`.
fn api_tools(ctx: &Arc<Context>) -> Vec<ApiTool> {
    let mut entries: Vec<&'static ToolEntry> = inventory::iter::<ToolEntry>.into_iter().collect();
    entries.sort_by_key(|e| e.name);
    entries
        .into_iter()
        .map(|entry| ApiTool {
            entry,
            ctx: Arc::clone(ctx),
        })
        .collect()
}
