//! Batch section extraction: each acceptance point of the batch design.

use keiri_docs::{
    BatchLimits, ContentFormat, FileSections, NumberedLine, OutputFormat, SectionContent,
    SectionRange, SectionsRequest, SectionsResponse,
};
use serde_json::{Value, json};

use super::generate::{self, para, t, table};
use super::{Workspace, lines};

/// A workspace with a text file of 10 numbered lines (CRLF), a 2-page PDF, a docx and a
/// workbook.
fn workspace() -> Workspace {
    let ws = Workspace::new();
    let text: String = (1..=10).map(|i| format!("line {i}\r\n")).collect();
    ws.put("ten.txt", text.as_bytes());
    ws.put(
        "doc.pdf",
        &generate::pdf(&[lines(&["p1 a", "p1 b"]), lines(&["p2 a"])], true),
    );
    ws.put(
        "memo.docx",
        &generate::docx(&format!("{}{}", para("件名"), table(&[&["A", "B"]]))),
    );
    ws.put(
        "book.xlsx",
        &generate::xlsx(&[("S", vec![vec![t("h1"), t("h2")], vec![t("v1"), t("v2")]])]),
    );
    ws
}

fn range(start: u64, end: Option<u64>, label: Option<&str>) -> SectionRange {
    SectionRange {
        start_line: start,
        end_line: end,
        label: label.map(String::from),
    }
}

fn batch(files: &[(&str, Vec<SectionRange>)]) -> SectionsRequest {
    SectionsRequest {
        requests: Some(
            files
                .iter()
                .map(|(f, s)| FileSections {
                    file_path: f.to_string(),
                    sections: s.clone(),
                    sheet: None,
                })
                .collect(),
        ),
        output_format: OutputFormat::Json,
        ..SectionsRequest::default()
    }
}

fn run(ws: &Workspace, req: &SectionsRequest, limits: &BatchLimits) -> SectionsResponse {
    keiri_docs::extract_sections(&ws.policy, req, limits, &ws.cache)
        .unwrap()
        .json()
        .unwrap()
        .clone()
}

/// (file, label, start, end, text content) of every extracted section.
fn sections(res: &SectionsResponse) -> Vec<(String, Option<String>, u64, u64, String)> {
    res.results
        .iter()
        .flat_map(|r| {
            r.sections.iter().map(move |s| {
                let text = match &s.content {
                    SectionContent::Text(t) => t.clone(),
                    SectionContent::Lines(l) => l
                        .iter()
                        .map(|x| format!("{}:{}", x.line, x.text))
                        .collect::<Vec<_>>()
                        .join("|"),
                };
                (
                    r.file_path.clone(),
                    s.label.clone(),
                    s.start_line,
                    s.end_line,
                    text,
                )
            })
        })
        .collect()
}

fn codes(res: &SectionsResponse) -> Vec<String> {
    res.errors
        .iter()
        .chain(res.results.iter().flat_map(|r| r.errors.iter()))
        .map(|e| {
            format!(
                "{}:{}",
                e.code,
                e.limit.clone().or(e.file_path.clone()).unwrap_or_default()
            )
        })
        .collect()
}

fn s(v: &str) -> String {
    v.to_string()
}

