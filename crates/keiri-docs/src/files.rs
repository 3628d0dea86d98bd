//! Whole-file extraction with limits, and the digest built on it.

use std::path::{Path, PathBuf};

use keiri_fs::PathPolicy;

use crate::cache::{Cache, Loaded};
use crate::error::{Error, Result};
use crate::extract::{Cut, ExtractOptions, Format};
use crate::model::{
    DigestFile, DigestRequest, DigestResponse, ExtractLimits, ExtractRequest, ExtractResponse,
    FileText, ItemError, Output,
};
use crate::{lines, output, parallel};

/// Files one extract, digest or metrics call may name.
pub const MAX_REQUEST_FILES: usize = 200;
/// Files extracted at the same time.
pub(crate) const WORKERS: usize = 4;

/// Resolves a path from outside and names its format.
pub(crate) fn resolve(policy: &PathPolicy, raw: &str) -> Result<(PathBuf, Format)> {
    let resolved = policy.resolve_existing(raw)?;
    // The name the user gave decides the format (a symlink `a.pdf` to a blob is a PDF).
    let format = Format::from_path(Path::new(raw)).or_else(|_| Format::from_path(&resolved))?;
    if !resolved.is_file() {
        return Err(Error::UnsupportedFormat("not a regular file".into()));
    }
    Ok((resolved, format))
}

pub(crate) fn check_count(paths: &[String]) -> Result<()> {
    if paths.len() > MAX_REQUEST_FILES {
        return Err(Error::InvalidRequest(format!(
            "{} files given; at most {MAX_REQUEST_FILES} per call",
            paths.len()
        )));
    }
    Ok(())
}

/// Extracts `paths` in parallel, then applies the character budget in request order.
fn extract_all(
    policy: &PathPolicy,
    paths: &[String],
    limits: ExtractLimits,
    sheet: Option<&str>,
    range: Option<&str>,
    cache: &Cache,
) -> (Vec<FileText>, Vec<ItemError>) {
    let opts = ExtractOptions {
        max_pages: limits.max_pages,
        max_chars: Some(limits.max_chars_per_file),
        sheet: sheet.map(str::to_string),
        range: range.map(str::to_string),
        max_rows: limits.max_rows,
        max_cols: limits.max_cols,
    };
    let loaded: Vec<Result<(PathBuf, Loaded)>> = parallel::map(paths, WORKERS, |raw| {
        let (resolved, format) = resolve(policy, raw)?;
        let loaded = cache.load(&resolved, format, &opts, limits.max_file_bytes)?;
        Ok((resolved, loaded))
    });
    let mut remaining = limits.max_total_chars;
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for (raw, result) in paths.iter().zip(loaded) {
        let (resolved, loaded) = match result {
            Ok(ok) => ok,
            Err(e) => {
                errors.push(ItemError::file(raw, &e));
                continue;
            }
        };
        let ex = &loaded.extracted;
        let mut text = ex.normalized();
        let mut cuts = ex.cuts.clone();
        if let Some(at) = lines::cut_chars(&text, remaining) {
            text.truncate(at);
            cuts.push(Cut {
                limit: "max_total_chars".into(),
                message: format!(
                    "text cut at {remaining} characters: the budget of {} characters across all files was used up",
                    limits.max_total_chars
                ),
            });
        }
        let characters = text.chars().count();
        remaining -= characters.min(remaining);
        files.push(FileText {
            file_path: raw.clone(),
            resolved_path: resolved.display().to_string(),
            format: ex.format,
            encoding: ex.encoding.clone(),
            pages_total: ex.pages_total,
            pages_extracted: ex.pages_extracted,
            sheet: ex.sheet.clone(),
            sheet_names: ex.sheet_names.clone(),
            range: ex.range.clone(),
            unmapped_glyphs: ex.unmapped_glyphs,
            characters,
            lines: lines::count(&text),
            text,
            cuts,
            table: ex.table.clone(),
        });
    }
    (files, errors)
}

/// Extracts the text of every file in the request, within its limits. A file that fails is
/// listed in `errors` with a stable code; the others still extract.
pub fn extract_files(
    policy: &PathPolicy,
    req: &ExtractRequest,
    cache: &Cache,
) -> Result<Output<ExtractResponse>> {
    check_count(&req.file_paths)?;
    let limits = req.limits.clamped();
    let (files, errors) = extract_all(
        policy,
        &req.file_paths,
        limits,
        req.sheet.as_deref(),
        req.range.as_deref(),
        cache,
    );
    let response = ExtractResponse {
        success: errors.is_empty(),
        total_characters: files.iter().map(|f| f.characters).sum(),
        truncated: files.iter().any(|f| !f.cuts.is_empty()),
        files,
        errors,
        limits,
    };
    output::render(response, req.output_format)
}

/// Extracts the files and digests them to about `max_chars` characters for a prompt.
pub fn digest(
    policy: &PathPolicy,
    req: &DigestRequest,
    cache: &Cache,
) -> Result<Output<DigestResponse>> {
    check_count(&req.file_paths)?;
    let limits = req.limits.clamped();
    let (files, errors) = extract_all(
        policy,
        &req.file_paths,
        limits,
        req.sheet.as_deref(),
        req.range.as_deref(),
        cache,
    );
    let named: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            let name = Path::new(&f.file_path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| f.file_path.clone());
            (name, f.text.clone())
        })
        .collect();
    let (text, parts) = crate::digest::build(&named, req.max_chars);
    let empty = parts.iter().all(|p| p.characters_in_digest == 0);
    let response = DigestResponse {
        success: errors.is_empty(),
        characters: text.chars().count(),
        digest: text,
        empty,
        files: files
            .iter()
            .zip(parts)
            .map(|(f, p)| DigestFile {
                file_path: f.file_path.clone(),
                characters_compressed: p.characters_compressed,
                characters_in_digest: p.characters_in_digest,
                cut: p.cut || !f.cuts.is_empty(),
            })
            .collect(),
        errors,
    };
    output::render(response, req.output_format)
}
