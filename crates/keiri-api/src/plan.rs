//! Plan use cases: catalog listing, validation, dry-run (with per-cell previews of workbook
//! patch nodes) and registering.

use std::collections::HashSet;
use std::sync::Arc;

use keiri_plan::Catalog;

use crate::json;
use crate::{ApiError, Context, ErrorCode, Lang};

/// The catalog of the context's directories (loaded once, reloaded when a spec changes).
pub fn load_catalog(ctx: &Context) -> (Arc<Catalog>, Vec<keiri_plan::CatalogIssue>) {
    ctx.specs.catalog(&ctx.catalog_dirs)
}

/// The templates of the context's directories (loaded once, reloaded when one changes).
pub fn load_templates(
    ctx: &Context,
) -> (Arc<keiri_plan::Templates>, Vec<keiri_plan::CatalogIssue>) {
    ctx.specs.templates(&ctx.template_dirs)
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
crate::surface::function!(plain catalog_list(crate::json::CatalogListRequest) -> crate::json::CatalogListResponse);

pub(crate) use keiri_plan::Checked;

/// Reads and validates plan text with the workspace's catalog, registered plans and the
/// files the plan reads (see [`keiri_plan::check`]).
pub(crate) fn check(ctx: &Context, yaml: &str, lang: Lang) -> Checked {
    check_as_run(ctx, yaml, lang, &Default::default())
}

/// [`check`] with a run's vars over the plan's own: what a run checks before it starts.
pub(crate) fn check_as_run(
    ctx: &Context,
    yaml: &str,
    lang: Lang,
    vars: &indexmap::IndexMap<String, serde_json::Value>,
) -> Checked {
    let (catalog, _) = load_catalog(ctx);
    keiri_design::check_plan_as_run(
        yaml,
        lang,
        &catalog,
        &ctx.path_policy(),
        &ctx.designs_dir,
        vars,
    )
}

/// The tables of the CSV/Excel files `plan` names (literal paths in its vars and inputs),
/// read through the caller's path policy: validation checks the columns nodes name against
/// them (`column.unknown`), so the editor, 不足項目, dry-run and register all see a plan that
/// does not fit its files.
pub(crate) fn plan_file_schemas(
    ctx: &Context,
    plan: &keiri_plan::Plan,
) -> Vec<keiri_plan::FileSchema> {
    keiri_design::file_schemas(&ctx.path_policy(), &keiri_design::table_paths(plan))
}

pub(crate) fn invalid(checked: &Checked) -> ApiError {
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
    let mut vars = req.vars;
    vars.extend(crate::run::input_vars(ctx, &req.inputs)?);
    let checked = check_as_run(ctx, &req.yaml, req.lang.unwrap_or(ctx.lang), &vars);
    let error_count = checked.error_count();
    Ok(json::PlanValidateResponse {
        valid: error_count == 0,
        error_count,
        warning_count: checked.findings.len() - error_count,
        graph: checked
            .loaded
            .as_ref()
            .map(|l| keiri_plan::plan_graph(&l.plan)),
        findings: checked.findings,
    })
}
crate::surface::function!(plain plan_validate(crate::json::PlanValidateRequest) -> crate::json::PlanValidateResponse);

/// Rewrites a keiri_agent v0 plan for this catalog ([`keiri_plan::import_v0`]: block ids and
/// the keys that map one to one) and validates the result; what does not map is listed.
pub fn plan_import_v0(
    ctx: &Context,
    req: json::PlanImportV0Request,
) -> Result<json::PlanImportV0Response, ApiError> {
    let loaded = keiri_plan::load_plan(&req.yaml)
        .map_err(|e| ApiError::new(ErrorCode::YamlParse, e.to_string()))?;
    let (catalog, _) = load_catalog(ctx);
    let imported = keiri_plan::import_v0(&loaded.plan, &catalog);
    let yaml = keiri_plan::save_plan(&imported.plan)
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
    let validation = plan_validate(
        ctx,
        json::PlanValidateRequest {
            yaml: yaml.clone(),
            lang: req.lang,
            vars: Default::default(),
            inputs: Default::default(),
        },
    )?;
    Ok(json::PlanImportV0Response {
        yaml,
        rewritten: imported.rewritten,
        unmapped: imported.unmapped,
        validation,
    })
}
crate::surface::function!(plain plan_import_v0(crate::json::PlanImportV0Request) -> crate::json::PlanImportV0Response);

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
    let mut nodes: Vec<json::DryRunNode> =
        run.nodes.into_iter().map(json::DryRunNode::from).collect();
    let vars: HashSet<&str> = loaded.plan.vars.keys().map(String::as_str).collect();
    let lang = req.lang.unwrap_or(ctx.lang);
    attach_workbook_previews(ctx, lang, &mut nodes, &loaded.plan.graph, &vars);
    Ok(json::PlanDryRunResponse {
        plan_id: run.plan_id,
        order: run.order,
        nodes,
        findings: checked.findings,
    })
}
crate::surface::function!(plain plan_dry_run(crate::json::PlanDryRunRequest) -> crate::json::PlanDryRunResponse);

