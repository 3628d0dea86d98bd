//! File metrics: size, lines, characters, estimated tokens, content hash, format and
//! structure, for up to [`MAX_REQUEST_FILES`](crate::MAX_REQUEST_FILES) files with four
//! files measured at a time.

use keiri_fs::PathPolicy;

use crate::cache::Cache;
use crate::error::Result;
use crate::files::{WORKERS, check_count, resolve};
use crate::model::{BatchLimits, FileMetrics, ItemError, MetricsRequest, MetricsResponse, Output};
use crate::sections::reading_options;
use crate::{lines, output, parallel};

/// A tokenizer-free token estimate: about four ASCII characters per token, and one token per
/// other character (kana and kanji are one or close to one token each in the GPT-4o and
/// GPT-4 vocabularies). It errs high for Japanese, which is the safe side for a budget.
pub fn estimate_tokens(text: &str) -> usize {
    let (mut ascii, mut other) = (0usize, 0usize);
    for c in text.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
    }
    ascii.div_ceil(4) + other
}

/// Measures every file in the request; a file that fails is listed in `errors`.
pub fn file_metrics(
    policy: &PathPolicy,
    req: &MetricsRequest,
    limits: &BatchLimits,
    cache: &Cache,
) -> Result<Output<MetricsResponse>> {
    check_count(&req.file_paths)?;
    let opts = reading_options();
    let measured = parallel::map(&req.file_paths, WORKERS, |raw| -> Result<FileMetrics> {
        let (resolved, format) = resolve(policy, raw)?;
        let loaded = cache.load(&resolved, format, &opts, limits.max_file_size)?;
        let ex = &loaded.extracted;
        let text = ex.normalized();
        Ok(FileMetrics {
            file_path: raw.clone(),
            size_bytes: loaded.size,
            lines: lines::count(&text),
            characters: text.chars().count(),
            estimated_tokens: estimate_tokens(&text),
            content_hash: loaded.hash.clone(),
            format: ex.format,
            encoding: ex.encoding.clone(),
            pages: ex.pages_total,
            sheets: ex.sheet_names.as_ref().map(Vec::len),
        })
    });
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for (raw, m) in req.file_paths.iter().zip(measured) {
        match m {
            Ok(m) => files.push(m),
            Err(e) => errors.push(ItemError::file(raw, &e)),
        }
    }
    let response = MetricsResponse {
        success: errors.is_empty(),
        files,
        errors,
    };
    output::render(response, req.output_format)
}

#[cfg(test)]
mod tests {
    #[test]
    fn token_estimate() {
        for (text, tokens) in [
            ("", 0),
            ("abcd", 1),
            ("abcde", 2),
            ("請求書", 3),
            ("請求書 total", 5),
        ] {
            assert_eq!(super::estimate_tokens(text), tokens, "{text}");
        }
    }
}
