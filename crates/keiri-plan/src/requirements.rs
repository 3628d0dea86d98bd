//! Requirements: the typed questions to ask when a plan lacks information, and applying
//! the answers to the plan.
//!
//! [`build_requirements`] turns the validator's findings (and a few gaps that are not errors)
//! into [`Requirement`]s, the shape `ui.interactive_input` asks in its inquire mode:
//!
//! * an undefined `${vars.foo}`, or one defined as `null` / empty text (how a generated plan
//!   marks a value it could not decide) → requirement `foo`, typed by the block input it feeds: an
//!   enum → `select` with the spec's values, number/integer → `number`, boolean → `boolean`,
//!   a reader's path → `file` with the extensions the spec names (`.xlsx,.xlsm`, `.csv`), an
//!   array of rows → `table`, anything else → `text`;
//! * a missing required input → a requirement wired to a new var `<node>_<input>`;
//! * `excel.read_workbook` without `path` / `sheet` / `range` → `file` + `text` requirements
//!   (sheet and range are optional: the spec's defaults are the first sheet, the used range);
//! * `ai.process_llm` without an `output_schema` → an `enum` whose options are the named
//!   [`schema_templates`]; without `prompt`/`instruction` → a `text` requirement.
//!
//! Labels and hints come from the spec's descriptions (Japanese, with `_en` twins). The order
//! is the plan's order (nodes pre-order, then the order of the rules above), so the same plan
//! always asks the same questions in the same order.
//!
//! [`apply_answers`] type-checks each answer against its requirement and writes it into the
//! plan's `vars`, wiring node inputs that were missing to `${vars.<id>}` (an output-schema
//! answer writes the chosen schema into the node). Regular expressions in requirements may
//! come from templates or an LLM, so they are compiled with the `regex` crate, whose matching
//! time is linear in the input and whose compiled size is capped here.

use std::collections::HashSet;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::FindingCode;
use crate::catalog::{BlockSpec, Catalog, PortSpec, ValueType};
use crate::model::{Node, Plan};
use crate::refs::{self, Target};
use crate::validate::{DEFAULT_LOOP_VAR, Finding};
use crate::yaml::escape_pointer;

mod types;
pub use types::{
    AnswerUse, NO_COLUMN, NO_SUCH_COLUMN, Requirement, RequirementHint, RequirementKind,
    RequirementTarget, TargetPlace, Validation,
};

mod column_question;
mod edits;
mod ports;
pub(crate) mod questions;
mod schemas;
use edits::{clear_var_refs, drop_rules, find_node_mut, say_in_description, slot_mut};
pub use ports::{accept_of, accepts_path, short_label};
use ports::{is_path_key, offer_columns};
pub use questions::QuestionMeta;
pub use schemas::{SchemaTemplate, schema_template, schema_templates};

/// Builds the questions for `plan` from the validator's `findings` (the same plan's).
///
/// A var the nodes use is open, and asked, when it is not defined (`ref.undefined_var`) and
/// also when it is defined without a value (`null` or empty text): a generated plan defines
/// every value it could not decide that way, so that it validates while the question stays.
pub fn build_requirements(
    plan: &Plan,
    findings: &[Finding],
    catalog: &Catalog,
) -> Vec<Requirement> {
    let mut b = Builder {
        catalog,
        findings,
        out: Vec::new(),
        ids: plan.vars.keys().cloned().collect(),
        unset: plan
            .vars
            .iter()
            .filter(|(_, v)| is_missing(Some(v)))
            .map(|(k, _)| k.clone())
            .collect(),
    };
    b.walk(&plan.graph, "", &set_vars(&plan.vars));
    // A composed plan's own words for its imports (the template's), over the derived ones.
    questions::overlay(&mut b.out, &questions::of_plan(plan));
    b.out
}

/// The names of `vars` that hold a value (not `null`, not empty text).
fn set_vars(vars: &IndexMap<String, Value>) -> HashSet<String> {
    vars.iter()
        .filter(|(_, v)| !is_missing(Some(v)))
        .map(|(k, _)| k.clone())
        .collect()
}

