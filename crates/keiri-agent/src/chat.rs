//! The chat loop.
//!
//! [`chat`] orchestrates one turn: route → memory → tool-calling loop → reply.
//! [`tool_calling_loop`] sends the conversation to the model, runs the tool calls it asks for
//! and sends the results back, until the model answers in text, [`Limits::max_iterations`]
//! requests have been made, or [`Limits::max_consecutive_failures`] tool calls in a row have
//! failed (the circuit breaker). [`execute_tool_call`] parses one call's arguments, calls the
//! registry (the only authorization check) and emits its events.
//!
//! Events, in order: `route`, then per tool call `tool_call_start`, `tool_call_end` and, when
//! the call proposed a change, `approval_required`; finally `reply`. An `error` event comes
//! before the reply when the loop is stopped, or alone when the model call fails.

use keiri_llm::{CallOptions, ChatRequest, Llm, Message, ToolCall};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Error;
use crate::approval::PendingChange;
use crate::router::{Route, RouteReason, route};
use crate::session::Session;
use crate::skillpack::Skill;
use crate::tool::{Scope, ToolContext, ToolError, ToolRegistry};

/// One step of a turn, streamed to the UI and the CLI as it happens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[schemars(rename = "ChatEvent")]
pub enum Event {
    /// The skill that answers, and the tools it may call.
    Route {
        skill: String,
        reason: RouteReason,
        score: i64,
        allowed_tools: Vec<String>,
    },
    /// A tool call starts; `arguments` is the parsed JSON, or the raw text when it is not JSON.
    ToolCallStart {
        call_id: String,
        tool: String,
        arguments: Value,
    },
    /// A tool call ended: its result, or the error the model was sent.
    ToolCallEnd {
        call_id: String,
        tool: String,
        ok: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_code: Option<String>,
        result: Value,
    },
    /// A tool call proposed a change; it is written only when the user approves it.
    ApprovalRequired {
        change_id: String,
        file: String,
        tool: String,
        diff: String,
    },
    /// The model's answer.
    Reply { text: String },
    /// The turn was stopped (`TOOL_FAILURE_LIMIT`, `MAX_ITERATIONS`) or the model call
    /// failed (the LLM error's code).
    Error { code: String, message: String },
}

/// Bounds of one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Model requests per turn.
    pub max_iterations: u32,
    /// Consecutive failed tool calls that stop the turn.
    pub max_consecutive_failures: u32,
    /// Earlier messages sent with each request.
    pub history_messages: usize,
    /// Characters of one tool result sent to the model.
    pub max_tool_result_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_iterations: 8,
            max_consecutive_failures: 3,
            history_messages: 40,
            max_tool_result_chars: 20_000,
        }
    }
}

/// Why a turn ended before the model answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// Too many tool calls failed in a row.
    ToolFailureLimit,
    /// The model kept calling tools.
    MaxIterations,
}

impl Stop {
    pub fn code(self) -> &'static str {
        match self {
            Stop::ToolFailureLimit => "TOOL_FAILURE_LIMIT",
            Stop::MaxIterations => "MAX_ITERATIONS",
        }
    }
}

/// What the agent works with.
#[derive(Debug, Clone)]
pub struct Agent<'a> {
    pub llm: &'a Llm,
    pub registry: &'a ToolRegistry,
    pub skills: &'a [Skill],
    pub limits: Limits,
    /// Cancellation and logging of the model calls.
    pub call_options: CallOptions,
    pub lang: keiri_plan::Lang,
}

impl<'a> Agent<'a> {
    pub fn new(llm: &'a Llm, registry: &'a ToolRegistry, skills: &'a [Skill]) -> Agent<'a> {
        Agent {
            llm,
            registry,
            skills,
            limits: Limits::default(),
            call_options: CallOptions::new().with_stage("chat"),
            lang: keiri_plan::Lang::Ja,
        }
    }
}

/// One user turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatInput {
    pub message: String,
    /// A skill chosen by the caller (else the router decides).
    pub skill: Option<String>,
    /// Attached files (workspace-relative), for routing and the prompt.
    pub files: Vec<String>,
}

/// The result of a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatOutcome {
    pub skill: String,
    pub reply: String,
    pub stopped: Option<Stop>,
    /// Changes proposed in this turn (also in `session.pending`).
    pub proposed: Vec<PendingChange>,
}

