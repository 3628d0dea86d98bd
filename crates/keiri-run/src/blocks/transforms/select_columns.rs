//! `transforms.select_columns`: its inputs and outputs are in `block_specs/transforms/transforms.select_columns.yaml`.

use super::{R, one_of, pe, require_columns};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::value::column_names;

fn select_columns(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let df = inputs.table("rows")?;
    let wanted = inputs
        .strings("columns")?
        .ok_or_else(|| BlockError::input_invalid("columns", "必須です", "it is required"))?;
    require_columns(&df, &wanted)?;
    let out = if one_of(inputs, "mode", &["include", "exclude"], "include")? == "include" {
        df.select(wanted.iter().map(String::as_str)).map_err(pe)?
    } else {
        let keep: Vec<String> = column_names(&df)
            .into_iter()
            .filter(|c| !wanted.contains(c))
            .collect();
        df.select(keep.iter().map(String::as_str)).map_err(pe)?
    };
    Ok(Outputs::new().with("rows", out))
}

builtin!("transforms.select_columns", select_columns);
