//! Registering a plan: `designs/<plan_id>_<yyyymmddHHMM>.yaml`, only when it validates,
//! atomically, and never over an existing file (`_2`, `_3`, … are tried instead).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chrono::NaiveDateTime;

use crate::model::Plan;

/// Why a plan was not registered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegisterError {
    #[error("the plan has {0} validation error(s); fix them before registering")]
    Invalid(usize),
    #[error("the plan has no id")]
    MissingId,
    #[error("saving the plan")]
    Write(#[source] keiri_fs::Error),
    #[error("creating the designs directory {0}")]
    CreateDir(PathBuf, #[source] std::io::Error),
}

/// A file-name-safe version of a plan id: letters (any script), digits, `-`, `_` and `.`
/// are kept, everything else becomes `_`.
pub fn file_stem(plan_id: &str) -> String {
    let s: String = plan_id
        .trim()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() {
        "plan".into()
    } else {
        s.chars().take(100).collect()
    }
}

/// The format of the time in a registered file's name (`yyyymmddHHMM`, local time).
pub const STAMP_FORMAT: &str = "%Y%m%d%H%M";

/// The time a `yyyymmddHHMM` stamp names, or `None` when it is not exactly twelve ASCII
/// digits of a real date and time. A client that previewed a file name sends its stamp back,
/// so the file is saved under the name the person saw even when the minute has rolled over.
pub fn parse_stamp(stamp: &str) -> Option<NaiveDateTime> {
    if stamp.len() != 12 || !stamp.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // chrono needs seconds to build a time; a stamp names the minute.
    NaiveDateTime::parse_from_str(&format!("{stamp}00"), "%Y%m%d%H%M%S").ok()
}

/// Writes `text` (the plan as the user wrote it, comments kept) for `plan` into `designs_dir`.
/// The caller has validated it; `error_count` is the number of errors found (must be 0).
pub fn register(
    plan: &Plan,
    text: &str,
    error_count: usize,
    designs_dir: &Path,
    now: NaiveDateTime,
) -> Result<PathBuf, RegisterError> {
    if error_count > 0 {
        return Err(RegisterError::Invalid(error_count));
    }
    if plan.id.trim().is_empty() {
        return Err(RegisterError::MissingId);
    }
    std::fs::create_dir_all(designs_dir)
        .map_err(|e| RegisterError::CreateDir(designs_dir.to_path_buf(), e))?;
    let stem = format!("{}_{}", file_stem(&plan.id), now.format(STAMP_FORMAT));
    keiri_fs::write_unique(designs_dir, &stem, ".yaml", 2, text.as_bytes())
        .map_err(RegisterError::Write)
}

/// The plans in a designs directory, by id (for subflow calls). Unreadable files are
/// skipped: they are not plans a subflow could call. When several files share an id, the
/// last by file name (the newest registration) wins.
pub fn designs_index(dir: &Path) -> HashMap<String, (PathBuf, Plan)> {
    let mut out = HashMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        .collect();
    files.sort();
    for file in files {
        let Ok(meta) = std::fs::metadata(&file) else {
            continue;
        };
        if meta.len() > crate::yaml::MAX_DOCUMENT_BYTES as u64 {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        if let Ok(loaded) = crate::io::load_plan(&text)
            && !loaded.plan.id.trim().is_empty()
        {
            out.insert(loaded.plan.id.clone(), (file, loaded.plan));
        }
    }
    out
}
