//! One file to text: format detection and the per-format extractors behind one function.

use std::io::Read;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::{docx, guard, lines, pdf, text, xlsx};

/// A document format this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Txt,
    Md,
    Csv,
    Pdf,
    Docx,
    Xlsx,
    Xlsm,
    /// Source code and configuration (`.py`, `.rs`, `.ts`, `.json`, `.yaml`, `Makefile`, …):
    /// read as text, so their sections can be read and their scale checked.
    Code,
}

/// Extensions of source code and configuration files, read as text ([`Format::Code`]).
const CODE_EXTENSIONS: &[&str] = &[
    "py",
    "pyi",
    "rs",
    "ts",
    "tsx",
    "js",
    "jsx",
    "mjs",
    "cjs",
    "java",
    "kt",
    "kts",
    "go",
    "rb",
    "php",
    "c",
    "h",
    "cc",
    "cpp",
    "cxx",
    "hpp",
    "cs",
    "swift",
    "scala",
    "sh",
    "bash",
    "zsh",
    "ps1",
    "bat",
    "sql",
    "r",
    "lua",
    "pl",
    "dart",
    "vue",
    "svelte",
    "json",
    "jsonc",
    "jsonl",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "properties",
    "xml",
    "html",
    "htm",
    "css",
    "scss",
    "rst",
    "tex",
    "ipynb",
    "gradle",
    "proto",
    "graphql",
    "tf",
];

/// File names without an extension that are code or configuration.
const CODE_NAMES: &[&str] = &["makefile", "dockerfile", "justfile", "gemfile", "rakefile"];

impl Format {
    /// The format named by a path's extension (case-insensitive).
    pub fn from_path(path: &Path) -> Result<Format> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        Ok(match ext.as_str() {
            "txt" | "text" | "log" => Format::Txt,
            "md" | "markdown" => Format::Md,
            "csv" | "tsv" => Format::Csv,
            "pdf" => Format::Pdf,
            "docx" => Format::Docx,
            "xlsx" => Format::Xlsx,
            "xlsm" => Format::Xlsm,
            e if CODE_EXTENSIONS.contains(&e) => Format::Code,
            "" if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| CODE_NAMES.contains(&n.to_ascii_lowercase().as_str())) =>
            {
                Format::Code
            }
            "" => return Err(Error::UnsupportedFormat("file has no extension".into())),
            other => return Err(Error::UnsupportedFormat(format!(".{other}"))),
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Txt => "txt",
            Format::Md => "md",
            Format::Csv => "csv",
            Format::Pdf => "pdf",
            Format::Docx => "docx",
            Format::Xlsx => "xlsx",
            Format::Xlsm => "xlsm",
            Format::Code => "code",
        }
    }
}

/// How one file is turned into text. Part of the cache key, so it holds only what changes
/// the result.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExtractOptions {
    /// PDF pages read.
    pub max_pages: usize,
    /// Characters kept (after line-ending normalisation); `None` keeps everything.
    pub max_chars: Option<usize>,
    /// Workbook sheet (name, or `#n` for the n-th); the first worksheet by default.
    pub sheet: Option<String>,
    /// Workbook range in A1 notation; the top-left window of the used range by default.
    pub range: Option<String>,
    /// Rows and columns of the default workbook window.
    pub max_rows: u32,
    pub max_cols: u32,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            max_pages: 20,
            max_chars: None,
            sheet: None,
            range: None,
            max_rows: 500,
            max_cols: 50,
        }
    }
}

/// Something left out of a file's text, reported instead of silently dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Cut {
    /// The limit that cut: `max_pages`, `max_chars_per_file`, `max_total_chars`,
    /// `sheet_window`.
    pub limit: String,
    pub message: String,
}

/// A file's text and what is known about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    pub format: Format,
    /// Detected encoding of a plain-text file.
    pub encoding: Option<String>,
    /// The text. Plain-text files keep their original line endings (for `raw` sections);
    /// extracted formats use `\n`.
    pub text: String,
    pub pages_total: Option<usize>,
    pub pages_extracted: Option<usize>,
    pub sheet: Option<String>,
    pub sheet_names: Option<Vec<String>>,
    pub range: Option<String>,
    pub unmapped_glyphs: usize,
    pub cuts: Vec<Cut>,
    /// A CSV's table shape (see [`crate::csv::shape`]).
    pub table: Option<crate::model::TableShape>,
}

