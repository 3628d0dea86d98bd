//! `transforms.pick_value`: its inputs and outputs are in `block_specs/transforms/transforms.pick_value.yaml`.

use super::R;
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use serde_json::Value as J;

fn pick_value(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let source = inputs
        .json("source")
        .ok_or_else(|| BlockError::input_invalid("source", "必須です", "it is required"))?;
    let path = inputs.require_str("path")?;
    let mut current = &source;
    let mut found = true;
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        let next = match current {
            J::Object(m) => m.get(segment),
            J::Array(a) => segment.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        };
        match next {
            Some(v) => current = v,
            None => {
                found = false;
                break;
            }
        }
    }
    if found {
        return Ok(Outputs::new()
            .with("value", current.clone())
            .with("found", J::Bool(true)));
    }
    match inputs.json("default") {
        Some(d) => Ok(Outputs::new()
            .with("value", d)
            .with("found", J::Bool(false))),
        None => {
            let keys = match &source {
                J::Object(m) => m.keys().cloned().collect::<Vec<_>>().join(", "),
                J::Array(a) => format!("0..{}", a.len()),
                _ => String::new(),
            };
            Err(BlockError::failed(
                format!("パス {path} が見つかりません"),
                format!("path {path} was not found"),
            )
            .with_hint(
                format!("先頭のキー: {keys}"),
                format!("top-level keys: {keys}"),
            ))
        }
    }
}

builtin!("transforms.pick_value", pick_value);
