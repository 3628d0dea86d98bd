//! Compose: merge templates into one plan by their contracts, without an LLM.
//!
//! Each template's snippet is copied with its node ids prefixed by the template id
//! (`invoice_duplicate_detection__read`), and every `${node.alias}` reference inside it is
//! rewritten to match, wherever it is (inputs, `when`, `foreach`, `while`, subflow inputs,
//! loop bodies, extra fields). Each import is then bound, in this order, to
//!
//! 1. an explicit binding from [`ComposeOptions::bindings`],
//! 2. the export of an earlier template with the import's name, or a name it `accepts`
//!    (the nearest earlier template first), or
//! 3. a plan var `${vars.<import>}`: its value comes from [`ComposeOptions::vars`] or the
//!    template's `vars_defaults`; with neither it stays undefined and is listed in
//!    [`Composition::unbound_imports`], so the requirements builder turns it into a question.
//!
//! What cannot be merged cleanly is reported as a [`Conflict`] for the user to resolve, never
//! decided silently: two templates with different defaults for one var, an import bound to
//! an export of an incompatible type, an ambiguous automatic binding, a template listed
//! twice. Options that cannot be honoured at all (an unknown binding target, colliding node
//! ids) are a [`ComposeError`].

use std::collections::{HashMap, HashSet};

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::Lang;
use crate::catalog::{Catalog, TypeSpec};
use crate::model::{Node, Plan};
use crate::refs::{self, Target};
use crate::requirements::{Requirement, build_requirements};
use crate::template::{
    RequirementHint, TemplateSpec, UiSuggestion, is_valid_template_id, parse_export_from,
};
use crate::validate::{DEFAULT_LOOP_VAR, Finding};

/// Joins a template id and a snippet node id into a plan node id.
pub const ID_SEPARATOR: &str = "__";

/// The plan node id of snippet node `node_id` of template `template_id`.
pub fn prefixed_id(template_id: &str, node_id: &str) -> String {
    format!("{template_id}{ID_SEPARATOR}{node_id}")
}

/// What to compose besides the templates.
#[derive(Debug, Clone, Default)]
pub struct ComposeOptions {
    /// The id of the composed plan.
    pub plan_id: String,
    /// Explicit bindings: `import` or `template.import` → `template.export`. The
    /// template-qualified key wins over the bare one.
    pub bindings: IndexMap<String, String>,
    /// Plan vars set by the caller (answers, CLI `--var`); they win over `vars_defaults`.
    pub vars: IndexMap<String, Value>,
}

/// The result of [`compose`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Composition {
    pub plan: Plan,
    pub conflicts: Vec<Conflict>,
    /// Imports bound to a plan var that has no value yet: questions to ask.
    pub unbound_imports: Vec<UnboundImport>,
    /// How every import was resolved, in template and import order.
    pub bindings: Vec<ImportBinding>,
    /// Every template's exports as references into the composed plan.
    pub exports: Vec<PublishedExport>,
    /// The templates' UI suggestions, `after` rewritten to the composed node id.
    pub ui_suggestions: Vec<UiSuggestion>,
}

/// An import left to a plan var without a value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnboundImport {
    pub template: String,
    pub import: String,
    /// The plan var that must be answered (the import's name).
    pub var: String,
    #[serde(rename = "type")]
    pub ty: TypeSpec,
    pub required: bool,
    pub description: String,
    pub description_en: Option<String>,
    pub requirement: Option<RequirementHint>,
}

/// How one import was resolved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportBinding {
    pub template: String,
    pub import: String,
    pub resolution: Resolution,
}

/// Where an import's value comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Resolution {
    /// An explicit binding to `template.export`; `reference` is what the snippet now uses.
    Explicit { export: String, reference: String },
    /// An earlier template's export found by name or `accepts`.
    Export { export: String, reference: String },
    /// A plan var; `value` is its value when one was given or defaulted.
    Var { var: String, value: Option<Value> },
}

