//! The workbook patch use case (`keiri-xlsx`): apply `exstruct_patch` operations to an
//! .xlsx/.xlsm workbook with a per-cell diff, inverse ops and an optional formula check.
//!
//! The request and response types are the tool contract and live in `keiri-xlsx`, so the MCP
//! server derives its schemas from the same types; front-ends reach them through [`xlsx`].
//! A request error (bad path, cell, range or formula, unreadable workbook) is an [`ApiError`];
//! an op that cannot apply is data: `PatchResponse.error` with its `op_index`.
//!
//! An overwrite is a compare-and-swap (see `keiri-xlsx`): concurrent patches of one workbook
//! queue on its write lock and each applies to the current content; a save by a writer outside
//! keiri while patching in place is `CHANGE_CONFLICT`, never a reported write that is lost.

use crate::{ApiError, Context, ErrorCode};

/// Request and response types of `workbook_patch`.
pub mod xlsx {
    pub use keiri_xlsx::{
        CellValue, DiffStatus, FormulaIssue, IssueCode, IssueLevel, OnConflict, OpKind,
        PatchDiffItem, PatchErrorDetail, PatchOp, PatchRequest, PatchResponse, PatchValue,
        ValueKind,
    };
}

use xlsx::{PatchRequest, PatchResponse};

fn api_error(err: keiri_xlsx::Error) -> ApiError {
    let code = match err.code() {
        "INVALID_REQUEST" => ErrorCode::InvalidRequest,
        "PATH_DENIED" => ErrorCode::PathDenied,
        "NOT_FOUND" => ErrorCode::NotFound,
        "ALREADY_EXISTS" => ErrorCode::AlreadyExists,
        "IO_ERROR" => ErrorCode::IoError,
        "WORKBOOK_UNREADABLE" => ErrorCode::WorkbookUnreadable,
        "BACKEND_ERROR" => ErrorCode::BackendError,
        "CHANGE_CONFLICT" => ErrorCode::ChangeConflict,
        _ => ErrorCode::Internal,
    };
    ApiError::new(code, err.to_string())
}

/// Applies the ops of `req` to its workbook (or, with `dry_run`, only reports what would
/// change). `ctx.on_conflict_default` applies when the request leaves `on_conflict` out.
pub fn workbook_patch(ctx: &Context, req: PatchRequest) -> Result<PatchResponse, ApiError> {
    let mut env = keiri_xlsx::PatchEnv::new(ctx.path_policy());
    env.on_conflict_default = ctx.on_conflict_default;
    keiri_xlsx::patch(&req, &env).map_err(api_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_errors_map_to_api_codes() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::new(dir.path());
        let req = |path: &str| PatchRequest::new(path, Vec::new());
        let code = |r| workbook_patch(&ctx, r).unwrap_err().code;
        assert_eq!(code(req("old.xls")), ErrorCode::InvalidRequest);
        assert_eq!(code(req("missing.xlsx")), ErrorCode::NotFound);
        let outside = tempfile::tempdir().unwrap();
        let foreign = outside.path().join("other.xlsx");
        std::fs::File::create(&foreign).unwrap();
        assert_eq!(
            code(req(&foreign.display().to_string())),
            ErrorCode::PathDenied
        );
        std::fs::File::create(dir.path().join("empty.xlsx")).unwrap();
        assert_eq!(code(req("empty.xlsx")), ErrorCode::WorkbookUnreadable);
        let body = serde_json::json!({"xlsx_path": "a.xlsx", "ops": [{"op": "set_value"}]});
        let err = crate::dispatch(&ctx, "workbook_patch", body).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest);
        assert!(err.message.contains("ops[0]"), "{}", err.message);
        let changed = keiri_xlsx::Error::from(keiri_fs::Error::Changed {
            path: "book.xlsx".into(),
        });
        assert_eq!(api_error(changed).code, ErrorCode::ChangeConflict);
    }
}
