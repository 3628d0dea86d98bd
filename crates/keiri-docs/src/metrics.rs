//! File metrics: size, lines, characters, estimated tokens, content hash, format and
//! structure, for up to [`MAX_REQUEST_FILES`](crate::MAX_REQUEST_FILES) files with four
//! files measured at a time.

use std::io::{Seek, SeekFrom};
use std::path::Path;

use keiri_fs::PathPolicy;
use sha2::{Digest, Sha256};

use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::extract::Format;
use crate::files::{WORKERS, check_count, resolve};
use crate::model::{
    BatchLimits, ExtractLimits, FileMetrics, ItemError, MetricsRequest, MetricsResponse, Output,
};
use crate::sections::reading_options;
use crate::{lines, output, parallel, text};

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
        let size = std::fs::metadata(&resolved)
            .map_err(|source| Error::Io {
                path: resolved.clone(),
                source,
            })?
            .len();
        // Measuring is not reading sections: a text file of any size is measured in pieces
        // (the seed's metrics report a file's size, never FILE_TOO_LARGE), and a document is
        // measured up to the size text extraction accepts.
        if is_text(format) && size > limits.max_file_size_bytes {
            return measure_text_stream(raw, &resolved, format);
        }
        let cap = if is_text(format) {
            limits.max_file_size_bytes
        } else {
            limits
                .max_file_size_bytes
                .max(ExtractLimits::default().max_file_bytes)
        };
        let loaded = cache.load(&resolved, format, &opts, cap)?;
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

fn is_text(format: Format) -> bool {
    matches!(
        format,
        Format::Txt | Format::Md | Format::Csv | Format::Code
    )
}

/// Bytes read at a time when a text file is measured in pieces.
const PIECE_BYTES: usize = 1 << 20;

/// Line, character and token counts of a text fed in pieces, as [`lines::count`],
/// `chars().count()` and [`estimate_tokens`] give them for the whole normalised text (a
/// `\r\n` is one line end and one character; a lone `\r` ends a line too).
#[derive(Debug, Default)]
struct Tally {
    lines: usize,
    characters: usize,
    ascii: usize,
    other: usize,
    /// The last piece ended with `\r`: a `\n` opening the next one belongs to it.
    after_cr: bool,
    /// The current line has content and no terminator yet.
    open_line: bool,
}

impl Tally {
    fn feed(&mut self, text: &str) {
        for c in text.chars() {
            if std::mem::take(&mut self.after_cr) && c == '\n' {
                continue;
            }
            self.characters += 1;
            match c {
                '\r' | '\n' => {
                    self.lines += 1;
                    self.open_line = false;
                    self.after_cr = c == '\r';
                    self.ascii += 1;
                }
                c => {
                    self.open_line = true;
                    if c.is_ascii() {
                        self.ascii += 1;
                    } else {
                        self.other += 1;
                    }
                }
            }
        }
    }

    fn lines(&self) -> usize {
        self.lines + usize::from(self.open_line)
    }

    fn estimated_tokens(&self) -> usize {
        self.ascii.div_ceil(4) + self.other
    }
}

/// Measures a text file too large to hold, reading it in [`PIECE_BYTES`] pieces: the `auto`
/// candidates are judged from its head and each is tried over the whole file in turn (read
/// again from the start), so the encoding and the figures are those the in-memory path gives
/// for a smaller file.
fn measure_text_stream(raw: &str, path: &Path, format: Format) -> Result<FileMetrics> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut buffer = vec![0u8; PIECE_BYTES.max(text::DETECT_BYTES)];
    let filled = text::read_full(&mut file, &mut buffer).map_err(io)?;
    let (candidates, check_text) =
        text::document_candidates(&buffer[..filled], filled < buffer.len())?;
    for encoding in candidates {
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        match measure_as(&mut file, encoding, check_text, &mut buffer, path)? {
            Some((size, tally, hash)) => {
                return Ok(FileMetrics {
                    file_path: raw.to_string(),
                    size_bytes: size,
                    lines: tally.lines(),
                    characters: tally.characters,
                    estimated_tokens: tally.estimated_tokens(),
                    content_hash: hash,
                    format,
                    encoding: Some(encoding.name().to_string()),
                    pages: None,
                    sheets: None,
                });
            }
            None => continue,
        }
    }
    Err(Error::UnknownEncoding)
}

/// The size, tally and content hash of `file` read as `encoding` from its start; `None` when
/// its bytes are not valid in that encoding (the next candidate is tried). Text that turns
/// out binary is `BINARY_CONTENT`, from the check of the first decoded piece.
fn measure_as(
    file: &mut std::fs::File,
    encoding: text::TextEncoding,
    check_text: bool,
    buffer: &mut [u8],
    path: &Path,
) -> Result<Option<(u64, Tally, String)>> {
    let mut decoder = text::StreamDecoder::new(encoding);
    let mut hasher = Sha256::new();
    let mut text = String::new();
    let mut tally = Tally::default();
    let mut size = 0u64;
    let mut checked = !check_text;
    loop {
        let filled = text::read_full(file, buffer).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let piece = &buffer[..filled];
        hasher.update(piece);
        size += filled as u64;
        // A short read means the end of the file (read_full fills the buffer otherwise).
        let last = filled < buffer.len();
        text.clear();
        if decoder.decode(piece, last, &mut text).is_err() {
            return Ok(None);
        }
        if !checked && !text.is_empty() {
            checked = true;
            text::check_not_binary_text(&text)?;
        }
        tally.feed(&text);
        if last {
            break;
        }
    }
    Ok(Some((size, tally, hash_text(&hasher.finalize()))))
}

fn hash_text(digest: &[u8]) -> String {
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
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
