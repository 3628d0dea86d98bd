//! Tools, the registry and scopes.
//!
//! A [`Tool`] has a name, a description, a JSON Schema of its arguments, the front-ends that
//! offer it ([`Fronts`]) and an `async` `call` that takes the model's (untrusted) JSON
//! arguments. [`ToolRegistry::call`] is the only place that
//! decides whether a call is allowed: a tool outside the skill's [`Scope`] fails with
//! [`ToolError::NotAllowed`] before anything runs. Every failure becomes a JSON object the
//! model reads as the tool's result ([`ToolError::to_model_json`]), so the conversation goes on.
//!
//! One registry serves every front-end: the chat (keiri-api's `chat_send`) and MCP (`keiri
//! mcp`) call the same tools, each through its own [`Scope`]. What differs is the context's
//! [`Writes`]: the chat proposes a change for approval, MCP writes it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use keiri_fs::PathPolicy;
use keiri_llm::ToolSpec;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::approval::{ChangeKind, PendingChange};

/// A tool call that did not produce a result. The model sees it as
/// `{error_code, tool, message, …}` (see [`ToolError::to_model_json`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool exists but the active skill does not allow it.
    #[error("the tool {tool} is not allowed in the skill {skill}; allowed tools: {}", allowed_tools.join(", "))]
    NotAllowed {
        tool: String,
        skill: String,
        allowed_tools: Vec<String>,
    },
    /// No tool has this name.
    #[error("there is no tool named {tool:?}")]
    Unknown {
        tool: String,
        available: Vec<String>,
    },
    /// The arguments are not valid JSON or do not match the schema. `cause` is the stable
    /// code a front-end reports for it: `INVALID_REQUEST` (the API's code for a bad request),
    /// or a lower crate's own (`apply_patch`'s contract says `INVALID_ARGUMENT`).
    #[error("invalid arguments: {message}")]
    InvalidArgument {
        message: String,
        cause: String,
        details: Option<Box<Value>>,
    },
    /// The tool ran and failed; `cause` is the lower crate's stable code (e.g. `NOT_FOUND`,
    /// `PATH_DENIED`, `APPLY_FAILED`), `details` what the failure carries for the caller to
    /// act on (an invalid plan's findings).
    #[error("{message}")]
    Failed {
        cause: String,
        message: String,
        details: Option<Box<Value>>,
    },
}

impl ToolError {
    /// The stable code the model and the events carry.
    pub fn code(&self) -> &'static str {
        match self {
            ToolError::NotAllowed { .. } => "TOOL_NOT_ALLOWED",
            ToolError::Unknown { .. } => "UNKNOWN_TOOL",
            ToolError::InvalidArgument { .. } => "INVALID_ARGUMENT",
            ToolError::Failed { .. } => "TOOL_FAILED",
        }
    }

    pub fn invalid(message: impl Into<String>) -> ToolError {
        ToolError::InvalidArgument {
            message: message.into(),
            cause: "INVALID_REQUEST".into(),
            details: None,
        }
    }

    pub fn failed(cause: impl Into<String>, message: impl Into<String>) -> ToolError {
        ToolError::Failed {
            cause: cause.into(),
            message: message.into(),
            details: None,
        }
    }

    /// A lower crate's error: its `INVALID_ARGUMENT` (or the API's `INVALID_REQUEST`) is the
    /// model's argument problem, anything else a failure with that cause. The code is kept.
    pub fn from_code(code: &str, message: impl Into<String>) -> ToolError {
        match code {
            "INVALID_ARGUMENT" | "INVALID_REQUEST" => ToolError::InvalidArgument {
                message: message.into(),
                cause: code.into(),
                details: None,
            },
            other => ToolError::failed(other, message),
        }
    }

    /// The same error with `details` (an argument problem's or a failure's; the registry's
    /// own errors carry theirs in their fields).
    pub fn with_details(mut self, value: Value) -> ToolError {
        if let ToolError::InvalidArgument { details, .. } | ToolError::Failed { details, .. } =
            &mut self
        {
            *details = Some(Box::new(value));
        }
        self
    }

    /// The stable code a front-end reports (MCP's error body): the lower crate's code for an
    /// argument problem or a failure, the registry's own otherwise.
    pub fn cause(&self) -> &str {
        match self {
            ToolError::InvalidArgument { cause, .. } | ToolError::Failed { cause, .. } => cause,
            other => other.code(),
        }
    }

    /// What the failure carries besides its message.
    pub fn details(&self) -> Option<&Value> {
        match self {
            ToolError::InvalidArgument { details, .. } | ToolError::Failed { details, .. } => {
                details.as_deref()
            }
            _ => None,
        }
    }

    /// The message without the kind's prefix (the body a front-end shows next to the code).
    pub fn message(&self) -> String {
        match self {
            ToolError::InvalidArgument { message, .. } | ToolError::Failed { message, .. } => {
                message.clone()
            }
            other => other.to_string(),
        }
    }

    /// What the model reads as the result of the failed call.
    pub fn to_model_json(&self, tool: &str) -> Value {
        let mut v = json!({
            "error_code": self.code(),
            "tool": tool,
            "message": self.to_string(),
        });
        match self {
            ToolError::NotAllowed { allowed_tools, .. } => {
                v["allowed_tools"] = json!(allowed_tools);
            }
            ToolError::Unknown { available, .. } => v["available_tools"] = json!(available),
            ToolError::Failed { cause, details, .. } => {
                v["cause"] = json!(cause);
                if let Some(details) = details {
                    v["details"] = Value::clone(details);
                }
            }
            ToolError::InvalidArgument { details, .. } => {
                if let Some(details) = details {
                    v["details"] = Value::clone(details);
                }
            }
        }
        v
    }
}

