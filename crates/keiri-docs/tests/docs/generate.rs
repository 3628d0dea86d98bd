//! Small documents of every format, generated instead of committed: PDFs written by hand
//! (object by object, with a real cross-reference table), `.docx`/`.xlsx` as zips of XML,
//! and a Shift_JIS CSV. The benchmark includes this file too, to build its larger corpus.

#![allow(dead_code)]

use std::io::Write;

// ---------------------------------------------------------------- PDF

/// Writes PDF objects and a correct cross-reference table.
pub struct PdfWriter {
    objects: Vec<Vec<u8>>,
}

impl Default for PdfWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl PdfWriter {
    pub fn new() -> Self {
        PdfWriter {
            objects: Vec::new(),
        }
    }

    /// Reserves the next object number.
    pub fn reserve(&mut self) -> usize {
        self.objects.push(Vec::new());
        self.objects.len()
    }

    pub fn set(&mut self, id: usize, body: impl Into<Vec<u8>>) {
        self.objects[id - 1] = body.into();
    }

    pub fn add(&mut self, body: impl Into<Vec<u8>>) -> usize {
        let id = self.reserve();
        self.set(id, body);
        id
    }

    /// A stream object; `compress` deflates it with `/FlateDecode`.
    pub fn add_stream(&mut self, extra_dict: &str, data: &[u8], compress: bool) -> usize {
        let (data, filter) = if compress {
            (zlib(data), "/Filter /FlateDecode ")
        } else {
            (data.to_vec(), "")
        };
        let mut body =
            format!("<< {filter}/Length {} {extra_dict}>>\nstream\n", data.len()).into_bytes();
        body.extend_from_slice(&data);
        body.extend_from_slice(b"\nendstream");
        self.add(body)
    }

    /// The file, with `trailer_extra` added to the trailer dictionary.
    pub fn finish(&self, root: usize, trailer_extra: &str) -> Vec<u8> {
        let mut out = b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n".to_vec();
        let mut offsets = Vec::new();
        for (i, body) in self.objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
            out.extend_from_slice(body);
            out.extend_from_slice(b"\nendobj\n");
        }
        let xref = out.len();
        out.extend_from_slice(
            format!("xref\n0 {}\n0000000000 65535 f \n", self.objects.len() + 1).as_bytes(),
        );
        for o in offsets {
            out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
        }
        out.extend_from_slice(
            format!(
                "trailer\n<< /Size {} /Root {root} 0 R {trailer_extra}>>\nstartxref\n{xref}\n%%EOF\n",
                self.objects.len() + 1
            )
            .as_bytes(),
        );
        out
    }
}

pub fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn pdf_literal(s: &str) -> String {
    let mut out = String::from("(");
    for c in s.chars() {
        match c {
            '(' | ')' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out.push(')');
    out
}

/// A PDF with one page per entry; each page draws its lines with Helvetica (WinAnsi), one
/// `Td` line step apart. Content streams are deflated when `compress`.
pub fn pdf(pages: &[Vec<String>], compress: bool) -> Vec<u8> {
    let mut w = PdfWriter::new();
    let catalog = w.reserve();
    let tree = w.reserve();
    let font =
        w.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
    let mut kids = Vec::new();
    for lines in pages {
        let mut content = String::from("BT /F1 11 Tf 14 TL 72 760 Td\n");
        for line in lines {
            content.push_str(&format!("{} Tj T*\n", pdf_literal(line)));
        }
        content.push_str("ET\n");
        let stream = w.add_stream("", content.as_bytes(), compress);
        kids.push(w.add(format!(
            "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 595 842] /Contents {stream} 0 R >>"
        )));
    }
    let kid_refs: Vec<String> = kids.iter().map(|k| format!("{k} 0 R")).collect();
    w.set(
        tree,
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} /Resources << /Font << /F1 {font} 0 R >> >> >>",
            kid_refs.join(" "),
            kids.len()
        ),
    );
    w.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    w.finish(catalog, "")
}

