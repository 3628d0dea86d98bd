//! Text helpers shared by blocks of several categories.

use std::path::Path;

use serde_json::Value as Json;

/// The text excerpt of an extracted evidence file, or the reason it has none.
pub(crate) fn excerpt(
    path: &Path,
    bytes: &[u8],
    max_chars: usize,
) -> Result<Option<String>, String> {
    let Ok(format) = keiri_docs::Format::from_path(path) else {
        return Ok(None);
    };
    let opts = keiri_docs::ExtractOptions {
        max_chars: Some(max_chars),
        ..keiri_docs::ExtractOptions::default()
    };
    keiri_docs::extract_bytes(bytes, format, &opts)
        .map(|e| Some(e.normalized()))
        .map_err(|e| e.code().to_owned())
}

pub(crate) fn text(v: Option<&Json>) -> String {
    match v {
        None | Some(Json::Null) => String::new(),
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}
