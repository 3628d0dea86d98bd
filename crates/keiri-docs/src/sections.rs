//! Batch section extraction: many files × many line ranges in one call.
//!
//! Limits fail the call by default and truncate only when the caller allows it; a file or a
//! range that fails is reported in `errors` while the rest continue (unless `fail_fast`).
//! Each file is resolved and extracted once per call (and across calls through the cache),
//! however many ranges ask for it.

use std::collections::HashMap;
use std::path::PathBuf;

use keiri_fs::PathPolicy;

use crate::cache::{Cache, Loaded};
use crate::error::{Error, Result};
use crate::extract::ExtractOptions;
use crate::files::resolve;
use crate::lines::{self, Span};
use crate::model::{
    BatchLimits, ContentFormat, FileResult, FileSections, ItemError, NumberedLine, Output, Section,
    SectionContent, SectionRange, SectionsRequest, SectionsResponse,
};
use crate::output;

/// Extraction settings for reading by line number. Metrics use the same, so the line counts
/// they report are the lines a section request can address.
pub fn reading_options() -> ExtractOptions {
    ExtractOptions {
        max_pages: 500,
        max_chars: None,
        sheet: None,
        range: None,
        max_rows: 50_000,
        max_cols: 512,
    }
}

/// Turns the two request forms into one list, refusing a request that gives both or neither.
fn normalize(req: &SectionsRequest) -> Result<Vec<FileSections>> {
    let single = req.file_path.is_some()
        || req.start_line.is_some()
        || req.end_line.is_some()
        || req.label.is_some()
        || req.sheet.is_some();
    match (&req.requests, single) {
        (Some(_), true) => Err(Error::InvalidRequest(
            "give either requests[] or file_path/start_line/end_line, not both".into(),
        )),
        (None, false) => Err(Error::InvalidRequest(
            "give requests[] or file_path with start_line".into(),
        )),
        (Some(list), false) => {
            if list.is_empty() {
                return Err(Error::InvalidRequest("requests[] is empty".into()));
            }
            if let Some(i) = list.iter().position(|f| f.sections.is_empty()) {
                return Err(Error::InvalidRequest(format!(
                    "requests[{i}].sections is empty"
                )));
            }
            Ok(list.clone())
        }
        (None, true) => {
            let (Some(file_path), Some(start_line)) = (&req.file_path, req.start_line) else {
                return Err(Error::InvalidRequest(
                    "the single-range form needs file_path and start_line".into(),
                ));
            };
            Ok(vec![FileSections {
                file_path: file_path.clone(),
                sections: vec![SectionRange {
                    start_line,
                    end_line: req.end_line,
                    label: req.label.clone(),
                }],
                sheet: req.sheet.clone(),
            }])
        }
    }
}

struct Budget {
    bytes: usize,
    lines: usize,
}

