//! The tool contract: request and response types shared by the API, the CLI, the HTTP server
//! and (through `schemars`) the MCP tool schemas. Field order is the serialised order, and
//! every collection is a `Vec`, so JSON and TOON output are deterministic.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::extract::{Cut, Format};

/// How a response is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// `toon_content` (the JSON response encoded as TOON) plus minimal metadata.
    Toon,
    /// The structured response.
    #[default]
    Json,
}

fn toon() -> OutputFormat {
    OutputFormat::Toon
}

/// How section content is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContentFormat {
    /// The lines joined with `\n`.
    #[default]
    Text,
    /// An array of `{line, text}` objects.
    Json,
    /// The exact source slice, original line endings included.
    Raw,
}

/// Limits of [`ExtractRequest`] and [`DigestRequest`]. Missing fields take the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ExtractLimits {
    /// Characters across all files (100,000).
    pub max_total_chars: usize,
    /// Characters of one file (50,000).
    pub max_chars_per_file: usize,
    /// Size of one file in bytes (20 MiB).
    pub max_file_bytes: u64,
    /// PDF pages read per file (20).
    pub max_pages: usize,
    /// Rows and columns of the default workbook window (500 × 50).
    pub max_rows: u32,
    pub max_cols: u32,
}

impl Default for ExtractLimits {
    fn default() -> Self {
        ExtractLimits {
            max_total_chars: 100_000,
            max_chars_per_file: 50_000,
            max_file_bytes: 20 * 1024 * 1024,
            max_pages: 20,
            max_rows: 500,
            max_cols: 50,
        }
    }
}

impl ExtractLimits {
    /// Ceilings a caller cannot raise the limits past; they keep one request from holding
    /// gigabytes in memory.
    pub const CEILING: ExtractLimits = ExtractLimits {
        max_total_chars: 10_000_000,
        max_chars_per_file: 10_000_000,
        max_file_bytes: 200 * 1024 * 1024,
        max_pages: 5_000,
        max_rows: 100_000,
        max_cols: 16_384,
    };

    pub(crate) fn clamped(self) -> ExtractLimits {
        let c = Self::CEILING;
        ExtractLimits {
            max_total_chars: self.max_total_chars.min(c.max_total_chars),
            max_chars_per_file: self.max_chars_per_file.min(c.max_chars_per_file),
            max_file_bytes: self.max_file_bytes.min(c.max_file_bytes),
            max_pages: self.max_pages.clamp(1, c.max_pages),
            max_rows: self.max_rows.clamp(1, c.max_rows),
            max_cols: self.max_cols.clamp(1, c.max_cols),
        }
    }
}

/// Files to extract text from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtractRequest {
    /// Paths, absolute or relative to the workspace (at most 200).
    pub file_paths: Vec<String>,
    #[serde(default)]
    pub limits: ExtractLimits,
    /// Workbook sheet for every workbook: a name, or `#2` for the second sheet.
    #[serde(default)]
    pub sheet: Option<String>,
    /// Workbook range in A1 notation (e.g. `A1:F40`) for every workbook.
    #[serde(default)]
    pub range: Option<String>,
    #[serde(default)]
    pub output_format: OutputFormat,
}

/// One file's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileText {
    pub file_path: String,
    pub resolved_path: String,
    pub format: Format,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages_total: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages_extracted: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheet_names: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    /// PDF glyphs whose font has no Unicode mapping (left out, not guessed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unmapped_glyphs: usize,
    pub characters: usize,
    pub lines: usize,
    pub text: String,
    /// What was left out and why.
    pub cuts: Vec<Cut>,
    /// A CSV's table: its data rows and its header (read from the whole file, before any
    /// cut).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<TableShape>,
}

/// The shape of a delimited file's table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TableShape {
    /// Data rows (the header and blank records not counted).
    pub rows: usize,
    /// The header's names.
    pub columns: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A file, range or limit that failed. `code` is stable; `message` is for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ItemError {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    /// For `LIMIT_EXCEEDED`: the limit's name (`max_files`, `max_total_bytes`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
}

impl ItemError {
    pub(crate) fn file(file_path: &str, err: &crate::Error) -> Self {
        // The whole cause chain: "resolving /x/a.pdf: No such file or directory".
        let mut message = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(s) = source {
            let text = s.to_string();
            if !message.ends_with(&text) {
                message.push_str(": ");
                message.push_str(&text);
            }
            source = s.source();
        }
        ItemError {
            file_path: Some(file_path.to_string()),
            code: err.code().to_string(),
            message,
            label: None,
            start_line: None,
            end_line: None,
            limit: None,
        }
    }

    pub(crate) fn limit(limit: &str, message: String) -> Self {
        ItemError {
            file_path: None,
            code: "LIMIT_EXCEEDED".into(),
            message,
            label: None,
            start_line: None,
            end_line: None,
            limit: Some(limit.to_string()),
        }
    }
}

