//! Hashes as every run output, log and manifest writes them.

/// The SHA-256 of `bytes` as 64 lowercase hex digits (the form every hash in a run's
/// outputs, logs and manifests takes).
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
