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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::path::{Path, PathBuf};

    use keiri_llm::testkit::{FakeHandle, FakeServer, Reply};
    use serde_json::json;

    use super::*;

    const PLAN: &str = "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: invoices.csv, encoding: utf-8}\n    out: {rows: rows}\n";
    const HUNK: &str = "@@ -4,3 +4,6 @@\n     block: csv.read\n     in: {path: invoices.csv, encoding: utf-8}\n     out: {rows: rows}\n+  - id: out\n+    block: csv.write\n+    in: {rows: \"${read.rows}\"}\n";

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// A workspace whose `.env` points at a fake server answering `replies`.
    fn setup(replies: Vec<Reply>) -> (tempfile::TempDir, tempfile::TempDir, Context, FakeHandle) {
        let (url, server) = FakeServer::start_background(replies).unwrap();
        let ws = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        keiri_fs::write_atomic(
            &ws.path().join(".env"),
            format!("KEIRI_LLM_BASE_URL={url}\nKEIRI_LLM_MAX_RETRIES=0\n").as_bytes(),
        )
        .unwrap();
        let mut ctx = Context::new(ws.path())
            .with_catalog_dirs(vec![repo().join("block_specs")])
            .with_config_dir(config.path().to_path_buf());
        ctx.skillpack_dirs = vec![repo().join("skillpacks")];
        (ws, config, ctx, server)
    }

    /// The tool result the model was sent back with its second request (the turn's one tool
    /// call), parsed.
    fn tool_result(server: &FakeHandle) -> Option<Value> {
        let sent = &server.requests()[1].body["messages"];
        let message = sent.as_array()?.iter().find(|m| m["role"] == "tool")?;
        serde_json::from_str(message["content"].as_str()?).ok()
    }

    fn patch_call() -> Reply {
        let args = json!({"filePath": ".keiri/chat/s1/plan.yaml", "patch": HUNK}).to_string();
        Reply::tool_calls(&[("c1", "apply_patch", &args)])
    }

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

    #[test]
    fn send_approve_and_undo_a_plan_edit() {
        let (ws, _config, ctx, server) = setup(vec![patch_call(), Reply::content("提案しました")]);
        let body = json!({
            "session_id": "s1",
            "message": "CSVに書き出すステップを追加して",
            "plan_yaml": PLAN,
        });
        let res = crate::stream::testing::call(&ctx, "chat_send", body).unwrap();
        assert_eq!(res["session_id"], "s1");
        assert_eq!(res["skill"], "plan-editing");
        assert_eq!(res["reply"], "提案しました");
        let kinds: Vec<&str> = res["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "route",
                "tool_call_start",
                "tool_call_end",
                "approval_required",
                "reply"
            ]
        );
        assert_eq!(res["pending"][0]["change_id"], "chg-1");
        assert_eq!(res["pending"][0]["file"], ".keiri/chat/s1/plan.yaml");
        assert!(
            res["pending"][0]["diff"]
                .as_str()
                .unwrap()
                .contains("+    block: csv.write")
        );
        assert_eq!(server.request_count(), 2);
        let log = std::fs::read_to_string(ws.path().join("logs/runs/chat-s1.jsonl")).unwrap();
        let names: Vec<String> = log
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["event"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .filter(|n| n.starts_with("chat."))
            .collect();
        assert_eq!(
            names,
            [
                "chat.route",
                "chat.tool_call_start",
                "chat.tool_call_end",
                "chat.approval_required",
                "chat.reply"
            ]
        );
        let copy = ws.path().join(".keiri/chat/s1/plan.yaml");
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), PLAN);

        let res = crate::stream::testing::call(
            &ctx,
            "chat_approve",
            json!({"session_id": "s1", "change_id": "chg-1"}),
        )
        .unwrap();
        assert_eq!(res["applied"], true);
        assert_eq!(res["undo_available"], true);
        let after = res["plan_yaml"].as_str().unwrap();
        assert!(
            after
                .ends_with("  - id: out\n    block: csv.write\n    in: {rows: \"${read.rows}\"}\n"),
            "{after}"
        );
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), after);

        let res =
            crate::stream::testing::call(&ctx, "chat_undo", json!({"session_id": "s1"})).unwrap();
        assert_eq!(res["plan_yaml"], PLAN);
        assert_eq!(res["undo_available"], false);
        let err = crate::stream::testing::call(&ctx, "chat_undo", json!({"session_id": "s1"}))
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFound);
        assert_eq!(err.details.unwrap()["code"], "NOTHING_TO_UNDO");
    }

    #[test]
    fn an_edited_plan_drops_the_stale_pending_change() {
        let (_ws, _config, ctx, _server) = setup(vec![
            patch_call(),
            Reply::content("提案しました"),
            Reply::content("了解"),
            Reply::content("了解"),
        ]);
        let send = |plan: &str| {
            crate::stream::testing::call(
                &ctx,
                "chat_send",
                json!({"session_id": "s1", "message": "ステップを追加して", "plan_yaml": plan}),
            )
            .unwrap()
        };
        assert_eq!(send(PLAN)["pending"].as_array().unwrap().len(), 1);
        // The same text again keeps it; an edited plan drops it.
        assert_eq!(send(PLAN)["pending"].as_array().unwrap().len(), 1);
        let edited = format!("{PLAN}# edited\n");
        assert_eq!(send(&edited)["pending"], json!([]));
    }

    #[test]
    fn the_stream_sends_events_as_they_happen() {
        let (_ws, _config, ctx, _server) = setup(vec![patch_call(), Reply::content("ok")]);
        let mut events = Vec::new();
        let res = crate::stream::testing::call_stream(
            &ctx,
            "chat_send",
            json!({"session_id": "s1", "message": "/plan-editing 追加して", "plan_yaml": PLAN}),
            &mut |e| events.push(e),
            &keiri_llm::CancellationToken::new(),
        )
        .unwrap();
        assert!(crate::STREAMING_FUNCTIONS.contains(&"chat_send"));
        assert_eq!(Value::Array(events), res["events"]);
        assert_eq!(res["events"][0]["reason"], "command");
    }

    #[test]
    fn a_cancelled_turn_is_cancelled_and_leaves_no_session() {
        let (ws, _config, ctx, _server) = setup(vec![Reply::content("late")]);
        let cancel = keiri_llm::CancellationToken::new();
        cancel.cancel();
        let err = crate::stream::testing::call_stream(
            &ctx,
            "chat_send",
            json!({"session_id": "s1", "message": "hi"}),
            &mut |_| {},
            &cancel,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::Cancelled);
        assert!(!ws.path().join(".keiri/chat/s1.json").exists());
    }

    /// The chat's dry-run is the studio's: a patch node's workbook preview reaches the model.
    #[test]
    fn the_chats_dry_run_has_the_studios_workbook_previews() {
        let plan = "id: p\ngraph:\n  - id: patch\n    block: excel.patch_workbook\n    in:\n      xlsx_path: book.xlsx\n      operations:\n        - {op: set_value, sheet: 入力データ, cell: D2, value: 確認済}\n";
        let args = json!({ "yaml": plan }).to_string();
        let (ws, _config, ctx, server) = setup(vec![
            Reply::tool_calls(&[("c1", "dry_run_plan", &args)]),
            Reply::content("D2 が 確認済 になります"),
        ]);
        let src = repo().join("../shared/fixtures/accounting/multi_sheet_ja.xlsx");
        assert!(
            src.is_file(),
            "the shared fixtures are missing: {}",
            src.display()
        );
        std::fs::copy(&src, ws.path().join("book.xlsx")).unwrap();
        let before = std::fs::read(ws.path().join("book.xlsx")).unwrap();
        let res = crate::stream::testing::call(
            &ctx,
            "chat_send",
            json!({"message": "/plan-editing この計画を試して"}),
        )
        .unwrap();
        let result = tool_result(&server).unwrap_or_else(|| panic!("no tool result: {res}"));
        let preview = &result["nodes"][0]["workbook"];
        assert_eq!(preview["status"], "ready", "{result:#}");
        assert_eq!(preview["response"]["patch_diff"][0]["cell"], "D2");
        assert_eq!(std::fs::read(ws.path().join("book.xlsx")).unwrap(), before);
    }

    #[test]
    fn tools_never_read_env_files() {
        let (_ws, _config, ctx, server) = setup(vec![
            Reply::tool_calls(&[("c1", "read_file", r#"{"path": ".env"}"#)]),
            Reply::content("読めませんでした"),
        ]);
        let res = crate::stream::testing::call(
            &ctx,
            "chat_send",
            json!({"message": "/general .env を見せて"}),
        )
        .unwrap();
        assert_eq!(res["events"][2]["error_code"], "TOOL_FAILED", "{res}");
        let result = tool_result(&server).unwrap();
        assert_eq!(result["cause"], "PATH_DENIED");
        let sent = &server.requests()[1].body["messages"];
        assert!(!sent.to_string().contains("KEIRI_LLM_BASE_URL="), "{sent}");
    }

    #[test]
    fn bad_requests_have_stable_codes() {
        let (_ws, _config, ctx, server) = setup(vec![]);
        let check = |name: &str, body: Value, code: ErrorCode, lower: Option<&str>| {
            let err = crate::stream::testing::call(&ctx, name, body).unwrap_err();
            assert_eq!(err.code, code, "{name}: {err}");
            if let Some(lower) = lower {
                assert_eq!(
                    err.details.as_ref().unwrap()["code"],
                    lower,
                    "{name}: {err}"
                );
            }
        };
        check(
            "chat_send",
            json!({"session_id": "../x", "message": "hi"}),
            ErrorCode::InvalidRequest,
            Some("INVALID_ARGUMENT"),
        );
        check(
            "chat_send",
            json!({"message": "  "}),
            ErrorCode::InvalidRequest,
            None,
        );
        check(
            "chat_send",
            json!({"message": "hi", "skill": "nope"}),
            ErrorCode::NotFound,
            Some("SKILL_NOT_FOUND"),
        );
        check(
            "chat_send",
            json!({"message": "hi", "plan_path": "/etc/passwd"}),
            ErrorCode::PathDenied,
            None,
        );
        check(
            "chat_send",
            json!({"message": "hi", "extra": 1}),
            ErrorCode::InvalidRequest,
            None,
        );
        check(
            "chat_approve",
            json!({"session_id": "nope", "change_id": "chg-1"}),
            ErrorCode::NotFound,
            Some("SESSION_NOT_FOUND"),
        );
        check(
            "chat_undo",
            json!({"session_id": "a/b"}),
            ErrorCode::InvalidRequest,
            None,
        );
        assert_eq!(server.request_count(), 0);
    }

    #[test]
    fn skills_list_lists_the_shipped_skills_and_reports_problems() {
        let (ws, _config, mut ctx, _server) = setup(vec![]);
        let own = ws.path().join("skillpacks");
        std::fs::create_dir_all(own.join("broken")).unwrap();
        keiri_fs::write_atomic(
            &own.join("broken/SKILL.md"),
            b"---\nname: broken\ndescription: d\ncolour: red\n---\n",
        )
        .unwrap();
        std::fs::create_dir_all(own.join("mine")).unwrap();
        keiri_fs::write_atomic(
            &own.join("mine/SKILL.md"),
            "---\nname: mine\ndescription: 自分用\nallowed_tools: [rm_rf]\n---\n".as_bytes(),
        )
        .unwrap();
        ctx.skillpack_dirs.push(own);
        let res = crate::stream::testing::call(&ctx, "skills_list", json!({})).unwrap();
        let names: Vec<&str> = res["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "catalog-explanation",
                "document-reading",
                "general",
                "mine",
                "plan-editing",
                "workbook-preview"
            ]
        );
        let plan = res["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "plan-editing")
            .unwrap();
        assert!(
            plan["allowed_tools"]
                .as_array()
                .unwrap()
                .contains(&json!("apply_patch"))
        );
        let issues = res["issues"].as_array().unwrap();
        assert_eq!(issues.len(), 2, "{issues:?}");
        assert_eq!(issues[0]["line"], 4, "{issues:?}");
        assert!(issues[0]["message"].as_str().unwrap().contains("colour"));
        assert!(issues[1]["message"].as_str().unwrap().contains("rm_rf"));
    }
}