/// Result of [`crate::extract_files`] in JSON form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExtractResponse {
    /// Every file extracted (some may still be cut; see `truncated`).
    pub success: bool,
    pub files: Vec<FileText>,
    pub errors: Vec<ItemError>,
    pub total_characters: usize,
    /// Some text was left out by a limit; each file's `cuts` says what.
    pub truncated: bool,
    pub limits: ExtractLimits,
}

/// Files to digest into a short text for a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DigestRequest {
    pub file_paths: Vec<String>,
    /// Target length of the digest in characters (4,000).
    #[serde(default = "default_digest_chars")]
    pub max_chars: usize,
    #[serde(default)]
    pub limits: ExtractLimits,
    #[serde(default)]
    pub sheet: Option<String>,
    #[serde(default)]
    pub range: Option<String>,
    #[serde(default)]
    pub output_format: OutputFormat,
}

fn default_digest_chars() -> usize {
    4_000
}

/// How one file fared in a digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DigestFile {
    pub file_path: String,
    /// Characters after whitespace compression and duplicate-line removal.
    pub characters_compressed: usize,
    /// Characters of this file in the digest (its fair share, or all of it).
    pub characters_in_digest: usize,
    pub cut: bool,
}

/// Result of [`crate::digest`] in JSON form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DigestResponse {
    /// Every file could be read (an empty digest can still be a success).
    pub success: bool,
    /// The digest; exactly [`crate::NO_DOCUMENTS`] when no file gave any text.
    pub digest: String,
    /// True when no file gave any text.
    pub empty: bool,
    pub characters: usize,
    pub files: Vec<DigestFile>,
    pub errors: Vec<ItemError>,
}

/// Limits of one batch section extraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BatchLimits {
    pub max_files: usize,
    pub max_sections_per_file: usize,
    pub max_sections_total: usize,
    pub max_total_bytes: usize,
    pub max_total_lines: usize,
    /// The seed's name; `max_file_size` (this crate's first name for it) is still read.
    #[serde(alias = "max_file_size")]
    pub max_file_size_bytes: u64,
}

impl Default for BatchLimits {
    fn default() -> Self {
        BatchLimits {
            max_files: 20,
            max_sections_per_file: 50,
            max_sections_total: 200,
            max_total_bytes: 1024 * 1024,
            max_total_lines: 5_000,
            max_file_size_bytes: 5 * 1024 * 1024,
        }
    }
}

/// A line range to read; lines are 1-based and inclusive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SectionRange {
    pub start_line: u64,
    /// Last line (inclusive); the end of the file when absent.
    #[serde(default)]
    pub end_line: Option<u64>,
    #[serde(default)]
    pub label: Option<String>,
}

/// One file and the ranges to read from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileSections {
    pub file_path: String,
    pub sections: Vec<SectionRange>,
    /// Workbook sheet to read: a name, or `#2` for the second; the first worksheet by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
}

/// Batch section extraction: many files × many ranges in one call, or the single-range form
/// (`file_path`, `start_line`, `end_line`). Giving both forms is an input error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SectionsRequest {
    #[serde(default)]
    pub requests: Option<Vec<FileSections>>,
    #[serde(default)]
    pub file_path: Option<String>,
    #[serde(default)]
    pub start_line: Option<u64>,
    #[serde(default)]
    pub end_line: Option<u64>,
    #[serde(default)]
    pub label: Option<String>,
    /// Workbook sheet for the single-range form.
    #[serde(default)]
    pub sheet: Option<String>,
    #[serde(default)]
    pub format: ContentFormat,
    /// `toon` by default.
    #[serde(default = "toon")]
    pub output_format: OutputFormat,
    /// Return what fits when a limit is exceeded, instead of failing.
    #[serde(default)]
    pub allow_truncate: bool,
    /// Stop at the first failing file or range.
    #[serde(default)]
    pub fail_fast: bool,
}

impl Default for SectionsRequest {
    fn default() -> Self {
        SectionsRequest {
            requests: None,
            file_path: None,
            start_line: None,
            end_line: None,
            label: None,
            sheet: None,
            format: ContentFormat::Text,
            output_format: OutputFormat::Toon,
            allow_truncate: false,
            fail_fast: false,
        }
    }
}

/// A numbered line (content format `json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NumberedLine {
    pub line: u64,
    pub text: String,
}

/// Section content: a string (`text`, `raw`) or numbered lines (`json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SectionContent {
    Text(String),
    Lines(Vec<NumberedLine>),
}

/// One extracted range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Section {
    pub label: Option<String>,
    pub start_line: u64,
    /// The last line returned (the file's last line when the request went past it).
    pub end_line: u64,
    /// This range was cut by `allow_truncate`.
    pub truncated: bool,
    pub content: SectionContent,
}

/// Sections read from one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileResult {
    pub file_path: String,
    pub resolved_path: String,
    pub total_lines: usize,
    pub sections: Vec<Section>,
    /// Ranges of this file that failed.
    pub errors: Vec<ItemError>,
}

