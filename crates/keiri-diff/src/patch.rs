//! From patch text to the hunks both backends apply.
//!
//! [`prepare`] parses the text with `diffy` (plain unified diffs, `git diff` output, or bare
//! `@@` hunks without file headers, which models often write), keeps only the sections that
//! modify the target file and refuses everything else a one-file edit must not do: creating,
//! deleting, renaming or copying files, changing modes, binary patches. [`adapt`] then fits the
//! hunks to the file as it is on disk (its line endings and byte order mark), and
//! [`PreparedPatch::to_git_diff`] writes them back out for `git apply`. Both backends therefore
//! see exactly the same, already validated hunks: git is never handed a section this module did
//! not check.

use std::borrow::Cow;

use diffy::patch_set::{FileMode, FileOperation, ParseOptions, PatchKind, PatchSet};

/// What a hunk line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// A line that must be present and stays (`' '`).
    Context,
    /// A line that must be present and goes (`'-'`).
    Delete,
    /// A line that is added (`'+'`).
    Insert,
}

/// One line of a hunk: its text after the prefix, with its line ending (`\n` or `\r\n`) unless
/// the patch marks it `\ No newline at end of file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    pub kind: LineKind,
    pub text: String,
}

impl HunkLine {
    /// Whether the line ends with a line feed (false only for a file's incomplete last line).
    pub fn has_newline(&self) -> bool {
        self.text.ends_with('\n')
    }

    fn is_old(&self) -> bool {
        self.kind != LineKind::Insert
    }

    fn is_new(&self) -> bool {
        self.kind != LineKind::Delete
    }
}

/// One `@@ -old_start,old_lines +new_start,new_lines @@` hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: usize,
    pub old_lines: usize,
    pub new_start: usize,
    pub new_lines: usize,
    pub lines: Vec<HunkLine>,
}

/// The hunks of one file section of a patch, applied in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Section {
    pub hunks: Vec<Hunk>,
}

/// The sections of a patch that modify the target file, in patch order. Git applies several
/// sections for one path one after the other, and so does the native applier.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PreparedPatch {
    pub sections: Vec<Section>,
}

impl PreparedPatch {
    /// Number of hunks over all sections.
    pub fn hunk_count(&self) -> usize {
        self.sections.iter().map(|s| s.hunks.len()).sum()
    }

    /// The patch as `git diff` output for the file `rel` (a `/`-separated path), which is what
    /// the git backend feeds to `git apply`.
    pub fn to_git_diff(&self, rel: &str) -> String {
        let a = quote_path(&format!("a/{rel}"));
        let b = quote_path(&format!("b/{rel}"));
        let mut out = String::new();
        for section in &self.sections {
            out.push_str(&format!("diff --git {a} {b}\n--- {a}\n+++ {b}\n"));
            for hunk in &section.hunks {
                out.push_str(&format!(
                    "@@ -{},{} +{},{} @@\n",
                    hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines
                ));
                for line in &hunk.lines {
                    out.push(match line.kind {
                        LineKind::Context => ' ',
                        LineKind::Delete => '-',
                        LineKind::Insert => '+',
                    });
                    out.push_str(&line.text);
                    if !line.has_newline() {
                        out.push_str("\n\\ No newline at end of file\n");
                    }
                }
            }
        }
        out
    }
}

/// Quotes a path the way git does when it has to (C-style, in double quotes), so `git apply`
/// and `diffy` read it back unchanged. Spaces are quoted too: an unquoted `diff --git` line
/// with spaces is ambiguous.
fn quote_path(path: &str) -> String {
    let needs = path
        .bytes()
        .any(|b| b < 0x20 || b == 0x7f || b == b'"' || b == b'\\' || b == b' ');
    if !needs {
        return path.to_string();
    }
    let mut out = String::from("\"");
    for b in path.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b if !(0x20..0x7f).contains(&b) => out.push_str(&format!("\\{b:03o}")),
            b => out.push(char::from(b)),
        }
    }
    out.push('"');
    out
}

/// The file a patch must change, by every name a patch may reasonably use for it.
#[derive(Debug, Clone)]
pub struct Target {
    rel: String,
    aliases: Vec<String>,
}

impl Target {
    /// `rel` is the canonical path relative to the workspace root, `/`-separated; `aliases` are
    /// other spellings that name the same file (the path as the caller gave it, the absolute
    /// canonical path).
    pub fn new(rel: impl Into<String>, aliases: impl IntoIterator<Item = String>) -> Self {
        let rel = rel.into();
        let mut all: Vec<String> = Vec::new();
        for alias in aliases {
            let alias = normalise_name(&alias).to_string();
            if !alias.is_empty() && alias != rel && !all.contains(&alias) {
                all.push(alias);
            }
        }
        Target { rel, aliases: all }
    }