struct Builder<'a> {
    catalog: &'a Catalog,
    findings: &'a [Finding],
    out: Vec<Requirement>,
    /// Requirement ids and var names already taken.
    ids: HashSet<String>,
    /// Vars defined without a value (`null`, empty text): open, though no finding says so.
    unset: HashSet<String>,
}

/// Whether a finding at `finding` is about the node at `node` itself (not its body's nodes).
fn belongs(finding: &str, node: &str) -> bool {
    match finding.strip_prefix(node) {
        Some("") => true,
        Some(rest) => rest.starts_with('/') && !rest.starts_with("/body/plan/graph/"),
        None => false,
    }
}

fn is_missing(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.trim().is_empty(),
        _ => false,
    }
}

fn is_empty_schema(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        other => is_missing(other),
    }
}

impl Builder<'_> {
    fn walk(&mut self, graph: &[Node], base: &str, scope: &HashSet<String>) {
        for (i, node) in graph.iter().enumerate() {
            let path = format!("{base}/graph/{i}");
            let mine: Vec<&Finding> = self
                .findings
                .iter()
                .filter(|f| belongs(&f.path, &path))
                .collect();
            let spec = node.block.as_deref().and_then(|b| self.catalog.get(b));
            let has = |code: FindingCode| mine.iter().any(|f| f.code == code);

            for f in mine
                .iter()
                .filter(|f| f.code == FindingCode::RefUndefinedVar)
            {
                self.undefined_vars(node, spec, &f.path[path.len()..], scope, false);
            }
            // Vars defined without a value raise no finding: the inputs and the condition
            // are scanned for them.
            if !self.unset.is_empty() {
                for key in node.inputs.keys() {
                    let rel = format!("/in/{}", key.replace('~', "~0").replace('/', "~1"));
                    self.undefined_vars(node, spec, &rel, scope, true);
                }
                if node.when.is_some() {
                    self.undefined_vars(node, spec, "/when", scope, true);
                }
            }
            if let Some(spec) = spec {
                if has(FindingCode::InputMissingRequired) {
                    for (key, port) in &spec.inputs {
                        let specific = spec.id == "ai.process_llm" && key == "output_schema";
                        if port.required
                            && port.default.is_none()
                            && !specific
                            && is_missing(node.inputs.get(key))
                        {
                            let before = self.out.len();
                            self.input_requirement(node, spec, key, port, true, None);
                            // The columns the rows have there, when the files tell them.
                            let at = format!("{path}/in/{}", escape_pointer(key));
                            let columns = mine.iter().find(|f| {
                                f.code == FindingCode::InputMissingRequired && f.path == at
                            });
                            if let (Some(r), Some(f)) = (self.out.get_mut(before), columns) {
                                offer_columns(r, &f.choices);
                            }
                        }
                    }
                }
                if spec.id == "excel.read_workbook" {
                    self.excel_read(node, spec);
                }
                if spec.id == "ai.process_llm" {
                    if has(FindingCode::AiOutputSchemaRequired) {
                        self.output_schema(node);
                    }
                    if has(FindingCode::AiPromptRequired)
                        && let Some(port) = spec.inputs.get("prompt")
                    {
                        self.input_requirement(node, spec, "prompt", port, true, None);
                    }
                }
            }
            for f in mine.iter().filter(|f| f.code == FindingCode::ColumnUnknown) {
                self.column_question(node, spec, f, &f.path[path.len()..]);
            }
            if let Some(body) = &node.body {
                let mut inner = scope.clone();
                inner.extend(set_vars(&body.plan.vars));
                if let Some(f) = &node.foreach {
                    inner.insert(f.var.clone().unwrap_or_else(|| DEFAULT_LOOP_VAR.into()));
                    inner.insert("index".into());
                }
                if node.while_loop.is_some() {
                    inner.insert("iteration".into());
                }
                self.walk(&body.plan.graph, &format!("{path}/body/plan"), &inner);
            }
        }
    }

    /// Requirements for the open vars referenced at `rel` (a pointer inside the node): those
    /// not in `scope`, and only those defined without a value when `only_unset`.
    fn undefined_vars(
        &mut self,
        node: &Node,
        spec: Option<&BlockSpec>,
        rel: &str,
        scope: &HashSet<String>,
        only_unset: bool,
    ) {
        let Some(value) = value_at(node, rel) else {
            return;
        };
        let (mut found, mut bad) = (Vec::new(), Vec::new());
        refs::scan(&value, "", &mut found, &mut bad);
        // A whole reference in a top-level input is typed by that input's spec.
        let top_key = rel
            .strip_prefix("/in/")
            .filter(|k| !k.contains('/'))
            .map(crate::yaml::unescape_pointer);
        for r in found {
            let Target::Var { name, .. } = &r.target else {
                continue;
            };
            if scope.contains(name)
                || (only_unset && !self.unset.contains(name))
                || self.out.iter().any(|q| &q.id == name)
            {
                continue;
            }
            let port = match (&top_key, spec) {
                (Some(key), Some(spec)) if r.whole && r.pointer.is_empty() => {
                    spec.inputs.get(key).map(|p| (spec, key.as_str(), p))
                }
                _ => None,
            };
            self.ids.insert(name.clone());
            match port {
                Some((spec, key, port)) => {
                    self.input_requirement(node, spec, key, port, true, Some(name.clone()));
                }
                None => self.out.push(Requirement {
                    id: name.clone(),
                    kind: RequirementKind::Text,
                    label: name.clone(),
                    label_en: Some(name.clone()),
                    description: format!("変数 {name} の値"),
                    description_en: Some(format!("The value of variable {name}")),
                    options: Vec::new(),
                    required: true,
                    accept: None,
                    hint: None,
                    hint_en: None,
                    validation: None,
                    default: None,
                    value_type: None,
                    answer_use: AnswerUse::Value,
                    target: RequirementTarget {
                        var: Some(name.clone()),
                        node_id: (!node.id.is_empty()).then(|| node.id.clone()),
                        input: None,
                        ..Default::default()
                    },
                }),
            }
        }
    }

    /// A fresh var name for a node input: `<node>_<input>`, suffixed when taken.
    fn fresh_var(&mut self, node: &Node, key: &str) -> String {
        let base = format!("{}_{}", node.id, key);
        let mut name = base.clone();
        let mut n = 2;
        while self.ids.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.ids.insert(name.clone());
        name
    }

    fn targets(&self, node: &Node, key: &str) -> bool {
        self.out.iter().any(|r| {
            r.target.node_id.as_deref() == Some(node.id.as_str())
                && r.target.input.as_deref() == Some(key)
        })
    }

    /// A requirement for input `key` of `node`, typed by its port; `var` is the var it fills
    /// (a fresh `<node>_<key>` when `None`).
    fn input_requirement(
        &mut self,
        node: &Node,
        spec: &BlockSpec,
        key: &str,
        port: &PortSpec,
        required: bool,
        var: Option<String>,
    ) {
        if var.is_none() && self.targets(node, key) {
            return;
        }
        let var = match var {
            Some(v) => v,
            None => self.fresh_var(node, key),
        };
        let mut r = typed_requirement(&var, spec, key, port);
        r.required = required;
        r.target = RequirementTarget {
            var: Some(var),
            node_id: (!node.id.is_empty()).then(|| node.id.clone()),
            input: Some(key.to_string()),
            ..Default::default()
        };
        self.out.push(r);
    }

    /// `excel.read_workbook` needs to know which file, and which sheet and range to read.
    fn excel_read(&mut self, node: &Node, spec: &BlockSpec) {
        for key in ["path", "sheet", "range"] {
            let Some(port) = spec.inputs.get(key) else {
                continue;
            };
            if !is_missing(node.inputs.get(key)) || self.targets(node, key) {
                continue;
            }
            let before = self.out.len();
            self.input_requirement(node, spec, key, port, key == "path", None);
            if key == "range"
                && let Some(r) = self.out.get_mut(before)
            {
                r.validation = Some(Validation {
                    regex: Some(A1_RANGE.into()),
                });
            }
        }
    }

    fn output_schema(&mut self, node: &Node) {
        if !is_empty_schema(node.inputs.get("output_schema")) || self.targets(node, "output_schema")
        {
            return;
        }
        let templates = schema_templates();
        let id = self.fresh_var(node, "output_schema");
        let list_ja: Vec<String> = templates
            .iter()
            .map(|t| format!("{}={}", t.id, t.label))
            .collect();
        let list_en: Vec<String> = templates
            .iter()
            .map(|t| format!("{}={}", t.id, t.label_en))
            .collect();
        self.out.push(Requirement {
            id,
            kind: RequirementKind::Enum,
            label: "LLMの出力の形".into(),
            label_en: Some("Shape of the LLM output".into()),
            description: format!(
                "ノード {} の ai.process_llm が返す結果の形（output_schema）を選んでください",
                node.id
            ),
            description_en: Some(format!(
                "Choose the shape of the results (output_schema) of ai.process_llm node {}",
                node.id
            )),
            options: templates.iter().map(|t| Value::from(t.id)).collect(),
            required: true,
            accept: None,
            hint: Some(list_ja.join(" / ")),
            hint_en: Some(list_en.join(" / ")),
            validation: None,
            default: None,
            value_type: None,
            answer_use: AnswerUse::SchemaTemplate,
            target: RequirementTarget {
                var: None,
                node_id: (!node.id.is_empty()).then(|| node.id.clone()),
                input: Some("output_schema".into()),
                ..Default::default()
            },
        });
    }
}

