//! Compose: the offline path (templates composed without an LLM) and the fallback when
//! the repair loop gives up.

use std::collections::HashSet;

use indexmap::IndexMap;
use keiri_llm::{Event, Usage};
use keiri_plan::{
    ComposeOptions, Finding, Lang, Plan, Requirement, RequirementKind, TemplateSpec, apply_answers,
    build_requirements, compose, validate,
};
use serde_json::{Map, Value};

use crate::Error;

use super::context::*;
use super::{repair::*, retrieve::*};

/// The note every offline composition ends with, in the request's language (the Japanese one
/// names no environment variable: it is also what the window shows).
pub fn offline_note(lang: Lang) -> String {
    match lang {
        Lang::Ja => {
            "AIを使わずにテンプレートから合成しました。設定でAIをつなぐと、指示に合わせてAIがプランを組み立てます"
                .into()
        }
        Lang::En => "composed offline from templates without an LLM; configuring an LLM \
(OPENAI_API_KEY, AZURE_OPENAI_API_KEY + AZURE_OPENAI_ENDPOINT + AZURE_OPENAI_DEPLOYMENT, or \
KEIRI_LLM_BASE_URL) gives better plans"
            .into(),
    }
}

/// Repair failed and the fallback is allowed: the offline composition, marked as such. It is
/// "safe" because it is built only from our templates' reviewed wiring; if it does not
/// validate either, the invalid result stands.
pub(super) fn fallback(
    failed: GeneratedPlan,
    instruction: &str,
    options: &GenerateOptions,
    ctx: &Context<'_>,
) -> Result<GeneratedPlan, Error> {
    let composed = compose_plan(instruction, options, ctx, Vec::new());
    match composed {
        Ok(mut plan) if !matches!(plan.status, Status::Invalid | Status::NoFit) => {
            plan.status = Status::Fallback;
            plan.fallback = true;
            plan.mode = failed.mode;
            plan.attempts = failed.attempts;
            plan.usage = failed.usage;
            plan.candidates = failed.candidates;
            plan.notes.insert(
                0,
                "FALLBACK PLAN: the LLM's plan did not validate after repair; this plan is \
                 composed from templates (KEIRI_AGENT_LLM_FALLBACK is set)"
                    .into(),
            );
            plan.suggestions.extend(failed.suggestions);
            Ok(plan)
        }
        _ => {
            let mut failed = failed;
            failed.notes.push(
                "the fallback was allowed, but no template composition validates either".into(),
            );
            Ok(failed)
        }
    }
}

/// A composed plan says how it runs instead of leaving it to defaults nobody sees: the
/// runtime's own defaults as its `policy` (stop at the first failure, no retries, one node at
/// a time) unless the plan has one, and its UI steps, in order, as `ui.layout`.
fn state_policy_and_layout(plan: &mut Plan) {
    if plan.policy.is_none() {
        plan.policy = Some(keiri_plan::model::Policy {
            on_error: Some("stop".into()),
            retries: Some(0),
            concurrency: Some(1),
            ..Default::default()
        });
    }
    let ui_steps: Vec<String> = plan
        .graph
        .iter()
        .filter(|n| n.block.as_deref().is_some_and(|b| b.starts_with("ui.")))
        .map(|n| n.id.clone())
        .collect();
    if !ui_steps.is_empty() {
        let ui = plan.ui.get_or_insert_with(Default::default);
        if ui.layout.is_empty() {
            ui.layout = ui_steps;
        }
    }
}

/// A UI step a template suggests (its `ui_suggestions`), said to the user: compose does not
/// add it (a review step pauses every run), the user may.
fn ui_suggestion_note(s: &keiri_plan::UiSuggestion, lang: Lang) -> String {
    let after = s.after.as_deref().unwrap_or("-");
    match lang {
        Lang::Ja => format!(
            "テンプレートの提案: {}（{} を {} の後に）。必要ならプランに加えてください",
            s.reason, s.block, after
        ),
        Lang::En => format!(
            "the template suggests: {} ({} after {}); add it to the plan if you want it",
            s.reason_en.as_deref().unwrap_or(&s.reason),
            s.block,
            after
        ),
    }
}