    /// The canonical workspace-relative path.
    pub fn rel(&self) -> &str {
        &self.rel
    }

    /// Whether a path from a patch header names the target: as written, or with its first
    /// component (`a/`, `b/`, or any other prefix as with `-p1`) removed.
    fn matches(&self, header: &str) -> bool {
        let name = normalise_name(header);
        let stripped = name.split_once('/').map(|(_, rest)| rest);
        [Some(name), stripped]
            .into_iter()
            .flatten()
            .any(|candidate| candidate == self.rel || self.aliases.iter().any(|a| a == candidate))
    }
}

fn normalise_name(name: &str) -> &str {
    let mut name = name.trim();
    while let Some(rest) = name.strip_prefix("./") {
        name = rest;
    }
    name
}

/// Why a patch cannot be applied to the target; found before any backend runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection(pub String);

enum Format {
    /// `git diff` output (`diff --git` headers, extended headers).
    Git,
    /// `---`/`+++` headers.
    Unified,
    /// Only `@@` hunks: they are taken to be for the target file.
    Headerless,
}

fn detect(text: &str) -> Format {
    if text.lines().any(|l| l.starts_with("diff --git ")) {
        return Format::Git;
    }
    for line in text.lines() {
        if line.starts_with("@@ ") {
            break;
        }
        if line.starts_with("--- ") || line.starts_with("+++ ") {
            return Format::Unified;
        }
    }
    Format::Headerless
}

fn malformed(err: impl std::fmt::Display) -> Rejection {
    Rejection(format!("malformed patch: {err}"))
}

/// Parses `patch` and keeps the sections that modify `target`.
pub fn prepare(patch: &str, target: &Target) -> Result<PreparedPatch, Rejection> {
    if patch.trim().is_empty() {
        return Err(Rejection("the patch is empty".into()));
    }
    // Every patch line must end with a newline (git calls anything else corrupt); a tool-call
    // string usually lacks the last one, which the model clearly meant.
    let text: Cow<'_, str> = if patch.ends_with('\n') {
        Cow::Borrowed(patch)
    } else {
        Cow::Owned(format!("{patch}\n"))
    };
    let sections = match detect(&text) {
        Format::Headerless => {
            let parsed = diffy::Patch::from_str(&text).map_err(malformed)?;
            vec![section_of(&parsed)]
        }
        Format::Git => sections_for(&text, ParseOptions::gitdiff(), target)?,
        Format::Unified => sections_for(&text, ParseOptions::unidiff(), target)?,
    };
    let prepared = PreparedPatch { sections };
    if prepared.hunk_count() == 0 {
        return Err(Rejection("the patch has no @@ hunks".into()));
    }
    for (i, hunk) in prepared.sections.iter().flat_map(|s| &s.hunks).enumerate() {
        if hunk.lines.iter().all(|l| l.kind == LineKind::Context) {
            return Err(Rejection(format!(
                "hunk #{} (@@ -{},{} +{},{} @@) adds and removes nothing",
                i + 1,
                hunk.old_start,
                hunk.old_lines,
                hunk.new_start,
                hunk.new_lines
            )));
        }
    }
    Ok(prepared)
}

fn sections_for(
    text: &str,
    options: ParseOptions,
    target: &Target,
) -> Result<Vec<Section>, Rejection> {
    let mut named: Vec<String> = Vec::new();
    let mut sections = Vec::new();
    for file in PatchSet::parse(text, options) {
        let file = file.map_err(malformed)?;
        let operation = file.operation();
        let names: Vec<&str> = match operation {
            FileOperation::Create(p) | FileOperation::Delete(p) => vec![p.as_ref()],
            FileOperation::Modify { original, modified } => vec![original, modified],
            FileOperation::Rename { from, to } | FileOperation::Copy { from, to } => {
                vec![from, to]
            }
        };
        for n in &names {
            if !named.iter().any(|seen| seen == n) {
                named.push((*n).to_string());
            }
        }
        if !names.iter().any(|n| target.matches(n)) {
            continue;
        }
        let refuse = |what: String| Err(Rejection(format!("{what}; {ONLY_MODIFY}")));
        match operation {
            FileOperation::Create(p) => return refuse(format!("the patch creates {p}")),
            FileOperation::Delete(p) => return refuse(format!("the patch deletes {p}")),
            FileOperation::Rename { from, to } => {
                return refuse(format!("the patch renames {from} to {to}"));
            }
            FileOperation::Copy { from, to } => {
                return refuse(format!("the patch copies {from} to {to}"));
            }
            FileOperation::Modify { original, modified } => {
                if !(target.matches(original) && target.matches(modified)) {
                    return refuse(format!("the patch turns {original} into {modified}"));
                }
            }
        }
        if let (Some(old), Some(new)) = (file.old_mode(), file.new_mode())
            && old != new
        {
            return refuse(format!("the patch changes the mode of {}", target.rel()));
        }
        if matches!(file.new_mode(), Some(FileMode::Symlink | FileMode::Gitlink)) {
            return refuse(format!("the patch makes {} a link", target.rel()));
        }
        match file.patch() {
            PatchKind::Binary(_) => {
                return refuse(format!("the patch for {} is binary", target.rel()));
            }
            PatchKind::Text(patch) => sections.push(section_of(patch)),
        }
    }
    if sections.is_empty() {
        let list = if named.is_empty() {
            "no file".to_string()
        } else {
            named.join(", ")
        };
        return Err(Rejection(format!(
            "the patch does not change {}: it names {list}",
            target.rel()
        )));
    }
    Ok(sections)
}

