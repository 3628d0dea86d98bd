//! The plan validator.
//!
//! Every finding has a stable `code` (the rule), a severity, the node it concerns, a JSON
//! pointer into the plan and a message in Japanese (default) or English, plus a hint where a
//! fix is obvious. The codes are the contract: the UI, the planner's repair loop and tests
//! branch on them.
//!
//! Validation is linear in the size of the plan: one pass collects node ids and output
//! aliases, one pass checks each node, and cycles are found with Tarjan's algorithm.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::Lang;
use crate::catalog::{BlockSpec, Catalog, TypeSpec, ValueType};
use crate::columns::FileSchema;
use crate::expr;
pub use crate::finding_code::FindingCode;
use crate::model::{Node, NodeKind, Plan};
use crate::refs::{self, Reference, Target};
use crate::yaml::escape_pointer;

mod contract;
mod finding;
mod items;
mod limits;

pub use finding::{Finding, Severity};

/// What the validator needs besides the plan and the catalog.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub lang: Lang,
    /// Ids of the plans a subflow may call (the designs directory's plans).
    pub known_plans: HashSet<String>,
    /// What is known of the files the plan reads (their tables and headers): a column a node
    /// names that the file feeding it lacks is `column.unknown`. Empty: nothing is checked.
    pub file_schemas: Vec<FileSchema>,
}

/// The loop variable's default name when `foreach.var` is absent.
pub const DEFAULT_LOOP_VAR: &str = "item";

/// Validates `plan` against `catalog`.
pub fn validate(plan: &Plan, catalog: &Catalog, options: &Options) -> Vec<Finding> {
    let mut v = Validator {
        catalog,
        options,
        findings: Vec::new(),
        used: HashSet::new(),
    };
    let vars: HashSet<String> = plan.vars.keys().cloned().collect();
    if plan.id.trim().is_empty() {
        v.error(
            FindingCode::PlanMissingId,
            None,
            "/id".into(),
            ("プランに id がありません", "the plan has no id"),
            Some(("id: を追加してください", "add an id:")),
        );
    }
    let root = Scope {
        nodes: HashMap::new(),
        vars,
        parent: None,
    };
    let summary = v.check_plan(plan, "", root);
    if let Some(ui) = &plan.ui {
        for (i, entry) in ui.layout.iter().enumerate() {
            if !summary.ids.contains(entry.as_str()) {
                v.error(
                    FindingCode::UiLayoutUnknownNode,
                    None,
                    format!("/ui/layout/{i}"),
                    (
                        &format!("ui.layout の {entry} はノード id ではありません"),
                        &format!("ui.layout entry {entry} is not a node id"),
                    ),
                    None,
                );
            }
        }
    }
    v.usage_warnings(plan, "");
    v.column_contract(plan);
    v.column_choices(plan);
    v.policy_limits(plan);
    v.findings
}

/// True when there is at least one error (warnings do not count).
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}

/// What the validator knows about a node while checking references.
#[derive(Debug, Clone)]
pub(crate) struct NodeInfo<'p> {
    /// alias → declared type of the output behind it (None: unknown).
    pub aliases: HashMap<&'p str, Option<TypeSpec>>,
}

pub(crate) struct Scope<'p, 's> {
    pub nodes: HashMap<&'p str, NodeInfo<'p>>,
    pub vars: HashSet<String>,
    pub parent: Option<&'s Scope<'p, 's>>,
}

impl<'p> Scope<'p, '_> {
    /// Finds a node in this scope or an outer one; the flag says whether it is local.
    pub fn node(&self, id: &str) -> Option<(&NodeInfo<'p>, bool)> {
        if let Some(n) = self.nodes.get(id) {
            return Some((n, true));
        }
        self.parent
            .and_then(|p| p.node(id))
            .map(|(n, _)| (n, false))
    }

    pub fn has_var(&self, name: &str) -> bool {
        self.vars.contains(name) || self.parent.is_some_and(|p| p.has_var(name))
    }
}

