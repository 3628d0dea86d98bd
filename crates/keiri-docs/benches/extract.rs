//! Extraction throughput (MB/s of input) per format, on a generated corpus.
//!
//! `cargo bench -p keiri-docs --bench extract` writes the corpus to
//! `target/keiri-docs-bench/corpus/`, measures each file, prints a table and writes
//! `target/keiri-docs-bench/rust.json`; `benches/compare_python.sh` then measures pypdf,
//! python-docx and openpyxl on the same files and prints both side by side.
//!
//! Every file is read whole (all pages, all rows, no character cap) so the numbers compare
//! with Python libraries that read whole files too.

// A benchmark is test tooling: failing loudly on a broken corpus is what we want.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/docs/generate.rs"]
mod generate;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use keiri_docs::{ExtractOptions, Format, extract_bytes};

fn bench_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("keiri-docs-bench")
}

/// The corpus: (file name, format, bytes).
fn corpus() -> Vec<(&'static str, Format, Vec<u8>)> {
    use generate::{Cell, n, para, t, table};
    let mut csv = String::from("請求番号,取引先,請求日,金額,摘要\r\n");
    for i in 0..60_000 {
        csv.push_str(&format!(
            "INV-{i:06},株式会社サンプル{},2025-01-{:02},{},システム保守（{}月分）\r\n",
            i % 97,
            i % 28 + 1,
            (i * 7919) % 1_000_000,
            i % 12 + 1
        ));
    }
    let mut rules = String::new();
    for i in 0..40_000 {
        rules.push_str(&format!(
            "第{i}条 経費の精算は、発生月の翌月十日までに所定の様式で申請しなければならない。\n"
        ));
    }
    let latin_pages: Vec<Vec<String>> = (0..200)
        .map(|p| {
            (0..45)
                .map(|l| {
                    format!(
                        "Page {p} line {l}: invoice INV-{p:03}{l:02} amount {} due 2025-03-31",
                        p * 1000 + l
                    )
                })
                .collect()
        })
        .collect();
    let ja_pages: Vec<Vec<String>> = (0..100)
        .map(|p| {
            (0..40)
                .map(|l| {
                    format!(
                        "{p}頁{l}行 請求書番号 INV-{p:03}{l:02} 合計金額 ¥{} 振込期限 三月末日",
                        p * 1000 + l
                    )
                })
                .collect()
        })
        .collect();
    let mut body = String::new();
    for i in 0..4_000 {
        body.push_str(&para(&format!(
            "議事録 {i}: 第{}四半期の予算執行状況について経理部より報告があり、承認された。",
            i % 4 + 1
        )));
        if i % 100 == 0 {
            let rows: Vec<Vec<String>> = (0..20)
                .map(|r| {
                    vec![
                        format!("項目{r}"),
                        format!("{}", r * 1234),
                        "備考なし".to_string(),
                    ]
                })
                .collect();
            let refs: Vec<Vec<&str>> = rows
                .iter()
                .map(|r| r.iter().map(String::as_str).collect())
                .collect();
            let slices: Vec<&[&str]> = refs.iter().map(Vec::as_slice).collect();
            body.push_str(&table(&slices));
        }
    }
    let rows: Vec<Vec<Cell>> = (0..20_000)
        .map(|r| {
            vec![
                t(&format!("D{r:06}")),
                t(&format!("取引先{}", r % 300)),
                t(if r % 2 == 0 {
                    "旅費交通費"
                } else {
                    "消耗品費"
                }),
                n(r as f64 * 12.5),
                n((r % 1000) as f64),
                t("2025-03-31"),
                n(r as f64),
                t(&format!("摘要{}", r % 50)),
                n(1.1),
                t("承認済"),
            ]
        })
        .collect();
    vec![
        ("invoices_sjis.csv", Format::Csv, generate::shift_jis(&csv)),
        ("rules_utf8.txt", Format::Txt, rules.into_bytes()),
        (
            "report_latin.pdf",
            Format::Pdf,
            generate::pdf(&latin_pages, true),
        ),
        ("report_ja.pdf", Format::Pdf, generate::pdf_cjk(&ja_pages)),
        ("minutes.docx", Format::Docx, generate::docx(&body)),
        (
            "ledger.xlsx",
            Format::Xlsx,
            generate::xlsx(&[("仕訳", rows), ("設定", vec![vec![t("x")]])]),
        ),
    ]
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // `cargo test --benches` runs bench binaries with `--bench` absent; stay quick then.
    let quick = !std::env::args().any(|a| a == "--bench");
    let dir = bench_dir();
    let corpus_dir = dir.join("corpus");
    if !quick {
        std::fs::create_dir_all(&corpus_dir).unwrap();
    }
    let opts = ExtractOptions {
        max_pages: 10_000,
        max_chars: None,
        max_rows: 1_048_576,
        max_cols: 16_384,
        ..ExtractOptions::default()
    };
    let mut results = Vec::new();
    println!(
        "{:<20} {:>10} {:>10} {:>10} {:>10}",
        "file", "MB", "chars", "ms", "MB/s"
    );
    for (name, format, bytes) in corpus() {
        if !quick {
            keiri_fs::write_atomic(&corpus_dir.join(name), &bytes).unwrap();
        }
        let mut times = Vec::new();
        let started = Instant::now();
        let mut chars = 0;
        while times.len() < 3
            || (!quick && (times.len() < 15 && started.elapsed() < Duration::from_secs(3)))
        {
            let t = Instant::now();
            let out = extract_bytes(&bytes, format, &opts).unwrap();
            times.push(t.elapsed());
            chars = out.text.chars().count();
            assert!(out.cuts.is_empty(), "{name}: {:?}", out.cuts);
            if quick {
                break;
            }
        }
        let time = median(times);
        let mb = bytes.len() as f64 / 1e6;
        let rate = mb / time.as_secs_f64();
        println!(
            "{name:<20} {mb:>10.2} {chars:>10} {:>10.1} {rate:>10.1}",
            time.as_secs_f64() * 1e3
        );
        results.push(serde_json::json!({
            "file": name, "format": format.as_str(), "bytes": bytes.len(), "chars": chars,
            "seconds": time.as_secs_f64(), "mb_per_s": rate,
        }));
    }
    if !quick {
        keiri_fs::write_atomic(
            &dir.join("rust.json"),
            serde_json::to_string_pretty(&results).unwrap().as_bytes(),
        )
        .unwrap();
        println!("corpus and results in {}", dir.display());
    }
}
