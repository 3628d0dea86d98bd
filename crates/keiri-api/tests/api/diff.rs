use keiri_api::Context;

use keiri_api::ErrorCode;
use serde_json::json;

/// Calls `apply_patch` through `dispatch`; `Ok((pointer, value))` checks the result,
/// `Err(code)` the error code. The workspace holds `a.txt` = "one\ntwo\n".
fn check(body: serde_json::Value, expect: Result<(&str, serde_json::Value), &str>) -> String {
    let ws = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(&ws.path().join("a.txt"), b"one\ntwo\n").unwrap();
    let ctx = Context::new(ws.path());
    match (crate::support::call(&ctx, "apply_patch", body), expect) {
        (Ok(v), Ok((pointer, value))) => assert_eq!(v.pointer(pointer), Some(&value), "{v}"),
        (Err(e), Err(code)) => assert_eq!(e.code.as_str(), code, "{e}"),
        (got, want) => panic!("got {got:?}, want {want:?}"),
    }
    std::fs::read_to_string(ws.path().join("a.txt")).unwrap()
}

const PATCH: &str = "@@ -1,2 +1,2 @@\n one\n-two\n+2\n";

#[test]
fn dispatch_apply_patch() {
    let after = check(
        json!({"filePath": "a.txt", "patch": PATCH}),
        Ok(("/written", json!(true))),
    );
    assert_eq!(after, "one\n2\n");
    let after = check(
        json!({"filePath": "a.txt", "patch": PATCH, "dryRun": true}),
        Ok(("/changed", json!(true))),
    );
    assert_eq!(after, "one\ntwo\n");
    check(
        json!({"file_path": "a.txt", "patch": PATCH}),
        Ok(("/backend", json!("native"))),
    );
    check(
        json!({"filePath": "a.txt", "patch": "@@ -1 +1 @@\n-x\n+y\n"}),
        Err("APPLY_FAILED"),
    );
    check(
        json!({"filePath": "missing.txt", "patch": PATCH}),
        Err("NOT_FOUND"),
    );
    let outside = tempfile::tempdir().unwrap();
    let foreign = outside.path().join("a.txt");
    keiri_fs::write_atomic(&foreign, b"one\ntwo\n").unwrap();
    check(
        json!({"filePath": foreign.display().to_string(), "patch": PATCH}),
        Err("PATH_DENIED"),
    );
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), "one\ntwo\n");
    // The tool contract's code for an unusable argument; a body of the wrong shape is
    // the API's INVALID_REQUEST, as for every function.
    check(
        json!({"filePath": "", "patch": PATCH}),
        Err("INVALID_ARGUMENT"),
    );

    check(
        json!({"filePath": "a.txt", "patch": 3}),
        Err("INVALID_REQUEST"),
    );
    check(
        json!({"filePath": "a.txt", "patch": PATCH, "backend": "svn"}),
        Err("INVALID_REQUEST"),
    );
}

#[test]
fn a_conflict_is_change_conflict() {
    // `apply_patch` maps keiri-diff's errors with `ApiError::lower`, i.e. this `From`.
    let err = keiri_diff::Error::Conflict {
        path: "a.txt".into(),
    };
    assert_eq!(ErrorCode::from(&err), ErrorCode::ChangeConflict);
}