/// A PDF whose text uses a Type0 font (Identity-H, two-byte codes) with a ToUnicode CMap, as
/// Word and Excel write Japanese. Codes are assigned per distinct character.
pub fn pdf_cjk(pages: &[Vec<String>]) -> Vec<u8> {
    let mut chars: Vec<char> = Vec::new();
    for c in pages.iter().flatten().flat_map(|l| l.chars()) {
        if !chars.contains(&c) {
            chars.push(c);
        }
    }
    let code = |c: char| chars.iter().position(|&x| x == c).unwrap() + 1;
    let mut cmap = String::from(
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n\
         /CMapName /Adobe-Identity-UCS def /CMapType 2 def\n\
         1 begincodespacerange <0000> <FFFF> endcodespacerange\n",
    );
    for chunk in chars.chunks(100) {
        cmap.push_str(&format!("{} beginbfchar\n", chunk.len()));
        for &c in chunk {
            let utf16: String = c
                .encode_utf16(&mut [0; 2])
                .iter()
                .map(|u| format!("{u:04X}"))
                .collect();
            cmap.push_str(&format!("<{:04X}> <{utf16}>\n", code(c)));
        }
        cmap.push_str("endbfchar\n");
    }
    cmap.push_str("endcmap CMapName currentdict /CMap defineresource pop end end\n");
    let mut w = PdfWriter::new();
    let catalog = w.reserve();
    let tree = w.reserve();
    let to_unicode = w.add_stream("", cmap.as_bytes(), true);
    let descendant = w.add(
        "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /MSGothic \
         /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 >>",
    );
    let font = w.add(format!(
        "<< /Type /Font /Subtype /Type0 /BaseFont /MSGothic /Encoding /Identity-H \
         /DescendantFonts [{descendant} 0 R] /ToUnicode {to_unicode} 0 R >>"
    ));
    let mut kids = Vec::new();
    for lines in pages {
        // Word-style: each line positioned absolutely with Tm, glyphs as hex strings.
        let mut content = String::from("BT /F1 10.5 Tf\n");
        for (i, line) in lines.iter().enumerate() {
            let hex: String = line.chars().map(|c| format!("{:04X}", code(c))).collect();
            content.push_str(&format!("1 0 0 1 72 {} Tm <{hex}> Tj\n", 760 - 16 * i));
        }
        content.push_str("ET\n");
        let stream = w.add_stream("", content.as_bytes(), true);
        kids.push(w.add(format!(
            "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 595 842] /Contents {stream} 0 R \
             /Resources << /Font << /F1 {font} 0 R >> >> >>"
        )));
    }
    let kid_refs: Vec<String> = kids.iter().map(|k| format!("{k} 0 R")).collect();
    w.set(
        tree,
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kid_refs.join(" "),
            kids.len()
        ),
    );
    w.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    w.finish(catalog, "")
}

// ---------------------------------------------------------------- zip containers

pub fn zip(entries: &[(&str, &[u8])]) -> Vec<u8> {
    zip_level(entries, 1)
}

/// A zip deflated at `level` (9 makes the smallest bombs).
pub fn zip_level(entries: &[(&str, &[u8])], level: i64) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(level))
        .large_file(true);
    for (name, data) in entries {
        w.start_file(*name, opts).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A docx body element: a paragraph.
pub fn para(text: &str) -> String {
    format!(
        r#"<w:p><w:r><w:t xml:space="preserve">{}</w:t></w:r></w:p>"#,
        xml_escape(text)
    )
}

/// A docx body element: a table of rows of cells.
pub fn table(rows: &[&[&str]]) -> String {
    let mut out = String::from("<w:tbl><w:tblPr><w:tblW w:w=\"0\" w:type=\"auto\"/></w:tblPr>");
    for row in rows {
        out.push_str("<w:tr>");
        for cell in *row {
            out.push_str(&format!("<w:tc><w:tcPr/>{}</w:tc>", para(cell)));
        }
        out.push_str("</w:tr>");
    }
    out.push_str("</w:tbl>");
    out
}

/// A `.docx` whose body is `body` (paragraph and table elements).
pub fn docx(body: &str) -> Vec<u8> {
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}<w:sectPr/></w:body></w:document>"#
    );
    zip(&[
        ("[Content_Types].xml", br#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#),
        ("_rels/.rels", br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#),
        ("word/document.xml", document.as_bytes()),
    ])
}

/// A workbook cell value.
#[derive(Clone, Debug)]
pub enum Cell {
    Text(String),
    Number(f64),
    Empty,
}

pub fn t(s: &str) -> Cell {
    Cell::Text(s.to_string())
}

pub fn n(v: f64) -> Cell {
    Cell::Number(v)
}

fn col_letters(mut c: usize) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'A' + (c % 26) as u8);
        if c < 26 {
            break;
        }
        c = c / 26 - 1;
    }
    out.reverse();
    String::from_utf8(out).unwrap()
}

