//! Where a patch reads and writes: the input's extension, size and path policy, and the
//! output file's name.

use std::path::{Path, PathBuf};

use crate::book::Book;
use crate::error::Error;
use crate::package::Package;

use super::MAX_INPUT_BYTES;

/// Refuses a path that is not an `.xlsx`/`.xlsm` workbook (`.xls` with the Excel COM message).
pub(crate) fn check_extension(xlsx_path: &str) -> Result<(), Error> {
    match extension_of(xlsx_path).as_deref() {
        Some("xlsx" | "xlsm") => Ok(()),
        Some("xls") => Err(Error::LegacyXls {
            path: xlsx_path.to_string(),
        }),
        other => Err(Error::InvalidRequest(format!(
            "xlsx_path {xlsx_path:?} has {}; only .xlsx and .xlsm workbooks can be read",
            other.map_or("no extension".to_string(), |e| format!(
                "the extension .{e}"
            ))
        ))),
    }
}

/// Opens a workbook inside the policy's roots for reading only (the read tools and
/// `validate_input`): the same path, extension and size checks as a patch.
pub(crate) fn open_for_reading(
    xlsx_path: &str,
    policy: &keiri_fs::PathPolicy,
) -> Result<(PathBuf, Book), Error> {
    check_extension(xlsx_path)?;
    let input = resolve_input(xlsx_path, policy)?;
    let bytes: std::sync::Arc<[u8]> = std::fs::read(&input)
        .map_err(io_error("reading", &input))?
        .into();
    let display = input.display().to_string();
    let book = Book::open(Package::open(&display, bytes)?)?;
    Ok((input, book))
}

/// The workbook a request names, inside the policy's roots: an existing file of at most
/// [`MAX_INPUT_BYTES`] (the extension is [`check_extension`]'s).
pub(crate) fn resolve_input(
    xlsx_path: &str,
    policy: &keiri_fs::PathPolicy,
) -> Result<PathBuf, Error> {
    let input = policy.resolve_existing(xlsx_path)?;
    let meta = std::fs::metadata(&input).map_err(io_error("reading", &input))?;
    if !meta.is_file() {
        return Err(Error::InvalidRequest(format!(
            "xlsx_path {} is not a file",
            input.display()
        )));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(Error::InvalidRequest(format!(
            "{} is larger than {MAX_INPUT_BYTES} bytes",
            input.display()
        )));
    }
    Ok(input)
}

fn extension_of(path: &str) -> Option<String> {
    Path::new(path)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
}

/// The output file name a patch of `input` writes: `out_name` (plain name; the input's
/// extension added when it has none) or `{stem}_patched{suffix}`. Public so a caller can tell
/// beforehand which file a patch will replace.
pub fn output_name(input: &Path, out_name: Option<&str>) -> Result<String, Error> {
    let (stem, suffix) = keiri_fs::stem_and_ext(input);
    let Some(name) = out_name else {
        return Ok(format!("{stem}_patched{suffix}"));
    };
    let name = name.trim();
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
        return Err(Error::InvalidRequest(format!(
            "out_name {name:?} must be a plain file name"
        )));
    }
    match Path::new(name)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
    {
        None => Ok(format!("{name}{suffix}")),
        Some(ext) if format!(".{ext}") == suffix.to_ascii_lowercase() => Ok(name.to_string()),
        Some(ext) => Err(Error::InvalidRequest(format!(
            "out_name {name:?} has the extension .{ext} but the workbook is {suffix}; Excel refuses \
             a file whose extension does not match its format"
        ))),
    }
}

pub(crate) fn io_error<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> Error + 'a {
    move |source| Error::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names() {
        let input = Path::new("/w/book.xlsm");
        assert_eq!(output_name(input, None).unwrap(), "book_patched.xlsm");
        assert_eq!(output_name(input, Some("out")).unwrap(), "out.xlsm");
        assert_eq!(output_name(input, Some("out.XLSM")).unwrap(), "out.XLSM");
        assert!(output_name(input, Some("out.xlsx")).is_err());
        assert!(output_name(input, Some("../x")).is_err());
        assert!(output_name(input, Some("")).is_err());
    }
}
