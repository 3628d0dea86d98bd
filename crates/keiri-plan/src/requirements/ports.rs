//! What a block input's spec says about its question: a short label from its description,
//! the file extensions a path input accepts, and the columns a column input can pick from.

use serde_json::Value;

use super::{Requirement, RequirementKind};
use crate::catalog::{PortSpec, ValueType};

/// A short label from a description: its first clause, at most 40 characters.
pub fn short_label(description: &str) -> String {
    let first = description.lines().next().unwrap_or_default().trim();
    let mut end = first.len();
    for stop in ["。", "（", "(", "：", ": ", "; ", ". "] {
        if let Some(i) = first.find(stop) {
            end = end.min(i);
        }
    }
    let clause = first[..end].trim();
    if clause.chars().count() > 40 {
        clause.chars().take(40).collect::<String>() + "…"
    } else {
        clause.to_string()
    }
}

/// Whether an input names a file to read.
pub(super) fn is_path_key(key: &str) -> bool {
    key == "path" || key.ends_with("_path") || key == "file" || key.ends_with("_file")
}

/// The extensions a path input accepts, from the spec: an explicit `accept`, the extensions
/// its descriptions name (`（.xlsx/.xlsm）`), or the file format they name (`CSV`, `PDF`).
pub fn accept_of(port: &PortSpec) -> Option<String> {
    if let Some(Value::String(a)) = port.extra.get("accept") {
        return Some(a.clone());
    }
    let texts = [
        port.description.as_str(),
        port.description_en.as_deref().unwrap_or_default(),
    ];
    let mut exts: Vec<String> = Vec::new();
    for text in texts {
        for ext in extensions_in(text) {
            if !exts.contains(&ext) {
                exts.push(ext);
            }
        }
    }
    if exts.is_empty() {
        for text in texts {
            for word in text.split(|c: char| !c.is_ascii_alphanumeric()) {
                let found: &[&str] = match word.to_ascii_lowercase().as_str() {
                    "csv" => &[".csv"],
                    "pdf" => &[".pdf"],
                    "zip" => &[".zip"],
                    "excel" => &[".xlsx", ".xlsm"],
                    "docx" => &[".docx"],
                    _ => &[],
                };
                for ext in found {
                    if !exts.iter().any(|e| e == ext) {
                        exts.push((*ext).to_string());
                    }
                }
            }
        }
    }
    (!exts.is_empty()).then(|| exts.join(","))
}

/// `.xlsx`-like tokens: a dot after a non-alphanumeric character, then 2–5 letters or digits.
fn extensions_in(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    for (i, &c) in chars.iter().enumerate() {
        if c != '.'
            || i.checked_sub(1)
                .is_some_and(|p| chars[p].is_ascii_alphanumeric())
        {
            continue;
        }
        let ext: String = chars[i + 1..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let letters = ext.chars().any(|c| c.is_ascii_alphabetic());
        if (2..=5).contains(&ext.len()) && letters {
            out.push(format!(".{}", ext.to_ascii_lowercase()));
        }
    }
    out
}

/// Whether `path` has one of the extensions `accept` lists (`.csv,.tsv`), case ignored. A CSV
/// question takes any delimited text `csv.read` reads: a tab-separated `.tsv` and Excel's
/// 「Unicode テキスト」 export, which Excel names `.txt`.
pub fn accepts_path(accept: &str, path: &str) -> bool {
    let path = path.trim().to_lowercase();
    accept
        .split(',')
        .map(|e| e.trim().to_lowercase())
        .filter(|e| !e.is_empty())
        .any(|e| {
            path.ends_with(&e)
                || (e == ".csv" && (path.ends_with(".tsv") || path.ends_with(".txt")))
        })
}

/// A question on a column input whose rows' columns are known: a pick from them (`select`
/// for one column; for a list of columns, a text answer whose items must be among the
/// `options`, which the studio shows as check boxes).
pub(super) fn offer_columns(r: &mut Requirement, columns: &[String]) {
    let list = r.value_type == Some(ValueType::Array);
    if columns.is_empty() || !(r.kind == RequirementKind::Text && (list || r.value_type.is_none()))
    {
        return;
    }
    if !list {
        r.kind = RequirementKind::Select;
    }
    r.options = columns.iter().cloned().map(Value::String).collect();
    let (ja, en) = if list {
        (
            "ファイルの列から選んでください（複数可）",
            "pick the file's columns (one or more)",
        )
    } else {
        (
            "ファイルの列から選んでください",
            "pick one of the file's columns",
        )
    };
    r.hint = Some(ja.to_string());
    r.hint_en = Some(en.to_string());
}
