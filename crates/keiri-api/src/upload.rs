//! Bringing documents into the workspace: `documents_upload` stores a file the browser sent as
//! bytes, and `documents_import` copies files the desktop shell names by path. Both put them
//! under `<workspace>/inputs/`, where the document and generation functions (and their path
//! policy) accept them.
//!
//! A browser served by `keiri serve` only gets bytes from `<input type=file>` or a drop, so it
//! uploads them here first and uses the returned path. The body is base64 inside JSON (the API
//! is JSON only); the `base64` crate decodes it (it was already in the dependency tree, through
//! the HTTP and LLM clients).
//!
//! In the desktop app the native file dialog and a drop from the file manager give absolute
//! paths, often outside the workspace (`~/Downloads`), which the path policy rightly refuses.
//! The shell imports them first with [`documents_import`]; that function trusts its paths, so
//! it is deliberately not reachable through [`crate::dispatch`] (see its docs).
//!
//! The name is untrusted: only its last path component is kept and characters that are not
//! safe in a file name on any platform are replaced ([`keiri_fs::safe_file_name`]); the file
//! is created with [`keiri_fs::write_unique`], so an existing file is never replaced (`a.pdf`,
//! `a_2.pdf`, …).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::{ApiError, Context, ErrorCode};

/// The largest file accepted (decoded upload or imported file).
pub const MAX_UPLOAD_BYTES: usize = 50 * 1024 * 1024;
/// The directory, inside the workspace, that receives uploads and imports.
pub const UPLOAD_DIR: &str = "inputs";

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentsUploadRequest {
    /// The file's name as the user's machine knows it (only the last component is used).
    pub name: String,
    /// The file's bytes, standard base64 (padding optional).
    pub content_base64: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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
    let path = store(ctx, &stem, &ext, &bytes)?;
    Ok(DocumentsUploadResponse {
        path,
        size_bytes: bytes.len() as u64,
    })
}
crate::surface::function!(plain documents_upload(crate::DocumentsUploadRequest) -> crate::DocumentsUploadResponse);

/// What [`documents_import`] copies: files the desktop shell got from the native file dialog or
/// a drop. Not a JSON request type on purpose (see [`documents_import`]).
#[derive(Debug, Clone, Default)]
pub struct DocumentsImportRequest {
    /// The files, usually absolute paths anywhere on the user's machine.
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DocumentsImportResponse {
    /// One entry per requested path, in the request's order.
    pub files: Vec<ImportedFile>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ImportedFile {
    /// The path as given.
    pub source: String,
    /// Where the document now is, relative to the workspace (e.g. `inputs/invoices.csv`), as
    /// [`documents_upload`] answers: what the document and generation functions take.
    pub path: String,
    /// The file's size in bytes.
    pub size_bytes: u64,
}

/// Copies files named by path into `<workspace>/inputs/`, stored as [`documents_upload`] stores
/// uploads (sanitised name, never overwriting), and returns their workspace-relative paths. A
/// file already inside the workspace is not copied: its own relative path is returned.
///
/// Every path is checked before anything is copied (a regular file, at most
/// [`MAX_UPLOAD_BYTES`]), so a refused path copies nothing; the error's `details.source` names
/// the path. A caller that wants one outcome per file calls it once per path.
///
/// # Security
///
/// This function TRUSTS its paths: it reads any file the process can read. That is right for
/// the desktop shell, whose paths come from the user's own dialog or drop, and wrong for
/// anything else. It is therefore not in [`crate::FUNCTIONS`] and not reachable through
/// [`crate::dispatch`], so the HTTP server, MCP and LLM tool calls can never make the process
/// read arbitrary files; keep it that way.
pub fn documents_import(
    ctx: &Context,
    req: DocumentsImportRequest,
) -> Result<DocumentsImportResponse, ApiError> {
    let workspace = std::fs::canonicalize(&ctx.workspace).map_err(|e| {
        ApiError::new(
            ErrorCode::IoError,
            format!("resolving the workspace {}: {e}", ctx.workspace.display()),
        )
    })?;
    let checked = req
        .paths
        .iter()
        .map(|source| check_importable(&workspace, source).map_err(|e| with_source(e, source)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut files = Vec::with_capacity(checked.len());
    for (source, importable) in req.paths.iter().zip(checked) {
        let file = match importable {
            Importable::InWorkspace { path, size_bytes } => ImportedFile {
                source: source.display().to_string(),
                path,
                size_bytes,
            },
            Importable::Outside {
                canonical,
                stem,
                ext,
            } => {
                let bytes = read_limited(&canonical).map_err(|e| with_source(e, source))?;
                ImportedFile {
                    source: source.display().to_string(),
                    path: store(ctx, &stem, &ext, &bytes).map_err(|e| with_source(e, source))?,
                    size_bytes: bytes.len() as u64,
                }
            }
        };
        files.push(file);
    }
    Ok(DocumentsImportResponse { files })
}

/// A path [`documents_import`] accepted, before anything is copied.
enum Importable {
    /// Already in the workspace: its relative path (with `/`) and size.
    InWorkspace { path: String, size_bytes: u64 },
    /// Elsewhere: the canonical path to copy from, and the stored name's stem and extension.
    Outside {
        canonical: PathBuf,
        stem: String,
        ext: String,
    },
}

fn check_importable(workspace: &Path, source: &Path) -> Result<Importable, ApiError> {
    let canonical = std::fs::canonicalize(source).map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound {
            ErrorCode::NotFound
        } else {
            ErrorCode::IoError
        };
        ApiError::new(code, format!("resolving {}: {e}", source.display()))
    })?;
    let meta = std::fs::metadata(&canonical).map_err(|e| {
        ApiError::new(
            ErrorCode::IoError,
            format!("reading {}: {e}", canonical.display()),
        )
    })?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a folder"
        } else {
            "not a regular file"
        };
        return Err(ApiError::new(
            ErrorCode::InvalidRequest,
            format!("{} is {what}; only files can be attached", source.display()),
        ));
    }
    if meta.len() > MAX_UPLOAD_BYTES as u64 {
        return Err(too_large(usize::try_from(meta.len()).unwrap_or(usize::MAX)));
    }
    Ok(match canonical.strip_prefix(workspace) {
        Ok(relative) => Importable::InWorkspace {
            path: relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            size_bytes: meta.len(),
        },
        Err(_) => {
            let name = canonical
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (stem, ext) = sanitise_name(&name)?;
            Importable::Outside {
                canonical,
                stem,
                ext,
            }
        }
    })
}

