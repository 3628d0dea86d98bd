//! Behaviour through the whole pipeline with both real backends: the patches models write
//! (offsets, damaged whitespace, wrong line endings, no headers), line endings and byte order
//! marks kept, and what is refused.

use keiri_diff::{BackendKind, Mode};

use super::{put, run, run_kind, workspace};

const BOTH: [BackendKind; 2] = [BackendKind::Native, BackendKind::Git];

/// Applies `patch` to `rel` holding `content` with each backend. `Ok(after)`: applied, the
/// file holds `after`; `Err((code, fragment))`: refused, the file unchanged.
fn check(rel: &str, content: &str, patch: &str, expect: Result<&str, (&str, &str)>) {
    for kind in BOTH {
        let ws = workspace(rel, content.as_bytes());
        let outcome = run_kind(ws.path(), rel, patch, kind);
        let on_disk = String::from_utf8(std::fs::read(ws.path().join(rel)).unwrap()).unwrap();
        match (&outcome, &expect) {
            (Ok(applied), Ok(after)) => {
                assert_eq!(
                    on_disk.escape_debug().to_string(),
                    after.escape_debug().to_string(),
                    "{kind:?}\n{patch}"
                );
                assert_eq!(applied.result.changed, content != *after);
            }
            (Err(e), Err((code, fragment))) => {
                assert_eq!(e.code(), *code, "{kind:?}: {e}");
                assert!(
                    e.to_string().contains(fragment),
                    "{kind:?}: {e} lacks {fragment:?}"
                );
                assert_eq!(on_disk, content, "{kind:?} wrote after refusing");
            }
            _ => panic!("{kind:?}: got {outcome:?}, want {expect:?}\n{patch}"),
        }
    }
}

const PLAN: &str = "\
apiVersion: v1
id: invoice_duplicates
graph:
  - id: read
    block: csv.read
    in:
      path: ${vars.source}
      encoding: cp932
  - id: report
    block: excel.write_table
";

#[test]
fn a_plan_edit_with_wrong_line_numbers_applies_at_its_context() {
    check(
        "designs/plan.yaml",
        PLAN,
        "--- a/designs/plan.yaml\n+++ b/designs/plan.yaml\n@@ -20,3 +20,7 @@\n       encoding: cp932\n+  - id: approve\n+    block: ui.approval\n+    in:\n+      message: 承認してください\n   - id: report\n     block: excel.write_table\n",
        Ok(&PLAN.replace(
            "  - id: report\n",
            "  - id: approve\n    block: ui.approval\n    in:\n      message: 承認してください\n  - id: report\n",
        )),
    );
}

#[test]
fn patches_without_headers_fences_or_final_newline() {
    let replaced = PLAN.replace("cp932", "utf-8");
    for patch in [
        "@@ -7,3 +7,3 @@\n       path: ${vars.source}\n-      encoding: cp932\n+      encoding: utf-8\n   - id: report",
        "```diff\n@@ -7,3 +7,3 @@\n       path: ${vars.source}\n-      encoding: cp932\n+      encoding: utf-8\n   - id: report\n```\n",
        "Here is the change:\n--- plan.yaml\n+++ plan.yaml\n@@ -7,3 +7,3 @@\n       path: ${vars.source}\n-      encoding: cp932\n+      encoding: utf-8\n   - id: report\n",
    ] {
        check("plan.yaml", PLAN, patch, Ok(&replaced));
    }
}

#[test]
fn whitespace_is_corrected_like_git() {
    // Added lines lose trailing whitespace; spaces before an indent tab go.
    check(
        "a.txt",
        "a\nb\n",
        "@@ -1,2 +1,4 @@\n a\n+trailing \t\n+ \tindented\n b\n",
        Ok("a\ntrailing\n\tindented\nb\n"),
    );
    // Context a model wrote without the file's trailing spaces still matches, and is written
    // corrected.
    check(
        "a.txt",
        "total: 100   \nnext\n",
        "@@ -1,2 +1,3 @@\n total: 100\n+tax: 10\n next\n",
        Ok("total: 100\ntax: 10\nnext\n"),
    );
    // Blank lines added at the end of the file are dropped.
    check("a.txt", "a\n", "@@ -1 +1,3 @@\n a\n+\n+  \n", Ok("a\n"));
}

#[test]
fn crlf_files_stay_crlf_and_lf_files_stay_lf() {
    check(
        "notes.txt",
        "一行目\r\n二行目\r\n三行目\r\n",
        "@@ -1,3 +1,4 @@\n 一行目\n-二行目\n+2行目\n+追加\n 三行目\n",
        Ok("一行目\r\n2行目\r\n追加\r\n三行目\r\n"),
    );
    check(
        "notes.txt",
        "a\nb\n",
        "@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+c\r\n",
        Ok("a\nc\n"),
    );
    // A git diff of a CRLF file applies byte for byte.
    check(
        "notes.txt",
        "a\r\nb\r\n",
        "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n",
        Ok("a\r\nc\r\n"),
    );
}

