//! The digest: many documents squeezed into a few thousand characters for a prompt.
//!
//! Per file: whitespace runs become one space, blank lines go, and a line already seen in the
//! same file (page headers and footers, repeated table headings) is dropped. The character
//! budget is then shared max-min fairly: a file shorter than an equal share keeps all of its
//! text and leaves the rest to the others, so one long manual cannot crowd out a one-page
//! invoice. Each file is introduced by a `## name` header.

use std::collections::HashSet;

/// The digest when no file gave any text; the planner's prompt keys on this exact phrase.
pub const NO_DOCUMENTS: &str = "no documents provided";

/// One file's part of a digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    pub characters_compressed: usize,
    pub characters_in_digest: usize,
    pub cut: bool,
}

/// Compresses a text: collapse whitespace, drop blank and repeated lines.
pub(crate) fn compress(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let collapsed = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if collapsed.is_empty() || !seen.insert(collapsed.clone()) {
            continue;
        }
        out.push(collapsed);
    }
    out
}

/// Builds the digest of `(name, text)` pairs within about `max_chars` characters.
pub(crate) fn build(files: &[(String, String)], max_chars: usize) -> (String, Vec<Part>) {
    let compressed: Vec<(String, Vec<String>, usize)> = files
        .iter()
        .map(|(name, text)| {
            let lines = compress(text);
            let len = lines.iter().map(|l| l.chars().count()).sum::<usize>()
                + lines.len().saturating_sub(1);
            (name.clone(), lines, len)
        })
        .collect();
    let contributing: Vec<usize> = (0..compressed.len())
        .filter(|&i| compressed[i].2 > 0)
        .collect();
    if contributing.is_empty() {
        let parts = compressed
            .iter()
            .map(|_| Part {
                characters_compressed: 0,
                characters_in_digest: 0,
                cut: false,
            })
            .collect();
        return (NO_DOCUMENTS.to_string(), parts);
    }
    // Headers ("## name\n") and the blank lines between files come off the budget first.
    let overhead: usize = contributing
        .iter()
        .map(|&i| compressed[i].0.chars().count() + 4)
        .sum::<usize>()
        + 2 * contributing.len().saturating_sub(1);
    let budget = max_chars.saturating_sub(overhead);
    let mut shares = vec![0usize; compressed.len()];
    let mut by_len = contributing.clone();
    by_len.sort_by_key(|&i| compressed[i].2);
    let mut remaining = budget;
    for (k, &i) in by_len.iter().enumerate() {
        let fair = remaining / (by_len.len() - k);
        let share = compressed[i].2.min(fair);
        shares[i] = share;
        remaining -= share;
    }
    let mut sections = Vec::new();
    let mut parts = Vec::new();
    for (i, (name, lines, len)) in compressed.iter().enumerate() {
        if *len == 0 {
            parts.push(Part {
                characters_compressed: 0,
                characters_in_digest: 0,
                cut: false,
            });
            continue;
        }
        let body = take_chars(lines, shares[i]);
        let kept = body.chars().count();
        parts.push(Part {
            characters_compressed: *len,
            characters_in_digest: kept,
            cut: kept < *len,
        });
        sections.push(format!("## {name}\n{body}"));
    }
    (sections.join("\n\n"), parts)
}

/// Whole lines while they fit; then, if there is room for something useful, the start of
/// the next line with an ellipsis.
fn take_chars(lines: &[String], budget: usize) -> String {
    let mut out = String::new();
    let mut used = 0usize;
    for line in lines {
        let sep = usize::from(!out.is_empty());
        let len = line.chars().count();
        if used + sep + len <= budget {
            if sep == 1 {
                out.push('\n');
            }
            out.push_str(line);
            used += sep + len;
            continue;
        }
        let room = budget.saturating_sub(used + sep);
        if room >= 16 {
            if sep == 1 {
                out.push('\n');
            }
            out.extend(line.chars().take(room - 1));
            out.push('…');
        }
        break;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(files: &[(&str, &str)], max: usize, expect: &str) {
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect();
        let (digest, _) = build(&files, max);
        assert_eq!(digest, expect);
        assert!(
            digest.chars().count() <= max.max(NO_DOCUMENTS.len()),
            "{digest}"
        );
    }

    #[test]
    fn compression_and_headers() {
        check(&[], 100, NO_DOCUMENTS);
        check(&[("a.txt", "  \n\t \n")], 100, NO_DOCUMENTS);
        check(&[("a.txt", "x   y\n\nx y\nz\n")], 100, "## a.txt\nx y\nz");
        check(
            &[("a.txt", "one"), ("b.txt", "two")],
            100,
            "## a.txt\none\n\n## b.txt\ntwo",
        );
    }

    #[test]
    fn fair_shares() {
        // Budget 60 - headers (2 × 9) - separator 2 = 40: the short file keeps its 5 characters,
        // the long one gets the other 35.
        let long = (0..20)
            .map(|i| format!("line {i:02}"))
            .collect::<Vec<_>>()
            .join("\n");
        let files = vec![
            ("a.txt".to_string(), long),
            ("b.txt".to_string(), "short".to_string()),
        ];
        let (digest, parts) = build(&files, 60);
        assert!(digest.ends_with("## b.txt\nshort"), "{digest}");
        assert_eq!(
            parts[1],
            Part {
                characters_compressed: 5,
                characters_in_digest: 5,
                cut: false
            }
        );
        assert!(parts[0].cut);
        assert!(parts[0].characters_in_digest <= 35);
        assert!(digest.chars().count() <= 60);
    }
}
