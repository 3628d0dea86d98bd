//! The builtin blocks, one module per catalog category (the directory names under
//! `block_specs/`). Each module has a `register` function that adds its blocks.

use crate::block::Registry;

mod control;
mod input;
mod matching;
mod output;
mod transforms;
mod ui;

/// Adds every builtin to `registry`.
pub fn register_all(registry: &mut Registry) {
    input::register(registry);
    transforms::register(registry);
    matching::register(registry);
    output::register(registry);
    control::register(registry);
    ui::register(registry);
}
