//! File metrics.

use keiri_docs::{BatchLimits, FileMetrics, Format, MetricsRequest, MetricsResponse, OutputFormat};

use super::generate::{self, t};
use super::{Workspace, lines};

fn run(ws: &Workspace, files: &[&str]) -> MetricsResponse {
    let req = MetricsRequest {
        file_paths: files.iter().map(|s| s.to_string()).collect(),
        output_format: OutputFormat::Json,
    };
    keiri_docs::file_metrics(&ws.policy, &req, &BatchLimits::default(), &ws.cache)
        .unwrap()
        .json()
        .unwrap()
        .clone()
}

/// (file, format, encoding, size, lines, characters, tokens, pages, sheets)
type Row<'a> = (
    &'a str,
    Format,
    Option<&'a str>,
    u64,
    usize,
    usize,
    usize,
    Option<usize>,
    Option<usize>,
);

fn row(m: &FileMetrics) -> Row<'_> {
    (
        m.file_path.as_str(),
        m.format,
        m.encoding.as_deref(),
        m.size_bytes,
        m.lines,
        m.characters,
        m.estimated_tokens,
        m.pages,
        m.sheets,
    )
}

#[test]
fn measures_every_format() {
    let ws = Workspace::new();
    let sjis = generate::shift_jis(generate::INVOICE_CSV);
    ws.put("inv.csv", &sjis);
    ws.put("a.txt", b"abcd\nefgh\n");
    let pdf = generate::pdf(&[lines(&["one"]), lines(&["two"])], true);
    ws.put("two.pdf", &pdf);
    let book = generate::xlsx(&[("A", vec![vec![t("x")]]), ("B", vec![]), ("C", vec![])]);
    ws.put("book.xlsx", &book);
    let res = run(
        &ws,
        &["inv.csv", "a.txt", "two.pdf", "book.xlsx", "nope.txt"],
    );
    let csv_text = generate::INVOICE_CSV.replace("\r\n", "\n");
    let csv_chars = csv_text.chars().count();
    let csv_tokens = keiri_docs::estimate_tokens(&csv_text);
    let rows: Vec<Row<'_>> = res.files.iter().map(row).collect();
    assert_eq!(
        rows,
        [
            (
                "inv.csv",
                Format::Csv,
                Some("cp932"),
                sjis.len() as u64,
                3,
                csv_chars,
                csv_tokens,
                None,
                None
            ),
            (
                "a.txt",
                Format::Txt,
                Some("utf-8"),
                10,
                2,
                10,
                3,
                None,
                None
            ),
            (
                "two.pdf",
                Format::Pdf,
                None,
                pdf.len() as u64,
                2,
                7,
                2,
                Some(2),
                None
            ),
            (
                "book.xlsx",
                Format::Xlsx,
                None,
                book.len() as u64,
                1,
                1,
                1,
                None,
                Some(3)
            ),
        ]
    );
    assert_eq!(
        res.files[1].content_hash,
        keiri_docs::content_hash(b"abcd\nefgh\n")
    );
    assert!(
        res.files
            .iter()
            .all(|m| m.content_hash.starts_with("sha256:") && m.content_hash.len() == 71)
    );
    assert!(!res.success);
    assert_eq!(res.errors.len(), 1);
    assert_eq!(res.errors[0].code, "NOT_FOUND");
}

