//! `output/*` blocks (filled in by their own task).

use crate::block::Registry;

pub fn register(registry: &mut Registry) {
    let _ = registry;
}
