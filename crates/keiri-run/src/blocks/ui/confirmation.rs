//! `ui.confirmation`: its inputs and outputs are in `block_specs/ui/ui.confirmation.yaml`.

use super::{answer_object, approved, comment, text_input};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use serde_json::json;

fn confirmation(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let message = inputs.require_str("message")?.to_string();
    let Some(answer) = ctx.answer else {
        return Err(BlockError::awaiting(
            json!({
                "kind": "confirmation",
                "message": message,
                "details": inputs.json("details"),
                "labels": crate::codes::labels_for(inputs.json("details").as_ref()),
                "confirm_label": text_input(inputs, "confirm_label")?,
                "cancel_label": text_input(inputs, "cancel_label")?,
            }),
            format!("確認待ち: {message}"),
            format!("waiting for a confirmation: {message}"),
        ));
    };
    let answer = &answer_object(answer)?;
    Ok(Outputs::new()
        .with("approved", json!(approved(answer)?))
        .with("comment", json!(comment(answer)?)))
}

builtin!("ui.confirmation", confirmation);
