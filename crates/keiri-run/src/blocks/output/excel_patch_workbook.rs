//! `excel.patch_workbook`: its inputs and outputs are in `block_specs/output/excel.patch_workbook.yaml`.

use super::{DEFAULT_OUT_DIR, failed, file_name, on_conflict, patch_env, patch_error, target_dir};
use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, Outputs};
use crate::blocks::invalid;
use keiri_xlsx::{PatchOp, PatchOutcome, PatchRequest};
use serde_json::{Value as Json, json};

/// The `workbook_patch` request that applies an `excel.patch_workbook` node for real, from its
/// inputs as a dry-run resolves them (paths as the plan writes them; the block's `operations`
/// are the request's `ops`). Without an `out_dir` the patched copy goes to the workspace's
/// outputs folder, as a run writes it, never beside the source workbook (keiri-xlsx's own
/// default, which would put results among the attached inputs). Inverse ops and the formula
/// check are always on: the studio offers Undo, and a formula error should block the save.
pub fn patch_workbook_request(inputs: &Json) -> Result<PatchRequest, String> {
    let empty = serde_json::Map::new();
    let inputs = inputs.as_object().unwrap_or(&empty);
    let mut body = serde_json::Map::new();
    for (from, to) in [
        ("xlsx_path", "xlsx_path"),
        ("operations", "ops"),
        ("out_dir", "out_dir"),
        ("out_name", "out_name"),
        ("on_conflict", "on_conflict"),
        ("auto_formula", "auto_formula"),
    ] {
        if let Some(value) = inputs.get(from).filter(|v| !v.is_null()) {
            body.insert(to.to_string(), value.clone());
        }
    }
    body.entry("out_dir")
        .or_insert_with(|| DEFAULT_OUT_DIR.into());
    body.insert("return_inverse_ops".into(), true.into());
    body.insert("preflight_formula_check".into(), true.into());
    serde_json::from_value(Json::Object(body)).map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------
// excel.patch_workbook

fn patch_workbook(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let xlsx_path = inputs.require_str("xlsx_path")?;
    let ops = match inputs.json("operations") {
        Some(Json::Array(items)) => items
            .into_iter()
            .enumerate()
            .map(|(i, op)| {
                PatchOp::from_json(op).map_err(|e| {
                    invalid(
                        format!("operations[{i}] が不正です: {e}"),
                        format!("operations[{i}] is invalid: {e}"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => {
            return Err(BlockError::input_invalid(
                "operations",
                "操作の配列が必要です",
                "expected an array of operations",
            ));
        }
    };
    let dry_run = inputs.bool("dry_run")?.unwrap_or(false);
    let conflict = on_conflict(inputs)?;
    // The patched copy goes where every other written file goes: the plan's out_dir, else
    // the workspace's outputs folder (inside the node's folder for a run without --write).
    // Never beside the source: the inputs folder holds what the person attached, and a
    // result there is taken for a source the next time.
    let source = match crate::paths::resolve_read(ctx, xlsx_path) {
        Ok(path) => path,
        Err(e) if e.code == ErrorCode::FileNotFound => ctx.base_dir.join(xlsx_path),
        Err(e) => return Err(e),
    };
    let dir = target_dir(ctx, inputs, Some(DEFAULT_OUT_DIR))?;
    if !source.is_file() {
        return Err(BlockError::new(
            ErrorCode::FileNotFound,
            format!("ブック {xlsx_path} が見つかりません"),
            format!("workbook {xlsx_path} was not found"),
        ));
    }
    let mut req = PatchRequest::new(source.display().to_string(), ops);
    req.out_dir = Some(dir.display().to_string());
    if let Some(name) = inputs.str("out_name")? {
        req.out_name = Some(file_name(inputs, name)?);
    }
    req.on_conflict = Some(conflict);
    req.dry_run = dry_run;
    req.auto_formula = inputs.bool("auto_formula")?.unwrap_or(false);
    req.preflight_formula_check = inputs.bool("preflight_formula_check")?.unwrap_or(false);
    req.return_inverse_ops = true;
    let env = patch_env(ctx);
    // The file keiri-xlsx will write (its own naming rule), checked against the run's policy.
    let target_name =
        keiri_xlsx::output_name(&source, req.out_name.as_deref()).map_err(patch_error)?;
    crate::paths::check_new_file(ctx, &dir, &target_name)?;
    let patched = keiri_xlsx::apply(&req, &env).map_err(patch_error)?;
    let response = patched.response;
    if let Some(e) = &response.error {
        return Err(failed(
            format!(
                "操作 {} ({}) を適用できませんでした: {}",
                e.op_index, e.sheet, e.message
            ),
            format!(
                "operation {} ({}) could not be applied: {}",
                e.op_index, e.sheet, e.message
            ),
        ));
    }
    let written = patched.outcome == PatchOutcome::Written;
    if written {
        warn_skipped_ops(ctx, &response);
    }
    let diff: Vec<Json> = response
        .patch_diff
        .iter()
        .map(|d| {
            let v = |p: &Option<keiri_xlsx::PatchValue>| {
                p.as_ref()
                    .and_then(|p| p.value.as_ref())
                    .map_or(Json::Null, |c| {
                        serde_json::to_value(c).unwrap_or(Json::Null)
                    })
            };
            // `detail` is keiri-xlsx's own item (op, value kinds, applied or skipped): the
            // studio draws its cell grid from it; plans read the plain before/after.
            json!({
                "sheet": d.sheet, "cell": d.cell, "before": v(&d.before), "after": v(&d.after),
                "detail": serde_json::to_value(d).unwrap_or(Json::Null),
            })
        })
        .collect();
    Ok(Outputs::new()
        .with(
            "out_path",
            json!(if written {
                response.out_path.clone()
            } else {
                String::new()
            }),
        )
        .with("patch_diff", Json::Array(diff))
        .with("warnings", json!(response.warnings))
        .with(
            "inverse_ops",
            serde_json::to_value(&response.inverse_ops).unwrap_or(Json::Null),
        )
        .with(
            "formula_issues",
            serde_json::to_value(&response.formula_issues).unwrap_or(Json::Null),
        ))
}

/// Warns `OPS_SKIPPED` when the saved workbook lacks some of the plan's changes: a
/// `set_value_if` or `set_formula_if` whose cell did not hold what the plan expected is
/// skipped (keiri-xlsx's guard against writing over a value someone changed), and the
/// workbook is saved with the other changes. The cells, the first three; `warnings` says what
/// each expected and found.
fn warn_skipped_ops(ctx: &BlockContext<'_>, response: &keiri_xlsx::PatchResponse) {
    let skipped: Vec<String> = response
        .patch_diff
        .iter()
        .filter(|d| d.status == keiri_xlsx::DiffStatus::Skipped)
        .map(|d| format!("{}!{}", d.sheet, d.cell.as_deref().unwrap_or("")))
        .collect();
    let n = skipped.len();
    if n == 0 {
        return;
    }
    let first = skipped[..n.min(3)].join(", ");
    let (more_ja, more_en) = crate::blocks::kit::text::and_more(n, 3);
    ctx.calls.warn(crate::block::Warning::new(
        "OPS_SKIPPED",
        format!(
            "{n} 件の変更は、セルの値が計画の想定と違うため適用せずにブックを保存しました（{first}{more_ja}）。warnings に想定した値と実際の値があります"
        ),
        format!(
            "the workbook was saved without {n} of the plan's changes: the {} not hold what the plan expected ({first}{more_en}); warnings gives what each expected and found",
            if n == 1 { "cell did" } else { "cells did" },
        ),
    ));
}

builtin!("excel.patch_workbook", patch_workbook);
