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

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::{Error, Result};

/// Runs `parse`, turning a panic inside it into a corrupt-file error of `format`.
///
/// `AssertUnwindSafe` is sound here because the closure only reads the input bytes and the
/// options; whatever state a panicking parser leaves behind is dropped with it.
pub(crate) fn parse<T>(format: &'static str, parse: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(parse)) {
        Ok(result) => result,
        Err(payload) => Err(Error::corrupt(
            format,
            format!(
                "the {format} reader failed on this file ({})",
                message(&*payload)
            ),
        )),
    }
}

/// The text of a panic payload (`panic!` with a literal or a formatted message).
fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
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