/// Rewrites the columns a composed plan names to the attached file's header when they are the
/// same after normalising (case, full-width/half-width, spaces, `_`) or the one header of the
/// same meaning (`keiri_plan::column_meaning`: 取引先名 for `vendor`), with a note for each;
/// any other difference stays a `column.unknown` finding and becomes a question.
pub(super) fn fit_columns(plan: &mut Plan, ctx: &Context<'_>, lang: Lang, notes: &mut Vec<String>) {
    if ctx.file_schemas.is_empty() {
        return;
    }
    let (fitted, done) = keiri_plan::fit_columns(plan, ctx.catalog, &ctx.file_schemas);
    *plan = fitted;
    // One note per column: the template's column is often read by several nodes.
    let mut fitted: IndexMap<(String, String), Vec<String>> = IndexMap::new();
    for (node, input, from, to) in done {
        let places = fitted.entry((from, to)).or_default();
        let place = format!("{node}.{input}");
        // Several rules of one input read it: the input is named once.
        if !places.contains(&place) {
            places.push(place);
        }
    }
    for ((from, to), places) in fitted {
        let places = places.join(", ");
        let by_meaning = keiri_plan::columns::normalize_column(&from)
            != keiri_plan::columns::normalize_column(&to);
        notes.push(match (lang, by_meaning) {
            (Lang::Ja, false) => format!(
                "列「{from}」を、ファイルの見出し「{to}」に合わせました（{places}）"
            ),
            (Lang::Ja, true) => format!(
                "列「{from}」には、同じ意味のファイルの見出し「{to}」を使います。違う場合はプランで直してください（{places}）"
            ),
            (Lang::En, false) => {
                format!("column {from:?} matched to the file's header {to:?} ({places})")
            }
            (Lang::En, true) => format!(
                "column {from:?} is the file's header {to:?}, which means the same; if it does not, change it in the plan ({places})"
            ),
        });
    }
}

/// The composition in one line: the templates' titles in the order they run.
pub(super) fn composition_line(templates: &[&TemplateSpec], lang: Lang) -> Option<String> {
    if templates.is_empty() {
        return None;
    }
    Some(match lang {
        Lang::Ja => format!(
            "{}を使います",
            templates
                .iter()
                .map(|t| format!("「{}」", t.title))
                .collect::<Vec<_>>()
                .join("＋")
        ),
        Lang::En => format!(
            "Using {}",
            templates
                .iter()
                .map(|t| format!("\"{}\"", t.title_en.as_deref().unwrap_or(&t.title)))
                .collect::<Vec<_>>()
                .join(" + ")
        ),
    })
}

/// How many nearest templates and blocks a "nothing fits" answer lists.
const NEAREST: usize = 3;

/// No template does the job the instruction names: a plan without steps, the reason, and the
/// nearest templates and blocks to start from by hand, instead of an unrelated composition.
fn no_fit(
    instruction: &str,
    options: &GenerateOptions,
    ctx: &Context<'_>,
    mut notes: Vec<String>,
) -> Result<GeneratedPlan, Error> {
    let (templates, blocks) = with_retriever(ctx, |retriever| {
        let templates = nearest_templates(instruction, ctx.templates, retriever, NEAREST)?;
        let request = GenerateOptions {
            pinned_blocks: Vec::new(),
            ..options.clone()
        };
        let mut blocks = retrieve_blocks(instruction, "", &request, retriever)?;
        blocks.truncate(NEAREST * 2);
        Ok((templates, blocks))
    })?;
    let reason = match options.lang {
        Lang::Ja => "この指示の仕事をするテンプレートがありません。関係のないテンプレートでプランを作ることはしません。近いテンプレートかブロックから組み立てるか、LLM を設定してください".to_string(),
        Lang::En => "no template does the job this instruction describes, and no unrelated plan is composed instead: start from the nearest templates or blocks, or configure an LLM".to_string(),
    };
    notes.insert(0, reason.clone());
    let mut suggestions: Vec<String> = templates
        .iter()
        .map(|t| match options.lang {
            Lang::Ja => format!("テンプレート {}（{}）", t.id, t.title),
            Lang::En => format!(
                "template {} ({})",
                t.id,
                t.title_en.as_deref().unwrap_or(&t.title)
            ),
        })
        .collect();
    suggestions.extend(blocks.iter().map(|b| match options.lang {
        Lang::Ja => format!("ブロック {b}"),
        Lang::En => format!("block {b}"),
    }));
    ctx.record(Event::new("validating", "compose").validation_errors(0));
    Ok(GeneratedPlan {
        plan: Plan {
            api_version: None,
            id: options.plan_id.clone(),
            description: Some(instruction.trim().to_string()),
            version: None,
            vars: IndexMap::new(),
            policy: None,
            ui: None,
            graph: Vec::new(),
            extra: IndexMap::new(),
        },
        status: Status::NoFit,
        mode: ApplyMode::Compose,
        fallback: false,
        reasoning: reason,
        candidates: blocks,
        templates: Vec::new(),
        composition: None,
        attempts: Vec::new(),
        requirements: Vec::new(),
        errors: Vec::new(),
        suggestions,
        notes,
        usage: Usage::default(),
    })
}