/// A template export, addressed in the composed plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PublishedExport {
    pub template: String,
    pub name: String,
    /// `${<template>__<node>.<alias>}`.
    pub reference: String,
    #[serde(rename = "type")]
    pub ty: TypeSpec,
    pub description: String,
}

/// Something the user must decide; the composition still happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Conflict {
    /// Two templates define different defaults for one var; the first one was used.
    VarDefault {
        var: String,
        used: (String, Value),
        other: (String, Value),
    },
    /// An import is bound (explicitly) or would be bound (automatically) to an export of an
    /// incompatible type. An explicit binding is kept; an automatic one is not made.
    IncompatibleBinding {
        template: String,
        import: String,
        import_type: String,
        export: String,
        export_type: String,
        bound: bool,
    },
    /// More than one earlier template exports what an import wants; the nearest was used.
    AmbiguousBinding {
        template: String,
        import: String,
        chosen: String,
        others: Vec<String>,
    },
    /// A template was listed more than once; only the first occurrence was composed.
    DuplicateTemplate { template: String },
}

impl Conflict {
    /// The stable code of this conflict.
    pub fn code(&self) -> &'static str {
        match self {
            Conflict::VarDefault { .. } => "compose.var_default_conflict",
            Conflict::IncompatibleBinding { .. } => "compose.incompatible_binding",
            Conflict::AmbiguousBinding { .. } => "compose.ambiguous_binding",
            Conflict::DuplicateTemplate { .. } => "compose.duplicate_template",
        }
    }

    /// A message for the user.
    pub fn message(&self, lang: Lang) -> String {
        let (ja, en) = match self {
            Conflict::VarDefault { var, used, other } => (
                format!(
                    "変数 {var} の既定値が {} では {}、{} では {} です（{} の値を使いました）",
                    used.0, used.1, other.0, other.1, used.0
                ),
                format!(
                    "var {var} defaults to {} in {} but {} in {} ({}'s value was used)",
                    used.1, used.0, other.1, other.0, used.0
                ),
            ),
            Conflict::IncompatibleBinding {
                template,
                import,
                import_type,
                export,
                export_type,
                bound,
            } => {
                let (done_ja, done_en) = if *bound {
                    ("指定どおり結び付けました", "bound as requested")
                } else {
                    ("結び付けていません", "not bound")
                };
                (
                    format!(
                        "{template} の import {import}（{import_type} 型）と {export}（{export_type} 型）は型が合いません（{done_ja}）"
                    ),
                    format!(
                        "import {import} of {template} ({import_type}) does not fit {export} ({export_type}); {done_en}"
                    ),
                )
            }
            Conflict::AmbiguousBinding {
                template,
                import,
                chosen,
                others,
            } => (
                format!(
                    "{template} の import {import} の候補が複数あります: {chosen}（使用）, {}",
                    others.join(", ")
                ),
                format!(
                    "import {import} of {template} has several candidates: {chosen} (used), {}",
                    others.join(", ")
                ),
            ),
            Conflict::DuplicateTemplate { template } => (
                format!(
                    "テンプレート {template} が2回以上指定されています（最初の1回だけ使いました）"
                ),
                format!("template {template} is listed more than once (only the first was used)"),
            ),
        };
        match lang {
            Lang::Ja => ja,
            Lang::En => en,
        }
    }
}

/// Why templates could not be composed at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ComposeError {
    #[error("the composed plan needs an id")]
    MissingPlanId,
    #[error("no templates to compose")]
    NoTemplates,
    #[error("template id {0:?} cannot prefix node ids (letters, digits, _ and - only)")]
    InvalidTemplateId(String),
    #[error("binding {key:?}: no composed template imports that")]
    UnknownImport { key: String },
    #[error("binding {key:?} → {target:?}: target must be template.export of a composed template")]
    UnknownExport { key: String, target: String },
    #[error("binding {key:?} → {target:?}: a template cannot import its own export")]
    SelfBinding { key: String, target: String },
    #[error(
        "export {export:?} of template {template:?} is not a ${{node.alias}} reference to a snippet node"
    )]
    InvalidExport { template: String, export: String },
    #[error("node id {0:?} is produced by two templates; rename a template or a node")]
    IdCollision(String),
}

