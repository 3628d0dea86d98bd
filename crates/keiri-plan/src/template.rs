//! Templates: reusable subflows in `templates/<category>/<id>.yaml`, with a contract.
//!
//! A template is a `graph_snippet` (plan nodes) plus the contract [`crate::compose`] needs to
//! merge it with others: `imports` (what the snippet needs from outside, referenced inside it
//! as `${vars.<import>}`), `exports` (which snippet outputs others may use, as
//! `from: "${node.alias}"`) and `vars_defaults` (values for imports and tunables). The
//! category is the directory name, like block specs.
//!
//! Loading follows the block catalog: directories lowest precedence first, the highest semver
//! wins, equal versions go to the later directory, and a broken file is an issue with its
//! line while the others still load.
//!
//! [`validate_template`] checks a template on its own: the snippet is validated by the plan
//! validator as a synthetic plan whose vars are the imports and the defaults, and the
//! contract is checked against the snippet. Findings carry stable `template.*` codes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::{self, Catalog, CatalogIssue, TypeSpec};
use crate::model::{Node, NodeKind, Plan};
use crate::refs::{self, Target};
pub use crate::requirements::RequirementHint;
use crate::validate::{Finding, Options, Severity, validate};
use crate::yaml::escape_pointer;
use crate::{FindingCode, Lang};

/// A setting of a template an instruction may state: its unit and the words that say which
/// setting a number is for (承認 for the approval threshold, 見積 for the quotes threshold).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstructionValue {
    pub unit: ValueUnit,
    /// At least one must be in the clause that states the number.
    pub words: Vec<String>,
}

/// Numbers a template's steps use as they are (an aging's 30, 60 and 90 days): a number of
/// that unit the instruction states beside one of the words is confirmed when it is one of
/// them and said to differ when not, rather than taken for a setting no step has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedValues {
    pub unit: ValueUnit,
    /// In the unit's terms (days, yen, a fraction for percent).
    pub values: Vec<f64>,
    /// At least one must be in the clause that states the number.
    pub words: Vec<String>,
}

/// The unit of a number an instruction states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueUnit {
    /// An amount of money: 5万円, 3,000円, 1千円.
    Yen,
    /// A rate, set as a fraction: 20% is 0.2.
    Percent,
    /// A number of days: 14日.
    Days,
}

/// A template's declaration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TemplateSpec {
    pub id: String,
    /// Semver; the loader keeps the highest version of each id.
    #[serde(default, with = "catalog::version_string")]
    pub version: String,
    /// The Japanese title.
    #[serde(default, deserialize_with = "null_as_default")]
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_en: Option<String>,
    /// The Japanese description.
    #[serde(default, deserialize_with = "null_as_default")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_en: Option<String>,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tags: Vec<String>,
    /// The words that name the template's job. The offline composer chooses the template for
    /// an instruction only when the instruction contains one of them (after NFKC and
    /// lowercasing); `a+b` means both words. Empty: the tags serve instead. This is what keeps
    /// a template that shares only a word such as 請求書 with the instruction out of the plan.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub job_words: Vec<String>,
    /// The template's settings (vars) a number in the instruction may set: 「前月比±15%」 sets
    /// the var whose unit is percent and one of whose words is in the same clause.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "IndexMap::is_empty"
    )]
    pub instruction_values: IndexMap<String, InstructionValue>,
    /// The template's settings a word of the instruction chooses, `var: {value: [words]}`:
    /// 「請求日からの経過日数」 sets `aging_basis` to `invoice_date` when `invoice_date` lists
    /// 請求日から. The default (in `vars_defaults`) is one of the values; words of two values
    /// in one instruction choose neither, and say so.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "IndexMap::is_empty"
    )]
    pub instruction_choices: IndexMap<String, IndexMap<String, Vec<String>>>,
    /// Numbers the steps use as they are, which an instruction may state (see [`FixedValues`]).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub instruction_fixed: Vec<FixedValues>,
    /// What the snippet needs from outside, by name; used inside as `${vars.<name>}`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub imports: IndexMap<String, ImportSpec>,
    /// What the snippet offers to later templates, by name.
    #[serde(default, deserialize_with = "null_as_default")]
    pub exports: IndexMap<String, ExportSpec>,
    /// Values for imports (used when they are not bound) and for the snippet's tunables.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "IndexMap::is_empty"
    )]
    pub vars_defaults: IndexMap<String, Value>,
    /// UI steps worth adding around the snippet (the planner's hint mode shows them). Read
    /// from either shape the formats allow: a list of suggestions, or the spec's
    /// `{layout: [...]}` whose entries are suggestions or bare block ids.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "ui_suggestions_either_shape"
    )]
    pub ui_suggestions: Vec<UiSuggestion>,
    /// The nodes, written like a plan's `graph`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub graph_snippet: Vec<Node>,
    /// The directory the template was found in (`templates/<category>/…`).
    #[serde(skip)]
    pub category: String,
    /// The file it was loaded from.
    #[serde(skip)]
    pub source: PathBuf,
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

