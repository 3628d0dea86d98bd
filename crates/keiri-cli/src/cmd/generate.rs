//! `keiri generate`: an instruction (+ documents, templates) → a plan that validates.
//!
//! On a terminal (stdin and stderr are TTYs, no `--answers`, no `--json`) the open questions
//! of a generation are asked right there, one prompt per requirement type (validated text,
//! a select list, yes/no, a number, an existing file), and the generation runs again with the
//! answers until none remain or the user stops (Esc on a choice, an empty answer to an optional
//! question, or Ctrl-C). Progress is one `indicatif` spinner line per stage with its elapsed
//! time; plain lines when stderr is not a terminal. The question → prompt mapping
//! ([`question`]) and the answer conversion ([`answer_value`]) are pure functions; only
//! [`ask_all`] touches the terminal (through `dialoguer`).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use keiri_api::{
    ApplyMode, Context, Lang, PlanGenerateRequest, Progress, Requirement, RequirementKind, Stage,
    Status, ValueType,
};
use serde_json::{Map, Value};

use crate::output::{pick_given, print_error, print_json};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What the plan should do, in plain Japanese or English.
    #[arg(long, short)]
    pub instruction: String,
    /// Reference documents (comma-separated paths inside the workspace).
    #[arg(long, value_delimiter = ',')]
    pub docs: Vec<String>,
    /// Template ids to use (comma-separated); default: chosen by retrieval.
    #[arg(long, value_delimiter = ',')]
    pub templates: Vec<String>,
    /// compose (offline, from templates), hint (LLM with templates as constraints) or
    /// llm-only; default: hint when a model is configured, else compose.
    #[arg(long, value_parser = parse_mode)]
    pub apply_mode: Option<ApplyMode>,
    /// 1 allows a marked fallback plan (composed from templates) when repair fails or the LLM
    /// cannot be used (default: KEIRI_AGENT_LLM_FALLBACK).
    #[arg(long, value_parser = parse_flag)]
    pub fallback: Option<bool>,
    /// How many repair rounds after the first wiring (default 2).
    #[arg(long)]
    pub max_repair: Option<u32>,
    /// A JSON object of answers to the questions of an earlier run, by requirement id.
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,
    /// The plan id (default: generated_plan).
    #[arg(long)]
    pub plan_id: Option<String>,
    /// Write the plan here (never over an existing file); default: standard output.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Register the plan to designs/ when it validates.
    #[arg(long)]
    pub register: bool,
    /// Run each plan that validates on the files given with --docs (it may read no other);
    /// what fails at run time goes back to the repair loop as codes and column names, never
    /// the data (nothing is written outside a throwaway run folder).
    #[arg(long)]
    pub verify_by_running: bool,
    /// Candidates per category, 5 to 8 (default: retrieval's).
    #[arg(long, value_name = "N")]
    pub topk_per_category: Option<usize>,
    /// Characters of the document digest in the prompt (default 4000).
    #[arg(long, value_name = "N")]
    pub max_docs_chars: Option<usize>,
    /// 0 keeps the model from putting `when` conditions on nodes (default 1).
    #[arg(long, value_parser = parse_flag, value_name = "0|1")]
    pub suggest_when: Option<bool>,
    /// 0 keeps the model from making loop nodes (default 1).
    #[arg(long, value_parser = parse_flag, value_name = "0|1")]
    pub suggest_foreach: Option<bool>,
    /// The loop variable's name the model is asked to use (default: item).
    #[arg(long, value_name = "NAME")]
    pub foreach_var_name: Option<String>,
}

fn parse_mode(s: &str) -> Result<ApplyMode, String> {
    s.parse::<ApplyMode>().map_err(|e| e.to_string())
}

fn parse_flag(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" => Ok(true),
        "0" | "false" | "no" => Ok(false),
        other => Err(format!("expected 0 or 1, got {other:?}")),
    }
}

