//! Kill during save: `keiri patch`, `keiri register` and `keiri apply-patch` are SIGKILLed at
//! random moments (seeded, so a failure replays) over many trials. The target is always the
//! complete old or the complete new file, and after the next start of the command (which
//! sweeps leftovers) no temp or lock file is left. `keiri run` has its own trials (the run
//! directory, resume) in `run_blocks.rs`.
#![cfg(unix)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::concurrency::{next_random, put_bytes, sheet_xml, workbook};
use super::{VALID_PLAN, catalog_dir};

const TRIALS: usize = 50;

/// `keiri --workspace <ws> --catalog <repo catalog>` as a plain process (so it can be killed),
/// run from inside the workspace.
fn keiri_process(ws: &Path) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("keiri"));
    cmd.arg("--workspace")
        .arg(ws)
        .arg("--catalog")
        .arg(catalog_dir())
        .current_dir(ws)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env_remove("KEIRI_CORS_ALLOW_ORIGINS")
        .env("KEIRI_CONFIG_DIR", super::test_config_dir(ws));
    for name in super::LLM_ENV {
        cmd.env_remove(name);
    }
    cmd
}

fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Runs `command` to the end and returns how long it took (only to spread the kills over a
/// run; nothing is asserted about it).
fn full_run(mut command: Command) -> Duration {
    let started = Instant::now();
    let status = command.status().unwrap();
    assert!(status.success(), "{command:?}: {status}");
    started.elapsed()
}

/// Starts `command`, kills it (SIGKILL) after a random part of `span`, and waits for it.
fn kill_at_random(mut command: Command, span: Duration, rng: &mut u64) {
    *rng = next_random(*rng);
    let micros = u64::try_from(span.as_micros()).unwrap().max(1);
    let delay = Duration::from_micros(*rng % micros);
    let mut child = command.spawn().unwrap();
    std::thread::sleep(delay);
    let _ = child.kill();
    let _ = child.wait();
}

/// The names in `dir` beyond `expected`: temp or lock files left behind.
fn leftovers(dir: &Path, expected: &BTreeSet<String>) -> Vec<String> {
    names(dir).difference(expected).cloned().collect()
}

#[test]
fn killed_patch_leaves_the_old_or_the_new_workbook_and_no_temp_file() {
    let ws = tempfile::tempdir().unwrap();
    let book = ws.path().join("book.xlsx");
    // Large enough that the save (deflate, write, fsync) takes several milliseconds.
    let old = workbook(8_000, 42);
    put_bytes(&book, &old);
    put_bytes(
        &ws.path().join("ops.json"),
        br#"[{"op":"set_value","sheet":"Sheet1","cell":"H1","value":"patched"}]"#,
    );
    let expected = names(ws.path());
    let patch = || {
        let mut cmd = keiri_process(ws.path());
        cmd.args([
            "patch",
            "--xlsx-path",
            "book.xlsx",
            "--ops",
            "ops.json",
            "--out-name",
            "book.xlsx",
            "--on-conflict",
            "overwrite",
        ]);
        cmd
    };
    let span = full_run(patch());
    let is_new = |bytes: &[u8]| sheet_xml(bytes).is_ok_and(|s| s.contains(">patched<"));
    assert!(is_new(&std::fs::read(&book).unwrap()));

    let mut rng = 0x6b65_6972_6931;
    let (mut olds, mut news) = (0, 0);
    for trial in 0..TRIALS {
        put_bytes(&book, &old);
        kill_at_random(patch(), span, &mut rng);
        let now = std::fs::read(&book).unwrap();
        if now == old {
            olds += 1;
        } else {
            assert!(
                is_new(&now),
                "trial {trial}: the workbook is neither the old nor a complete new one"
            );
            news += 1;
        }
    }
    assert_eq!(olds + news, TRIALS);
    put_bytes(&book, &old);
    full_run(patch());
    assert_eq!(leftovers(ws.path(), &expected), Vec::<String>::new());
}

#[test]
fn killed_apply_patch_leaves_the_old_or_the_new_file_and_no_temp_file() {
    let ws = tempfile::tempdir().unwrap();
    let target = ws.path().join("big.txt");
    // About 2 MB, so the save takes several milliseconds.
    let old: String = (0..60_000)
        .map(|i| format!("line {i:08} of the file\n"))
        .collect();
    put_bytes(&target, old.as_bytes());
    let new = old.replacen("line 00000001 of", "LINE 00000001 of", 1);
    let elsewhere = tempfile::tempdir().unwrap();
    let patch_file = elsewhere.path().join("change.diff");
    put_bytes(
        &patch_file,
        b"@@ -1,3 +1,3 @@\n line 00000000 of the file\n-line 00000001 of the file\n+LINE 00000001 of the file\n line 00000002 of the file\n",
    );
    let expected = names(ws.path());
    let apply = || {
        let mut cmd = keiri_process(ws.path());
        cmd.arg("apply-patch")
            .arg("big.txt")
            .arg("--patch")
            .arg(&patch_file);
        cmd
    };
    let span = full_run(apply());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), new);

    let mut rng = 0x6b65_6972_6932;
    for trial in 0..TRIALS {
        put_bytes(&target, old.as_bytes());
        kill_at_random(apply(), span, &mut rng);
        let now = std::fs::read(&target).unwrap();
        assert!(
            now == old.as_bytes() || now == new.as_bytes(),
            "trial {trial}: the file is neither the old nor the new one ({} bytes)",
            now.len()
        );
    }
    put_bytes(&target, old.as_bytes());
    full_run(apply());
    assert_eq!(leftovers(ws.path(), &expected), Vec::<String>::new());
}

#[test]
fn killed_register_leaves_no_partial_plan_and_no_temp_file() {
    let ws = tempfile::tempdir().unwrap();
    // About 1 MB of comments keeps the plan valid and makes the save take a few milliseconds.
    let padding: String = (0..20_000)
        .map(|i| format!("# note {i:06}: kept as written\n"))
        .collect();
    let text = format!("{VALID_PLAN}{padding}");
    let plan_file: PathBuf = ws.path().join("plan.yaml");
    put_bytes(&plan_file, text.as_bytes());
    let designs = ws.path().join("designs");
    let register = || {
        let mut cmd = keiri_process(ws.path());
        cmd.arg("register").arg("plan.yaml");
        cmd
    };
    let span = full_run(register());
    let check_designs = |trial: usize| {
        for name in names(&designs) {
            let path = designs.join(&name);
            if name.ends_with(".yaml") && !name.starts_with('.') {
                assert_eq!(
                    std::fs::read_to_string(&path).unwrap(),
                    text,
                    "trial {trial}: {name} is not the complete plan"
                );
                // Keep the directory small; only leftovers matter from here on.
                std::fs::remove_file(&path).unwrap();
            }
        }
    };
    check_designs(0);

    let mut rng = 0x6b65_6972_6933;
    for trial in 0..TRIALS {
        kill_at_random(register(), span, &mut rng);
        check_designs(trial);
    }
    full_run(register());
    check_designs(TRIALS);
    assert_eq!(
        names(&designs),
        BTreeSet::new(),
        "no temp or lock file is left in designs/"
    );
}