const ONLY_MODIFY: &str = "apply_patch only changes the content of an existing file";

fn section_of(patch: &diffy::Patch<'_, str>) -> Section {
    let hunks = patch
        .hunks()
        .iter()
        .map(|h| Hunk {
            old_start: h.old_range().start(),
            old_lines: h.old_range().len(),
            new_start: h.new_range().start(),
            new_lines: h.new_range().len(),
            lines: h
                .lines()
                .iter()
                .map(|l| match l {
                    diffy::Line::Context(t) => (LineKind::Context, *t),
                    diffy::Line::Delete(t) => (LineKind::Delete, *t),
                    diffy::Line::Insert(t) => (LineKind::Insert, *t),
                })
                .map(|(kind, text)| HunkLine {
                    kind,
                    text: text.to_string(),
                })
                .collect(),
        })
        .collect();
    Section { hunks }
}

const BOM: &str = "\u{feff}";

/// A prepared patch fitted to the file's content, and the content the backend works on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adapted {
    /// The file's bytes without its byte order mark.
    pub content: Vec<u8>,
    /// Whether the file starts with a UTF-8 byte order mark (restored after applying).
    pub bom: bool,
    pub patch: PreparedPatch,
    /// What was adapted, for the result's messages.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Eol {
    Lf,
    Crlf,
}

impl Eol {
    fn of(text: &str) -> Option<Eol> {
        if text.ends_with("\r\n") {
            Some(Eol::Crlf)
        } else if text.ends_with('\n') {
            Some(Eol::Lf)
        } else {
            None
        }
    }

    fn name(self) -> &'static str {
        match self {
            Eol::Lf => "LF",
            Eol::Crlf => "CRLF",
        }
    }
}

/// The file's line ending when every line ending in it is the same.
fn uniform_eol(content: &[u8]) -> Option<Eol> {
    let (mut lf, mut crlf) = (0usize, 0usize);
    for (i, &b) in content.iter().enumerate() {
        if b == b'\n' {
            if i > 0 && content[i - 1] == b'\r' {
                crlf += 1;
            } else {
                lf += 1;
            }
        }
    }
    match (lf, crlf) {
        (0, 0) => None,
        (_, 0) => Some(Eol::Lf),
        (0, _) => Some(Eol::Crlf),
        _ => None,
    }
}