/// An A1 cell or range, e.g. `A3:K500` or `$B$2`.
const A1_RANGE: &str = r"^\$?[A-Za-z]{1,3}\$?[0-9]{1,7}(:\$?[A-Za-z]{1,3}\$?[0-9]{1,7})?$";

/// The value at `rel`, a pointer inside a node (`/in/rows/0/x`, `/when/expr`,
/// `/foreach/input`, `/while/condition`, `/call/inputs/x`).
fn value_at(node: &Node, rel: &str) -> Option<Value> {
    let mut parts = rel.splitn(3, '/').skip(1);
    let field = parts.next()?;
    let rest = parts.next().unwrap_or_default();
    let unescape = crate::yaml::unescape_pointer;
    let (key, inner) = match rest.split_once('/') {
        Some((k, i)) => (unescape(k), format!("/{i}")),
        None => (unescape(rest), String::new()),
    };
    let map_value = |map: &IndexMap<String, Value>| {
        map.get(&key)
            .and_then(|v| {
                if inner.is_empty() {
                    Some(v)
                } else {
                    v.pointer(&inner)
                }
            })
            .cloned()
    };
    match field {
        "in" => map_value(&node.inputs),
        "when" => node.when.as_ref().map(|w| Value::String(w.expr())),
        "foreach" => {
            let f = node.foreach.as_ref()?;
            match key.as_str() {
                "input" => f.input.clone(),
                "items" => f.items.clone(),
                _ => None,
            }
        }
        "while" => node
            .while_loop
            .as_ref()
            .and_then(|w| w.condition.as_ref())
            .map(|c| Value::String(c.expr())),
        "call" if key == "inputs" => {
            let call = node.call.as_ref()?;
            let mut parts = inner.splitn(3, '/').skip(1);
            let k = unescape(parts.next()?);
            let deeper = parts.next().map(|p| format!("/{p}")).unwrap_or_default();
            call.inputs
                .get(&k)
                .and_then(|v| {
                    if deeper.is_empty() {
                        Some(v)
                    } else {
                        v.pointer(&deeper)
                    }
                })
                .cloned()
        }
        _ => None,
    }
}

