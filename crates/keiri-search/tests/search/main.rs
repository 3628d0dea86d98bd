//! Integration tests of keiri-search: one binary, one module per area.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod eval;
mod local_model;
mod openai;
mod pack;
mod retrieve;
mod support;
mod tokenizer;
