//! Conformance: on real `git diff` output the native applier writes exactly what git writes.
//!
//! A repository is built in a temp dir with a scripted history of realistic edits to several
//! kinds of files: a plan YAML seeded from the shipped catalog, the shared invoices CSV, a
//! Japanese CRLF text, a file with a byte order mark, a file without a final newline, a file
//! whose edits break whitespace rules, and a file that starts empty. Edits replace, insert
//! (also at the start and the end), delete, move and duplicate lines and toggle the final
//! newline, several per commit, so diffs have several hunks. For every commit and changed file
//! the diff (with 3, 1 and 0 lines of context, and reversed) is applied to the parent version,
//! and the 3-line diff also to the grandparent version and to the parent with lines inserted at
//! the top (offsets and failures). Each case runs
//! through the pipeline with the native backend and with the git backend, and through a plain
//! `git apply --whitespace=fix` of the raw diff; all three must agree byte for byte.

use std::path::Path;
use std::process::Stdio;

use super::{fixtures, git, git_command, put, run_kind, workspace};
use keiri_diff::BackendKind;

/// Deterministic pseudo-random numbers (xorshift64*), so the history is the same every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Yaml,
    Csv,
    Japanese,
    Whitespace,
    Plain,
}

struct Doc {
    path: &'static str,
    lines: Vec<String>,
    crlf: bool,
    bom: bool,
    final_newline: bool,
    style: Style,
}

impl Doc {
    fn new(path: &'static str, text: &str, style: Style) -> Doc {
        Doc {
            path,
            lines: text.lines().map(str::to_string).collect(),
            crlf: false,
            bom: false,
            final_newline: true,
            style,
        }
    }

    fn render(&self) -> Vec<u8> {
        let mut out = String::new();
        if self.bom {
            out.push('\u{feff}');
        }
        let eol = if self.crlf { "\r\n" } else { "\n" };
        for (i, line) in self.lines.iter().enumerate() {
            out.push_str(line);
            if i + 1 < self.lines.len() || self.final_newline {
                out.push_str(eol);
            }
        }
        out.into_bytes()
    }

    fn new_line(&self, rng: &mut Rng, n: usize) -> String {
        match self.style {
            Style::Yaml => {
                let key = rng.pick(&[
                    "id", "block", "path", "encoding", "rows", "out_name", "when",
                ]);
                let value = rng.pick(&[
                    "csv.read",
                    "cp932",
                    "${read.rows}",
                    "請求書_{n}.csv",
                    "amount > 1000",
                    "matching.duplicate_invoices",
                    "'承認ステップ'",
                ]);
                let indent = rng.pick(&["", "  ", "    ", "      "]);
                format!("{indent}{key}: {}", value.replace("{n}", &n.to_string()))
            }
            Style::Csv => format!(
                "V{:03},{},INV-{},{},{}",
                rng.below(40),
                rng.pick(&["Acme Corp", "Globex Inc", "株式会社サンプル", "Initech"]),
                1000 + n,
                rng.below(100_000),
                rng.pick(&[
                    "Office supplies",
                    "Consulting",
                    "交通費 精算",
                    "Hosting, annual"
                ]),
            ),
            Style::Japanese => format!(
                "第{n}回 経理定例: {}を確認（担当: {}）",
                rng.pick(&["請求書", "支払予定", "仕訳", "月次決算", "経費精算"]),
                rng.pick(&["佐藤", "鈴木", "高橋", "田中"]),
            ),
            Style::Whitespace => rng
                .pick(&[
                    "\tcode {n}",
                    "    spaced {n}",
                    "trailing {n}  ",
                    "tab at end {n}\t",
                    " \tspace before tab {n}",
                    "        \tmixed indent {n}",
                    "",
                    "   ",
                    "plain {n}",
                ])
                .replace("{n}", &n.to_string()),
            Style::Plain => format!(
                "line {n}: {}",
                rng.pick(&["alpha", "beta", "gamma", "delta"])
            ),
        }
    }