/// A requirement typed by a block input's spec (target and `required` set by the caller).
fn typed_requirement(id: &str, spec: &BlockSpec, key: &str, port: &PortSpec) -> Requirement {
    let types = port.ty.types();
    let only = |wanted: &[ValueType]| !types.is_empty() && types.iter().all(|t| wanted.contains(t));
    let accept = accept_of(port);
    let enum_values = port.enum_values.clone().unwrap_or_default();
    let items_are_objects = port
        .items
        .as_ref()
        .and_then(|i| i.get("type"))
        .and_then(Value::as_str)
        .is_none_or(|t| ValueType::parse(t) == ValueType::Object);

    let (kind, value_type) = if !enum_values.is_empty() {
        (RequirementKind::Select, None)
    } else if is_path_key(key) && (spec.category == "input" || accept.is_some()) {
        (RequirementKind::File, None)
    } else if only(&[ValueType::Boolean]) {
        (RequirementKind::Boolean, None)
    } else if only(&[ValueType::Integer]) {
        (RequirementKind::Number, Some(ValueType::Integer))
    } else if only(&[ValueType::Number, ValueType::Integer]) {
        (RequirementKind::Number, None)
    } else if only(&[ValueType::Array]) && items_are_objects {
        (RequirementKind::Table, Some(ValueType::Array))
    } else if only(&[ValueType::Array]) {
        (RequirementKind::Text, Some(ValueType::Array))
    } else if only(&[ValueType::Object]) {
        (RequirementKind::Text, Some(ValueType::Object))
    } else {
        (RequirementKind::Text, None)
    };

    let mut hint_ja = Vec::new();
    let mut hint_en = Vec::new();
    if kind == RequirementKind::File
        && let Some(a) = &accept
    {
        hint_ja.push(format!("拡張子: {a}"));
        hint_en.push(format!("extensions: {a}"));
    }
    match value_type {
        Some(ValueType::Object) => {
            hint_ja.push("JSON のオブジェクトで入力（例 {\"列名\": \"値\"}）".to_string());
            hint_en.push("a JSON object (e.g. {\"column\": \"value\"})".to_string());
        }
        Some(ValueType::Array) if kind == RequirementKind::Text => {
            hint_ja.push("カンマ区切り、または JSON の配列".to_string());
            hint_en.push("comma separated, or a JSON array".to_string());
        }
        Some(ValueType::Integer) => {
            hint_ja.push("整数".to_string());
            hint_en.push("an integer".to_string());
        }
        _ => {}
    }
    if let Some(d) = &port.default {
        hint_ja.push(format!("省略時: {}", display(d)));
        hint_en.push(format!("default: {}", display(d)));
    }
    let block_ja = spec.title_ja.clone().unwrap_or_else(|| spec.id.clone());
    let block_en = spec.title_en.clone().unwrap_or_else(|| spec.id.clone());
    let label = match short_label(&port.description) {
        l if l.is_empty() => key.to_string(),
        l => l,
    };
    let label_en = port
        .description_en
        .as_deref()
        .map(short_label)
        .filter(|l| !l.is_empty());
    Requirement {
        id: id.to_string(),
        kind,
        label,
        label_en,
        // The Japanese text names the step by its title only: the input key is an identifier,
        // and 「<title> の <key>」 reads as machine Japanese to an accountant.
        description: format!("{}（「{block_ja}」で使います）", port.description.trim()),
        description_en: Some(format!(
            "{} ({key} of {block_en})",
            port.description_en
                .as_deref()
                .unwrap_or(&port.description)
                .trim()
        )),
        options: enum_values,
        required: true,
        accept: if kind == RequirementKind::File {
            accept
        } else {
            None
        },
        hint: (!hint_ja.is_empty()).then(|| hint_ja.join(" / ")),
        hint_en: (!hint_en.is_empty()).then(|| hint_en.join(" / ")),
        validation: None,
        default: port.default.clone(),
        value_type,
        answer_use: AnswerUse::Value,
        target: RequirementTarget::default(),
    }
}

