//! The builtin blocks, one module per catalog category (the directory names under
//! `block_specs/`). Each module has a `register` function that adds its blocks.

use crate::block::Registry;

/// Adds every builtin to `registry`.
pub fn register_all(registry: &mut Registry) {
    let _ = registry;
}
