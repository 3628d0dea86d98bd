//! The last line of defence around the parsers: a panic inside a parser becomes
//! [`Error::Corrupt`] (`CORRUPT_FILE`) for that one file instead of taking the process down.
//!
//! Our own bounds (see the `bounds` module and [`crate::zipguard`]) run first and refuse what
//! we know to be dangerous before any parser allocates; this guard catches what we do not know
//! yet — calamine 0.38, for one, multiplies row and column numbers without overflow checks and
//! panics with "attempt to multiply with overflow" in builds with overflow checks (see
//! `docs/upstream/calamine-overflow.md`). It cannot catch an aborting allocation failure, which
//! is why declared sizes are checked before a parser sees them.
//!
//! This relies on panics unwinding: the workspace's release profile must keep the default
//! `panic = "unwind"`.

use crate::error::{Error, Result};

/// Runs `parse`, turning a panic inside it into a corrupt-file error of `format`.
///
/// The closure only reads the input bytes and the options; whatever state a panicking parser
/// leaves behind is dropped with it (see [`keiri_fs::catch_panic`]).
pub(crate) fn parse<T>(format: &'static str, parse: impl FnOnce() -> Result<T>) -> Result<T> {
    keiri_fs::catch_panic(parse).unwrap_or_else(|message| {
        Err(Error::corrupt(
            format,
            format!("the {format} reader failed on this file ({message})"),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_parser_is_a_corrupt_file() {
        let err = parse::<()>("xlsx", || panic!("attempt to multiply with overflow")).unwrap_err();
        assert_eq!(err.code(), "CORRUPT_FILE");
        assert!(err.to_string().contains("multiply with overflow"), "{err}");
        assert_eq!(parse("pdf", || Ok(7)).unwrap(), 7);
        let err = parse::<()>("docx", || Err(Error::Encrypted)).unwrap_err();
        assert_eq!(err.code(), "ENCRYPTED");
    }
}