fn yes() -> bool {
    true
}

/// An optional field written as `null` (as the spec's examples and some editors write an
/// empty field) reads as its default instead of refusing the whole template.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// One import of a template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportSpec {
    #[serde(rename = "type", default)]
    pub ty: TypeSpec,
    #[serde(default, deserialize_with = "null_as_default")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_en: Option<String>,
    /// A required import must be bound or answered; an optional one needs a default.
    #[serde(default = "yes")]
    pub required: bool,
    /// How to ask for the value when nothing binds the import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirement: Option<RequirementHint>,
    /// Export names (of earlier templates) this import may bind to besides its own name.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub accepts: Vec<String>,
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

/// One export of a template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportSpec {
    /// A whole reference into the snippet: `${node.alias}` (optionally `.path`). Optional in
    /// the file: when absent it is inferred from the snippet's last node (see
    /// [`TemplateSpec::infer_export_sources`]); empty when that is ambiguous, which the
    /// template validator reports.
    #[serde(default)]
    pub from: String,
    #[serde(rename = "type", default)]
    pub ty: TypeSpec,
    #[serde(default, deserialize_with = "null_as_default")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_en: Option<String>,
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

/// A UI step the template suggests but does not force.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UiSuggestion {
    /// A block id, usually a `ui.*` block.
    pub block: String,
    /// The snippet node after which the step fits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_en: Option<String>,
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

fn ui_suggestions_either_shape<'de, D>(deserializer: D) -> Result<Vec<UiSuggestion>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Entry {
        Block(String),
        Full(UiSuggestion),
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Shape {
        List(Vec<Entry>),
        Layout { layout: Vec<Entry> },
    }
    let entries = match Option::<Shape>::deserialize(deserializer)? {
        Some(Shape::List(entries) | Shape::Layout { layout: entries }) => entries,
        None => Vec::new(),
    };
    Ok(entries
        .into_iter()
        .map(|entry| match entry {
            Entry::Full(suggestion) => suggestion,
            Entry::Block(block) => UiSuggestion {
                block,
                after: None,
                reason: String::new(),
                reason_en: None,
                extra: IndexMap::new(),
            },
        })
        .collect())
}

impl TemplateSpec {
    /// Fills every export written without `from` from the snippet's last node: its alias
    /// named like the export, else its only alias. An export that stays ambiguous keeps an
    /// empty `from`, reported by [`validate_template`] as `template.export_from_ambiguous`.
    pub fn infer_export_sources(&mut self) {
        let Some(last) = self.graph_snippet.last() else {
            return;
        };
        let aliases: Vec<&str> = last.aliases().map(|(_, alias)| alias).collect();
        for (name, export) in self.exports.iter_mut() {
            if !export.from.trim().is_empty() {
                continue;
            }
            let alias = if aliases.contains(&name.as_str()) {
                Some(name.as_str())
            } else if let [only] = aliases.as_slice() {
                Some(*only)
            } else {
                None
            };
            if let Some(alias) = alias {
                export.from = format!("${{{}.{alias}}}", last.id);
            }
        }
    }

    /// Where an export points: the snippet node, the alias and the optional path inside it.
    /// `None` when `from` is not exactly one `${node.alias[.path]}` reference.
    pub fn export_target(&self, name: &str) -> Option<(String, String, Option<String>)> {
        self.exports
            .get(name)
            .and_then(|e| parse_export_from(&e.from))
    }
}

