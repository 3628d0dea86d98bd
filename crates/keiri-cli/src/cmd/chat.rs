//! `keiri chat`: talk to the studio's agent from the terminal.
//!
//! `keiri chat --message TEXT` runs one turn and exits (scripts, tests); without `--message`
//! it is a REPL reading lines from standard input. Events are printed on stderr as they
//! happen (skill chosen, each tool call and its result code, proposed changes); the answer
//! goes to stdout. A proposed change is shown as a unified diff and written only when
//! approved: at a prompt on a terminal, automatically with `--yes`, or later with
//! `/approve ID` (`keiri chat --session ID`). REPL commands: `/undo`, `/skills`,
//! `/approve ID`, `/reject ID`, `/quit`; any other `/skill-name …` line is sent to the agent,
//! whose router treats it as a skill command. Exit codes: 0 ok, 2 an error.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use keiri_api::{
    ApiError, ChatApproveRequest, ChatEvent, ChatSendRequest, ChatUndoRequest, Context, Lang,
    PendingChangeSummary, SkillsListRequest,
};
use serde_json::Value;

use crate::output::{print_error, print_json};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Use this skill instead of letting the router choose.
    #[arg(long, value_name = "NAME")]
    pub skill: Option<String>,
    /// Approve every proposed change without asking.
    #[arg(long)]
    pub yes: bool,
    /// Send one message and exit (no REPL).
    #[arg(long, short, value_name = "TEXT")]
    pub message: Option<String>,
    /// Continue this session (its id is printed after each turn).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// The plan file to work on (relative to the workspace); approved edits are written to it.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<String>,
    /// Attach a file (repeatable): it helps choose the skill and is named to the agent.
    #[arg(long = "file", value_name = "FILE")]
    pub files: Vec<String>,
}

/// Text of the REPL in both languages.
fn text(lang: Lang, ja: &'static str, en: &'static str) -> &'static str {
    lang.pick(ja, en)
}

/// One line for an event, or `None` for events shown otherwise (the reply).
pub fn describe_event(event: &ChatEvent) -> Option<String> {
    match event {
        ChatEvent::Route {
            skill,
            reason,
            allowed_tools,
            ..
        } => Some(format!(
            "[skill] {skill} ({}, tools: {})",
            reason.as_str(),
            allowed_tools.join(", ")
        )),
        ChatEvent::ToolCallStart {
            tool, arguments, ..
        } => {
            let mut args = arguments.to_string();
            if args.chars().count() > 160 {
                args = args.chars().take(160).collect::<String>() + "…";
            }
            Some(format!("→ {tool} {args}"))
        }
        ChatEvent::ToolCallEnd {
            tool, error_code, ..
        } => Some(match error_code {
            Some(code) => format!("← {tool} {code}"),
            None => format!("← {tool} ok"),
        }),
        ChatEvent::ApprovalRequired {
            change_id,
            file,
            tool,
            ..
        } => Some(format!("! {change_id} {file} ({tool})")),
        ChatEvent::Error { code, message } => Some(format!("! {code}: {message}")),
        ChatEvent::Reply { .. } => None,
    }
}

struct Chat<'a> {
    ctx: &'a Context,
    runtime: &'a tokio::runtime::Runtime,
    args: &'a Args,
    json: bool,
    session: Option<String>,
    /// The plan is sent once; later turns use the session's.
    plan_sent: bool,
    interactive: bool,
}