/// Answers for the file questions the attached files settle: a `file` question nobody answered
/// whose accepted extensions exactly one attached file has (the invoice CSV question and the
/// one CSV attached, the evidence ZIP question and the one ZIP), with a note for each. Two candidates (three CSVs for three
/// questions) stay questions: which is which is the user's to say.
fn attached_file_answers(
    requirements: &[Requirement],
    answered: &Map<String, Value>,
    ctx: &Context<'_>,
    lang: Lang,
    notes: &mut Vec<String>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for r in requirements {
        if r.kind != RequirementKind::File || answered.contains_key(&r.id) {
            continue;
        }
        let accepts = |path: &str| {
            r.accept
                .as_deref()
                .is_none_or(|accept| keiri_plan::requirements::accepts_path(accept, path))
        };
        let mut fits: Vec<&str> = ctx
            .file_schemas
            .iter()
            .map(|f| f.path.as_str())
            .chain(ctx.attached.iter().map(String::as_str))
            .filter(|p| accepts(p))
            .collect();
        fits.sort_unstable();
        fits.dedup();
        let [path] = fits.as_slice() else {
            continue;
        };
        notes.push(match lang {
            Lang::Ja => format!("「{}」には添付のファイル {path} を使います", r.label),
            Lang::En => format!(
                "{}: the attached file {path}",
                r.label_en.as_deref().unwrap_or(&r.label)
            ),
        });
        out.insert(r.id.clone(), Value::String((*path).to_string()));
    }
    out
}

/// The column a column question replaces: the plan's name at its target (a top-level node's
/// input, list element or field). `None` when the target holds more than a bare name (a
/// rule's condition expression): such questions are never merged.
fn asked_column(plan: &Plan, r: &Requirement) -> Option<String> {
    if r.answer_use != keiri_plan::AnswerUse::Column {
        return None;
    }
    let node = plan
        .graph
        .iter()
        .find(|n| Some(n.id.as_str()) == r.target.node_id.as_deref())?;
    let mut value = node.inputs.get(r.target.input.as_deref()?)?;
    if let Some(i) = r.target.index {
        value = value.get(i)?;
    }
    if let Some(field) = &r.target.field {
        value = value.get(field)?;
    }
    let name = value.as_str()?;
    match keiri_plan::row_expr::columns_of(name) {
        Ok(columns) if columns.len() == 1 && columns[0] == name => Some(name.to_string()),
        _ => None,
    }
}