/// A sheet's XML; texts go to the shared string table `strings`.
fn sheet_xml(rows: &[Vec<Cell>], strings: &mut Vec<String>, extra_cells: &str) -> String {
    let mut out = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>"#,
    );
    for (r, row) in rows.iter().enumerate() {
        out.push_str(&format!(r#"<row r="{}">"#, r + 1));
        for (c, cell) in row.iter().enumerate() {
            let at = format!("{}{}", col_letters(c), r + 1);
            match cell {
                Cell::Text(s) => {
                    let i = strings.iter().position(|x| x == s).unwrap_or_else(|| {
                        strings.push(s.clone());
                        strings.len() - 1
                    });
                    out.push_str(&format!(r#"<c r="{at}" t="s"><v>{i}</v></c>"#));
                }
                Cell::Number(v) => out.push_str(&format!(r#"<c r="{at}"><v>{v}</v></c>"#)),
                Cell::Empty => {}
            }
        }
        out.push_str("</row>");
    }
    out.push_str(extra_cells);
    out.push_str("</sheetData></worksheet>");
    out
}

/// An `.xlsx` with the given sheets (name, rows). `extra_cells` is raw XML appended to the
/// first sheet's data (for sparse far-away cells).
pub fn xlsx_with(sheets: &[(&str, Vec<Vec<Cell>>)], extra_cells: &str) -> Vec<u8> {
    let mut strings = Vec::new();
    let sheet_xmls: Vec<String> = sheets
        .iter()
        .enumerate()
        .map(|(i, (_, rows))| sheet_xml(rows, &mut strings, if i == 0 { extra_cells } else { "" }))
        .collect();
    let mut workbook = String::from(
        r#"<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>"#,
    );
    let mut rels = String::from(
        r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"#,
    );
    let mut types = String::from(
        r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>"#,
    );
    for (i, (name, _)) in sheets.iter().enumerate() {
        workbook.push_str(&format!(
            r#"<sheet name="{}" sheetId="{}" r:id="rId{}"/>"#,
            xml_escape(name),
            i + 1,
            i + 1
        ));
        rels.push_str(&format!(
            r#"<Relationship Id="rId{}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet{}.xml"/>"#,
            i + 1,
            i + 1
        ));
        types.push_str(&format!(
            r#"<Override PartName="/xl/worksheets/sheet{}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>"#,
            i + 1
        ));
    }
    workbook.push_str("</sheets></workbook>");
    rels.push_str(&format!(
        r#"<Relationship Id="rId{}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>"#,
        sheets.len() + 1
    ));
    types.push_str("</Types>");
    let mut sst = format!(
        r#"<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="{0}" uniqueCount="{0}">"#,
        strings.len()
    );
    for s in &strings {
        sst.push_str(&format!("<si><t>{}</t></si>", xml_escape(s)));
    }
    sst.push_str("</sst>");
    let names: Vec<String> = (0..sheets.len())
        .map(|i| format!("xl/worksheets/sheet{}.xml", i + 1))
        .collect();
    let mut entries: Vec<(&str, &[u8])> = vec![
        ("[Content_Types].xml", types.as_bytes()),
        ("_rels/.rels", br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#),
        ("xl/workbook.xml", workbook.as_bytes()),
        ("xl/_rels/workbook.xml.rels", rels.as_bytes()),
        ("xl/sharedStrings.xml", sst.as_bytes()),
    ];
    for (name, xml) in names.iter().zip(&sheet_xmls) {
        entries.push((name, xml.as_bytes()));
    }
    zip(&entries)
}

pub fn xlsx(sheets: &[(&str, Vec<Vec<Cell>>)]) -> Vec<u8> {
    xlsx_with(sheets, "")
}

// ---------------------------------------------------------------- text

pub fn shift_jis(text: &str) -> Vec<u8> {
    let (bytes, _, unmappable) = encoding_rs::SHIFT_JIS.encode(text);
    assert!(!unmappable, "test text must be representable in Shift_JIS");
    bytes.into_owned()
}

/// The sample invoice CSV used across tests.
pub const INVOICE_CSV: &str = "請求番号,取引先,金額,摘要\r\nINV-001,株式会社サンプル,110000,システム保守（１月分）\r\nINV-002,デジタル工房,55000,ソフトウェア使用料\r\n";
