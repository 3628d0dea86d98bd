//! The native applier: `git apply --whitespace=fix` re-implemented for UTF-8 text, so a PC
//! without git applies a patch exactly as git would.
//!
//! It is a port of the parts of git's `apply.c` a one-file text patch reaches, decision by
//! decision, because the conformance test holds it to byte-identical output:
//!
//! * a hunk is searched from the line its `+new_start` names, then one line further, one line
//!   back, two further, two back, … (hunk offsets), never over lines an earlier hunk produced;
//! * a hunk that starts at old line 0 or 1 must match at the top of the file, and a hunk without
//!   trailing context must match at its end (this is also why git places a zero-context
//!   insertion at the end of the file);
//! * lines match byte for byte, or else after whitespace correction of both sides, in which
//!   case the corrected context is what gets written;
//! * added lines get their whitespace corrected, and blank lines a hunk adds at the end of the
//!   file are dropped (`blank-at-eof`).
//!
//! Context is never reduced (git's default), so a hunk either matches with all its context or
//! the patch fails. The work is bounded: line comparisons and line moves are counted against a
//! budget, so a hostile patch fails with a clear message instead of running for hours.

use crate::patch::{Hunk, HunkLine, LineKind, PreparedPatch};
use crate::whitespace::{self, Rule};

/// Line comparisons plus line moves one apply may spend (about a second of work); realistic
/// patches, even on 10 MB files, use a small fraction of it.
pub const DEFAULT_WORK_BUDGET: u64 = 100_000_000;

/// What the native applier did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every hunk applied; `content` is the new file.
    Applied {
        content: Vec<u8>,
        messages: Vec<String>,
    },
    /// Nothing applied; `message` says why, in git's words where git has them.
    Failed { message: String },
}

/// Applies `patch` to `content` (the file called `name` in messages) with at most `budget`
/// units of work.
pub fn apply(content: &[u8], patch: &PreparedPatch, name: &str, budget: u64) -> Outcome {
    if let Err(e) = std::str::from_utf8(content) {
        return Outcome::Failed {
            message: format!(
                "error: {name}: the file is not UTF-8 text (invalid byte sequence near byte {}); \
                 the native applier edits UTF-8 text only",
                e.valid_up_to()
            ),
        };
    }
    let mut budget = Budget {
        total: budget,
        left: budget,
    };
    let fix_added = whitespace_errors(patch);
    let mut image = Image::new(content);
    let mut messages = Vec::new();
    let mut fixed_lines = 0usize;
    let mut nth = 0usize;
    for section in &patch.sections {
        // Git builds a fresh image for each section from the previous result, so lines patched
        // by an earlier section may be matched again.
        image.unmark();
        let rule = section_rule(&section.hunks);
        for hunk in &section.hunks {
            nth += 1;
            match apply_hunk(&mut image, hunk, rule, fix_added, nth, &mut budget) {
                Ok(Some(report)) => {
                    fixed_lines += report.fixed_lines;
                    messages.extend(report.notes);
                }
                Ok(None) => {
                    return Outcome::Failed {
                        message: format!(
                            "error: patch failed: {name}:{}\nerror: {name}: patch does not apply",
                            hunk.old_start
                        ),
                    };
                }
                Err(Exhausted) => {
                    return Outcome::Failed {
                        message: format!(
                            "error: {name}: gave up at hunk #{nth} after {} units of work; \
                             split the patch or give its hunks more distinctive context",
                            budget.total
                        ),
                    };
                }
            }
        }
    }
    if fixed_lines > 0 {
        messages.push(format!(
            "{fixed_lines} line{} applied after fixing whitespace errors",
            if fixed_lines == 1 { "" } else { "s" }
        ));
    }
    Outcome::Applied {
        content: image.into_bytes(),
        messages,
    }
}

#[derive(Debug)]
struct Exhausted;

struct Budget {
    total: u64,
    left: u64,
}

impl Budget {
    fn spend(&mut self, units: u64) -> Result<(), Exhausted> {
        match self.left.checked_sub(units) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => {
                self.left = 0;
                Err(Exhausted)
            }
        }
    }
}

/// A patch line as git reads it: with a newline even when `\ No newline at end of file` follows,
/// which matters to the CRLF and whitespace checks below.
fn raw_line(line: &HunkLine) -> Vec<u8> {
    let mut bytes = line.text.as_bytes().to_vec();
    if !line.has_newline() {
        bytes.push(b'\n');
    }
    bytes
}

fn ends_crlf(bytes: &[u8]) -> bool {
    bytes.ends_with(b"\r\n")
}

