//! The ja-mode scan of the CLI (issue 34, item 7): what `keiri generate` and `keiri run` say to
//! a person in Japanese mode (the default) has no English sentence. Stderr is scanned whole;
//! `keiri run`'s stdout is its summary of `key: value` lines (`run_id:`, `status:`, `wrote:`,
//! `resume:`), whose keys and codes stay the same in every language for scripts, so its values
//! are scanned after the key.

use crate::{LLM_ENV, keiri, put};

/// The lines of `text` that read as English: no Japanese in them and two or more words with
/// letters (a node id, a path or a file name is one word and no sentence).
fn english_lines(text: &str) -> Vec<String> {
    let japanese = |c: char| matches!(c, '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{9fff}' | '\u{ff01}'..='\u{ff5e}');
    text.lines()
        .filter(|line| !line.chars().any(japanese))
        .filter(|line| {
            line.split_whitespace()
                .filter(|w| w.chars().filter(char::is_ascii_alphabetic).count() >= 2)
                .count()
                >= 2
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn the_scan_finds_english_sentences_and_passes_ids_and_paths() {
    let found = english_lines(
        "［検証］\n✓ invoice__read（13 ms、14 行）\nwrote plan.yaml\n… exception_report__write\nnote: composed offline",
    );
    assert_eq!(found, ["wrote plan.yaml", "note: composed offline"]);
}

/// Compose a plan from the shipped invoice sample and run it to its end, in Japanese mode:
/// every line on stderr of both commands is Japanese (or a bare id or path).
#[test]
fn generate_and_run_speak_japanese_on_stderr() {
    let ws = tempfile::tempdir().unwrap();
    let sample =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/invoices.csv");
    std::fs::create_dir_all(ws.path().join("inputs")).unwrap();
    std::fs::copy(&sample, ws.path().join("inputs/invoices.csv")).unwrap();
    put(
        &ws.path().join("answers.json"),
        r#"{"notify_to": "keiri@example.co.jp", "notify_channel": "file"}"#,
    );
    let mut cmd = keiri(ws.path());
    for v in LLM_ENV {
        cmd.env_remove(v);
    }
    let generated = cmd
        .args([
            "generate",
            "--apply-mode",
            "compose",
            "--templates",
            "invoice_duplicate_detection,exception_report",
            "--docs",
            "inputs/invoices.csv",
            "--instruction",
            "請求書の重複を検出して例外レポートを作り、担当者に知らせる",
            "--answers",
        ])
        .arg(ws.path().join("answers.json"))
        .arg("--out")
        .arg(ws.path().join("plan.yaml"))
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&generated.get_output().stderr).into_owned();
    assert!(stderr.contains("［検証］"), "{stderr}");
    assert!(stderr.contains("書き出しました"), "{stderr}");
    assert_eq!(english_lines(&stderr), Vec::<String>::new(), "{stderr}");

    put(
        &ws.path().join("run-answers.json"),
        r#"{"exception_report__confirm": {"approved": true, "comment": "確認済み"}}"#,
    );
    let ran = keiri(ws.path())
        .args(["run", "plan.yaml", "--answers"])
        .arg(ws.path().join("run-answers.json"))
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&ran.get_output().stderr).into_owned();
    assert!(stderr.contains("完了"), "{stderr}");
    assert_eq!(english_lines(&stderr), Vec::<String>::new(), "{stderr}");
    assert_eq!(summary_english(&ran), Vec::<String>::new());

    // Paused on the confirmation: the way to resume is said in Japanese too.
    let paused = keiri(ws.path())
        .args(["run", "plan.yaml"])
        .write_stdin("")
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&paused.get_output().stdout).into_owned();
    assert!(
        stdout.contains("resume: keiri run PLAN --resume"),
        "{stdout}"
    );
    assert_eq!(summary_english(&paused), Vec::<String>::new(), "{stdout}");
}

/// The English lines among the values of `keiri run`'s stdout summary: each line's text after
/// its `key: `, without the node ids, paths, flags and codes it names (`wrote: save
/// runs/…/totals.csv`, `resume: keiri run PLAN --resume …`), which are no sentence.
fn summary_english(out: &assert_cmd::assert::Assert) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let named = |w: &str| {
        w.contains(['/', '_', '.', '-'])
            || w.chars().all(|c| !c.is_ascii_lowercase())
            || ["keiri", "run"].contains(&w)
    };
    let values: String = stdout
        .lines()
        .map(|l| l.split_once(": ").map_or(l, |(_, value)| value))
        .map(|v| {
            v.split_whitespace()
                .filter(|w| !named(w))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n");
    english_lines(&values)
}
