//! The decision logic, with a fake spawner and a recording hasher: what runs, in which order,
//! and what each backend report leads to.

use std::cell::RefCell;
use std::path::Path;

use keiri_diff::{
    ApplyPatchInput, ContentHasher, GitBackend, Invocation, Mode, Options, ProcessOutput,
    Sha256Hasher, Spawner,
};
use keiri_fs::PathPolicy;

use super::{put, workspace};

const FILE: &str = "dir/a.txt";
const BEFORE: &str = "one\ntwo\nthree\n";
const PATCH: &str = "--- a/dir/a.txt\n+++ b/dir/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n";

/// What the fake `git apply` does.
#[derive(Clone)]
enum Fake {
    /// Exits with this code, after writing `Some(content)` over the scratch copy.
    Exit(i32, Option<&'static str>, &'static str),
    /// Killed by the timeout.
    TimedOut,
    /// Cannot be started (git missing).
    Missing,
}

struct FakeSpawner<'a> {
    fake: Fake,
    log: &'a RefCell<Vec<String>>,
    seen: RefCell<Vec<Invocation>>,
}

impl Spawner for FakeSpawner<'_> {
    fn run(&self, invocation: &Invocation) -> std::io::Result<ProcessOutput> {
        self.log.borrow_mut().push("spawn".into());
        self.seen.borrow_mut().push(invocation.clone());
        match &self.fake {
            Fake::Exit(code, content, stderr) => {
                if let Some(content) = content {
                    put(&invocation.cwd.join(FILE), content.as_bytes());
                }
                Ok(ProcessOutput {
                    exit_code: Some(*code),
                    stderr: stderr.as_bytes().to_vec(),
                    timed_out: false,
                })
            }
            Fake::TimedOut => Ok(ProcessOutput {
                exit_code: None,
                stderr: Vec::new(),
                timed_out: true,
            }),
            Fake::Missing => Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "No such file or directory",
            )),
        }
    }
}

struct RecordingHasher<'a> {
    log: &'a RefCell<Vec<String>>,
    /// A hasher that sees every content as the same, to show the decision follows the hash.
    constant: bool,
}

impl ContentHasher for RecordingHasher<'_> {
    fn sha256(&self, bytes: &[u8]) -> [u8; 32] {
        self.log.borrow_mut().push("hash".into());
        if self.constant {
            [7; 32]
        } else {
            Sha256Hasher.sha256(bytes)
        }
    }
}

/// One scenario: the workspace as `setup` leaves it, the call, and the expected outcome.
struct Case {
    file_path: &'static str,
    patch: &'static str,
    fake: Fake,
    constant_hash: bool,
    mode: Mode,
}

impl Default for Case {
    fn default() -> Self {
        Case {
            file_path: FILE,
            patch: PATCH,
            fake: Fake::Exit(0, Some("one\n2\nthree\n"), ""),
            constant_hash: false,
            mode: Mode::Write,
        }
    }
}

/// `Ok(on_disk)`: applied, the file then holds `on_disk`; `Err((code, fragment))`: refused
/// with `code` and a message containing `fragment`, the file unchanged. `events` is the order
/// of hashing and spawning.
fn check(
    case: Case,
    setup: impl FnOnce(&Path),
    expect: Result<&str, (&str, &str)>,
    events: &[&str],
) -> (Vec<Invocation>, std::path::PathBuf) {
    let ws = workspace(FILE, BEFORE.as_bytes());
    setup(ws.path());
    let before_call = std::fs::read(ws.path().join(FILE)).ok();
    let log = RefCell::new(Vec::new());
    let spawner = FakeSpawner {
        fake: case.fake.clone(),
        log: &log,
        seen: RefCell::new(Vec::new()),
    };
    let backend = GitBackend::with_spawner(&spawner);
    let hasher = RecordingHasher {
        log: &log,
        constant: case.constant_hash,
    };
    let input = ApplyPatchInput {
        file_path: case.file_path.into(),
        patch: case.patch.into(),
    };
    let options = Options {
        mode: case.mode,
        ..Options::default()
    };
    let outcome = keiri_diff::apply_patch(
        &PathPolicy::new([ws.path()]),
        &input,
        &backend,
        &hasher,
        &options,
    );
    let on_disk = std::fs::read(ws.path().join(FILE)).ok();
    match (outcome, expect) {
        (Ok(applied), Ok(want)) => {
            assert_eq!(on_disk.as_deref(), Some(want.as_bytes()));
            let r = &applied.result;
            assert_eq!(r.written, r.changed && case.mode == Mode::Write);
        }
        (Err(e), Err((code, fragment))) => {
            assert_eq!(e.code(), code, "{e}");
            assert!(e.to_string().contains(fragment), "{e:?} lacks {fragment:?}");
            assert_eq!(on_disk, before_call, "a refused call wrote");
        }
        (got, want) => panic!("got {got:?}, want {want:?}"),
    }
    assert_eq!(*log.borrow(), events, "order of hashing and spawning");
    (spawner.seen.into_inner(), ws.path().canonicalize().unwrap())
}

