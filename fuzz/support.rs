//! Shared by the fuzz harnesses of every crate: the case budget, the seed corpus and a byte
//! mutator. Each crate's test binary includes this file with
//! `#[path = "../../../../fuzz/support.rs"] mod fuzz_support;`, so there is one copy and no
//! extra crate. See `fuzz/README.md`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use proptest::prelude::*;

/// Cases per harness: `KEIRI_FUZZ_CASES` (what `make fuzz` sets), else a small fixed budget
/// that keeps `cargo nextest run` quick on two cores.
pub fn cases() -> u32 {
    std::env::var("KEIRI_FUZZ_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(64)
}

/// The proptest configuration of a harness: the case budget, and no regression files written
/// into the source tree (a failure prints its minimal input; add it to the corpus instead).
pub fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    }
}

/// `<repo>/fuzz/corpus/<target>`.
pub fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

/// Every seed file of a target, sorted by name; a target without seeds is a broken checkout.
pub fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = corpus_dir(target);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("fuzz corpus {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no seeds in {}", dir.display());
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// One edit of a byte string. Positions are indexes, so they fit any length.
#[derive(Debug, Clone)]
pub enum Edit {
    /// Replace a byte.
    Set(prop::sample::Index, u8),
    /// Insert one of the harness's tokens.
    Token(prop::sample::Index, prop::sample::Index),
    /// Insert arbitrary bytes.
    Insert(prop::sample::Index, Vec<u8>),
    /// Remove up to `n` bytes.
    Remove(prop::sample::Index, usize),
    /// Copy a slice of the input to another place (repeats structure).
    Repeat(prop::sample::Index, usize, prop::sample::Index),
    /// Replace the run of ASCII digits at or after a position with an extreme number.
    Number(prop::sample::Index, prop::sample::Index),
    /// Cut the input here.
    Truncate(prop::sample::Index),
}

/// Numbers that break parsers that trust them.
pub const EXTREME_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1048577",
    "16385",
    "2147483647",
    "2147483648",
    "4294967296",
    "99999999999",
    "18446744073709551616",
    "1e308",
    "NaN",
    "",
];

pub fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Edit::Set(i, b)),
        3 => (any::<prop::sample::Index>(), any::<prop::sample::Index>())
            .prop_map(|(i, t)| Edit::Token(i, t)),
        1 => (any::<prop::sample::Index>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(i, b)| Edit::Insert(i, b)),
        2 => (any::<prop::sample::Index>(), 1usize..64).prop_map(|(i, n)| Edit::Remove(i, n)),
        1 => (any::<prop::sample::Index>(), 1usize..256, any::<prop::sample::Index>())
            .prop_map(|(i, n, to)| Edit::Repeat(i, n, to)),
        3 => (any::<prop::sample::Index>(), any::<prop::sample::Index>())
            .prop_map(|(i, n)| Edit::Number(i, n)),
        1 => any::<prop::sample::Index>().prop_map(Edit::Truncate),
    ]
}

/// Applies `edits` to `input`, inserting from `tokens`, never growing past `max_len`.
pub fn apply(input: &[u8], edits: &[Edit], tokens: &[&[u8]], max_len: usize) -> Vec<u8> {
    let mut out = input.to_vec();
    let at = |i: &prop::sample::Index, len: usize| if len == 0 { 0 } else { i.index(len + 1) };
    for e in edits {
        match e {
            Edit::Set(i, b) => {
                if !out.is_empty() {
                    let p = i.index(out.len());
                    out[p] = *b;
                }
            }
            Edit::Token(i, t) => {
                if !tokens.is_empty() {
                    let p = at(i, out.len());
                    let token = tokens[t.index(tokens.len())];
                    out.splice(p..p, token.iter().copied());
                }
            }
            Edit::Insert(i, bytes) => {
                let p = at(i, out.len());
                out.splice(p..p, bytes.iter().copied());
            }
            Edit::Remove(i, n) => {
                if !out.is_empty() {
                    let p = i.index(out.len());
                    let end = (p + n).min(out.len());
                    out.drain(p..end);
                }
            }
            Edit::Repeat(i, n, to) => {
                if !out.is_empty() {
                    let p = i.index(out.len());
                    let end = (p + n).min(out.len());
                    let piece = out[p..end].to_vec();
                    let dest = at(to, out.len());
                    out.splice(dest..dest, piece);
                }
            }
            Edit::Number(i, n) => {
                if !out.is_empty() {
                    let from = i.index(out.len());
                    if let Some(start) = out[from..].iter().position(u8::is_ascii_digit) {
                        let start = from + start;
                        let len = out[start..]
                            .iter()
                            .take_while(|b| b.is_ascii_digit())
                            .count();
                        let number = EXTREME_NUMBERS[n.index(EXTREME_NUMBERS.len())];
                        out.splice(start..start + len, number.bytes());
                    }
                }
            }
            Edit::Truncate(i) => {
                let p = at(i, out.len());
                out.truncate(p);
            }
        }
        out.truncate(max_len);
    }
    out
}

/// An input for a harness: a seed with 1–8 edits (mostly), or arbitrary bytes.
pub fn input(
    seeds: Vec<Vec<u8>>,
    tokens: &'static [&'static [u8]],
    max_len: usize,
) -> impl Strategy<Value = Vec<u8>> {
    let seeds: Vec<Vec<u8>> = seeds
        .into_iter()
        .map(|mut s| {
            s.truncate(max_len);
            s
        })
        .collect();
    prop_oneof![
        6 => (prop::sample::select(seeds.clone()), prop::collection::vec(edit(), 1..8))
            .prop_map(move |(seed, edits)| apply(&seed, &edits, tokens, max_len)),
        1 => prop::sample::select(seeds),
        2 => prop::collection::vec(any::<u8>(), 0..max_len.min(4096)),
    ]
}
