//! The generation pipeline: extracting → retrieving → skeleton → questions → wiring →
//! validating → repair n/N, or the offline compose path.

use keiri_llm::{Event, Message, OutputSchema, StructuredRequest, Usage};
use keiri_plan::{Finding, Requirement, TemplateSpec};
use serde_json::Value;

use crate::Error;
use crate::prompt::{self, RepairFinding};
use crate::schema::{self, Skeleton, Wiring, check_wiring};

mod context;
mod offline;
mod repair;
mod retrieve;
mod sniff;
mod wiring;

use self::{offline::*, repair::*, retrieve::*, wiring::*};
use context::ask;
pub use context::*;
pub use offline::{compose_plan, offline_note};
pub(crate) use repair::all_nodes;
pub use repair::node_diff;
pub use retrieve::select_templates;
pub use wiring::to_plan;

/// Generates a plan for `instruction`. `digest` is the document digest
/// ([`crate::digest_documents`]), or empty.
pub async fn generate_plan(
    instruction: &str,
    digest: &str,
    options: &GenerateOptions,
    ctx: &Context<'_>,
) -> Result<GeneratedPlan, Error> {
    if instruction.trim().is_empty() {
        return Err(Error::InvalidArgument("the instruction is empty".into()));
    }
    if options.plan_id.trim().is_empty() {
        return Err(Error::InvalidArgument("the plan id is empty".into()));
    }
    ctx.report(Stage::Extracting, None, "reading the document digest");
    let digest = truncate_chars(digest, options.max_docs_chars);

    if options.apply_mode == ApplyMode::Compose {
        return compose_plan(instruction, options, ctx, Vec::new());
    }
    match generate_with_llm(instruction, &digest, options, ctx).await {
        // The fallback flag covers a model that cannot be reached or answers nothing usable
        // (timeout, 5xx, a bad key, no provider), not only a plan that failed repair. A
        // cancellation is the user's decision and stays one.
        Err(error) if options.allow_fallback && fallback_covers(&error) => {
            let why = format!(
                "FALLBACK PLAN: the LLM could not be used ({}: {error}); this plan is composed \
                 from templates (KEIRI_AGENT_LLM_FALLBACK is set)",
                error.code()
            );
            match compose_plan(instruction, options, ctx, Vec::new()) {
                Ok(mut plan) if !matches!(plan.status, Status::Invalid | Status::NoFit) => {
                    plan.status = Status::Fallback;
                    plan.fallback = true;
                    plan.mode = options.apply_mode;
                    plan.notes.insert(0, why);
                    Ok(plan)
                }
                // No template composition serves the instruction either: the model's error
                // is the one the user can act on.
                _ => Err(error),
            }
        }
        other => other,
    }
}

/// Whether a failed LLM generation may fall back to composed templates.
fn fallback_covers(error: &Error) -> bool {
    match error {
        Error::LlmRequired { .. } => true,
        Error::Llm { source, .. } => !matches!(source, keiri_llm::Error::Cancelled),
        _ => false,
    }
}