/// Parses an export's `from`: exactly one whole reference to a node.
pub(crate) fn parse_export_from(from: &str) -> Option<(String, String, Option<String>)> {
    let (mut found, mut bad) = (Vec::new(), Vec::new());
    refs::scan_str(from, "", &mut found, &mut bad);
    match (found.as_slice(), bad.is_empty()) {
        ([r], true) if r.whole => match &r.target {
            Target::Node { node, alias, path } => Some((node.clone(), alias.clone(), path.clone())),
            _ => None,
        },
        _ => None,
    }
}

/// All loaded templates, by id.
#[derive(Debug, Clone, Default)]
pub struct Templates {
    templates: BTreeMap<String, TemplateSpec>,
}

impl Templates {
    /// Loads every `<dir>/<category>/*.yaml` (and `.yml`) of `dirs`, lowest precedence first,
    /// and the files directly in a directory too (`designs/templates/<id>.yaml`, where
    /// users keep their own; the category is then the directory's name). Missing
    /// directories are skipped.
    pub fn load(dirs: &[PathBuf]) -> (Templates, Vec<CatalogIssue>) {
        let (templates, issues) = catalog::load_latest_from(dirs, 1, load_template);
        (Templates { templates }, issues)
    }

    /// A fingerprint of the template files [`Templates::load`] reads from `dirs` (see
    /// [`crate::Catalog::fingerprint`]).
    pub fn fingerprint(dirs: &[PathBuf]) -> u64 {
        catalog::fingerprint_of(dirs, 1)
    }

    /// Builds a set from templates already in memory (tests, generated templates).
    pub fn from_specs(specs: impl IntoIterator<Item = TemplateSpec>) -> Templates {
        let mut templates = BTreeMap::new();
        let mut issues = Vec::new();
        for mut spec in specs {
            spec.infer_export_sources();
            catalog::insert_latest(&mut templates, spec, &mut issues);
        }
        Templates { templates }
    }

    pub fn get(&self, id: &str) -> Option<&TemplateSpec> {
        self.templates.get(id)
    }

    /// All templates, sorted by id.
    pub fn iter(&self) -> impl Iterator<Item = &TemplateSpec> {
        self.templates.values()
    }

    pub fn len(&self) -> usize {
        self.templates.len()
    }

    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }
}

impl catalog::Versioned for TemplateSpec {
    fn id(&self) -> &str {
        &self.id
    }
    fn version(&self) -> &str {
        &self.version
    }
    fn source(&self) -> &Path {
        &self.source
    }
}

/// Loads one template file; the category is its directory's name.
pub fn load_template(file: &Path) -> Result<TemplateSpec, CatalogIssue> {
    let mut spec: TemplateSpec = catalog::read_yaml_file(file, "a template")?;
    if spec.id.trim().is_empty() {
        return Err(catalog::issue(
            file,
            Some((1, 1)),
            "the template has no id".into(),
        ));
    }
    spec.category = file
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    spec.source = file.to_path_buf();
    spec.infer_export_sources();
    Ok(spec)
}

/// One problem found in a template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TemplateFinding {
    /// The stable rule code, always `template.*`.
    pub code: &'static str,
    pub severity: Severity,
    pub template_id: String,
    /// The snippet node it concerns, if any.
    pub node_id: Option<String>,
    /// JSON pointer into the template document (`/graph_snippet/2/in/rows`, `/exports/x`).
    pub path: String,
    pub message: String,
    pub hint: Option<String>,
    /// For findings from the plan validator on the snippet: that validator's rule code.
    pub plan_code: Option<FindingCode>,
}

/// Characters allowed in a template id: it becomes the prefix of node ids, and a node id
/// must stay usable as the head of a `${node.alias}` reference.
pub(crate) fn is_valid_template_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A name usable as a node id, a var name or an export name inside `${…}`.
pub(crate) fn is_reference_name(name: &str) -> bool {
    !name.trim().is_empty()
        && !name
            .chars()
            .any(|c| c == '.' || c == '$' || c == '{' || c == '}' || c.is_whitespace())
}

struct Checker<'a> {
    template: &'a TemplateSpec,
    lang: Lang,
    findings: Vec<TemplateFinding>,
}