fn display(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One answer that does not fit its requirement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnswerProblem {
    pub requirement: String,
    /// `answer.missing`, `answer.type`, `answer.not_an_option`, `answer.pattern`,
    /// `answer.bad_pattern` or `answer.extension`.
    pub code: &'static str,
    pub message: String,
}

/// Why answers could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    #[error("{} answer(s) do not fit their requirements: {}", problems.len(), summary(problems))]
    Invalid { problems: Vec<AnswerProblem> },
    #[error("requirement {requirement} targets node {node_id}, which is not in the plan")]
    UnknownNode {
        requirement: String,
        node_id: String,
    },
    #[error("requirement {requirement}: {answer:?} is not a schema template")]
    UnknownSchemaTemplate { requirement: String, answer: String },
}

fn summary(problems: &[AnswerProblem]) -> String {
    problems
        .iter()
        .map(|p| format!("{} ({})", p.requirement, p.message))
        .collect::<Vec<_>>()
        .join("; ")
}

impl AnswerError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            AnswerError::Invalid { .. } => "answer.invalid",
            AnswerError::UnknownNode { .. } => "answer.unknown_node",
            AnswerError::UnknownSchemaTemplate { .. } => "answer.unknown_schema_template",
        }
    }
}

/// The most compiled-regex memory a requirement's pattern may take.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Applies `answers` (requirement id → value) to a copy of `plan`.
///
/// Every answer is checked first; if any does not fit, nothing is applied and all problems
/// are returned. Answers for ids that are not among `requirements` are ignored, so one
/// answers file can serve several inquire rounds.
pub fn apply_answers(
    plan: &Plan,
    requirements: &[Requirement],
    answers: &Map<String, Value>,
) -> Result<Plan, AnswerError> {
    let mut accepted: Vec<(&Requirement, Value)> = Vec::new();
    let mut problems = Vec::new();
    for r in requirements {
        let answer = answers.get(&r.id).filter(|v| !is_missing(Some(v)));
        let Some(answer) = answer else {
            if r.required {
                problems.push(problem(r, "answer.missing", "no answer given".into()));
            }
            continue;
        };
        match check_answer(r, answer) {
            Ok(value) => accepted.push((r, value)),
            Err(p) => problems.push(p),
        }
    }
    if !problems.is_empty() {
        return Err(AnswerError::Invalid { problems });
    }
    let mut plan = plan.clone();
    // Rules dropped because the file has no column they read: (node, input) → (index, column).
    let mut dropped: IndexMap<(String, String), Vec<(usize, String)>> = IndexMap::new();
    // Inputs left empty because the file has no such column (`node.input`).
    let mut unused: Vec<String> = Vec::new();
    for (r, value) in accepted {
        if r.answer_use == AnswerUse::Column
            && let (Some(column), Some(node_id), Some(input)) =
                (&r.target.column, &r.target.node_id, &r.target.input)
            && value.as_str() == Some(NO_SUCH_COLUMN)
        {
            let places = dropped.entry((node_id.clone(), input.clone())).or_default();
            let indexes = r
                .target
                .index
                .into_iter()
                .chain(r.target.also.iter().filter_map(|p| p.index));
            for i in indexes {
                if !places.iter().any(|(j, _)| *j == i) {
                    places.push((i, column.clone()));
                }
            }
            continue;
        }
        // A column the file does not have, for an input the block can do without: its slot,
        // and every place wired to the question's var, left empty; no var is set.
        if r.answer_use == AnswerUse::Column && value.as_str() == Some(NO_COLUMN) {
            let (Some(node_id), Some(input)) = (&r.target.node_id, &r.target.input) else {
                continue;
            };
            unused.push(format!("{node_id}.{input}"));
            if let Some(var) = &r.target.var {
                let places = clear_var_refs(&mut plan.graph, &format!("${{vars.{var}}}"));
                for place in places {
                    if !unused.contains(&place) {
                        unused.push(place);
                    }
                }
            }
            let place = TargetPlace {
                index: r.target.index,
                field: r.target.field.clone(),
            };
            if let Some(node) = find_node_mut(&mut plan.graph, node_id) {
                match slot_mut(node, input, &place) {
                    Some(slot) => *slot = Value::String(String::new()),
                    // A column read by default: the input is set, to nothing.
                    None if place.index.is_none() => {
                        node.inputs
                            .insert(input.clone(), Value::String(String::new()));
                    }
                    None => {}
                }
            }
            continue;
        }
        let wired = match r.answer_use {
            AnswerUse::SchemaTemplate => {
                let name = display(&value);
                let Some(t) = schema_template(&name) else {
                    return Err(AnswerError::UnknownSchemaTemplate {
                        requirement: r.id.clone(),
                        answer: name,
                    });
                };
                t.schema
            }
            AnswerUse::Value | AnswerUse::Column => match &r.target.var {
                Some(var) => Value::String(format!("${{vars.{var}}}")),
                None => value.clone(),
            },
        };
        if r.answer_use != AnswerUse::SchemaTemplate
            && let Some(var) = &r.target.var
        {
            plan.vars.insert(var.clone(), value);
        }
        let (Some(node_id), Some(input)) = (&r.target.node_id, &r.target.input) else {
            continue;
        };
        let Some(node) = find_node_mut(&mut plan.graph, node_id) else {
            return Err(AnswerError::UnknownNode {
                requirement: r.id.clone(),
                node_id: node_id.clone(),
            });
        };
        if r.answer_use == AnswerUse::Column {
            if let Some(column) = &r.target.column {
                let answer = display(&wired);
                let places = std::iter::once(TargetPlace {
                    index: r.target.index,
                    field: r.target.field.clone(),
                })
                .chain(r.target.also.iter().cloned());
                for place in places {
                    let renamed = slot_mut(node, input, &place)
                        .and_then(|slot| Some((slot.as_str()?.to_string(), slot)))
                        .ok_or_else(|| format!("{input} holds no expression there"))
                        .and_then(|(text, slot)| {
                            let renamed = crate::row_expr::rename_column(&text, column, &answer)?;
                            *slot = Value::String(renamed);
                            Ok(())
                        });
                    if let Err(why) = renamed {
                        return Err(AnswerError::Invalid {
                            problems: vec![problem(r, "answer.column_in_expression", why)],
                        });
                    }
                }
                continue;
            }
            let place = TargetPlace {
                index: r.target.index,
                field: r.target.field.clone(),
            };
            match slot_mut(node, input, &place) {
                Some(slot) => *slot = wired,
                None => {
                    node.inputs.insert(input.clone(), wired);
                }
            }
            continue;
        }
        let empty = match r.answer_use {
            AnswerUse::SchemaTemplate => is_empty_schema(node.inputs.get(input)),
            AnswerUse::Value | AnswerUse::Column => is_missing(node.inputs.get(input)),
        };
        if empty {
            node.inputs.insert(input.clone(), wired);
        }
    }
    drop_rules(&mut plan, dropped);
    if !unused.is_empty() {
        let note = format!(
            "ファイルにない列のため使わない入力 / inputs left out for columns the file lacks: {}",
            unused.join(", ")
        );
        say_in_description(&mut plan, note);
    }
    Ok(plan)
}