impl Extracted {
    /// The text with every line ending as `\n`.
    pub fn normalized(&self) -> String {
        lines::normalize(&self.text)
    }
}

/// Extracts the text of `bytes`, which hold a file of `format`.
///
/// The parsers run behind a panic guard: a parser panicking on a hostile file is
/// `CORRUPT_FILE` for this file, never the end of the process (see the `guard` module).
pub fn extract_bytes(bytes: &[u8], format: Format, opts: &ExtractOptions) -> Result<Extracted> {
    guard::parse(format.as_str(), || extract_unguarded(bytes, format, opts))
}

fn extract_unguarded(bytes: &[u8], format: Format, opts: &ExtractOptions) -> Result<Extracted> {
    let mut out = Extracted {
        format,
        encoding: None,
        text: String::new(),
        pages_total: None,
        pages_extracted: None,
        sheet: None,
        sheet_names: None,
        range: None,
        unmapped_glyphs: 0,
        cuts: Vec::new(),
        table: None,
    };
    let chars_cut = |limit: usize| Cut {
        limit: "max_chars_per_file".into(),
        message: format!("text cut at {limit} characters"),
    };
    match format {
        Format::Txt | Format::Md | Format::Csv | Format::Code => {
            let decoded = text::decode(bytes)?;
            out.encoding = Some(decoded.encoding);
            out.text = decoded.text;
            if format == Format::Csv {
                out.table = Some(crate::csv::shape(&out.text));
            }
            if let Some(max) = opts.max_chars
                && let Some(cut) = lines::cut_chars(&out.text, max)
            {
                out.text.truncate(cut);
                out.cuts.push(chars_cut(max));
            }
        }
        Format::Pdf => {
            let head = &bytes[..bytes.len().min(1024)];
            if !head.windows(5).any(|w| w == b"%PDF-") {
                return Err(Error::corrupt("pdf", "no %PDF- header"));
            }
            let pdf = pdf::extract(bytes, opts.max_pages, opts.max_chars)?;
            if pdf.pages_extracted < pdf.pages_total && !pdf.truncated_chars {
                out.cuts.push(Cut {
                    limit: "max_pages".into(),
                    message: format!(
                        "extracted {} of {} pages",
                        pdf.pages_extracted, pdf.pages_total
                    ),
                });
            }
            if pdf.truncated_chars {
                out.cuts.push(chars_cut(opts.max_chars.unwrap_or(0)));
            }
            out.text = pdf.text;
            out.pages_total = Some(pdf.pages_total);
            out.pages_extracted = Some(pdf.pages_extracted);
            out.unmapped_glyphs = pdf.unmapped_glyphs;
        }
        Format::Docx => {
            let (text, truncated) = docx::extract(bytes, opts.max_chars)?;
            out.text = text;
            if truncated {
                out.cuts.push(chars_cut(opts.max_chars.unwrap_or(0)));
            }
        }
        Format::Xlsx | Format::Xlsm => {
            let sheet = xlsx::extract(
                bytes,
                &xlsx::SheetOptions {
                    sheet: opts.sheet.as_deref(),
                    range: opts.range.as_deref(),
                    max_rows: opts.max_rows.max(1),
                    max_cols: opts.max_cols.max(1),
                    max_chars: opts.max_chars,
                },
            )?;
            match sheet.cut.as_deref() {
                Some("max_chars") => out.cuts.push(chars_cut(opts.max_chars.unwrap_or(0))),
                Some(other) => out.cuts.push(Cut {
                    limit: "sheet_window".into(),
                    message: other.to_string(),
                }),
                None => {}
            }
            out.text = sheet.text;
            out.sheet = Some(sheet.sheet).filter(|s| !s.is_empty());
            out.sheet_names = Some(sheet.sheet_names);
            out.range = sheet.rendered_range;
        }
    }
    Ok(out)
}

/// Reads a file, refusing one larger than `max_bytes` (checked before and while reading, so a
/// file that grows meanwhile cannot slip through).
pub fn read_capped(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    if size > max_bytes {
        return Err(Error::FileTooLarge {
            size,
            limit: max_bytes,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(Error::FileTooLarge {
            size: bytes.len() as u64,
            limit: max_bytes,
        });
    }
    Ok(bytes)
}
