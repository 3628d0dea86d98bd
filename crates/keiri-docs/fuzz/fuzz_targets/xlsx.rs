//! Any bytes as a .xlsx: an error or text, never a panic, a hang or unbounded memory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = keiri_docs::ExtractOptions { max_chars: Some(100_000), ..Default::default() };
    let _ = keiri_docs::extract_bytes(data, keiri_docs::Format::Xlsx, &opts);
});
