//! `keiri extract`: document text, digests, batch section reads and file metrics.
//!
//! Four modes, each one `keiri-api` call:
//! * `keiri extract FILE...` — text per file (`--json` prints the API response);
//! * `keiri extract --digest FILE...` — the prompt digest;
//! * `keiri extract --partial-read (--partial-read-requests-json JSON |
//!   --partial-read-requests-file PATH | FILE --start-line N [--end-line M])` — batch
//!   section extraction, printed as the API's JSON response (TOON inside by default);
//! * `keiri extract --metrics-only (--file-paths A B ... | --files-from LIST)` — metrics,
//!   printed as the API's JSON response.
//!
//! Exit codes: 0 when every file (and range) succeeded, 1 when the response reports
//! failures (`success: false`), 2 for usage and I/O errors.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use keiri_api::Context;
use keiri_api::docs::{
    ContentFormat, DigestRequest, ExtractLimits, ExtractRequest, FileSections, MetricsRequest,
    Output, OutputFormat, SectionsRequest,
};

use crate::output::{print_error, print_json};

/// Largest requests file or `--files-from` list read (they are small JSON or path lists).
const MAX_LIST_BYTES: u64 = 4 * 1024 * 1024;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum OutputFormatArg {
    Toon,
    Json,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ContentFormatArg {
    Text,
    Json,
    Raw,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files to read (relative paths resolve against the workspace).
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,

    /// Print a digest of the files (about --digest-chars characters) for a prompt.
    #[arg(long, conflicts_with_all = ["partial_read", "metrics_only"])]
    pub digest: bool,
    /// Target digest length in characters.
    #[arg(long, default_value_t = 4000, value_name = "N")]
    pub digest_chars: usize,

    /// Batch section extraction: many files × many line ranges in one call.
    #[arg(long, conflicts_with = "metrics_only")]
    pub partial_read: bool,
    /// The batch as JSON: a list of {file_path, sections}, or a full request object.
    #[arg(
        long,
        value_name = "JSON",
        requires = "partial_read",
        conflicts_with = "partial_read_requests_file"
    )]
    pub partial_read_requests_json: Option<String>,
    /// The batch as a JSON file (same shapes as --partial-read-requests-json).
    #[arg(long, value_name = "PATH", requires = "partial_read")]
    pub partial_read_requests_file: Option<PathBuf>,
    /// Single-range form: first line (1-based) of FILE.
    #[arg(long, value_name = "N", requires = "partial_read")]
    pub start_line: Option<u64>,
    /// Single-range form: last line (inclusive); the end of the file by default.
    #[arg(long, value_name = "N", requires = "start_line")]
    pub end_line: Option<u64>,
    /// Section content: text, json (numbered lines) or raw (original line endings).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<ContentFormatArg>,
    /// Response shape of --partial-read and --metrics-only (toon by default for
    /// --partial-read, json for --metrics-only).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<OutputFormatArg>,
    /// Return what fits when a batch limit is exceeded instead of failing.
    #[arg(long, requires = "partial_read")]
    pub allow_truncate: bool,
    /// Stop at the first failing file or range.
    #[arg(long, requires = "partial_read")]
    pub fail_fast: bool,

    /// Print file metrics (size, lines, characters, tokens, hash, format, pages/sheets).
    #[arg(long)]
    pub metrics_only: bool,
    /// Files to measure.
    #[arg(long, num_args = 1.., value_name = "PATH", requires = "metrics_only")]
    pub file_paths: Vec<String>,
    /// A file listing paths to measure, one per line.
    #[arg(long, value_name = "LIST", requires = "metrics_only")]
    pub files_from: Option<PathBuf>,

    /// Workbook sheet to read (name, or #2 for the second sheet); also for the single-range
    /// form of --partial-read.
    #[arg(long)]
    pub sheet: Option<String>,
    /// Workbook range to read, in A1 notation (e.g. A1:F40).
    #[arg(long)]
    pub range: Option<String>,
    /// Characters across all files.
    #[arg(long, value_name = "N")]
    pub max_chars: Option<usize>,
    /// PDF pages read per file.
    #[arg(long, value_name = "N")]
    pub max_pages: Option<usize>,
}

fn output_format(arg: Option<OutputFormatArg>) -> Option<OutputFormat> {
    arg.map(|f| match f {
        OutputFormatArg::Toon => OutputFormat::Toon,
        OutputFormatArg::Json => OutputFormat::Json,
    })
}

fn read_small(path: &PathBuf, what: &str) -> anyhow::Result<String> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("reading {what} {}", path.display()))?;
    anyhow::ensure!(
        meta.len() <= MAX_LIST_BYTES,
        "{what} {} is over {MAX_LIST_BYTES} bytes",
        path.display()
    );
    std::fs::read_to_string(path).with_context(|| format!("reading {what} {}", path.display()))
}

fn limits(args: &Args) -> ExtractLimits {
    let mut limits = ExtractLimits::default();
    if let Some(n) = args.max_chars {
        limits.max_total_chars = n;
    }
    if let Some(n) = args.max_pages {
        limits.max_pages = n;
    }
    limits
}

