//! `exstruct_validate_input`: whether a workbook can be read and, when ops are given, whether a
//! patch request with them would apply — checked as a dry run, so nothing is written and the
//! workbook is not touched.
//!
//! ExStruct's tool takes only `xlsx_path` and answers `is_readable`, `warnings` and `errors`;
//! the optional `ops` (with the request's `sheet` and `auto_formula`) and the fields after
//! `errors` are ours.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::book::SheetKind;
use crate::contract::{OnConflict, PatchErrorDetail, PatchOp, PatchRequest};
use crate::error::Error;
use crate::guard;
use crate::patch::{PatchEnv, open_for_reading};

/// `exstruct_validate_input` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateInputRequest {
    /// The workbook (.xlsx or .xlsm), absolute or relative to the workspace.
    pub xlsx_path: String,
    /// Patch ops to check against the workbook exactly as `exstruct_patch` would (parsing,
    /// references, sheets, shapes), without writing anything.
    #[serde(default)]
    pub ops: Option<Vec<serde_json::Value>>,
    /// The request's top-level sheet for ops that name none.
    #[serde(default)]
    pub sheet: Option<String>,
    /// As in `exstruct_patch`: `set_value` text starting with `=` is a formula.
    #[serde(default)]
    pub auto_formula: bool,
}

/// The answer: ExStruct's three fields, then ours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ValidateInputResponse {
    /// The file is a workbook this server can open.
    pub is_readable: bool,
    pub warnings: Vec<String>,
    /// Why the file cannot be read or an op would not apply; empty when all is well.
    pub errors: Vec<String>,
    /// Readable, and every given op would apply.
    pub valid: bool,
    /// The stable code of each error, in the same order (`WORKBOOK_UNREADABLE`,
    /// `NOT_FOUND`, `INVALID_REQUEST`, `OP_FAILED` for an op that cannot apply here, …).
    pub error_codes: Vec<String>,
    /// The workbook's sheets, in order (empty when it cannot be read).
    pub sheet_names: Vec<String>,
    /// How many ops were checked.
    pub ops_checked: usize,
    /// The op that would fail, as `exstruct_patch` reports it.
    pub patch_error: Option<PatchErrorDetail>,
}

/// Checks a workbook and, optionally, ops against it. A path outside the roots is still an
/// error (`PATH_DENIED`): the answer never describes files the caller may not reach.
pub fn validate_input(
    req: &ValidateInputRequest,
    env: &PatchEnv,
) -> Result<ValidateInputResponse, Error> {
    let mut res = ValidateInputResponse {
        is_readable: false,
        warnings: Vec::new(),
        errors: Vec::new(),
        valid: false,
        error_codes: Vec::new(),
        sheet_names: Vec::new(),
        ops_checked: 0,
        patch_error: None,
    };
    match guard::guarded(&req.xlsx_path, || {
        open_for_reading(&req.xlsx_path, &env.policy)
    }) {
        Ok((_, book)) => {
            res.is_readable = true;
            res.sheet_names = book.sheets.iter().map(|s| s.name.clone()).collect();
            for s in &book.sheets {
                if s.kind != SheetKind::Worksheet {
                    res.warnings.push(format!(
                        "{:?} is {}: cell ops cannot write to it",
                        s.name,
                        s.kind.describe()
                    ));
                }
            }
        }
        Err(e) => {
            record(&mut res, e)?;
            return Ok(res);
        }
    }
    let Some(raw_ops) = &req.ops else {
        res.valid = true;
        return Ok(res);
    };
    res.ops_checked = raw_ops.len();
    let mut ops = Vec::with_capacity(raw_ops.len());
    for (i, raw) in raw_ops.iter().enumerate() {
        match PatchOp::from_json(raw.clone()) {
            Ok(op) => ops.push(op),
            Err(e) => {
                res.errors.push(format!("ops[{i}]: {e}"));
                res.error_codes.push("INVALID_REQUEST".into());
            }
        }
    }
    if !res.errors.is_empty() {
        return Ok(res);
    }
    let mut dry = PatchRequest::new(req.xlsx_path.clone(), ops);
    dry.sheet = req.sheet.clone();
    dry.auto_formula = req.auto_formula;
    dry.dry_run = true;
    // The check is of the ops, not of the output name: an existing output must not turn the
    // dry run into a skip that checks nothing.
    dry.on_conflict = Some(OnConflict::Rename);
    match crate::patch(&dry, env) {
        Ok(patched) => {
            res.warnings.extend(
                patched
                    .warnings
                    .into_iter()
                    .filter(|w| !w.contains("already exists; the result goes to")),
            );
            if let Some(err) = patched.error {
                res.errors.push(format!(
                    "ops[{}] ({}): {}",
                    err.op_index,
                    err.op.as_str(),
                    err.message
                ));
                res.error_codes.push("OP_FAILED".into());
                res.patch_error = Some(err);
            }
        }
        Err(e) => record(&mut res, e)?,
    }
    res.valid = res.errors.is_empty();
    Ok(res)
}

/// Lists an error in the answer; a path the policy refuses stays an error of the call.
fn record(res: &mut ValidateInputResponse, e: Error) -> Result<(), Error> {
    if e.code() == "PATH_DENIED" {
        return Err(e);
    }
    res.errors.push(e.to_string());
    res.error_codes.push(e.code().to_string());
    Ok(())
}
