//! A bounded memo: a column's per-row work done once per distinct value.

use std::collections::HashMap;

/// How many distinct values a [`Memo`] keeps.
pub(crate) const MEMO_ENTRIES: usize = 1 << 16;

/// The values a pure function gave for the keys met so far, up to [`MEMO_ENTRIES`] of them:
/// a column's per-row work done once per distinct value.
pub(crate) struct Memo<K, V>(HashMap<K, V, foldhash::fast::RandomState>);

impl<K, V> Default for Memo<K, V> {
    fn default() -> Self {
        Memo(HashMap::default())
    }
}

impl<K: std::hash::Hash + Eq, V: Clone> Memo<K, V> {
    /// The value for `key`: remembered, or computed by `compute` (and remembered while there
    /// is room).
    pub(crate) fn get_or(&mut self, key: K, compute: impl FnOnce() -> V) -> V {
        if let Some(value) = self.0.get(&key) {
            return value.clone();
        }
        let value = compute();
        if self.0.len() < MEMO_ENTRIES {
            self.0.insert(key, value.clone());
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past its room the memo still gives each key its own value, computed afresh, and keeps
    /// no more entries.
    #[test]
    fn a_full_memo_still_computes_every_value() {
        let mut memo: Memo<u32, u32> = Memo::default();
        let mut computed = 0;
        for round in 0..2 {
            for key in 0..(MEMO_ENTRIES as u32 + 10) {
                let value = memo.get_or(key, || {
                    computed += 1;
                    key * 3
                });
                assert_eq!(value, key * 3, "round {round}, key {key}");
            }
        }
        assert_eq!(memo.0.len(), MEMO_ENTRIES);
        // Every key once, then again only the 10 that found no room.
        assert_eq!(computed, MEMO_ENTRIES + 10 + 10);
    }
}