/// Whether a tool's write happens: the chat proposes it for the user's approval, MCP (whose
/// client asked for it) writes it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Writes {
    /// Compute the change, record it as a [`PendingChange`] and write nothing.
    #[default]
    Propose,
    /// Write the change now, as the front-end's caller asked.
    Direct,
}

/// A front-end that offers tools: the studio's chat or `keiri mcp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Front {
    Chat,
    Mcp,
}

/// The front-ends a tool is offered on, declared with the tool: each front-end's share of the
/// one registry is derived from it ([`ToolRegistry::offered_on`]), never kept as a list of
/// names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fronts {
    pub chat: bool,
    pub mcp: bool,
}

impl Fronts {
    /// The studio's chat only.
    pub const CHAT: Fronts = Fronts {
        chat: true,
        mcp: false,
    };
    /// `keiri mcp` only.
    pub const MCP: Fronts = Fronts {
        chat: false,
        mcp: true,
    };
    /// Both front-ends.
    pub const BOTH: Fronts = Fronts {
        chat: true,
        mcp: true,
    };

    pub fn offers(self, front: Front) -> bool {
        match front {
            Front::Chat => self.chat,
            Front::Mcp => self.mcp,
        }
    }
}

/// One tool the model can call.
pub trait Tool: Send + Sync {
    /// `[a-zA-Z0-9_-]{1,64}`, unique in a registry.
    fn name(&self) -> &str;
    /// A short human title (MCP's tool annotations).
    fn title(&self) -> &str {
        self.name()
    }
    fn description(&self) -> &str;
    /// The JSON Schema of the arguments object.
    fn parameters(&self) -> Value;
    /// The JSON Schema of a successful result, where it is one type (MCP's `outputSchema`).
    fn output_schema(&self) -> Option<Value> {
        None
    }
    /// Whether the tool only reads (the fallback skill gets only these).
    fn read_only(&self) -> bool;
    /// The front-ends that offer the tool.
    fn fronts(&self) -> Fronts;
    /// Runs the tool. `args` come from the model: parse them, never trust them. A tool with
    /// blocking work (file reads, a workbook engine) does it through [`blocking`], so the
    /// runtime's other tasks go on meanwhile; an `async` API function is awaited.
    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> ToolFuture<'a>;
}

/// What [`Tool::call`] returns: the call's future, awaited on the front-end's runtime (the
/// chat's turn, MCP's request).
pub type ToolFuture<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, ToolError>> + Send + 'a>>;

/// Runs a tool's blocking work (file reads, a dry-run's workbook previews, a search) without
/// holding up the runtime: on a multi-thread runtime (the server's, the desktop shell's, the
/// CLI's) the worker hands its other tasks to the others first; on a current-thread one, or
/// outside a runtime, there is nothing to hand over and it simply runs.
pub fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// A tool whose arguments are a Rust type, as rig's `Tool` trait has them: the JSON Schema
/// the model is offered is derived from `Args`, and the model's JSON is parsed into `Args`
/// (an `INVALID_ARGUMENT` when it does not fit) before `run` sees it. Every such type is a
/// [`Tool`]; a tool whose schema is fixed word for word by a contract (`apply_patch`)
/// implements [`Tool`] itself.
pub trait TypedTool: Send + Sync {
    /// `[a-zA-Z0-9_-]{1,64}`, unique in a registry; an MCP tool's name when MCP has the
    /// capability too.
    const NAME: &'static str;
    /// A short human title (MCP's tool annotations).
    const TITLE: &'static str;
    const DESCRIPTION: &'static str;
    /// Whether the tool only reads (the fallback skill gets only these).
    const READ_ONLY: bool;
    /// The front-ends that offer the tool.
    const FRONTS: Fronts;
    type Args: DeserializeOwned + schemars::JsonSchema;