pub fn run(
    ctx: &Context,
    args: &Args,
    json: bool,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<ExitCode> {
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let mut chat = Chat {
        ctx,
        runtime,
        args,
        json,
        session: args.session.clone(),
        plan_sent: false,
        interactive,
    };
    if let Some(message) = &args.message {
        return match chat.turn(message) {
            Ok(()) => Ok(ExitCode::SUCCESS),
            Err(e) => print_error(&e, json),
        };
    }
    chat.repl()
}

impl Chat<'_> {
    fn lang(&self) -> Lang {
        self.ctx.lang
    }

    fn repl(&mut self) -> anyhow::Result<ExitCode> {
        let lang = self.lang();
        if self.interactive {
            eprintln!(
                "{}",
                text(
                    lang,
                    "keiri chat — メッセージを入力してください（/skills /undo /approve ID /reject ID /quit）",
                    "keiri chat — type a message (/skills /undo /approve ID /reject ID /quit)",
                )
            );
        }
        loop {
            if self.interactive {
                eprint!("> ");
                let _ = std::io::stderr().flush();
            }
            // One line at a time without holding stdin's lock: an approval prompt reads too.
            let mut line = String::new();
            if std::io::stdin().read_line(&mut line)? == 0 {
                break;
            }
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (command, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let result = match command {
                "/quit" | "/exit" => break,
                "/skills" => self.skills(),
                "/undo" => self.undo(),
                "/approve" => self.decide(rest.trim(), true),
                "/reject" => self.decide(rest.trim(), false),
                _ => self.turn(line),
            };
            if let Err(e) = result {
                eprintln!("keiri: {}: {}", e.code.as_str(), e.message);
            }
        }
        Ok(ExitCode::SUCCESS)
    }

    fn turn(&mut self, message: &str) -> Result<(), ApiError> {
        let mut req = ChatSendRequest {
            session_id: self.session.clone(),
            message: message.to_string(),
            skill: self.args.skill.clone(),
            files: self.args.files.clone(),
            lang: Some(self.lang()),
            ..ChatSendRequest::default()
        };
        if !self.plan_sent {
            req.plan_path = self.args.plan.clone();
        }
        let json = self.json;
        let (sink, events) = keiri_api::events();
        let cancel = keiri_api::CancellationToken::new();
        let call = keiri_api::chat_send(self.ctx, req, &sink, &cancel);
        let res = self.runtime.block_on(events.drive(call, |event| {
            if !json && let Some(line) = describe_event(&event) {
                eprintln!("{line}");
            }
        }))?;
        self.plan_sent = true;
        self.session = Some(res.session_id.clone());
        let mut approvals = Vec::new();
        if !json {
            println!("{}", res.reply);
        }
        for change in &res.pending {
            if let Some(a) = self.ask(change)? {
                approvals.push(a);
            }
        }
        if json {
            let mut out = serde_json::to_value(&res).unwrap_or(Value::Null);
            out["approvals"] = Value::Array(approvals);
            print_json(&out).map_err(internal)?;
        } else {
            eprintln!("[session] {}", res.session_id);
        }
        Ok(())
    }

    /// Shows a pending change and approves it (`--yes`, or "y" at the prompt on a terminal),
    /// rejects it ("n"), or leaves it pending (no terminal, no `--yes`).
    fn ask(&self, change: &PendingChangeSummary) -> Result<Option<Value>, ApiError> {
        let lang = self.lang();
        if !self.json {
            println!("{}", change.diff.trim_end());
        }
        let approve = if self.args.yes {
            Some(true)
        } else if self.interactive {
            eprint!(
                "{} {} ({}) [y/N] ",
                text(lang, "この変更を承認しますか？", "Approve this change?"),
                change.change_id,
                change.file
            );
            let _ = std::io::stderr().flush();
            let mut answer = String::new();
            std::io::stdin()
                .read_line(&mut answer)
                .map_err(|e| ApiError::new(keiri_api::ErrorCode::IoError, e.to_string()))?;
            let answer = answer.trim().to_lowercase();
            Some(matches!(answer.as_str(), "y" | "yes" | "はい"))
        } else {
            None
        };
        let Some(approve) = approve else {
            if !self.json {
                eprintln!(
                    "{} /approve {}",
                    text(lang, "承認待ち:", "Waiting for approval:"),
                    change.change_id
                );
            }
            return Ok(None);
        };
        let session_id = self.session.clone().unwrap_or_default();
        let res = keiri_api::chat_approve(
            self.ctx,
            ChatApproveRequest {
                session_id,
                change_id: change.change_id.clone(),
                approve,
            },
        )?;
        if !self.json {
            let verdict = if res.applied {
                text(lang, "承認しました。書き込み:", "Approved; written:")
            } else {
                text(lang, "却下しました:", "Rejected:")
            };
            eprintln!("{verdict} {}", res.file);
        }
        Ok(Some(serde_json::to_value(&res).unwrap_or(Value::Null)))
    }

    fn decide(&self, change_id: &str, approve: bool) -> Result<(), ApiError> {
        let Some(session_id) = self.session.clone() else {
            return Err(no_session());
        };
        let res = keiri_api::chat_approve(
            self.ctx,
            ChatApproveRequest {
                session_id,
                change_id: change_id.to_string(),
                approve,
            },
        )?;
        if self.json {
            print_json(&res).map_err(internal)?;
        } else {
            let lang = self.lang();
            let verdict = if res.applied {
                text(lang, "承認しました。書き込み:", "Approved; written:")
            } else {
                text(lang, "却下しました:", "Rejected:")
            };
            eprintln!("{verdict} {}", res.file);
        }
        Ok(())
    }

    fn undo(&self) -> Result<(), ApiError> {
        let Some(session_id) = self.session.clone() else {
            return Err(no_session());
        };
        let res = keiri_api::chat_undo(self.ctx, ChatUndoRequest { session_id })?;
        if self.json {
            print_json(&res).map_err(internal)?;
        } else {
            eprintln!(
                "{} {} ({})",
                text(self.lang(), "元に戻しました:", "Undone:"),
                res.file,
                res.change_id
            );
        }
        Ok(())
    }

    fn skills(&self) -> Result<(), ApiError> {
        let res = keiri_api::skills_list(self.ctx, SkillsListRequest {})?;
        if self.json {
            return print_json(&res).map_err(internal);
        }
        for s in &res.skills {
            println!("/{:<22} {}", s.name, s.description);
        }
        for i in &res.issues {
            eprintln!("! {}: {}", i.file, i.message);
        }
        Ok(())
    }
}

fn no_session() -> ApiError {
    ApiError::new(
        keiri_api::ErrorCode::InvalidRequest,
        "no session yet: send a message first, or start with --session ID",
    )
}

fn internal(e: anyhow::Error) -> ApiError {
    ApiError::new(keiri_api::ErrorCode::Internal, format!("{e:#}"))
}