/// The block whose nodes get a workbook preview in a dry-run: it applies `exstruct_patch`
/// operations (keiri-xlsx) to an existing workbook.
pub const WORKBOOK_PATCH_BLOCK: &str = "excel.patch_workbook";

/// Gives every workbook patch node of `nodes` (and of loop bodies) its preview. `raw` is the
/// plan level the nodes come from; `vars` are the vars whose values the dry-run knows.
/// Subflow children are left without one: their inputs come from the call, not the file.
fn attach_workbook_previews(
    ctx: &Context,
    lang: Lang,
    nodes: &mut [json::DryRunNode],
    raw: &[keiri_plan::Node],
    vars: &HashSet<&str>,
) {
    for node in nodes {
        let Some(source) = raw.iter().find(|r| r.id == node.id) else {
            continue;
        };
        if node.kind == keiri_plan::NodeKind::Block
            && node.block.as_deref() == Some(WORKBOOK_PATCH_BLOCK)
        {
            node.workbook = Some(workbook_preview(ctx, lang, source, &node.inputs, vars));
        }
        if node.kind == keiri_plan::NodeKind::Loop
            && let Some(body) = &source.body
        {
            let mut inner = vars.clone();
            inner.extend(body.plan.vars.keys().map(String::as_str));
            attach_workbook_previews(ctx, lang, &mut node.children, &body.plan.graph, &inner);
        }
    }
}

/// Dry-runs one workbook patch node's ops. Only inputs that are literal or come from known
/// vars are concrete in a dry-run (everything else is a sample such as `<read.rows>`), so a
/// node that references anything else is `unresolved` rather than previewed with samples.
fn workbook_preview(
    ctx: &Context,
    lang: Lang,
    source: &keiri_plan::Node,
    inputs: &serde_json::Value,
    vars: &HashSet<&str>,
) -> json::WorkbookPreview {
    let pending = keiri_plan::refs::known_only_at_run(source.inputs.values(), vars);
    if !pending.is_empty() {
        let list = pending.join(", ");
        return preview_without(
            json::WorkbookPreviewStatus::Unresolved,
            None,
            match lang {
                Lang::Ja => {
                    format!("実行時にしか決まらない入力があるため、プレビューできません: {list}")
                }
                Lang::En => format!("inputs depend on values known only at run time: {list}"),
            },
        );
    }
    let request = match keiri_run::blocks::output::patch_workbook_request(inputs) {
        Ok(r) => r,
        Err(e) => {
            return preview_without(
                json::WorkbookPreviewStatus::Failed,
                Some(ErrorCode::InvalidRequest),
                match lang {
                    Lang::Ja => {
                        format!("ブロックの入力から workbook_patch の要求を作れません: {e}")
                    }
                    Lang::En => format!("the inputs do not make a workbook_patch request: {e}"),
                },
            );
        }
    };
    let mut preview = request.clone();
    preview.dry_run = true;
    match crate::workbook_patch(ctx, preview) {
        Ok(response) => json::WorkbookPreview {
            status: json::WorkbookPreviewStatus::Ready,
            message: None,
            code: None,
            // The source workbook as it is: the neighbours of each change, and the values the
            // changed cells hold before it (a formula's cached value included).
            context: ctx
                .path_policy()
                .resolve_existing(&request.xlsx_path)
                .map(|path| keiri_docs::grid_context(&path, &response.patch_diff))
                .unwrap_or_default(),
            request: Some(request),
            response: Some(response),
        },
        Err(e) => preview_without(json::WorkbookPreviewStatus::Failed, Some(e.code), e.message),
    }
}