const RUN: &[&str] = &["hash", "spawn", "hash"];
const NOTHING: &[&str] = &[];

#[test]
fn exit_0_is_applied() {
    check(Case::default(), |_| {}, Ok("one\n2\nthree\n"), RUN);
    // Exit 0 without a change is still success (nothing to write).
    check(
        Case {
            fake: Fake::Exit(0, None, ""),
            ..Case::default()
        },
        |_| {},
        Ok(BEFORE),
        RUN,
    );
}

#[test]
fn exit_1_unchanged_is_apply_failed_with_code_and_stderr() {
    check(
        Case {
            fake: Fake::Exit(
                1,
                None,
                "error: patch failed: dir/a.txt:1\nerror: dir/a.txt: patch does not apply\n",
            ),
            ..Case::default()
        },
        |_| {},
        Err((
            "APPLY_FAILED",
            "(git exit code 1): error: patch failed: dir/a.txt:1; error: dir/a.txt: patch does not apply",
        )),
        RUN,
    );
}

#[test]
fn exit_1_changed_is_applied() {
    check(
        Case {
            fake: Fake::Exit(1, Some("partly\n"), "error: something"),
            ..Case::default()
        },
        |_| {},
        Ok("partly\n"),
        RUN,
    );
}

#[test]
fn the_decision_follows_the_hash() {
    // The fake changed the content, but the hasher says it is the same: APPLY_FAILED.
    check(
        Case {
            fake: Fake::Exit(1, Some("partly\n"), "boom"),
            constant_hash: true,
            ..Case::default()
        },
        |_| {},
        Err(("APPLY_FAILED", "boom")),
        RUN,
    );
}

#[test]
fn not_found_and_too_large_before_anything_runs() {
    check(
        Case {
            file_path: "dir/missing.txt",
            ..Case::default()
        },
        |_| {},
        Err(("NOT_FOUND", "missing.txt")),
        NOTHING,
    );
    check(
        Case {
            file_path: "dir",
            ..Case::default()
        },
        |_| {},
        Err(("NOT_FOUND", "not a file")),
        NOTHING,
    );
    let grow = |size: u64| {
        move |ws: &Path| {
            std::fs::OpenOptions::new()
                .write(true)
                .open(ws.join(FILE))
                .unwrap()
                .set_len(size)
                .unwrap()
        }
    };
    check(
        Case::default(),
        grow(10 * 1024 * 1024 + 1),
        Err(("FILE_TOO_LARGE", "10485761 bytes, the limit is 10485760")),
        NOTHING,
    );
    // Exactly 10 MiB is allowed: it is hashed and handed to git (which finds no match here).
    check(
        Case {
            fake: Fake::Exit(1, None, "error: patch does not apply"),
            ..Case::default()
        },
        grow(10 * 1024 * 1024),
        Err(("APPLY_FAILED", "patch does not apply")),
        RUN,
    );
}

#[test]
fn invalid_arguments_and_paths_before_anything_runs() {
    for file_path in ["", "   "] {
        check(
            Case {
                file_path,
                ..Case::default()
            },
            |_| {},
            Err(("INVALID_ARGUMENT", "filePath is empty")),
            NOTHING,
        );
    }
    let outside = tempfile::tempdir().unwrap();
    put(&outside.path().join("secret.txt"), b"secret\n");
    let escape: &'static str = Box::leak(
        format!(
            "../{}/secret.txt",
            outside.path().file_name().unwrap().to_string_lossy()
        )
        .into_boxed_str(),
    );
    check(
        Case {
            file_path: escape,
            ..Case::default()
        },
        |_| {},
        Err(("PATH_DENIED", "outside the allowed roots")),
        NOTHING,
    );
    #[cfg(unix)]
    {
        let target = outside.path().join("secret.txt");
        check(
            Case {
                file_path: "dir/link.txt",
                ..Case::default()
            },
            move |ws| std::os::unix::fs::symlink(&target, ws.join("dir/link.txt")).unwrap(),
            Err(("PATH_DENIED", "outside the allowed roots")),
            NOTHING,
        );
        assert_eq!(
            std::fs::read(outside.path().join("secret.txt")).unwrap(),
            b"secret\n"
        );
    }
}

