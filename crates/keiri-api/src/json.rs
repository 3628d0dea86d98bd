//! Transport DTOs: what crosses the API boundary as JSON (Tauri IPC, HTTP, CLI `--json`).
//!
//! Core types are converted explicitly into these, so the core can change without
//! changing the wire format (see docs/api.md).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Lang;

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CatalogListRequest {
    #[serde(default)]
    pub query: Option<String>,
    #[serde(default)]
    pub lang: Option<Lang>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CatalogListResponse {
    pub blocks: Vec<BlockSummary>,
    pub issues: Vec<CatalogIssue>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BlockSummary {
    pub id: String,
    pub version: String,
    pub category: String,
    pub title_ja: String,
    pub title_en: String,
    pub description_ja: String,
    pub description_en: String,
    pub tags: Vec<String>,
    pub inputs: Vec<Port>,
    pub outputs: Vec<Port>,
    pub source: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Port {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub required: bool,
    pub description: String,
    pub description_en: String,
    #[serde(rename = "enum")]
    pub enum_values: Option<Vec<Value>>,
    pub default: Option<Value>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CatalogIssue {
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

/// A plan to check: its YAML text and the message language.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanRequest {
    /// The plan YAML text (keiri_agent v0 format).
    pub yaml: String,
    /// Message language, `ja` or `en`; the server's default when left out.
    #[serde(default)]
    #[schemars(schema_with = "lang_schema")]
    pub lang: Option<Lang>,
}

/// The schema of [`Lang`], which lives in keiri-plan (a crate that knows no schemas).
pub(crate) fn lang_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["string", "null"], "enum": ["ja", "en", null]})
}

/// The schema of the planner's `ApplyMode` (keiri-design knows no schemas either).
pub(crate) fn apply_mode_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["string", "null"], "enum": ["compose", "hint", "llm-only", null]})
}

/// A plan to validate: its YAML text, the message language and, to check it as a run would
/// be, that run's vars and input files over the plan's own (`keiri validate --var/--input`).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanValidateRequest {
    /// The plan YAML text (keiri_agent v0 format).
    pub yaml: String,
    /// Message language, `ja` or `en`; the server's default when left out.
    #[serde(default)]
    #[schemars(schema_with = "lang_schema")]
    pub lang: Option<Lang>,
    /// Vars of a run, over the plan's own: a column or a file a var names is checked as that
    /// run would read it.
    #[serde(default)]
    pub vars: indexmap::IndexMap<String, serde_json::Value>,
    /// Input files of a run, `NAME → path`: each must exist and pass the path policy, and sets
    /// `vars.NAME`, as `plan_run`'s `inputs` do; their columns are checked.
    #[serde(default)]
    pub inputs: indexmap::IndexMap<String, String>,
}
pub type PlanDryRunRequest = PlanRequest;

/// A plan to register: its YAML text, the message language and, when the client showed the
/// file name before saving, the `yyyymmddHHMM` stamp of that name.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanRegisterRequest {
    /// The plan YAML text (keiri_agent v0 format).
    pub yaml: String,
    /// Message language, `ja` or `en`; the server's default when left out.
    #[serde(default)]
    #[schemars(schema_with = "lang_schema")]
    pub lang: Option<Lang>,
    /// The `yyyymmddHHMM` of the file name the client previewed
    /// (`designs/<plan_id>_<stamp>.yaml`): the file is saved under it, so the name the person
    /// confirmed is the name written even when the minute rolled over in between. The server's
    /// clock is used when it is left out.
    #[serde(default)]
    pub stamp: Option<String>,
}