impl Checker<'_> {
    fn push(
        &mut self,
        code: &'static str,
        severity: Severity,
        node_id: Option<&str>,
        path: String,
        message: (String, String),
        hint: Option<(String, String)>,
    ) {
        let pick = |t: (String, String)| match self.lang {
            Lang::Ja => t.0,
            Lang::En => t.1,
        };
        self.findings.push(TemplateFinding {
            code,
            severity,
            template_id: self.template.id.clone(),
            node_id: node_id.map(str::to_string),
            path,
            message: pick(message),
            hint: hint.map(pick),
            plan_code: None,
        });
    }

    fn error(&mut self, code: &'static str, node: Option<&str>, path: String, m: (String, String)) {
        self.push(code, Severity::Error, node, path, m, None);
    }
}

/// Validates one template against the block catalog.
pub fn validate_template(
    template: &TemplateSpec,
    catalog: &Catalog,
    options: &Options,
) -> Vec<TemplateFinding> {
    let mut c = Checker {
        template,
        lang: options.lang,
        findings: Vec::new(),
    };
    check_header(&mut c);
    let snippet = snippet_plan(template);
    check_snippet(&mut c, &snippet, catalog, options);
    check_imports(&mut c, catalog);
    check_exports(&mut c, catalog);
    check_ui_suggestions(&mut c, catalog);
    check_instruction_values(&mut c);
    check_instruction_choices(&mut c);
    check_instruction_fixed(&mut c);
    c.findings
}

/// Every group of fixed numbers has numbers and words.
fn check_instruction_fixed(c: &mut Checker<'_>) {
    let t = c.template;
    for (i, fixed) in t.instruction_fixed.iter().enumerate() {
        if fixed.values.is_empty() || fixed.words.iter().all(|w| w.trim().is_empty()) {
            c.error(
                "template.instruction_value_unknown",
                None,
                format!("/instruction_fixed/{i}"),
                (
                    "instruction_fixed の各要素には values と words が必要です".to_string(),
                    "each instruction_fixed entry needs values and words".to_string(),
                ),
            );
        }
    }
}

/// Every setting a word may choose is one of the template's vars, its default one of the
/// values, and each value names the words that choose it.
fn check_instruction_choices(c: &mut Checker<'_>) {
    let t = c.template;
    for (var, values) in &t.instruction_choices {
        let path = format!("/instruction_choices/{}", crate::yaml::escape_pointer(var));
        let default = t.vars_defaults.get(var).and_then(Value::as_str);
        let problem = if default.is_none() {
            Some((
                format!(
                    "instruction_choices の {var} は vars_defaults に文字列の既定値がありません"
                ),
                format!(
                    "instruction_choices names {var}, which has no text default in vars_defaults"
                ),
            ))
        } else if !default.is_some_and(|d| values.contains_key(d)) {
            Some((
                format!(
                    "instruction_choices の {var} の値に既定値 {} がありません",
                    default.unwrap_or_default()
                ),
                format!(
                    "instruction_choices.{var} lacks its default {}",
                    default.unwrap_or_default()
                ),
            ))
        } else if values
            .values()
            .any(|w| w.iter().all(|w| w.trim().is_empty()))
        {
            Some((
                format!("instruction_choices の {var} に words のない値があります"),
                format!("instruction_choices.{var} has a value without words"),
            ))
        } else {
            None
        };
        if let Some(message) = problem {
            c.error("template.instruction_value_unknown", None, path, message);
        }
    }
}

/// Every setting an instruction may state is one of the template's vars with a default, and
/// names the words that pick it.
fn check_instruction_values(c: &mut Checker<'_>) {
    let t = c.template;
    for (var, value) in &t.instruction_values {
        let path = format!("/instruction_values/{}", crate::yaml::escape_pointer(var));
        if !t.vars_defaults.contains_key(var) {
            c.error(
                "template.instruction_value_unknown",
                None,
                path,
                (
                    format!("instruction_values の {var} は vars_defaults にありません"),
                    format!("instruction_values names {var}, which vars_defaults lacks"),
                ),
            );
        } else if value.words.iter().all(|w| w.trim().is_empty()) {
            c.error(
                "template.instruction_value_unknown",
                None,
                path,
                (
                    format!("instruction_values の {var} に words がありません"),
                    format!("instruction_values.{var} has no words"),
                ),
            );
        }
    }
}