#[test]
fn a_patch_refused_before_the_backend_never_spawns() {
    check(
        Case {
            patch: "--- a/other.txt\n+++ b/other.txt\n@@ -1 +1 @@\n-x\n+y\n",
            ..Case::default()
        },
        |_| {},
        Err((
            "APPLY_FAILED",
            "patch refused: the patch does not change dir/a.txt",
        )),
        &["hash", "hash"],
    );
}

#[test]
fn killed_or_missing_git_is_internal() {
    check(
        Case {
            fake: Fake::TimedOut,
            ..Case::default()
        },
        |_| {},
        Err(("INTERNAL", "git apply timed out")),
        &["hash", "spawn"],
    );
    check(
        Case {
            fake: Fake::Missing,
            ..Case::default()
        },
        |_| {},
        Err(("INTERNAL", "could not run git")),
        &["hash", "spawn"],
    );
}

#[test]
fn the_invocation_is_git_apply_whitespace_fix_include() {
    let (seen, ws) = check(Case::default(), |_| {}, Ok("one\n2\nthree\n"), RUN);
    let invocation = &seen[0];
    assert_eq!(invocation.program, "git");
    assert_eq!(
        invocation.args,
        ["apply", "--whitespace=fix", "--include", "dir/a.txt", "-"]
    );
    let stdin = String::from_utf8(invocation.stdin.clone()).unwrap();
    assert_eq!(
        stdin,
        "diff --git a/dir/a.txt b/dir/a.txt\n--- a/dir/a.txt\n+++ b/dir/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
    );
    let env: Vec<_> = invocation
        .env
        .iter()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect();
    assert!(
        env.contains(&("GIT_CONFIG_NOSYSTEM".into(), "1".into())),
        "{env:?}"
    );
    assert!(env.iter().any(|(k, _)| k == "GIT_CONFIG_GLOBAL"), "{env:?}");
    assert!(
        env.iter().any(|(k, _)| k == "GIT_CEILING_DIRECTORIES"),
        "{env:?}"
    );
    // Git works on a scratch copy, never in the workspace.
    assert!(!invocation.cwd.starts_with(&ws), "{:?}", invocation.cwd);
    assert!(!invocation.cwd.exists(), "the scratch directory is removed");
}

#[test]
fn dry_run_then_commit() {
    let ws = workspace(FILE, BEFORE.as_bytes());
    let policy = PathPolicy::new([ws.path()]);
    let input = ApplyPatchInput {
        file_path: FILE.into(),
        patch: PATCH.into(),
    };
    let dry = Options {
        mode: Mode::DryRun,
        ..Options::default()
    };
    let native = keiri_diff::NativeBackend::default();
    let applied = keiri_diff::apply_patch(&policy, &input, &native, &Sha256Hasher, &dry).unwrap();
    assert!(applied.result.changed && !applied.result.written);
    assert_eq!(
        std::fs::read_to_string(ws.path().join(FILE)).unwrap(),
        BEFORE
    );
    assert_eq!(applied.after, b"one\n2\nthree\n");

    keiri_diff::commit(&applied).unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.path().join(FILE)).unwrap(),
        "one\n2\nthree\n"
    );

    // Committing over a file that changed in the meantime writes nothing.
    let again = keiri_diff::apply_patch(
        &policy,
        &ApplyPatchInput {
            file_path: FILE.into(),
            patch: "@@ -1,3 +1,3 @@\n one\n-2\n+two\n three\n".into(),
        },
        &native,
        &Sha256Hasher,
        &dry,
    )
    .unwrap();
    put(&ws.path().join(FILE), b"edited elsewhere\n");
    let err = keiri_diff::commit(&again).unwrap_err();
    assert_eq!(err.code(), "CHANGE_CONFLICT");
    assert!(err.to_string().contains("changed on disk"), "{err}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join(FILE)).unwrap(),
        "edited elsewhere\n"
    );
}

#[test]
fn tool_definition_text() {
    let definition = keiri_diff::tool_definition();
    assert_eq!(definition.name, "apply_patch");
    assert_eq!(
        definition.description,
        "Applies a unified diff patch to a file. Best for making precise code changes."
    );
    assert_eq!(
        definition.parameters,
        serde_json::json!({
            "type": "object",
            "properties": {
                "filePath": {"type": "string", "description": "Target file path"},
                "patch": {"type": "string", "description": "Unified diff content"}
            },
            "required": ["filePath", "patch"]
        })
    );
}

