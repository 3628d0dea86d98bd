//! Shared helpers: fixture lookup, a scratch workspace with a path policy, a tiny workbook
//! writer for generated test workbooks, and an independent reader (calamine) for checking
//! results.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use calamine::{Data, Reader};
use keiri_xlsx::{PatchEnv, PatchRequest, PatchResponse};

/// The shared fixtures (`../shared/fixtures` beside the checkout; see keiri-testkit for what a
/// test does when they are absent).
pub fn fixtures_dir() -> PathBuf {
    keiri_testkit::shared_fixtures_dir()
}

pub fn fixture(rel: &str) -> PathBuf {
    let p = fixtures_dir().join(rel);
    assert!(p.is_file(), "fixture {} is missing", p.display());
    p
}

/// A temporary directory that is the only allowed root.
pub struct Workspace {
    pub dir: tempfile::TempDir,
    pub env: PatchEnv,
}

impl Workspace {
    pub fn new() -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let env = PatchEnv::new(keiri_fs::PathPolicy::new([dir.path()]));
        Workspace { dir, env }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Copies a fixture into the workspace (at test time only; fixtures are never copied into
    /// the repository) and returns its name.
    pub fn add_fixture(&self, rel: &str) -> String {
        let src = fixture(rel);
        let name = src.file_name().unwrap().to_string_lossy().into_owned();
        keiri_fs::write_atomic(&self.path(&name), &std::fs::read(&src).unwrap()).unwrap();
        name
    }

    pub fn add_file(&self, name: &str, bytes: &[u8]) -> String {
        keiri_fs::write_atomic(&self.path(name), bytes).unwrap();
        name.to_string()
    }

    /// Runs a request given as JSON (the way clients send it).
    pub fn run(&self, request: serde_json::Value) -> Result<PatchResponse, keiri_xlsx::Error> {
        let req: PatchRequest = serde_json::from_value(request).unwrap();
        keiri_xlsx::patch(&req, &self.env)
    }

    pub fn ok(&self, request: serde_json::Value) -> PatchResponse {
        let res = self
            .run(request.clone())
            .unwrap_or_else(|e| panic!("{request}: {e}"));
        assert!(res.error.is_none(), "{request}: {:?}", res.error);
        res
    }
}

/// A cell for [`build_xlsx`].
#[derive(Clone)]
pub enum Cell {
    N(f64),
    S(&'static str),
    F(&'static str),
    /// An array formula anchored here, over the range given (`{=…}` in Excel).
    A(&'static str, &'static str),
}

/// Writes a minimal workbook: one worksheet part per sheet, shared strings for text.
pub fn build_xlsx(sheets: &[(&str, Vec<(&str, Cell)>)]) -> Vec<u8> {
    let mut strings: Vec<&str> = Vec::new();
    let mut parts: Vec<(String, String)> = Vec::new();
    for (i, (_, cells)) in sheets.iter().enumerate() {
        let mut rows: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        let mut sorted: Vec<(keiri_xlsx::CellRef, Cell)> = cells
            .iter()
            .map(|(a, c)| (keiri_xlsx::CellRef::parse(a).unwrap(), c.clone()))
            .collect();
        sorted.sort_by_key(|(c, _)| *c);
        for (at, cell) in sorted {
            let xml = match cell {
                Cell::N(n) => format!(r#"<c r="{at}"><v>{n}</v></c>"#),
                Cell::S(s) => {
                    let idx = strings.iter().position(|x| *x == s).unwrap_or_else(|| {
                        strings.push(s);
                        strings.len() - 1
                    });
                    format!(r#"<c r="{at}" t="s"><v>{idx}</v></c>"#)
                }
                Cell::F(f) => format!(
                    r#"<c r="{at}"><f>{}</f></c>"#,
                    f.replace('&', "&amp;")
                        .replace('<', "&lt;")
                        .replace('>', "&gt;")
                ),
                Cell::A(f, area) => {
                    format!(r#"<c r="{at}"><f t="array" ref="{area}">{f}</f><v>0</v></c>"#)
                }
            };
            rows.entry(at.row).or_default().push(xml);
        }
        let data: String = rows
            .iter()
            .map(|(r, cells)| format!(r#"<row r="{r}">{}</row>"#, cells.concat()))
            .collect();
        parts.push((
            format!("xl/worksheets/sheet{}.xml", i + 1),
            format!(r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{data}</sheetData></worksheet>"#),
        ));
    }
    let sheet_list: String = sheets
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            format!(
                r#"<sheet name="{name}" sheetId="{}" r:id="rId{}"/>"#,
                i + 1,
                i + 1
            )
        })
        .collect();
    let rels: String = (1..=sheets.len())
        .map(|i| format!(r#"<Relationship Id="rId{i}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet{i}.xml"/>"#))
        .collect();
    let n = sheets.len();
    let overrides: String = (1..=n)
        .map(|i| format!(r#"<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>"#))
        .collect();
    let sst: String = strings
        .iter()
        .map(|s| format!("<si><t>{s}</t></si>"))
        .collect();
    let mut files = vec![
        ("[Content_Types].xml".to_string(), format!(r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>{overrides}<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>"#)),
        ("_rels/.rels".to_string(), r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#.to_string()),
        ("xl/workbook.xml".to_string(), format!(r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>{sheet_list}</sheets><calcPr calcId="191029"/></workbook>"#)),
        ("xl/_rels/workbook.xml.rels".to_string(), format!(r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{rels}<Relationship Id="rId{}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>"#, n + 1)),
        ("xl/sharedStrings.xml".to_string(), format!(r#"<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="{0}" uniqueCount="{0}">{sst}</sst>"#, strings.len())),
    ];
    files.extend(parts);
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in files {
        w.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(text.as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// Every zip entry's name and decompressed bytes.
pub fn entries(path: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut z = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = BTreeMap::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let mut buf = Vec::new();
        f.read_to_end(&mut buf).unwrap();
        out.insert(f.name().unwrap().to_string(), buf);
    }
    out
}

/// Every entry's raw (still compressed) bytes and CRC.
pub fn raw_entries(path: &Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = BTreeMap::new();
    for i in 0..z.len() {
        let mut f = z.by_index_raw(i).unwrap();
        let mut buf = Vec::new();
        f.read_to_end(&mut buf).unwrap();
        out.insert(f.name().unwrap().to_string(), (f.crc32(), buf));
    }
    out
}

/// Every non-empty cell as calamine (an independent reader) sees it: `=formula` for formula
/// cells, else the value as text. Keyed by (sheet, A1).
pub fn cells(path: &Path) -> BTreeMap<(String, String), String> {
    let mut wb = calamine::open_workbook_auto(path)
        .unwrap_or_else(|e| panic!("calamine cannot open {}: {e}", path.display()));
    let mut out = BTreeMap::new();
    for name in wb.sheet_names() {
        let values = wb.worksheet_range(&name).unwrap();
        if let Some((r0, c0)) = values.start() {
            for (r, c, v) in values.used_cells() {
                let text = match v {
                    Data::Empty => continue,
                    Data::String(s) if s.is_empty() => continue,
                    Data::Float(f) => format!("{f}"),
                    Data::Int(i) => format!("{i}"),
                    other => other.to_string(),
                };
                let at = keiri_xlsx::CellRef {
                    row: r0 + r as u32 + 1,
                    col: c0 + c as u32 + 1,
                };
                out.insert((name.clone(), at.to_a1()), text);
            }
        }
        let formulas = wb.worksheet_formula(&name).unwrap();
        if let Some((r0, c0)) = formulas.start() {
            for (r, c, f) in formulas.used_cells() {
                if f.is_empty() {
                    continue;
                }
                let at = keiri_xlsx::CellRef {
                    row: r0 + r as u32 + 1,
                    col: c0 + c as u32 + 1,
                };
                out.insert((name.clone(), at.to_a1()), format!("={f}"));
            }
        }
    }
    out
}

pub fn cell(path: &Path, sheet: &str, a1: &str) -> Option<String> {
    cells(path)
        .get(&(sheet.to_string(), a1.to_string()))
        .cloned()
}

/// A two-sheet workbook without styles in `ws`: `明細` (`A1` text, `B1` 1200, `B2` a formula
/// without a cached value) and `集計` (`A1` 1.5). Returns its name.
pub fn two_sheet_ledger(ws: &Workspace) -> String {
    ws.add_file(
        "ledger.xlsx",
        &build_xlsx(&[
            (
                "明細",
                vec![
                    ("A1", Cell::S("品目")),
                    ("B1", Cell::N(1200.0)),
                    ("B2", Cell::F("SUM(B1:B1)")),
                ],
            ),
            ("集計", vec![("A1", Cell::N(1.5))]),
        ]),
    )
}
