//! Any bytes as a .txt/.csv: encoding detection and decoding never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = keiri_docs::decode_text(data);
    let _ = keiri_docs::extract_bytes(data, keiri_docs::Format::Csv, &Default::default());
});
