//! `file.unzip_evidence`: its inputs and outputs are in `block_specs/input/file.unzip_evidence.yaml`.

use super::{excerpt, ext_of, normalize_ext, read_bytes};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::steps::Steps;
use serde_json::{Value as J, json};
use std::collections::BTreeMap;
use std::io::{Cursor, Read};
use std::path::{Component, Path, PathBuf};

/// Caps for one evidence archive: a zip bomb stops at these, not at the disk's end.
const ZIP_MAX_ENTRIES: usize = 10_000;
const ZIP_MAX_ENTRY_BYTES: u64 = 256 * 1024 * 1024;
const ZIP_MAX_TOTAL_BYTES: u64 = 1024 * 1024 * 1024;

/// A zip entry name as a safe relative path (no absolute paths, no `..`), or `None`.
fn safe_entry_path(name: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

fn file_unzip_evidence(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let path = inputs.require_str("path")?;
    let include_text = inputs.bool("include_text")?.unwrap_or(true);
    let max_chars =
        usize::try_from(inputs.i64("max_chars_per_file")?.unwrap_or(2000).max(0)).unwrap_or(0);
    let extensions: Option<Vec<String>> = inputs
        .strings("extensions")?
        .map(|v| v.iter().map(|e| normalize_ext(e)).collect());
    let group_level = inputs.str("group_level")?.unwrap_or("none");
    let level = match group_level {
        "none" => None,
        "top_folder" => Some(0),
        "second_folder" => Some(1),
        other => {
            return Err(BlockError::input_invalid(
                "group_level",
                &format!("{other} は使えません（none, top_folder, second_folder）"),
                &format!("{other} is not none, top_folder or second_folder"),
            ));
        }
    };
    let (_, bytes) = read_bytes(ctx, path)?;
    let bad_zip = |detail: String| {
        BlockError::failed(
            format!("ZIPファイルを読めません: {detail}"),
            format!("cannot read the zip file: {detail}"),
        )
    };
    let mut archive = ::zip::ZipArchive::new(Cursor::new(bytes.as_slice()))
        .map_err(|e| bad_zip(e.to_string()))?;
    if archive.len() > ZIP_MAX_ENTRIES {
        return Err(bad_zip(format!(
            "{} entries (limit {ZIP_MAX_ENTRIES})",
            archive.len()
        )));
    }
    let dest = ctx.out_dir.join("evidence");
    let mut files: Vec<J> = Vec::new();
    let mut per_ext: BTreeMap<String, usize> = BTreeMap::new();
    let mut unreadable: Vec<J> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    let mut total: u64 = 0;
    let mut steps = Steps::new(ctx, ProgressUnit::Files, Some(archive.len()));
    for i in 0..archive.len() {
        steps.next()?;
        let mut entry = archive.by_index(i).map_err(|e| bad_zip(e.to_string()))?;
        if entry.is_dir() {
            continue;
        }
        // Names written by Japanese Windows tools are CP932 without the UTF-8 flag; the
        // zip crate gives them as raw bytes we decode ourselves.
        let raw = entry.name_raw().to_vec();
        let name = match std::str::from_utf8(&raw) {
            Ok(s) => s.to_owned(),
            Err(_) => encoding_rs::SHIFT_JIS.decode(&raw).0.into_owned(),
        };
        let Some(relative) = safe_entry_path(&name) else {
            skipped.push(name);
            continue;
        };
        let ext = ext_of(&relative);
        if let Some(exts) = &extensions
            && !exts.contains(&normalize_ext(&ext))
        {
            continue;
        }
        let mut content = Vec::new();
        let read = (&mut entry)
            .take(ZIP_MAX_ENTRY_BYTES + 1)
            .read_to_end(&mut content);
        if let Err(e) = read {
            unreadable.push(json!({"path": name, "reason": e.to_string()}));
            continue;
        }
        if content.len() as u64 > ZIP_MAX_ENTRY_BYTES {
            return Err(bad_zip(format!(
                "{name} inflates past {ZIP_MAX_ENTRY_BYTES} bytes"
            )));
        }
        total += content.len() as u64;
        if total > ZIP_MAX_TOTAL_BYTES {
            return Err(bad_zip(format!(
                "contents inflate past {ZIP_MAX_TOTAL_BYTES} bytes"
            )));
        }
        let target = dest.join(&relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                BlockError::failed(
                    format!("展開先を作れません: {e}"),
                    format!("cannot create the output folder: {e}"),
                )
            })?;
        }
        keiri_fs::write_atomic(&target, &content).map_err(|e| {
            BlockError::failed(
                format!("展開したファイルを書けません: {e}"),
                format!("cannot write an extracted file: {e}"),
            )
        })?;
        let folders: Vec<String> = relative
            .parent()
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let text_excerpt = if include_text {
            match excerpt(&relative, &content, max_chars) {
                Ok(t) => t.unwrap_or_default(),
                Err(code) => {
                    unreadable.push(json!({"path": name, "reason": code}));
                    String::new()
                }
            }
        } else {
            String::new()
        };
        *per_ext.entry(ext.clone()).or_default() += 1;
        let relative_text = relative.to_string_lossy().replace('\\', "/");
        files.push(json!({
            "name": relative.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            "path": target.to_string_lossy(),
            "entry": relative_text,
            "folder": folders.join("/"),
            "ext": ext,
            "size": content.len(),
            "text_excerpt": text_excerpt,
        }));
    }
    let mut groups: Vec<J> = Vec::new();
    if let Some(level) = level {
        let mut by_key: indexmap::IndexMap<String, Vec<J>> = indexmap::IndexMap::new();
        for f in &files {
            let folder = f["folder"].as_str().unwrap_or("");
            let key = folder
                .split('/')
                .filter(|s| !s.is_empty())
                .nth(level)
                .unwrap_or("")
                .to_owned();
            by_key.entry(key).or_default().push(f.clone());
        }
        groups = by_key
            .into_iter()
            .map(|(key, files)| json!({"key": key, "files": files}))
            .collect();
    }
    let summary = json!({
        "files": files.len(),
        "by_extension": per_ext,
        "unreadable": unreadable,
        "skipped_unsafe_paths": skipped,
        "extracted_to": dest.to_string_lossy(),
    });
    Ok(Outputs::new()
        .with("files", J::Array(files))
        .with("groups", J::Array(groups))
        .with("summary", summary))
}

builtin!("file.unzip_evidence", file_unzip_evidence);
