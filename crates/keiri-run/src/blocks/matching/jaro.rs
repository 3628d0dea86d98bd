//! Jaro–Winkler on two names, the same figure as `strsim::jaro_winkler` (the same steps, in
//! the same order, so the same `f64` to the bit; a proptest checks it), without its cost in
//! a matching loop: the names are decoded into characters once, on the stack, instead of
//! once for every character of the other name, and the match flags are bits, not a
//! `Vec<bool>` allocated on each call. The matching blocks score millions of name pairs.

/// Names longer than this many characters are scored by `strsim` itself.
const MAX_CHARS: usize = 64;

/// `strsim::jaro_winkler(a, b)`.
pub(crate) fn jaro_winkler(a: &str, b: &str) -> f64 {
    let mut a_buf = ['\0'; MAX_CHARS];
    let mut b_buf = ['\0'; MAX_CHARS];
    let (Some(a), Some(b)) = (chars_into(a, &mut a_buf), chars_into(b, &mut b_buf)) else {
        return strsim::jaro_winkler(a, b);
    };
    let sim = jaro(a, b);
    if sim > 0.7 {
        let prefix_length = a.iter().take(4).zip(b).take_while(|(x, y)| x == y).count();
        sim + 0.1 * prefix_length as f64 * (1.0 - sim)
    } else {
        sim
    }
}

/// The characters of `text` in `buf`, or `None` when it has more than `buf` holds.
fn chars_into<'b>(text: &str, buf: &'b mut [char; MAX_CHARS]) -> Option<&'b [char]> {
    let mut n = 0;
    for c in text.chars() {
        *buf.get_mut(n)? = c;
        n += 1;
    }
    Some(&buf[..n])
}

/// `strsim::generic_jaro` on two character slices of at most [`MAX_CHARS`] each.
fn jaro(a: &[char], b: &[char]) -> f64 {
    let (a_len, b_len) = (a.len(), b.len());
    if a_len == 0 && b_len == 0 {
        return 1.0;
    } else if a_len == 0 || b_len == 0 {
        return 0.0;
    }
    let search_range = (a_len.max(b_len) / 2).saturating_sub(1);
    let (mut a_flags, mut b_flags) = (0u64, 0u64);
    let mut matches = 0_usize;
    for (i, &x) in a.iter().enumerate() {
        let min_bound = i.saturating_sub(search_range);
        let max_bound = b_len.min(i + search_range + 1);
        for (j, &y) in b.iter().enumerate().take(max_bound).skip(min_bound) {
            if x == y && (b_flags & (1 << j)) == 0 {
                a_flags |= 1 << i;
                b_flags |= 1 << j;
                matches += 1;
                break;
            }
        }
    }
    let mut transpositions = 0_usize;
    if matches != 0 {
        let mut b_matched = b
            .iter()
            .enumerate()
            .filter(|&(j, _)| (b_flags & (1 << j)) != 0)
            .map(|(_, y)| y);
        for (i, x) in a.iter().enumerate() {
            if (a_flags & (1 << i)) != 0 && b_matched.next() != Some(x) {
                transpositions += 1;
            }
        }
    }
    transpositions /= 2;
    if matches == 0 {
        0.0
    } else {
        ((matches as f64 / a_len as f64)
            + (matches as f64 / b_len as f64)
            + ((matches - transpositions) as f64 / matches as f64))
            / 3.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Names drawn from what the blocks compare: katakana, kanji of company forms, latin,
    /// digits, with repeats (transpositions) and lengths around the search window.
    fn name() -> impl Strategy<Value = String> {
        let alphabet: Vec<char> =
            "アイウエオカキクケコサシスセソタチツテトヤマダ株式会社有限ABCab12 ー・"
                .chars()
                .collect();
        proptest::collection::vec(proptest::sample::select(alphabet), 0..70)
            .prop_map(|cs| cs.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        /// The very same figure as strsim's, bit for bit, for short names and past the stack
        /// buffer (where strsim itself answers).
        #[test]
        fn the_score_is_strsims_to_the_bit(a in name(), b in name()) {
            prop_assert_eq!(jaro_winkler(&a, &b).to_bits(), strsim::jaro_winkler(&a, &b).to_bits(), "{} / {}", a, b);
        }

        /// Near spellings (one name edited from the other) reach the high scores where the
        /// prefix bonus applies, and agree there too.
        #[test]
        fn near_spellings_score_as_strsim(a in name(), edit in 0usize..70, c in name()) {
            let mut b: Vec<char> = a.chars().collect();
            if !b.is_empty() {
                let at = edit % b.len();
                b.remove(at);
                b.extend(c.chars().take(2));
                if let Some(last) = b.len().checked_sub(1) {
                    b.swap(0, at.min(last));
                }
            }
            let b: String = b.into_iter().collect();
            prop_assert_eq!(jaro_winkler(&a, &b).to_bits(), strsim::jaro_winkler(&a, &b).to_bits(), "{} / {}", a, b);
        }
    }

    #[test]
    fn known_figures() {
        assert_eq!(jaro_winkler("", ""), 1.0);
        assert_eq!(jaro_winkler("ヤマダ", ""), 0.0);
        assert_eq!(jaro_winkler("ヤマダショウジ", "ヤマダショウジ"), 1.0);
        // strsim's own documented example.
        assert!((jaro_winkler("cheeseburger", "cheese fries") - 0.866).abs() < 0.001);
    }
}
