//! `file.list_folder`: its inputs and outputs are in `block_specs/input/file.list_folder.yaml`.

use super::{ext_of, normalize_ext, resolve};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, Outputs};
use crate::blocks::kit::steps::Steps;
use serde_json::{Value as J, json};

fn modified_iso(meta: &std::fs::Metadata) -> String {
    meta.modified()
        .ok()
        .map(|t| {
            chrono::DateTime::<chrono::Utc>::from(t)
                .format("%Y-%m-%dT%H:%M:%SZ")
                .to_string()
        })
        .unwrap_or_default()
}

fn file_list_folder(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let folder = inputs.require_str("folder")?;
    let pattern = inputs.str("pattern")?.unwrap_or("*");
    let extensions: Option<Vec<String>> = inputs
        .strings("extensions")?
        .map(|v| v.iter().map(|e| normalize_ext(e)).collect());
    let recursive = inputs.bool("recursive")?.unwrap_or(false);
    let sort_by = inputs.str("sort_by")?.unwrap_or("name");
    let glob = globset::GlobBuilder::new(pattern)
        .case_insensitive(true)
        .literal_separator(false)
        .build()
        .map_err(|e| {
            BlockError::input_invalid(
                "pattern",
                &format!("globパターンが不正です: {e}"),
                &format!("bad glob: {e}"),
            )
        })?
        .compile_matcher();
    let root = resolve(ctx, folder)?;
    if !root.is_dir() {
        let shown = root.display();
        return Err(BlockError::new(
            ErrorCode::FileNotFound,
            format!("フォルダ {shown} がありません"),
            format!("folder {shown} does not exist"),
        ));
    }
    let walker = walkdir::WalkDir::new(&root)
        .min_depth(1)
        .max_depth(if recursive { usize::MAX } else { 1 })
        .sort_by_file_name();
    let mut files: Vec<(J, String, std::time::SystemTime, u64)> = Vec::new();
    let mut steps = Steps::new(ctx, ProgressUnit::Files, None);
    for entry in walker {
        steps.next()?;
        let Ok(entry) = entry else { continue };
        // A file the run's policy denies (`.env`, key files) is not listed either.
        if !entry.file_type().is_file() || ctx.paths.check(entry.path()).is_err() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if !glob.is_match(&name) {
            continue;
        }
        let ext = ext_of(entry.path());
        if let Some(exts) = &extensions
            && !exts.contains(&normalize_ext(&ext))
        {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let relative = entry
            .path()
            .strip_prefix(ctx.base_dir)
            .unwrap_or(entry.path());
        let path = relative.to_string_lossy().replace('\\', "/");
        let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
        files.push((
            json!({"name": name, "path": path, "ext": ext, "size": meta.len(), "modified": modified_iso(&meta)}),
            path,
            modified,
            meta.len(),
        ));
    }
    match sort_by {
        "name" => files.sort_by(|a, b| a.1.cmp(&b.1)),
        "modified" => files.sort_by(|a, b| a.2.cmp(&b.2).then(a.1.cmp(&b.1))),
        "size" => files.sort_by(|a, b| a.3.cmp(&b.3).then(a.1.cmp(&b.1))),
        other => {
            return Err(BlockError::input_invalid(
                "sort_by",
                &format!("{other} は使えません（name, modified, size）"),
                &format!("{other} is not name, modified or size"),
            ));
        }
    }
    let count = files.len();
    Ok(Outputs::new()
        .with("files", J::Array(files.into_iter().map(|f| f.0).collect()))
        .with("count", json!(count)))
}

builtin!("file.list_folder", file_list_folder);
