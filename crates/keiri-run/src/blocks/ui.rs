//! Human-in-the-loop blocks: `ui.confirmation`, `ui.interactive_input`, `ui.table_review`,
//! `ui.diff_viewer` and `control.approval`.
//!
//! Without an answer a block returns [`BlockError::awaiting`] with a question — a JSON object
//! whose `kind` tells the front-end which controls to show — and the engine pauses the run there
//! (`state.json` keeps it; status `paused`). The window, `keiri run` on a terminal (or
//! `--answers FILE`) and `run_resume` over the API answer it; the run is then resumed and the
//! block is called again with [`BlockContext::answer`], which it checks against the question
//! (a malformed answer is `INPUT_INVALID`, and the run stays resumable).
//!
//! Answers, by `kind`:
//! - `confirmation`, `diff`: `{approved: bool, comment?: string}`, or a bare yes/no (below)
//! - `input`: `{values: {id: value}, approved?: bool, response?: string}`; every required
//!   field needs a value of its type
//! - `table_review`: `{approved: bool, excluded?: [row index], changes?: [{row_index, field,
//!   after}]}`; only `editable_columns` may change, only when `allow_exclude` rows go
//! - `approval`: `{decisions: [{approver, decision: approved|rejected, comment?}]}`; approved
//!   when every approver on the route approved
//!
//! Wherever an answer says yes or no (`approved`, or the whole answer of a `confirmation`,
//! `diff` or `table_review`), a person may write it as they would say it: `true`/`false`,
//! `yes`/`no`, `y`/`n`, `ok`, `approve`/`reject`, はい/いいえ, 承認/却下 (trimmed, any case).
//! A bare yes/no answer stands for `{approved: …}`.

mod confirmation;
mod diff_viewer;
mod interactive_input;
mod table_review;

use serde_json::{Map, Value as Json};

use crate::block::{BlockError, Inputs};

pub(crate) fn bad_answer(ja: impl Into<String>, en: impl Into<String>) -> BlockError {
    BlockError::input_invalid(
        "answer",
        &format!("回答の形が違います（{}）", ja.into()),
        &format!("the answer does not fit the question ({})", en.into()),
    )
}

/// The answer as an object; a bare yes/no ([`yes_no`]) stands for `{approved: …}`.
pub(crate) fn answer_object(answer: &Json) -> Result<Map<String, Json>, BlockError> {
    match answer {
        Json::Object(map) => Ok(map.clone()),
        other => match yes_no(other) {
            Some(yes) => Ok(Map::from_iter([("approved".to_string(), Json::Bool(yes))])),
            None => Err(bad_answer(
                "オブジェクトか、はい・いいえが必要です",
                "expected an object, or a yes or a no",
            )),
        },
    }
}

/// A yes or a no as a person writes it (see the module docs); `None` for anything else.
pub(crate) fn yes_no(value: &Json) -> Option<bool> {
    match value {
        Json::Bool(b) => Some(*b),
        Json::String(s) => {
            let s = s.trim().to_lowercase();
            match s.as_str() {
                "true" | "yes" | "y" | "ok" | "approve" | "approved" | "はい" | "承認" => {
                    Some(true)
                }
                "false" | "no" | "n" | "reject" | "rejected" | "いいえ" | "却下" => {
                    Some(false)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn approved(answer: &Map<String, Json>) -> Result<bool, BlockError> {
    match answer.get("approved").and_then(yes_no) {
        Some(yes) => Ok(yes),
        None => Err(bad_answer(
            "approved に はい（true）か いいえ（false）が必要です",
            "approved must be yes (true) or no (false)",
        )),
    }
}

fn comment(answer: &Map<String, Json>) -> Result<String, BlockError> {
    match answer.get("comment") {
        None | Some(Json::Null) => Ok(String::new()),
        Some(Json::String(s)) => Ok(s.clone()),
        Some(_) => Err(bad_answer(
            "comment は文字列です",
            "comment must be a string",
        )),
    }
}

fn text_input(inputs: &Inputs, key: &str) -> Result<String, BlockError> {
    Ok(inputs.str(key)?.unwrap_or_default().to_string())
}