    /// The JSON Schema of a successful result (see [`output_schema_of`]), where it is one type.
    fn output_schema() -> Option<Value> {
        None
    }

    /// Runs the tool on arguments already parsed (blocking work: [`Tool::call`] runs it
    /// through [`blocking`]).
    fn run(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError>;
}

impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        T::NAME
    }
    fn title(&self) -> &str {
        T::TITLE
    }
    fn description(&self) -> &str {
        T::DESCRIPTION
    }
    fn parameters(&self) -> Value {
        schema_of::<T::Args>()
    }
    fn output_schema(&self) -> Option<Value> {
        T::output_schema()
    }
    fn read_only(&self) -> bool {
        T::READ_ONLY
    }
    fn fronts(&self) -> Fronts {
        T::FRONTS
    }
    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { blocking(|| self.run(parse_args(args)?, ctx)) })
    }
}

/// The tools one skill may call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The skill the scope belongs to (named in errors).
    pub skill: String,
    pub allowed: Vec<String>,
}

impl Scope {
    pub fn new(skill: impl Into<String>, allowed: Vec<String>) -> Scope {
        Scope {
            skill: skill.into(),
            allowed,
        }
    }

    pub fn allows(&self, tool: &str) -> bool {
        self.allowed.iter().any(|t| t == tool)
    }
}

/// Every tool by name.
#[derive(Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Box<dyn Tool>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ToolRegistry {
    pub fn new() -> ToolRegistry {
        ToolRegistry::default()
    }

    /// Adds (or replaces) a tool.
    pub fn register(&mut self, tool: Box<dyn Tool>) {
        self.tools.insert(tool.name().to_string(), tool);
    }

    pub fn with(mut self, tool: impl Tool + 'static) -> ToolRegistry {
        self.register(Box::new(tool));
        self
    }

    /// A front-end's share of the one registry: the tools that declare it ([`Tool::fronts`]).
    pub fn offered_on(mut self, front: Front) -> ToolRegistry {
        self.tools.retain(|_, tool| tool.fronts().offers(front));
        self
    }

    /// The names of the tools `front` offers, in order.
    pub fn names_on(&self, front: Front) -> Vec<String> {
        self.tools
            .values()
            .filter(|t| t.fronts().offers(front))
            .map(|t| t.name().to_string())
            .collect()
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools.get(name).map(|t| t.as_ref())
    }

    /// Tool names in order.
    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// The read-only tool names.
    pub fn read_only_names(&self) -> Vec<String> {
        self.tools
            .values()
            .filter(|t| t.read_only())
            .map(|t| t.name().to_string())
            .collect()
    }

    /// The tool specs the model is offered for `scope` (only tools that exist and are allowed).
    pub fn specs(&self, scope: &Scope) -> Vec<ToolSpec> {
        self.tools
            .values()
            .filter(|t| scope.allows(t.name()))
            .map(|t| ToolSpec {
                name: t.name().to_string(),
                description: Some(t.description().to_string()),
                parameters: t.parameters(),
                strict: false,
            })
            .collect()
    }

    /// Calls `name` with `args` if `scope` allows it. This is the only authorization check.
    pub async fn call(
        &self,
        name: &str,
        args: &Value,
        scope: &Scope,
        ctx: &ToolContext,
    ) -> Result<Value, ToolError> {
        let Some(tool) = self.tools.get(name) else {
            return Err(ToolError::Unknown {
                tool: name.to_string(),
                available: scope.allowed.clone(),
            });
        };
        if !scope.allows(name) {
            return Err(ToolError::NotAllowed {
                tool: name.to_string(),
                skill: scope.skill.clone(),
                allowed_tools: scope.allowed.clone(),
            });
        }
        tool.call(args, ctx).await
    }
}

