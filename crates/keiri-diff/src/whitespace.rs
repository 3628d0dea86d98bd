//! Git's whitespace rules, as `git apply --whitespace=fix` uses them.
//!
//! The git backend runs with the user's configuration switched off, so git applies its
//! default `core.whitespace` rule set: `blank-at-eol` (trailing whitespace), `blank-at-eof`
//! (blank lines added at the end of the file) and `space-before-tab` (a space before a tab in
//! the indent), with a tab width of 8. Git adds `cr-at-eol` for one file of a patch as soon as
//! a context or removed line of it ends in CRLF, so a CRLF file's carriage returns are not
//! mistaken for trailing whitespace. The native applier must decide exactly as git does, or the
//! two backends would write different files; hence this module is a careful port of the parts
//! of git's `ws.c` those rules reach (`ws_check`, `ws_fix_copy`, `ws_blank_line`) and of the
//! line hash in `apply.c`.

/// Git's `isspace`: space, tab, line feed and carriage return only.
///
/// Git uses its own character table, not the C locale's: vertical tab, form feed and Unicode
/// spaces (such as the ideographic space U+3000 common in Japanese text) are *not* whitespace,
/// so they are never stripped.
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Whether every byte of `line` is whitespace (git's `ws_blank_line`); true for an empty line.
pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| is_space(b))
}

/// The whitespace rule set in force for one file of a patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Rule {
    /// `cr-at-eol`: a carriage return before the line feed is part of the line ending.
    pub cr_at_eol: bool,
}

/// Whether a line (its text after the patch prefix, newline included when it has one) breaks a
/// rule: trailing whitespace, or a space before a tab in the indent. Port of `ws_check`.
pub(crate) fn has_error(line: &[u8], rule: Rule) -> bool {
    let mut len = line.len();
    if len > 0 && line[len - 1] == b'\n' {
        len -= 1;
    }
    if rule.cr_at_eol && len > 0 && line[len - 1] == b'\r' {
        len -= 1;
    }
    let body = &line[..len];
    // One past the last non-whitespace byte; anything after it is trailing whitespace.
    let end = body
        .iter()
        .rposition(|&b| !is_space(b))
        .map_or(0, |i| i + 1);
    if end < len {
        return true;
    }
    let mut after_last_tab = 0;
    for (i, &b) in body[..end].iter().enumerate() {
        match b {
            b' ' => continue,
            b'\t' => {
                if after_last_tab < i {
                    return true;
                }
                after_last_tab = i + 1;
            }
            _ => break,
        }
    }
    false
}

/// The whitespace-corrected copy of a line and whether a correction was counted.
///
/// Port of `ws_fix_copy` for the rule set above: trailing whitespace goes (the carriage return
/// of a CRLF ending survives only under `cr-at-eol`), and spaces before the last tab of the
/// indent are dropped, except that every run of eight becomes a tab. Like git, dropping a lone
/// carriage return is not counted as a correction.
pub(crate) fn fix(src: &[u8], rule: Rule) -> (Vec<u8>, bool) {
    let mut len = src.len();
    let mut add_lf = false;
    let mut add_cr = false;
    let mut fixed = false;
    if len > 0 && src[len - 1] == b'\n' {
        add_lf = true;
        len -= 1;
        if len > 0 && src[len - 1] == b'\r' {
            add_cr = rule.cr_at_eol;
            len -= 1;
        }
    }
    if len > 0 && is_space(src[len - 1]) {
        while len > 0 && is_space(src[len - 1]) {
            len -= 1;
        }
        fixed = true;
    }

    let mut last_tab = None;
    let mut seen_space = false;
    let mut space_before_tab = false;
    for (i, &b) in src[..len].iter().enumerate() {
        match b {
            b'\t' => {
                last_tab = Some(i);
                space_before_tab |= seen_space;
            }
            b' ' => seen_space = true,
            _ => break,
        }
    }

    let mut out = Vec::with_capacity(len + 2);
    let mut rest = 0;
    if let (true, Some(tab)) = (space_before_tab, last_tab) {
        let mut spaces = 0;
        for &b in &src[..=tab] {
            if b == b' ' {
                spaces += 1;
                if spaces == 8 {
                    out.push(b'\t');
                    spaces = 0;
                }
            } else {
                spaces = 0;
                out.push(b);
            }
        }
        rest = tab + 1;
        fixed = true;
    }
    out.extend_from_slice(&src[rest..len]);
    if add_cr {
        out.push(b'\r');
    }
    if add_lf {
        out.push(b'\n');
    }
    (out, fixed)
}