    /// One random edit.
    fn mutate(&mut self, rng: &mut Rng, counter: &mut usize) {
        *counter += 1;
        let n = self.lines.len();
        let line = self.new_line(rng, *counter);
        match rng.below(11) {
            0..=2 if n > 0 => {
                let i = rng.below(n);
                self.lines[i] = line;
            }
            3..=5 => {
                let at = match rng.below(5) {
                    0 => 0,
                    1 => n,
                    _ => rng.below(n + 1),
                };
                let count = 1 + rng.below(3);
                for k in 0..count {
                    let l = if k == 0 {
                        line.clone()
                    } else {
                        self.new_line(rng, *counter * 10 + k)
                    };
                    self.lines.insert(at + k, l);
                }
            }
            6..=7 if n > 0 => {
                let i = rng.below(n);
                let count = 1 + rng.below(3.min(n - i));
                self.lines.drain(i..i + count);
            }
            8 if n > 1 => {
                let from = rng.below(n);
                let moved = self.lines.remove(from);
                let to = rng.below(n);
                self.lines.insert(to, moved);
            }
            9 if n > 0 => {
                // A duplicate nearby makes contexts ambiguous, which exercises the search.
                let i = rng.below(n);
                let copy = self.lines[i].clone();
                self.lines.insert((i + 2).min(n), copy);
            }
            10 if matches!(self.style, Style::Plain | Style::Whitespace) => {
                self.final_newline = !self.final_newline;
            }
            _ if self.style == Style::Whitespace => {
                // Blank lines at the end: git's blank-at-eof correction drops them.
                self.lines.push(String::new());
                self.lines.push("  ".to_string());
            }
            _ => self.lines.push(line),
        }
    }
}