/// The result of the tool-calling loop.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// The model's final text, when it gave one.
    pub text: Option<String>,
    pub stopped: Option<Stop>,
}

/// One turn: route → memory → loop → reply. The session gets the new messages and pending
/// changes; the caller saves it.
pub async fn chat(
    agent: &Agent<'_>,
    session: &mut Session,
    ctx: &ToolContext,
    input: &ChatInput,
    on_event: &mut (dyn FnMut(Event) + Send),
) -> Result<ChatOutcome, Error> {
    if input.message.trim().is_empty() {
        return Err(Error::EmptyMessage);
    }
    let on_event = &mut |e: Event| {
        log_event(agent, &e);
        on_event(e);
    };
    let route = choose(agent, input, on_event)?;
    ctx.seed(session.pending.clone(), session.next_change);
    let mut messages = memory(agent, session, ctx, &route, input);
    let first_new = messages.len() - 1;
    let turn = tool_calling_loop(agent, &route.scope, ctx, &mut messages, on_event).await?;
    Ok(reply(
        agent,
        session,
        ctx,
        &route,
        messages.split_off(first_new),
        turn,
        on_event,
    ))
}

/// Records an event in the run's JSONL log (when the call options have one): its type, the
/// skill or tool and the error code. Arguments, results and texts are left out: they can
/// hold document contents.
fn log_event(agent: &Agent<'_>, event: &Event) {
    let Some(log) = &agent.call_options.log else {
        return;
    };
    let (name, mut entry) = match event {
        Event::Route {
            skill,
            reason,
            score,
            ..
        } => (
            "route",
            keiri_llm::Event::new("chat", "chat.route")
                .with("skill", skill.as_str())
                .with(
                    "reason",
                    serde_json::to_value(reason).unwrap_or(Value::Null),
                )
                .with("score", *score),
        ),
        Event::ToolCallStart { tool, call_id, .. } => (
            "tool_call_start",
            keiri_llm::Event::new("chat", "chat.tool_call_start")
                .with("tool", tool.as_str())
                .with("call_id", call_id.as_str()),
        ),
        Event::ToolCallEnd {
            tool,
            call_id,
            error_code,
            ..
        } => {
            let mut e = keiri_llm::Event::new("chat", "chat.tool_call_end")
                .with("tool", tool.as_str())
                .with("call_id", call_id.as_str());
            e.error_code = error_code.clone();
            ("tool_call_end", e)
        }
        Event::ApprovalRequired {
            change_id, tool, ..
        } => (
            "approval_required",
            keiri_llm::Event::new("chat", "chat.approval_required")
                .with("change_id", change_id.as_str())
                .with("tool", tool.as_str()),
        ),
        Event::Reply { .. } => ("reply", keiri_llm::Event::new("chat", "chat.reply")),
        Event::Error { code, .. } => {
            let mut e = keiri_llm::Event::new("chat", "chat.error");
            e.error_code = Some(code.clone());
            ("error", e)
        }
    };
    entry.status = Some(if name == "error" { "error" } else { "ok" }.to_string());
    log.record_lossy(entry);
}

fn choose(
    agent: &Agent<'_>,
    input: &ChatInput,
    on_event: &mut (dyn FnMut(Event) + Send),
) -> Result<Route, Error> {
    let route = route(
        &input.message,
        &input.files,
        input.skill.as_deref(),
        agent.skills,
        &agent.registry.read_only_names(),
    )?;
    on_event(Event::Route {
        skill: route.skill.meta.name.clone(),
        reason: route.reason,
        score: route.score,
        allowed_tools: route.scope.allowed.clone(),
    });
    Ok(route)
}

/// The messages of a request: the system prompt, the recent history (starting at a user
/// message, so no tool result is cut from its call) and the new user message.
fn memory(
    agent: &Agent<'_>,
    session: &Session,
    ctx: &ToolContext,
    route: &Route,
    input: &ChatInput,
) -> Vec<Message> {
    let mut messages = vec![Message::system(system_prompt(
        agent, session, ctx, route, input,
    ))];
    let history = &session.messages;
    let mut start = history.len().saturating_sub(agent.limits.history_messages);
    while start < history.len() && !matches!(history[start], Message::User { .. }) {
        start += 1;
    }
    messages.extend_from_slice(&history[start..]);
    messages.push(Message::user(route.message.clone()));
    messages
}