#[test]
fn many_files_and_ranges_in_one_call() {
    let ws = workspace();
    let req = batch(&[
        (
            "ten.txt",
            vec![
                range(1, Some(2), Some("head")),
                range(9, None, None),
                range(5, Some(5), Some("mid")),
            ],
        ),
        ("doc.pdf", vec![range(2, Some(3), None)]),
        ("memo.docx", vec![range(1, None, None)]),
        ("book.xlsx", vec![range(2, Some(2), Some("row"))]),
    ]);
    let res = run(&ws, &req, &BatchLimits::default());
    assert!(res.success);
    assert_eq!(
        sections(&res),
        [
            (s("ten.txt"), Some(s("head")), 1, 2, s("line 1\nline 2")),
            (s("ten.txt"), None, 9, 10, s("line 9\nline 10")),
            (s("ten.txt"), Some(s("mid")), 5, 5, s("line 5")),
            (s("doc.pdf"), None, 2, 3, s("p1 b\np2 a")),
            (s("memo.docx"), None, 1, 2, s("件名\nA\tB")),
            (s("book.xlsx"), Some(s("row")), 2, 2, s("v1\tv2")),
        ]
    );
    assert_eq!(
        (
            res.files_requested,
            res.files_succeeded,
            res.sections_requested,
            res.sections_extracted
        ),
        (4, 4, 6, 6)
    );
    assert_eq!(res.results[0].total_lines, 10);
    assert_eq!(res.total_lines, 10);
    assert!(!res.truncated);
    assert!(res.errors.is_empty());
}

#[test]
fn content_formats() {
    let ws = workspace();
    for (format, expect) in [
        (
            ContentFormat::Text,
            SectionContent::Text(s("line 2\nline 3")),
        ),
        (
            ContentFormat::Raw,
            SectionContent::Text(s("line 2\r\nline 3\r\n")),
        ),
        (
            ContentFormat::Json,
            SectionContent::Lines(vec![
                NumberedLine {
                    line: 2,
                    text: s("line 2"),
                },
                NumberedLine {
                    line: 3,
                    text: s("line 3"),
                },
            ]),
        ),
    ] {
        let req = SectionsRequest {
            format,
            ..batch(&[("ten.txt", vec![range(2, Some(3), None)])])
        };
        let res = run(&ws, &req, &BatchLimits::default());
        assert_eq!(res.results[0].sections[0].content, expect, "{format:?}");
        assert_eq!(res.format, format);
    }
}

#[test]
fn single_range_form_and_input_errors() {
    let ws = workspace();
    let single = SectionsRequest {
        file_path: Some(s("ten.txt")),
        start_line: Some(3),
        end_line: Some(4),
        output_format: OutputFormat::Json,
        ..SectionsRequest::default()
    };
    let res = run(&ws, &single, &BatchLimits::default());
    assert_eq!(
        sections(&res),
        [(s("ten.txt"), None, 3, 4, s("line 3\nline 4"))]
    );

    let both = SectionsRequest {
        requests: batch(&[("ten.txt", vec![range(1, None, None)])]).requests,
        ..single.clone()
    };
    let neither = SectionsRequest::default();
    let no_start = SectionsRequest {
        start_line: None,
        ..single.clone()
    };
    let empty = SectionsRequest {
        requests: Some(vec![]),
        ..SectionsRequest::default()
    };
    let empty_sections = batch(&[("ten.txt", vec![])]);
    for req in [both, neither, no_start, empty, empty_sections] {
        let err =
            keiri_docs::extract_sections(&ws.policy, &req, &BatchLimits::default(), &ws.cache)
                .unwrap_err();
        assert_eq!(err.code(), "INVALID_REQUEST", "{req:?}");
    }
    // The JSON contract refuses unknown fields (a typo must not be silently ignored).
    let typo: Result<SectionsRequest, _> =
        serde_json::from_value(json!({"file_path": "a", "start_lines": 1}));
    assert!(typo.is_err());
}

