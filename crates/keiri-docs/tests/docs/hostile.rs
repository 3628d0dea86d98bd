//! Corrupt, encrypted and hostile files: a typed error per file, never a panic or a hang,
//! and the other files of a batch still extract.

use keiri_docs::{ExtractRequest, Format};

use super::generate::{self, PdfWriter, para, zip};
use super::{Workspace, extract, lines};

fn check(format: Format, bytes: &[u8], expect: Result<&str, &str>) {
    match (extract(bytes, format), expect) {
        (Ok(got), Ok(text)) => assert_eq!(got.text, text, "{format:?}"),
        (Err(e), Err(code)) => assert_eq!(e.code(), code, "{format:?}: {e}"),
        (got, want) => panic!("{format:?}: got {got:?}, want {want:?}"),
    }
}

/// A one-page PDF whose page dictionary and content are given.
fn pdf_with(page_extra: &str, content: &[u8], extra_objects: &[&str]) -> Vec<u8> {
    let mut w = PdfWriter::new();
    let catalog = w.reserve();
    let tree = w.reserve();
    let page = w.reserve();
    let font = w.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
    let stream = w.add_stream("", content, true);
    for o in extra_objects {
        w.add(*o);
    }
    w.set(page, format!("<< /Type /Page /Parent {tree} 0 R /Contents {stream} 0 R /Resources << /Font << /F1 {font} 0 R >> {page_extra} >> >>"));
    w.set(
        tree,
        format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>"),
    );
    w.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    w.finish(catalog, "")
}

#[test]
fn broken_pdfs() {
    check(Format::Pdf, b"not a pdf at all", Err("CORRUPT_FILE"));
    check(Format::Pdf, b"%PDF-1.4\n%%EOF", Err("CORRUPT_FILE"));
    let good = generate::pdf(&[lines(&["hello"])], true);
    // Cut before the cross-reference table: no xref, no trailer; the repair scan finds the
    // objects and the catalog.
    let xref_at = good.windows(6).rposition(|w| w == b"\nxref\n").unwrap() + 1;
    check(Format::Pdf, &good[..xref_at], Ok("hello"));
    // Every offset in the table is wrong: the repair scan rebuilds them.
    let shifted = [b"%PDF-1.7\n%junk junk junk junk\n".as_slice(), &good[9..]].concat();
    check(Format::Pdf, &shifted, Ok("hello"));
}

#[test]
fn encrypted_pdf_is_reported() {
    let mut w = PdfWriter::new();
    let catalog = w.reserve();
    let tree = w.add("<< /Type /Pages /Kids [] /Count 0 >>");
    let encrypt = w.add("<< /Filter /Standard /V 2 /R 3 /Length 128 /O <00> /U <00> /P -44 >>");
    w.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    check(
        Format::Pdf,
        &w.finish(catalog, &format!("/Encrypt {encrypt} 0 R /ID [<01> <01>] ")),
        Err("ENCRYPTED"),
    );
}

#[test]
fn looping_pdf_structures_terminate() {
    // A page tree whose Kids contain the tree itself, a form XObject that draws itself, a
    // /Prev chain pointing at its own section, and a /Length that refers to its own stream.
    let mut w = PdfWriter::new();
    let catalog = w.reserve();
    let tree = w.reserve();
    let page = w.reserve();
    let font = w.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
    let form = w.reserve();
    w.set(form, format!("<< /Type /XObject /Subtype /Form /BBox [0 0 10 10] /Length {form} 0 R /Resources << /XObject << /X {form} 0 R >> /Font << /F1 {font} 0 R >> >> >>\nstream\nBT /F1 9 Tf 50 10 Td (in form) Tj ET /X Do\nendstream"));
    let content = w.add_stream("", b"BT /F1 9 Tf 10 10 Td (on page) Tj ET /X Do", false);
    w.set(page, format!("<< /Type /Page /Parent {tree} 0 R /Contents {content} 0 R /Resources << /Font << /F1 {font} 0 R >> /XObject << /X {form} 0 R >> >> >>"));
    w.set(
        tree,
        format!("<< /Type /Pages /Kids [{page} 0 R {tree} 0 R] /Count 1 >>"),
    );
    w.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    let bytes = w.finish(catalog, "");
    // Point /Prev of the only xref section at itself (the trailer follows the table, so the
    // insertion moves no offset).
    let xref_at = bytes.windows(6).rposition(|w| w == b"\nxref\n").unwrap() + 1;
    let root_at = bytes.windows(5).rposition(|w| w == b"/Root").unwrap();
    let bytes = [
        &bytes[..root_at],
        format!("/Prev {xref_at} ").as_bytes(),
        &bytes[root_at..],
    ]
    .concat();
    let got = extract(&bytes, Format::Pdf).unwrap();
    assert_eq!(got.text, "on page in form");
    assert_eq!(got.pages_total, Some(1));
}

#[test]
fn pdf_bombs_and_deep_nesting() {
    // 80 MiB of zeros deflate to about 80 KiB; one stream may inflate to 64 MiB.
    let zeros = vec![b' '; 80 << 20];
    check(
        Format::Pdf,
        &pdf_with("", &zeros, &[]),
        Err("DECOMPRESSION_LIMIT"),
    );
    // Operands nested 10,000 deep in the content stream.
    let deep = format!("BT {} (x) Tj ET", "[".repeat(10_000));
    check(
        Format::Pdf,
        &pdf_with("", deep.as_bytes(), &[]),
        Err("STRUCTURE_LIMIT"),
    );
    // A resource dictionary nested 10,000 deep.
    let nested = format!("/Deep {}", "[".repeat(10_000));
    check(
        Format::Pdf,
        &pdf_with(&nested, b"BT /F1 9 Tf (x) Tj ET", &[]),
        Err("STRUCTURE_LIMIT"),
    );
}