/// The CLI and other callers that have no preview register at the server's time.
impl From<PlanRequest> for PlanRegisterRequest {
    fn from(req: PlanRequest) -> Self {
        PlanRegisterRequest {
            yaml: req.yaml,
            lang: req.lang,
            stamp: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PlanValidateResponse {
    pub valid: bool,
    pub error_count: usize,
    pub warning_count: usize,
    pub findings: Vec<Finding>,
    /// The plan's nodes, the edges its references make and the vars it uses without a value
    /// (keiri-plan's [`keiri_plan::plan_graph`]); `null` when the text is not a plan.
    pub graph: Option<keiri_plan::PlanGraph>,
}

/// A keiri_agent v0 plan to import: its YAML text and the message language.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanImportV0Request {
    /// The v0 plan's YAML text.
    pub yaml: String,
    /// Message language, `ja` or `en`; the server's default when left out.
    #[serde(default)]
    #[schemars(schema_with = "lang_schema")]
    pub lang: Option<Lang>,
}

/// A v0 plan rewritten for this catalog: what was rewritten, what was not, and the verdict of
/// `plan_validate` on the result.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PlanImportV0Response {
    /// The rewritten plan (re-serialised: the comments of the input are not kept).
    pub yaml: String,
    /// Block ids and keys rewritten one to one.
    pub rewritten: Vec<keiri_plan::ImportItem>,
    /// What has no one-to-one equivalent and was left as it was, to rewrite by hand.
    pub unmapped: Vec<keiri_plan::ImportItem>,
    /// `plan_validate` on the rewritten plan.
    pub validation: PlanValidateResponse,
}

/// A plan finding (code, severity, node, JSON pointer, message, hint, line and column):
/// keiri-plan's own type, serialised as it is.
pub use keiri_plan::{Finding, FindingCode, Severity};

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PlanDryRunResponse {
    pub plan_id: String,
    pub order: Vec<String>,
    pub nodes: Vec<DryRunNode>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DryRunNode {
    pub id: String,
    pub kind: keiri_plan::NodeKind,
    pub block: Option<String>,
    pub depends_on: Vec<String>,
    pub inputs: Value,
    pub outputs: Value,
    pub when: Option<String>,
    pub children: Vec<DryRunNode>,
    /// For a workbook patch node (`excel.patch_workbook`): the per-cell preview of its ops;
    /// `null` for every other node.
    pub workbook: Option<WorkbookPreview>,
}

/// Whether a workbook patch node could be previewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WorkbookPreviewStatus {
    /// The ops were dry-run against the workbook: see `response`.
    Ready,
    /// An input depends on something only known at run time (another node's output, an
    /// environment value, a loop item or an undefined var): nothing was read.
    Unresolved,
    /// The request could not be built or the workbook could not be read: see `code`.
    Failed,
}

/// The dry-run of a workbook patch node's ops (`workbook_patch` with `dry_run: true`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WorkbookPreview {
    pub status: WorkbookPreviewStatus,
    /// Why there is no preview (`unresolved`, `failed`), in the request's language.
    pub message: Option<String>,
    /// The API error code of a `failed` preview.
    pub code: Option<crate::ErrorCode>,
    /// The request that applies the node for real (`dry_run: false`, with inverse ops and the
    /// formula check); a client sends it to `workbook_patch` after the person confirms.
    pub request: Option<keiri_xlsx::PatchRequest>,
    /// The dry-run's diff, warnings, op error, inverse ops and formula issues.
    pub response: Option<keiri_xlsx::PatchResponse>,
    /// The workbook's cells around the changes as they are now (header labels, neighbouring
    /// values, formulas with their cached values), so the grid draws them instead of blanks.
    pub context: Vec<crate::SheetContext>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PlanRegisterResponse {
    pub plan_id: String,
    pub path: String,
    pub file_name: String,
}

impl From<keiri_plan::DryRunNode> for DryRunNode {
    fn from(n: keiri_plan::DryRunNode) -> Self {
        DryRunNode {
            id: n.id,
            kind: n.kind,
            block: n.block,
            depends_on: n.depends_on,
            inputs: n.inputs,
            outputs: n.outputs,
            when: n.when,
            children: n.children.into_iter().map(DryRunNode::from).collect(),
            workbook: None,
        }
    }
}

impl From<&keiri_plan::BlockSpec> for BlockSummary {
    fn from(b: &keiri_plan::BlockSpec) -> Self {
        let ports = |ports: &indexmap::IndexMap<String, keiri_plan::PortSpec>| -> Vec<Port> {
            ports
                .iter()
                .map(|(name, p)| Port {
                    name: name.clone(),
                    ty: p.ty.display(),
                    required: p.required,
                    description: p.description.clone(),
                    description_en: p.description_en.clone().unwrap_or_default(),
                    enum_values: p.enum_values.clone(),
                    default: p.default.clone(),
                })
                .collect()
        };
        BlockSummary {
            id: b.id.clone(),
            version: b.version.clone(),
            category: b.category.clone(),
            title_ja: b.title_ja.clone().unwrap_or_default(),
            title_en: b.title_en.clone().unwrap_or_default(),
            description_ja: b.description.clone(),
            description_en: b.description_en.clone().unwrap_or_default(),
            tags: b.tags.clone(),
            inputs: ports(&b.inputs),
            outputs: ports(&b.outputs),
            source: b.source.display().to_string(),
        }
    }
}