#[test]
fn count_limits_fail_by_default_and_truncate_when_allowed() {
    let ws = workspace();
    let three_files = batch(&[
        ("ten.txt", vec![range(1, Some(1), None)]),
        ("doc.pdf", vec![range(1, Some(1), None)]),
        ("memo.docx", vec![range(1, Some(1), None)]),
    ]);
    let many_sections = batch(&[
        (
            "ten.txt",
            (1..=4).map(|i| range(i, Some(i), None)).collect(),
        ),
        ("doc.pdf", vec![range(1, None, None)]),
    ]);
    let cases: [(&str, &SectionsRequest, BatchLimits, usize); 3] = [
        (
            "max_files",
            &three_files,
            BatchLimits {
                max_files: 2,
                ..BatchLimits::default()
            },
            2,
        ),
        (
            "max_sections_per_file",
            &many_sections,
            BatchLimits {
                max_sections_per_file: 2,
                ..BatchLimits::default()
            },
            3,
        ),
        (
            "max_sections_total",
            &many_sections,
            BatchLimits {
                max_sections_total: 3,
                ..BatchLimits::default()
            },
            3,
        ),
    ];
    for (limit, req, limits, kept) in cases {
        let res = run(&ws, req, &limits);
        assert!(!res.success, "{limit}");
        assert!(
            res.results.is_empty(),
            "{limit}: nothing is returned when failing"
        );
        assert_eq!(codes(&res), [format!("LIMIT_EXCEEDED:{limit}")]);
        assert!(res.errors[0].message.contains(limit));

        let allowed = SectionsRequest {
            allow_truncate: true,
            ..(*req).clone()
        };
        let res = run(&ws, &allowed, &limits);
        assert!(res.success, "{limit}");
        assert!(res.truncated);
        assert_eq!(res.truncated_by, [limit]);
        assert_eq!(res.sections_extracted, kept, "{limit}");
        assert!(res.errors.is_empty());
    }
}

#[test]
fn every_exceeded_count_limit_is_named() {
    let ws = workspace();
    let req = batch(&[
        (
            "ten.txt",
            vec![range(1, Some(1), None), range(2, Some(2), None)],
        ),
        ("doc.pdf", vec![range(1, Some(1), None)]),
        ("memo.docx", vec![range(1, Some(1), None)]),
    ]);
    let limits = BatchLimits {
        max_files: 2,
        max_sections_total: 1,
        ..BatchLimits::default()
    };
    let res = run(&ws, &req, &limits);
    assert_eq!(
        codes(&res),
        [
            "LIMIT_EXCEEDED:max_files",
            "LIMIT_EXCEEDED:max_sections_total"
        ]
    );
    let res = run(
        &ws,
        &SectionsRequest {
            allow_truncate: true,
            ..req
        },
        &limits,
    );
    assert_eq!(res.truncated_by, ["max_files", "max_sections_total"]);
    assert_eq!(sections(&res), [(s("ten.txt"), None, 1, 1, s("line 1"))]);
}

#[test]
fn size_limits_fail_by_default_and_truncate_when_allowed() {
    let ws = workspace();
    let req = batch(&[
        (
            "ten.txt",
            vec![range(1, Some(3), None), range(4, Some(8), None)],
        ),
        ("doc.pdf", vec![range(1, None, None)]),
    ]);
    for (limit, limits, expect) in [
        (
            "max_total_lines",
            BatchLimits {
                max_total_lines: 5,
                ..BatchLimits::default()
            },
            vec![
                (1, 3, s("line 1\nline 2\nline 3")),
                (4, 5, s("line 4\nline 5")),
            ],
        ),
        // "line 1\nline 2\nline 3" is 20 bytes; "line 4" (6) fits in 27, "\nline 5" (7) does not.
        (
            "max_total_bytes",
            BatchLimits {
                max_total_bytes: 27,
                ..BatchLimits::default()
            },
            vec![(1, 3, s("line 1\nline 2\nline 3")), (4, 4, s("line 4"))],
        ),
    ] {
        let res = run(&ws, &req, &limits);
        assert!(!res.success);
        assert!(res.results.is_empty());
        assert_eq!(codes(&res), [format!("LIMIT_EXCEEDED:{limit}")]);

        let res = run(
            &ws,
            &SectionsRequest {
                allow_truncate: true,
                ..req.clone()
            },
            &limits,
        );
        assert!(res.success);
        assert!(res.truncated);
        assert_eq!(res.truncated_by, [limit]);
        let got: Vec<(u64, u64, String)> = sections(&res)
            .into_iter()
            .map(|(_, _, a, b, t)| (a, b, t))
            .collect();
        assert_eq!(got, expect, "{limit}");
        let flags: Vec<bool> = res.results[0]
            .sections
            .iter()
            .map(|s| s.truncated)
            .collect();
        assert_eq!(flags, [false, true]);
        assert_eq!(res.results.len(), 1, "the PDF after the cut is not read");
    }
    // The file size cap is per file: that file fails, the others continue.
    let res = run(
        &ws,
        &req,
        &BatchLimits {
            max_file_size_bytes: 100,
            ..BatchLimits::default()
        },
    );
    assert!(res.success);
    assert_eq!(codes(&res), [s("FILE_TOO_LARGE:doc.pdf")]);
    assert_eq!(res.sections_extracted, 2);
}