/// Extracts the requested sections. See [`SectionsRequest`] for the contract.
pub fn extract_sections(
    policy: &PathPolicy,
    req: &SectionsRequest,
    limits: &BatchLimits,
    cache: &Cache,
) -> Result<Output<SectionsResponse>> {
    let mut files = normalize(req)?;
    let mut response = SectionsResponse {
        success: true,
        count_files: 0,
        count_sections: 0,
        format: req.format,
        files_requested: files.len(),
        files_succeeded: 0,
        sections_requested: files.iter().map(|f| f.sections.len()).sum(),
        sections_extracted: 0,
        total_bytes: 0,
        total_lines: 0,
        truncated: false,
        truncated_by: Vec::new(),
        limits: *limits,
        results: Vec::new(),
        errors: Vec::new(),
    };

    // Count limits are known before reading anything. Each exceeded one is recorded; with
    // `allow_truncate` the request is cut to fit, otherwise the call fails naming them.
    let mut exceeded: Vec<ItemError> = Vec::new();
    if files.len() > limits.max_files {
        exceeded.push(ItemError::limit(
            "max_files",
            format!(
                "{} files requested; max_files is {}",
                files.len(),
                limits.max_files
            ),
        ));
        files.truncate(limits.max_files);
    }
    if let Some(f) = files
        .iter()
        .find(|f| f.sections.len() > limits.max_sections_per_file)
    {
        exceeded.push(ItemError {
            file_path: Some(f.file_path.clone()),
            ..ItemError::limit(
                "max_sections_per_file",
                format!(
                    "{} sections requested for one file; max_sections_per_file is {}",
                    f.sections.len(),
                    limits.max_sections_per_file
                ),
            )
        });
        for f in files.iter_mut() {
            f.sections.truncate(limits.max_sections_per_file);
        }
    }
    let total: usize = files.iter().map(|f| f.sections.len()).sum();
    if total > limits.max_sections_total {
        exceeded.push(ItemError::limit(
            "max_sections_total",
            format!(
                "{total} sections requested; max_sections_total is {}",
                limits.max_sections_total
            ),
        ));
        let mut left = limits.max_sections_total;
        for f in files.iter_mut() {
            f.sections.truncate(left);
            left -= f.sections.len();
        }
        files.retain(|f| !f.sections.is_empty());
    }
    if !exceeded.is_empty() {
        if !req.allow_truncate {
            response.success = false;
            response.errors = exceeded;
            return finish(response, req.output_format);
        }
        response.truncated = true;
        response.truncated_by = exceeded.iter().filter_map(|e| e.limit.clone()).collect();
    }

    type Key = (String, Option<String>);
    let mut loaded: HashMap<Key, std::result::Result<(PathBuf, Loaded), Box<ItemError>>> =
        HashMap::new();
    let mut budget = Budget {
        bytes: limits.max_total_bytes,
        lines: limits.max_total_lines,
    };
    let mut stop = false;
    for file in &files {
        if stop {
            break;
        }
        let key = (file.file_path.clone(), file.sheet.clone());
        let entry = loaded.entry(key).or_insert_with(|| {
            let opts = ExtractOptions {
                sheet: file.sheet.clone(),
                ..reading_options()
            };
            resolve(policy, &file.file_path)
                .and_then(|(resolved, format)| {
                    cache
                        .load(&resolved, format, &opts, limits.max_file_size_bytes)
                        .map(|l| (resolved, l))
                })
                .map_err(|e| Box::new(ItemError::file(&file.file_path, &e)))
        });
        let (resolved, file_data) = match entry {
            Ok(ok) => (ok.0.clone(), ok.1.clone()),
            Err(e) => {
                response.errors.push(ItemError::clone(e));
                if req.fail_fast {
                    response.success = false;
                    break;
                }
                continue;
            }
        };
        let text = &file_data.extracted.text;
        let spans = lines::spans(text);
        let mut result = FileResult {
            file_path: file.file_path.clone(),
            resolved_path: resolved.display().to_string(),
            total_lines: spans.len(),
            sections: Vec::new(),
            errors: Vec::new(),
        };
        for range in &file.sections {
            match read_range(text, &spans, range, req.format, &mut budget) {
                Ok(ReadOutcome::Whole(section)) => result.sections.push(section),
                Ok(ReadOutcome::Partial(section, limit)) => {
                    if !req.allow_truncate {
                        return fail_on_limit(response, limit, req);
                    }
                    if let Some(s) = section {
                        result.sections.push(s);
                    }
                    response.truncated = true;
                    if !response.truncated_by.contains(&limit.to_string()) {
                        response.truncated_by.push(limit.to_string());
                    }
                    stop = true;
                    break;
                }
                Err(e) => {
                    result.errors.push(ItemError {
                        file_path: Some(file.file_path.clone()),
                        code: e.code().to_string(),
                        message: e.to_string(),
                        label: range.label.clone(),
                        start_line: Some(range.start_line),
                        end_line: range.end_line,
                        limit: None,
                    });
                    if req.fail_fast {
                        response.success = false;
                        stop = true;
                        break;
                    }
                }
            }
        }
        if !result.sections.is_empty() {
            response.files_succeeded += 1;
        }
        response.results.push(result);
    }
    response.sections_extracted = response.results.iter().map(|r| r.sections.len()).sum();
    response.total_bytes = limits.max_total_bytes - budget.bytes;
    response.total_lines = limits.max_total_lines - budget.lines;
    if response.sections_extracted == 0 {
        response.success = false;
    }
    finish(response, req.output_format)
}