fn system_prompt(
    agent: &Agent<'_>,
    session: &Session,
    ctx: &ToolContext,
    route: &Route,
    input: &ChatInput,
) -> String {
    let mut p = String::new();
    p.push_str(
        "You are the assistant of Keiri Studio, a design studio where accountants build plans \
         (YAML graphs of catalog blocks). Answer by calling the tools you are given when you \
         need facts; never invent block ids, file contents or results.\n",
    );
    p.push_str(match agent.lang {
        keiri_plan::Lang::Ja => "Answer in Japanese.\n",
        keiri_plan::Lang::En => "Answer in English.\n",
    });
    p.push_str(
        "A tool call that would change a file does not write it: the change is shown to the \
         user as a diff and written only when the user approves it. Say so when you propose \
         one.\n",
    );
    p.push_str(&format!(
        "\n## Skill: {}\n{}\n\n{}\n",
        route.skill.meta.name,
        route.skill.meta.description,
        route.skill.instructions.trim()
    ));
    if route.scope.allowed.is_empty() {
        p.push_str("\nYou have no tools in this skill.\n");
    } else {
        p.push_str(&format!(
            "\nTools you may call: {}.\n",
            route.scope.allowed.join(", ")
        ));
    }
    if let Some(plan) = &ctx.plan_path {
        p.push_str(&format!(
            "\nThe current plan is the file `{plan}` (relative to the workspace). Read it with \
             read_file and edit it with apply_patch (a unified diff with @@ hunks against that \
             file).\n"
        ));
    }
    if !input.files.is_empty() {
        p.push_str(&format!("\nAttached files: {}.\n", input.files.join(", ")));
    }
    if !session.pending.is_empty() {
        p.push_str("\nChanges waiting for the user's approval:\n");
        for c in &session.pending {
            p.push_str(&format!("- {} ({}, {})\n", c.change_id, c.file, c.tool));
        }
    }
    p
}

/// Requests → tool calls → results, until a text answer or a limit.
pub async fn tool_calling_loop(
    agent: &Agent<'_>,
    scope: &Scope,
    ctx: &ToolContext,
    messages: &mut Vec<Message>,
    on_event: &mut (dyn FnMut(Event) + Send),
) -> Result<Turn, Error> {
    let specs = agent.registry.specs(scope);
    let mut failures = 0u32;
    for _ in 0..agent.limits.max_iterations {
        let mut request = ChatRequest::new(messages.clone());
        if !specs.is_empty() {
            request = request.with_tools(specs.clone());
        }
        let response = match agent.llm.chat(&request, &agent.call_options).await {
            Ok(r) => r,
            Err(e) => {
                on_event(Event::Error {
                    code: e.code().to_string(),
                    message: e.to_string(),
                });
                return Err(e.into());
            }
        };
        messages.push(response.message());
        if response.tool_calls.is_empty() {
            return Ok(Turn {
                text: response.content,
                stopped: None,
            });
        }
        let mut open = false;
        for call in &response.tool_calls {
            if open {
                // Every call must be answered; these are not run.
                let skipped = json!({
                    "error_code": "SKIPPED",
                    "tool": call.name,
                    "message": "not run: too many tool calls failed in a row",
                });
                messages.push(Message::tool_result(&call.id, skipped.to_string()));
                continue;
            }
            let result = execute_tool_call(agent, scope, ctx, call, on_event).await;
            let content = match &result {
                Ok(v) => truncate(v, agent.limits.max_tool_result_chars),
                Err(e) => e.to_model_json(&call.name).to_string(),
            };
            messages.push(Message::tool_result(&call.id, content));
            failures = if result.is_err() { failures + 1 } else { 0 };
            open = failures >= agent.limits.max_consecutive_failures;
        }
        if open {
            return Ok(stopped(agent, Stop::ToolFailureLimit, on_event));
        }
    }
    Ok(stopped(agent, Stop::MaxIterations, on_event))
}

fn stopped(agent: &Agent<'_>, stop: Stop, on_event: &mut (dyn FnMut(Event) + Send)) -> Turn {
    let limits = &agent.limits;
    let message = match stop {
        Stop::ToolFailureLimit => format!(
            "stopped after {} consecutive failed tool calls",
            limits.max_consecutive_failures
        ),
        Stop::MaxIterations => format!(
            "stopped after {} model requests without an answer",
            limits.max_iterations
        ),
    };
    on_event(Event::Error {
        code: stop.code().to_string(),
        message,
    });
    Turn {
        text: None,
        stopped: Some(stop),
    }
}

