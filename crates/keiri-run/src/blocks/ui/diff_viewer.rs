//! `ui.diff_viewer`: its inputs and outputs are in `block_specs/ui/ui.diff_viewer.yaml`.

use super::{answer_object, approved, comment, text_input};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use serde_json::{Value as Json, json};

fn diff_viewer(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let title = text_input(inputs, "title")?;
    let diffs = match inputs.json("patch_diff") {
        Some(Json::Array(items)) => items,
        Some(_) => {
            return Err(BlockError::input_invalid(
                "patch_diff",
                "配列が必要です",
                "expected an array",
            ));
        }
        None => Vec::new(),
    };
    let Some(answer) = ctx.answer else {
        return Err(BlockError::awaiting(
            json!({
                "kind": "diff",
                "title": title,
                "before": inputs.json("before"),
                "after": inputs.json("after"),
                "patch_diff": diffs,
                "key_fields": inputs.strings("key_fields")?.unwrap_or_default(),
            }),
            format!("変更内容の確認待ち: {title}"),
            format!("waiting for the changes to be reviewed: {title}"),
        ));
    };
    let answer = &answer_object(answer)?;
    Ok(Outputs::new()
        .with("approved", json!(approved(answer)?))
        .with("comment", json!(comment(answer)?))
        .with("diffs", Json::Array(diffs)))
}

builtin!("ui.diff_viewer", diff_viewer);