impl ComposeError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            ComposeError::MissingPlanId => "compose.missing_plan_id",
            ComposeError::NoTemplates => "compose.no_templates",
            ComposeError::InvalidTemplateId(_) => "compose.invalid_template_id",
            ComposeError::UnknownImport { .. } => "compose.unknown_import",
            ComposeError::UnknownExport { .. } => "compose.unknown_export",
            ComposeError::SelfBinding { .. } => "compose.self_binding",
            ComposeError::InvalidExport { .. } => "compose.invalid_export",
            ComposeError::IdCollision(_) => "compose.id_collision",
        }
    }
}

/// An export resolved to its reference in the composed plan.
struct ResolvedExport<'t> {
    template: &'t str,
    name: &'t str,
    /// The inside of `${…}`: `tmpl__node.alias[.path]`.
    raw: String,
    ty: &'t TypeSpec,
}

/// Composes `templates`, in order, into one plan.
pub fn compose(
    templates: &[&TemplateSpec],
    options: &ComposeOptions,
) -> Result<Composition, ComposeError> {
    if options.plan_id.trim().is_empty() {
        return Err(ComposeError::MissingPlanId);
    }
    if templates.is_empty() {
        return Err(ComposeError::NoTemplates);
    }
    let mut conflicts = Vec::new();
    let mut list: Vec<&TemplateSpec> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut repeated: HashSet<&str> = HashSet::new();
    for t in templates {
        if !is_valid_template_id(&t.id) {
            return Err(ComposeError::InvalidTemplateId(t.id.clone()));
        }
        if !seen.insert(t.id.as_str()) {
            if repeated.insert(t.id.as_str()) {
                conflicts.push(Conflict::DuplicateTemplate {
                    template: t.id.clone(),
                });
            }
            continue;
        }
        list.push(t);
    }

    // Node id maps per template, and global uniqueness of the prefixed top-level ids.
    let mut id_maps: Vec<HashMap<String, String>> = Vec::with_capacity(list.len());
    let mut top_ids: HashSet<String> = HashSet::new();
    for t in &list {
        let mut map = HashMap::new();
        collect_ids(&t.graph_snippet, &t.id, &mut map);
        for node in &t.graph_snippet {
            let new = prefixed_id(&t.id, &node.id);
            if !node.id.is_empty() && !top_ids.insert(new.clone()) {
                return Err(ComposeError::IdCollision(new));
            }
        }
        id_maps.push(map);
    }

    // Exports, addressed in the composed plan.
    let mut exports: Vec<Vec<ResolvedExport<'_>>> = Vec::with_capacity(list.len());
    for (t, ids) in list.iter().zip(&id_maps) {
        let mut resolved = Vec::new();
        for (name, export) in &t.exports {
            let target = parse_export_from(&export.from)
                .filter(|(node, _, _)| t.graph_snippet.iter().any(|n| &n.id == node));
            let Some((node, alias, path)) = target else {
                return Err(ComposeError::InvalidExport {
                    template: t.id.clone(),
                    export: name.clone(),
                });
            };
            let head = ids.get(&node).cloned().unwrap_or(node);
            let raw = match path {
                Some(p) => format!("{head}.{alias}.{p}"),
                None => format!("{head}.{alias}"),
            };
            resolved.push(ResolvedExport {
                template: &t.id,
                name,
                raw,
                ty: &export.ty,
            });
        }
        exports.push(resolved);
    }

    let explicit = explicit_bindings(&list, &exports, options)?;

    let mut plan_vars: IndexMap<String, Value> = IndexMap::new();
    let mut var_origin: HashMap<String, String> = HashMap::new();
    let mut graph: Vec<Node> = Vec::new();
    let mut bindings = Vec::new();
    let mut unbound = Vec::new();
    let mut unbound_vars: HashSet<&str> = HashSet::new();
    // Exports of the templates composed so far, by name, in template order.
    let mut earlier: HashMap<&str, Vec<&ResolvedExport<'_>>> = HashMap::new();

    for (k, t) in list.iter().enumerate() {
        // import → the `${…}` inside that replaces `${vars.<import>}` in this snippet.
        let mut substitutions: HashMap<String, String> = HashMap::new();
        for (name, import) in &t.imports {
            let explicit_target = explicit
                .get(&(t.id.clone(), name.clone()))
                .and_then(|&(j, e)| exports.get(j).and_then(|x| x.get(e)));
            let resolution = if let Some(export) = explicit_target {
                if !import.ty.accepts_any_of(export.ty) {
                    conflicts.push(incompatible(t, name, &import.ty, export, true));
                }
                substitutions.insert(name.clone(), export.raw.clone());
                Resolution::Explicit {
                    export: format!("{}.{}", export.template, export.name),
                    reference: format!("${{{}}}", export.raw),
                }
            } else if let Some(export) = automatic_binding(
                t,
                name,
                &import.ty,
                &import.accepts,
                &earlier,
                &mut conflicts,
            ) {
                substitutions.insert(name.clone(), export.raw.clone());
                Resolution::Export {
                    export: format!("{}.{}", export.template, export.name),
                    reference: format!("${{{}}}", export.raw),
                }
            } else {
                let value = options
                    .vars
                    .get(name)
                    .or_else(|| t.vars_defaults.get(name))
                    .cloned();
                if value.is_none() && unbound_vars.insert(name.as_str()) {
                    unbound.push(UnboundImport {
                        template: t.id.clone(),
                        import: name.clone(),
                        var: name.clone(),
                        ty: import.ty.clone(),
                        required: import.required,
                        description: import.description.clone(),
                        description_en: import.description_en.clone(),
                        requirement: import.requirement.clone(),
                    });
                }
                Resolution::Var {
                    var: name.clone(),
                    value,
                }
            };
            bindings.push(ImportBinding {
                template: t.id.clone(),
                import: name.clone(),
                resolution,
            });
        }

        // Defaults, except for imports that are bound to an export (nothing reads them).
        for (name, value) in &t.vars_defaults {
            if substitutions.contains_key(name) || options.vars.contains_key(name) {
                continue;
            }
            match plan_vars.get(name) {
                None => {
                    plan_vars.insert(name.clone(), value.clone());
                    var_origin.insert(name.clone(), t.id.clone());
                }
                Some(existing) if existing == value => {}
                Some(existing) => conflicts.push(Conflict::VarDefault {
                    var: name.clone(),
                    used: (
                        var_origin.get(name).cloned().unwrap_or_default(),
                        existing.clone(),
                    ),
                    other: (t.id.clone(), value.clone()),
                }),
            }
        }

        let ids = &id_maps[k];
        for node in &t.graph_snippet {
            let mut node = node.clone();
            rewrite_node(&mut node, ids, &substitutions);
            graph.push(node);
        }
        for export in &exports[k] {
            earlier.entry(export.name).or_default().push(export);
        }
    }
    for (name, value) in &options.vars {
        plan_vars.insert(name.clone(), value.clone());
    }
    // A var another template defaults is not a question; record where its value came from.
    unbound.retain(|u| !plan_vars.contains_key(&u.var));
    for b in &mut bindings {
        if let Resolution::Var { var, value } = &mut b.resolution
            && value.is_none()
        {
            *value = plan_vars.get(var).cloned();
        }
    }

    let published = exports
        .iter()
        .zip(&list)
        .flat_map(|(resolved, t)| {
            resolved.iter().map(move |e| PublishedExport {
                template: t.id.clone(),
                name: e.name.to_string(),
                reference: format!("${{{}}}", e.raw),
                ty: e.ty.clone(),
                description: t
                    .exports
                    .get(e.name)
                    .map(|x| x.description.clone())
                    .unwrap_or_default(),
            })
        })
        .collect();

    let ui_suggestions = list
        .iter()
        .zip(&id_maps)
        .flat_map(|(t, ids)| {
            t.ui_suggestions.iter().map(move |s| {
                let mut s = s.clone();
                s.after = s.after.map(|a| ids.get(&a).cloned().unwrap_or(a));
                s
            })
        })
        .collect();
    let titles: Vec<&str> = list
        .iter()
        .map(|t| {
            if t.title.is_empty() {
                t.id.as_str()
            } else {
                t.title.as_str()
            }
        })
        .collect();
    // How to ask for each unbound import, kept in the plan so it is asked the template's way
    // whenever the plan's questions are rebuilt (see requirements::questions).
    let questions: serde_json::Map<String, Value> = unbound
        .iter()
        .filter_map(|u| {
            let meta = crate::requirements::QuestionMeta {
                required: u.required,
                description: u.description.clone(),
                description_en: u.description_en.clone(),
                requirement: u.requirement.clone(),
            };
            serde_json::to_value(meta).ok().map(|v| (u.var.clone(), v))
        })
        .collect();
    let ui = (!questions.is_empty()).then(|| crate::model::Ui {
        layout: Vec::new(),
        extra: IndexMap::from([(
            crate::requirements::questions::UI_KEY.to_string(),
            Value::Object(questions),
        )]),
    });
    let plan = Plan {
        api_version: Some("v1".into()),
        id: options.plan_id.trim().to_string(),
        description: Some(titles.join(" → ")),
        version: Some("0.1.0".into()),
        vars: plan_vars,
        policy: None,
        ui,
        graph,
        extra: IndexMap::new(),
    };
    Ok(Composition {
        plan,
        conflicts,
        unbound_imports: unbound,
        bindings,
        exports: published,
        ui_suggestions,
    })
}