/// Parses a tool's arguments into its typed form; any mismatch is `INVALID_ARGUMENT` with
/// serde's message (which names the field).
pub fn parse_args<A: DeserializeOwned>(args: &Value) -> Result<A, ToolError> {
    let args = if args.is_null() {
        json!({})
    } else {
        args.clone()
    };
    serde_json::from_value(args).map_err(|e| ToolError::invalid(e.to_string()))
}

/// The JSON Schema of `A` as a tool's parameters (JSON Schema 2020-12, what MCP asks for;
/// without the `$schema`, `title` and `description` keys that function-calling APIs do not
/// want). An argument-less tool's object gets its empty `properties`, which MCP clients expect.
pub fn schema_of<A: schemars::JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut v =
        serde_json::to_value(generator.into_root_schema_for::<A>()).unwrap_or_else(|_| json!({}));
    if let Some(obj) = v.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        obj.remove("description");
        if obj.get("type") == Some(&json!("object")) && !obj.contains_key("properties") {
            obj.insert("properties".into(), json!({}));
        }
    }
    v
}

/// The JSON Schema of what `T` serialises to (the result a tool returns): what `Serialize`
/// writes, so an `Option` without `skip_serializing_if` is always there.
pub fn output_schema_of<T: schemars::JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let mut v =
        serde_json::to_value(generator.into_root_schema_for::<T>()).unwrap_or_else(|_| json!({}));
    if let Some(obj) = v.as_object_mut() {
        obj.remove("title");
        obj.remove("description");
    }
    v
}

/// What tools may use: the workspace, its path policy, the catalog, the current plan, and the
/// approval gate's proposals.
#[derive(Debug)]
pub struct ToolContext {
    pub workspace: PathBuf,
    pub policy: PathPolicy,
    pub catalog_dirs: Vec<PathBuf>,
    /// Where the catalog is cached between calls (the front-end's own, so a chat turn reads
    /// the specs no more often than the studio does).
    pub specs: std::sync::Arc<keiri_plan::Workspace>,
    pub designs_dir: PathBuf,
    pub lang: keiri_plan::Lang,
    /// The current plan (the session's working copy), relative to the workspace.
    pub plan_path: Option<String>,
    /// The front-end's block search (see [`Retrieve`]); none: a BM25 search of the catalog.
    pub retrieve: Option<Retrieve>,
    /// The front-end's dry-run (see [`DryRun`]); none: keiri-plan's, without workbook previews.
    pub dry_run: Option<DryRun>,
    /// Whether a writing tool proposes its change (the chat) or writes it (MCP).
    pub writes: Writes,
    /// What a workbook write does when its output exists and the request does not say
    /// (`keiri mcp --on-conflict`); none: the workbook engine's default.
    pub on_conflict_default: Option<keiri_xlsx::OnConflict>,
    /// Stops a long tool call (a run, a generation) when the front-end's caller gives up:
    /// MCP's request token, which a client's `notifications/cancelled` cancels.
    pub cancel: keiri_llm::CancellationToken,
    state: Mutex<ProposalState>,
}

/// The block search of the front-end that runs the chat: its shared retriever (the one the
/// Candidates panel, the planner and MCP use), so `retrieve_blocks` gives the same candidates
/// as they do for the same request. Attached documents in the request are read by it,
/// through its path policy.
#[derive(Clone)]
pub struct Retrieve(
    pub  std::sync::Arc<
        dyn Fn(keiri_search::RetrieveRequest) -> Result<keiri_search::RetrieveResponse, ToolError>
            + Send
            + Sync,
    >,
);

impl std::fmt::Debug for Retrieve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Retrieve(..)")
    }
}

/// The dry-run of the front-end that runs the tools, given plan text and the message language:
/// the API's `plan_dry_run`, so `dry_run_plan` answers what the studio's dry-run shows,
/// workbook previews included.
#[derive(Clone)]
pub struct DryRun(pub std::sync::Arc<DryRunFn>);

/// Plan text and language in, the dry-run's JSON out.
pub type DryRunFn = dyn Fn(&str, keiri_plan::Lang) -> Result<Value, ToolError> + Send + Sync;

impl std::fmt::Debug for DryRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DryRun(..)")
    }
}

#[derive(Debug, Default)]
struct ProposalState {
    next_change: u64,
    /// Pending changes of the session, and those proposed by this turn.
    pending: Vec<PendingChange>,
    /// Ids proposed since the last [`ToolContext::take_fresh`].
    fresh: Vec<String>,
}