#[test]
fn order_is_kept_with_parallel_workers() {
    let ws = Workspace::new();
    let names: Vec<String> = (0..40).map(|i| format!("f{i:02}.txt")).collect();
    for (i, name) in names.iter().enumerate() {
        ws.put(name, "x\n".repeat(i + 1).as_bytes());
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let res = run(&ws, &refs);
    let got: Vec<(String, usize)> = res
        .files
        .iter()
        .map(|m| (m.file_path.clone(), m.lines))
        .collect();
    let want: Vec<(String, usize)> = names.iter().cloned().zip(1..).collect();
    assert_eq!(got, want);
    assert!(res.success);
}

#[test]
fn at_most_200_files() {
    let ws = Workspace::new();
    let req = MetricsRequest {
        file_paths: vec!["a.txt".into(); 201],
        output_format: OutputFormat::Json,
    };
    let err =
        keiri_docs::file_metrics(&ws.policy, &req, &BatchLimits::default(), &ws.cache).unwrap_err();
    assert_eq!(err.code(), "INVALID_REQUEST");
}

#[test]
fn metrics_line_counts_match_section_reads() {
    // Metrics and sections extract with the same options, so a range up to `lines` works.
    let ws = Workspace::new();
    let pages: Vec<Vec<String>> = (1..=30).map(|i| vec![format!("page {i}")]).collect();
    ws.put("long.pdf", &generate::pdf(&pages, true));
    let m = run(&ws, &["long.pdf"]);
    assert_eq!((m.files[0].lines, m.files[0].pages), (30, Some(30)));
    let req = keiri_docs::SectionsRequest {
        file_path: Some("long.pdf".into()),
        start_line: Some(30),
        output_format: OutputFormat::Json,
        ..keiri_docs::SectionsRequest::default()
    };
    let out =
        keiri_docs::extract_sections(&ws.policy, &req, &BatchLimits::default(), &ws.cache).unwrap();
    let res = out.json().unwrap();
    assert_eq!(
        res.results[0].sections[0].content,
        keiri_docs::SectionContent::Text("page 30".into())
    );
    assert_eq!(
        ws.cache.stats().misses,
        1,
        "the section read reused the metrics extraction"
    );
}

fn run_with(ws: &Workspace, files: &[&str], limits: &BatchLimits) -> MetricsResponse {
    let req = MetricsRequest {
        file_paths: files.iter().map(|s| s.to_string()).collect(),
        output_format: OutputFormat::Json,
    };
    keiri_docs::file_metrics(&ws.policy, &req, limits, &ws.cache)
        .unwrap()
        .json()
        .unwrap()
        .clone()
}

/// Metrics of a text file above the 5 MiB extraction cap used to fail with FILE_TOO_LARGE;
/// the seed's metrics report its size. A file above the cap is measured in 1 MiB pieces, and
/// every figure equals what the in-memory path gives for the same bytes — with `\r\n` pairs,
/// lone `\r`, multi-byte characters and a BOM cut by the piece boundaries.
#[test]
fn text_above_the_size_cap_is_measured_not_refused() {
    let ws = Workspace::new();
    let line = "請求書,INV-0001,株式会社テスト,¥110,000\r\nmemo\rend\n";
    let mut utf8 = b"\xEF\xBB\xBF".to_vec();
    while utf8.len() < 2_600_000 {
        utf8.extend_from_slice(line.as_bytes());
    }
    utf8.extend_from_slice("最後の行".as_bytes());
    ws.put("big.csv", &utf8);
    let sjis = generate::shift_jis(&generate::INVOICE_CSV.repeat(20_000));
    assert!(sjis.len() > 1 << 20);
    ws.put("big_sjis.csv", &sjis);
    ws.put("small.py", b"def f():\r\n    return 1\n");
    let files = ["big.csv", "big_sjis.csv", "small.py"];
    let whole = run_with(&ws, &files, &BatchLimits::default());
    assert!(whole.success, "{:?}", whole.errors);
    let tiny_cap = BatchLimits {
        max_file_size_bytes: 10,
        ..BatchLimits::default()
    };
    let streamed = run_with(&ws, &files, &tiny_cap);
    assert!(streamed.success, "{:?}", streamed.errors);
    assert_eq!(streamed.files, whole.files);
    assert_eq!(streamed.files[0].encoding.as_deref(), Some("utf-8-sig"));
    assert_eq!(streamed.files[1].encoding.as_deref(), Some("cp932"));
    assert_eq!(streamed.files[0].size_bytes, utf8.len() as u64);

    // Bytes that are not text in any encoding stay a coded error, large or not.
    let mut binary = vec![b'a'; 2_000_000];
    binary[1_500_000] = 0xFF;
    binary[1_500_001] = 0xFF;
    binary[1_500_002] = 0xFF;
    ws.put("broken.txt", &binary);
    let res = run_with(&ws, &["broken.txt"], &tiny_cap);
    assert_eq!(res.errors[0].code, "UNKNOWN_ENCODING", "{:?}", res.errors);
}