/// One question per template column: when several nodes name the same column the file lacks
/// (`invoice_date` read by the date normaliser and the detector), the first node's question
/// stays, saying where else the column is used, and the other places read its answer
/// (`${vars.<its var>}`), so one answer fits them all, however it is given.
fn ask_each_column_once(plan: &mut Plan, requirements: &mut Vec<Requirement>) {
    let mut first: IndexMap<(String, Vec<Value>), usize> = IndexMap::new();
    let mut merged: Vec<(usize, Requirement)> = Vec::new();
    for (i, r) in requirements.iter().enumerate() {
        let Some(column) = asked_column(plan, r) else {
            continue;
        };
        match first.get(&(column.clone(), r.options.clone())) {
            Some(&kept) => merged.push((kept, r.clone())),
            None => {
                first.insert((column, r.options.clone()), i);
            }
        }
    }
    if merged.is_empty() {
        return;
    }
    let mut places: IndexMap<usize, Vec<String>> = IndexMap::new();
    for (kept, r) in &merged {
        let Some(var) = requirements[*kept].target.var.clone() else {
            continue;
        };
        let reference = Value::String(format!("${{vars.{var}}}"));
        let Some(node) = plan
            .graph
            .iter_mut()
            .find(|n| Some(n.id.as_str()) == r.target.node_id.as_deref())
        else {
            continue;
        };
        let Some(mut slot) = r
            .target
            .input
            .as_deref()
            .and_then(|k| node.inputs.get_mut(k))
        else {
            continue;
        };
        if let Some(i) = r.target.index {
            let Some(inner) = slot.get_mut(i) else {
                continue;
            };
            slot = inner;
        }
        if let Some(field) = &r.target.field {
            let Some(inner) = slot.get_mut(field) else {
                continue;
            };
            slot = inner;
        }
        *slot = reference;
        places.entry(*kept).or_default().push(format!(
            "{}.{}",
            r.target.node_id.as_deref().unwrap_or_default(),
            r.target.input.as_deref().unwrap_or_default()
        ));
    }
    for (kept, others) in &places {
        let q = &mut requirements[*kept];
        let list = others.join(", ");
        // Said once: a question kept from an earlier round has it already.
        let (ja, en) = (
            format!("（この答えは {list} にも使います）"),
            format!(" (the answer is used for {list} too)"),
        );
        if !q.description.ends_with(&ja) {
            q.description.push_str(&ja);
        }
        let d = q.description_en.get_or_insert_with(String::new);
        if !d.ends_with(&en) {
            d.push_str(&en);
        }
    }
    let dropped: HashSet<String> = merged.iter().map(|(_, r)| r.id.clone()).collect();
    requirements.retain(|r| !dropped.contains(&r.id));
}

