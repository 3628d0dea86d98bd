//! `keiri mcp`: the workbook, document and plan tools as a Model Context Protocol server over
//! stdio, for AI assistants (Claude Desktop, VS Code agents, any MCP client).
//!
//! The server is built on `rmcp`, the official Rust SDK, which owns the protocol: version
//! negotiation, JSON-RPC framing and the lifecycle. This module only implements
//! `tools/list` and `tools/call` over the one tool registry the studio's chat uses too
//! ([`keiri_api::tools`]), in its MCP scope and with writes made directly; each call runs on a
//! blocking thread. Input schemas are generated with `schemars` from the tools' argument types.
//!
//! A failure the caller can act on (bad arguments, a path outside the roots, an unreadable
//! workbook, an invalid plan) is a *tool error*: `isError: true` with the JSON body
//! `{code, message, details?}` carrying our stable code. Only an unknown tool name is a
//! protocol error. Stdout belongs to the protocol: this module writes nothing there, and its
//! own messages go to stderr. Frames are read by [`transport`], which answers every malformed
//! or oversized request with a JSON-RPC error instead of leaving the client waiting.
//!
//! Runtime chat: `run_plan` of a plan with open questions pauses at the node the runtime
//! inserts for them, and that paused result (with the questions) is the answer; a client that
//! declared the `elicitation` capability (rmcp's `elicitation` feature) is asked them as a
//! form instead, and the plan runs again with the answers as its vars. The paused first run
//! stays in the run records as paused.

pub mod transport;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use keiri_api::CancellationToken;
use keiri_api::Context;
use keiri_api::tools::{Scope, ToolError, ToolRegistry, Writes};
use keiri_api::xlsx::OnConflict;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    /// The directories the tools may read and write under: the global `--root DIR`
    /// (repeatable; relative paths in tool calls resolve against the first). Default: the
    /// workspace (`--workspace`, else the current directory).
    #[arg(skip)]
    pub roots: Vec<PathBuf>,
    /// What exstruct_patch does when its output file exists and the request does not say.
    /// Default: rename (never overwrite silently).
    #[arg(long, value_enum, value_name = "MODE")]
    pub on_conflict: Option<OnConflictArg>,
    /// Refuse paths matching this glob (repeatable), e.g. '**/.git/**' or '*.key'. Matched
    /// against the absolute path and the path relative to its root.
    #[arg(long = "deny", value_name = "GLOB")]
    pub deny: Vec<String>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum OnConflictArg {
    Overwrite,
    Skip,
    Rename,
}

impl From<OnConflictArg> for OnConflict {
    fn from(arg: OnConflictArg) -> Self {
        match arg {
            OnConflictArg::Overwrite => OnConflict::Overwrite,
            OnConflictArg::Skip => OnConflict::Skip,
            OnConflictArg::Rename => OnConflict::Rename,
        }
    }
}

/// Applies the flags to the context: the allowed roots (canonical, each an existing
/// directory), the deny globs (checked here so a typo stops the server instead of silently
/// refusing every path) and the default conflict mode.
pub fn configure(mut ctx: Context, args: &McpArgs) -> anyhow::Result<Context> {
    // Default: the workspace (the current directory unless --workspace names another), so a
    // plan run over MCP reads the workspace's files, as in `keiri serve`.
    let roots = if args.roots.is_empty() {
        vec![ctx.workspace.clone()]
    } else {
        args.roots.clone()
    };
    ctx.allowed_roots = roots
        .iter()
        .map(|r| {
            let canonical = r
                .canonicalize()
                .with_context(|| format!("--root {} is not a readable directory", r.display()))?;
            anyhow::ensure!(
                canonical.is_dir(),
                "--root {} is not a directory",
                r.display()
            );
            Ok(canonical)
        })
        .collect::<anyhow::Result<_>>()?;
    ctx.path_policy()
        .with_deny(args.deny.iter().cloned())
        .map_err(|e| anyhow::anyhow!("--deny: {e}"))?;
    ctx.deny = args.deny.clone();
    ctx.on_conflict_default = args.on_conflict.map(OnConflict::from);
    Ok(ctx)
}