#[test]
fn partial_success_and_fail_fast() {
    let ws = workspace();
    let req = batch(&[
        ("missing.txt", vec![range(1, None, None)]),
        (
            "ten.txt",
            vec![
                range(0, None, None),
                range(11, None, None),
                range(5, Some(4), None),
                range(10, Some(99), Some("tail")),
            ],
        ),
        ("../escape.txt", vec![range(1, None, None)]),
        ("doc.pdf", vec![range(1, Some(1), None)]),
    ]);
    let res = run(&ws, &req, &BatchLimits::default());
    assert!(res.success, "partial success");
    assert_eq!(
        sections(&res),
        [
            (s("ten.txt"), Some(s("tail")), 10, 10, s("line 10")),
            (s("doc.pdf"), None, 1, 1, s("p1 a"))
        ]
    );
    assert_eq!(
        codes(&res),
        [
            "NOT_FOUND:missing.txt",
            // Outside the roots is refused whether or not the file exists (no probing).
            "PATH_DENIED:../escape.txt",
            "INVALID_RANGE:ten.txt",
            "LINE_OUT_OF_RANGE:ten.txt",
            "INVALID_RANGE:ten.txt"
        ]
    );
    let range_error = &res.results[0].errors[1];
    assert_eq!(
        (range_error.start_line, range_error.end_line),
        (Some(11), None)
    );
    assert_eq!((res.files_requested, res.files_succeeded), (4, 2));

    let res = run(
        &ws,
        &SectionsRequest {
            fail_fast: true,
            ..req.clone()
        },
        &BatchLimits::default(),
    );
    assert!(!res.success);
    assert_eq!(codes(&res), ["NOT_FOUND:missing.txt"]);
    assert!(res.results.is_empty());

    // Nothing readable at all is not a success.
    let res = run(
        &ws,
        &batch(&[("missing.txt", vec![range(1, None, None)])]),
        &BatchLimits::default(),
    );
    assert!(!res.success);
}

