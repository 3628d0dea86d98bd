//! The chat agent of Keiri Studio: the user talks to the studio ("承認ステップを追加して",
//! "この列の数式を下までコピーしたらどうなる？") and the agent answers by calling tools — only the
//! tools its skill allows — while every change of a saved file is shown as a diff and written
//! only after the user approves it.
//!
//! * [`tool`]: the [`Tool`] trait, [`ToolRegistry`] and [`Scope`]. [`ToolRegistry::call`] is
//!   the only authorization check; failures are [`ToolError`]s with stable codes
//!   (`TOOL_NOT_ALLOWED`, `UNKNOWN_TOOL`, `INVALID_ARGUMENT`, `TOOL_FAILED`) that the model
//!   reads as the tool's result.
//! * [`skillpack`]: `skillpacks/<name>/SKILL.md` (YAML frontmatter + Markdown), parsed with
//!   unknown keys refused (key and line), and a formatter that writes it back.
//! * [`router`]: `/skill-name` commands, then trigger / description-token / file-pattern
//!   scores; the `general` skill with read-only tools when nothing matches.
//! * [`mod@chat`]: [`chat()`] (route → memory → loop → reply), [`tool_calling_loop`] with a
//!   maximum number of model requests and a circuit breaker, [`execute_tool_call`], and the
//!   [`Event`]s streamed to front-ends.
//! * [`tools`]: the built-in tools (files, documents, catalog, plans, workbooks, patches).
//! * [`approval`]: pending changes, [`approve`] (atomic, refused when the file changed since
//!   the proposal) and [`undo`] of the last approved change.
//! * [`session`]: sessions persisted under `<workspace>/.keiri/chat/` so stateless
//!   front-ends can continue, approve and undo.
//!
//! This crate must not know about transports (HTTP, Tauri, JSON DTOs: that is `keiri-api`),
//! must not write a file except through the approval gate, its own session files and a tool
//! called under [`Writes::Direct`] (the front-end's caller asked for the write: MCP), and
//! must not read the process environment (the caller builds the [`keiri_llm::Llm`]).
//!
//! Dependencies and why: the Keiri crates whose functions become tools; `serde_yaml`
//! (yaml_serde, the workspace's YAML library) for skill frontmatter with
//! `deny_unknown_fields` and error locations; `globset` for `file_patterns` (the same
//! gitignore-style globs keiri-fs uses); `diffy` to show a proposed change as a unified diff
//! (already the parser under keiri-diff); `sha2` to detect a file changed between proposal
//! and approval; `schemars` for the tools' argument schemas.

pub mod approval;
pub mod chat;
mod error;
pub mod router;
pub mod session;
pub mod skillpack;
pub mod tool;
pub mod tools;

pub use approval::{
    Approval, ChangeKind, PendingChange, UndoRecord, Undone, approve, sha256, undo, unified_diff,
};
pub use chat::{
    Agent, ChatInput, ChatOutcome, Event, Limits, Stop, Turn, chat, execute_tool_call,
    tool_calling_loop,
};
pub use error::Error;
pub use router::{Route, RouteReason, SkillScore, route};
pub use session::{Session, SessionStore, check_session_id};
pub use skillpack::{Frontmatter, GENERAL_SKILL, Skill, SkillIssue};
pub use tool::{
    DryRun, Front, Fronts, Retrieve, Scope, Tool, ToolContext, ToolError, ToolFuture, ToolRegistry,
    TypedTool, Writes, blocking, output_schema_of, parse_args, schema_of,
};
pub use tools::builtin_registry;