/// A stage's line: in Japanese the stage's name as the window shows it (the planner's own
/// message is English, for administrators), in English the stage and the message.
fn describe(p: &Progress, lang: Lang) -> String {
    if lang == Lang::Ja {
        let stage = match p.stage {
            Stage::Extracting => "資料の読み取り",
            Stage::Retrieving => "候補の検索",
            Stage::Composing => "テンプレートの合成",
            Stage::Skeleton => "骨組みの作成",
            Stage::Questions => "確認事項の整理",
            Stage::Wiring => "入出力の接続",
            Stage::Validating => "検証",
            Stage::Repair => "修正",
        };
        return match p.repair {
            Some(r) => format!("［{stage} {}/{}］", r.n, r.of),
            None => format!("［{stage}］"),
        };
    }
    let stage = match p.stage {
        Stage::Extracting => "extracting",
        Stage::Retrieving => "retrieving",
        Stage::Composing => "composing",
        Stage::Skeleton => "skeleton",
        Stage::Questions => "questions",
        Stage::Wiring => "wiring",
        Stage::Validating => "validating",
        Stage::Repair => "repair",
    };
    match p.repair {
        Some(r) => format!("[{stage} {}/{}] {}", r.n, r.of, p.message),
        None => format!("[{stage}] {}", p.message),
    }
}

/// Most rounds of questions on a terminal before the last result stands.
const MAX_QUESTION_ROUNDS: usize = 8;