fn truncate(value: &Value, limit: usize) -> String {
    let text = value.to_string();
    if text.chars().count() <= limit {
        return text;
    }
    let cut: String = text.chars().take(limit).collect();
    json!({"truncated": true, "note": format!("the result was cut to {limit} characters"), "partial": cut})
        .to_string()
}

/// Runs one tool call: arguments parsed, the registry called with the skill's scope, events
/// emitted (`tool_call_start`, `tool_call_end`, then `approval_required` per proposal).
pub async fn execute_tool_call(
    agent: &Agent<'_>,
    scope: &Scope,
    ctx: &ToolContext,
    call: &ToolCall,
    on_event: &mut (dyn FnMut(Event) + Send),
) -> Result<Value, ToolError> {
    let parsed = if call.arguments.trim().is_empty() {
        Ok(json!({}))
    } else {
        call.arguments_json()
    };
    on_event(Event::ToolCallStart {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        arguments: parsed
            .as_ref()
            .cloned()
            .unwrap_or_else(|_| Value::String(call.arguments.clone())),
    });
    let result = match parsed {
        Ok(args) => agent.registry.call(&call.name, &args, scope, ctx).await,
        Err(e) => Err(ToolError::invalid(format!(
            "the arguments are not JSON: {e}"
        ))),
    };
    on_event(Event::ToolCallEnd {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        ok: result.is_ok(),
        error_code: result.as_ref().err().map(|e| e.code().to_string()),
        result: match &result {
            Ok(v) => v.clone(),
            Err(e) => e.to_model_json(&call.name),
        },
    });
    for change in ctx.take_fresh() {
        on_event(Event::ApprovalRequired {
            change_id: change.change_id,
            file: change.file,
            tool: change.tool,
            diff: change.diff,
        });
    }
    result
}

/// Ends the turn: the reply event, and the session updated with the turn's messages and the
/// pending changes.
fn reply(
    agent: &Agent<'_>,
    session: &mut Session,
    ctx: &ToolContext,
    route: &Route,
    mut new_messages: Vec<Message>,
    turn: Turn,
    on_event: &mut (dyn FnMut(Event) + Send),
) -> ChatOutcome {
    let text = match (turn.text.filter(|t| !t.trim().is_empty()), turn.stopped) {
        (Some(t), _) => t,
        (None, Some(stop)) => stopped_text(agent.lang, stop),
        (None, None) => match agent.lang {
            keiri_plan::Lang::Ja => "（応答がありませんでした）".to_string(),
            keiri_plan::Lang::En => "(no answer)".to_string(),
        },
    };
    if turn.stopped.is_some() {
        // The history must end with an assistant message after the tool results.
        new_messages.push(Message::assistant(text.clone()));
    }
    on_event(Event::Reply { text: text.clone() });
    let before: Vec<String> = session
        .pending
        .iter()
        .map(|p| p.change_id.clone())
        .collect();
    let (pending, next_change) = ctx.take_pending();
    session.messages.extend(new_messages);
    session.skill = Some(route.skill.meta.name.clone());
    session.next_change = next_change;
    session.pending = pending;
    ChatOutcome {
        skill: route.skill.meta.name.clone(),
        reply: text,
        stopped: turn.stopped,
        proposed: session
            .pending
            .iter()
            .filter(|p| !before.contains(&p.change_id))
            .cloned()
            .collect(),
    }
}

fn stopped_text(lang: keiri_plan::Lang, stop: Stop) -> String {
    match (lang, stop) {
        (keiri_plan::Lang::Ja, Stop::ToolFailureLimit) => {
            "ツールの呼び出しが続けて失敗したため、処理を中断しました。".into()
        }
        (keiri_plan::Lang::Ja, Stop::MaxIterations) => {
            "ツールの呼び出し回数の上限に達したため、処理を中断しました。".into()
        }
        (keiri_plan::Lang::En, Stop::ToolFailureLimit) => {
            "Stopped: several tool calls in a row failed.".into()
        }
        (keiri_plan::Lang::En, Stop::MaxIterations) => {
            "Stopped: the limit of tool-calling rounds was reached.".into()
        }
    }
}