/// Fills in the seed's counts (`count_files`: the files answered, failed ones included;
/// `count_sections`: the ranges read) and renders the response.
fn finish(
    mut response: SectionsResponse,
    format: crate::model::OutputFormat,
) -> Result<Output<SectionsResponse>> {
    response.count_files = response.results.len()
        + response
            .errors
            .iter()
            .filter(|e| e.file_path.is_some() && e.limit.is_none())
            .count();
    response.count_sections = response.sections_extracted;
    output::render(response, format)
}

fn fail_on_limit(
    mut response: SectionsResponse,
    limit: &'static str,
    req: &SectionsRequest,
) -> Result<Output<SectionsResponse>> {
    let (name, value) = match limit {
        "max_total_bytes" => (limit, response.limits.max_total_bytes),
        _ => (limit, response.limits.max_total_lines),
    };
    response.success = false;
    response.results.clear();
    response.sections_extracted = 0;
    response.errors.push(ItemError::limit(
        name,
        format!("the requested sections exceed {name} ({value}); narrow the ranges or set allow_truncate"),
    ));
    finish(response, req.output_format)
}

enum ReadOutcome {
    Whole(Section),
    /// A limit was reached; what fit (if anything) and the limit's name.
    Partial(Option<Section>, &'static str),
}

/// Why a range cannot be read.
#[derive(Debug, thiserror::Error)]
enum RangeError {
    #[error("start_line must be 1 or more")]
    StartZero,
    #[error("end_line {end} is before start_line {start}")]
    Backwards { start: u64, end: u64 },
    #[error("start_line {start} is past the end of the text ({total} lines)")]
    PastEnd { start: u64, total: usize },
}

impl RangeError {
    fn code(&self) -> &'static str {
        match self {
            RangeError::StartZero | RangeError::Backwards { .. } => "INVALID_RANGE",
            RangeError::PastEnd { .. } => "LINE_OUT_OF_RANGE",
        }
    }
}

fn read_range(
    text: &str,
    spans: &[Span],
    range: &SectionRange,
    format: ContentFormat,
    budget: &mut Budget,
) -> std::result::Result<ReadOutcome, RangeError> {
    let start = range.start_line;
    if start == 0 {
        return Err(RangeError::StartZero);
    }
    if let Some(end) = range.end_line
        && end < start
    {
        return Err(RangeError::Backwards { start, end });
    }
    let total = spans.len();
    if start > total as u64 {
        return Err(RangeError::PastEnd { start, total });
    }
    let first = (start - 1) as usize;
    let last = range.end_line.map_or(total, |e| (e as usize).min(total)) - 1;
    // Take lines while both budgets allow.
    let mut taken = 0usize;
    let mut bytes = 0usize;
    let mut limit_hit: Option<&'static str> = None;
    for span in &spans[first..=last] {
        let line_bytes = match format {
            ContentFormat::Raw => span.next - span.start,
            _ => span.end - span.start + usize::from(taken > 0),
        };
        if taken + 1 > budget.lines {
            limit_hit = Some("max_total_lines");
            break;
        }
        if bytes + line_bytes > budget.bytes {
            limit_hit = Some("max_total_bytes");
            break;
        }
        taken += 1;
        bytes += line_bytes;
    }
    budget.lines -= taken;
    budget.bytes -= bytes;
    let section = (taken > 0).then(|| {
        let end_index = first + taken - 1;
        let content = match format {
            ContentFormat::Text => SectionContent::Text(
                spans[first..=end_index]
                    .iter()
                    .map(|s| &text[s.start..s.end])
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            ContentFormat::Raw => {
                SectionContent::Text(text[spans[first].start..spans[end_index].next].to_string())
            }
            ContentFormat::Json => SectionContent::Lines(
                spans[first..=end_index]
                    .iter()
                    .enumerate()
                    .map(|(k, s)| NumberedLine {
                        line: start + k as u64,
                        text: text[s.start..s.end].to_string(),
                    })
                    .collect(),
            ),
        };
        Section {
            label: range.label.clone(),
            start_line: start,
            end_line: (end_index + 1) as u64,
            truncated: limit_hit.is_some(),
            content,
        }
    });
    Ok(match (section, limit_hit) {
        (Some(s), None) => ReadOutcome::Whole(s),
        (s, Some(limit)) => ReadOutcome::Partial(s, limit),
        (None, None) => ReadOutcome::Partial(None, "max_total_lines"),
    })
}
