//! Extraction limits: what was cut is reported, never silently dropped.

use keiri_docs::{ExtractLimits, ExtractRequest, ExtractResponse, OutputFormat};

use super::generate;
use super::{Workspace, lines};

fn run(ws: &Workspace, files: &[&str], limits: ExtractLimits) -> ExtractResponse {
    let req = ExtractRequest {
        file_paths: files.iter().map(|s| s.to_string()).collect(),
        limits,
        ..ExtractRequest::default()
    };
    keiri_docs::extract_files(&ws.policy, &req, &ws.cache)
        .unwrap()
        .json()
        .unwrap()
        .clone()
}

/// (file, characters kept, cut limits) per file.
fn check(res: &ExtractResponse, expect: &[(&str, usize, &[&str])]) {
    let got: Vec<(&str, usize, Vec<&str>)> = res
        .files
        .iter()
        .map(|f| {
            (
                f.file_path.as_str(),
                f.characters,
                f.cuts.iter().map(|c| c.limit.as_str()).collect(),
            )
        })
        .collect();
    let want: Vec<(&str, usize, Vec<&str>)> = expect
        .iter()
        .map(|(f, n, c)| (*f, *n, c.to_vec()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        res.total_characters,
        expect.iter().map(|e| e.1).sum::<usize>()
    );
    assert_eq!(res.truncated, expect.iter().any(|e| !e.2.is_empty()));
}

#[test]
fn per_file_and_total_character_budgets() {
    let ws = Workspace::new();
    ws.put("a.txt", "あ".repeat(30).as_bytes());
    ws.put("b.txt", "b".repeat(30).as_bytes());
    ws.put("c.txt", "c".repeat(30).as_bytes());
    let limits = ExtractLimits {
        max_total_chars: 50,
        max_chars_per_file: 25,
        ..ExtractLimits::default()
    };
    let res = run(&ws, &["a.txt", "b.txt", "c.txt"], limits);
    check(
        &res,
        &[
            ("a.txt", 25, &["max_chars_per_file"]),
            ("b.txt", 25, &["max_chars_per_file"]),
            ("c.txt", 0, &["max_chars_per_file", "max_total_chars"]),
        ],
    );
    assert_eq!(res.files[0].text, "あ".repeat(25));
    assert!(res.success, "cut files are not failures");
    // Defaults fit everything.
    check(
        &run(&ws, &["a.txt", "b.txt"], ExtractLimits::default()),
        &[("a.txt", 30, &[]), ("b.txt", 30, &[])],
    );
}

#[test]
fn budgets_cut_every_format() {
    let ws = Workspace::new();
    let long = "x".repeat(40);
    ws.put(
        "a.pdf",
        &generate::pdf(&[vec![long.clone()], vec![long.clone()]], true),
    );
    ws.put(
        "a.docx",
        &generate::docx(&format!(
            "{}{}",
            generate::para(&long),
            generate::para(&long)
        )),
    );
    ws.put(
        "a.xlsx",
        &generate::xlsx(&[(
            "S",
            vec![vec![generate::t(&long)], vec![generate::t(&long)]],
        )]),
    );
    let limits = ExtractLimits {
        max_chars_per_file: 50,
        ..ExtractLimits::default()
    };
    let res = run(&ws, &["a.pdf", "a.docx", "a.xlsx"], limits);
    check(
        &res,
        &[
            ("a.pdf", 50, &["max_chars_per_file"]),
            ("a.docx", 50, &["max_chars_per_file"]),
            ("a.xlsx", 50, &["max_chars_per_file"]),
        ],
    );
    for f in &res.files {
        assert_eq!(
            f.text,
            format!("{long}\n{}", "x".repeat(9)),
            "{}",
            f.file_path
        );
    }
}

#[test]
fn size_and_page_caps() {
    let ws = Workspace::new();
    ws.put("big.txt", &vec![b'a'; 20_000]);
    let pages: Vec<Vec<String>> = (1..=5).map(|i| lines(&[&format!("p{i}")])).collect();
    ws.put("five.pdf", &generate::pdf(&pages, true));
    let limits = ExtractLimits {
        max_file_bytes: 10_000,
        max_pages: 2,
        ..ExtractLimits::default()
    };
    let res = run(&ws, &["big.txt", "five.pdf"], limits);
    assert_eq!(res.errors.len(), 1);
    assert_eq!(res.errors[0].code, "FILE_TOO_LARGE");
    assert!(
        res.errors[0].message.contains("20000 bytes"),
        "{}",
        res.errors[0].message
    );
    check(&res, &[("five.pdf", 5, &["max_pages"])]);
    assert_eq!(res.files[0].text, "p1\np2");
    assert_eq!(
        (res.files[0].pages_total, res.files[0].pages_extracted),
        (Some(5), Some(2))
    );
}

#[test]
fn limits_are_clamped_to_ceilings_and_echoed() {
    let ws = Workspace::new();
    ws.put("a.txt", b"a");
    let limits = ExtractLimits {
        max_total_chars: usize::MAX,
        max_file_bytes: u64::MAX,
        max_pages: 0,
        ..ExtractLimits::default()
    };
    let res = run(&ws, &["a.txt"], limits);
    let c = ExtractLimits::CEILING;
    assert_eq!(
        (
            res.limits.max_total_chars,
            res.limits.max_file_bytes,
            res.limits.max_pages
        ),
        (c.max_total_chars, c.max_file_bytes, 1)
    );
}

#[test]
fn too_many_files_is_an_input_error() {
    let ws = Workspace::new();
    let req = ExtractRequest {
        file_paths: vec!["a.txt".into(); 201],
        output_format: OutputFormat::Json,
        ..ExtractRequest::default()
    };
    let err = keiri_docs::extract_files(&ws.policy, &req, &ws.cache).unwrap_err();
    assert_eq!(err.code(), "INVALID_REQUEST");
}