/// The rule set of one section: `cr-at-eol` once any context or removed line ends in CRLF.
fn section_rule(hunks: &[Hunk]) -> Rule {
    let cr_at_eol = hunks
        .iter()
        .flat_map(|h| &h.lines)
        .any(|l| l.kind != LineKind::Insert && ends_crlf(&raw_line(l)));
    Rule { cr_at_eol }
}

/// Whether git corrects added lines at all: only when some context or added line of the patch
/// breaks a rule, judged with the rule set as it stands at that line while the patch is read.
fn whitespace_errors(patch: &PreparedPatch) -> bool {
    for section in &patch.sections {
        let mut rule = Rule::default();
        for line in section.hunks.iter().flat_map(|h| &h.lines) {
            let raw = raw_line(line);
            if line.kind != LineKind::Insert && ends_crlf(&raw) {
                rule.cr_at_eol = true;
            }
            if line.kind != LineKind::Delete && whitespace::has_error(&raw, rule) {
                return true;
            }
        }
    }
    false
}

#[derive(Clone, Copy)]
struct Line {
    start: usize,
    len: usize,
    hash: u32,
    patched: bool,
}

/// The file as lines, in a gap buffer: lines before the gap in `front`, the rest reversed in
/// `back`. Hunks mostly arrive in file order, so moving the gap from one to the next costs the
/// distance between them rather than the rest of the file, as a plain vector splice would.
struct Image {
    arena: Vec<u8>,
    front: Vec<Line>,
    back: Vec<Line>,
}

