//! Opening OOXML containers (`.docx`, `.xlsx`) without trusting them.
//!
//! A zip's declared sizes can lie, and a few kilobytes can inflate to gigabytes, so every entry
//! we (or calamine) parse is read through a counter that stops at a cap. Encrypted Office files
//! are not zips at all but OLE compound files holding an `EncryptedPackage` stream; they are
//! recognised by their signature and reported as [`Error::Encrypted`].

use std::io::{Cursor, Read};

use zip::ZipArchive;
use zip::result::ZipError;

use crate::error::{Error, Result};

/// Caps for one archive.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ZipLimits {
    /// Entries in the central directory.
    pub max_entries: usize,
    /// Decompressed bytes of one entry.
    pub max_entry_bytes: u64,
    /// Decompressed bytes of all checked entries together.
    pub max_total_bytes: u64,
}

impl Default for ZipLimits {
    fn default() -> Self {
        ZipLimits {
            max_entries: 10_000,
            max_entry_bytes: 128 * 1024 * 1024,
            max_total_bytes: 256 * 1024 * 1024,
        }
    }
}

const CFB_MAGIC: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";

/// Opens `bytes` as the zip container of an OOXML document of kind `format`.
pub(crate) fn open<'a>(
    bytes: &'a [u8],
    format: &'static str,
    limits: &ZipLimits,
) -> Result<ZipArchive<Cursor<&'a [u8]>>> {
    if bytes.starts_with(CFB_MAGIC) {
        // Office stores a password-protected .docx/.xlsx as an OLE file with an
        // "EncryptedPackage" stream (its directory entry name is UTF-16LE).
        if contains(bytes, &utf16le("EncryptedPackage")) {
            return Err(Error::Encrypted);
        }
        return Err(Error::UnsupportedFormat(format!(
            "legacy binary Office file renamed .{format}; save it as .{format} from Office"
        )));
    }
    let archive = ZipArchive::new(Cursor::new(bytes)).map_err(|e| zip_error(format, e))?;
    if archive.len() > limits.max_entries {
        return Err(Error::StructureLimit(format!(
            "{} zip entries (limit {})",
            archive.len(),
            limits.max_entries
        )));
    }
    Ok(archive)
}

/// Reads one entry fully, refusing to inflate past `limits.max_entry_bytes`. `Ok(None)` if the
/// entry does not exist.
pub(crate) fn read_entry(
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    name: &str,
    format: &'static str,
    limits: &ZipLimits,
) -> Result<Option<Vec<u8>>> {
    let entry = match archive.by_name(name) {
        Ok(e) => e,
        Err(ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(zip_error(format, e)),
    };
    let cap = limits.max_entry_bytes;
    if entry.size() > cap {
        return Err(bomb(cap, name));
    }
    let mut out = Vec::with_capacity(usize::try_from(entry.size()).unwrap_or(0).min(1 << 20));
    let read = entry
        .take(cap + 1)
        .read_to_end(&mut out)
        .map_err(|e| io_corrupt(format, &e))?;
    if read as u64 > cap {
        return Err(bomb(cap, name));
    }
    Ok(Some(out))
}

/// Inflates every entry that `wanted` selects into a counter, so a later reader of those
/// entries (calamine) cannot be made to allocate more than the caps. Decompression is
/// deterministic, so the sizes measured here are the sizes that reader will see.
pub(crate) fn verify_entries(
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    format: &'static str,
    limits: &ZipLimits,
    wanted: impl Fn(&str) -> bool,
) -> Result<()> {
    let mut total: u64 = 0;
    let mut buf = vec![0u8; 64 * 1024];
    for i in 0..archive.len() {
        let mut entry = match archive.by_index(i) {
            Ok(e) => e,
            Err(e) => return Err(zip_error(format, e)),
        };
        let name = entry.name().map(|n| n.into_owned()).unwrap_or_default();
        if entry.is_dir() || !wanted(&name) {
            continue;
        }
        if entry.size() > limits.max_entry_bytes {
            return Err(bomb(limits.max_entry_bytes, &name));
        }
        let mut size: u64 = 0;
        loop {
            let n = entry.read(&mut buf).map_err(|e| io_corrupt(format, &e))?;
            if n == 0 {
                break;
            }
            size += n as u64;
            total += n as u64;
            if size > limits.max_entry_bytes {
                return Err(bomb(limits.max_entry_bytes, &name));
            }
            if total > limits.max_total_bytes {
                return Err(bomb(limits.max_total_bytes, "all entries together"));
            }
        }
    }
    Ok(())
}

fn bomb(limit: u64, what: &str) -> Error {
    Error::DecompressionLimit {
        limit,
        what: format!("zip entry {what}"),
    }
}

pub(crate) fn zip_error(format: &'static str, e: ZipError) -> Error {
    match e {
        ZipError::UnsupportedArchive(msg) if msg.to_ascii_lowercase().contains("password") => {
            Error::Encrypted
        }
        ZipError::Io(io) => io_corrupt(format, &io),
        other => Error::corrupt(format, other.to_string()),
    }
}

fn io_corrupt(format: &'static str, e: &std::io::Error) -> Error {
    let msg = e.to_string();
    if msg.to_ascii_lowercase().contains("password") {
        return Error::Encrypted;
    }
    Error::corrupt(format, msg)
}

fn utf16le(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}