/// Reads at most one byte more than the limit, so a file that grew after the check is refused
/// rather than read whole.
fn read_limited(path: &Path) -> Result<Vec<u8>, ApiError> {
    let io_error = |e: std::io::Error| {
        ApiError::new(
            ErrorCode::IoError,
            format!("reading {}: {e}", path.display()),
        )
    };
    let file = std::fs::File::open(path).map_err(io_error)?;
    let mut bytes = Vec::new();
    file.take(MAX_UPLOAD_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error)?;
    if bytes.len() > MAX_UPLOAD_BYTES {
        return Err(too_large(bytes.len()));
    }
    Ok(bytes)
}

/// Adds `source` to an error's details, keeping what was there.
fn with_source(mut error: ApiError, source: &Path) -> ApiError {
    let source = serde_json::Value::String(source.display().to_string());
    match &mut error.details {
        Some(serde_json::Value::Object(map)) => {
            map.insert("source".into(), source);
        }
        _ => error.details = Some(serde_json::json!({ "source": source })),
    }
    error
}

/// Writes `bytes` under `<workspace>/inputs/` as `stem` + `ext` (from [`sanitise_name`]), or the
/// first free `stem_2` + `ext`, … , and returns the workspace-relative path.
fn store(ctx: &Context, stem: &str, ext: &str, bytes: &[u8]) -> Result<String, ApiError> {
    let dir = ctx.workspace.join(UPLOAD_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| {
        ApiError::new(
            ErrorCode::IoError,
            format!("creating {}: {e}", dir.display()),
        )
    })?;
    let stored = keiri_fs::write_unique(&dir, stem, ext, 2, bytes)?;
    let file_name = stored
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(format!("{UPLOAD_DIR}/{file_name}"))
}

fn too_large(size: usize) -> ApiError {
    ApiError::new(
        ErrorCode::FileTooLarge,
        format!("the file is {size} bytes; documents are limited to {MAX_UPLOAD_BYTES} bytes"),
    )
    .with_details(serde_json::json!({"limit_bytes": MAX_UPLOAD_BYTES}))
}

/// The stem and extension (with its dot, or empty) of a safe file name for `name`.
fn sanitise_name(name: &str) -> Result<(String, String), ApiError> {
    keiri_fs::safe_file_name(name).ok_or_else(|| {
        ApiError::new(
            ErrorCode::InvalidRequest,
            format!("{name:?} is not a usable file name"),
        )
    })
}