/// A minimal OLE compound file header with an `EncryptedPackage` directory name, which is how
/// Office stores a password-protected .docx/.xlsx.
fn encrypted_ole() -> Vec<u8> {
    let mut bytes = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1".to_vec();
    bytes.resize(512, 0);
    bytes.extend("EncryptedPackage".encode_utf16().flat_map(u16::to_le_bytes));
    bytes.resize(2048, 0);
    bytes
}

#[test]
fn office_files() {
    check(Format::Docx, &encrypted_ole(), Err("ENCRYPTED"));
    check(Format::Xlsx, &encrypted_ole(), Err("ENCRYPTED"));
    let mut legacy = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1".to_vec();
    legacy.resize(1024, 0);
    check(Format::Docx, &legacy, Err("UNSUPPORTED_FORMAT"));
    check(
        Format::Docx,
        b"PK\x03\x04 truncated zip",
        Err("CORRUPT_FILE"),
    );
    check(
        Format::Xlsx,
        b"definitely not a workbook",
        Err("CORRUPT_FILE"),
    );
    check(
        Format::Docx,
        &zip(&[("word/other.xml", b"<x/>")]),
        Err("CORRUPT_FILE"),
    );
    check(
        Format::Docx,
        &generate::docx("<w:p w:x=\"unterminated></w:p>"),
        Err("CORRUPT_FILE"),
    );
}

#[test]
fn zip_bombs() {
    // One 130 MiB entry (limit 128 MiB per entry).
    let big = vec![b' '; 130 << 20];
    let doc = generate::zip_level(&[("_rels/.rels", b""), ("word/document.xml", &big)], 9);
    assert!(
        doc.len() < 1 << 20,
        "the bomb is small on disk: {} bytes",
        doc.len()
    );
    check(Format::Docx, &doc, Err("DECOMPRESSION_LIMIT"));
    // Three 100 MiB entries: each under the entry limit, together over 256 MiB.
    let part = vec![b' '; 100 << 20];
    let book = generate::zip_level(
        &[
            ("xl/a.xml", &part),
            ("xl/b.xml", &part),
            ("xl/c.xml", &part),
        ],
        9,
    );
    check(Format::Xlsx, &book, Err("DECOMPRESSION_LIMIT"));
}

#[test]
fn binary_renamed_to_text() {
    check(
        Format::Txt,
        b"\x7FELF\x02\x01\x01\0\0\0\0\0",
        Err("BINARY_CONTENT"),
    );
    check(
        Format::Csv,
        &generate::pdf(&[lines(&["x"])], false),
        Err("BINARY_CONTENT"),
    );
    check(
        Format::Txt,
        &generate::docx(&para("x")),
        Err("BINARY_CONTENT"),
    );
}

#[test]
fn one_bad_file_does_not_stop_the_others() {
    let ws = Workspace::new();
    ws.put("good.txt", "正常なファイル".as_bytes());
    ws.put("bad.pdf", b"%PDF-1.4 garbage");
    ws.put("locked.xlsx", &encrypted_ole());
    ws.put("binary.txt", b"\0\x01\x02\x03");
    ws.put("note.doc", b"whatever");
    ws.put("good.docx", &generate::docx(&para("本文")));
    let req = ExtractRequest {
        file_paths: [
            "good.txt",
            "bad.pdf",
            "locked.xlsx",
            "binary.txt",
            "missing.md",
            "note.doc",
            "good.docx",
        ]
        .map(String::from)
        .to_vec(),
        ..ExtractRequest::default()
    };
    let out = keiri_docs::extract_files(&ws.policy, &req, &ws.cache).unwrap();
    let res = out.json().unwrap();
    assert!(!res.success);
    let texts: Vec<(&str, &str)> = res
        .files
        .iter()
        .map(|f| (f.file_path.as_str(), f.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        [("good.txt", "正常なファイル"), ("good.docx", "本文")]
    );
    let codes: Vec<(&str, &str)> = res
        .errors
        .iter()
        .map(|e| (e.file_path.as_deref().unwrap(), e.code.as_str()))
        .collect();
    assert_eq!(
        codes,
        [
            ("bad.pdf", "CORRUPT_FILE"),
            ("locked.xlsx", "ENCRYPTED"),
            ("binary.txt", "BINARY_CONTENT"),
            ("missing.md", "NOT_FOUND"),
            ("note.doc", "UNSUPPORTED_FORMAT"),
        ]
    );
    assert!(
        res.errors[3].message.contains("No such file"),
        "{}",
        res.errors[3].message
    );
}

#[test]
fn paths_outside_the_workspace_are_denied() {
    let ws = Workspace::new();
    let outside = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(&outside.path().join("secret.txt"), b"secret").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        ws.dir.path().join("link.txt"),
    )
    .unwrap();
    let mut paths = vec![outside.path().join("secret.txt").display().to_string()];
    if cfg!(unix) {
        paths.push("link.txt".into());
    }
    let req = ExtractRequest {
        file_paths: paths,
        ..ExtractRequest::default()
    };
    let out = keiri_docs::extract_files(&ws.policy, &req, &ws.cache).unwrap();
    let res = out.json().unwrap();
    assert!(res.files.is_empty());
    assert!(
        res.errors.iter().all(|e| e.code == "PATH_DENIED"),
        "{:?}",
        res.errors
    );
}
