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
//! - `confirmation`, `diff`: `{approved: bool, comment?: string}`
//! - `input`: `{values: {id: value}, approved?: bool, response?: string}`; every required
//!   field needs a value of its type
//! - `table_review`: `{approved: bool, excluded?: [row index], changes?: [{row_index, field,
//!   after}]}`; only `editable_columns` may change, only when `allow_exclude` rows go
//! - `approval`: `{decisions: [{approver, decision: approved|rejected, comment?}]}`; approved
//!   when every approver on the route approved

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

pub(crate) fn answer_object(answer: &Json) -> Result<&Map<String, Json>, BlockError> {
    answer
        .as_object()
        .ok_or_else(|| bad_answer("オブジェクトが必要です", "expected an object"))
}

fn approved(answer: &Map<String, Json>) -> Result<bool, BlockError> {
    match answer.get("approved") {
        Some(Json::Bool(b)) => Ok(*b),
        _ => Err(bad_answer(
            "approved に true か false が必要です",
            "approved must be true or false",
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
