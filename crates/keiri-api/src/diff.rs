//! The `apply_patch` use case (`keiri-diff`): one unified diff applied to one workspace file.
//!
//! The request and result types are the tool contract and live in `keiri-diff`, so the agent
//! and the MCP server use the same types; front-ends reach them through [`patches`]. The
//! workspace's path policy is the root; the native applier is the default backend, `git` is
//! used when the request asks for it.
//!
//! A write is a compare-and-swap (see `keiri-diff`): concurrent calls on one file queue on its
//! write lock and each applies to the current content; a change by a writer outside keiri
//! between the read and the rename is `CHANGE_CONFLICT` (409 over HTTP), never a reported
//! write that is lost.

use crate::{ApiError, Context};

/// Request and result types of `apply_patch`, and its tool definition.
pub mod patches {
    pub use keiri_diff::{
        ApplyPatchInput, ApplyPatchRequest, ApplyPatchResult, BackendKind, TOOL_DESCRIPTION,
        TOOL_NAME, ToolDefinition, tool_definition,
    };
}

use patches::{ApplyPatchInput, ApplyPatchRequest, ApplyPatchResult};

fn api_error(err: keiri_diff::Error) -> ApiError {
    let api = ApiError::lower(&err);
    match err.details() {
        Some(details) => api.with_details(details),
        None => api,
    }
}

/// Applies `req.patch` to `req.file_path` once (or, with `dry_run`, reports what would change).
pub fn apply_patch(ctx: &Context, req: ApplyPatchRequest) -> Result<ApplyPatchResult, ApiError> {
    let input = ApplyPatchInput {
        file_path: req.file_path,
        patch: req.patch,
    };
    let options = keiri_diff::Options {
        mode: if req.dry_run {
            keiri_diff::Mode::DryRun
        } else {
            keiri_diff::Mode::Write
        },
        ..keiri_diff::Options::default()
    };
    let backend = keiri_diff::backend(req.backend);
    keiri_diff::apply_patch(
        &ctx.path_policy(),
        &input,
        &backend,
        &keiri_diff::Sha256Hasher,
        &options,
    )
    .map(|applied| applied.result)
    .map_err(api_error)
}
crate::surface::function!(plain apply_patch(crate::patches::ApplyPatchRequest) -> crate::patches::ApplyPatchResult);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::ErrorCode;
    use serde_json::json;

    /// Calls `apply_patch` through `dispatch`; `Ok((pointer, value))` checks the result,
    /// `Err(code)` the error code. The workspace holds `a.txt` = "one\ntwo\n".
    fn check(body: serde_json::Value, expect: Result<(&str, serde_json::Value), &str>) -> String {
        let ws = tempfile::tempdir().unwrap();
        keiri_fs::write_atomic(&ws.path().join("a.txt"), b"one\ntwo\n").unwrap();
        let ctx = Context::new(ws.path());
        match (
            crate::stream::testing::call(&ctx, "apply_patch", body),
            expect,
        ) {
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
        let err = api_error(keiri_diff::Error::Conflict {
            path: "a.txt".into(),
        });
        assert_eq!(err.code, ErrorCode::ChangeConflict);
    }
}