fn problem(r: &Requirement, code: &'static str, message: String) -> AnswerProblem {
    AnswerProblem {
        requirement: r.id.clone(),
        code,
        message,
    }
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Checks one answer and converts it to the value stored in the plan: the one answer checker
/// every front-end uses (the planner's [`apply_answers`], the API, the CLI's prompts), so an
/// answer one accepts the others accept too. A text answer may stand for a number, a yes/no
/// (`はい`/`いいえ`, `yes`/`no`, `する`/`しない`, …), a choice, a list or a table.
pub fn check_answer(r: &Requirement, answer: &Value) -> Result<Value, AnswerProblem> {
    let value = match r.kind {
        RequirementKind::Text => {
            let value = text_answer(r, answer)?;
            // A list of columns picked from the file's: each must be one of them.
            if let (Value::Array(items), false) = (&value, r.options.is_empty())
                && let Some(stray) = items.iter().find(|i| !r.options.contains(i))
            {
                let list: Vec<String> = r.options.iter().map(display).collect();
                return Err(problem(
                    r,
                    "answer.not_an_option",
                    format!("{} is not one of {}", display(stray), list.join(", ")),
                ));
            }
            value
        }
        RequirementKind::File => {
            let Some(path) = answer.as_str().map(str::trim).filter(|s| !s.is_empty()) else {
                return Err(problem(
                    r,
                    "answer.type",
                    "a file path (text) is expected".into(),
                ));
            };
            if let Some(accept) = r.accept.as_deref().filter(|a| !a.trim().is_empty())
                && !accepts_path(accept, path)
            {
                return Err(problem(
                    r,
                    "answer.extension",
                    format!("the file must end with one of {accept}"),
                ));
            }
            Value::String(path.to_string())
        }
        RequirementKind::Number => {
            let n = match answer {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().replace([',', '，'], "").parse::<f64>().ok(),
                _ => None,
            };
            let Some(n) = n.filter(|n| n.is_finite()) else {
                return Err(problem(r, "answer.type", "a number is expected".into()));
            };
            let integral = n.fract() == 0.0 && n.abs() < 9.0e15;
            if r.value_type == Some(ValueType::Integer) && !integral {
                return Err(problem(r, "answer.type", "an integer is expected".into()));
            }
            if integral {
                // The guard keeps the value inside i64's exact range, so the cast is lossless.
                Value::from(n as i64)
            } else {
                serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
            }
        }
        RequirementKind::Boolean => match answer {
            Value::Bool(b) => Value::Bool(*b),
            Value::String(s) => match s.trim().to_lowercase().as_str() {
                "true" | "yes" | "y" | "1" | "はい" | "する" => Value::Bool(true),
                "false" | "no" | "n" | "0" | "いいえ" | "しない" => Value::Bool(false),
                _ => return Err(problem(r, "answer.type", "yes or no is expected".into())),
            },
            _ => return Err(problem(r, "answer.type", "yes or no is expected".into())),
        },
        RequirementKind::Select | RequirementKind::Enum => {
            if r.options.is_empty() {
                text_answer(r, answer)?
            } else {
                let wanted = scalar_text(answer);
                let found = r
                    .options
                    .iter()
                    .find(|o| *o == answer || (wanted.is_some() && scalar_text(o) == wanted));
                match found {
                    Some(o) => o.clone(),
                    None => {
                        let list: Vec<String> = r.options.iter().map(display).collect();
                        return Err(problem(
                            r,
                            "answer.not_an_option",
                            format!("choose one of {}", list.join(", ")),
                        ));
                    }
                }
            }
        }
        RequirementKind::Table => {
            let rows = match answer {
                Value::Array(_) => answer.clone(),
                Value::String(s) => serde_json::from_str::<Value>(s).unwrap_or(Value::Null),
                _ => Value::Null,
            };
            match &rows {
                Value::Array(items) if items.iter().all(Value::is_object) => rows,
                _ => {
                    return Err(problem(
                        r,
                        "answer.type",
                        "a table (an array of rows) is expected".into(),
                    ));
                }
            }
        }
    };
    if let Some(pattern) = r.validation.as_ref().and_then(|v| v.regex.as_deref()) {
        let re = regex::RegexBuilder::new(pattern)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| {
                problem(
                    r,
                    "answer.bad_pattern",
                    format!("the check {pattern:?} is invalid: {e}"),
                )
            })?;
        if let Some(text) = scalar_text(&value)
            && !re.is_match(&text)
        {
            return Err(problem(
                r,
                "answer.pattern",
                format!("{text:?} does not match {pattern}"),
            ));
        }
    }
    Ok(value)
}

