//! Lines of a text, as every part of this crate counts them: terminated by `\r\n`, `\n` or a
//! lone `\r`; a final terminator does not start another line; the empty text has no lines.

/// One line: `text[start..end]` is its content, `text[start..next]` includes the terminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
    pub next: usize,
}

/// The lines of `text`.
pub(crate) fn spans(text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push(Span {
                    start,
                    end: i,
                    next: i + 1,
                });
                start = i + 1;
            }
            b'\r' => {
                let next = if bytes.get(i + 1) == Some(&b'\n') {
                    i + 2
                } else {
                    i + 1
                };
                out.push(Span {
                    start,
                    end: i,
                    next,
                });
                start = next;
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if start < bytes.len() {
        out.push(Span {
            start,
            end: bytes.len(),
            next: bytes.len(),
        });
    }
    out
}

/// The number of lines of `text`.
pub fn count(text: &str) -> usize {
    spans(text).len()
}

/// `text` with every line terminator replaced by `\n`.
pub(crate) fn normalize(text: &str) -> String {
    if !text.contains('\r') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for s in spans(text) {
        out.push_str(&text[s.start..s.end]);
        if s.next > s.end {
            out.push('\n');
        }
    }
    out
}

/// The byte index at which to cut `text` to keep `max` characters (a `\r\n` pair counts as
/// one), or `None` if it already fits.
pub(crate) fn cut_chars(text: &str, max: usize) -> Option<usize> {
    let mut count = 0usize;
    let mut iter = text.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        if c == '\r' && iter.peek().is_some_and(|(_, n)| *n == '\n') {
            continue;
        }
        if count == max {
            return Some(i);
        }
        count += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expect: &[&str]) {
        let got: Vec<&str> = spans(text).iter().map(|s| &text[s.start..s.end]).collect();
        assert_eq!(got, expect, "{text:?}");
        assert_eq!(count(text), expect.len());
        assert_eq!(
            normalize(text).split_terminator('\n').collect::<Vec<_>>(),
            expect
        );
    }

    #[test]
    fn line_rules() {
        check("", &[]);
        check("a", &["a"]);
        check("a\n", &["a"]);
        check("a\nb", &["a", "b"]);
        check("a\r\nb\r\n", &["a", "b"]);
        check("a\rb", &["a", "b"]);
        check("a\n\nb", &["a", "", "b"]);
        check("\n", &[""]);
    }

    #[test]
    fn cutting() {
        assert_eq!(cut_chars("abc", 3), None);
        assert_eq!(cut_chars("abc", 2), Some(2));
        assert_eq!(cut_chars("請求書", 1), Some(3));
        assert_eq!(cut_chars("a\r\nb", 2), Some(3));
        assert_eq!(cut_chars("", 0), None);
    }
}