fn seed_docs() -> Vec<Doc> {
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs/ai");
    let mut specs: Vec<_> = std::fs::read_dir(&catalog)
        .unwrap_or_else(|e| panic!("the catalog {} is needed: {e}", catalog.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    specs.sort();
    let plan = std::fs::read_to_string(&specs[0]).unwrap();
    let invoices = std::fs::read_to_string(fixtures().join("accounting/invoices.csv")).unwrap();
    let mut rng = Rng(7);
    let mut japanese = Doc::new("notes/議事録.txt", "", Style::Japanese);
    japanese.crlf = true;
    japanese.lines = (0..24).map(|n| japanese.new_line(&mut rng, n)).collect();
    let mut bom = Doc::new("templates/承認フロー.yaml", &plan, Style::Yaml);
    bom.bom = true;
    let mut bom_crlf = Doc::new("templates/bom_crlf.txt", "", Style::Japanese);
    bom_crlf.bom = true;
    bom_crlf.crlf = true;
    bom_crlf.lines = (100..112).map(|n| bom_crlf.new_line(&mut rng, n)).collect();
    let mut ws = Doc::new("src/ws.txt", "", Style::Whitespace);
    ws.lines = (0..20).map(|n| format!("\tstatement {n};")).collect();
    let mut noeol = Doc::new("noeol.txt", "", Style::Plain);
    noeol.lines = (0..15).map(|n| noeol.new_line(&mut rng, n)).collect();
    noeol.final_newline = false;
    vec![
        Doc::new("designs/plan.yaml", &plan, Style::Yaml),
        Doc::new("data/invoices.csv", &invoices, Style::Csv),
        japanese,
        bom,
        bom_crlf,
        ws,
        noeol,
        Doc::new("empty.txt", "", Style::Plain),
    ]
}

const COMMITS: usize = 36;

/// Builds the repository and returns the commit ids, oldest first.
fn build_history(repo: &Path) -> Vec<String> {
    git(repo, &["init", "-q"]);
    for (key, value) in [
        ("user.name", "Keiri Test"),
        ("user.email", "test@example.invalid"),
        ("core.autocrlf", "false"),
        ("core.safecrlf", "false"),
        ("core.quotepath", "false"),
        ("commit.gpgsign", "false"),
    ] {
        git(repo, &["config", key, value]);
    }
    let mut docs = seed_docs();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut counter = 0usize;
    for round in 0..=COMMITS {
        if round > 0 {
            // Two or three files per commit, every file edited regularly.
            let first = round % docs.len();
            let mut chosen = vec![first, rng.below(docs.len())];
            if rng.below(2) == 0 {
                chosen.push(rng.below(docs.len()));
            }
            for i in chosen {
                for _ in 0..1 + rng.below(4) {
                    docs[i].mutate(&mut rng, &mut counter);
                }
            }
        }
        for doc in &docs {
            put(&repo.join(doc.path), &doc.render());
        }
        git(repo, &["add", "-A"]);
        git(
            repo,
            &[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                &format!("edit {round}"),
            ],
        );
    }
    String::from_utf8(git(repo, &["rev-list", "--reverse", "HEAD"]))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn show(repo: &Path, commit: &str, path: &str) -> Option<Vec<u8>> {
    let out = git_command(repo)
        .args(["show", &format!("{commit}:{path}")])
        .stderr(Stdio::null())
        .output()
        .unwrap();
    out.status.success().then_some(out.stdout)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Parent,
    Reverse,
    /// The diff applied to an older version of the file.
    Drift,
    /// The diff applied to its base with lines inserted at the top: every hunk has an offset.
    Shifted,
}

struct Case {
    label: String,
    path: String,
    base: Vec<u8>,
    patch: String,
    /// What git itself recorded, for cases applied to the version the diff was made from.
    child: Option<Vec<u8>>,
    kind: Kind,
    context: usize,
}

fn cases(repo: &Path, commits: &[String]) -> Vec<Case> {
    let mut cases = Vec::new();
    for (i, pair) in commits.windows(2).enumerate() {
        let (parent, child) = (&pair[0], &pair[1]);
        let names = git(repo, &["diff", "--name-only", "-z", parent, child]);
        for path in names.split(|&b| b == 0).filter(|p| !p.is_empty()) {
            let path = String::from_utf8(path.to_vec()).unwrap();
            let (Some(before), Some(after)) = (show(repo, parent, &path), show(repo, child, &path))
            else {
                continue;
            };
            let diff = |extra: &[&str]| {
                let mut args = vec!["diff", "--no-color", "--no-ext-diff"];
                args.extend_from_slice(extra);
                args.extend_from_slice(&[parent.as_str(), child.as_str(), "--", path.as_str()]);
                String::from_utf8(git(repo, &args)).unwrap()
            };
            cases.push(Case {
                label: format!("commit {} {path} onto a shifted base", i + 1),
                path: path.clone(),
                base: shifted(&before),
                patch: diff(&[]),
                child: None,
                kind: Kind::Shifted,
                context: 3,
            });
            for context in [3, 1, 0] {
                cases.push(Case {
                    label: format!("commit {} {path} -U{context}", i + 1),
                    path: path.clone(),
                    base: before.clone(),
                    patch: diff(&[&format!("-U{context}")]),
                    child: Some(after.clone()),
                    kind: Kind::Parent,
                    context,
                });
            }
            cases.push(Case {
                label: format!("commit {} {path} reversed", i + 1),
                path: path.clone(),
                base: after.clone(),
                patch: diff(&["-R"]),
                child: Some(before.clone()),
                kind: Kind::Reverse,
                context: 3,
            });
            if i > 0
                && let Some(older) = show(repo, &commits[i - 1], &path)
                && older != before
            {
                cases.push(Case {
                    label: format!("commit {} {path} onto the grandparent", i + 1),
                    path: path.clone(),
                    base: older,
                    patch: diff(&[]),
                    child: None,
                    kind: Kind::Drift,
                    context: 3,
                });
            }
        }
    }
    cases
}

/// `base` with three lines inserted at the top (after a byte order mark), in its line ending.
fn shifted(base: &[u8]) -> Vec<u8> {
    let bom: &[u8] = b"\xef\xbb\xbf";
    let (mark, rest) = match base.strip_prefix(bom) {
        Some(rest) => (bom, rest),
        None => (&b""[..], base),
    };
    let eol = if base.windows(2).any(|w| w == b"\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut out = mark.to_vec();
    for n in 0..3 {
        out.extend_from_slice(format!("# inserted above {n}{eol}").as_bytes());
    }
    out.extend_from_slice(rest);
    out
}

/// `git apply --whitespace=fix` of the raw diff in a plain directory: `Some(result)` or `None`
/// when git refuses.
fn raw_git_apply(case: &Case) -> Option<Vec<u8>> {
    let dir = workspace(&case.path, &case.base);
    let root = dir.path().canonicalize().unwrap();
    let mut child = git_command(&root)
        .args(["apply", "--whitespace=fix", "-"])
        .env("GIT_CEILING_DIRECTORIES", root.parent().unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(case.patch.as_bytes())
            .unwrap();
    }
    let status = child.wait().unwrap();
    status
        .success()
        .then(|| std::fs::read(root.join(&case.path)).unwrap())
}

/// The result of one backend through the pipeline: the written file, or the error code.
fn through_pipeline(case: &Case, kind: BackendKind) -> Result<Vec<u8>, String> {
    let ws = workspace(&case.path, &case.base);
    match run_kind(ws.path(), &case.path, &case.patch, kind) {
        Ok(applied) => {
            let on_disk = std::fs::read(ws.path().join(&case.path)).unwrap();
            assert_eq!(on_disk, applied.after, "{}: written bytes", case.label);
            Ok(on_disk)
        }
        Err(e) => Err(format!("{}: {e}", e.code())),
    }
}

fn show_bytes(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).escape_debug().to_string()
}

#[test]
fn native_and_git_write_the_same_bytes_over_a_scripted_history() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let repo = tempfile::tempdir().unwrap();
    let commits = build_history(repo.path());
    assert_eq!(commits.len(), COMMITS + 1);
    let cases = cases(repo.path(), &commits);

    let mut applied_parent = 0;
    let mut equal_child = 0;
    let mut drift_applied = 0;
    let mut drift_failed = 0;
    let mut whitespace_fixed = 0;
    for case in &cases {
        let native = through_pipeline(case, BackendKind::Native);
        let git = through_pipeline(case, BackendKind::Git);
        let raw = raw_git_apply(case);
        let context = || {
            format!(
                "{}\n--- base ---\n{}\n--- patch ---\n{}",
                case.label,
                show_bytes(&case.base),
                case.patch
            )
        };
        match (&native, &git) {
            (Ok(n), Ok(g)) => assert!(
                n == g,
                "native and git differ: {}\nnative: {}\ngit:    {}",
                context(),
                show_bytes(n),
                show_bytes(g)
            ),
            (Err(n), Err(g)) => {
                assert!(n.starts_with("APPLY_FAILED"), "{n}\n{}", context());
                assert!(g.starts_with("APPLY_FAILED"), "{g}\n{}", context());
            }
            _ => panic!("native {native:?} but git {git:?}: {}", context()),
        }
        // A byte order mark is kept out of the matching on purpose (a hunk written without it
        // still applies at the top), so a plain git apply may refuse a drifted patch there.
        let bom_drift = matches!(case.kind, Kind::Drift | Kind::Shifted)
            && case.base.starts_with(b"\xef\xbb\xbf");
        if !(bom_drift && raw.is_none()) {
            assert!(
                native.as_ref().ok() == raw.as_ref(),
                "the pipeline and a plain git apply differ: {}\npipeline: {}\ngit apply: {}",
                context(),
                native
                    .as_ref()
                    .map(|b| show_bytes(b))
                    .unwrap_or_else(|e| e.clone()),
                raw.as_ref()
                    .map(|b| show_bytes(b))
                    .unwrap_or_else(|| "refused".into())
            );
        }

        match case.kind {
            Kind::Parent | Kind::Reverse if case.context > 0 => {
                let result = native.as_ref().unwrap_or_else(|e| {
                    panic!("a diff must apply to its own base: {e}\n{}", context())
                });
                applied_parent += 1;
                let child = case.child.as_deref().unwrap();
                if result.as_slice() == child {
                    equal_child += 1;
                } else {
                    // Only whitespace correction may make git's result differ from the commit.
                    assert_eq!(case.path, "src/ws.txt", "{}", context());
                    whitespace_fixed += 1;
                }
            }
            Kind::Drift | Kind::Shifted if native.is_ok() => drift_applied += 1,
            Kind::Drift | Kind::Shifted => drift_failed += 1,
            _ => {}
        }
    }
    eprintln!(
        "conformance: {} cases; {applied_parent} applied to their base ({equal_child} equal to \
         the commit, {whitespace_fixed} corrected by --whitespace=fix); onto older or shifted \
         bases {drift_applied} applied, {drift_failed} failed",
        cases.len()
    );
    assert!(cases.len() >= 350, "only {} cases", cases.len());
    assert!(
        equal_child >= 150,
        "only {equal_child} diffs reproduced their commit"
    );
    assert!(
        whitespace_fixed >= 3,
        "whitespace correction exercised only {whitespace_fixed} times"
    );
    assert!(
        drift_applied >= 30,
        "offsets exercised only {drift_applied} times"
    );
    assert!(drift_failed >= 1, "no failing case");
}

mod random {
    //! Random texts full of whitespace trouble (trailing blanks, spaces before tabs, blank
    //! lines at the end, missing final newlines), their diffs applied to the base and to the
    //! base with a line inserted, by the native applier and by a plain `git apply`.

    use keiri_diff::native::{self, Outcome};
    use keiri_diff::patch::{Target, adapt, prepare};
    use proptest::prelude::*;

    use super::{Case, Kind, raw_git_apply};

    const WORDS: &[&str] = &[
        "a",
        "b",
        "a",
        "total: 100",
        "trailing  ",
        "tab\t",
        " \tspace tab",
        "        \teight",
        "",
        "  ",
        "\tindented",
        "全角\u{3000}",
    ];

    fn text(crlf: bool) -> impl Strategy<Value = String> {
        (
            prop::collection::vec(prop::sample::select(WORDS), 0..16),
            any::<bool>(),
        )
            .prop_map(move |(lines, final_newline)| {
                let eol = if crlf { "\r\n" } else { "\n" };
                let mut out = lines.join(eol);
                if final_newline && !lines.is_empty() {
                    out.push_str(eol);
                }
                out
            })
    }

    fn native_apply(base: &str, patch: &str) -> Option<Vec<u8>> {
        let prepared = prepare(patch, &Target::new("f.txt", [])).ok()?;
        let adapted = adapt(prepared, base.as_bytes());
        match native::apply(
            &adapted.content,
            &adapted.patch,
            "f.txt",
            native::DEFAULT_WORK_BUDGET,
        ) {
            Outcome::Applied { content, .. } => Some(content),
            Outcome::Failed { .. } => None,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        #[test]
        fn random_diffs_agree_with_git(
            crlf in any::<bool>(),
            (old, new, shift_at, shift) in any::<bool>().prop_flat_map(|c| (text(c), text(c), 0usize..20, any::<bool>())),
        ) {
            let _ = crlf;
            prop_assume!(old != new);
            let diff = diffy::create_patch(&old, &new).to_string();
            let hunks: String = diff.split_inclusive('\n').skip_while(|l| !l.starts_with("@@ ")).collect();
            let patch = format!("diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n{hunks}");
            let eol = if old.contains("\r\n") { "\r\n" } else { "\n" };
            let base = if shift {
                let mut lines: Vec<&str> = old.split_inclusive('\n').collect();
                let inserted = format!("inserted{eol}");
                let at = shift_at.min(lines.len());
                lines.insert(at, &inserted);
                lines.concat()
            } else {
                old.clone()
            };
            let case = Case {
                label: String::new(),
                path: "f.txt".into(),
                base: base.clone().into_bytes(),
                patch: patch.clone(),
                child: None,
                kind: Kind::Drift,
                context: 3,
            };
            let ours = native_apply(&base, &patch);
            let git = raw_git_apply(&case);
            prop_assert!(
                ours == git,
                "base {:?}\npatch:\n{}\nnative: {:?}\ngit:    {:?}",
                base,
                patch,
                ours.as_deref().map(String::from_utf8_lossy),
                git.as_deref().map(String::from_utf8_lossy)
            );
        }
    }
}
