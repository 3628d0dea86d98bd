use keiri_api::*;
use keiri_api::{Context, ErrorCode};
use xlsx::PatchRequest;

#[test]
fn a_formula_check_out_of_time_is_its_own_code() {
    // The workbook functions map keiri-xlsx's errors with `ApiError::lower`, i.e. this `From`.
    let code = ErrorCode::from(&keiri_xlsx::Error::Budget(
        "the check took over 60 s".into(),
    ));
    assert_eq!(code, ErrorCode::PreflightTimeout);
    assert_eq!(code.as_str(), "PREFLIGHT_TIMEOUT");
    assert_eq!(
        ErrorCode::from(&keiri_xlsx::Error::Backend("zip".into())),
        ErrorCode::BackendError
    );
}

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
    let err = crate::support::call(&ctx, "workbook_patch", body).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
    assert!(err.message.contains("ops[0]"), "{}", err.message);
    let changed = keiri_xlsx::Error::from(keiri_fs::Error::Changed {
        path: "book.xlsx".into(),
    });
    assert_eq!(ErrorCode::from(&changed), ErrorCode::ChangeConflict);
}

#[test]
fn a_patch_whose_caller_went_away_is_cancelled_and_writes_nothing() {
    // `Context::cancel` is what the HTTP server cancels when the client hangs up on a call
    // (see `stream::blocking`); every workbook call that writes passes it to the patch.
    let dir = tempfile::tempdir().unwrap();
    let make = |out: &str| -> xlsx::MakeRequest {
        serde_json::from_value(serde_json::json!({
            "out_path": out,
            "sheet": "S",
            "ops": [{"op": "set_value", "sheet": "S", "cell": "A1", "value": 1}],
        }))
        .unwrap()
    };
    let ctx = Context::new(dir.path());
    workbook_make(&ctx, make("book.xlsx")).unwrap();
    let before = std::fs::read(dir.path().join("book.xlsx")).unwrap();
    ctx.cancel.cancel();
    let body = serde_json::json!({
        "xlsx_path": "book.xlsx",
        "ops": [{"op": "set_value", "sheet": "S", "cell": "B1", "value": 2}],
        "out_name": "out.xlsx",
    });
    let req: PatchRequest = serde_json::from_value(body.clone()).unwrap();
    let err = workbook_patch(&ctx, req).unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled, "{}", err.message);
    assert_eq!(
        workbook_make(&ctx, make("made.xlsx")).unwrap_err().code,
        ErrorCode::Cancelled
    );
    assert!(!dir.path().join("out.xlsx").exists());
    assert_eq!(std::fs::read(dir.path().join("book.xlsx")).unwrap(), before);
    assert!(!dir.path().join("made.xlsx").exists());
}
