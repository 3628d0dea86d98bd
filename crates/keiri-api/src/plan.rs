//! Plan use cases: catalog listing, validation, dry-run and registering.

use keiri_plan::{Catalog, LoadedPlan, Severity as CoreSeverity};

use crate::json::{self, Finding, Severity};
use crate::{ApiError, Context, ErrorCode, Lang};

/// Loads the catalog from the context's directories.
pub fn load_catalog(ctx: &Context) -> (Catalog, Vec<keiri_plan::CatalogIssue>) {
    Catalog::load(&ctx.catalog_dirs)
}

/// Lists the catalog, optionally filtered by a query over id, titles and descriptions.
pub fn catalog_list(
    ctx: &Context,
    req: json::CatalogListRequest,
) -> Result<json::CatalogListResponse, ApiError> {
    let (catalog, issues) = load_catalog(ctx);
    let query = req.query.unwrap_or_default().trim().to_lowercase();
    let blocks = catalog
        .blocks()
        .filter(|b| {
            query.is_empty()
                || [
                    Some(b.id.as_str()),
                    b.title_ja.as_deref(),
                    b.title_en.as_deref(),
                    Some(b.description.as_str()),
                    b.description_en.as_deref(),
                ]
                .into_iter()
                .flatten()
                .any(|t| t.to_lowercase().contains(&query))
        })
        .map(json::BlockSummary::from)
        .collect();
    let issues = issues
        .into_iter()
        .map(|i| json::CatalogIssue {
            file: i.file.display().to_string(),
            line: i.line,
            column: i.column,
            message: i.message,
        })
        .collect();
    Ok(json::CatalogListResponse { blocks, issues })
}

/// The result of loading and validating plan text: either a plan with findings, or the
/// finding that explains why it could not be read.
struct Checked {
    loaded: Option<LoadedPlan>,
    findings: Vec<Finding>,
}

impl Checked {
    fn error_count(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }
}

fn check(ctx: &Context, yaml: &str, lang: Lang) -> Checked {
    let loaded = match keiri_plan::load_plan(yaml) {
        Ok(l) => l,
        Err(e) => {
            let pos = e.position();
            return Checked {
                loaded: None,
                findings: vec![Finding {
                    code: e.code().to_string(),
                    severity: Severity::Error,
                    node_id: None,
                    path: e.pointer(),
                    message: match lang {
                        Lang::Ja => format!("YAML を読み込めません: {e}"),
                        Lang::En => format!("cannot read the YAML: {e}"),
                    },
                    hint: None,
                    line: pos.map(|p| p.line),
                    column: pos.map(|p| p.column),
                }],
            };
        }
    };
    let (catalog, _) = load_catalog(ctx);
    let known_plans = keiri_plan::designs_index(&ctx.designs_dir)
        .into_keys()
        .collect();
    let options = keiri_plan::Options { lang, known_plans };
    let findings = keiri_plan::validate(&loaded.plan, &catalog, &options)
        .into_iter()
        .map(|f| {
            let pos = loaded.source_map.locate(&f.path);
            Finding {
                code: f.code.to_string(),
                severity: match f.severity {
                    CoreSeverity::Error => Severity::Error,
                    CoreSeverity::Warning => Severity::Warning,
                },
                node_id: f.node_id,
                path: f.path,
                message: f.message,
                hint: f.hint,
                line: pos.map(|p| p.line),
                column: pos.map(|p| p.column),
            }
        })
        .collect();
    Checked {
        loaded: Some(loaded),
        findings,
    }
}

fn invalid(checked: &Checked) -> ApiError {
    let code = if checked.loaded.is_none() {
        ErrorCode::YamlParse
    } else {
        ErrorCode::PlanInvalid
    };
    let message = match checked.findings.first() {
        Some(f) if checked.loaded.is_none() => f.message.clone(),
        _ => format!("the plan has {} error(s)", checked.error_count()),
    };
    ApiError::new(code, message)
        .with_details(serde_json::json!({ "findings": serde_json::to_value(&checked.findings).unwrap_or_default() }))
}

/// Validates plan text. A YAML syntax error is a finding, not an API error, so editors can
/// show it like any other.
pub fn plan_validate(
    ctx: &Context,
    req: json::PlanValidateRequest,
) -> Result<json::PlanValidateResponse, ApiError> {
    let checked = check(ctx, &req.yaml, req.lang.unwrap_or(ctx.lang));
    let error_count = checked.error_count();
    Ok(json::PlanValidateResponse {
        valid: error_count == 0,
        error_count,
        warning_count: checked.findings.len() - error_count,
        findings: checked.findings,
    })
}

/// Dry-runs a valid plan.
pub fn plan_dry_run(
    ctx: &Context,
    req: json::PlanDryRunRequest,
) -> Result<json::PlanDryRunResponse, ApiError> {
    let checked = check(ctx, &req.yaml, req.lang.unwrap_or(ctx.lang));
    let Some(loaded) = checked
        .loaded
        .as_ref()
        .filter(|_| checked.error_count() == 0)
    else {
        return Err(invalid(&checked));
    };
    let (catalog, _) = load_catalog(ctx);
    let subflows = keiri_plan::designs_index(&ctx.designs_dir)
        .into_iter()
        .map(|(id, (_, plan))| (id, plan))
        .collect();
    let run = keiri_plan::dry_run(&loaded.plan, &catalog, &subflows);
    Ok(json::PlanDryRunResponse {
        plan_id: run.plan_id,
        order: run.order,
        nodes: run.nodes.into_iter().map(json::DryRunNode::from).collect(),
        findings: checked.findings,
    })
}

/// Registers a valid plan to the designs directory, using the current local time.
pub fn plan_register(
    ctx: &Context,
    req: json::PlanRegisterRequest,
) -> Result<json::PlanRegisterResponse, ApiError> {
    plan_register_at(ctx, req, chrono::Local::now().naive_local())
}

/// [`plan_register`] with the time passed in (tests, reproducible runs).
pub fn plan_register_at(
    ctx: &Context,
    req: json::PlanRegisterRequest,
    now: chrono::NaiveDateTime,
) -> Result<json::PlanRegisterResponse, ApiError> {
    let checked = check(ctx, &req.yaml, req.lang.unwrap_or(ctx.lang));
    let Some(loaded) = checked
        .loaded
        .as_ref()
        .filter(|_| checked.error_count() == 0)
    else {
        return Err(invalid(&checked));
    };
    let path = keiri_plan::register(&loaded.plan, &req.yaml, 0, &ctx.designs_dir, now).map_err(
        |e| match e {
            keiri_plan::RegisterError::Write(inner) => ApiError::from(inner),
            other => ApiError::new(
                ErrorCode::IoError,
                format!("{:#}", anyhow::Error::from(other)),
            ),
        },
    )?;
    Ok(json::PlanRegisterResponse {
        plan_id: loaded.plan.id.clone(),
        file_name: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        path: path.display().to_string(),
    })
}