/// The offline path: templates (named or chosen by the job the instruction names) composed by
/// their contracts, validated, with questions for what they import and nobody supplied; or
/// [`Status::NoFit`] when no template does the job.
pub fn compose_plan(
    instruction: &str,
    options: &GenerateOptions,
    ctx: &Context<'_>,
    mut notes: Vec<String>,
) -> Result<GeneratedPlan, Error> {
    ctx.report(Stage::Retrieving, None, "choosing templates");
    let templates = with_retriever(ctx, |retriever| {
        select_templates(instruction, options, ctx.templates, retriever)
    })?;
    // The chosen flows, then a template that serves a part the instruction also asks for (an
    // Excel report, a notification), so it is not dropped. Templates the user named are kept
    // as named: what they lack becomes a note.
    let templates = if options.templates.is_empty() && !templates.is_empty() {
        crate::intent::complete(instruction, templates, ctx.templates)
    } else {
        templates
    };
    if templates.is_empty() {
        return no_fit(instruction, options, ctx, notes);
    }
    ctx.report(
        Stage::Composing,
        None,
        format!(
            "composing {}",
            templates
                .iter()
                .map(|t| t.id.as_str())
                .collect::<Vec<_>>()
                .join(" + ")
        ),
    );
    let composition = compose(
        &templates,
        &ComposeOptions {
            plan_id: options.plan_id.clone(),
            ..Default::default()
        },
    )
    .map_err(Error::Compose)?;
    for c in &composition.conflicts {
        notes.push(format!("{}: {}", c.code(), c.message(options.lang)));
    }
    ctx.report(Stage::Validating, None, "validating the composition");
    let validate_options = keiri_plan::Options {
        lang: options.lang,
        file_schemas: ctx.file_schemas.clone(),
        ..Default::default()
    };
    let mut plan = composition.plan.clone();
    plan.description = Some(instruction.trim().to_string());
    let files: Vec<&str> = ctx
        .attached
        .iter()
        .map(String::as_str)
        .chain(ctx.file_schemas.iter().map(|f| f.path.as_str()))
        .collect();
    let approval = crate::intent::approval_step(instruction, &composition, &templates);
    let mut outputs = crate::intent::output_steps(
        instruction,
        &composition,
        &templates,
        &options.plan_id,
        &files,
    );
    if let Some(step) = approval {
        // What the outputs write waits for the approval; a refusal writes nothing.
        let gate = format!("${{{}.approved}} == true", step.id);
        for output in &mut outputs {
            output.when = serde_json::from_value(serde_json::json!({"expr": gate})).ok();
        }
        let gated: Vec<String> = outputs.iter().map(|o| o.id.clone()).collect();
        notes.push(crate::intent::approval_step_note(options.lang, &gated));
        plan.graph.push(step);
    }
    for step in outputs {
        notes.push(crate::intent::output_step_note(&step, options.lang));
        plan.graph.push(step);
    }
    notes.extend(crate::values::apply(
        instruction,
        &templates,
        &mut plan,
        options.lang,
    ));
    fit_columns(&mut plan, ctx, options.lang, &mut notes);
    let mut findings = validate(&plan, ctx.catalog, &validate_options);
    let mut requirements = composition.requirements(&findings, ctx.catalog);
    let mut answers = options.answers.clone();
    answers.extend(attached_file_answers(
        &requirements,
        &answers,
        ctx,
        options.lang,
        &mut notes,
    ));
    // Answers are applied in rounds: an answered file path makes the file's columns known,
    // and the column questions that raises may already be answered too. Each round applies
    // at least one answer, so there are at most as many rounds as answers.
    let mut applied: HashSet<String> = HashSet::new();
    loop {
        ask_each_column_once(&mut plan, &mut requirements);
        let to_apply: Vec<Requirement> = requirements
            .iter()
            .filter(|r| answers.contains_key(&r.id) && !applied.contains(&r.id))
            .cloned()
            .collect();
        if to_apply.is_empty() {
            break;
        }
        ctx.report(Stage::Questions, None, "applying the answers");
        applied.extend(to_apply.iter().map(|r| r.id.clone()));
        plan = apply_answers(&plan, &to_apply, &answers).map_err(Error::Answers)?;
        // Fit the columns that differ only in how they are written.
        fit_columns(&mut plan, ctx, options.lang, &mut notes);
        findings = validate(&plan, ctx.catalog, &validate_options);
        // Rebuilt from the plan, a question loses the template's words for it: keep them.
        let asked = std::mem::take(&mut requirements);
        requirements = build_requirements(&plan, &findings, ctx.catalog)
            .into_iter()
            .map(|r| asked.iter().find(|a| a.id == r.id).cloned().unwrap_or(r))
            .collect();
    }
    ask_each_column_once(&mut plan, &mut requirements);
    super::sniff::propose_by_values(&plan, &mut requirements, &ctx.file_schemas, asked_column);
    if let Some(embedder) = ctx.retriever.and_then(|r| r.embedder()) {
        super::sniff::propose_by_meaning(
            &plan,
            &mut requirements,
            &ctx.file_schemas,
            asked_column,
            embedder.as_ref(),
        );
    }
    state_policy_and_layout(&mut plan);
    notes.extend(
        composition
            .ui_suggestions
            .iter()
            .map(|s| ui_suggestion_note(s, options.lang)),
    );
    findings = validate(&plan, ctx.catalog, &validate_options);
    notes.extend(crate::intent::unserved_notes(
        instruction,
        &plan,
        options.lang,
    ));
    let issues = findings;
    let errors: Vec<Finding> = issues.iter().filter(|i| i.is_error()).cloned().collect();
    let json = plan_json(&plan);
    let status = if errors.is_empty() {
        Status::Valid
    } else if errors
        .iter()
        .all(|e| answerable(e, &json, &plan, &requirements))
    {
        Status::NeedsAnswers
    } else {
        Status::Invalid
    };
    notes.push(offline_note(options.lang));
    let mut candidates: Vec<String> = Vec::new();
    for n in &plan.graph {
        if let Some(b) = &n.block
            && !candidates.contains(b)
        {
            candidates.push(b.clone());
        }
    }
    let suggestions = if status == Status::Invalid {
        suggestions(&errors, &plan, &requirements, ctx.templates)
    } else {
        Vec::new()
    };
    ctx.record(
        Event::new("validating", "compose")
            .validation_errors(errors.len() as u32)
            .block_distribution(plan.graph.iter().filter_map(|g| g.block.as_deref())),
    );
    Ok(GeneratedPlan {
        plan,
        status,
        mode: ApplyMode::Compose,
        fallback: false,
        reasoning: format!(
            "composed from templates {} by their import/export contracts",
            templates
                .iter()
                .map(|t| t.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        candidates,
        templates: templates.iter().map(|t| t.id.clone()).collect(),
        composition: composition_line(&templates, options.lang),
        attempts: Vec::new(),
        requirements,
        errors,
        suggestions,
        notes,
        usage: Usage::default(),
    })
}
