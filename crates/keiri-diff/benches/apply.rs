//! Native applier and pipeline timings. Run with `cargo bench -p keiri-diff`; the numbers go
//! into the crate README.
//!
//! * `native/…`: parsing, adapting and applying in memory, on a 10 MiB CSV-like file
//!   (150,000 lines): 100 hunks at their stated lines; one hunk whose stated line is
//!   5,000 lines off; and the worst case, a hunk that almost matches everywhere in a file of
//!   identical lines, which runs until the work budget stops it.
//! * `pipeline/…`: the whole `apply_patch` (resolve, read, hash, apply, hash, atomic write) on
//!   a 100 KB file, native against git (which adds a process start and a scratch copy). The
//!   file is reset outside the timed part; the timed part includes one fsynced atomic write.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use keiri_diff::native::{self, Outcome};
use keiri_diff::patch::{Target, adapt, prepare};
use keiri_diff::{ApplyPatchInput, BackendKind, Mode, Options, Sha256Hasher};

fn csv(lines: usize) -> String {
    (0..lines)
        .map(|i| {
            format!(
                "V{:03},株式会社サンプル{i},INV-{i},{},交通費 精算\n",
                i % 977,
                i * 7 % 100_000
            )
        })
        .collect()
}

fn edit(text: &str, every: usize) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i % every == every / 2 {
                format!("{l},修正\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

fn bare(old: &str, new: &str) -> String {
    diffy::create_patch(old, new)
        .to_string()
        .split_inclusive('\n')
        .skip_while(|l| !l.starts_with("@@ "))
        .collect()
}

fn apply_native(content: &str, patch: &str) -> Outcome {
    let prepared = prepare(patch, &Target::new("f.csv", [])).unwrap();
    let adapted = adapt(prepared, content.as_bytes());
    native::apply(
        &adapted.content,
        &adapted.patch,
        "f.csv",
        native::DEFAULT_WORK_BUDGET,
    )
}

fn native_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("native");
    group.sample_size(10);

    let big = csv(150_000);
    assert!(
        big.len() > 9 * 1024 * 1024 && big.len() <= 10 * 1024 * 1024,
        "{}",
        big.len()
    );
    let edited = edit(&big, 1_500);
    let patch = bare(&big, &edited);
    assert!(
        matches!(apply_native(&big, &patch), Outcome::Applied { ref content, .. } if content == edited.as_bytes())
    );
    group.bench_function("10MiB_100_hunks", |b| b.iter(|| apply_native(&big, &patch)));

    // One hunk, its stated line 5,000 lines away from where its context is.
    let one = edit(&big, 150_000);
    let one_patch = bare(&big, &one);
    let shifted = one_patch.replacen("@@ -74998,7 +74998,7 @@", "@@ -79998,7 +79998,7 @@", 1);
    assert_ne!(shifted, one_patch, "{one_patch}");
    assert!(matches!(
        apply_native(&big, &shifted),
        Outcome::Applied { .. }
    ));
    group.bench_function("10MiB_offset_5000_lines", |b| {
        b.iter(|| apply_native(&big, &shifted))
    });

    // The worst case: every position matches all but the last line of the hunk.
    let same = "x\n".repeat(150_000);
    let hostile = format!(
        "@@ -2,1002 +2,1002 @@\n{}-y\n+z\n w\n",
        " x\n".repeat(1_000)
    );
    assert!(
        matches!(apply_native(&same, &hostile), Outcome::Failed { ref message } if message.contains("gave up"))
    );
    group.bench_function("budget_exhausted", |b| {
        b.iter(|| apply_native(&same, &hostile))
    });
    group.finish();
}

fn pipeline_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("pipeline");
    group.sample_size(20);
    let old = csv(2_000);
    let new = edit(&old, 200);
    let patch = bare(&old, &new);
    let ws = tempfile::tempdir().unwrap();
    let file = ws.path().join("f.csv");
    let policy = keiri_fs::PathPolicy::new([ws.path()]);
    let input = ApplyPatchInput {
        file_path: "f.csv".into(),
        patch,
    };
    let options = Options {
        mode: Mode::Write,
        ..Options::default()
    };
    for kind in [BackendKind::Native, BackendKind::Git] {
        let backend = keiri_diff::backend(kind);
        group.bench_function(format!("100KB_10_hunks_{}", kind.as_str()), |b| {
            b.iter_batched(
                || keiri_fs::write_atomic(&file, old.as_bytes()).unwrap(),
                |()| {
                    let applied =
                        keiri_diff::apply_patch(&policy, &input, &backend, &Sha256Hasher, &options)
                            .unwrap();
                    assert!(applied.result.written);
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, native_benches, pipeline_benches);
criterion_main!(benches);
