//! Chat use cases (`keiri-agent`): `chat_send` (streaming), `chat_approve`, `chat_undo` and
//! `skills_list`.
//!
//! The API is stateless: a conversation lives in `<workspace>/.keiri/chat/<session_id>.json`,
//! so each call loads the session, works, and saves it. When `chat_send` gets the editor's
//! unsaved `plan_yaml`, it is written to the session's working copy
//! `.keiri/chat/<session_id>/plan.yaml`, which the plan-editing tools read and patch; approving
//! a change of it returns the new `plan_yaml` so the editor can show it. Changes are never
//! written by `chat_send`: they come back in `pending` with a unified diff and are written
//! by `chat_approve`. A turn is async, awaited on the front-end's runtime like `plan_generate`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{ApiError, Context, ErrorCode, Lang};

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatSendRequest {
    /// Continue this session; a new one is started when absent.
    #[serde(default)]
    pub session_id: Option<String>,
    pub message: String,
    /// Use this skill (else the router chooses; `/skill-name` in the message also works).
    #[serde(default)]
    pub skill: Option<String>,
    /// The editor's current plan text (unsaved); becomes the session's working copy.
    #[serde(default)]
    pub plan_yaml: Option<String>,
    /// A saved plan file (workspace-relative) to work on instead.
    #[serde(default)]
    pub plan_path: Option<String>,
    /// Attached files (workspace-relative paths).
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub lang: Option<Lang>,
}

