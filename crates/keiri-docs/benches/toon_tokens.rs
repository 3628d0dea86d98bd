//! Token cost of TOON vs JSON on real responses (the shared accounting fixtures), counted with
//! the GPT-4o (`o200k_base`) and GPT-4 (`cl100k_base`) tokenizers.
//!
//! `cargo bench -p keiri-docs --bench toon_tokens`. JSON is measured compact (what the HTTP
//! API returns) and pretty-printed; TOON is the `toon_content` of the same call.

// A benchmark is test tooling: failing loudly on a broken fixture is what we want.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use keiri_docs::{
    BatchLimits, Cache, ContentFormat, DigestRequest, ExtractRequest, FileSections, MetricsRequest,
    Output, OutputFormat, SectionRange, SectionsRequest,
};
use keiri_fs::PathPolicy;
use serde::Serialize;

fn fixtures() -> std::path::PathBuf {
    keiri_testkit::shared_fixtures_dir()
}

fn whole(file: &str) -> FileSections {
    FileSections {
        file_path: file.into(),
        sections: vec![SectionRange {
            start_line: 1,
            end_line: None,
            label: None,
        }],
        sheet: None,
    }
}

fn main() {
    if keiri_testkit::skip_without_shared(
        "fixtures/accounting/ and fixtures/docs/ (the real responses measured)",
    ) {
        return;
    }
    let dir = fixtures();
    let policy = PathPolicy::new([&dir]);
    let cache = Cache::new(64, 64 << 20);
    let o200k = tiktoken_rs::o200k_base().unwrap();
    let cl100k = tiktoken_rs::cl100k_base().unwrap();
    let files: Vec<String> = [
        "accounting/invoices.csv",
        "accounting/po_data.csv",
        "accounting/multi_sheet_ja.xlsx",
        "accounting/retirement_ledger_strict.xlsx",
        "accounting/payroll_pivot.xlsx",
        "docs/invoice_ja.pdf",
    ]
    .map(String::from)
    .to_vec();

    // (response, compact JSON, pretty JSON, TOON)
    let mut rows: Vec<(String, String, String, String)> = Vec::new();

    for format in [ContentFormat::Text, ContentFormat::Json] {
        rows.push(measure(
            &format!("extract_sections ({format:?} content)"),
            |output_format| {
                let req = SectionsRequest {
                    requests: Some(files.iter().map(|f| whole(f)).collect()),
                    format,
                    output_format,
                    ..SectionsRequest::default()
                };
                keiri_docs::extract_sections(&policy, &req, &BatchLimits::default(), &cache)
            },
        ));
    }
    let mut all: Vec<String> = Vec::new();
    for sub in ["accounting", "docs", "xlsx"] {
        let mut names: Vec<String> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| format!("{sub}/{}", e.unwrap().file_name().to_string_lossy()))
            .collect();
        names.sort();
        all.extend(names.into_iter().filter(|n| !n.ends_with(".txt")));
    }
    rows.push(measure(
        &format!("file_metrics ({} files)", all.len()),
        |output_format| {
            let req = MetricsRequest {
                file_paths: all.clone(),
                output_format,
            };
            keiri_docs::file_metrics(&policy, &req, &BatchLimits::default(), &cache)
        },
    ));
    rows.push(measure("extract_files", |output_format| {
        let req = ExtractRequest {
            file_paths: files.clone(),
            output_format,
            ..ExtractRequest::default()
        };
        keiri_docs::extract_files(&policy, &req, &cache)
    }));
    rows.push(measure("digest", |output_format| {
        let req = DigestRequest {
            file_paths: files.clone(),
            max_chars: 4000,
            output_format,
            ..DigestRequest::default()
        };
        keiri_docs::digest(&policy, &req, &cache)
    }));

    if std::env::var_os("KEIRI_TOON_DELIMITERS").is_some() {
        for (name, compact, _, _) in &rows {
            let value: serde_json::Value = serde_json::from_str(compact).unwrap();
            let count = |d| {
                let opts = toon_format::EncodeOptions::default().with_delimiter(d);
                o200k
                    .encode_ordinary(&toon_format::encode(&value, &opts).unwrap())
                    .len()
            };
            println!(
                "{name}: comma {} pipe {} tab {}",
                count(toon_format::Delimiter::Comma),
                count(toon_format::Delimiter::Pipe),
                count(toon_format::Delimiter::Tab)
            );
        }
    }
    println!(
        "| response | JSON compact | JSON pretty | TOON | saving vs compact | saving vs pretty | (cl100k: compact / TOON) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, compact, pretty, toon) in &rows {
        let count = |bpe: &tiktoken_rs::CoreBPE, s: &str| bpe.encode_ordinary(s).len();
        let (c, p, t) = (
            count(&o200k, compact),
            count(&o200k, pretty),
            count(&o200k, toon),
        );
        let saving = |from: usize| 100.0 * (from as f64 - t as f64) / from as f64;
        println!(
            "| {name} | {c} | {p} | {t} | {:.1}% | {:.1}% | {} / {} |",
            saving(c),
            saving(p),
            count(&cl100k, compact),
            count(&cl100k, toon)
        );
    }
}

/// One row of the table: the same call answered as JSON (compact and pretty) and as TOON.
fn measure<T: Serialize, E: std::fmt::Debug>(
    name: &str,
    call: impl Fn(OutputFormat) -> Result<Output<T>, E>,
) -> (String, String, String, String) {
    let json = call(OutputFormat::Json).unwrap();
    let json = json.json().unwrap();
    let toon = call(OutputFormat::Toon).unwrap();
    (
        name.to_string(),
        serde_json::to_string(json).unwrap(),
        serde_json::to_string_pretty(json).unwrap(),
        toon.toon().unwrap().toon_content.clone(),
    )
}
