//! The question a `column.unknown` finding raises: which of the file's columns a node should
//! use, for a plain name, a list's element, a mapping's key or a column inside an expression.

use serde_json::Value;

use super::{
    AnswerUse, Builder, NO_COLUMN, NO_SUCH_COLUMN, Requirement, RequirementKind, RequirementTarget,
    TargetPlace, value_at,
};
use crate::catalog::BlockSpec;
use crate::model::Node;
use crate::validate::Finding;

impl Builder<'_> {
    /// `column.unknown`: which of the file's columns the node should use, a `select` of the
    /// file's headers (the finding's choices). `rel` is `/in/<key>[/<index>[/<field>]]`.
    pub(super) fn column_question(
        &mut self,
        node: &Node,
        spec: Option<&BlockSpec>,
        finding: &Finding,
        rel: &str,
    ) {
        // A file without a header row has no column to pick: the finding's hint asks for a
        // file with one, and a question offering nothing would only stall the person.
        if finding.choices.is_empty() {
            return;
        }
        let mut parts = rel.strip_prefix("/in/").unwrap_or_default().split('/');
        let Some(key) = parts
            .next()
            .filter(|k| !k.is_empty())
            .map(crate::yaml::unescape_pointer)
        else {
            return;
        };
        // `/in/rules/0/condition` (an element's key) or `/in/field_map/po_no` (a mapping's).
        let (index, field) = match parts.next() {
            Some(i) => match i.parse::<usize>() {
                Ok(i) => (Some(i), parts.next().map(crate::yaml::unescape_pointer)),
                Err(_) => (None, Some(crate::yaml::unescape_pointer(i))),
            },
            None => (None, None),
        };
        let written = value_at(node, rel)
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let wanted = finding
            .missing_column
            .clone()
            .unwrap_or_else(|| written.clone());
        // A mapping's key names the column (`{旧列名: 新列名}`): an answer could only replace
        // the value, the new name, so no question; the finding asks for the plan to be edited.
        let names_keys = spec
            .and_then(|s| s.inputs.get(&key))
            .and_then(|p| p.extra.get(crate::columns::COLUMNS_AS))
            .and_then(Value::as_str)
            == Some("keys");
        if names_keys {
            return;
        }
        // A row expression reading the column among other things (a rule's condition): the
        // answer replaces the column inside it, never the whole expression.
        // Anything but the bare name, an unset input (its default named it) or a whole `${…}`
        // reference (whose var the answer replaces) is an expression, even one that does not
        // parse: its answer then fails out loud instead of replacing the whole text.
        let whole_reference = crate::resolve::whole_reference(&written).is_some();
        let expression =
            (!written.is_empty() && written != wanted && !whole_reference).then_some(written);
        // A place read against several tables (a mapping shared by three) is asked once.
        if expression.is_none()
            && self.out.iter().any(|q| {
                q.answer_use == AnswerUse::Column
                    && q.target.node_id.as_deref() == Some(node.id.as_str())
                    && q.target.input.as_deref() == Some(key.as_str())
                    && (q.target.index, q.target.field.as_ref()) == (index, field.as_ref())
            })
        {
            return;
        }
        // One question per column an input's expressions read: the others join it.
        if let Some(text) = &expression
            && let Some(first) = self.out.iter_mut().find(|q| {
                q.answer_use == AnswerUse::Column
                    && q.target.node_id.as_deref() == Some(node.id.as_str())
                    && q.target.input.as_deref() == Some(key.as_str())
                    && q.target.column.as_deref() == Some(wanted.as_str())
            })
        {
            first.target.also.push(TargetPlace {
                index,
                field: field.clone(),
            });
            first
                .description
                .push_str(&format!("。この答えは式「{text}」にも使います"));
            if let Some(en) = &mut first.description_en {
                en.push_str(&format!("; the answer is used in {text:?} too"));
            }
            return;
        }
        let var = match index {
            Some(i) => {
                let name = format!("{key}_{}", i + 1);
                self.fresh_var(node, &name)
            }
            None => match &field {
                Some(f) => self.fresh_var(node, &format!("{key}_{f}")),
                None => self.fresh_var(node, &key),
            },
        };
        let port = spec.and_then(|s| s.inputs.get(&key));
        // The whole first line of the description: "取引先（名前またはコード）の列名" says
        // which column is meant; cut at the bracket it would be only "取引先".
        let first_line = |d: &str| -> String {
            let line = d.lines().next().unwrap_or_default().trim();
            if line.chars().count() > 40 {
                line.chars().take(40).collect::<String>() + "…"
            } else {
                line.to_string()
            }
        };
        // An element that says what it is (a rule's `id` and `description`) names the
        // question better than the input's description.
        let element = index.and_then(|i| node.inputs.get(&key)?.get(i));
        let element_says = element.and_then(|e| {
            let text = |k: &str| e.get(k).and_then(Value::as_str).map(str::trim);
            let said = [text("id"), text("description")]
                .into_iter()
                .flatten()
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            (!said.is_empty()).then(|| first_line(&said))
        });
        // A rule (an element that says what it is) whose expression reads the column can be
        // dropped instead, when the file has no such column at all: never a wrong column.
        let droppable = expression.is_some() && element_says.is_some();
        // A column (or a list's column) the block can do without may be left out instead.
        let absent_ok = expression.is_none()
            && field.is_none()
            && port.is_some_and(|p| {
                p.extra.get(crate::columns::ABSENT_OK) == Some(&Value::Bool(true))
            });
        let last = if droppable {
            Some(NO_SUCH_COLUMN)
        } else {
            absent_ok.then_some(NO_COLUMN)
        };
        let (label, label_en) = match (element_says, port) {
            (Some(said), _) if expression.is_some() => (
                format!("{said}：列「{wanted}」"),
                Some(format!("{said}: column {wanted:?}")),
            ),
            // A mapping's key: which of its columns is asked.
            (_, Some(p)) if index.is_none() && field.is_some() && !p.description.is_empty() => {
                let f = field.as_deref().unwrap_or_default();
                (
                    format!("{}：{f}", first_line(&p.description)),
                    p.description_en
                        .as_deref()
                        .map(|d| format!("{}: {f}", first_line(d))),
                )
            }
            (_, Some(p)) if !p.description.is_empty() => (
                first_line(&p.description),
                p.description_en.as_deref().map(first_line),
            ),
            _ => (key.clone(), Some(key.clone())),
        };
        let (description, description_en) = match &expression {
            Some(text) => (
                format!(
                    "ノード {} の式「{text}」が読む列「{wanted}」は添付ファイルにありません。代わりに使う列を選んでください（式の中のこの列名だけを置き換えます）",
                    node.id
                ),
                format!(
                    "The expression {text:?} of node {} reads the column {wanted:?}, which the attached file does not have: choose the column to use instead (only that name in the expression is replaced)",
                    node.id
                ),
            ),
            None => (
                format!(
                    "ノード {} が使う列「{wanted}」は添付ファイルにありません。代わりに使う列を選んでください",
                    node.id
                ),
                format!(
                    "The attached file has no column {wanted:?}, which node {} uses: choose the column to use instead",
                    node.id
                ),
            ),
        };
        let list = finding.choices.join(", ");
        // Pre-selected: the first header that means the same in accounting exports (more than
        // one, or it would have been fitted already), else nothing.
        // An input the block can do without proposes leaving it out when no header means it.
        let proposed = crate::column_meaning::same_meaning(&wanted, &finding.choices)
            .first()
            .map(|c| Value::from(c.as_str()))
            .or_else(|| absent_ok.then(|| Value::from(NO_COLUMN)));
        self.out.push(Requirement {
            id: var.clone(),
            kind: RequirementKind::Select,
            label,
            label_en,
            description,
            description_en: Some(description_en),
            options: finding
                .choices
                .iter()
                .map(String::as_str)
                .chain(last)
                .map(Value::from)
                .collect(),
            required: true,
            accept: None,
            hint: Some(match last {
                Some(NO_SUCH_COLUMN) => format!(
                    "ファイルの列: {list}。ファイルにない列なら「{NO_SUCH_COLUMN}」を選ぶと、この列を読むルールを外し、プランの説明に書き残します"
                ),
                Some(_) => format!(
                    "ファイルの列: {list}。ファイルにない列なら「{NO_COLUMN}」を選ぶと、この列を使わずに処理し、プランの説明に書き残します"
                ),
                None => format!("ファイルの列: {list}"),
            }),
            hint_en: Some(match last {
                Some(NO_SUCH_COLUMN) => format!(
                    "columns of the file: {list}. If the file has no such column, choose {NO_SUCH_COLUMN:?}: the rules reading it are dropped, and the plan's description says so"
                ),
                Some(_) => format!(
                    "columns of the file: {list}. If the file has no such column, choose {NO_COLUMN:?}: the block works without it, and the plan's description says so"
                ),
                None => format!("columns of the file: {list}"),
            }),
            validation: None,
            default: proposed,
            value_type: None,
            answer_use: AnswerUse::Column,
            target: RequirementTarget {
                var: expression.is_none().then_some(var),
                node_id: (!node.id.is_empty()).then(|| node.id.clone()),
                input: Some(key),
                index,
                field,
                column: expression.is_some().then_some(wanted),
                also: Vec::new(),
            },
        });
    }
}