fn preview_without(
    status: json::WorkbookPreviewStatus,
    code: Option<ErrorCode>,
    message: String,
) -> json::WorkbookPreview {
    json::WorkbookPreview {
        status,
        message: Some(message),
        code,
        request: None,
        response: None,
        context: Vec::new(),
    }
}

/// Registers a valid plan to the designs directory, under the stamp the client previewed or
/// else the current local time. Takes a plain [`json::PlanRequest`] too (the CLI's).
pub fn plan_register(
    ctx: &Context,
    req: impl Into<json::PlanRegisterRequest>,
) -> Result<json::PlanRegisterResponse, ApiError> {
    plan_register_at(ctx, req.into(), chrono::Local::now().naive_local())
}
crate::surface::function!(plain plan_register(crate::json::PlanRegisterRequest) -> crate::json::PlanRegisterResponse);

/// [`plan_register`] with the time passed in (tests, reproducible runs); a `stamp` in the
/// request wins over `now`.
pub fn plan_register_at(
    ctx: &Context,
    req: json::PlanRegisterRequest,
    now: chrono::NaiveDateTime,
) -> Result<json::PlanRegisterResponse, ApiError> {
    // The stamp is checked before anything else: a name the client could not have shown
    // (not twelve digits of a real minute) is a bad request, not a reason to pick another.
    let now = match req.stamp.as_deref() {
        None => now,
        Some(stamp) => keiri_plan::parse_stamp(stamp).ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidRequest,
                format!("stamp {stamp:?} is not a yyyymmddHHMM date and time"),
            )
        })?,
    };
    let checked = check(ctx, &req.yaml, req.lang.unwrap_or(ctx.lang));
    let Some(loaded) = checked
        .loaded
        .as_ref()
        .filter(|_| checked.error_count() == 0)
    else {
        return Err(invalid(&checked));
    };
    // Leftovers of a register that was killed mid-save (the CLI's `keiri register` sweeps
    // the same way); a sweep that fails only leaves them for the next one.
    let _ = keiri_fs::sweep(&ctx.designs_dir);
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

#[derive(Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanListRequest {}

#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct PlanListResponse {
    /// One entry per plan id, by id: the newest registration of each, the one a run by id or
    /// a subflow call gets. Files in the designs folder that are not plans are left out.
    pub plans: Vec<RegisteredPlan>,
}

/// A plan registered in the designs folder, ready to run.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct RegisteredPlan {
    pub id: String,
    pub description: Option<String>,
    pub version: Option<String>,
    /// The file, relative to the workspace when it is inside it (`designs/<id>_<stamp>.yaml`).
    pub file: String,
    /// Top-level nodes of its graph.
    pub nodes: usize,
    /// The vars without a value: what a run must be given (`--var`, an input, an answer).
    pub open_vars: Vec<String>,
}

