//! `documents_upload`: stores a file the browser sent as bytes under `<workspace>/inputs/`.
//!
//! In the desktop app a file dialog or a drop gives absolute paths, which the document
//! functions read directly. A browser served by `keiri serve` only gets bytes from
//! `<input type=file>` or a drop, so it uploads them here first and uses the returned path.
//! The body is base64 inside JSON (the API is JSON only); the `base64` crate decodes it
//! (it was already in the dependency tree, through the HTTP and LLM clients).
//!
//! The name is untrusted: only its last path component is kept, characters that are not safe
//! in a file name on any platform are replaced, and the file is created with
//! [`keiri_fs::write_unique`], so an existing file is never replaced (`a.pdf`, `a_2.pdf`, …).

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::{ApiError, Context, ErrorCode};

/// The largest file accepted, decoded.
pub const MAX_UPLOAD_BYTES: usize = 50 * 1024 * 1024;
/// The directory, inside the workspace, that receives uploads.
pub const UPLOAD_DIR: &str = "inputs";
/// Longest kept file stem, in characters.
const MAX_STEM_CHARS: usize = 120;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentsUploadRequest {
    /// The file's name as the user's machine knows it (only the last component is used).
    pub name: String,
    /// The file's bytes, standard base64 (padding optional).
    pub content_base64: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct DocumentsUploadResponse {
    /// Where the file was stored, relative to the workspace (e.g. `inputs/invoices.csv`):
    /// what the document and generation functions take.
    pub path: String,
    /// The stored size in bytes.
    pub size_bytes: u64,
}

/// Stores an uploaded file under `<workspace>/inputs/` (see the module docs).
pub fn documents_upload(
    ctx: &Context,
    req: DocumentsUploadRequest,
) -> Result<DocumentsUploadResponse, ApiError> {
    let (stem, ext) = sanitise_name(&req.name)?;
    // Base64 is 4 characters per 3 bytes: refuse an oversized body before decoding it.
    let encoded = req.content_base64.trim();
    if encoded.len() / 4 * 3 > MAX_UPLOAD_BYTES + 3 {
        return Err(too_large(encoded.len() / 4 * 3));
    }
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(encoded.trim_end_matches('='))
        .map_err(|e| {
            ApiError::new(
                ErrorCode::InvalidRequest,
                format!("content_base64 is not valid base64: {e}"),
            )
        })?;
    if bytes.len() > MAX_UPLOAD_BYTES {
        return Err(too_large(bytes.len()));
    }
    let dir = ctx.workspace.join(UPLOAD_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| {
        ApiError::new(
            ErrorCode::IoError,
            format!("creating {}: {e}", dir.display()),
        )
    })?;
    let stored = keiri_fs::write_unique(&dir, &stem, &ext, 2, &bytes)?;
    let file_name = stored
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(DocumentsUploadResponse {
        path: format!("{UPLOAD_DIR}/{file_name}"),
        size_bytes: bytes.len() as u64,
    })
}

fn too_large(size: usize) -> ApiError {
    ApiError::new(
        ErrorCode::FileTooLarge,
        format!("the file is {size} bytes; uploads are limited to {MAX_UPLOAD_BYTES} bytes"),
    )
    .with_details(serde_json::json!({"limit_bytes": MAX_UPLOAD_BYTES}))
}

/// The stem and extension (with its dot, or empty) of a safe file name for `name`.
fn sanitise_name(name: &str) -> Result<(String, String), ApiError> {
    // Both separators: a Windows browser may send `C:\Users\me\a.pdf`.
    let last = name.rsplit(['/', '\\']).next().unwrap_or_default();
    let cleaned: String = last
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*') {
                '_'
            } else {
                c
            }
        })
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.').trim();
    if cleaned.is_empty() {
        return Err(ApiError::new(
            ErrorCode::InvalidRequest,
            format!("{name:?} is not a usable file name"),
        ));
    }
    let (stem, ext) = match cleaned.rfind('.') {
        Some(dot) if dot > 0 => (&cleaned[..dot], &cleaned[dot..]),
        _ => (cleaned, ""),
    };
    let stem: String = stem.chars().take(MAX_STEM_CHARS).collect();
    let ext: String = ext.chars().take(16).collect();
    Ok((stem, ext))
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::STANDARD;

    fn upload(
        ctx: &Context,
        name: &str,
        bytes: &[u8],
    ) -> Result<DocumentsUploadResponse, ApiError> {
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
        let res = crate::dispatch(
            &ctx,
            "documents_upload",
            serde_json::json!({"name": "memo.txt", "content_base64": STANDARD.encode("メモ")}),
        )
        .unwrap();
        assert_eq!(res["path"], "inputs/memo.txt");
        // The stored file is readable by the document functions through the same path.
        let text = crate::dispatch(
            &ctx,
            "documents_extract",
            serde_json::json!({"file_paths": [res["path"]]}),
        )
        .unwrap();
        assert_eq!(text["files"][0]["text"], "メモ");
    }
}