impl ToolContext {
    pub fn new(workspace: impl Into<PathBuf>, policy: PathPolicy) -> ToolContext {
        let workspace = workspace.into();
        ToolContext {
            designs_dir: workspace.join("designs"),
            workspace,
            policy,
            catalog_dirs: Vec::new(),
            specs: std::sync::Arc::new(keiri_plan::Workspace::new()),
            lang: keiri_plan::Lang::Ja,
            plan_path: None,
            retrieve: None,
            dry_run: None,
            writes: Writes::Propose,
            on_conflict_default: None,
            cancel: keiri_llm::CancellationToken::new(),
            state: Mutex::new(ProposalState::default()),
        }
    }

    pub fn with_catalog_dirs(mut self, dirs: Vec<PathBuf>) -> ToolContext {
        self.catalog_dirs = dirs;
        self
    }

    /// Shares the front-end's catalog cache.
    pub fn with_specs(mut self, specs: std::sync::Arc<keiri_plan::Workspace>) -> ToolContext {
        self.specs = specs;
        self
    }

    pub fn with_designs_dir(mut self, dir: PathBuf) -> ToolContext {
        self.designs_dir = dir;
        self
    }

    pub fn with_lang(mut self, lang: keiri_plan::Lang) -> ToolContext {
        self.lang = lang;
        self
    }

    pub fn with_retrieve(mut self, retrieve: Retrieve) -> ToolContext {
        self.retrieve = Some(retrieve);
        self
    }

    pub fn with_dry_run(mut self, dry_run: DryRun) -> ToolContext {
        self.dry_run = Some(dry_run);
        self
    }

    pub fn with_writes(mut self, writes: Writes) -> ToolContext {
        self.writes = writes;
        self
    }

    pub fn with_on_conflict_default(
        mut self,
        on_conflict: Option<keiri_xlsx::OnConflict>,
    ) -> ToolContext {
        self.on_conflict_default = on_conflict;
        self
    }

    pub fn with_cancel(mut self, cancel: keiri_llm::CancellationToken) -> ToolContext {
        self.cancel = cancel;
        self
    }

    pub fn with_plan_path(mut self, path: Option<String>) -> ToolContext {
        self.plan_path = path;
        self
    }

    /// Starts from the session's pending changes and change counter ([`crate::chat()`] does
    /// this at the start of a turn).
    pub fn seed(&self, pending: Vec<PendingChange>, next_change: u64) {
        let mut state = lock(&self.state);
        state.pending = pending;
        state.next_change = next_change;
        state.fresh.clear();
    }

    /// The pending changes (the session's and this turn's) and the next change number.
    pub fn take_pending(&self) -> (Vec<PendingChange>, u64) {
        let mut state = lock(&self.state);
        (std::mem::take(&mut state.pending), state.next_change)
    }

    /// The text a pending change would give `file` (workspace-relative), so that tools read
    /// and patch what the user will see, not the file on disk.
    pub fn pending_text(&self, file: &str) -> Option<(String, String)> {
        let state = lock(&self.state);
        state.pending.iter().rev().find_map(|p| match &p.kind {
            ChangeKind::Text { after, .. } if p.file == file => {
                Some((p.change_id.clone(), after.clone()))
            }
            _ => None,
        })
    }

    /// Records a proposed change and returns its id. A newer text change of the same file
    /// replaces the older one (it already contains it).
    pub fn propose(&self, mut change: PendingChange) -> String {
        let mut state = lock(&self.state);
        state.next_change += 1;
        let id = format!("chg-{}", state.next_change);
        change.change_id = id.clone();
        if matches!(change.kind, ChangeKind::Text { .. }) {
            state
                .pending
                .retain(|p| !(p.file == change.file && matches!(p.kind, ChangeKind::Text { .. })));
        }
        state.pending.push(change);
        state.fresh.push(id.clone());
        id
    }

    /// The changes proposed since the last call (for `approval_required` events).
    pub fn take_fresh(&self) -> Vec<PendingChange> {
        let mut state = lock(&self.state);
        let fresh = std::mem::take(&mut state.fresh);
        state
            .pending
            .iter()
            .filter(|p| fresh.contains(&p.change_id))
            .cloned()
            .collect()
    }

    /// The workspace-relative, `/`-separated form of a canonical path inside a root.
    pub fn relative(&self, canonical: &std::path::Path) -> String {
        self.policy.relative(canonical)
    }

    /// The catalog of the context's directories (from the cache while no spec changed).
    pub fn catalog(&self) -> std::sync::Arc<keiri_plan::Catalog> {
        self.specs.catalog(&self.catalog_dirs).0
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