/// A `text` answer: a string, or the JSON value the requirement's `value_type` asks for.
fn text_answer(r: &Requirement, answer: &Value) -> Result<Value, AnswerProblem> {
    match r.value_type {
        Some(ValueType::Object) => match answer {
            Value::Object(_) => Ok(answer.clone()),
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(v @ Value::Object(_)) => Ok(v),
                _ => Err(problem(
                    r,
                    "answer.type",
                    "a JSON object is expected".into(),
                )),
            },
            _ => Err(problem(
                r,
                "answer.type",
                "a JSON object is expected".into(),
            )),
        },
        Some(ValueType::Array) => match answer {
            Value::Array(_) => Ok(answer.clone()),
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(v @ Value::Array(_)) => Ok(v),
                // Not JSON: a comma-separated list, the way people type column names.
                _ => Ok(Value::Array(
                    s.split([',', '、', '，'])
                        .map(str::trim)
                        .filter(|p| !p.is_empty())
                        .map(Value::from)
                        .collect(),
                )),
            },
            _ => Err(problem(r, "answer.type", "a list is expected".into())),
        },
        _ => match scalar_text(answer) {
            Some(s) => Ok(Value::String(s)),
            None => Err(problem(r, "answer.type", "text is expected".into())),
        },
    }
}
