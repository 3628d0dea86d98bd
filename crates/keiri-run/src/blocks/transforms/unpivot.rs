//! `transforms.unpivot`: its inputs and outputs are in `block_specs/transforms/transforms.unpivot.yaml`.

use super::{R, ROW_INDEX, pe, require_columns};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::value::column_names;
use polars::prelude::*;

fn unpivot(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let df = inputs.table("rows")?;
    let ids = inputs
        .strings("id_fields")?
        .ok_or_else(|| BlockError::input_invalid("id_fields", "必須です", "it is required"))?;
    require_columns(&df, &ids)?;
    let value_fields = match inputs.strings("value_fields")? {
        Some(v) => {
            require_columns(&df, &v)?;
            v
        }
        None => column_names(&df)
            .into_iter()
            .filter(|c| !ids.contains(c))
            .collect(),
    };
    let variable = inputs.str("variable_name")?.unwrap_or("項目").to_owned();
    let value = inputs.str("value_name")?.unwrap_or("値").to_owned();
    if ids.contains(&variable) || ids.contains(&value) || variable == value {
        return Err(BlockError::input_invalid(
            "variable_name",
            "variable_name と value_name は id_fields と別の名前にしてください",
            "variable_name and value_name must differ from each other and from id_fields",
        ));
    }
    // One dtype for the value column: the fields' own when they agree, text otherwise.
    let dtypes: Vec<DataType> = value_fields
        .iter()
        .map(|f| df.column(f).map(|c| c.dtype().clone()))
        .collect::<Result<_, _>>()
        .map_err(pe)?;
    let target = match dtypes.first() {
        Some(first) if dtypes.iter().all(|d| d == first) => first.clone(),
        Some(_) if dtypes.iter().all(|d| d.is_primitive_numeric()) => DataType::Float64,
        _ => DataType::String,
    };
    let mut parts = Vec::new();
    for (k, f) in value_fields.iter().enumerate() {
        let mut exprs: Vec<Expr> = ids.iter().map(|i| col(i.as_str())).collect();
        exprs.push(lit(f.as_str()).alias(variable.as_str()));
        exprs.push(col(f.as_str()).cast(target.clone()).alias(value.as_str()));
        exprs.push(lit(k as u32).alias("__keiri_field"));
        parts.push(
            df.clone().lazy().with_row_index(ROW_INDEX, None).select(
                exprs
                    .into_iter()
                    .chain([col(ROW_INDEX)])
                    .collect::<Vec<_>>(),
            ),
        );
    }
    let mut names: Vec<String> = ids.clone();
    names.push(variable);
    names.push(value);
    let out = if parts.is_empty() {
        DataFrame::empty()
    } else {
        // Row-major order: each source row's values stay together, in field order.
        let query = concat(parts, UnionArgs::default())
            .map_err(pe)?
            .sort(
                [ROW_INDEX, "__keiri_field"],
                SortMultipleOptions::default().with_maintain_order(true),
            )
            .select(names.iter().map(|n| col(n.as_str())).collect::<Vec<_>>());
        crate::blocks::collect(query, ctx.cancel).map_err(pe)?
    };
    Ok(Outputs::new().with("rows", out))
}

builtin!("transforms.unpivot", unpivot);