/// Validates every template of a set; findings are grouped by template id.
pub fn validate_templates(
    templates: &Templates,
    catalog: &Catalog,
    options: &Options,
) -> Vec<TemplateFinding> {
    templates
        .iter()
        .flat_map(|t| validate_template(t, catalog, options))
        .collect()
}

/// The synthetic plan the snippet is validated as: its vars are the imports (bound or
/// answered later, so they count as defined) and the defaults.
fn snippet_plan(template: &TemplateSpec) -> Plan {
    let mut vars: IndexMap<String, Value> = template
        .imports
        .keys()
        .map(|k| (k.clone(), Value::Null))
        .collect();
    for (k, v) in &template.vars_defaults {
        vars.insert(k.clone(), v.clone());
    }
    Plan {
        api_version: None,
        id: if template.id.trim().is_empty() {
            "template".into()
        } else {
            template.id.clone()
        },
        description: None,
        version: None,
        vars,
        policy: None,
        ui: None,
        graph: template.graph_snippet.clone(),
        extra: IndexMap::new(),
    }
}

fn check_header(c: &mut Checker<'_>) {
    let t = c.template;
    let id = t.id.clone();
    if id.trim().is_empty() {
        c.error(
            "template.missing_id",
            None,
            "/id".into(),
            (
                "テンプレートに id がありません".into(),
                "the template has no id".into(),
            ),
        );
    } else if !is_valid_template_id(&id) {
        c.error(
            "template.invalid_id",
            None,
            "/id".into(),
            (
                format!("テンプレート id {id} には英数字・_・- だけが使えます"),
                format!("template id {id} may only contain letters, digits, _ and -"),
            ),
        );
    }
    if semver::Version::parse(&t.version).is_err() {
        let v = t.version.clone();
        c.error(
            "template.invalid_version",
            None,
            "/version".into(),
            (
                format!("version {v:?} は semver（例 1.0.0）ではありません"),
                format!("version {v:?} is not semver (e.g. 1.0.0)"),
            ),
        );
    }
    if t.title.trim().is_empty() {
        c.push(
            "template.missing_title",
            Severity::Warning,
            None,
            "/title".into(),
            (
                "title（日本語のタイトル）がありません".into(),
                "the template has no title".into(),
            ),
            None,
        );
    }
    if t.description.trim().is_empty() {
        c.push(
            "template.missing_description",
            Severity::Warning,
            None,
            "/description".into(),
            (
                "description（日本語の説明）がありません".into(),
                "the template has no description".into(),
            ),
            None,
        );
    }
    if t.graph_snippet.is_empty() {
        c.error(
            "template.empty_snippet",
            None,
            "/graph_snippet".into(),
            (
                "graph_snippet にノードがありません".into(),
                "graph_snippet has no nodes".into(),
            ),
        );
    }
}

/// The plan validator's findings on the snippet, re-addressed into the template document.
fn check_snippet(c: &mut Checker<'_>, snippet: &Plan, catalog: &Catalog, options: &Options) {
    // Node ids become `${node.alias}` heads after prefixing, so they need the same care.
    for (path, node) in all_nodes(&snippet.graph, "/graph_snippet") {
        if !node.id.is_empty() && !is_reference_name(&node.id) {
            let id = node.id.clone();
            c.error(
                "template.invalid_node_id",
                Some(&id),
                format!("{path}/id"),
                (
                    format!("ノード id {id} は参照に使えません（. $ {{ }} 空白は不可）"),
                    format!("node id {id} cannot be referenced (no . $ {{ }} or spaces)"),
                ),
            );
        }
    }
    let exported = exported_aliases(c.template);
    for f in validate(snippet, catalog, options) {
        if f.severity == Severity::Warning && warns_about_exported(&f, snippet, &exported) {
            // Exports are used by the templates composed after this one. A node the plan
            // validator saw as feeding nothing does feed them, so only its other outputs are
            // unused.
            if f.code == FindingCode::NodeFeedsNothing {
                unused_besides_exports(c, &f, snippet, &exported);
            }
            continue;
        }
        let code = match f.code {
            FindingCode::NodeDuplicateId => "template.duplicate_node_id",
            _ => "template.snippet",
        };
        let path = match f.path.strip_prefix("/graph") {
            Some(rest) => format!("/graph_snippet{rest}"),
            None => f.path.clone(),
        };
        c.findings.push(TemplateFinding {
            code,
            severity: f.severity,
            template_id: c.template.id.clone(),
            node_id: f.node_id.clone(),
            path,
            message: f.message.clone(),
            hint: f.hint.clone(),
            plan_code: Some(f.code),
        });
    }
}