/// A change waiting for approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PendingChangeSummary {
    pub change_id: String,
    pub file: String,
    pub diff: String,
    pub tool: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChatSendResponse {
    pub session_id: String,
    pub skill: String,
    pub reply: String,
    /// Every event of the turn, in order (the same objects the stream sends).
    pub events: Vec<Value>,
    /// All pending changes of the session (this turn's and earlier ones).
    pub pending: Vec<PendingChangeSummary>,
    /// Why the turn stopped early (`TOOL_FAILURE_LIMIT`, `MAX_ITERATIONS`), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    pub undo_available: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatApproveRequest {
    pub session_id: String,
    pub change_id: String,
    /// `true` writes the change, `false` rejects it.
    #[serde(default = "yes")]
    pub approve: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChatApproveResponse {
    pub applied: bool,
    pub file: String,
    /// The new plan text when the change was to the session's plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_yaml: Option<String>,
    pub undo_available: bool,
    pub pending: Vec<PendingChangeSummary>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatUndoRequest {
    pub session_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChatUndoResponse {
    pub change_id: String,
    pub file: String,
    /// The restored plan text when the change was to the session's plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_yaml: Option<String>,
    pub undo_available: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillsListRequest {}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkillSummary {
    pub name: String,
    pub description: String,
    pub triggers: Vec<String>,
    pub file_patterns: Vec<String>,
    pub allowed_tools: Vec<String>,
    pub priority: i64,
    pub version: String,
}

/// A skill file that could not be used, or a skill naming a tool that does not exist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkillIssue {
    pub file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkillsListResponse {
    pub skills: Vec<SkillSummary>,
    /// Skill files that could not be used, and tools a skill names that do not exist.
    pub issues: Vec<SkillIssue>,
}

/// An agent error with the API's code; the agent's own code goes in `details.code`.
fn api_error(e: keiri_agent::Error) -> ApiError {
    ApiError::with_lower_code(&e, e.code())
}

fn cancelled() -> ApiError {
    ApiError::new(ErrorCode::Cancelled, "the call was cancelled")
}

fn summaries(pending: &[keiri_agent::PendingChange]) -> Vec<PendingChangeSummary> {
    pending
        .iter()
        .map(|p| PendingChangeSummary {
            change_id: p.change_id.clone(),
            file: p.file.clone(),
            diff: p.diff.clone(),
            tool: p.tool.clone(),
        })
        .collect()
}

/// The skills of the context's skillpack directories, and the problems found.
pub fn load_skills(ctx: &Context) -> (Vec<keiri_agent::Skill>, Vec<SkillIssue>) {
    let (skills, issues) = keiri_agent::skillpack::load_dirs(&ctx.skillpack_dirs);
    let mut issues: Vec<SkillIssue> = issues
        .into_iter()
        .map(|i| SkillIssue {
            file: i.file.display().to_string(),
            line: i.line,
            message: i.message,
        })
        .collect();
    let tools = crate::tools::chat_registry(ctx).names();
    for skill in &skills {
        for tool in skill
            .meta
            .allowed_tools
            .iter()
            .filter(|t| !tools.contains(t))
        {
            issues.push(SkillIssue {
                file: format!("{}/SKILL.md", skill.meta.name),
                line: None,
                message: format!(
                    "allowed_tools names {tool:?}, which is not a tool (tools: {})",
                    tools.join(", ")
                ),
            });
        }
    }
    (skills, issues)
}

/// Lists the chat skills.
pub fn skills_list(ctx: &Context, _req: SkillsListRequest) -> Result<SkillsListResponse, ApiError> {
    let (skills, issues) = load_skills(ctx);
    Ok(SkillsListResponse {
        skills: skills
            .into_iter()
            .map(|s| SkillSummary {
                name: s.meta.name,
                description: s.meta.description,
                triggers: s.meta.triggers,
                file_patterns: s.meta.file_patterns,
                allowed_tools: s.meta.allowed_tools,
                priority: s.meta.priority,
                version: s.meta.version,
            })
            .collect(),
        issues,
    })
}
crate::surface::function!(plain skills_list(crate::SkillsListRequest) -> crate::SkillsListResponse);

/// One chat turn (see the module docs), sending each agent event to `events` as it happens;
/// `cancel` stops the turn (the session is then left as it was).
pub async fn chat_send(
    ctx: &Context,
    req: ChatSendRequest,
    events: &crate::EventSink<keiri_agent::Event>,
    cancel: &keiri_llm::CancellationToken,
) -> Result<ChatSendResponse, ApiError> {
    if req.message.trim().is_empty() {
        return Err(ApiError::new(
            ErrorCode::InvalidRequest,
            "the message is empty",
        ));
    }
    let store = keiri_agent::SessionStore::new(&ctx.workspace);
    let session_id = match &req.session_id {
        Some(id) => {
            keiri_agent::check_session_id(id).map_err(api_error)?;
            id.clone()
        }
        None => keiri_llm::new_run_id(&keiri_llm::SystemClock::default()),
    };
    let _busy = SessionClaim::take(ctx, &session_id)?;
    let mut session = store.load_or_new(&session_id).map_err(api_error)?;
    let policy = ctx.tool_path_policy();
    if let Some(yaml) = &req.plan_yaml {
        let rel = store.plan_rel(&session_id).map_err(api_error)?;
        let previous = std::fs::read_to_string(ctx.workspace.join(&rel)).ok();
        if previous.as_deref() != Some(yaml.as_str()) {
            // The user edited the plan since the last turn: changes computed from the old
            // text would only conflict on approval.
            session.pending.retain(|p| p.file != rel);
        }
        session.plan_path = Some(store.write_plan(&session_id, yaml).map_err(api_error)?);
    } else if let Some(path) = &req.plan_path {
        let canonical = policy.resolve_existing(path)?;
        let tools = keiri_agent::ToolContext::new(&ctx.workspace, policy.clone());
        session.plan_path = Some(tools.relative(&canonical));
    }
    let (skills, _) = load_skills(ctx);
    let env = crate::llm_env(ctx)?;
    let llm = keiri_llm::Llm::from_env(&env).map_err(|e| api_error(e.into()))?;
    let lang = req.lang.unwrap_or(ctx.lang);
    // The JSONL event log of the session (`logs/runs/chat-<session>.jsonl`); a log that
    // cannot be opened must not stop the chat.
    let log = crate::llm::event_log(ctx, &env, Some(format!("chat-{session_id}")));
    // The globs are constants, so this cannot fail in practice; if it did, the chat stops
    // rather than run its tools without them.
    let tool_policy = policy
        .with_deny(keiri_agent::tools::SECRET_GLOBS.iter().copied())
        .map_err(ApiError::from)?;
    // The tools' context denies the secrets too: the API-backed tools, the retriever and the
    // dry-run read through its policy.
    let mut tools_ctx = ctx.clone();
    tools_ctx.deny.extend(
        keiri_agent::tools::SECRET_GLOBS
            .iter()
            .map(ToString::to_string),
    );
    let registry = crate::tools::chat_registry(&tools_ctx);
    let tools =
        crate::tools::tool_context(&tools_ctx, tool_policy, lang, keiri_agent::Writes::Propose)
            .with_plan_path(session.plan_path.clone());
    let input = keiri_agent::ChatInput {
        message: req.message.clone(),
        skill: req.skill.clone(),
        files: req.files.clone(),
    };
    let mut agent = keiri_agent::Agent::new(&llm, &registry, &skills);
    agent.lang = lang;
    agent.call_options = agent.call_options.clone().with_cancel(cancel.clone());
    if let Some(log) = log {
        agent.call_options = agent.call_options.clone().with_log(log);
    }
    let mut sent = Vec::new();
    let mut send = |event: keiri_agent::Event| {
        sent.push(serde_json::to_value(&event).unwrap_or(Value::Null));
        events.send(event);
    };
    let out = tokio::select! {
        out = keiri_agent::chat(&agent, &mut session, &tools, &input, &mut send) => Some(out),
        () = cancel.cancelled() => None,
    };
    let outcome = match out {
        None => Err(cancelled()),
        Some(Err(e)) if ErrorCode::from(&e) == ErrorCode::Cancelled => Err(cancelled()),
        Some(out) => out.map_err(api_error),
    }?;
    store.save(&session).map_err(api_error)?;
    Ok(ChatSendResponse {
        session_id,
        skill: outcome.skill,
        reply: outcome.reply,
        events: sent,
        pending: summaries(&session.pending),
        stopped: outcome.stopped.map(|s| s.code().to_string()),
        undo_available: !session.undo.is_empty(),
    })
}
crate::surface::function!(streaming chat_send(crate::ChatSendRequest) -> crate::ChatSendResponse, events keiri_agent::Event);

/// The session's plan text when `file` is the session's plan.
fn plan_text(
    ctx: &Context,
    session: &keiri_agent::Session,
    file: &str,
) -> Result<Option<String>, ApiError> {
    if session.plan_path.as_deref() != Some(file) {
        return Ok(None);
    }
    let path = ctx.tool_path_policy().resolve_existing(file)?;
    std::fs::read_to_string(&path)
        .map(Some)
        .map_err(|e| ApiError::new(ErrorCode::IoError, format!("reading {file}: {e}")))
}

/// The sessions a call of this process is working on, by workspace. A session is loaded,
/// changed and saved whole, so two calls on the same session at once (two browser tabs, a
/// double click) would lose one's changes: the second is refused with `SESSION_BUSY`.
static ACTIVE_SESSIONS: std::sync::Mutex<Vec<(std::path::PathBuf, String)>> =
    std::sync::Mutex::new(Vec::new());

/// A session claimed for one call; released when dropped, whatever the call's outcome.
struct SessionClaim {
    key: (std::path::PathBuf, String),
}

impl SessionClaim {
    fn take(ctx: &Context, session_id: &str) -> Result<SessionClaim, ApiError> {
        let key = (ctx.workspace.clone(), session_id.to_string());
        // A poisoned lock only means another call panicked while holding it; the list
        // itself is still consistent (pushes and removals are single operations).
        let mut active = ACTIVE_SESSIONS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if active.contains(&key) {
            return Err(ApiError::new(
                ErrorCode::SessionBusy,
                format!("chat session {session_id} is busy with another call; try again"),
            ));
        }
        active.push(key.clone());
        Ok(SessionClaim { key })
    }
}

impl Drop for SessionClaim {
    fn drop(&mut self) {
        let mut active = ACTIVE_SESSIONS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        active.retain(|k| k != &self.key);
    }
}

/// Approves (writes) or rejects a pending change.
pub fn chat_approve(
    ctx: &Context,
    req: ChatApproveRequest,
) -> Result<ChatApproveResponse, ApiError> {
    let store = keiri_agent::SessionStore::new(&ctx.workspace);
    let _busy = SessionClaim::take(ctx, &req.session_id)?;
    let mut session = store.load(&req.session_id).map_err(api_error)?;
    let approval = keiri_agent::approve(
        &store,
        &mut session,
        &ctx.tool_path_policy(),
        &req.change_id,
        req.approve,
    )
    .map_err(api_error)?;
    store.save(&session).map_err(api_error)?;
    let plan_yaml = if approval.applied {
        plan_text(ctx, &session, &approval.file)?
    } else {
        None
    };
    Ok(ChatApproveResponse {
        applied: approval.applied,
        file: approval.file,
        plan_yaml,
        undo_available: approval.undo_available,
        pending: summaries(&session.pending),
    })
}
crate::surface::function!(plain chat_approve(crate::ChatApproveRequest) -> crate::ChatApproveResponse);

/// Restores the file of the last approved change.
pub fn chat_undo(ctx: &Context, req: ChatUndoRequest) -> Result<ChatUndoResponse, ApiError> {
    let store = keiri_agent::SessionStore::new(&ctx.workspace);
    let _busy = SessionClaim::take(ctx, &req.session_id)?;
    let mut session = store.load(&req.session_id).map_err(api_error)?;
    let undone =
        keiri_agent::undo(&store, &mut session, &ctx.tool_path_policy()).map_err(api_error)?;
    store.save(&session).map_err(api_error)?;
    let plan_yaml = plan_text(ctx, &session, &undone.file)?;
    Ok(ChatUndoResponse {
        change_id: undone.change_id,
        file: undone.file,
        plan_yaml,
        undo_available: undone.undo_available,
    })
}
crate::surface::function!(plain chat_undo(crate::ChatUndoRequest) -> crate::ChatUndoResponse);

/// Tests of private details (the rest of the module's tests are in `tests/api/chat.rs`).
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_session_in_use_is_refused_as_busy_until_its_call_ends() {
        let ws = tempfile::tempdir().unwrap();
        let ctx = Context::new(ws.path());
        let held = SessionClaim::take(&ctx, "busy1").unwrap();
        for (function, body) in [
            ("chat_send", json!({"session_id": "busy1", "message": "hi"})),
            (
                "chat_approve",
                json!({"session_id": "busy1", "change_id": "c", "approve": true}),
            ),
            ("chat_undo", json!({"session_id": "busy1"})),
        ] {
            let err = crate::stream::testing::call(&ctx, function, body).unwrap_err();
            assert_eq!(err.code, ErrorCode::SessionBusy, "{function}: {err}");
        }
        // Another session, or the same id in another workspace, is not affected.
        assert!(SessionClaim::take(&ctx, "busy2").is_ok());
        let other = tempfile::tempdir().unwrap();
        assert!(SessionClaim::take(&Context::new(other.path()), "busy1").is_ok());
        drop(held);
        assert!(SessionClaim::take(&ctx, "busy1").is_ok());
    }
}