/// Fits `patch` to `content`: keeps the file's byte order mark and its line endings.
///
/// * A file that starts with a byte order mark is patched without it and gets it back
///   afterwards, so a patch written without the mark applies, and a patch that would drop or
///   move it cannot. Lines of hunks anchored at the top of the file (`-0`/`-1`) lose a leading
///   mark of their own.
/// * When every line of the file ends the same way and the lines the patch expects to find
///   (context and removed lines) all end the other way, as when a model writes an LF patch for
///   a CRLF file, every patch line is converted to the file's ending. A patch whose old side
///   already matches the file is left alone, so `git diff` output applies byte for byte as
///   git would apply it, deliberate mixed endings included. A patch that only adds lines takes
///   the file's ending.
pub fn adapt(mut patch: PreparedPatch, content: &[u8]) -> Adapted {
    let mut notes = Vec::new();
    let bom = content.starts_with(BOM.as_bytes());
    let content = if bom {
        content[BOM.len()..].to_vec()
    } else {
        content.to_vec()
    };
    if bom {
        for hunk in patch.sections.iter_mut().flat_map(|s| s.hunks.iter_mut()) {
            if hunk.old_start <= 1 {
                strip_bom(hunk);
            }
        }
    }

    if let Some(file_eol) = uniform_eol(&content) {
        let old_side = patch
            .sections
            .iter()
            .flat_map(|s| &s.hunks)
            .flat_map(|h| &h.lines)
            .filter(|l| l.is_old())
            .filter_map(|l| Eol::of(&l.text));
        let mut agrees = false;
        let mut contradicts = false;
        for eol in old_side {
            if eol == file_eol {
                agrees = true;
            } else {
                contradicts = true;
            }
        }
        if !agrees {
            let mut converted = 0usize;
            for line in patch
                .sections
                .iter_mut()
                .flat_map(|s| s.hunks.iter_mut())
                .flat_map(|h| h.lines.iter_mut())
                // With no old-side evidence only added lines are converted: they are all the
                // patch has. With contradicting evidence every line is.
                .filter(|l| contradicts || l.kind == LineKind::Insert)
            {
                if let Some(eol) = Eol::of(&line.text)
                    && eol != file_eol
                {
                    let body = match eol {
                        Eol::Crlf => &line.text[..line.text.len() - 2],
                        Eol::Lf => &line.text[..line.text.len() - 1],
                    };
                    line.text = match file_eol {
                        Eol::Crlf => format!("{body}\r\n"),
                        Eol::Lf => format!("{body}\n"),
                    };
                    converted += 1;
                }
            }
            if converted > 0 {
                notes.push(format!(
                    "converted {converted} patch line ending(s) to {} to match the file",
                    file_eol.name()
                ));
            }
        }
    }
    Adapted {
        content,
        bom,
        patch,
        notes,
    }
}