/// 0 when everything succeeded, 1 when the response reports a failure or any error.
fn exit(clean: bool) -> ExitCode {
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Whether a response is clean: `success` and no errors, in either output format.
fn clean<T>(out: &Output<T>, json_clean: impl Fn(&T) -> bool) -> bool {
    match out {
        Output::Json(t) => json_clean(t),
        Output::Toon(t) => t.success && t.counts.errors == 0,
    }
}

pub fn run(ctx: &Context, args: &Args, json: bool) -> anyhow::Result<ExitCode> {
    if args.metrics_only {
        return metrics(ctx, args);
    }
    if args.partial_read {
        return partial_read(ctx, args);
    }
    if args.files.is_empty() {
        bail!("no files given (see keiri extract --help)");
    }
    if args.digest {
        return digest(ctx, args, json);
    }
    let req = ExtractRequest {
        file_paths: args.files.clone(),
        limits: limits(args),
        sheet: args.sheet.clone(),
        range: args.range.clone(),
        output_format: OutputFormat::Json,
    };
    let out = match keiri_api::documents_extract(ctx, req) {
        Ok(o) => o,
        Err(e) => return print_error(&e, json),
    };
    let Output::Json(res) = &out else {
        bail!("unexpected TOON response")
    };
    if json {
        print_json(&res)?;
    } else {
        for file in &res.files {
            println!("==> {} <==", file.file_path);
            println!("{}", file.text);
            for cut in &file.cuts {
                eprintln!(
                    "keiri: {}: cut by {}: {}",
                    file.file_path, cut.limit, cut.message
                );
            }
        }
        for e in &res.errors {
            eprintln!(
                "keiri: {}: {}: {}",
                e.file_path.as_deref().unwrap_or("-"),
                e.code,
                e.message
            );
        }
    }
    Ok(exit(res.success))
}

fn digest(ctx: &Context, args: &Args, json: bool) -> anyhow::Result<ExitCode> {
    let req = DigestRequest {
        file_paths: args.files.clone(),
        max_chars: args.digest_chars,
        limits: limits(args),
        sheet: args.sheet.clone(),
        range: args.range.clone(),
        output_format: OutputFormat::Json,
    };
    let out = match keiri_api::documents_digest(ctx, req) {
        Ok(o) => o,
        Err(e) => return print_error(&e, json),
    };
    let Output::Json(res) = &out else {
        bail!("unexpected TOON response")
    };
    if json {
        print_json(&res)?;
    } else {
        println!("{}", res.digest);
        for e in &res.errors {
            eprintln!(
                "keiri: {}: {}: {}",
                e.file_path.as_deref().unwrap_or("-"),
                e.code,
                e.message
            );
        }
    }
    Ok(exit(res.success))
}

/// Parses a batch given as a list of `{file_path, sections}` or as a full request object.
fn parse_batch(text: &str) -> anyhow::Result<SectionsRequest> {
    let value: serde_json::Value =
        serde_json::from_str(text).context("the batch is not valid JSON")?;
    if value.is_array() {
        let requests: Vec<FileSections> = serde_json::from_value(value)
            .context("the batch list does not match [{file_path, sections}]")?;
        return Ok(SectionsRequest {
            requests: Some(requests),
            ..SectionsRequest::default()
        });
    }
    serde_json::from_value(value)
        .context("the batch object does not match the extract_sections request")
}

fn partial_read(ctx: &Context, args: &Args) -> anyhow::Result<ExitCode> {
    let mut req = if let Some(text) = &args.partial_read_requests_json {
        parse_batch(text)?
    } else if let Some(path) = &args.partial_read_requests_file {
        parse_batch(&read_small(path, "requests file")?)?
    } else {
        let [file] = args.files.as_slice() else {
            bail!(
                "--partial-read needs --partial-read-requests-json, --partial-read-requests-file, or one FILE with --start-line"
            );
        };
        let Some(start) = args.start_line else {
            bail!("--start-line is required with FILE")
        };
        SectionsRequest {
            file_path: Some(file.clone()),
            start_line: Some(start),
            end_line: args.end_line,
            sheet: args.sheet.clone(),
            ..SectionsRequest::default()
        }
    };
    if let Some(f) = output_format(args.output_format) {
        req.output_format = f;
    }
    if let Some(f) = args.format {
        req.format = match f {
            ContentFormatArg::Text => ContentFormat::Text,
            ContentFormatArg::Json => ContentFormat::Json,
            ContentFormatArg::Raw => ContentFormat::Raw,
        };
    }
    req.allow_truncate |= args.allow_truncate;
    req.fail_fast |= args.fail_fast;
    match keiri_api::documents_extract_sections(ctx, req) {
        Ok(out) => {
            print_json(&out)?;
            Ok(exit(clean(&out, |r| {
                r.success && r.errors.is_empty() && r.results.iter().all(|f| f.errors.is_empty())
            })))
        }
        Err(e) => print_error(&e, true),
    }
}

fn metrics(ctx: &Context, args: &Args) -> anyhow::Result<ExitCode> {
    let mut paths = args.file_paths.clone();
    paths.extend(args.files.iter().cloned());
    if let Some(list) = &args.files_from {
        let text = read_small(list, "file list")?;
        paths.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(String::from),
        );
    }
    if paths.is_empty() {
        bail!("--metrics-only needs --file-paths or --files-from");
    }
    let req = MetricsRequest {
        file_paths: paths,
        output_format: output_format(args.output_format).unwrap_or_default(),
    };
    match keiri_api::documents_metrics(ctx, req) {
        Ok(out) => {
            print_json(&out)?;
            Ok(exit(clean(&out, |r| r.success && r.errors.is_empty())))
        }
        Err(e) => print_error(&e, true),
    }
}
