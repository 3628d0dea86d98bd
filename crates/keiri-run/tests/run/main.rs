//! Integration tests of keiri-run: the engine and every builtin block.
mod engine;