pub fn run(
    ctx: &Context,
    args: &Args,
    json: bool,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<ExitCode> {
    let answers = match &args.answers {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            serde_json::from_str(&text)
                .with_context(|| format!("{} is not a JSON object of answers", path.display()))?
        }
        None => serde_json::Map::new(),
    };
    let mut req = PlanGenerateRequest {
        instruction: args.instruction.clone(),
        verify_by_running: args.verify_by_running,
        docs: args.docs.clone(),
        templates: args.templates.clone(),
        apply_mode: args.apply_mode,
        fallback: args.fallback,
        max_repair: args.max_repair,
        answers,
        plan_id: args.plan_id.clone(),
        pinned_blocks: Vec::new(),
        lang: Some(ctx.lang),
        topk_per_category: args.topk_per_category,
        max_docs_chars: args.max_docs_chars,
        suggest_when: args.suggest_when,
        suggest_foreach: args.suggest_foreach,
        foreach_var_name: args.foreach_var_name.clone(),
    };
    // The file is checked before any model call: a folder that is missing is made, and a
    // file that is there already is refused now, not after the generation.
    if let Some(out) = &args.out {
        prepare_out(out)?;
    }
    let stderr_tty = std::io::stderr().is_terminal();
    let interactive =
        args.answers.is_none() && !json && stderr_tty && std::io::stdin().is_terminal();
    // Progress goes to stderr so stdout stays the plan (or the JSON result).
    let show = stderr_tty || !json;
    let mut rounds = 0;
    let res = loop {
        let mut view = ProgressView::new(show, stderr_tty, ctx.lang);
        let (sink, events) = keiri_api::events();
        let cancel = keiri_api::CancellationToken::new();
        let call = keiri_api::plan_generate(ctx, req.clone(), &sink, &cancel);
        let result = runtime.block_on(events.drive(call, |e| view.show(&e.progress)));
        view.finish();
        let res = match result {
            Ok(r) => r,
            Err(e) => return print_error(&e, json),
        };
        rounds += 1;
        let open = &res.generated.requirements;
        if !interactive
            || res.generated.status != Status::NeedsAnswers
            || open.is_empty()
            || rounds > MAX_QUESTION_ROUNDS
        {
            break res;
        }
        eprintln!("{}", questions_intro(ctx.lang, open.len()));
        let exists = |p: &str| file_exists(&ctx.workspace, p);
        match ask_all(open, ctx.lang, &exists)? {
            Some(new) if !new.is_empty() => req.answers.extend(new),
            // Aborted, or every open question skipped: the open questions are printed below.
            _ => break res,
        }
    };
    let generated = &res.generated;
    let valid = matches!(generated.status, Status::Valid);
    // Whatever plan came back is written, headed by what it still needs: a plan that needs
    // answers or is marked as a fallback is not lost. "No template fits" has no plan to write.
    let out = args
        .out
        .as_ref()
        .filter(|_| generated.status != Status::NoFit);
    if let Some(out) = out {
        let text = format!("{}{}", out_header(generated), res.yaml);
        keiri_fs::write_new(out, text.as_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
    }
    let registered = if valid && args.register {
        let r = keiri_api::plan_register(
            ctx,
            keiri_api::json::PlanRequest {
                yaml: res.yaml.clone(),
                lang: Some(ctx.lang),
            },
        );
        match r {
            Ok(r) => Some(r),
            Err(e) => return print_error(&e, json),
        }
    } else {
        None
    };
    if json {
        let wrote = out.map(|p| p.display().to_string());
        print_json(&serde_json::json!({"result": res, "registered": registered, "wrote": wrote}))?;
    } else {
        if let Some(line) = &generated.composition {
            eprintln!("{line}");
        }
        let say = |ja_text: String, en_text: String| crate::output::say(ctx.lang, ja_text, en_text);
        for note in &generated.notes {
            say(format!("メモ: {note}"), format!("note: {note}"));
        }
        for doc in &res.unreadable_docs {
            say(
                format!("注意: 読めませんでした: {doc}"),
                format!("warning: not read: {doc}"),
            );
        }
        match generated.status {
            Status::Valid | Status::Fallback => {
                if args.out.is_none() && registered.is_none() {
                    print!("{}", res.yaml);
                }
                if let Some(out) = &args.out {
                    let out = out.display();
                    say(format!("書き出しました: {out}"), format!("wrote {out}"));
                }
                if let Some(r) = &registered {
                    say(
                        format!("登録しました: {}", r.path),
                        format!("registered: {}", r.path),
                    );
                }
            }
            Status::NeedsAnswers => {
                if let Some(out) = &args.out {
                    let out = out.display();
                    say(
                        format!("書き出しました: {out}（下の質問への回答が必要です）"),
                        format!("wrote {out} (it needs the answers below)"),
                    );
                }
                say(
                    "プランには回答が必要です。JSON ファイルに {\"質問の id\": 回答} で書き、--answers FILE で渡してください:".into(),
                    "the plan needs answers; write them to a JSON file and pass --answers FILE:".into(),
                );
                for q in &generated.requirements {
                    let options = if q.options.is_empty() {
                        String::new()
                    } else {
                        format!(" options: {}", serde_json::to_string(&q.options)?)
                    };
                    println!("- {} ({:?}): {}{options}", q.id, q.kind, q.label);
                }
            }
            Status::NoFit => {
                // The reason is the first note; what to start from instead goes to stdout.
                if let Some(out) = &args.out {
                    let out = out.display();
                    say(
                        format!("{out} には何も書いていません: 合うテンプレートがありません"),
                        format!("nothing written to {out}: no template fits"),
                    );
                }
                for s in &generated.suggestions {
                    println!("nearest: {s}");
                }
            }
            Status::Invalid => {
                if let Some(out) = &args.out {
                    let out = out.display();
                    say(
                        format!("書き出しました: {out}（検証を通っていません）"),
                        format!("wrote {out} (it does not validate)"),
                    );
                }
                for e in &generated.errors {
                    println!("error: {}", serde_json::to_string(e)?);
                }
                for s in &generated.suggestions {
                    println!("suggestion: {s}");
                }
            }
        }
    }
    Ok(match generated.status {
        Status::Valid => ExitCode::SUCCESS,
        Status::Fallback => ExitCode::SUCCESS,
        Status::NeedsAnswers | Status::Invalid | Status::NoFit => ExitCode::from(1),
    })
}

/// Makes `out`'s folder and refuses a file that exists (`--out` never writes over one).
fn prepare_out(out: &Path) -> anyhow::Result<()> {
    if out.exists() {
        anyhow::bail!(
            "{} exists already: --out never writes over a file; choose another path",
            out.display()
        );
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    Ok(())
}

/// YAML comments above a plan that is not ready to run as it is: a fallback plan, the
/// questions a plan needs answered (as `--answers` takes them), or the errors left.
fn out_header(generated: &keiri_api::GeneratedPlan) -> String {
    let mut lines: Vec<String> = Vec::new();
    match generated.status {
        Status::Valid | Status::NoFit => {}
        Status::Fallback => {
            // The planner's first note says why (the model could not be used, or its plan did
            // not validate after repair).
            let why = generated
                .notes
                .first()
                .filter(|n| n.starts_with("FALLBACK PLAN"))
                .map_or_else(
                    || "FALLBACK PLAN: composed from templates".to_string(),
                    |n| one_line(n),
                );
            lines.push(format!("# {why}"));
            lines.push("# Review it before running it.".into());
        }
        Status::NeedsAnswers => {
            lines.push("# NEEDS ANSWERS: write these to a JSON file ({\"id\": answer}) and run keiri generate again with --answers FILE".into());
            for q in &generated.requirements {
                lines.push(format!(
                    "#   - {} ({:?}): {}",
                    q.id,
                    q.kind,
                    one_line(&q.label)
                ));
            }
        }
        Status::Invalid => {
            lines.push(
                "# INVALID: this plan does not validate; the errors left after repair:".into(),
            );
            for e in &generated.errors {
                let e = serde_json::to_string(e).unwrap_or_default();
                lines.push(format!("#   - {}", one_line(&e)));
            }
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    lines.push(String::new());
    lines.join("\n")
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Progress on stderr: a spinner line per stage with its elapsed time on a terminal, plain
/// lines otherwise, nothing when hidden.
struct ProgressView {
    show: bool,
    spinners: bool,
    current: Option<indicatif::ProgressBar>,
    lang: Lang,
}

impl ProgressView {
    fn new(show: bool, terminal: bool, lang: Lang) -> ProgressView {
        ProgressView {
            show,
            spinners: show && terminal,
            current: None,
            lang,
        }
    }

    fn show(&mut self, p: &Progress) {
        if !self.show {
            return;
        }
        if !self.spinners {
            eprintln!("{}", describe(p, self.lang));
            return;
        }
        self.finish();
        let style = indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed:.dim}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner());
        let bar = indicatif::ProgressBar::new_spinner()
            .with_style(style)
            .with_message(describe(p, self.lang));
        bar.enable_steady_tick(Duration::from_millis(120));
        self.current = Some(bar);
    }

    /// Ends the running stage's line, keeping it with its final elapsed time.
    fn finish(&mut self) {
        if let Some(bar) = self.current.take() {
            if let Ok(done) = indicatif::ProgressStyle::with_template("✓ {msg} {elapsed:.dim}") {
                bar.set_style(done);
            }
            bar.finish();
        }
    }
}

fn questions_intro(lang: Lang, n: usize) -> String {
    match lang {
        Lang::Ja => format!(
            "{n} 件の質問に答えてください（選択肢は Esc で中断、任意の質問は空のまま Enter で飛ばせます）"
        ),
        Lang::En => format!(
            "{n} question(s) to answer (Esc on a choice stops; Enter on an empty optional answer skips it)"
        ),
    }
}

/// A file answer exists relative to the workspace or the current directory.
fn file_exists(workspace: &Path, path: &str) -> bool {
    let p = Path::new(path.trim());
    workspace.join(p).is_file() || p.is_file()
}

/// How one requirement is asked on the terminal.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// A line of text (also numbers, file paths and JSON), checked by [`answer_value`].
    Text {
        prompt: String,
        default: Option<String>,
        optional: bool,
    },
    /// One of `items` (select / enum with options).
    Choice {
        prompt: String,
        items: Vec<String>,
        default: usize,
    },
    /// Yes or no.
    YesNo {
        prompt: String,
        default: Option<bool>,
    },
}

/// What the user gave for a [`Question`].
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    Text(String),
    Choice(usize),
    YesNo(bool),
}

/// A scalar as the user would type it (strings without quotes).
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The prompt of a requirement: its label, the description when it says more, and what the
/// answer must look like (type, file extensions, pattern, hint).
pub fn question(r: &Requirement, lang: Lang) -> Question {
    let label = pick_given(lang, &r.label, r.label_en.as_deref());
    let description = pick_given(lang, &r.description, r.description_en.as_deref());
    // Generated descriptions often repeat the label ("X" / "X (columns …)"): say it once.
    let mut prompt = if description.trim().starts_with(label.trim()) {
        description.trim().to_string()
    } else {
        format!("{label} — {}", description.trim())
    };
    if description.trim().is_empty() {
        prompt = label.to_string();
    }
    let mut notes: Vec<String> = Vec::new();
    match r.kind {
        RequirementKind::Number => notes.push(
            match (lang, r.value_type == Some(ValueType::Integer)) {
                (Lang::Ja, true) => "整数",
                (Lang::Ja, false) => "数値",
                (Lang::En, true) => "integer",
                (Lang::En, false) => "number",
            }
            .into(),
        ),
        RequirementKind::File => {
            notes.push(match lang {
                Lang::Ja => "ファイルのパス".into(),
                Lang::En => "file path".into(),
            });
            if let Some(accept) = &r.accept {
                notes.push(accept.clone());
            }
        }
        RequirementKind::Table => notes.push(match lang {
            Lang::Ja => "JSON の行の配列".into(),
            Lang::En => "JSON array of rows".into(),
        }),
        // A list picked from the columns of the rows the node reads: they are the choices.
        RequirementKind::Text if !r.options.is_empty() => {
            let items: Vec<String> = r.options.iter().map(plain).collect();
            notes.push(match lang {
                Lang::Ja => format!("カンマ区切りで: {}", items.join(", ")),
                Lang::En => format!("comma separated, of: {}", items.join(", ")),
            });
        }
        _ => {}
    }
    if let Some(pattern) = r.validation.as_ref().and_then(|v| v.regex.as_deref()) {
        notes.push(pattern.to_string());
    }
    if let Some(hint) = r.hint.as_deref() {
        notes.push(pick_given(lang, hint, r.hint_en.as_deref()).to_string());
    }
    if !r.required {
        notes.push(match lang {
            Lang::Ja => "任意".into(),
            Lang::En => "optional".into(),
        });
    }
    if !notes.is_empty() {
        prompt.push_str(&format!(" [{}]", notes.join(", ")));
    }
    let choice = matches!(r.kind, RequirementKind::Select | RequirementKind::Enum);
    match r.kind {
        _ if choice && !r.options.is_empty() => {
            let items: Vec<String> = r.options.iter().map(plain).collect();
            let default = r
                .default
                .as_ref()
                .and_then(|d| r.options.iter().position(|o| o == d))
                .unwrap_or(0);
            Question::Choice {
                prompt,
                items,
                default,
            }
        }
        RequirementKind::Boolean => Question::YesNo {
            prompt,
            default: r.default.as_ref().and_then(Value::as_bool),
        },
        _ => Question::Text {
            prompt,
            default: r.default.as_ref().map(|d| match d {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            optional: !r.required,
        },
    }
}

/// Converts and checks an answer with the planner's own checker
/// ([`keiri_api::check_answer`]), so a bad answer is asked again instead of failing the next
/// generation, and the terminal accepts exactly what the studio and the API accept. `exists`
/// says whether a file answer names an existing file (the one check only a terminal can make
/// before the answer is sent).
pub fn answer_value(
    r: &Requirement,
    raw: &Raw,
    exists: &dyn Fn(&str) -> bool,
) -> Result<Value, String> {
    let answer =
        match raw {
            Raw::Choice(i) => r.options.get(*i).cloned().ok_or_else(|| {
                format!("choice {i} is not one of the {} options", r.options.len())
            })?,
            Raw::YesNo(b) => Value::Bool(*b),
            Raw::Text(text) => {
                let text = text.trim();
                if text.is_empty() {
                    return Err("an answer is needed".into());
                }
                Value::String(text.to_string())
            }
        };
    let value = keiri_api::check_answer(r, &answer).map_err(|p| p.message)?;
    if r.kind == RequirementKind::File
        && let Some(path) = value.as_str()
        && !exists(path)
    {
        return Err(format!("{path} is not an existing file"));
    }
    Ok(value)
}

/// Asks every requirement on the terminal. `Ok(None)`: the user stopped (Esc on a choice or a
/// yes/no); skipped optional questions are left out of the answers.
fn ask_all(
    requirements: &[Requirement],
    lang: Lang,
    exists: &dyn Fn(&str) -> bool,
) -> anyhow::Result<Option<Map<String, Value>>> {
    use dialoguer::theme::ColorfulTheme;
    let theme = ColorfulTheme::default();
    let mut answers = Map::new();
    for r in requirements {
        let raw = match question(r, lang) {
            Question::Choice {
                prompt,
                items,
                default,
            } => match dialoguer::Select::with_theme(&theme)
                .with_prompt(prompt)
                .items(&items)
                .default(default)
                .interact_opt()?
            {
                Some(i) => Raw::Choice(i),
                None => return Ok(None),
            },
            Question::YesNo { prompt, default } => {
                let mut confirm = dialoguer::Confirm::with_theme(&theme).with_prompt(prompt);
                if let Some(d) = default {
                    confirm = confirm.default(d);
                }
                match confirm.interact_opt()? {
                    Some(b) => Raw::YesNo(b),
                    None => return Ok(None),
                }
            }
            Question::Text {
                prompt,
                default,
                optional,
            } => {
                let mut input = dialoguer::Input::<String>::with_theme(&theme)
                    .with_prompt(prompt)
                    .allow_empty(optional)
                    .validate_with(|s: &String| -> Result<(), String> {
                        if optional && s.trim().is_empty() {
                            return Ok(());
                        }
                        answer_value(r, &Raw::Text(s.clone()), exists).map(|_| ())
                    });
                if let Some(d) = default {
                    input = input.default(d);
                }
                let text = input.interact()?;
                if text.trim().is_empty() {
                    continue;
                }
                Raw::Text(text)
            }
        };
        match answer_value(r, &raw, exists) {
            Ok(value) => {
                answers.insert(r.id.clone(), value);
            }
            // Validated while typing; a choice or yes/no cannot be wrong. Say so and go on.
            Err(message) => eprintln!("{}: {message}", r.id),
        }
    }
    Ok(Some(answers))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn requirement(v: Value) -> Requirement {
        let mut base = json!({
            "id": "q", "type": "text", "label": "ラベル", "label_en": "Label",
            "description": "", "required": true, "target": {"var": "q"}
        });
        for (k, val) in v.as_object().unwrap() {
            base[k] = val.clone();
        }
        serde_json::from_value(base).unwrap()
    }

    fn no_file(_: &str) -> bool {
        false
    }

    fn some_file(p: &str) -> bool {
        p == "data/invoices.csv"
    }

    /// `answer_value` of `raw` for the requirement `r`: `Ok(json)` or `Err(substring)`.
    fn check(r: Value, raw: Raw, expect: Result<Value, &str>) {
        let req = requirement(r.clone());
        let got = answer_value(&req, &raw, &some_file);
        match (got, expect) {
            (Ok(v), Ok(want)) => assert_eq!(v, want, "{r} {raw:?}"),
            (Err(e), Err(part)) => assert!(e.contains(part), "{r} {raw:?}: {e}"),
            (got, want) => panic!("{r} {raw:?}: got {got:?}, expected {want:?}"),
        }
    }

    fn text(s: &str) -> Raw {
        Raw::Text(s.into())
    }

    #[test]
    fn answers_are_converted_and_checked_by_type() {
        check(json!({}), text(" 経理部 "), Ok(json!("経理部")));
        check(json!({}), text("  "), Err("an answer is needed"));
        check(
            json!({"validation": {"regex": "^[A-Z]+![0-9]+$"}}),
            text("Sheet!1"),
            Err("does not match"),
        );
        check(
            json!({"validation": {"regex": "^[A-Za-z]+![0-9]+$"}}),
            text("Sheet!1"),
            Ok(json!("Sheet!1")),
        );
        check(
            json!({"validation": {"regex": "("}}),
            text("x"),
            Err("invalid"),
        );
        check(json!({"type": "number"}), text("1,200"), Ok(json!(1200)));
        check(json!({"type": "number"}), text("0.5"), Ok(json!(0.5)));
        check(json!({"type": "number"}), text("abc"), Err("a number"));
        check(
            json!({"type": "number", "value_type": "integer"}),
            text("1.5"),
            Err("an integer"),
        );
        check(
            json!({"type": "boolean"}),
            Raw::YesNo(true),
            Ok(json!(true)),
        );
        check(json!({"type": "boolean"}), text("いいえ"), Ok(json!(false)));
        check(json!({"type": "boolean"}), text("maybe"), Err("yes or no"));
        // The planner's own words: what the studio accepts, the terminal accepts.
        check(json!({"type": "boolean"}), text("する"), Ok(json!(true)));
        check(json!({"type": "boolean"}), text("しない"), Ok(json!(false)));
        let select = json!({"type": "select", "options": ["cp932", "utf-8"]});
        check(select.clone(), Raw::Choice(1), Ok(json!("utf-8")));
        check(select.clone(), Raw::Choice(5), Err("not one of"));
        check(select.clone(), text("cp932"), Ok(json!("cp932")));
        check(select, text("ebcdic"), Err("choose one of cp932, utf-8"));
        let file = json!({"type": "file", "accept": ".csv,.tsv"});
        check(
            file.clone(),
            text("data/invoices.csv"),
            Ok(json!("data/invoices.csv")),
        );
        check(
            file.clone(),
            text("data/missing.csv"),
            Err("not an existing file"),
        );
        check(file, text("data/invoices.xlsx"), Err(".csv,.tsv"));
        check(
            json!({"type": "table"}),
            text(r#"[{"a": 1}]"#),
            Ok(json!([{"a": 1}])),
        );
        check(json!({"type": "table"}), text("[1]"), Err("rows"));
        check(
            json!({"value_type": "array"}),
            text("請求番号、金額, 日付"),
            Ok(json!(["請求番号", "金額", "日付"])),
        );
        check(json!({"value_type": "object"}), text("[]"), Err("object"));
        // A list picked from the columns of the rows: each item must be one of them.
        let by = json!({"value_type": "array", "options": ["科目", "部門"]});
        check(by.clone(), text("部門、科目"), Ok(json!(["部門", "科目"])));
        check(
            by,
            text("科目, 勘定科目"),
            Err("勘定科目 is not one of 科目, 部門"),
        );
        assert!(
            answer_value(
                &requirement(json!({"type": "file"})),
                &text("a.csv"),
                &no_file
            )
            .is_err()
        );
    }

    #[test]
    fn each_requirement_type_gets_its_prompt() {
        let q = |v: Value, lang: Lang| question(&requirement(v), lang);
        assert_eq!(
            q(
                json!({"type": "select", "options": ["a", 2], "default": 2}),
                Lang::Ja
            ),
            Question::Choice {
                prompt: "ラベル".into(),
                items: vec!["a".into(), "2".into()],
                default: 1
            }
        );
        assert_eq!(
            q(json!({"type": "enum", "options": ["x"]}), Lang::En),
            Question::Choice {
                prompt: "Label".into(),
                items: vec!["x".into()],
                default: 0
            }
        );
        // A select without options is typed in.
        assert!(matches!(
            q(json!({"type": "select"}), Lang::Ja),
            Question::Text { .. }
        ));
        assert_eq!(
            q(json!({"type": "boolean", "default": true}), Lang::En),
            Question::YesNo {
                prompt: "Label".into(),
                default: Some(true)
            }
        );
        assert_eq!(
            q(
                json!({"type": "file", "accept": ".xlsx", "required": false, "description": "売上の表"}),
                Lang::Ja
            ),
            Question::Text {
                prompt: "ラベル — 売上の表 [ファイルのパス, .xlsx, 任意]".into(),
                default: None,
                optional: true
            }
        );
        assert_eq!(
            q(json!({"description": "ラベルの説明"}), Lang::Ja),
            Question::Text {
                prompt: "ラベルの説明".into(),
                default: None,
                optional: false
            }
        );
        assert_eq!(
            q(
                json!({"type": "number", "value_type": "integer", "default": 30}),
                Lang::En
            ),
            Question::Text {
                prompt: "Label [integer]".into(),
                default: Some("30".into()),
                optional: false
            }
        );
        assert_eq!(
            q(
                json!({"value_type": "array", "options": ["科目", "部門"], "hint": "ファイルの列から選んでください（複数可）"}),
                Lang::Ja
            ),
            Question::Text {
                prompt:
                    "ラベル [カンマ区切りで: 科目, 部門, ファイルの列から選んでください（複数可）]"
                        .into(),
                default: None,
                optional: false
            }
        );
        assert_eq!(
            q(
                json!({"validation": {"regex": "^[A-Z]+$"}, "hint": "列名", "hint_en": "column"}),
                Lang::En
            ),
            Question::Text {
                prompt: "Label [^[A-Z]+$, column]".into(),
                default: None,
                optional: false
            }
        );
    }
}