impl Image {
    fn new(content: &[u8]) -> Image {
        let mut front = Vec::new();
        let mut start = 0;
        while start < content.len() {
            let end = content[start..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(content.len(), |i| start + i + 1);
            front.push(Line {
                start,
                len: end - start,
                hash: whitespace::line_hash(&content[start..end]),
                patched: false,
            });
            start = end;
        }
        Image {
            arena: content.to_vec(),
            front,
            back: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.front.len() + self.back.len()
    }

    fn line(&self, i: usize) -> Option<&Line> {
        match i.checked_sub(self.front.len()) {
            None => self.front.get(i),
            Some(j) => self
                .back
                .len()
                .checked_sub(j + 1)
                .and_then(|k| self.back.get(k)),
        }
    }

    fn bytes(&self, line: &Line) -> &[u8] {
        self.arena
            .get(line.start..line.start + line.len)
            .unwrap_or_default()
    }

    fn seek(&mut self, pos: usize, budget: &mut Budget) -> Result<(), Exhausted> {
        budget.spend(pos.abs_diff(self.front.len()) as u64)?;
        while self.front.len() > pos {
            match self.front.pop() {
                Some(l) => self.back.push(l),
                None => break,
            }
        }
        while self.front.len() < pos {
            match self.back.pop() {
                Some(l) => self.front.push(l),
                None => break,
            }
        }
        Ok(())
    }

    /// Replaces `remove` lines at `pos` with `lines`, marked as patched.
    fn replace(
        &mut self,
        pos: usize,
        remove: usize,
        lines: &[PLine],
        budget: &mut Budget,
    ) -> Result<(), Exhausted> {
        self.seek(pos, budget)?;
        budget.spend((remove + lines.len()) as u64)?;
        for _ in 0..remove {
            self.back.pop();
        }
        for line in lines {
            let start = self.arena.len();
            self.arena.extend_from_slice(&line.bytes);
            self.front.push(Line {
                start,
                len: line.bytes.len(),
                hash: line.hash,
                patched: true,
            });
        }
        Ok(())
    }

    fn unmark(&mut self) {
        for line in self.front.iter_mut().chain(self.back.iter_mut()) {
            line.patched = false;
        }
    }

    fn into_bytes(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.arena.len());
        for line in self.front.iter().chain(self.back.iter().rev()) {
            out.extend_from_slice(self.bytes(line));
        }
        out
    }
}

/// A line of a hunk's preimage or postimage; `common` marks context lines.
#[derive(Clone)]
struct PLine {
    bytes: Vec<u8>,
    hash: u32,
    common: bool,
}

impl PLine {
    fn new(bytes: Vec<u8>, common: bool) -> PLine {
        PLine {
            hash: whitespace::line_hash(&bytes),
            bytes,
            common,
        }
    }
}

struct HunkReport {
    fixed_lines: usize,
    notes: Vec<String>,
}

/// Applies one hunk (git's `apply_one_fragment`); `Ok(None)` when it matches nowhere.
fn apply_hunk(
    image: &mut Image,
    hunk: &Hunk,
    rule: Rule,
    fix_added: bool,
    nth: usize,
    budget: &mut Budget,
) -> Result<Option<HunkReport>, Exhausted> {
    let mut pre = Vec::new();
    let mut post = Vec::new();
    let mut fixed_lines = 0;
    let mut new_blank_at_end = 0usize;
    for line in &hunk.lines {
        let text = line.text.as_bytes();
        let mut added_blank = false;
        let mut blank_context = false;
        match line.kind {
            LineKind::Context => {
                blank_context = !text.is_empty() && whitespace::is_blank(text);
                pre.push(PLine::new(text.to_vec(), true));
                post.push(PLine::new(text.to_vec(), true));
            }
            LineKind::Delete => pre.push(PLine::new(text.to_vec(), false)),
            LineKind::Insert => {
                let bytes = if fix_added {
                    let (fixed, counted) = whitespace::fix(text, rule);
                    fixed_lines += usize::from(counted);
                    fixed
                } else {
                    text.to_vec()
                };
                post.push(PLine::new(bytes, false));
                added_blank = whitespace::is_blank(text);
            }
        }
        if added_blank {
            new_blank_at_end += 1;
        } else if !blank_context {
            new_blank_at_end = 0;
        }
        // Git reads the `\ No newline at end of file` marker as one more hunk line, which
        // ends any run of blank lines.
        if !line.has_newline() {
            new_blank_at_end = 0;
        }
    }
    let last_change = hunk.lines.iter().rposition(|l| l.kind != LineKind::Context);
    let trailing = match last_change {
        Some(i) => hunk.lines.len() - 1 - i,
        None => hunk.lines.len(),
    };
    let match_beginning = hunk.old_start <= 1;
    let match_end = trailing == 0;
    let pos = hunk.new_start.saturating_sub(1);

    let Some((at, fixed_pre)) =
        find_pos(image, &pre, pos, rule, match_beginning, match_end, budget)?
    else {
        return Ok(None);
    };
    let mut notes = Vec::new();
    if let Some(fixed) = fixed_pre {
        use_fixed_context(&mut pre, &mut post, fixed);
        notes.push(format!(
            "hunk #{nth} matched only after fixing whitespace in its context lines"
        ));
    }
    if at != pos {
        let offset = at as i64 - pos as i64;
        notes.push(format!(
            "hunk #{nth} applied at line {} (offset {offset} line{})",
            at + 1,
            if offset.abs() == 1 { "" } else { "s" }
        ));
    }
    let n = image.len();
    if new_blank_at_end > 0 && pre.len() + at >= n {
        let keep = post.len().saturating_sub(new_blank_at_end);
        post.truncate(keep);
        notes.push(format!(
            "hunk #{nth}: dropped {new_blank_at_end} blank line(s) added at the end of the file"
        ));
    }
    let remove = pre.len().min(n - at);
    image.replace(at, remove, &post, budget)?;
    Ok(Some(HunkReport { fixed_lines, notes }))
}

/// After a match that needed whitespace correction, the context is written in its corrected
/// form, as git does (`update_pre_post_images`): the preimage becomes the corrected lines and
/// each context line of the postimage takes the next corrected context line.
fn use_fixed_context(pre: &mut Vec<PLine>, post: &mut Vec<PLine>, mut fixed: Vec<Vec<u8>>) {
    // Git re-splits the corrected text into lines, so an incomplete last line that correction
    // emptied disappears.
    if fixed.last().is_some_and(Vec::is_empty) {
        fixed.pop();
    }
    let new_pre: Vec<PLine> = fixed
        .into_iter()
        .zip(pre.iter())
        .map(|(bytes, old)| PLine::new(bytes, old.common))
        .collect();
    let mut common = new_pre.iter().filter(|l| l.common);
    let mut new_post = Vec::with_capacity(post.len());
    for line in post.drain(..) {
        if !line.common {
            new_post.push(line);
        } else if let Some(fixed) = common.next() {
            new_post.push(fixed.clone());
        }
    }
    *post = new_post;
    *pre = new_pre;
}

type Found = Option<(usize, Option<Vec<Vec<u8>>>)>;

/// Where the hunk applies (git's `find_pos`): positions from `line` outwards, one further,
/// one back, alternately, within the range the anchoring allows.
fn find_pos(
    image: &Image,
    pre: &[PLine],
    line: usize,
    rule: Rule,
    match_beginning: bool,
    match_end: bool,
    budget: &mut Budget,
) -> Result<Found, Exhausted> {
    let n = image.len();
    let m = pre.len();
    let (lo, hi, start) = if match_beginning {
        (0, 0, 0)
    } else if match_end {
        // Git starts at n - m, or at n when the preimage is longer than the file.
        (n.saturating_sub(m), n, n.checked_sub(m).unwrap_or(n))
    } else {
        (0, n, line.min(n))
    };
    let anchors = Anchors {
        beginning: match_beginning,
        end: match_end,
    };
    if let Some(found) = match_at(image, pre, start, rule, anchors, budget)? {
        return Ok(Some((start, found)));
    }
    let (mut forward, mut backward) = (start, start);
    let mut forward_turn = true;
    loop {
        let can_forward = forward < hi;
        let can_backward = backward > lo;
        let next = match (can_forward, can_backward) {
            (false, false) => return Ok(None),
            (true, false) => {
                forward += 1;
                forward
            }
            (false, true) => {
                backward -= 1;
                backward
            }
            (true, true) if forward_turn => {
                forward += 1;
                forward
            }
            (true, true) => {
                backward -= 1;
                backward
            }
        };
        forward_turn = !forward_turn;
        budget.spend(1)?;
        if let Some(found) = match_at(image, pre, next, rule, anchors, budget)? {
            return Ok(Some((next, found)));
        }
    }
}

#[derive(Clone, Copy)]
struct Anchors {
    beginning: bool,
    end: bool,
}

/// Whether the preimage matches at line `at` (git's `match_fragment`): `Some(None)` for a byte
/// exact match, `Some(Some(corrected preimage))` for a match after whitespace correction.
fn match_at(
    image: &Image,
    pre: &[PLine],
    at: usize,
    rule: Rule,
    anchors: Anchors,
    budget: &mut Budget,
) -> Result<Option<Option<Vec<Vec<u8>>>>, Exhausted> {
    let n = image.len();
    let m = pre.len();
    let Some(room) = n.checked_sub(at) else {
        return Ok(None);
    };
    // The part of the preimage that falls inside the file; the rest (only possible because
    // blank-at-eof correction may have removed trailing blank lines) must be blank.
    let limit = if m <= room {
        if anchors.end && m != room {
            return Ok(None);
        }
        m
    } else {
        room
    };
    if anchors.beginning && at != 0 {
        return Ok(None);
    }
    let mut lines = Vec::with_capacity(limit);
    for (i, p) in pre.iter().take(limit).enumerate() {
        budget.spend(1)?;
        match image.line(at + i) {
            Some(l) if !l.patched && l.hash == p.hash => lines.push(*l),
            _ => return Ok(None),
        }
    }
    if limit == m {
        budget.spend(m as u64)?;
        if lines
            .iter()
            .zip(pre)
            .all(|(l, p)| image.bytes(l) == p.bytes.as_slice())
        {
            return Ok(Some(None));
        }
    } else if pre
        .iter()
        .take(limit)
        .all(|p| whitespace::is_blank(&p.bytes))
    {
        return Ok(None);
    }

    let mut fixed = Vec::with_capacity(m);
    for (l, p) in lines.iter().zip(pre) {
        budget.spend(1)?;
        let (want, _) = whitespace::fix(&p.bytes, rule);
        let (have, _) = whitespace::fix(image.bytes(l), rule);
        if want != have {
            return Ok(None);
        }
        fixed.push(want);
    }
    for p in pre.iter().skip(limit) {
        let (want, _) = whitespace::fix(&p.bytes, rule);
        if !whitespace::is_blank(&want) {
            return Ok(None);
        }
        fixed.push(want);
    }
    Ok(Some(Some(fixed)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::patch::{Target, prepare};

    /// Applies a bare-hunk patch to `content`; `Ok(text)` is the expected result, `Err(part)`
    /// a fragment of the expected failure message.
    fn check(content: &str, patch: &str, expect: Result<&str, &str>) {
        let prepared = prepare(patch, &Target::new("f.txt", [])).unwrap();
        let outcome = apply(content.as_bytes(), &prepared, "f.txt", DEFAULT_WORK_BUDGET);
        match (outcome, expect) {
            (Outcome::Applied { content: got, .. }, Ok(want)) => {
                assert_eq!(String::from_utf8(got).unwrap(), want, "{patch}")
            }
            (Outcome::Failed { message }, Err(part)) => {
                assert!(message.contains(part), "{message:?} lacks {part:?}")
            }
            (got, want) => panic!("{patch}\ngot {got:?}\nwant {want:?}"),
        }
    }

    const FILE: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n";

    #[test]
    fn exact_and_offset() {
        check(
            FILE,
            "@@ -2,3 +2,3 @@\n two\n-three\n+3\n four\n",
            Ok("one\ntwo\n3\nfour\nfive\nsix\nseven\n"),
        );
        // The header says line 5, the context is at line 2: found by searching.
        check(
            FILE,
            "@@ -5,3 +5,3 @@\n two\n-three\n+3\n four\n",
            Ok("one\ntwo\n3\nfour\nfive\nsix\nseven\n"),
        );
        check(
            FILE,
            "@@ -2,3 +2,3 @@\n two\n-tree\n+3\n four\n",
            Err("patch failed: f.txt:2"),
        );
    }

    #[test]
    fn anchoring() {
        // Leading hunks anchor at the top, context-free tails at the end.
        check(
            FILE,
            "@@ -1,2 +1,3 @@\n+zero\n one\n two\n",
            Ok("zero\none\ntwo\nthree\nfour\nfive\nsix\nseven\n"),
        );
        check(
            FILE,
            "@@ -1,2 +1,3 @@\n+zero\n two\n three\n",
            Err("patch does not apply"),
        );
        check(
            FILE,
            "@@ -6,2 +6,3 @@\n six\n seven\n+eight\n",
            Ok("one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n"),
        );
        check(
            FILE,
            "@@ -5,2 +5,3 @@\n five\n six\n+6.5\n",
            Err("patch does not apply"),
        );
        check(
            FILE,
            "@@ -5,3 +5,4 @@\n five\n six\n+6.5\n seven\n",
            Ok("one\ntwo\nthree\nfour\nfive\nsix\n6.5\nseven\n"),
        );
        // Like git, a zero-context insertion lands at the end of the file.
        check(
            FILE,
            "@@ -3,0 +4 @@\n+new\n",
            Ok("one\ntwo\nthree\nfour\nfive\nsix\nseven\nnew\n"),
        );
    }

    #[test]
    fn whitespace_fix() {
        check(
            "a\nb\n",
            "@@ -1,2 +1,3 @@\n a\n+added  \t\n b\n",
            Ok("a\nadded\nb\n"),
        );
        // Context that differs only in whitespace matches, and is written corrected.
        check("a  \nb\n", "@@ -1,2 +1,3 @@\n a\n+x\n b\n", Ok("a\nx\nb\n"));
        // Blank lines added at the end of the file are dropped.
        check("a\nb\n", "@@ -1,2 +1,4 @@\n a\n b\n+\n+\n", Ok("a\nb\n"));
        check(
            "a\nb\n",
            "@@ -1,2 +1,4 @@\n a\n b\n+\n+c\n",
            Ok("a\nb\n\nc\n"),
        );
        // Without any whitespace error in the patch, nothing is corrected.
        check("a\nb\n", "@@ -1,2 +1,3 @@\n a\n+x\n b\n", Ok("a\nx\nb\n"));
    }

    #[test]
    fn crlf_and_no_newline() {
        check(
            "a\r\nb\r\n",
            "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c  \r\n",
            Ok("a\r\nc\r\n"),
        );
        check(
            "a\nb",
            "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n",
            Ok("a\nc\n"),
        );
        check(
            "a\nb\n",
            "@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n",
            Ok("a\nc"),
        );
        check(
            "a\nb",
            "@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
            Err("patch does not apply"),
        );
    }

    #[test]
    fn later_hunks_never_match_patched_lines() {
        // The second hunk would match the line the first one wrote, at the end of the file.
        check(
            "x\ny\nx\n",
            "@@ -3 +3 @@\n-x\n+q\n@@ -5 +5 @@\n-q\n+r\n",
            Err("patch does not apply"),
        );
        check("x\ny\nx\n", "@@ -3 +3 @@\n-x\n+q\n", Ok("x\ny\nq\n"));
    }

    #[test]
    fn refuses_non_utf8_and_runaway_work() {
        let prepared = prepare("@@ -1 +1 @@\n-a\n+b\n", &Target::new("f", [])).unwrap();
        match apply(b"\x82\xa0\n", &prepared, "f", DEFAULT_WORK_BUDGET) {
            Outcome::Failed { message } => assert!(message.contains("not UTF-8"), "{message}"),
            other => panic!("{other:?}"),
        }
        let file = "x\n".repeat(5_000);
        let hunk = format!(
            "@@ -2,{0} +2,{0} @@\n{1}-y\n+z\n w\n",
            2_002,
            " x\n".repeat(2_000)
        );
        let prepared = prepare(&hunk, &Target::new("f", [])).unwrap();
        match apply(file.as_bytes(), &prepared, "f", 1_000_000) {
            Outcome::Failed { message } => assert!(message.contains("gave up"), "{message}"),
            other => panic!("{other:?}"),
        }
    }
}