/// `output.unused` for the outputs of `f`'s node that no export publishes.
fn unused_besides_exports(
    c: &mut Checker<'_>,
    f: &Finding,
    snippet: &Plan,
    exported: &HashSet<(String, String)>,
) {
    let Some(node_id) = &f.node_id else {
        return;
    };
    let Some(node) = snippet.graph.iter().find(|n| &n.id == node_id) else {
        return;
    };
    let base = match f.path.strip_prefix("/graph") {
        Some(rest) => format!("/graph_snippet{rest}"),
        None => f.path.clone(),
    };
    for (local, alias) in node.aliases() {
        if exported.contains(&(node_id.clone(), alias.to_string())) {
            continue;
        }
        c.push(
            "template.snippet",
            Severity::Warning,
            Some(node_id),
            format!("{base}/out/{}", escape_pointer(local)),
            (
                format!("出力 {node_id}.{alias} は使われておらず、export もされていません"),
                format!("output {node_id}.{alias} is neither used nor exported"),
            ),
            None,
        );
        if let Some(last) = c.findings.last_mut() {
            last.plan_code = Some(FindingCode::OutputUnused);
        }
    }
}

/// (node id, alias) pairs named by well-formed exports.
fn exported_aliases(t: &TemplateSpec) -> HashSet<(String, String)> {
    t.exports
        .values()
        .filter_map(|e| parse_export_from(&e.from))
        .map(|(node, alias, _)| (node, alias))
        .collect()
}

/// Whether an unused-output warning is about an output an export publishes.
fn warns_about_exported(f: &Finding, snippet: &Plan, exported: &HashSet<(String, String)>) -> bool {
    let Some(node_id) = &f.node_id else {
        return false;
    };
    match f.code {
        FindingCode::NodeFeedsNothing => exported.iter().any(|(n, _)| n == node_id),
        FindingCode::OutputUnused => {
            let local = f.path.rsplit('/').next().unwrap_or_default();
            let local = crate::yaml::unescape_pointer(local);
            snippet
                .graph
                .iter()
                .find(|n| &n.id == node_id)
                .and_then(|n| n.out.get(&local))
                .and_then(Value::as_str)
                .is_some_and(|alias| exported.contains(&(node_id.clone(), alias.to_string())))
        }
        _ => false,
    }
}

/// Every node of a graph with its pointer, loop bodies right after their loop (pre-order).
/// Recursion depth is bounded like the validator's: loaded documents are at most
/// [`crate::yaml::MAX_DEPTH`] levels deep.
pub(crate) fn all_nodes<'n>(graph: &'n [Node], base: &str) -> Vec<(String, &'n Node)> {
    fn walk<'n>(graph: &'n [Node], base: &str, out: &mut Vec<(String, &'n Node)>) {
        for (i, node) in graph.iter().enumerate() {
            let path = format!("{base}/{i}");
            out.push((path.clone(), node));
            if let Some(body) = &node.body {
                walk(&body.plan.graph, &format!("{path}/body/plan/graph"), out);
            }
        }
    }
    let mut out = Vec::new();
    walk(graph, base, &mut out);
    out
}

/// Every `${vars.x}` name used anywhere in the snippet's values.
fn used_vars(graph: &[Node]) -> HashSet<String> {
    let mut names = HashSet::new();
    for (_, node) in all_nodes(graph, "") {
        let mut found = Vec::new();
        let mut bad = Vec::new();
        for value in node_values(node) {
            refs::scan(&value, "", &mut found, &mut bad);
        }
        for r in found {
            if let Target::Var { name, .. } = r.target {
                names.insert(name);
            }
        }
    }
    names
}

