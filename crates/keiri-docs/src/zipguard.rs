//! Opening OOXML containers (`.docx`, `.xlsx`) without trusting them.
//!
//! A zip's declared sizes can lie, and a few kilobytes can inflate to gigabytes, so every entry
//! we (or calamine) parse is read through a counter that stops at a cap. Encrypted Office files
//! are not zips at all but OLE compound files holding an `EncryptedPackage` stream; they are
//! recognised by their signature and reported as [`Error::Encrypted`].

use std::io::{BufReader, Cursor, Read};

use zip::ZipArchive;
use zip::result::ZipError;

use crate::bounds::Declared;
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
/// deterministic, so the sizes measured here are the sizes that reader will see. While an entry
/// inflates, `declared` reads the numbers it declares (see [`crate::bounds`]) and checks them
/// against the entry's real size. Then the entries `wanted` passed over that a relationship
/// points at are checked the same way: a reader that follows relationships parses them too,
/// whatever their names.
pub(crate) fn verify_entries(
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    format: &'static str,
    limits: &ZipLimits,
    wanted: impl Fn(&str) -> bool,
    declared: &mut Declared,
) -> Result<()> {
    let mut total: u64 = 0;
    let mut skipped = Vec::new();
    for i in 0..archive.len() {
        if !verify_entry(
            archive,
            i,
            format,
            limits,
            |n, _| wanted(n),
            declared,
            &mut total,
        )? {
            skipped.push(i);
        }
    }
    for i in skipped {
        verify_entry(
            archive,
            i,
            format,
            limits,
            |name, declared| declared.is_target(name),
            declared,
            &mut total,
        )?;
    }
    declared.finish(total)
}

/// Inflates and scans entry `i` if it is a file and `wanted` selects it; `Ok(false)` if not.
fn verify_entry(
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    i: usize,
    format: &'static str,
    limits: &ZipLimits,
    wanted: impl Fn(&str, &Declared) -> bool,
    declared: &mut Declared,
    total: &mut u64,
) -> Result<bool> {
    let entry = match archive.by_index(i) {
        Ok(e) => e,
        Err(e) => return Err(zip_error(format, e)),
    };
    let name = entry.name().map(|n| n.into_owned()).unwrap_or_default();
    if entry.is_dir() || !wanted(&name, declared) {
        return Ok(false);
    }
    if entry.size() > limits.max_entry_bytes {
        return Err(bomb(limits.max_entry_bytes, &name));
    }
    let mut counted = Counted {
        inner: entry,
        size: 0,
        before: *total,
        limits,
        over: None,
    };
    let mut reader = BufReader::with_capacity(64 * 1024, &mut counted);
    let scanned = declared.scan(&name, &mut reader);
    // The scan stops early on broken XML; the rest of the entry still counts.
    let drained = scanned
        .as_ref()
        .map_or(Ok(0), |_| std::io::copy(&mut reader, &mut std::io::sink()));
    drop(reader);
    if let Some(limit) = counted.over {
        return Err(match limit {
            Over::Entry => bomb(limits.max_entry_bytes, &name),
            Over::Total => bomb(limits.max_total_bytes, "all entries together"),
        });
    }
    let part = scanned?;
    drained.map_err(|e| io_corrupt(format, &e))?;
    *total += counted.size;
    declared.finish_part(&name, &part, counted.size)?;
    Ok(true)
}

/// Which cap an entry went over.
#[derive(Debug, Clone, Copy)]
enum Over {
    Entry,
    Total,
}

/// A reader that counts inflated bytes and fails once an entry or all entries together go
/// over their cap.
struct Counted<'l, R> {
    inner: R,
    size: u64,
    /// Bytes of the entries before this one.
    before: u64,
    limits: &'l ZipLimits,
    over: Option<Over>,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.over.is_some() {
            return Err(std::io::Error::other("decompression limit"));
        }
        let n = self.inner.read(buf)?;
        self.size += n as u64;
        if self.size > self.limits.max_entry_bytes {
            self.over = Some(Over::Entry);
        } else if self.before + self.size > self.limits.max_total_bytes {
            self.over = Some(Over::Total);
        }
        if self.over.is_some() {
            return Err(std::io::Error::other("decompression limit"));
        }
        Ok(n)
    }
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