/// Removes a byte order mark from the first old-side and the first new-side line of a hunk
/// anchored at the top of the file.
fn strip_bom(hunk: &mut Hunk) {
    let first_old = hunk.lines.iter().position(HunkLine::is_old);
    let first_new = hunk.lines.iter().position(HunkLine::is_new);
    for index in [first_old, first_new].into_iter().flatten() {
        if let Some(line) = hunk.lines.get_mut(index)
            && let Some(rest) = line.text.strip_prefix(BOM)
        {
            line.text = rest.to_string();
        }
        if first_old == first_new {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn target() -> Target {
        Target::new("designs/plan.yaml", ["/ws/designs/plan.yaml".to_string()])
    }

    /// `Ok(n)`: prepared with `n` hunks; `Err(fragment)`: rejected with a message containing it.
    fn check(patch: &str, expect: Result<usize, &str>) {
        match (prepare(patch, &target()), expect) {
            (Ok(p), Ok(n)) => assert_eq!(p.hunk_count(), n, "{patch}"),
            (Err(Rejection(msg)), Err(fragment)) => {
                assert!(msg.contains(fragment), "{msg:?} lacks {fragment:?}")
            }
            (got, want) => panic!("{patch}\ngot {got:?}, want {want:?}"),
        }
    }

    const HUNK: &str = "@@ -1,2 +1,2 @@\n a\n-b\n+c\n";

    #[test]
    fn names_and_formats() {
        check(
            &format!("--- a/designs/plan.yaml\n+++ b/designs/plan.yaml\n{HUNK}"),
            Ok(1),
        );
        check(
            &format!("--- designs/plan.yaml\n+++ designs/plan.yaml\n{HUNK}"),
            Ok(1),
        );
        check(
            &format!("--- ./designs/plan.yaml\n+++ ./designs/plan.yaml\n{HUNK}"),
            Ok(1),
        );
        check(
            &format!("--- /ws/designs/plan.yaml\n+++ /ws/designs/plan.yaml\n{HUNK}"),
            Ok(1),
        );
        check(
            &format!(
                "diff --git a/designs/plan.yaml b/designs/plan.yaml\nindex 1..2 100644\n--- a/designs/plan.yaml\n+++ b/designs/plan.yaml\n{HUNK}"
            ),
            Ok(1),
        );
        // Bare hunks are for the target; markdown fences around them are ignored.
        check(HUNK, Ok(1));
        check(&format!("```diff\n{HUNK}```\n"), Ok(1));
        // The final newline may be missing.
        check(HUNK.trim_end(), Ok(1));
        // Sections for other files are skipped, not applied.
        check(
            &format!(
                "--- a/other.txt\n+++ b/other.txt\n{HUNK}--- a/designs/plan.yaml\n+++ b/designs/plan.yaml\n{HUNK}"
            ),
            Ok(1),
        );
    }

    #[test]
    fn refusals() {
        check(
            &format!("--- a/plan.yaml\n+++ b/plan.yaml\n{HUNK}"),
            Err("names a/plan.yaml, b/plan.yaml"),
        );
        check("", Err("empty"));
        check("just words\n", Err("no @@ hunks"));
        check("@@ -1,3 +1,3 @@\n a\n-b\n+c\n", Err("malformed"));
        check("@@ -1,1 +1,1 @@\n a\n", Err("adds and removes nothing"));
        check(
            "--- /dev/null\n+++ b/designs/plan.yaml\n@@ -0,0 +1 @@\n+x\n",
            Err("creates"),
        );
        check(
            "--- a/designs/plan.yaml\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n",
            Err("deletes"),
        );
        check(
            &format!("--- a/designs/other.yaml\n+++ b/designs/plan.yaml\n{HUNK}"),
            Err("turns a/designs/other.yaml into b/designs/plan.yaml"),
        );
        check(
            &format!(
                "diff --git a/x.yaml b/designs/plan.yaml\nsimilarity index 90%\nrename from x.yaml\nrename to designs/plan.yaml\n--- a/x.yaml\n+++ b/designs/plan.yaml\n{HUNK}"
            ),
            Err("renames"),
        );
        check(
            &format!(
                "diff --git a/designs/plan.yaml b/designs/plan.yaml\nold mode 100644\nnew mode 100755\n--- a/designs/plan.yaml\n+++ b/designs/plan.yaml\n{HUNK}"
            ),
            Err("mode"),
        );
        check(
            "diff --git a/designs/plan.yaml b/designs/plan.yaml\nindex 1..2 100644\nBinary files a/designs/plan.yaml and b/designs/plan.yaml differ\n",
            Err("binary"),
        );
    }

    #[test]
    fn git_diff_round_trip_with_awkward_names() {
        for rel in [
            "plan.yaml",
            "dir/請求書 2024.yaml",
            "a\"b\\c.txt",
            "tab\there.txt",
        ] {
            let text = "@@ -1,2 +1,3 @@\n a\r\n-b\n+c\n+d\n\\ No newline at end of file\n";
            let prepared = prepare(text, &Target::new(rel, [])).unwrap();
            let written = prepared.to_git_diff(rel);
            let again = prepare(&written, &Target::new(rel, [])).unwrap();
            assert_eq!(again, prepared, "{written}");
        }
    }

    fn lines(p: &PreparedPatch) -> Vec<String> {
        p.sections[0].hunks[0]
            .lines
            .iter()
            .map(|l| l.text.clone())
            .collect()
    }

    fn check_adapt(content: &str, patch: &str, expect_lines: &[&str], expect_bom: bool) {
        let prepared = prepare(patch, &Target::new("f", [])).unwrap();
        let adapted = adapt(prepared, content.as_bytes());
        assert_eq!(lines(&adapted.patch), expect_lines, "{content:?} {patch:?}");
        assert_eq!(adapted.bom, expect_bom);
        assert!(!adapted.content.starts_with(BOM.as_bytes()));
    }

    #[test]
    fn adapt_line_endings_and_bom() {
        let lf_patch = "@@ -1,2 +1,2 @@\n a\n-b\n+c\n";
        let crlf_patch = "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n";
        // An LF patch for a CRLF file takes CRLF, and the other way round.
        check_adapt("a\r\nb\r\n", lf_patch, &["a\r\n", "b\r\n", "c\r\n"], false);
        check_adapt("a\nb\n", crlf_patch, &["a\n", "b\n", "c\n"], false);
        // A patch that already matches the file is left alone, mixed additions included.
        check_adapt(
            "a\r\nb\r\n",
            "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\n",
            &["a\r\n", "b\r\n", "c\n"],
            false,
        );
        // Mixed files and files without line endings give no rule.
        check_adapt("a\r\nb\n", lf_patch, &["a\n", "b\n", "c\n"], false);
        // Pure additions take the file's ending.
        check_adapt("a\r\nb\r\n", "@@ -2,0 +3 @@\n+c\n", &["c\r\n"], false);
        // The byte order mark is taken off the file and off top-anchored hunks.
        check_adapt(
            "\u{feff}a\nb\n",
            "@@ -1,2 +1,2 @@\n \u{feff}a\n-b\n+c\n",
            &["a\n", "b\n", "c\n"],
            true,
        );
        check_adapt(
            "\u{feff}a\nb\n",
            "@@ -1 +1 @@\n-\u{feff}a\n+\u{feff}z\n",
            &["a\n", "z\n"],
            true,
        );
        check_adapt("\u{feff}a\nb\n", lf_patch, &["a\n", "b\n", "c\n"], true);
    }
}