/// The plans registered in the designs folder (`plan_register`'s output), newest per id.
pub fn plan_list(ctx: &Context, _req: PlanListRequest) -> Result<PlanListResponse, ApiError> {
    let mut plans: Vec<RegisteredPlan> = keiri_plan::designs_index(&ctx.designs_dir)
        .into_iter()
        .map(|(id, (path, plan))| RegisteredPlan {
            id,
            description: plan.description,
            version: plan.version,
            file: path
                .strip_prefix(&ctx.workspace)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/"),
            nodes: plan.graph.len(),
            open_vars: plan
                .vars
                .iter()
                .filter(|(_, value)| value.is_null())
                .map(|(name, _)| name.clone())
                .collect(),
        })
        .collect();
    plans.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(PlanListResponse { plans })
}
crate::surface::function!(plain plan_list(PlanListRequest) -> PlanListResponse);

#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanGetRequest {
    /// The plan id (`plan_list`'s `id`).
    pub id: String,
}

#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct PlanGetResponse {
    pub id: String,
    /// The file, as `plan_list` gives it.
    pub file: String,
    /// The plan's YAML text as it was registered.
    pub yaml: String,
    /// What a rerun takes (「新しいファイルで実行」): one question per var the nodes read, as
    /// the plan's questions word it, with the plan's own value as its `default`; files first.
    /// Empty for a plan that does not load.
    pub inputs: Vec<keiri_plan::Requirement>,
}

/// The largest registered plan `plan_get` reads: far above any plan, far below what would
/// strain a client.
const MAX_PLAN_BYTES: u64 = 8 * 1024 * 1024;

/// A registered plan's text by id: the newest registration, the one `plan_list` shows and a
/// run by id gets, to open it in an editor or a client.
pub fn plan_get(ctx: &Context, req: PlanGetRequest) -> Result<PlanGetResponse, ApiError> {
    let Some((path, _)) = keiri_plan::designs_index(&ctx.designs_dir).remove(&req.id) else {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            format!(
                "no registered plan has the id {:?} (plan_list lists them)",
                req.id
            ),
        ));
    };
    let size = std::fs::metadata(&path)
        .map_err(|e| ApiError::new(ErrorCode::IoError, format!("{}: {e}", path.display())))?
        .len();
    if size > MAX_PLAN_BYTES {
        return Err(ApiError::new(
            ErrorCode::FileTooLarge,
            format!("{} is {size} bytes, over {MAX_PLAN_BYTES}", path.display()),
        ));
    }
    let yaml = std::fs::read_to_string(&path)
        .map_err(|e| ApiError::new(ErrorCode::IoError, format!("{}: {e}", path.display())))?;
    Ok(PlanGetResponse {
        inputs: rerun_inputs(ctx, &yaml),
        id: req.id,
        file: path
            .strip_prefix(&ctx.workspace)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/"),
        yaml,
    })
}
crate::surface::function!(plain plan_get(PlanGetRequest) -> PlanGetResponse);

/// The questions a rerun of a plan asks: the requirements the plan would raise with every var
/// unset (so each var the nodes read is asked, typed by the block input it feeds), each with
/// the plan's own value as its default; files first, then the plan's order.
fn rerun_inputs(ctx: &Context, yaml: &str) -> Vec<keiri_plan::Requirement> {
    let Ok(loaded) = keiri_plan::load_plan(yaml) else {
        return Vec::new();
    };
    let mut plan = loaded.plan;
    let own = std::mem::take(&mut plan.vars);
    plan.vars = own
        .keys()
        .map(|k| (k.clone(), serde_json::Value::Null))
        .collect();
    let (catalog, _) = load_catalog(ctx);
    let mut inputs: Vec<keiri_plan::Requirement> =
        keiri_plan::build_requirements(&plan, &[], &catalog)
            .into_iter()
            .filter(|r| r.target.var.is_some())
            .collect();
    for r in &mut inputs {
        if let Some(value) = r.target.var.as_deref().and_then(|v| own.get(v))
            && !value.is_null()
        {
            r.default = Some(value.clone());
        }
    }
    inputs.sort_by_key(|r| r.kind != keiri_plan::RequirementKind::File);
    inputs
}