/// The MCP server: the context every tool runs in, the registry with its MCP scope, and the
/// tools' MCP definitions, built once at start.
#[derive(Clone)]
pub struct Server {
    ctx: Arc<Context>,
    registry: Arc<ToolRegistry>,
    /// The roots and denials every call's tool context gets.
    policy: keiri_api::tools::PathPolicy,
    scope: Arc<Scope>,
    tools: Arc<Vec<Tool>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("tools", &self.scope.allowed)
            .finish()
    }
}

impl Server {
    /// Builds the server; fails if a tool's schema cannot be generated.
    pub fn new(ctx: Context) -> anyhow::Result<Server> {
        let registry = keiri_api::tools::registry(&ctx);
        let scope = keiri_api::tools::mcp_scope(&registry);
        let tools = scope
            .allowed
            .iter()
            .map(|name| {
                let tool = registry
                    .get(name)
                    .ok_or_else(|| anyhow::anyhow!("tool {name}: not in the registry"))?;
                definition(tool).map_err(|e| anyhow::anyhow!("tool {name}: {e}"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Server {
            policy: ctx.path_policy(),
            ctx: Arc::new(ctx),
            registry: Arc::new(registry),
            scope: Arc::new(scope),
            tools: Arc::new(tools),
        })
    }

    /// The MCP definitions of every tool MCP offers ([`keiri_api::tools::mcp_scope`]), by name.
    pub fn tools(&self) -> Vec<Tool> {
        self.tools.as_ref().clone()
    }

    /// Calls a tool by name. An unknown name is a protocol error; everything else, failures
    /// included, is a tool result. `cancel` is the request's token: a client's
    /// `notifications/cancelled` stops a long call (a run, a generation), which then ends as
    /// its function reports a cancellation (`CANCELLED`, or a run with status `cancelled`).
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<rmcp::model::JsonObject>,
        cancel: CancellationToken,
    ) -> Result<CallToolResult, ErrorData> {
        if !self.scope.allows(name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {name}"),
                None,
            ));
        }
        let args = serde_json::Value::Object(arguments.unwrap_or_default());
        let tools_ctx = keiri_api::tools::tool_context(
            &self.ctx,
            self.policy.clone(),
            self.ctx.lang,
            Writes::Direct,
        )
        .with_cancel(cancel);
        let (registry, scope) = (Arc::clone(&self.registry), Arc::clone(&self.scope));
        let name = name.to_string();
        // A task of its own, so a tool that fails badly fails its call and not the server; its
        // blocking work (file I/O, the workbook engine's formulas) hands the worker's other
        // tasks — the protocol's reads and writes — to the others (`keiri_agent::blocking`).
        let result =
            tokio::spawn(async move { registry.call(&name, &args, &scope, &tools_ctx).await })
                .await
                .unwrap_or_else(|e| {
                    Err(ToolError::failed(
                        "INTERNAL",
                        format!("the tool failed: {e}"),
                    ))
                });
        Ok(match result {
            Ok(value) => CallToolResult::structured(value),
            Err(err) => CallToolResult::structured_error(error_body(&err)),
        })
    }
}

/// The tool error body: `{code, message}` plus `details` when the tool gave some (e.g. the
/// findings of an invalid plan). The code is the stable one of the layer that failed.
pub fn error_body(err: &ToolError) -> serde_json::Value {
    let mut body = serde_json::json!({"code": err.cause(), "message": err.message()});
    if let (Some(details), Some(map)) = (err.details(), body.as_object_mut()) {
        map.insert("details".to_string(), details.clone());
    }
    body
}

