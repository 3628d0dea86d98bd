use base64::Engine as _;
use keiri_api::*;
use keiri_api::{ApiError, Context, ErrorCode};
use std::path::Path;

/// Where uploads and imports land: the workspace's `inputs/` folder.
const UPLOAD_DIR: &str = "inputs";
use base64::engine::general_purpose::STANDARD;

fn upload(ctx: &Context, name: &str, bytes: &[u8]) -> Result<DocumentsUploadResponse, ApiError> {
    documents_upload(
        ctx,
        DocumentsUploadRequest {
            name: name.into(),
            content_base64: STANDARD.encode(bytes),
        },
    )
}

#[test]
fn stores_under_inputs_and_never_overwrites() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = Context::new(ws.path());
    let first = upload(&ctx, "請求書一覧.csv", "番号,金額\n1,100\n".as_bytes()).unwrap();
    assert_eq!(first.path, "inputs/請求書一覧.csv");
    assert_eq!(first.size_bytes, "番号,金額\n1,100\n".len() as u64);
    let second = upload(&ctx, "請求書一覧.csv", b"other").unwrap();
    assert_eq!(second.path, "inputs/請求書一覧_2.csv");
    assert_eq!(
        std::fs::read(ws.path().join(&first.path)).unwrap(),
        "番号,金額\n1,100\n".as_bytes()
    );
    assert_eq!(
        std::fs::read(ws.path().join(&second.path)).unwrap(),
        b"other"
    );
}

#[test]
fn the_name_cannot_leave_the_inputs_folder() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = Context::new(ws.path());
    for (name, want) in [
        ("../../etc/passwd", "inputs/passwd"),
        ("C:\\Users\\me\\a:b?.pdf", "inputs/a_b_.pdf"),
        ("..hidden.txt", "inputs/hidden.txt"),
        ("noext", "inputs/noext"),
    ] {
        assert_eq!(upload(&ctx, name, b"x").unwrap().path, want, "{name}");
    }
    for name in ["", "..", "a/", " . "] {
        let err = upload(&ctx, name, b"x").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest, "{name:?}");
    }
}

#[test]
fn bad_base64_and_oversized_files_are_refused_without_writing() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = Context::new(ws.path());
    let err = documents_upload(
        &ctx,
        DocumentsUploadRequest {
            name: "a.txt".into(),
            content_base64: "not base64!".into(),
        },
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
    let err = upload(&ctx, "big.bin", &vec![0u8; MAX_UPLOAD_BYTES + 1]).unwrap_err();
    assert_eq!(err.code, ErrorCode::FileTooLarge);
    assert!(!ws.path().join(UPLOAD_DIR).join("big.bin").exists());
    assert!(!ws.path().join(UPLOAD_DIR).join("a.txt").exists());
}

#[test]
fn dispatch_reaches_the_upload() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = Context::new(ws.path());
    let res = crate::support::call(
        &ctx,
        "documents_upload",
        serde_json::json!({"name": "memo.txt", "content_base64": STANDARD.encode("メモ")}),
    )
    .unwrap();
    assert_eq!(res["path"], "inputs/memo.txt");
    // The stored file is readable by the document functions through the same path.
    let text = crate::support::call(
        &ctx,
        "documents_extract",
        serde_json::json!({"file_paths": [res["path"]]}),
    )
    .unwrap();
    assert_eq!(text["files"][0]["text"], "メモ");
}

fn import(ctx: &Context, paths: &[&Path]) -> Result<DocumentsImportResponse, ApiError> {
    documents_import(
        ctx,
        DocumentsImportRequest {
            paths: paths.iter().map(|p| p.to_path_buf()).collect(),
        },
    )
}

/// Writes a fixture file; atomicity does not matter in a fresh temporary directory.
#[allow(clippy::disallowed_methods)]
fn fixture(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn import_is_never_reachable_from_http_or_mcp() {
    // documents_import reads any path it is given: only the desktop shell may call it.
    assert!(!keiri_api::FUNCTIONS.contains(&"documents_import"));
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    fixture(&secret, b"secret");
    let ctx = Context::new(ws.path());
    let err = crate::support::call(
        &ctx,
        "documents_import",
        serde_json::json!({"paths": [secret]}),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
    assert!(!ws.path().join(UPLOAD_DIR).exists());
}

#[test]
fn import_copies_outside_files_into_inputs() {
    let ws = tempfile::tempdir().unwrap();
    let downloads = tempfile::tempdir().unwrap();
    let source = downloads.path().join("請求書 一覧.csv");
    fixture(&source, "番号,金額\n1,100\n".as_bytes());
    let ctx = Context::new(ws.path());
    let first = import(&ctx, &[&source]).unwrap();
    let second = import(&ctx, &[&source]).unwrap();
    assert_eq!(first.files.len(), 1);
    assert_eq!(first.files[0].path, "inputs/請求書 一覧.csv");
    assert_eq!(first.files[0].source, source.display().to_string());
    assert_eq!(first.files[0].size_bytes, "番号,金額\n1,100\n".len() as u64);
    // Like uploads, an import never replaces an earlier one.
    assert_eq!(second.files[0].path, "inputs/請求書 一覧_2.csv");
    assert_eq!(
        std::fs::read(ws.path().join(&first.files[0].path)).unwrap(),
        "番号,金額\n1,100\n".as_bytes()
    );
    // The document functions, behind the path policy, now read it.
    let text = crate::support::call(
        &ctx,
        "documents_extract",
        serde_json::json!({"file_paths": [first.files[0].path]}),
    )
    .unwrap();
    assert_eq!(text["files"][0]["text"], "番号,金額\n1,100\n");
    // The original is untouched.
    assert!(source.is_file());
}

#[test]
fn import_returns_a_file_inside_the_workspace_as_is() {
    let ws = tempfile::tempdir().unwrap();
    let inside = ws.path().join("docs/memo.txt");
    fixture(&inside, b"memo");
    let ctx = Context::new(ws.path());
    let res = import(&ctx, &[&inside]).unwrap();
    assert_eq!(res.files[0].path, "docs/memo.txt");
    assert_eq!(res.files[0].size_bytes, 4);
    assert!(!ws.path().join(UPLOAD_DIR).exists(), "nothing is copied");
}

#[test]
fn import_refuses_folders_missing_and_oversized_files_before_copying_any() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let good = outside.path().join("good.txt");
    fixture(&good, b"ok");
    let folder = outside.path().join("folder");
    std::fs::create_dir_all(&folder).unwrap();
    let big = outside.path().join("big.bin");
    fixture(&big, &vec![0u8; MAX_UPLOAD_BYTES + 1]);
    let missing = outside.path().join("missing.pdf");
    let ctx = Context::new(ws.path());
    for (bad, code) in [
        (&folder, ErrorCode::InvalidRequest),
        (&big, ErrorCode::FileTooLarge),
        (&missing, ErrorCode::NotFound),
    ] {
        // The good file comes first: it must not be copied when a later path is refused.
        let err = import(&ctx, &[&good, bad]).unwrap_err();
        assert_eq!(err.code, code, "{}", bad.display());
        assert_eq!(
            err.details.as_ref().unwrap()["source"],
            bad.display().to_string()
        );
    }
    assert!(!ws.path().join(UPLOAD_DIR).exists());
}