/// Output type information for a node, shared with the dry-run.
pub(crate) fn node_info<'p>(node: &'p Node, catalog: &Catalog) -> NodeInfo<'p> {
    let spec = node.block.as_deref().and_then(|b| catalog.get(b));
    let aliases = node
        .aliases()
        .map(|(local, alias)| {
            let ty = match node.kind() {
                NodeKind::Block => spec
                    .and_then(|s| s.outputs.get(local))
                    .map(|p| p.ty.clone()),
                NodeKind::Loop if local == "collect" => Some(TypeSpec::One("array".into())),
                _ => None,
            };
            (alias, ty)
        })
        .collect();
    NodeInfo { aliases }
}

struct PlanSummary<'p> {
    ids: HashSet<&'p str>,
    /// Outer nodes referenced from inside this plan.
    free: HashSet<String>,
}

struct Validator<'a> {
    catalog: &'a Catalog,
    options: &'a Options,
    findings: Vec<Finding>,
    /// (node id, alias) pairs some reference uses.
    used: HashSet<(String, String)>,
}

impl<'a> Validator<'a> {
    fn push(
        &mut self,
        code: FindingCode,
        severity: Severity,
        node_id: Option<&str>,
        path: String,
        message: (&str, &str),
        hint: Option<(&str, &str)>,
    ) {
        let lang = self.options.lang;
        self.findings.push(Finding {
            code,
            severity,
            node_id: node_id.map(str::to_string),
            path,
            message: lang.pick(message.0, message.1).to_string(),
            hint: hint.map(|(ja, en)| lang.pick(ja, en).to_string()),
            choices: Vec::new(),
            missing_column: None,
            line: None,
            column: None,
        });
    }

    fn error(
        &mut self,
        code: FindingCode,
        node_id: Option<&str>,
        path: String,
        message: (&str, &str),
        hint: Option<(&str, &str)>,
    ) {
        self.push(code, Severity::Error, node_id, path, message, hint);
    }

