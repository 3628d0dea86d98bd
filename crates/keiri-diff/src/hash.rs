//! The content hash taken before and after applying. It is a trait so that tests can observe
//! when hashing happens relative to the backend run.

use sha2::{Digest, Sha256};

/// Computes the SHA-256 digest of file contents.
pub trait ContentHasher {
    fn sha256(&self, bytes: &[u8]) -> [u8; 32];
}

impl<T: ContentHasher + ?Sized> ContentHasher for &T {
    fn sha256(&self, bytes: &[u8]) -> [u8; 32] {
        (**self).sha256(bytes)
    }
}

/// SHA-256 by the `sha2` crate.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sha256Hasher;

impl ContentHasher for Sha256Hasher {
    fn sha256(&self, bytes: &[u8]) -> [u8; 32] {
        let digest = Sha256::digest(bytes);
        let mut out = [0u8; 32];
        for (o, d) in out.iter_mut().zip(digest.iter()) {
            *o = *d;
        }
        out
    }
}

/// `sha256:<hex>`, the form `keiri-docs` uses for file hashes too.
pub fn hex(digest: &[u8; 32]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digest() {
        assert_eq!(
            hex(&Sha256Hasher.sha256(b"abc")),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
