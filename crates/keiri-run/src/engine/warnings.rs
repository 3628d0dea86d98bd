//! Warnings on nodes that ran (#30.3): what a block reports ([`crate::block::CallSink::warn`])
//! and what the engine sees for itself — a reader or a transform whose table came out empty.
//! Each is recorded once, redacted, as a `node_warning` event and in `state.json`. Beside them,
//! the other thing a run's record must say about a node that ran: who answered its question.

use indexmap::IndexMap;
use keiri_plan::catalog::BlockSpec;
use keiri_plan::model::Node;
use serde_json::Value as Json;

use super::Runner;
use crate::block::{Outputs, Warning};
use crate::records::Event;
use crate::state::NodeWarning;
use crate::value::Value;

impl Runner<'_> {
    /// `LOOP_CAPPED`: a `while` whose condition still held when it reached its own
    /// `max_iterations`; its outputs are those of an unfinished loop.
    pub(super) fn warn_loop_capped(&self, qid: &str, max: usize) {
        self.warn(
            qid,
            Warning::new(
                "LOOP_CAPPED",
                format!(
                    "while の条件がまだ成り立つまま max_iterations（{max} 回）に達しました。最後の回の値を使っています"
                ),
                format!(
                    "the while condition still held when max_iterations ({max}) was reached: the outputs are the last iteration's"
                ),
            ),
        );
    }

    /// Records that node `qid` accepted a person's answer: who (the run's `answered_by`) and
    /// when, as a `node_answered` event and in `state.json`.
    pub(super) fn record_answer(&self, qid: &str, at: chrono::DateTime<chrono::Utc>) {
        let answered = crate::state::Answered {
            node: qid.to_string(),
            by: self
                .options
                .answered_by
                .clone()
                .filter(|by| !by.trim().is_empty())
                .unwrap_or_else(|| "unknown".into()),
            at: at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        };
        self.emit(Event::NodeAnswered {
            node: answered.node.clone(),
            by: answered.by.clone(),
            at: answered.at.clone(),
        });
        let mut state = self.lock_state();
        state.answered.retain(|a| a.node != qid);
        state.answered.push(answered);
    }

    /// Records `warning` on node `qid`: its event now, and `state.json` with the node's state.
    pub(super) fn warn(&self, qid: &str, warning: Warning) {
        let warning = NodeWarning {
            node: qid.to_string(),
            code: warning.code,
            message_ja: self.secrets.redact_str(&warning.message_ja).into_owned(),
            message_en: self.secrets.redact_str(&warning.message_en).into_owned(),
        };
        self.emit(Event::NodeWarning {
            node: warning.node.clone(),
            code: warning.code.clone(),
            message_ja: warning.message_ja.clone(),
            message_en: warning.message_en.clone(),
        });
        self.lock_state().warnings.push(warning);
    }
}

/// The rows of a row-valued input or output: a table, or a list of objects.
fn rows(value: &Value) -> Option<usize> {
    match value {
        Value::Table(df) => Some(df.height()),
        Value::Json(Json::Array(items)) if items.iter().all(Json::is_object) => Some(items.len()),
        Value::Json(_) => None,
    }
}

/// The rows of the block's first row-valued input in spec order (a filter's `rows`, a join's
/// `left`); `None` when the node reads no rows (a reader). A left join of no rows to a full
/// table lost nothing: its rows were gone before it.
pub(super) fn input_rows(spec: &BlockSpec, inputs: &IndexMap<String, Value>) -> Option<usize> {
    spec.inputs
        .keys()
        .find_map(|key| inputs.get(key).and_then(rows))
}

/// `NO_ROWS` when a reader's (category `input`) or a transform's first row-valued output is
/// empty: a reader found no data rows (a header-only export, an empty folder), or a transform
/// turned rows into none. A node whose inputs were already empty says nothing: the warning
/// stands where the rows were lost, not at every node after it. A check's empty list of
/// findings is its good answer and is not warned about, and so is a main output the plan does
/// not take (the node's `out`): a filter whose plan keeps only its `excluded` rows (the rows
/// that fail a rule) has found nothing wrong when every row was excluded or none was.
pub(super) fn empty_result(
    spec: &BlockSpec,
    node: &Node,
    input_rows: Option<usize>,
    outputs: &Outputs,
) -> Option<Warning> {
    if !matches!(spec.category.as_str(), "input" | "transforms") {
        return None;
    }
    let (key, out) = outputs
        .0
        .iter()
        .find_map(|(k, v)| rows(v).map(|n| (k, n)))?;
    if node.aliases().next().is_some() && !node.aliases().any(|(local, _)| local == key) {
        return None;
    }
    if out > 0 {
        return None;
    }
    match input_rows {
        // A reader of files (a folder, a ZIP) found none: no header to speak of.
        None if spec.id.starts_with("file.") => Some(Warning::new(
            "NO_ROWS",
            format!(
                "{key} が 0 件です。フォルダ（ZIP）に対象のファイルがありません。場所と絞り込み条件を確認してください"
            ),
            format!(
                "{key} is empty: the folder (or ZIP) holds no file to read; check its location and filters"
            ),
        )),
        None => Some(Warning::new(
            "NO_ROWS",
            format!("{key} が 0 行です。見出しだけのファイルか、読み込む対象が空です"),
            format!("{key} has no rows: the file has only a header, or there was nothing to read"),
        )),
        Some(0) => None,
        Some(n) => Some(Warning::new(
            "NO_ROWS",
            format!(
                "{key} が 0 行になりました（入力は {n} 行）。条件・キー・列の指定を確認してください"
            ),
            format!(
                "{key} came out with no rows (the input had {n}): check the conditions, keys and columns"
            ),
        )),
    }
}