/// The hint / llm-only path: retrieve, skeleton, questions, wiring, validate and repair.
async fn generate_with_llm(
    instruction: &str,
    digest: &str,
    options: &GenerateOptions,
    ctx: &Context<'_>,
) -> Result<GeneratedPlan, Error> {
    let digest = digest.to_string();
    let Some(llm) = ctx.llm else {
        return Err(Error::LlmRequired {
            mode: options.apply_mode.as_str(),
        });
    };

    ctx.report(Stage::Retrieving, None, "retrieving candidate blocks");
    let (mut candidate_ids, templates) = with_retriever(ctx, |retriever| {
        let ids = retrieve_blocks(instruction, &digest, options, retriever)?;
        let templates: Vec<&TemplateSpec> = if options.apply_mode == ApplyMode::Hint {
            select_templates(instruction, options, ctx.templates, retriever)?
        } else {
            Vec::new()
        };
        Ok((ids, templates))
    })?;
    for t in &templates {
        for n in &t.graph_snippet {
            if let Some(b) = &n.block
                && !candidate_ids.contains(b)
            {
                candidate_ids.push(b.clone());
            }
        }
    }
    let candidates = schema::candidate_blocks(ctx.catalog, &candidate_ids);
    if candidates.is_empty() {
        return Err(Error::NoCandidates);
    }
    let candidate_ids: Vec<String> = candidates.iter().map(|c| c.id.clone()).collect();
    let rows = prompt::catalog_rows(ctx.catalog, &candidate_ids);
    let mut context = prompt::context(
        instruction,
        &digest,
        &prompt::encode_catalog(&rows),
        &templates,
    );
    if !ctx.subflow_plans.is_empty() {
        context.push_str("\n\n## Registered plans (a node may call one as a subflow)");
        for plan in &ctx.subflow_plans {
            context.push_str(&format!(
                "\n- {} (inputs: {}; outputs: {})",
                plan.id,
                plan.inputs.join(", "),
                plan.outputs.join(", ")
            ));
        }
    }
    let mut usage = Usage::default();

    let shapes = schema::Shapes {
        plans: &ctx.subflow_plans,
        loops: options.suggest_foreach,
        conditions: options.suggest_when,
    };

    // Stage 1: skeleton.
    ctx.report(Stage::Skeleton, None, "asking for the skeleton");
    let base = vec![
        Message::system(prompt::SYSTEM_RULES),
        Message::user(format!("{context}\n\n{}", prompt::skeleton_task())),
    ];
    let request = StructuredRequest::new(
        base.clone(),
        OutputSchema::new(
            "plan_skeleton",
            schema::skeleton_schema(&candidates, &shapes),
        ),
    );
    let out = ask::<Skeleton>(llm, ctx, "skeleton", &request).await?;
    usage += out.usage;
    let mut skeleton = out.value;
    // The schema already forbids unknown blocks and plans; this guards providers that ignore
    // it.
    skeleton.nodes.retain(|n| match (&n.block, &n.calls_plan) {
        (_, Some(plan)) => ctx.subflow_plans.iter().any(|p| &p.id == plan),
        (Some(block), None) => candidate_ids.contains(block),
        (None, None) => false,
    });
    let skeleton_json = serde_json::to_string(&skeleton).unwrap_or_default();

    // Questions: the skeleton's open points, answered now or asked later.
    ctx.report(
        Stage::Questions,
        None,
        format!("{} open question(s)", skeleton.questions.len()),
    );
    let question_reqs: Vec<Requirement> = skeleton
        .questions
        .iter()
        .map(question_requirement)
        .collect();
    let answered: Vec<(String, String)> = skeleton
        .questions
        .iter()
        .filter_map(|q| {
            options
                .answers
                .get(&q.var)
                .map(|v| (q.var.clone(), v.to_string()))
        })
        .collect();

    // Stage 2: wiring, then validate / repair.
    ctx.report(Stage::Wiring, None, "asking for the wiring");
    let wiring_messages = vec![
        Message::system(prompt::SYSTEM_RULES),
        Message::user(context.clone()),
        Message::assistant(skeleton_json),
        Message::user(format!(
            "{}{}",
            prompt::wiring_task(&skeleton, &answered, options),
            prompt::file_columns(&ctx.file_schemas)
        )),
    ];
    let wiring_schema =
        OutputSchema::new("plan_wiring", schema::wiring_schema(&candidates, &shapes));
    let request = StructuredRequest::new(wiring_messages.clone(), wiring_schema.clone());
    let out = ask::<Wiring>(llm, ctx, "wiring", &request).await?;
    usage += out.usage;
    let mut reasoning = format!("{}\n{}", skeleton.reasoning, out.value.reasoning)
        .trim()
        .to_string();
    let mut wiring = out.value;
    let mut strategy = out.strategy.as_str().to_string();
    let mut attempt_usage = out.usage;
    let mut previous = skeleton_plan(&skeleton, &options.plan_id);
    let mut attempts: Vec<Attempt> = Vec::new();
    let max = options.max_repair_attempts;
    let mut repairs = 0u32;

    loop {
        let n = attempts.len() as u32 + 1;
        ctx.report(Stage::Validating, None, format!("validating attempt {n}"));
        let (checked, problems) = check_wiring(&wiring, &candidates, &ctx.subflow_plans);
        let mut plan = to_plan(&checked, &options.plan_id, instruction);
        define_open_vars(&mut plan, &skeleton, options, ctx);
        // An answer to an open point of the skeleton replaces whatever the wiring put in
        // the var (its default, or the null of a value only the user can give).
        for q in &skeleton.questions {
            if let Some(answer) = options.answers.get(&q.var) {
                plan.vars.insert(q.var.clone(), answer.clone());
            }
        }
        let evaluated = evaluate(plan, &problems, options, ctx, &question_reqs).await?;
        ctx.record(
            Event::new("validating", "validation")
                .attempt(n)
                .validation_errors(evaluated.errors().count() as u32)
                .repair_iteration(repairs)
                .block_distribution(
                    evaluated
                        .plan
                        .graph
                        .iter()
                        .filter_map(|g| g.block.as_deref()),
                )
                .usage(attempt_usage),
        );
        attempts.push(Attempt {
            n,
            stage: if n == 1 { "wiring" } else { "repair" }.into(),
            plan: evaluated.plan.clone(),
            issues: evaluated.issues.clone(),
            errors: evaluated.errors().count(),
            strategy: strategy.clone(),
            usage: attempt_usage,
        });
        let json = plan_json(&evaluated.plan);
        let repairable: Vec<&Finding> = evaluated
            .errors()
            .filter(|i| !answerable(i, &json, &evaluated.plan, &evaluated.requirements))
            .collect();
        let done = evaluated.errors().count() == 0 || repairable.is_empty();
        if done || repairs >= max {
            let unanswered = evaluated.requirements.iter().any(|r| {
                r.required
                    && r.target
                        .var
                        .as_deref()
                        .is_some_and(|v| evaluated.plan.vars.get(v).is_none_or(Value::is_null))
            });
            let status = if evaluated.errors().count() == 0 && !unanswered {
                Status::Valid
            } else if evaluated.errors().count() == 0 || repairable.is_empty() {
                Status::NeedsAnswers
            } else {
                Status::Invalid
            };
            record_dry_run(ctx, &evaluated.plan);
            let mut result = GeneratedPlan {
                plan: evaluated.plan.clone(),
                status,
                mode: options.apply_mode,
                fallback: false,
                reasoning,
                candidates: candidate_ids,
                templates: templates.iter().map(|t| t.id.clone()).collect(),
                composition: composition_line(&templates, options.lang),
                attempts,
                requirements: evaluated.requirements.clone(),
                errors: evaluated.errors().cloned().collect(),
                suggestions: Vec::new(),
                notes: Vec::new(),
                usage,
            };
            if status == Status::Invalid {
                result.suggestions = suggestions(
                    &result.errors,
                    &result.plan,
                    &result.requirements,
                    ctx.templates,
                );
                if options.allow_fallback {
                    return fallback(result, instruction, options, ctx);
                }
                result.notes.push(format!(
                    "the plan still has errors after {repairs} repair attempt(s); no fallback \
                     plan was made (set KEIRI_AGENT_LLM_FALLBACK=1 to allow one)"
                ));
            }
            return Ok(result);
        }

        // Repair n/N.
        repairs += 1;
        ctx.report(
            Stage::Repair,
            Some((repairs, max)),
            format!("repair {repairs}/{max}: {} error(s)", repairable.len()),
        );
        let findings: Vec<RepairFinding> = repairable
            .iter()
            .map(|i| RepairFinding {
                code: i.code.to_string(),
                node: i.node_id.clone(),
                path: i.path.clone(),
                message: i.message.clone(),
            })
            .collect();
        let involved = involved_blocks(&repairable, &evaluated.plan, &wiring);
        let excerpts = prompt::catalog_rows(ctx.catalog, &involved);
        let diff = node_diff(&previous, &evaluated.plan);
        let contracts: Vec<String> = templates
            .iter()
            .filter(|t| {
                t.graph_snippet
                    .iter()
                    .any(|n| n.block.as_ref().is_some_and(|b| involved.contains(b)))
            })
            .map(|t| prompt::template_summary(t))
            .collect();
        let mut messages = wiring_messages.clone();
        messages.push(Message::assistant(
            serde_json::to_string(&wiring).unwrap_or_default(),
        ));
        messages.push(Message::user(prompt::repair_message(
            repairs, max, &findings, &excerpts, &diff, &contracts,
        )));
        previous = evaluated.plan;
        let request = StructuredRequest::new(messages, wiring_schema.clone());
        let out = ask::<Wiring>(llm, ctx, "repair", &request).await?;
        usage += out.usage;
        attempt_usage = out.usage;
        strategy = out.strategy.as_str().to_string();
        if !out.value.reasoning.trim().is_empty() {
            reasoning = format!("{reasoning}\n{}", out.value.reasoning);
        }
        wiring = out.value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keiri_plan::{Catalog, Lang, build_requirements, validate};

    fn catalog() -> Catalog {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
        Catalog::load(&[dir]).0
    }

    /// Whether the first `ref.undefined_var` finding of `yaml` is answerable, in both
    /// message languages (the decision must not depend on the message text).
    fn check(yaml: &str, expect: bool) {
        let plan = keiri_plan::load_plan(yaml).unwrap().plan;
        let catalog = catalog();
        for lang in [Lang::Ja, Lang::En] {
            let findings = validate(
                &plan,
                &catalog,
                &keiri_plan::Options {
                    lang,
                    ..Default::default()
                },
            );
            let requirements = build_requirements(&plan, &findings, &catalog);
            let issue = findings
                .iter()
                .find(|f| f.code == keiri_plan::FindingCode::RefUndefinedVar)
                .cloned()
                .unwrap();
            assert_eq!(
                answerable(&issue, &plan_json(&plan), &plan, &requirements),
                expect,
                "{lang:?}: {yaml}"
            );
            // A message that names the var but is not at its pointer changes nothing.
            let mut moved = issue.clone();
            moved.path = "/graph/0/out/rows".into();
            assert!(!answerable(&moved, &plan_json(&plan), &plan, &requirements));
        }
    }

    #[test]
    fn an_undefined_var_with_a_question_is_answerable() {
        check(
            "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: '${vars.src}'}\n    out: {rows: rows}\n",
            true,
        );
        // Inside a longer string too.
        check(
            "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: 'data/${vars.month}.csv'}\n    out: {rows: rows}\n",
            true,
        );
    }

    #[test]
    fn other_errors_are_not_answerable() {
        let plan = keiri_plan::load_plan(
            "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: '${vars.src}'}\n",
        )
        .unwrap()
        .plan;
        let issue = keiri_plan::Finding::error(
            keiri_plan::FindingCode::RefUnknownNode,
            Some("read".into()),
            "/graph/0/in/path",
            "src",
        );
        let catalog = catalog();
        let findings = validate(&plan, &catalog, &keiri_plan::Options::default());
        let requirements = build_requirements(&plan, &findings, &catalog);
        assert!(!answerable(&issue, &plan_json(&plan), &plan, &requirements));
    }
}