#[test]
fn toon_output_carries_no_json_detail() {
    let ws = workspace();
    let json_req = batch(&[
        (
            "ten.txt",
            vec![range(1, Some(2), Some("a")), range(3, Some(3), Some("b"))],
        ),
        ("missing.txt", vec![range(1, None, None)]),
    ]);
    let toon_req = SectionsRequest {
        output_format: OutputFormat::Toon,
        ..json_req.clone()
    };
    let json_out = run(&ws, &json_req, &BatchLimits::default());
    let toon_out =
        keiri_docs::extract_sections(&ws.policy, &toon_req, &BatchLimits::default(), &ws.cache)
            .unwrap();
    let toon = toon_out.toon().unwrap();
    let value = serde_json::to_value(&toon_out).unwrap();
    let keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "success",
            "format",
            "output_format",
            "toon_content",
            "count_files",
            "count_sections",
            "counts",
            "truncated",
            "limits",
            "error_summary"
        ]
    );
    // The seed's names: `format: "toon"`, `count_files` (the failed file too),
    // `count_sections`, `limits.max_file_size_bytes`; our `counts` stay beside them.
    assert_eq!(value["format"], "toon");
    assert_eq!(value["count_files"], 2);
    assert_eq!(value["count_sections"], 2);
    assert_eq!(value["limits"]["max_file_size_bytes"], 5 * 1024 * 1024);
    assert!(value["limits"].get("max_file_size").is_none());
    assert_eq!(json_out.count_files, 2);
    assert_eq!(json_out.count_sections, 2);
    assert!(
        !value.to_string().contains("\"results\""),
        "no JSON detail besides toon_content"
    );
    assert_eq!(
        value["counts"],
        json!({"files_requested": 2, "files_succeeded": 1, "sections_requested": 3, "sections_extracted": 2, "errors": 1})
    );
    assert_eq!(
        value["error_summary"],
        json!([{"code": "NOT_FOUND", "count": 1}])
    );
    // toon_content is the JSON response, encoded.
    let decoded: Value = toon_format::decode_default(&toon.toon_content).unwrap();
    assert_eq!(decoded, serde_json::to_value(&json_out).unwrap());
    // Default output format is TOON.
    assert_eq!(SectionsRequest::default().output_format, OutputFormat::Toon);
    let parsed: SectionsRequest =
        serde_json::from_value(json!({"file_path": "ten.txt", "start_line": 1})).unwrap();
    assert_eq!(parsed.output_format, OutputFormat::Toon);
}

#[test]
fn a_batch_reads_each_file_once() {
    let ws = workspace();
    let req = batch(&[
        ("ten.txt", vec![range(1, Some(1), None)]),
        ("doc.pdf", vec![range(1, Some(1), None)]),
        ("ten.txt", vec![range(2, Some(2), None)]),
        ("./ten.txt", vec![range(3, Some(3), None)]),
    ]);
    let res = run(&ws, &req, &BatchLimits::default());
    assert_eq!(res.sections_extracted, 4);
    let stats = ws.cache.stats();
    assert_eq!(
        stats.misses, 2,
        "ten.txt and doc.pdf are each extracted once: {stats:?}"
    );
    // A second call is served from the cache; a changed file is read again.
    run(&ws, &req, &BatchLimits::default());
    assert_eq!(ws.cache.stats().misses, 2);
    ws.put("ten.txt", b"changed\n");
    let res = run(
        &ws,
        &batch(&[("ten.txt", vec![range(1, None, None)])]),
        &BatchLimits::default(),
    );
    assert_eq!(sections(&res)[0].4, "changed");
    assert_eq!(ws.cache.stats().misses, 3);
}

#[test]
fn workbook_sheets_by_name_or_position() {
    let ws = Workspace::new();
    ws.put(
        "two.xlsx",
        &generate::xlsx(&[
            ("一", vec![vec![t("first")]]),
            ("二", vec![vec![t("second")], vec![t("more")]]),
        ]),
    );
    let file = |sheet: Option<&str>| FileSections {
        file_path: s("two.xlsx"),
        sections: vec![range(1, None, None)],
        sheet: sheet.map(String::from),
    };
    let req = SectionsRequest {
        requests: Some(vec![
            file(None),
            file(Some("#2")),
            file(Some("二")),
            file(Some("三")),
        ]),
        output_format: OutputFormat::Json,
        ..SectionsRequest::default()
    };
    let res = run(&ws, &req, &BatchLimits::default());
    let texts: Vec<String> = sections(&res).into_iter().map(|x| x.4).collect();
    assert_eq!(texts, ["first", "second\nmore", "second\nmore"]);
    assert_eq!(codes(&res), ["SHEET_NOT_FOUND:two.xlsx"]);
    let single = SectionsRequest {
        file_path: Some(s("two.xlsx")),
        start_line: Some(2),
        sheet: Some(s("#2")),
        output_format: OutputFormat::Json,
        ..SectionsRequest::default()
    };
    assert_eq!(
        sections(&run(&ws, &single, &BatchLimits::default()))[0].4,
        "more"
    );
}