impl Composition {
    /// The questions for this composition: [`build_requirements`] on the composed plan, with
    /// each unbound import's contract (description, requirement hint) laid over the
    /// requirement derived from the block input it feeds.
    pub fn requirements(&self, findings: &[Finding], catalog: &Catalog) -> Vec<Requirement> {
        // The imports' contracts are in the plan (`ui.questions`), which the builder reads.
        build_requirements(&self.plan, findings, catalog)
    }
}

fn incompatible(
    t: &TemplateSpec,
    import: &str,
    import_ty: &TypeSpec,
    export: &ResolvedExport<'_>,
    bound: bool,
) -> Conflict {
    Conflict::IncompatibleBinding {
        template: t.id.clone(),
        import: import.to_string(),
        import_type: import_ty.display(),
        export: format!("{}.{}", export.template, export.name),
        export_type: export.ty.display(),
        bound,
    }
}

/// (template id, import name) → (index of the exporting template, index of its export).
type BindingIndex = HashMap<(String, String), (usize, usize)>;

/// Validates the explicit bindings and indexes them by (template, import) → (template index,
/// export index).
fn explicit_bindings(
    list: &[&TemplateSpec],
    exports: &[Vec<ResolvedExport<'_>>],
    options: &ComposeOptions,
) -> Result<BindingIndex, ComposeError> {
    let mut out: BindingIndex = HashMap::new();
    let mut qualified: HashSet<(String, String)> = HashSet::new();
    for (key, target) in &options.bindings {
        let unknown_export = || ComposeError::UnknownExport {
            key: key.clone(),
            target: target.clone(),
        };
        let (tt, te) = target.split_once('.').ok_or_else(unknown_export)?;
        let j = list
            .iter()
            .position(|t| t.id == tt)
            .ok_or_else(unknown_export)?;
        let e = exports[j]
            .iter()
            .position(|x| x.name == te)
            .ok_or_else(unknown_export)?;
        let importers: Vec<&TemplateSpec> = match key.split_once('.') {
            Some((ti, name)) => list
                .iter()
                .filter(|t| t.id == ti && t.imports.contains_key(name))
                .copied()
                .collect(),
            None => list
                .iter()
                .filter(|t| t.imports.contains_key(key))
                .copied()
                .collect(),
        };
        if importers.is_empty() {
            return Err(ComposeError::UnknownImport { key: key.clone() });
        }
        let import = key.split_once('.').map_or(key.as_str(), |(_, n)| n);
        for t in importers {
            if t.id == tt {
                return Err(ComposeError::SelfBinding {
                    key: key.clone(),
                    target: target.clone(),
                });
            }
            let slot = (t.id.clone(), import.to_string());
            // `template.import` beats a bare `import`, whatever their order in the map.
            if key.contains('.') {
                qualified.insert(slot.clone());
                out.insert(slot, (j, e));
            } else if !qualified.contains(&slot) {
                out.insert(slot, (j, e));
            }
        }
    }
    Ok(out)
}

/// Finds the earlier export an import binds to by name, then by `accepts`, nearest template
/// first; records incompatible and ambiguous candidates as conflicts.
fn automatic_binding<'e, 't>(
    t: &TemplateSpec,
    import: &str,
    import_ty: &TypeSpec,
    accepts: &[String],
    earlier: &HashMap<&str, Vec<&'e ResolvedExport<'t>>>,
    conflicts: &mut Vec<Conflict>,
) -> Option<&'e ResolvedExport<'t>> {
    let mut names: Vec<&str> = vec![import];
    for a in accepts {
        if !names.contains(&a.as_str()) {
            names.push(a);
        }
    }
    for name in names {
        let Some(candidates) = earlier.get(name) else {
            continue;
        };
        // Nearest earlier template first.
        let (fit, misfit): (Vec<&'e ResolvedExport<'t>>, Vec<_>) = candidates
            .iter()
            .rev()
            .partition(|e| import_ty.accepts_any_of(e.ty));
        if let Some((chosen, others)) = fit.split_first() {
            if !others.is_empty() {
                conflicts.push(Conflict::AmbiguousBinding {
                    template: t.id.clone(),
                    import: import.to_string(),
                    chosen: format!("{}.{}", chosen.template, chosen.name),
                    others: others
                        .iter()
                        .map(|e| format!("{}.{}", e.template, e.name))
                        .collect(),
                });
            }
            return Some(chosen);
        }
        for e in misfit {
            conflicts.push(incompatible(t, import, import_ty, e, false));
        }
    }
    None
}

/// Maps every node id of a snippet (loop bodies included) to its prefixed id.
fn collect_ids(graph: &[Node], template_id: &str, map: &mut HashMap<String, String>) {
    for node in graph {
        if !node.id.is_empty() {
            map.insert(node.id.clone(), prefixed_id(template_id, &node.id));
        }
        if let Some(body) = &node.body {
            collect_ids(&body.plan.graph, template_id, map);
        }
    }
}

/// Rewrites one node in place: its id, the ids of its body's nodes, and every reference.
/// `vars` maps a bound import to the `${…}` inside that replaces `${vars.<import>}`.
fn rewrite_node(node: &mut Node, ids: &HashMap<String, String>, vars: &HashMap<String, String>) {
    if let Some(new) = ids.get(&node.id) {
        node.id = new.clone();
    }
    let mut rewrite = |target: &Target| -> Option<String> {
        match target {
            Target::Node { node, alias, path } => ids.get(node).map(|head| join(head, alias, path)),
            Target::Var { name, path } => vars.get(name).map(|raw| match path {
                Some(p) => format!("{raw}.{p}"),
                None => raw.clone(),
            }),
            Target::Env { .. } | Target::Config { .. } => None,
        }
    };
    rewrite_values(node, &mut rewrite);
    if let Some(body) = &mut node.body {
        // Inside a loop body the loop's own vars shadow plan vars of the same name, so a
        // bound import must not replace them there.
        let mut shadowed: HashSet<String> = body.plan.vars.keys().cloned().collect();
        if let Some(f) = &node.foreach {
            shadowed.insert(f.var.clone().unwrap_or_else(|| DEFAULT_LOOP_VAR.into()));
            shadowed.insert("index".into());
        }
        if node.while_loop.is_some() {
            shadowed.insert("iteration".into());
        }
        let inner: HashMap<String, String> = vars
            .iter()
            .filter(|(k, _)| !shadowed.contains(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for value in body.plan.vars.values_mut() {
            rewrite_value(value, &mut rewrite);
        }
        for child in &mut body.plan.graph {
            rewrite_node(child, ids, &inner);
        }
        if let Some(ui) = &mut body.plan.ui {
            for entry in &mut ui.layout {
                if let Some(new) = ids.get(entry) {
                    *entry = new.clone();
                }
            }
        }
    }
}

fn join(head: &str, alias: &str, path: &Option<String>) -> String {
    match path {
        Some(p) => format!("{head}.{alias}.{p}"),
        None => format!("{head}.{alias}"),
    }
}

/// Applies `f` to every reference in the node's own values (not its body's nodes).
fn rewrite_values(node: &mut Node, f: &mut dyn FnMut(&Target) -> Option<String>) {
    if let Some(d) = &mut node.description
        && let Some(new) = rewrite_str(d, f)
    {
        *d = new;
    }
    for v in node.inputs.values_mut() {
        rewrite_value(v, f);
    }
    if let Some(w) = &mut node.when {
        rewrite_when(w, f);
    }
    if let Some(fe) = &mut node.foreach {
        for v in fe.input.iter_mut().chain(fe.items.iter_mut()) {
            rewrite_value(v, f);
        }
        for v in fe.extra.values_mut() {
            rewrite_value(v, f);
        }
    }
    if let Some(w) = &mut node.while_loop {
        if let Some(c) = &mut w.condition {
            rewrite_when(c, f);
        }
        for v in w.extra.values_mut() {
            rewrite_value(v, f);
        }
    }
    if let Some(call) = &mut node.call {
        for v in call.inputs.values_mut().chain(call.extra.values_mut()) {
            rewrite_value(v, f);
        }
    }
    if let Some(p) = &mut node.policy {
        for v in p.extra.values_mut() {
            rewrite_value(v, f);
        }
    }
    if let Some(body) = &mut node.body {
        for v in body.extra.values_mut() {
            rewrite_value(v, f);
        }
    }
    for v in node.extra.values_mut() {
        rewrite_value(v, f);
    }
}

fn rewrite_when(w: &mut crate::model::When, f: &mut dyn FnMut(&Target) -> Option<String>) {
    match w {
        crate::model::When::Expr { expr } => rewrite_value(expr, f),
        crate::model::When::Bare(v) => rewrite_value(v, f),
    }
}

/// Applies `f` to every reference in a value, recursively; `f` returns the new text between
/// `${` and `}`, or `None` to keep the reference as it is.
fn rewrite_value(value: &mut Value, f: &mut dyn FnMut(&Target) -> Option<String>) {
    match value {
        Value::String(s) => {
            if let Some(new) = rewrite_str(s, f) {
                *s = new;
            }
        }
        Value::Array(items) => {
            for item in items {
                rewrite_value(item, f);
            }
        }
        Value::Object(map) => {
            for v in map.values_mut() {
                rewrite_value(v, f);
            }
        }
        _ => {}
    }
}

/// Rewrites the references in one string; `None` when nothing changed. Malformed references
/// are kept verbatim (the validator reports them).
fn rewrite_str(s: &str, f: &mut dyn FnMut(&Target) -> Option<String>) -> Option<String> {
    if !s.contains("${") {
        return None;
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut rest = s;
    let mut changed = false;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            break;
        };
        let raw = &after[..end];
        out.push_str(&rest[..start]);
        match refs::parse_target(raw).ok().and_then(|t| f(&t)) {
            Some(new) => {
                out.push_str("${");
                out.push_str(&new);
                out.push('}');
                changed = true;
            }
            None => {
                out.push_str("${");
                out.push_str(raw);
                out.push('}');
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    changed.then_some(out)
}
