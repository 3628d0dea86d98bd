//! `transforms.rename_columns`: its inputs and outputs are in `block_specs/transforms/transforms.rename_columns.yaml`.

use super::{R, pe};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::value::column_names;
use serde_json::{Value as J, json};
use std::collections::HashSet;

fn rename_columns(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut df = inputs.table("rows")?;
    let mapping = match inputs.json("mapping") {
        Some(J::Object(m)) => m,
        _ => {
            return Err(BlockError::input_invalid(
                "mapping",
                "旧列名→新列名のオブジェクトが必要です",
                "expected an object old name → new name",
            ));
        }
    };
    let drop_unmapped = inputs.bool("drop_unmapped")?.unwrap_or(false);
    let existing = column_names(&df);
    let mut renames = Vec::new();
    for (old, new) in &mapping {
        let new = new.as_str().ok_or_else(|| {
            BlockError::input_invalid("mapping", "新列名は文字列です", "new names must be strings")
        })?;
        if !existing.contains(old) {
            return Err(BlockError::missing_column(old, &existing));
        }
        renames.push((old.clone(), new.to_owned()));
    }
    if drop_unmapped {
        df = df
            .select(renames.iter().map(|(o, _)| o.as_str()))
            .map_err(pe)?;
    }
    let final_names: Vec<String> = column_names(&df)
        .into_iter()
        .map(|c| {
            renames
                .iter()
                .find(|(o, _)| *o == c)
                .map_or(c, |(_, n)| n.clone())
        })
        .collect();
    let mut seen = HashSet::new();
    if let Some(dup) = final_names.iter().find(|n| !seen.insert(n.as_str())) {
        return Err(BlockError::failed(
            format!("列名 {dup} が重複します"),
            format!("the renamed table would have two columns named {dup}"),
        ));
    }
    df.set_column_names(&final_names).map_err(pe)?;
    Ok(Outputs::new()
        .with("rows", df)
        .with("columns", json!(final_names)))
}

builtin!("transforms.rename_columns", rename_columns);