#[test]
fn the_byte_order_mark_stays() {
    let file = "\u{feff}名前,金額\nA,1\nB,2\n";
    check(
        "data.csv",
        file,
        "@@ -1,2 +1,2 @@\n-名前,金額\n+名前,金額,備考\n A,1\n",
        Ok("\u{feff}名前,金額,備考\nA,1\nB,2\n"),
    );
    // Deleting the first line keeps the mark on the new first line.
    check(
        "data.csv",
        file,
        "@@ -1,3 +1,2 @@\n-\u{feff}名前,金額\n A,1\n B,2\n",
        Ok("\u{feff}A,1\nB,2\n"),
    );
}

#[test]
fn missing_final_newlines() {
    check(
        "a.txt",
        "a\nb",
        "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
        Ok("a\nb\n"),
    );
    check(
        "a.txt",
        "a\nb\n",
        "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n",
        Ok("a\nb"),
    );
}

#[test]
fn several_sections_for_one_file_apply_in_turn() {
    check(
        "a.txt",
        "one\ntwo\n",
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+1\n two\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-1\n+uno\n two\n",
        Ok("uno\ntwo\n"),
    );
}

#[test]
fn zero_context_insertions_land_at_the_end_like_git() {
    check(
        "a.txt",
        "1\n2\n3\n",
        "@@ -2,0 +3 @@\n+new\n",
        Ok("1\n2\n3\nnew\n"),
    );
    // At the top it must match at the beginning and at the end at once, which fails.
    check(
        "a.txt",
        "1\n2\n3\n",
        "@@ -1,0 +2 @@\n+new\n",
        Err(("APPLY_FAILED", "patch does not apply")),
    );
}

#[test]
fn what_is_refused() {
    check(
        "a.txt",
        "one\ntwo\n",
        "@@ -1,2 +1,2 @@\n one\n-three\n+3\n",
        Err(("APPLY_FAILED", "exit code 1): error: patch failed: a.txt:1")),
    );
    check(
        "a.txt",
        "one\n",
        "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-one\n+1\n",
        Err((
            "APPLY_FAILED",
            "does not change a.txt: it names a/b.txt, b/b.txt",
        )),
    );
    check(
        "a.txt",
        "one\n",
        "diff --git a/a.txt b/a.txt\ndeleted file mode 100644\n--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n",
        Err(("APPLY_FAILED", "deletes")),
    );
    check(
        "a.txt",
        "one\n",
        "@@ -1 +1 @@\n-one\n+1\n@@ -1 +1 @@\n-x\n+y\n",
        Err(("APPLY_FAILED", "malformed patch")),
    );
}

#[test]
fn non_utf8_files_are_refused_by_the_native_applier_only() {
    // "請求書\n" in Shift_JIS, then an ASCII line.
    let sjis: &[u8] = b"\x90\xbf\x8b\x81\x8f\x91\ntotal 1\n";
    let patch = "@@ -2 +2 @@\n-total 1\n+total 2\n";
    let ws = workspace("s.txt", sjis);
    let err = run_kind(ws.path(), "s.txt", patch, BackendKind::Native).unwrap_err();
    assert_eq!(err.code(), "APPLY_FAILED");
    assert!(err.to_string().contains("not UTF-8"), "{err}");
    assert_eq!(std::fs::read(ws.path().join("s.txt")).unwrap(), sjis);

    let applied = run_kind(ws.path(), "s.txt", patch, BackendKind::Git).unwrap();
    assert!(applied.result.written);
    assert_eq!(
        std::fs::read(ws.path().join("s.txt")).unwrap(),
        b"\x90\xbf\x8b\x81\x8f\x91\ntotal 2\n"
    );
}

#[cfg(unix)]
#[test]
fn permissions_and_links_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let ws = workspace("bin/run.sh", b"#!/bin/sh\necho 1\n");
    let script = ws.path().join("bin/run.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("bin/run.sh", ws.path().join("run")).unwrap();
    // The patch names the link; the link's target is what changes, and the link stays a link.
    let native = keiri_diff::NativeBackend::default();
    run(
        ws.path(),
        "run",
        "--- a/run\n+++ b/run\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo 1\n+echo 2\n",
        &native,
        Mode::Write,
    )
    .unwrap();
    assert_eq!(std::fs::read(&script).unwrap(), b"#!/bin/sh\necho 2\n");
    assert!(
        std::fs::symlink_metadata(ws.path().join("run"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
}

#[test]
fn a_workspace_inside_a_git_repository_does_not_change_what_git_does() {
    // core.autocrlf in a surrounding repository must not convert line endings.
    let outer = tempfile::tempdir().unwrap();
    super::git(outer.path(), &["init", "-q"]);
    super::git(outer.path(), &["config", "core.autocrlf", "true"]);
    let ws = outer.path().join("ws");
    put(&ws.join("a.txt"), b"a\r\nb\r\n");
    let applied = run_kind(
        &ws,
        "a.txt",
        "@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
        BackendKind::Git,
    )
    .unwrap();
    assert!(applied.result.written);
    assert_eq!(std::fs::read(ws.join("a.txt")).unwrap(), b"a\r\nc\r\n");
}