/// The values of one node that may hold references (not its loop body's nodes).
pub(crate) fn node_values(node: &Node) -> Vec<Value> {
    let mut values: Vec<Value> = node.inputs.values().cloned().collect();
    if let Some(w) = &node.when {
        values.push(Value::String(w.expr()));
    }
    if let Some(f) = &node.foreach {
        values.extend(f.input.iter().cloned());
        values.extend(f.items.iter().cloned());
        values.extend(f.extra.values().cloned());
    }
    if let Some(w) = &node.while_loop {
        if let Some(c) = &w.condition {
            values.push(Value::String(c.expr()));
        }
        values.extend(w.extra.values().cloned());
    }
    if let Some(call) = &node.call {
        values.extend(call.inputs.values().cloned());
        values.extend(call.extra.values().cloned());
    }
    if let Some(p) = &node.policy {
        values.extend(p.extra.values().cloned());
    }
    if let Some(body) = &node.body {
        values.extend(body.plan.vars.values().cloned());
        values.extend(body.extra.values().cloned());
    }
    values.extend(node.extra.values().cloned());
    values
}

fn check_imports(c: &mut Checker<'_>, catalog: &Catalog) {
    let t = c.template;
    let used = used_vars(&t.graph_snippet);
    for (name, import) in &t.imports {
        let path = format!("/imports/{}", escape_pointer(name));
        if !is_reference_name(name) {
            c.error(
                "template.invalid_import_name",
                None,
                path.clone(),
                (
                    format!("import 名 {name} は ${{vars.…}} に使えません"),
                    format!("import name {name} cannot be used in ${{vars.…}}"),
                ),
            );
            continue;
        }
        if !used.contains(name) {
            c.error(
                "template.import_unused",
                None,
                path.clone(),
                (
                    format!("import {name} は graph_snippet のどこでも ${{vars.{name}}} として使われていません"),
                    format!("import {name} is never used as ${{vars.{name}}} in graph_snippet"),
                ),
            );
        }
        if !import.required && !t.vars_defaults.contains_key(name) {
            c.error(
                "template.import_default_missing",
                None,
                path.clone(),
                (
                    format!("任意の import {name} には vars_defaults に既定値が必要です"),
                    format!("optional import {name} needs a value in vars_defaults"),
                ),
            );
        }
    }
    // An import's declared type must fit every block input it feeds as a whole value.
    for (path, node) in all_nodes(&t.graph_snippet, "/graph_snippet") {
        if node.kind() != NodeKind::Block {
            continue;
        }
        let Some(spec) = node.block.as_deref().and_then(|b| catalog.get(b)) else {
            continue;
        };
        for (key, value) in &node.inputs {
            let Some(name) = whole_var(value) else {
                continue;
            };
            let (Some(import), Some(port)) = (t.imports.get(&name), spec.inputs.get(key)) else {
                continue;
            };
            if !port.ty.accepts_any_of(&import.ty) {
                let id = node.id.clone();
                let block = spec.id.clone();
                c.error(
                    "template.import_type_mismatch",
                    Some(&id),
                    format!("{path}/in/{}", escape_pointer(key)),
                    (
                        format!(
                            "import {name} は {} 型ですが、{block} の {key} は {} 型です",
                            import.ty.display(),
                            port.ty.display()
                        ),
                        format!(
                            "import {name} is {} but {key} of {block} expects {}",
                            import.ty.display(),
                            port.ty.display()
                        ),
                    ),
                );
            }
        }
    }
    for name in t.vars_defaults.keys() {
        if !used.contains(name) && !t.imports.contains_key(name) {
            c.push(
                "template.default_unused",
                Severity::Warning,
                None,
                format!("/vars_defaults/{}", escape_pointer(name)),
                (
                    format!("vars_defaults の {name} はどこでも使われていません"),
                    format!("vars_defaults entry {name} is never used"),
                ),
                None,
            );
        }
    }
}

/// The var name of a value that is exactly one `${vars.x}` reference.
pub(crate) fn whole_var(value: &Value) -> Option<String> {
    let Value::String(s) = value else {
        return None;
    };
    let (mut found, mut bad) = (Vec::new(), Vec::new());
    refs::scan_str(s, "", &mut found, &mut bad);
    match found.as_slice() {
        [r] if r.whole && bad.is_empty() => match &r.target {
            Target::Var { name, path: None } => Some(name.clone()),
            _ => None,
        },
        _ => None,
    }
}

