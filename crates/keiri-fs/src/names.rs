//! File names made from untrusted text (a browser's upload name, a dropped file's name), and
//! a name's stem and extension.

use std::path::Path;

/// Longest kept file stem, in characters.
const MAX_STEM_CHARS: usize = 120;
/// Longest kept extension (with its dot), in characters.
const MAX_EXT_CHARS: usize = 16;

/// The stem and extension (with its dot, or empty) of a name safe on every platform for the
/// file `name` names: only its last path component (either separator: a Windows browser may
/// send `C:\Users\me\a.pdf`), control characters and `<>:"|?*` replaced by `_`, surrounding
/// spaces and leading dots removed, the stem cut to 120 characters and the extension to 16.
/// `None` when nothing usable is left.
pub fn safe_file_name(name: &str) -> Option<(String, String)> {
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
        return None;
    }
    let (stem, ext) = match cleaned.rfind('.') {
        Some(dot) if dot > 0 => (&cleaned[..dot], &cleaned[dot..]),
        _ => (cleaned, ""),
    };
    let stem: String = stem.chars().take(MAX_STEM_CHARS).collect();
    let ext: String = ext.chars().take(MAX_EXT_CHARS).collect();
    Some((stem, ext))
}

/// A file name's stem and its extension with the dot: `("報告", ".xlsx")`, `("README", "")`.
/// Used wherever a name gets a suffix (`報告_2.xlsx`), so the suffix goes before the extension
/// the same way everywhere.
pub fn stem_and_ext(name: &Path) -> (String, String) {
    let stem = name
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = name
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    (stem, ext)
}

#[cfg(test)]
mod tests {
    use super::safe_file_name;

    fn parts(name: &str) -> Option<(String, String)> {
        safe_file_name(name)
    }

    #[test]
    fn only_the_last_component_of_either_separator_is_kept() {
        let pair = |s: &str, e: &str| Some((s.to_string(), e.to_string()));
        assert_eq!(
            parts("C:\\Users\\経理\\請求書 2026.pdf"),
            pair("請求書 2026", ".pdf")
        );
        assert_eq!(parts("../../etc/passwd"), pair("passwd", ""));
        assert_eq!(
            parts("a<b>c:d\"e|f?g*h\u{7}.csv"),
            pair("a_b_c_d_e_f_g_h_", ".csv")
        );
        // A leading dot is not an extension: the name is kept without it.
        assert_eq!(parts("  ..env  "), pair("env", ""));
        assert_eq!(parts("archive.tar.gz"), pair("archive.tar", ".gz"));
    }

    #[test]
    fn nothing_usable_is_none_and_long_names_are_cut() {
        assert_eq!(parts(""), None);
        assert_eq!(parts("dir/"), None);
        assert_eq!(parts(" . "), None);
        let (stem, ext) = parts(&format!("{}.{}", "あ".repeat(200), "x".repeat(40))).unwrap();
        assert_eq!(stem.chars().count(), 120);
        assert_eq!(ext.chars().count(), 16);
        assert!(ext.starts_with('.'));
    }
}