fn definition(tool: &dyn keiri_api::tools::Tool) -> Result<Tool, String> {
    let input = match tool.parameters() {
        serde_json::Value::Object(map) if map.get("type") == Some(&"object".into()) => map,
        other => return Err(format!("the arguments' schema is not an object: {other}")),
    };
    let read_only = tool.read_only();
    let annotations = ToolAnnotations::with_title(tool.title())
        .read_only(read_only)
        // `on_conflict: overwrite` can replace an earlier output, so a writing tool is
        // marked destructive; nothing the tools do reaches beyond the local roots.
        .destructive(!read_only)
        .idempotent(read_only)
        .open_world(false);
    let mut definition = Tool::new(
        tool.name().to_string(),
        tool.description().to_string(),
        Arc::new(input),
    )
    .with_title(tool.title())
    .with_annotations(annotations);
    if let Some(serde_json::Value::Object(output)) = tool.output_schema() {
        definition = definition.with_raw_output_schema(Arc::new(output));
    }
    Ok(definition)
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut implementation = Implementation::new("keiri", env!("CARGO_PKG_VERSION"));
        implementation.title = Some("Keiri Studio".to_string());
        let roots: Vec<String> = self
            .ctx
            .allowed_roots
            .iter()
            .map(|r| r.display().to_string())
            .collect();
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(implementation)
            .with_instructions(format!(
                "Keiri Studio tools for accountants: patch Excel workbooks (exstruct_patch; \
                 exstruct_make creates one; exstruct_list_ops, exstruct_describe_op and exstruct_validate_input describe \
                 and check its ops; exstruct_get_runtime_info shows roots and limits), read \
                 workbook cells (exstruct_read_range, exstruct_read_cells, \
                 exstruct_read_formulas), extract a workbook's structure with its charts, \
                 shapes and SmartArt (exstruct_extract), read \
                 line ranges and measure documents (extract_code_section, check_code_scale), \
                 apply a unified diff to a file (apply_patch), find catalog blocks for a job \
                 (retrieve_blocks), validate or dry-run plans (validate_plan, dry_run_plan), \
                 and generate plans from an instruction and templates (templates_list, \
                 plan_generate, requirements_answer). \
                 Paths are absolute or relative to {}; only files under these roots are \
                 reachable: {}.",
                roots.first().map(String::as_str).unwrap_or("(no root)"),
                roots.join(", ")
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let result = self
            .call(&request.name, request.arguments.clone(), context.ct.clone())
            .await?;
        // Runtime chat: a run that paused for the plan's open questions asks them of the
        // person through the client (elicitation) when it can, and runs with the answers.
        if request.name == "run_plan"
            && let Some(values) = elicit_run_inputs(&result, &context).await
        {
            let mut args = request.arguments.unwrap_or_default();
            let vars = args
                .entry("vars")
                .or_insert_with(|| serde_json::Value::Object(Default::default()));
            if let Some(vars) = vars.as_object_mut() {
                vars.extend(values);
            }
            return self
                .call("run_plan", Some(args), context.ct)
                .await
                .map(CallToolResponse::from);
        }
        Ok(CallToolResponse::from(result))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|tool| tool.name == name).cloned()
    }
}

/// The answers to a run's open questions (a `run_plan` result paused at the node the runtime
/// inserted for them, (`keiri_plan::run_chat`)), asked through the client's elicitation when
/// it declared the capability; `None` when the result is something else, the client cannot
/// elicit, or the person declined: the paused result with its questions stands.
async fn elicit_run_inputs(
    result: &CallToolResult,
    context: &RequestContext<RoleServer>,
) -> Option<serde_json::Map<String, serde_json::Value>> {
    let body = result.structured_content.as_ref()?;
    let paused = body.get("paused")?.as_array()?.first()?;
    if body.get("status")?.as_str()? != "paused"
        || paused.get("node")?.as_str()? != keiri_api::RUN_INPUTS
    {
        return None;
    }
    let can_elicit = context
        .peer
        .peer_info()
        .is_some_and(|info| info.capabilities.elicitation.is_some());
    if !can_elicit {
        return None;
    }
    let question = paused.get("question")?;
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for field in question.get("fields")?.as_array()? {
        let id = field.get("id")?.as_str()?;
        let text = |key: &str| field.get(key).and_then(|v| v.as_str()).unwrap_or_default();
        let mut schema = serde_json::json!({
            "title": if text("label").is_empty() { id } else { text("label") },
            "description": text("description"),
        });
        let options: Vec<&str> = field
            .get("options")
            .and_then(|o| o.as_array())
            .map(|o| o.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        match text("type") {
            "number" => schema["type"] = "number".into(),
            "boolean" => schema["type"] = "boolean".into(),
            "select" | "enum" if !options.is_empty() => {
                schema["type"] = "string".into();
                schema["enum"] = options.into();
            }
            _ => schema["type"] = "string".into(),
        }
        if field
            .get("required")
            .and_then(|r| r.as_bool())
            .unwrap_or(true)
        {
            required.push(id.to_string());
        }
        properties.insert(id.to_string(), schema);
    }
    let requested_schema = serde_json::from_value(serde_json::json!({
        "type": "object",
        "properties": properties,
        "required": required,
    }))
    .ok()?;
    let message = question
        .get("message")
        .and_then(|m| m.as_str())
        .unwrap_or_default()
        .to_string();
    let answer = context
        .peer
        .create_elicitation(rmcp::model::ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        })
        .await
        .ok()?;
    if answer.action != rmcp::model::ElicitationAction::Accept {
        return None;
    }
    match answer.content? {
        serde_json::Value::Object(values) => Some(values),
        _ => None,
    }
}