#[cfg(unix)]
#[test]
fn the_system_spawner_feeds_stdin_keeps_stderr_and_enforces_the_timeout() {
    use std::time::{Duration, Instant};

    use keiri_diff::SystemSpawner;

    let dir = tempfile::tempdir().unwrap();
    let invocation = |script: &str, timeout_ms: u64| Invocation {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: dir.path().to_path_buf(),
        env: vec![("KEIRI_TEST".into(), "set".into())],
        env_remove: vec!["HOME".into()],
        // More than a pipe buffer, so a spawner that wrote stdin before reading would block.
        stdin: vec![b'x'; 1 << 20],
        timeout: Duration::from_millis(timeout_ms),
    };
    let out = SystemSpawner
        .run(&invocation(
            "wc -c >&2; echo \"$KEIRI_TEST ${HOME:-unset}\" >&2; exit 3",
            10_000,
        ))
        .unwrap();
    assert_eq!(out.exit_code, Some(3));
    assert!(!out.timed_out);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("1048576"), "{stderr}");
    assert!(stderr.contains("set unset"), "{stderr}");

    let started = Instant::now();
    let out = SystemSpawner.run(&invocation("sleep 30", 200)).unwrap();
    assert_eq!((out.exit_code, out.timed_out), (None, true));
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// A backend that lets an editor (a writer that takes no keiri lock) save the file while the
/// patch is being applied, then applies it with the native applier.
struct EditorMeanwhile {
    file: std::path::PathBuf,
}

impl keiri_diff::Backend for EditorMeanwhile {
    fn kind(&self) -> keiri_diff::BackendKind {
        keiri_diff::BackendKind::Native
    }

    fn apply(
        &self,
        file: &keiri_diff::TargetFile<'_>,
        patch: &keiri_diff::patch::PreparedPatch,
    ) -> Result<keiri_diff::Run, keiri_diff::Error> {
        use std::io::Write;
        let mut f = std::fs::File::create(&self.file).unwrap();
        f.write_all(b"one\ntwo\nthree\nsaved by an editor\n")
            .unwrap();
        keiri_diff::NativeBackend::default().apply(file, patch)
    }
}

#[test]
fn a_change_by_a_writer_that_takes_no_lock_is_a_conflict_not_a_lost_update() {
    let ws = workspace(FILE, BEFORE.as_bytes());
    let editor = EditorMeanwhile {
        file: ws.path().join(FILE),
    };
    let err = super::run(ws.path(), FILE, PATCH, &editor, Mode::Write).unwrap_err();
    assert_eq!(err.code(), "CHANGE_CONFLICT", "{err}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join(FILE)).unwrap(),
        "one\ntwo\nthree\nsaved by an editor\n",
        "the editor's save is kept"
    );
    let left: Vec<_> = std::fs::read_dir(ws.path().join("dir"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["a.txt"], "no temp or lock file stays");
}

#[test]
fn concurrent_calls_in_one_process_each_apply_to_the_current_content() {
    const LINES: usize = 40;
    let text: String = (0..LINES).map(|i| format!("key {i}\nold {i}\n")).collect();
    let ws = workspace("many.txt", text.as_bytes());
    std::thread::scope(|s| {
        for t in 0..4 {
            let root = ws.path();
            s.spawn(move || {
                for i in (t..LINES).step_by(4) {
                    let line = 2 * i + 1;
                    let patch = format!(
                        "@@ -{line},3 +{line},3 @@\n key {i}\n-old {i}\n+new {i}\n key {}\n",
                        i + 1
                    );
                    let patch = if i + 1 == LINES {
                        format!("@@ -{line},2 +{line},2 @@\n key {i}\n-old {i}\n+new {i}\n")
                    } else {
                        patch
                    };
                    let native = keiri_diff::NativeBackend::default();
                    let applied = super::run(root, "many.txt", &patch, &native, Mode::Write)
                        .unwrap_or_else(|e| panic!("{i}: {e}"));
                    assert!(applied.result.written);
                }
            });
        }
    });
    let after = std::fs::read_to_string(ws.path().join("many.txt")).unwrap();
    let expected: String = (0..LINES).map(|i| format!("key {i}\nnew {i}\n")).collect();
    assert_eq!(after, expected, "every call's change is in the file");
}