/// Result of [`crate::extract_sections`] in JSON form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SectionsResponse {
    /// False when a limit was exceeded without `allow_truncate`, when `fail_fast` stopped the
    /// batch, or when no range could be read; partial failures are in `errors`.
    pub success: bool,
    /// The files answered, failed ones included (the seed's field).
    pub count_files: usize,
    /// The ranges read (the seed's field; `sections_extracted` too).
    pub count_sections: usize,
    pub format: ContentFormat,
    pub files_requested: usize,
    pub files_succeeded: usize,
    pub sections_requested: usize,
    pub sections_extracted: usize,
    pub total_bytes: usize,
    pub total_lines: usize,
    pub truncated: bool,
    /// Limits that cut the output when `allow_truncate` was set.
    pub truncated_by: Vec<String>,
    pub limits: BatchLimits,
    pub results: Vec<FileResult>,
    /// Failed files and exceeded limits (failed ranges are listed under their file).
    pub errors: Vec<ItemError>,
}

/// Files to measure (at most 200).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricsRequest {
    pub file_paths: Vec<String>,
    #[serde(default)]
    pub output_format: OutputFormat,
}

/// Measurements of one file. Text figures are of the text a section read sees (for a
/// workbook, its first worksheet).
///
/// Every field is a primitive and always present (`null` when it does not apply), so a list
/// of these is one table: TOON writes it as a header and one row per file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileMetrics {
    pub file_path: String,
    pub size_bytes: u64,
    pub lines: usize,
    pub characters: usize,
    /// A tokenizer-free estimate (see [`crate::estimate_tokens`]).
    pub estimated_tokens: usize,
    /// `sha256:<hex>` of the file's bytes.
    pub content_hash: String,
    pub format: Format,
    /// Detected encoding of a text file.
    pub encoding: Option<String>,
    /// Pages of a PDF.
    pub pages: Option<usize>,
    /// Sheets of a workbook (read others with `sheet: "#2"` or by name).
    pub sheets: Option<usize>,
}

/// Result of [`crate::file_metrics`] in JSON form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MetricsResponse {
    /// Every file was measured.
    pub success: bool,
    pub files: Vec<FileMetrics>,
    pub errors: Vec<ItemError>,
}

/// How many errors carried a code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorCount {
    pub code: String,
    pub count: usize,
}

/// Counts that a TOON response keeps outside `toon_content`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    pub files_requested: usize,
    pub files_succeeded: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections_requested: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections_extracted: Option<usize>,
    pub errors: usize,
}

/// Limits echoed in a TOON response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum LimitsInfo {
    Batch(BatchLimits),
    Extract(ExtractLimits),
}

/// A response with `output_format: toon`: the JSON response encoded as TOON in
/// `toon_content`, plus minimal metadata and no duplicated JSON detail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToonResponse {
    pub success: bool,
    /// Always `toon`: the seed's name for the format of `toon_content`.
    pub format: OutputFormat,
    /// The same, under the request's name (ours, kept for existing clients).
    pub output_format: OutputFormat,
    pub toon_content: String,
    /// Files answered, failed ones included (the seed's field).
    pub count_files: usize,
    /// Ranges read, for a section extraction (the seed's field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_sections: Option<usize>,
    pub counts: Counts,
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitsInfo>,
    pub error_summary: Vec<ErrorCount>,
}

/// A response in the requested [`OutputFormat`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "{T}Output")]
pub enum Output<T> {
    Toon(ToonResponse),
    Json(T),
}

impl<T> Output<T> {
    /// The JSON form, if that is what this is.
    pub fn json(&self) -> Option<&T> {
        match self {
            Output::Json(t) => Some(t),
            Output::Toon(_) => None,
        }
    }

    /// The TOON form, if that is what this is.
    pub fn toon(&self) -> Option<&ToonResponse> {
        match self {
            Output::Toon(t) => Some(t),
            Output::Json(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The MCP server derives tool schemas from these types; check the fields it will expose.
    #[test]
    fn json_schemas() {
        fn check<T: JsonSchema>(expect_properties: &[&str]) {
            let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap();
            let props: Vec<&str> = schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(props, expect_properties, "{}", std::any::type_name::<T>());
        }
        check::<SectionsRequest>(&[
            "requests",
            "file_path",
            "start_line",
            "end_line",
            "label",
            "sheet",
            "format",
            "output_format",
            "allow_truncate",
            "fail_fast",
        ]);
        check::<ExtractRequest>(&["file_paths", "limits", "sheet", "range", "output_format"]);
        check::<DigestRequest>(&[
            "file_paths",
            "max_chars",
            "limits",
            "sheet",
            "range",
            "output_format",
        ]);
        check::<MetricsRequest>(&["file_paths", "output_format"]);
        check::<ToonResponse>(&[
            "success",
            "format",
            "output_format",
            "toon_content",
            "count_files",
            "count_sections",
            "counts",
            "truncated",
            "limits",
            "error_summary",
        ]);
        let any_of = serde_json::to_value(schemars::schema_for!(Output<SectionsResponse>)).unwrap();
        assert_eq!(any_of["anyOf"].as_array().map(Vec::len), Some(2));
    }
}
