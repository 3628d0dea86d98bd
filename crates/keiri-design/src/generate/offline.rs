//! Compose: the offline path (templates composed without an LLM) and the fallback when
//! the repair loop gives up.

use super::*;

pub(super) const OFFLINE_NOTE: &str = "composed offline from templates without an LLM; configuring an LLM \
(OPENAI_API_KEY, AZURE_OPENAI_API_KEY + AZURE_OPENAI_ENDPOINT + AZURE_OPENAI_DEPLOYMENT, or \
KEIRI_LLM_BASE_URL) gives better plans";

/// Repair failed and the fallback is allowed: the offline composition, marked as such. It is
/// "safe" because it is built only from our templates' reviewed wiring; if it does not
/// validate either, the invalid result stands.
pub(super) fn fallback(
    failed: GeneratedPlan,
    instruction: &str,
    digest: &str,
    options: &GenerateOptions,
    ctx: &Context<'_>,
) -> Result<GeneratedPlan, Error> {
    let composed = compose_plan(instruction, digest, options, ctx, Vec::new());
    match composed {
        Ok(mut plan) if plan.status != Status::Invalid => {
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

/// Rewrites the columns a composed plan names to the attached file's header when they are the
/// same after normalising (case, full-width/half-width, spaces, `_`), with a note for each;
/// any other difference stays a `column.unknown` finding and becomes a question.
pub(super) fn fit_columns(plan: &mut Plan, ctx: &Context<'_>, lang: Lang, notes: &mut Vec<String>) {
    if ctx.file_schemas.is_empty() {
        return;
    }
    let (fitted, done) = keiri_plan::fit_columns(plan, ctx.catalog, &ctx.file_schemas);
    *plan = fitted;
    for (node, input, from, to) in done {
        notes.push(match lang {
            Lang::Ja => format!(
                "{node} の {input} の列「{from}」を、ファイルの見出し「{to}」に合わせました"
            ),
            Lang::En => {
                format!("{node}.{input}: column {from:?} matched to the file's header {to:?}")
            }
        });
    }
}

/// The offline path: templates (named or retrieved) composed by their contracts, validated,
/// with questions for what they import and nobody supplied.
pub fn compose_plan(
    instruction: &str,
    digest: &str,
    options: &GenerateOptions,
    ctx: &Context<'_>,
    mut notes: Vec<String>,
) -> Result<GeneratedPlan, Error> {
    ctx.report(Stage::Retrieving, None, "choosing templates");
    let templates = with_retriever(ctx, |retriever| {
        select_templates(instruction, digest, options, ctx.templates, retriever)
    })?;
    // Retrieval picks the flows that match best; a part the instruction also asks for (an
    // Excel report, a notification) is then added by a template that serves it, so it is not
    // dropped. Templates the user named are kept as named: what they lack becomes a note.
    let templates = if options.templates.is_empty() && !templates.is_empty() {
        crate::intent::complete(instruction, templates, ctx.templates)
    } else {
        templates
    };
    if templates.is_empty() {
        return Err(Error::InvalidArgument(
            "no template matches the instruction: name templates explicitly, or configure an \
             LLM (OPENAI_API_KEY, AZURE_OPENAI_*, KEIRI_LLM_BASE_URL)"
                .into(),
        ));
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
    fit_columns(&mut plan, ctx, options.lang, &mut notes);
    let mut findings = validate(&plan, ctx.catalog, &validate_options);
    let mut requirements = composition.requirements(&findings, ctx.catalog);
    // Answers are applied in rounds: an answered file path makes the file's columns known,
    // and the column questions that raises may already be answered too. Each round applies
    // at least one answer, so there are at most as many rounds as answers.
    let mut applied: HashSet<String> = HashSet::new();
    loop {
        let to_apply: Vec<Requirement> = requirements
            .iter()
            .filter(|r| options.answers.contains_key(&r.id) && !applied.contains(&r.id))
            .cloned()
            .collect();
        if to_apply.is_empty() {
            break;
        }
        ctx.report(Stage::Questions, None, "applying the answers");
        applied.extend(to_apply.iter().map(|r| r.id.clone()));
        plan = apply_answers(&plan, &to_apply, &options.answers).map_err(Error::Answers)?;
        // Fit the columns that differ only in how they are written.
        fit_columns(&mut plan, ctx, options.lang, &mut notes);
        findings = validate(&plan, ctx.catalog, &validate_options);
        requirements = build_requirements(&plan, &findings, ctx.catalog);
    }
    notes.extend(crate::intent::unserved_notes(
        instruction,
        &plan,
        options.lang,
    ));
    let issues: Vec<Issue> = findings.iter().map(Issue::from).collect();
    let errors: Vec<Issue> = issues.iter().filter(|i| i.is_error()).cloned().collect();
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
    notes.push(OFFLINE_NOTE.into());
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
        attempts: Vec::new(),
        requirements,
        errors,
        suggestions,
        notes,
        usage: Usage::default(),
    })
}