fn check_exports(c: &mut Checker<'_>, catalog: &Catalog) {
    let t = c.template;
    let top: HashMap<&str, &Node> = t.graph_snippet.iter().map(|n| (n.id.as_str(), n)).collect();
    for (name, export) in &t.exports {
        let path = format!("/exports/{}", escape_pointer(name));
        if !is_reference_name(name) {
            c.error(
                "template.invalid_export_name",
                None,
                path.clone(),
                (
                    format!("export 名 {name} は参照に使えません"),
                    format!("export name {name} cannot be referenced"),
                ),
            );
        }
        if export.from.trim().is_empty() {
            c.error(
                "template.export_from_ambiguous",
                None,
                path.clone(),
                (
                    format!(
                        "export {name} に from がなく、最後のノードの出力から一つに決められません。from: \"${{ノード.別名}}\" を書いてください"
                    ),
                    format!(
                        "export {name} has no from and the snippet's last node does not determine one; write from: \"${{node.alias}}\""
                    ),
                ),
            );
            continue;
        }
        let Some((node_id, alias, sub_path)) = parse_export_from(&export.from) else {
            let from = export.from.clone();
            c.error(
                "template.export_malformed",
                None,
                format!("{path}/from"),
                (
                    format!(
                        "export {name} の from {from:?} は ${{ノード.別名}} の形ではありません"
                    ),
                    format!("from {from:?} of export {name} is not a ${{node.alias}} reference"),
                ),
            );
            continue;
        };
        let Some(node) = top.get(node_id.as_str()) else {
            // Loop-body nodes are not visible outside their loop, so only top-level ones count.
            c.error(
                "template.export_unknown_node",
                None,
                format!("{path}/from"),
                (
                    format!("export {name} の参照先ノード {node_id} は graph_snippet の最上位にありません"),
                    format!("export {name} points at node {node_id}, which is not a top-level snippet node"),
                ),
            );
            continue;
        };
        let Some((local, _)) = node.aliases().find(|(_, a)| *a == alias) else {
            let known: Vec<&str> = node.aliases().map(|(_, a)| a).collect();
            c.push(
                "template.export_unknown_alias",
                Severity::Error,
                Some(&node_id),
                format!("{path}/from"),
                (
                    format!("export {name}: ノード {node_id} は {alias} を出力していません"),
                    format!("export {name}: node {node_id} publishes no alias {alias}"),
                ),
                Some((
                    format!("{node_id} の out: {}", known.join(", ")),
                    format!("{node_id} out: {}", known.join(", ")),
                )),
            );
            continue;
        };
        if sub_path.is_some() || node.kind() != NodeKind::Block {
            continue;
        }
        let out_ty = node
            .block
            .as_deref()
            .and_then(|b| catalog.get(b))
            .and_then(|s| s.outputs.get(local))
            .map(|p| p.ty.clone());
        if let Some(out_ty) = out_ty
            && !export.ty.accepts_any_of(&out_ty)
        {
            c.error(
                "template.export_type_mismatch",
                Some(&node_id),
                format!("{path}/type"),
                (
                    format!(
                        "export {name} は {} 型と宣言されていますが、{node_id}.{alias} は {} 型です",
                        export.ty.display(),
                        out_ty.display()
                    ),
                    format!(
                        "export {name} is declared {} but {node_id}.{alias} is {}",
                        export.ty.display(),
                        out_ty.display()
                    ),
                ),
            );
        }
    }
}

fn check_ui_suggestions(c: &mut Checker<'_>, catalog: &Catalog) {
    let t = c.template;
    let ids: HashSet<&str> = t.graph_snippet.iter().map(|n| n.id.as_str()).collect();
    for (i, s) in t.ui_suggestions.iter().enumerate() {
        let path = format!("/ui_suggestions/{i}");
        if catalog.get(&s.block).is_none() {
            let block = s.block.clone();
            c.error(
                "template.ui_suggestion_unknown_block",
                None,
                format!("{path}/block"),
                (
                    format!("ui_suggestions のブロック {block} はカタログにありません"),
                    format!("suggested block {block} is not in the catalog"),
                ),
            );
        }
        if let Some(after) = &s.after
            && !ids.contains(after.as_str())
        {
            let after = after.clone();
            c.error(
                "template.ui_suggestion_unknown_node",
                None,
                format!("{path}/after"),
                (
                    format!(
                        "ui_suggestions の after {after} は graph_snippet のノードではありません"
                    ),
                    format!("after {after} is not a snippet node"),
                ),
            );
        }
    }
}
