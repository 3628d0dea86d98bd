//! The last line of defence around code that reads untrusted files (parsers, XML splicing, zip):
//! a panic inside becomes an error of the caller's crate for that one file, instead of taking
//! down `keiri serve`, `keiri mcp` or the desktop window.
//!
//! Bounds of the callers' own run first and refuse what is known to be dangerous; this catches
//! what they do not know yet. It relies on panics unwinding: the workspace's release profile
//! must keep the default `panic = "unwind"`.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `work`; a panic inside it is `Err` with the panic's message.
///
/// `AssertUnwindSafe`: the callers build all their state inside `work` and only read what they
/// share with it (input bytes, options, the request), and write only through an atomic rename at
/// the very end, so whatever a panicking `work` leaves behind is dropped with it.
pub fn catch_panic<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(work)).map_err(|payload| message(&*payload))
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
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    #[test]
    fn a_panic_is_its_message_and_a_value_passes_through() {
        assert_eq!(catch_panic(|| 7), Ok(7));
        assert_eq!(
            catch_panic(|| panic!("attempt to multiply with overflow")),
            Err::<(), _>("attempt to multiply with overflow".to_string())
        );
        let n = 3;
        assert_eq!(
            catch_panic(|| panic!("index {n} out of bounds")),
            Err::<(), _>("index 3 out of bounds".to_string())
        );
        assert_eq!(
            catch_panic(|| std::panic::panic_any(42_u8)),
            Err::<(), _>("panic".to_string())
        );
    }
}
