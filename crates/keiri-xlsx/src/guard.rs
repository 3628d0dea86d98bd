//! The last line of defence around reading a workbook: a panic anywhere in a patch (our XML
//! splicing, `zip`, `quick-xml`) becomes [`Error::Unreadable`] (`WORKBOOK_UNREADABLE`, this
//! crate's code for a workbook it cannot process) instead of taking down `keiri serve`,
//! `keiri mcp` or the desktop window. The formula engine has its own guard on its thread
//! (see the `engine` module).
//!
//! Bounds of our own run before the parsers (part sizes, cell references inside Excel's grid,
//! the engine's work and time budgets); this catches what they do not know yet. It relies on
//! panics unwinding: the workspace's release profile must keep the default `panic = "unwind"`.

use crate::error::Error;

/// Runs `work` on the workbook at `path`, turning a panic inside it into an unreadable-workbook
/// error.
///
/// A patch builds all its state inside the call and writes only through an atomic rename at the
/// very end: a panic drops that state (and any temp file) with it, and the caller's request and
/// environment are only read (see [`keiri_fs::catch_panic`]).
pub(crate) fn guarded<T>(path: &str, work: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    keiri_fs::catch_panic(work).unwrap_or_else(|message| {
        Err(Error::unreadable(
            path,
            format!("the workbook could not be processed ({message})"),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_an_unreadable_workbook() {
        let err = guarded::<()>("book.xlsx", || panic!("index out of bounds")).unwrap_err();
        assert_eq!(err.code(), "WORKBOOK_UNREADABLE");
        assert!(err.to_string().contains("index out of bounds"), "{err}");
        assert_eq!(guarded("book.xlsx", || Ok(3)).unwrap(), 3);
        let err = guarded::<()>("book.xlsx", || Err(Error::Backend("x".into()))).unwrap_err();
        assert_eq!(err.code(), "BACKEND_ERROR");
    }
}