/// Serves MCP on stdin/stdout until the client closes the connection.
pub fn run(
    ctx: Context,
    args: &McpArgs,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<ExitCode> {
    let ctx = configure(ctx, args)?;
    if ctx.allowed_roots.iter().any(|r| r.parent().is_none()) {
        eprintln!(
            "keiri mcp: warning: a root is the filesystem root, so every file is reachable; \
             MCP clients often start servers in /, pass --root"
        );
    }
    let server = Server::new(ctx)?;
    eprintln!(
        "keiri mcp: serving {} tools on stdio (roots: {})",
        server.tools.len(),
        server
            .ctx
            .allowed_roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let result = runtime.block_on(async move {
        let service = server
            .serve(transport::LineTransport::new(
                tokio::io::stdin(),
                tokio::io::stdout(),
            ))
            .await
            .context("starting the MCP session")?;
        service.waiting().await.context("running the MCP session")?;
        anyhow::Ok(())
    });
    // `main` shuts the runtime down with a timeout: a read of stdin cannot be cancelled.
    result.map(|()| ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn server(ws: &std::path::Path, args: McpArgs) -> Server {
        let ctx = configure(Context::new(ws), &args).unwrap();
        Server::new(ctx).unwrap()
    }

    fn args(roots: &[&std::path::Path], deny: &[&str]) -> McpArgs {
        McpArgs {
            roots: roots.iter().map(|r| r.to_path_buf()).collect(),
            on_conflict: None,
            deny: deny.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// Calls `tool` with `arguments`; `expect` is `Ok("<json pointer>=<json value>")` for a
    /// successful result or `Err("<code>")` for a tool error.
    async fn check(server: &Server, tool: &str, arguments: Value, expect: Result<&str, &str>) {
        let Value::Object(map) = arguments else {
            panic!("arguments must be an object")
        };
        let result = server
            .call(tool, Some(map), CancellationToken::new())
            .await
            .unwrap();
        let body = result.structured_content.clone().unwrap();
        match expect {
            Ok(pointer_and_value) => {
                assert_eq!(result.is_error, Some(false), "{tool}: {body}");
                let (pointer, value) = pointer_and_value.split_once('=').unwrap();
                let want: Value = serde_json::from_str(value).unwrap();
                assert_eq!(body.pointer(pointer), Some(&want), "{tool}: {body}");
            }
            Err(code) => {
                assert_eq!(result.is_error, Some(true), "{tool}: {body}");
                assert_eq!(body["code"], code, "{tool}: {body}");
                assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
            }
        }
        // The text content is the same JSON, for clients that read only text.
        let text = result.content[0].as_text().unwrap().text.clone();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), body);
    }

    #[tokio::test]
    async fn tools_return_results_and_coded_errors() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        keiri_fs_put(&ws.path().join("a.txt"), "one\ntwo\nthree\n");
        keiri_fs_put(&ws.path().join("id.key"), "secret\n");
        keiri_fs_put(&outside.path().join("b.txt"), "x\n");
        keiri_fs_put(&outside.path().join("b.xlsx"), "");
        let s = server(ws.path(), args(&[ws.path()], &["*.key"]));
        let b = outside.path().join("b.txt").display().to_string();

        check(
            &s,
            "check_code_scale",
            json!({"file_paths": ["a.txt"], "output_format": "json"}),
            Ok("/files/0/lines=3"),
        )
        .await;
        check(
            &s,
            "check_code_scale",
            json!({"file_paths": ["a.txt"]}),
            Ok("/output_format=\"toon\""),
        )
        .await;
        // The seed's TOON metadata: `format: "toon"` and `count_files`.
        check(
            &s,
            "check_code_scale",
            json!({"file_paths": ["a.txt"]}),
            Ok("/format=\"toon\""),
        )
        .await;
        check(
            &s,
            "check_code_scale",
            json!({"file_paths": ["a.txt"]}),
            Ok("/count_files=1"),
        )
        .await;
        // A log above the 5 MiB section-reading cap is measured, not refused (FILE_TOO_LARGE).
        keiri_fs_put(&ws.path().join("big.log"), &"line\n".repeat(1_300_000));
        check(
            &s,
            "check_code_scale",
            json!({"file_paths": ["big.log"], "output_format": "json"}),
            Ok("/files/0/lines=1300000"),
        )
        .await;
        check(
            &s,
            "check_code_scale",
            json!({"file_paths": ["big.log"], "output_format": "json"}),
            Ok("/files/0/size_bytes=6500000"),
        )
        .await;
        check(
            &s,
            "check_code_scale",
            json!({"file_paths": [b], "output_format": "json"}),
            Ok("/errors/0/code=\"PATH_DENIED\""),
        )
        .await;
        check(
            &s,
            "check_code_scale",
            json!({"file_paths": ["id.key"], "output_format": "json"}),
            Ok("/errors/0/code=\"PATH_DENIED\""),
        )
        .await;
        check(
            &s,
            "check_code_scale",
            json!({"file_paths": ["a.txt"], "metrics_only": false}),
            Err("INVALID_REQUEST"),
        )
        .await;
        check(
            &s,
            "check_code_scale",
            json!({"paths": ["a.txt"]}),
            Err("INVALID_REQUEST"),
        )
        .await;
        check(
            &s,
            "extract_code_section",
            json!({"file_path": "a.txt", "start_line": 2, "end_line": 2, "output_format": "json"}),
            Ok("/results/0/sections/0/content=\"two\""),
        )
        .await;
        check(&s, "extract_code_section", json!({"requests": [{"file_path": "a.txt", "sections": [{"start_line": 3}]}], "output_format": "json"}), Ok("/results/0/sections/0/content=\"three\"")).await;
        check(
            &s,
            "extract_code_section",
            json!({"file_path": "a.txt", "start_line": 1}),
            Ok("/output_format=\"toon\""),
        )
        .await;
        for (pointer, value) in [
            ("/format", "\"toon\""),
            ("/count_files", "1"),
            ("/count_sections", "1"),
            ("/limits/max_file_size_bytes", "5242880"),
        ] {
            check(
                &s,
                "extract_code_section",
                json!({"file_path": "a.txt", "start_line": 1}),
                Ok(&format!("{pointer}={value}")),
            )
            .await;
        }
        check(
            &s,
            "extract_code_section",
            json!({"file_path": "a.txt", "start_line": 1, "requests": []}),
            Err("INVALID_REQUEST"),
        )
        .await;
        check(
            &s,
            "exstruct_patch",
            json!({"xlsx_path": b.replace("b.txt", "b.xlsx"), "ops": []}),
            Err("PATH_DENIED"),
        )
        .await;
        check(
            &s,
            "exstruct_patch",
            json!({"xlsx_path": "missing.xlsx", "ops": []}),
            Err("NOT_FOUND"),
        )
        .await;
        check(
            &s,
            "exstruct_patch",
            json!({"xlsx_path": "a.xlsx", "ops": [{"op": "set_value"}]}),
            Err("INVALID_REQUEST"),
        )
        .await;
        // The contract's request errors, even before the workbook is opened.
        check(
            &s,
            "exstruct_patch",
            json!({"xlsx_path": "missing.xlsx", "ops": [{"op": "set_range_values", "sheet": "S", "range": "A1:B1", "values": [[1]]}]}),
            Err("INVALID_REQUEST"),
        )
        .await;
        check(
            &s,
            "exstruct_patch",
            json!({"xlsx_path": "missing.xlsx", "ops": [{"op": "fill_formula", "sheet": "S", "range": "A1:B2", "base_cell": "A", "formula": "=1"}]}),
            Err("INVALID_REQUEST"),
        )
        .await;
        let patch = "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n";
        check(
            &s,
            "apply_patch",
            json!({"filePath": b, "patch": patch}),
            Err("PATH_DENIED"),
        )
        .await;
        check(
            &s,
            "apply_patch",
            json!({"filePath": "a.txt", "patch": 7}),
            Err("INVALID_ARGUMENT"),
        )
        .await;
        check(
            &s,
            "apply_patch",
            json!({"filePath": "a.txt", "patch": "@@ -1 +1 @@\n-x\n+y\n"}),
            Err("APPLY_FAILED"),
        )
        .await;
        check(
            &s,
            "apply_patch",
            json!({"filePath": "a.txt", "patch": patch}),
            Ok("/written=true"),
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
            "one\n2\nthree\n"
        );
        check(
            &s,
            "validate_plan",
            json!({"yaml": "id: [unclosed"}),
            Ok("/valid=false"),
        )
        .await;
        check(
            &s,
            "dry_run_plan",
            json!({"yaml": "id: [unclosed"}),
            Err("YAML_PARSE"),
        )
        .await;
        check(
            &s,
            "validate_plan",
            json!({"yaml": "id: x", "lang": "fr"}),
            Err("INVALID_REQUEST"),
        )
        .await;
    }

    #[tokio::test]
    async fn unknown_tool_is_a_protocol_error() {
        let ws = tempfile::tempdir().unwrap();
        let s = server(ws.path(), args(&[ws.path()], &[]));
        let err = s
            .call("rm_rf", None, CancellationToken::new())
            .await
            .unwrap_err();
        assert_eq!(err.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn flags_configure_the_context() {
        let ws = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let mut a = args(&[ws.path(), other.path()], &["**/.git/**"]);
        a.on_conflict = Some(OnConflictArg::Skip);
        let ctx = configure(Context::new(ws.path()), &a).unwrap();
        assert_eq!(
            ctx.allowed_roots,
            [
                ws.path().canonicalize().unwrap(),
                other.path().canonicalize().unwrap()
            ]
        );
        assert_eq!(ctx.on_conflict_default, Some(OnConflict::Skip));
        assert_eq!(ctx.deny, ["**/.git/**"]);

        let missing = ws.path().join("missing");
        let err = configure(Context::new(ws.path()), &args(&[&missing], &[])).unwrap_err();
        assert!(format!("{err:#}").contains("--root"), "{err:#}");
        let err = configure(Context::new(ws.path()), &args(&[ws.path()], &["a{"])).unwrap_err();
        assert!(format!("{err:#}").contains("a{"), "{err:#}");
    }

    #[test]
    fn error_body_carries_code_message_and_details() {
        let plain = ToolError::failed("PATH_DENIED", "outside the roots");
        assert_eq!(
            error_body(&plain),
            json!({"code": "PATH_DENIED", "message": "outside the roots"})
        );
        let detailed = plain.with_details(json!({"findings": []}));
        assert_eq!(error_body(&detailed)["details"], json!({"findings": []}));
        let api = keiri_api::tools::tool_error(
            keiri_api::ApiError::new(keiri_api::ErrorCode::InvalidRequest, "no ops")
                .with_details(json!({"op_index": 0})),
        );
        assert_eq!(
            error_body(&api),
            json!({"code": "INVALID_REQUEST", "message": "no ops", "details": {"op_index": 0}}),
            "an API error keeps its code, message and details through the tool"
        );
    }

    #[tokio::test]
    async fn planner_tools_list_templates_compose_and_answer() {
        let ws = tempfile::tempdir().unwrap();
        let s = server(ws.path(), args(&[ws.path()], &[]));
        check(
            &s,
            "templates_list",
            json!({"query": "invoice_duplicate"}),
            Ok("/templates/0/id=\"invoice_duplicate_detection\""),
        )
        .await;
        check(
            &s,
            "plan_generate",
            json!({
                "instruction": "請求書の重複を検出してExcelに出力",
                "apply_mode": "compose",
                "templates": ["invoice_duplicate_detection"],
                "lang": "en"
            }),
            Ok("/status=\"needs_answers\""),
        )
        .await;
        check(
            &s,
            "plan_generate",
            json!({"instruction": "x", "apply_mode": "magic"}),
            Err("INVALID_REQUEST"),
        )
        .await;
        check(
            &s,
            "plan_generate",
            json!({"instruction": "x", "unknown": 1}),
            Err("INVALID_REQUEST"),
        )
        .await;
        let plan = "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: \"${vars.src}\"}\n    out: {rows: rows}\n";
        check(
            &s,
            "requirements_answer",
            json!({"yaml": plan, "answers": {"src": "invoices.csv"}}),
            Ok("/valid=true"),
        )
        .await;
        check(
            &s,
            "requirements_answer",
            json!({"yaml": plan, "answers": {"src": "invoices.csv"}, "lang": "fr"}),
            Err("INVALID_REQUEST"),
        )
        .await;
    }

    /// A client's cancellation reaches a long tool call: a run that would loop for minutes
    /// stops and reports itself cancelled. On the multi-thread runtime `keiri mcp` uses.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_request_stops_its_run() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join("inputs")).unwrap();
        keiri_fs_put(&ws.path().join("inputs/a.csv"), "id,amount\n1,100\n");
        let s = server(ws.path(), args(&[ws.path()], &[]));
        let plan = "id: mcp_long\ngraph:\n  - id: again\n    type: loop\n    while: {condition: {expr: \"${vars.iteration} >= 0\"}, max_iterations: 100000}\n    body: {plan: {id: b, graph: [{id: read, block: csv.read, in: {path: inputs/a.csv}, out: {rows: rows}}]}}\n";
        let Value::Object(arguments) = json!({"yaml": plan}) else {
            unreachable!()
        };
        let cancel = CancellationToken::new();
        let stop = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            stop.cancel();
        });
        let result = tokio::time::timeout(
            std::time::Duration::from_secs(60),
            s.call("run_plan", Some(arguments), cancel),
        )
        .await
        .expect("the cancelled run did not stop")
        .unwrap();
        let body = result.structured_content.unwrap();
        let cancelled = body["status"] == "cancelled" || body["code"] == "CANCELLED";
        assert!(cancelled, "{body}");
    }

    /// A cancelled workbook patch writes nothing (its stop is looked at before the read, each
    /// op, every few thousand cells and the save).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_request_patches_nothing() {
        let ws = tempfile::tempdir().unwrap();
        let seed = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../samples/trial_balance.xlsx");
        std::fs::copy(seed, ws.path().join("book.xlsx")).unwrap();
        let s = server(ws.path(), args(&[ws.path()], &[]));
        let Value::Object(arguments) = json!({
            "xlsx_path": "book.xlsx",
            "out_name": "out.xlsx",
            "ops": [{"op": "add_sheet", "sheet": "S"}],
        }) else {
            unreachable!()
        };
        let cancel = CancellationToken::new();
        cancel.cancel();
        let result = s
            .call("exstruct_patch", Some(arguments), cancel)
            .await
            .unwrap();
        let body = result.structured_content.unwrap();
        assert_eq!(body["code"], "CANCELLED", "{body}");
        assert!(!ws.path().join("out.xlsx").exists());
    }

    #[test]
    fn definitions_carry_schemas_and_annotations() {
        let ws = tempfile::tempdir().unwrap();
        let s = server(ws.path(), args(&[ws.path()], &[]));
        let tools = s.tools();
        let patch = tools.iter().find(|t| t.name == "exstruct_patch").unwrap();
        let props = patch.input_schema["properties"].as_object().unwrap();
        for field in [
            "xlsx_path",
            "ops",
            "out_dir",
            "out_name",
            "on_conflict",
            "dry_run",
        ] {
            assert!(props.contains_key(field), "{field}");
        }
        assert_eq!(patch.input_schema["required"], json!(["xlsx_path", "ops"]));
        let retrieve = tools.iter().find(|t| t.name == "retrieve_blocks").unwrap();
        let output = retrieve.output_schema.as_ref().unwrap();
        assert!(
            output["properties"]
                .as_object()
                .unwrap()
                .contains_key("candidates")
        );
        let annotations = patch.annotations.as_ref().unwrap();
        assert_eq!(annotations.read_only_hint, Some(false));
        let scale = tools.iter().find(|t| t.name == "check_code_scale").unwrap();
        assert_eq!(
            scale.annotations.as_ref().unwrap().read_only_hint,
            Some(true)
        );
    }

    /// Writes a test input file (setup only; product writes go through keiri-fs).
    fn keiri_fs_put(path: &std::path::Path, text: &str) {
        #[allow(clippy::disallowed_methods)]
        std::fs::write(path, text).unwrap();
    }
}