    fn check_plan<'p>(
        &mut self,
        plan: &'p Plan,
        base: &str,
        mut scope: Scope<'p, '_>,
    ) -> PlanSummary<'p> {
        // Pass 1: ids and aliases, so references may point forward.
        let mut ids: HashSet<&'p str> = HashSet::new();
        for (i, node) in plan.graph.iter().enumerate() {
            let path = format!("{base}/graph/{i}");
            if node.id.trim().is_empty() {
                self.error(
                    FindingCode::NodeMissingId,
                    None,
                    format!("{path}/id"),
                    (
                        &format!("{i} 番目のノードに id がありません"),
                        &format!("node #{i} has no id"),
                    ),
                    None,
                );
                continue;
            }
            if !ids.insert(node.id.as_str()) {
                let id = &node.id;
                self.error(
                    FindingCode::NodeDuplicateId,
                    Some(id),
                    format!("{path}/id"),
                    (
                        &format!("ノード id {id} が重複しています"),
                        &format!("duplicate node id {id}"),
                    ),
                    Some(("別の id を付けてください", "give the node a unique id")),
                );
                continue;
            }
            scope
                .nodes
                .insert(node.id.as_str(), node_info(node, self.catalog));
        }

        // Pass 2: each node; collect dependency edges for the cycle check.
        let mut edges: HashMap<&'p str, Vec<String>> = HashMap::new();
        let mut free: HashSet<String> = HashSet::new();
        for (i, node) in plan.graph.iter().enumerate() {
            let path = format!("{base}/graph/{i}");
            let deps = self.check_node(node, &path, &scope);
            let mut local = Vec::new();
            for (dep, is_local) in deps {
                if is_local {
                    local.push(dep);
                } else {
                    free.insert(dep);
                }
            }
            if !node.id.is_empty() {
                edges.entry(node.id.as_str()).or_default().extend(local);
            }
        }
        self.check_cycles(plan, base, &edges);
        PlanSummary { ids, free }
    }

    /// Checks one node; returns the node ids it depends on, flagged local or outer.
    fn check_node<'p>(
        &mut self,
        node: &'p Node,
        path: &str,
        scope: &Scope<'p, '_>,
    ) -> Vec<(String, bool)> {
        let id = (!node.id.is_empty()).then_some(node.id.as_str());
        let mut spec: Option<&BlockSpec> = None;
        match node.kind() {
            NodeKind::Block => spec = self.check_block(node, id, path),
            NodeKind::Loop => {}
            NodeKind::Subflow => self.check_subflow(node, id, path),
            NodeKind::Unknown => {
                let t = node.kind.as_deref().unwrap_or_default();
                self.error(
                    FindingCode::NodeUnknownType,
                    id,
                    format!("{path}/type"),
                    (
                        &format!("type {t} は使えません（loop / subflow のみ）"),
                        &format!("type {t} is not allowed (only loop or subflow)"),
                    ),
                    None,
                );
            }
        }
        self.check_loop_keys(node, id, path);
        for (local, alias) in &node.out {
            if !alias.is_string() {
                self.error(
                    FindingCode::OutAliasInvalid,
                    id,
                    format!("{path}/out/{}", escape_pointer(local)),
                    (
                        &format!("out.{local} の別名は文字列である必要があります"),
                        &format!("the alias of out.{local} must be a string"),
                    ),
                    None,
                );
            }
        }

        // References in this node's own fields.
        let (mut found, mut bad) = (Vec::new(), Vec::new());
        for (k, v) in &node.inputs {
            refs::scan(
                v,
                &format!("{path}/in/{}", escape_pointer(k)),
                &mut found,
                &mut bad,
            );
        }
        if let Some(when) = &node.when {
            let expr_path = match when {
                crate::model::When::Expr { .. } => format!("{path}/when/expr"),
                crate::model::When::Bare(_) => format!("{path}/when"),
            };
            self.check_expr(&when.expr(), id, &expr_path);
            refs::scan(
                &Value::String(when.expr()),
                &expr_path,
                &mut found,
                &mut bad,
            );
        }
        if let Some(f) = &node.foreach {
            for (key, value) in [("input", &f.input), ("items", &f.items)] {
                if let Some(v) = value {
                    refs::scan(v, &format!("{path}/foreach/{key}"), &mut found, &mut bad);
                }
            }
        }
        if let Some(w) = &node.while_loop
            && let Some(c) = &w.condition
        {
            let expr_path = format!("{path}/while/condition");
            self.check_expr(&c.expr(), id, &expr_path);
            // The condition sees `${vars.iteration}` and the previous iteration's body
            // outputs, besides everything outside the loop.
            let mut cond = Vec::new();
            refs::scan(&Value::String(c.expr()), &expr_path, &mut cond, &mut bad);
            let body_nodes: HashSet<&str> = node
                .body
                .iter()
                .flat_map(|b| b.plan.graph.iter())
                .map(|n| n.id.as_str())
                .collect();
            found.extend(cond.into_iter().filter(|r| match &r.target {
                refs::Target::Var { name, .. } => name != "iteration",
                refs::Target::Node { node, .. } => !body_nodes.contains(node.as_str()),
                _ => true,
            }));
        }
        if let Some(call) = &node.call {
            for (k, v) in &call.inputs {
                let p = format!("{path}/call/inputs/{}", escape_pointer(k));
                refs::scan(v, &p, &mut found, &mut bad);
            }
        }
        for m in bad {
            self.error(
                FindingCode::RefMalformed,
                id,
                m.pointer.clone(),
                (
                    &format!("参照 ${{{}}} が不正です: {}", m.raw, m.reason),
                    &format!("malformed reference ${{{}}}: {}", m.raw, m.reason),
                ),
                Some((
                    "${node.alias} / ${vars.x} の形で書いてください",
                    "write ${node.alias} or ${vars.x}",
                )),
            );
        }
        let mut deps = Vec::new();
        for r in &found {
            if let Some(dep) = self.check_reference(r, id, scope, node, spec, path) {
                deps.push(dep);
            }
        }
        if node.kind() == NodeKind::Loop {
            deps.extend(self.check_loop(node, id, path, scope, &found));
        }
        deps
    }

    fn check_expr(&mut self, src: &str, id: Option<&str>, path: &str) {
        if let Err(e) = expr::check(src) {
            self.error(
                FindingCode::WhenInvalidExpr,
                id,
                path.to_string(),
                (
                    &format!("条件式の {} 文字目: {}", e.column, e.message),
                    &format!("condition, column {}: {}", e.column, e.message),
                ),
                Some((
                    "比較 (== != < <= > >=)、and/or/not、リテラル、${…} 参照だけが使えます",
                    "only comparisons (== != < <= > >=), and/or/not, literals and ${…} references are allowed",
                )),
            );
        }
    }

    fn check_block(&mut self, node: &Node, id: Option<&str>, path: &str) -> Option<&'a BlockSpec> {
        let Some(block) = node.block.as_deref() else {
            self.error(
                FindingCode::NodeMissingBlock,
                id,
                path.to_string(),
                ("block がありません", "the node has no block"),
                Some((
                    "block: にカタログのブロック id を書いてください",
                    "set block: to a catalog block id",
                )),
            );
            return None;
        };
        let Some(spec) = self.catalog.get(block) else {
            let similar = crate::v0::similar_blocks(self.catalog, block);
            let hint_ja = if similar.is_empty() {
                "カタログにあるブロック id を使ってください".to_string()
            } else {
                format!("候補: {}", similar.join(", "))
            };
            let hint_en = if similar.is_empty() {
                "use a block id from the catalog".to_string()
            } else {
                format!("did you mean: {}", similar.join(", "))
            };
            self.error(
                FindingCode::BlockUnknown,
                id,
                format!("{path}/block"),
                (
                    &format!("ブロック {block} はカタログにありません"),
                    &format!("block {block} is not in the catalog"),
                ),
                Some((&hint_ja, &hint_en)),
            );
            return None;
        };
        for (key, value) in &node.inputs {
            let p = format!("{path}/in/{}", escape_pointer(key));
            let Some(port) = spec.inputs.get(key) else {
                let known: Vec<&str> = spec.inputs.keys().map(String::as_str).collect();
                self.error(
                    FindingCode::InputUnknownKey,
                    id,
                    p,
                    (
                        &format!("{block} に入力 {key} はありません"),
                        &format!("{block} has no input {key}"),
                    ),
                    Some((
                        &format!("使える入力: {}", known.join(", ")),
                        &format!("inputs: {}", known.join(", ")),
                    )),
                );
                continue;
            };
            if refs::contains_reference(value) {
                // A string with an interpolated reference is a string; a whole reference is
                // checked against the referenced output's type in check_reference.
                if let Value::String(s) = value {
                    let whole = s.trim().starts_with("${")
                        && s.trim().ends_with('}')
                        && s.matches("${").count() == 1;
                    if !whole {
                        self.check_literal_type(
                            block,
                            key,
                            port,
                            &Value::String(s.clone()),
                            id,
                            &p,
                        );
                    }
                }
                continue;
            }
            if let Some(allowed) = &port.enum_values
                && !value.is_null()
                && !allowed.iter().any(|a| values_equal(a, value))
            {
                let list: Vec<String> = allowed.iter().map(short).collect();
                self.error(
                    FindingCode::InputEnumMismatch,
                    id,
                    p.clone(),
                    (
                        &format!("{key} の値 {} は選択肢にありません", short(value)),
                        &format!("{key}: {} is not one of the allowed values", short(value)),
                    ),
                    Some((
                        &format!("選択肢: {}", list.join(", ")),
                        &format!("allowed: {}", list.join(", ")),
                    )),
                );
                continue;
            }
            self.check_literal_type(block, key, port, value, id, &p);
            self.check_items(block, key, port, value, id, &p);
        }
        for (key, port) in &spec.inputs {
            let missing = node.inputs.get(key).is_none_or(Value::is_null);
            // ai.process_llm's output_schema has its own, more specific rule below.
            let specific = block == "ai.process_llm" && key == "output_schema";
            if !specific && port.required && port.default.is_none() && missing {
                self.error(
                    FindingCode::InputMissingRequired,
                    id,
                    format!("{path}/in/{}", escape_pointer(key)),
                    (
                        &format!("{block} の必須入力 {key} がありません"),
                        &format!("required input {key} of {block} is missing"),
                    ),
                    Some((
                        &format!("{key}: {}", port.description),
                        &format!(
                            "{key}: {}",
                            port.description_en.as_deref().unwrap_or(&port.description)
                        ),
                    )),
                );
            }
        }
        for key in node.out.keys() {
            if !spec.outputs.contains_key(key) {
                let known: Vec<&str> = spec.outputs.keys().map(String::as_str).collect();
                self.error(
                    FindingCode::OutputUnknownKey,
                    id,
                    format!("{path}/out/{}", escape_pointer(key)),
                    (
                        &format!("{block} に出力 {key} はありません"),
                        &format!("{block} has no output {key}"),
                    ),
                    Some((
                        &format!("使える出力: {}", known.join(", ")),
                        &format!("outputs: {}", known.join(", ")),
                    )),
                );
            }
        }
        if block == "ai.process_llm" {
            let empty = |k: &str| match node.inputs.get(k) {
                None | Some(Value::Null) => true,
                Some(Value::String(s)) => s.trim().is_empty(),
                Some(Value::Object(m)) => m.is_empty(),
                Some(Value::Array(a)) => a.is_empty(),
                Some(_) => false,
            };
            if empty("output_schema") {
                self.error(
                    FindingCode::AiOutputSchemaRequired,
                    id,
                    format!("{path}/in/output_schema"),
                    (
                        "ai.process_llm には空でない output_schema が必要です",
                        "ai.process_llm needs a non-empty output_schema",
                    ),
                    Some((
                        "出力の項目と型を output_schema に書いてください",
                        "describe the output fields and types in output_schema",
                    )),
                );
            }
            if empty("prompt") && empty("instruction") {
                self.error(
                    FindingCode::AiPromptRequired,
                    id,
                    format!("{path}/in"),
                    (
                        "ai.process_llm には prompt か instruction が必要です",
                        "ai.process_llm needs a prompt or an instruction",
                    ),
                    None,
                );
            }
        }
        Some(spec)
    }

    fn check_literal_type(
        &mut self,
        block: &str,
        key: &str,
        port: &crate::catalog::PortSpec,
        value: &Value,
        id: Option<&str>,
        path: &str,
    ) {
        let actual = ValueType::of(value);
        if !port.ty.accepts(actual) {
            let want = port.ty.display();
            self.error(
                FindingCode::InputTypeMismatch,
                id,
                path.to_string(),
                (
                    &format!(
                        "{block} の {key} は {want} 型ですが {} が指定されています",
                        actual.as_str()
                    ),
                    &format!(
                        "{key} of {block} expects {want} but got {}",
                        actual.as_str()
                    ),
                ),
                None,
            );
        }
    }

    fn check_subflow(&mut self, node: &Node, id: Option<&str>, path: &str) {
        let plan_id = node
            .call
            .as_ref()
            .map(|c| c.plan_id.trim())
            .unwrap_or_default();
        if plan_id.is_empty() {
            self.error(
                FindingCode::SubflowMissingPlanId,
                id,
                format!("{path}/call"),
                (
                    "subflow には call.plan_id が必要です",
                    "a subflow needs call.plan_id",
                ),
                None,
            );
        } else if !self.options.known_plans.contains(plan_id) {
            self.error(
                FindingCode::SubflowUnknownPlan,
                id,
                format!("{path}/call/plan_id"),
                (
                    &format!("呼び出すプラン {plan_id} が designs にありません"),
                    &format!("plan {plan_id} is not in the designs directory"),
                ),
                Some((
                    "先にそのプランを登録してください",
                    "register that plan first",
                )),
            );
        }
    }

    /// Loop keys wherever they appear: on a node that is not a loop they would be silently
    /// ignored by the runtime, and `foreach` with `while` or a bound below 1 can never mean
    /// what the author wanted.
    fn check_loop_keys(&mut self, node: &Node, id: Option<&str>, path: &str) {
        if !matches!(node.kind(), NodeKind::Loop) {
            let present = [
                ("foreach", node.foreach.is_some()),
                ("while", node.while_loop.is_some()),
                ("body", node.body.is_some()),
            ];
            for (key, _) in present.iter().filter(|(_, here)| *here) {
                self.error(
                    FindingCode::NodeLoopKeyOnNonLoop,
                    id,
                    format!("{path}/{key}"),
                    (
                        &format!("{key} は type: loop のノードでしか使えません"),
                        &format!("{key} is only allowed on a node with type: loop"),
                    ),
                    Some((
                        "繰り返すなら type: loop にして処理を body.plan に入れ、そうでなければこのキーを削除してください",
                        "to repeat, make it type: loop with the work in body.plan; otherwise remove the key",
                    )),
                );
            }
        }
        if node.foreach.is_some() && node.while_loop.is_some() {
            self.error(
                FindingCode::LoopForeachAndWhile,
                id,
                path.to_string(),
                (
                    "foreach と while は同時に使えません",
                    "a loop cannot have both foreach and while",
                ),
                Some((
                    "配列を順に処理するなら foreach、条件が満たされるまで繰り返すなら while のどちらか一方にしてください",
                    "keep foreach to go through a list, or while to repeat until a condition holds, not both",
                )),
            );
        }
        if let Some(w) = &node.while_loop
            && w.max_iterations.is_none_or(|m| m < 1)
        {
            self.error(
                FindingCode::LoopWhileMaxIterations,
                id,
                format!("{path}/while/max_iterations"),
                (
                    "while には 1 以上の max_iterations が必要です",
                    "while needs max_iterations of at least 1",
                ),
                Some((
                    "繰り返しの上限回数（例: 100）を指定してください",
                    "set an upper bound on the iterations, e.g. 100",
                )),
            );
        }
        if let Some(f) = &node.foreach
            && f.max_concurrency.is_some_and(|m| m < 1)
        {
            self.error(
                FindingCode::LoopMaxConcurrency,
                id,
                format!("{path}/foreach/max_concurrency"),
                (
                    "foreach の max_concurrency は 1 以上にしてください",
                    "foreach max_concurrency must be at least 1",
                ),
                Some((
                    "同時に処理する件数です。順番に処理するなら 1 にしてください",
                    "it is how many items run at once; use 1 to go one by one",
                )),
            );
        }
    }

    fn check_loop<'p>(
        &mut self,
        node: &'p Node,
        id: Option<&str>,
        path: &str,
        scope: &Scope<'p, '_>,
        found: &[Reference],
    ) -> Vec<(String, bool)> {
        match (&node.foreach, &node.while_loop) {
            // Both at once is reported by `check_loop_keys`, for every kind of node.
            (Some(_), Some(_)) => {}
            (None, None) => self.error(
                FindingCode::LoopMissingIteration,
                id,
                path.to_string(),
                (
                    "loop には foreach か while が必要です",
                    "a loop needs foreach or while",
                ),
                None,
            ),
            _ => {}
        }
        if let Some(f) = &node.foreach {
            let source = f.input.as_ref().or(f.items.as_ref());
            let key = if f.input.is_some() { "input" } else { "items" };
            let iterable = match source {
                None => Some(false),
                Some(Value::Array(_)) => Some(true),
                Some(Value::String(s)) if refs::contains_reference(&Value::String(s.clone())) => {
                    // A whole reference: its type must allow an array.
                    let whole = found
                        .iter()
                        .find(|r| r.pointer == format!("{path}/foreach/{key}") && r.whole);
                    whole
                        .and_then(|r| self.reference_type(r, scope))
                        .map(|t| t.accepts(ValueType::Array))
                }
                Some(_) => Some(false),
            };
            if iterable == Some(false) {
                self.error(
                    FindingCode::LoopForeachNotIterable,
                    id,
                    format!("{path}/foreach"),
                    (
                        "foreach の input / items は配列（または配列を返す参照）である必要があります",
                        "foreach input/items must be an array or a reference to one",
                    ),
                    None,
                );
            }
        }
        if node
            .while_loop
            .as_ref()
            .is_some_and(|w| w.condition.is_none())
        {
            self.error(
                FindingCode::WhenInvalidExpr,
                id,
                format!("{path}/while/condition"),
                (
                    "while に condition.expr がありません",
                    "while has no condition.expr",
                ),
                None,
            );
        }
        let Some(body) = &node.body else {
            self.error(
                FindingCode::LoopMissingBody,
                id,
                format!("{path}/body"),
                (
                    "loop に body.plan がありません",
                    "the loop has no body.plan",
                ),
                None,
            );
            return Vec::new();
        };
        self.loop_outputs(node, &body.plan, path);
        let mut vars: HashSet<String> = body.plan.vars.keys().cloned().collect();
        if let Some(f) = &node.foreach {
            vars.insert(
                f.var
                    .clone()
                    .unwrap_or_else(|| DEFAULT_LOOP_VAR.to_string()),
            );
            vars.insert("index".into());
        }
        if node.while_loop.is_some() {
            vars.insert("iteration".into());
        }
        let inner = Scope {
            nodes: HashMap::new(),
            vars,
            parent: Some(scope),
        };
        let summary = self.check_plan(&body.plan, &format!("{path}/body/plan"), inner);
        // What the body uses from outside is a dependency of the loop node itself.
        summary
            .free
            .into_iter()
            .map(|dep| {
                let local = scope.nodes.contains_key(dep.as_str());
                (dep, local)
            })
            .collect()
    }

    fn reference_type(&self, r: &Reference, scope: &Scope<'_, '_>) -> Option<TypeSpec> {
        match &r.target {
            Target::Node {
                node,
                alias,
                path: None,
            } => scope
                .node(node)
                .and_then(|(info, _)| info.aliases.get(alias.as_str()).cloned().flatten()),
            _ => None,
        }
    }

    /// Checks one reference; returns the node it depends on (and whether it is local).
    fn check_reference(
        &mut self,
        r: &Reference,
        id: Option<&str>,
        scope: &Scope<'_, '_>,
        node: &Node,
        spec: Option<&BlockSpec>,
        node_path: &str,
    ) -> Option<(String, bool)> {
        match &r.target {
            Target::Var { name, .. } => {
                if !scope.has_var(name) {
                    self.error(
                        FindingCode::RefUndefinedVar,
                        id,
                        r.pointer.clone(),
                        (
                            &format!("変数 {name} が vars に定義されていません"),
                            &format!("variable {name} is not defined in vars"),
                        ),
                        Some((
                            &format!("vars: に {name} を追加するか、質問で値を決めてください"),
                            &format!("add {name} to vars: or ask for it"),
                        )),
                    );
                }
                None
            }
            Target::Env { .. } | Target::Config { .. } => None,
            Target::Node {
                node: target,
                alias,
                path,
            } => {
                let Some((info, local)) = scope.node(target) else {
                    self.error(
                        FindingCode::RefUnknownNode,
                        id,
                        r.pointer.clone(),
                        (
                            &format!("参照先のノード {target} がありません"),
                            &format!("referenced node {target} does not exist"),
                        ),
                        None,
                    );
                    return None;
                };
                self.used.insert((target.clone(), alias.clone()));
                let Some(alias_type) = info.aliases.get(alias.as_str()) else {
                    let known: Vec<&str> = info.aliases.keys().copied().collect();
                    self.error(
                        FindingCode::RefUnknownAlias,
                        id,
                        r.pointer.clone(),
                        (
                            &format!("ノード {target} は {alias} を出力していません"),
                            &format!("node {target} publishes no alias {alias}"),
                        ),
                        Some((
                            &format!("{target} の out: {}", known.join(", ")),
                            &format!("{target} out: {}", known.join(", ")),
                        )),
                    );
                    return Some((target.clone(), local));
                };
                // Type check: a whole reference in a top-level input of a known block.
                if let (Some(spec), Some(out_ty), None, true) = (spec, alias_type, path, r.whole) {
                    let prefix = format!("{node_path}/in/");
                    if let Some(key) = r.pointer.strip_prefix(&prefix).filter(|k| !k.contains('/'))
                    {
                        let key = crate::yaml::unescape_pointer(key);
                        if let Some(port) = spec.inputs.get(&key)
                            && !port.ty.accepts_any_of(out_ty)
                        {
                            let block = node.block.as_deref().unwrap_or_default();
                            self.error(
                                    FindingCode::RefTypeMismatch,
                                    id,
                                    r.pointer.clone(),
                                    (
                                        &format!(
                                            "{block} の {key} は {} 型ですが、{target}.{alias} は {} 型です",
                                            port.ty.display(),
                                            out_ty.display()
                                        ),
                                        &format!(
                                            "{key} of {block} expects {} but {target}.{alias} is {}",
                                            port.ty.display(),
                                            out_ty.display()
                                        ),
                                    ),
                                    None,
                                );
                        }
                    }
                }
                Some((target.clone(), local))
            }
        }
    }

    fn check_cycles(&mut self, plan: &Plan, base: &str, edges: &HashMap<&str, Vec<String>>) {
        let index: HashMap<&str, usize> = plan
            .graph
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i))
            .collect();
        let n = plan.graph.len();
        let adj: Vec<Vec<usize>> = plan
            .graph
            .iter()
            .map(|node| {
                edges
                    .get(node.id.as_str())
                    .map(|deps| {
                        deps.iter()
                            .filter_map(|d| index.get(d.as_str()).copied())
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect();
        for component in tarjan(n, &adj) {
            let is_cycle =
                component.len() > 1 || component.first().is_some_and(|&v| adj[v].contains(&v));
            if !is_cycle {
                continue;
            }
            let mut members = component.clone();
            members.sort_unstable();
            let names: Vec<&str> = members.iter().map(|&i| plan.graph[i].id.as_str()).collect();
            let first = members[0];
            let list = names.join(" → ");
            self.error(
                FindingCode::GraphCycle,
                Some(names[0]),
                format!("{base}/graph/{first}"),
                (
                    &format!("参照が循環しています: {list}"),
                    &format!("references form a cycle: {list}"),
                ),
                Some((
                    "どこかの参照を外して DAG にしてください",
                    "remove a reference to make the graph acyclic",
                )),
            );
        }
    }

    fn usage_warnings(&mut self, plan: &Plan, base: &str) {
        for (i, node) in plan.graph.iter().enumerate() {
            let path = format!("{base}/graph/{i}");
            // Body nodes are not checked: the loop collects their outputs implicitly.
            if node.id.is_empty() {
                continue;
            }
            let aliases: Vec<(&str, &str)> = node.aliases().collect();
            let unused: Vec<&(&str, &str)> = aliases
                .iter()
                .filter(|(_, a)| !self.used.contains(&(node.id.clone(), (*a).to_string())))
                .collect();
            let sink = self.is_sink(node);
            if unused.len() == aliases.len() && !sink {
                let id = node.id.clone();
                self.push(
                    FindingCode::NodeFeedsNothing,
                    Severity::Warning,
                    Some(&id),
                    path.clone(),
                    (
                        &format!("ノード {id} の出力はどこにも使われていません"),
                        &format!("node {id} feeds nothing"),
                    ),
                    Some((
                        "後続のノードで参照するか、不要なら削除してください",
                        "reference it from a later node or remove it",
                    )),
                );
                continue;
            }
            if unused.len() == aliases.len() {
                continue;
            }
            for (local, alias) in unused {
                let id = node.id.clone();
                self.push(
                    FindingCode::OutputUnused,
                    Severity::Warning,
                    Some(&id),
                    format!("{path}/out/{}", escape_pointer(local)),
                    (
                        &format!("出力 {id}.{alias} は使われていません"),
                        &format!("output {id}.{alias} is never used"),
                    ),
                    None,
                );
            }
        }
    }

    /// Blocks whose effect is the point (writing, showing, notifying) need not feed anything.
    fn is_sink(&self, node: &Node) -> bool {
        match node.kind() {
            NodeKind::Block => node
                .block
                .as_deref()
                .and_then(|b| self.catalog.get(b))
                .is_none_or(|s| {
                    matches!(
                        s.category.as_str(),
                        "output" | "ui" | "integration" | "control"
                    )
                }),
            _ => false,
        }
    }
}

fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn short(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.chars().count() > 40 {
        s.chars().take(40).collect::<String>() + "…"
    } else {
        s
    }
}

/// Tarjan's strongly connected components, iterative so deep graphs cannot overflow the stack.
fn tarjan(n: usize, adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut next = 0usize;
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut call: Vec<(usize, usize)> = vec![(start, 0)];
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut child)) = call.last_mut() {
            if *child < adj[v].len() {
                let w = adj[v][*child];
                *child += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(parent, _)) = call.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut component = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        component.push(w);
                        if w == v {
                            break;
                        }
                    }
                    out.push(component);
                }
            }
        }
    }
    out
}