/// A hash of a line that ignores whitespace, so lines that match after correction always hash
/// alike (git's `hash_line`); used to reject most positions before comparing bytes.
pub(crate) fn line_hash(line: &[u8]) -> u32 {
    line.iter()
        .filter(|&&b| !is_space(b))
        .fold(0u32, |h, &b| h.wrapping_mul(3).wrapping_add(u32::from(b)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    const LF: Rule = Rule { cr_at_eol: false };
    const CRLF: Rule = Rule { cr_at_eol: true };

    fn check_fix(rule: Rule, input: &str, expect: &str, expect_counted: bool) {
        let (out, counted) = fix(input.as_bytes(), rule);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            expect,
            "fix({input:?}, {rule:?})"
        );
        assert_eq!(counted, expect_counted, "counted for {input:?}");
        // A fixed line has no error left, and fixing is idempotent.
        let (again, _) = fix(expect.as_bytes(), rule);
        assert_eq!(String::from_utf8(again).unwrap(), expect);
        assert!(
            !has_error(expect.as_bytes(), rule),
            "{expect:?} still has an error"
        );
    }

    #[test]
    fn fix_matches_git() {
        check_fix(LF, "plain\n", "plain\n", false);
        check_fix(LF, "trailing  \n", "trailing\n", true);
        check_fix(LF, "tab\t\n", "tab\n", true);
        check_fix(LF, "   \n", "\n", true);
        check_fix(LF, "no newline  ", "no newline", true);
        // Without cr-at-eol the carriage return goes, uncounted; with it, it stays.
        check_fix(LF, "crlf\r\n", "crlf\n", false);
        check_fix(CRLF, "crlf\r\n", "crlf\r\n", false);
        check_fix(CRLF, "crlf  \r\n", "crlf\r\n", true);
        check_fix(LF, "crlf  \r\n", "crlf\n", true);
        // An incomplete line ending in CR loses it even under cr-at-eol, as in git.
        check_fix(CRLF, "last\r", "last", true);
        // Space before tab: spaces before the last indent tab go; eight become a tab.
        check_fix(LF, " \tx\n", "\tx\n", true);
        check_fix(LF, "  \t  \tx\n", "\t\tx\n", true);
        check_fix(LF, "        \tx\n", "\t\tx\n", true);
        check_fix(LF, "\t  x\n", "\t  x\n", false);
        check_fix(LF, "    x\n", "    x\n", false);
        // Unicode spaces are content, not whitespace.
        check_fix(LF, "全角\u{3000}\n", "全角\u{3000}\n", false);
        check_fix(LF, "\u{3000}indent\n", "\u{3000}indent\n", false);
    }

    fn check_error(rule: Rule, input: &str, expect: bool) {
        assert_eq!(
            has_error(input.as_bytes(), rule),
            expect,
            "{input:?} {rule:?}"
        );
    }

    #[test]
    fn errors_match_git() {
        check_error(LF, "ok\n", false);
        check_error(LF, "ok", false);
        check_error(LF, "x \n", true);
        check_error(LF, "x\r\n", true);
        check_error(CRLF, "x\r\n", false);
        check_error(CRLF, "x \r\n", true);
        check_error(LF, " \tx\n", true);
        check_error(LF, "\t x\n", false);
        check_error(LF, "\n", false);
        check_error(LF, " \n", true);
    }

    #[test]
    fn blank_and_hash() {
        assert!(is_blank(b""));
        assert!(is_blank(b" \t\r\n"));
        assert!(!is_blank("\u{3000}\n".as_bytes()));
        assert_eq!(line_hash(b"a b\n"), line_hash(b"ab  \r\n"));
        assert_ne!(line_hash(b"ab\n"), line_hash(b"ba\n"));
    }
}
