//! Candidate generation for the matching blocks: which pairs of rows are worth comparing,
//! found without comparing every pair of the list, and without missing a pair the full
//! comparison would keep.
//!
//! - [`super::grid::close_pairs`] (its own file): rows close in amount and date, within a
//!   group or between related groups (a grid of amount × date cells per group).
//! - [`similar_names`]: the pairs of distinct names whose [`super::name_similarity`] reaches
//!   a threshold (found in a [`ShapeIndex`] of all the names, exact for Jaro–Winkler).
//! - [`ShapeIndex`]: the names of a list that may reach a threshold with one name
//!   ([`Shape::may_reach`]), looked up by length and rarer characters instead of tested one
//!   by one.

use super::{FastMap, normalize_party_name, normalized_name_similarity};
use crate::block::BlockError;
use rayon::prelude::*;

/// Party names (vendors, customers, payers) by id: each distinct text normalised once
/// ([`normalize_party_name`]), texts that normalise alike sharing an id, and the similarity
/// of each pair of ids computed once.
#[derive(Default)]
pub(super) struct Names {
    by_raw: FastMap<String, u32>,
    by_normalized: FastMap<String, u32>,
    texts: Vec<String>,
    scores: FastMap<(u32, u32), f64>,
}

impl Names {
    /// The id of a name as written.
    pub fn id(&mut self, raw: &str) -> u32 {
        if let Some(&id) = self.by_raw.get(raw) {
            return id;
        }
        let normalized = normalize_party_name(raw);
        let id = match self.by_normalized.get(&normalized) {
            Some(&id) => id,
            None => {
                let id = self.texts.len() as u32;
                self.texts.push(normalized.clone());
                self.by_normalized.insert(normalized, id);
                id
            }
        };
        self.by_raw.insert(raw.to_string(), id);
        id
    }

    /// The ids `other`'s names have here, by `other`'s id: a name this list lacks is added,
    /// in `other`'s order, so that reading some names into `other` and then taking them over
    /// gives each the id reading them here would have given.
    pub fn take_over(&mut self, other: &Names) -> Vec<u32> {
        other
            .texts
            .iter()
            .map(|normalized| match self.by_normalized.get(normalized) {
                Some(&id) => id,
                None => {
                    let id = self.texts.len() as u32;
                    self.texts.push(normalized.clone());
                    self.by_normalized.insert(normalized.clone(), id);
                    id
                }
            })
            .collect()
    }

    /// Each distinct name, normalised, by id.
    pub fn texts(&self) -> &[String] {
        &self.texts
    }

    /// The similarity of two ids, when it is already known (from [`similar_names`]).
    pub fn remember(&mut self, a: u32, b: u32, score: f64) {
        self.scores.insert((a.min(b), a.max(b)), score);
    }

    /// [`super::name_similarity`] of the names with these ids.
    pub fn similarity(&mut self, a: u32, b: u32) -> f64 {
        let texts = &self.texts;
        if a == b {
            // 1, or 0 for an empty name: nothing to keep.
            return normalized_name_similarity(&texts[a as usize], &texts[b as usize]);
        }
        *self
            .scores
            .entry((a.min(b), a.max(b)))
            .or_insert_with(|| normalized_name_similarity(&texts[a as usize], &texts[b as usize]))
    }
}

/// A name's characters as a set of 128 bits (each character hashed to one), its length in
/// characters and its first four characters: enough to tell most pairs of names apart as
/// dissimilar without scoring them.
#[derive(Clone, Copy, Debug)]
pub(super) struct Shape {
    bits: u128,
    /// The bits set in `bits`: the test below counts the bits two names share once and
    /// takes each name's missing ones from it.
    distinct: u32,
    len: u32,
    /// `1 / len` (0 for an empty name): the test below multiplies, as it runs for every
    /// pair of a payer and a customer name, and a division costs several multiplications.
    inverse_len: f64,
    /// The first four characters (`'\0'` past the end; [`Shape::prefix_with`] stops at the
    /// shorter name): Winkler's bonus is for a prefix shared up to four characters.
    head: [char; 4],
}

impl Shape {
    /// The shape of a name already through [`normalize_party_name`].
    pub fn of(name: &str) -> Shape {
        let mut shape = Shape {
            bits: 0,
            distinct: 0,
            len: 0,
            inverse_len: 0.0,
            head: ['\0'; 4],
        };
        for c in name.chars() {
            // A multiplicative hash of the code point; any spread works, collisions only
            // make the test below let more pairs through.
            let bit = (u32::from(c).wrapping_mul(0x9E37_79B1) >> 25) & 127;
            shape.bits |= 1u128 << bit;
            if let Some(slot) = shape.head.get_mut(shape.len as usize) {
                *slot = c;
            }
            shape.len += 1;
        }
        shape.distinct = shape.bits.count_ones();
        if shape.len > 0 {
            shape.inverse_len = 1.0 / f64::from(shape.len);
        }
        shape
    }

    /// The number of characters the two names begin with alike, up to four: the `l` of
    /// Winkler's bonus, as [`super::jaro::jaro_winkler`] counts it.
    fn prefix_with(self, other: Shape) -> usize {
        let shorter = self.len.min(other.len).min(4) as usize;
        self.head[..shorter]
            .iter()
            .zip(&other.head[..shorter])
            .take_while(|(x, y)| x == y)
            .count()
    }

    /// Whether the two names may reach `threshold` by [`normalized_name_similarity`] (less
    /// 1e-9, as the blocks compare): false only when they cannot, so a caller that scores the
    /// names it lets through finds every pair at the threshold.
    ///
    /// Jaro–Winkler is Jaro itself when Jaro is at most 0.7, and otherwise
    /// `jaro + 0.1 × l × (1 − jaro)` with `l` the shared prefix (up to four characters): so
    /// reaching `t` takes a Jaro of at least `t`, or of more than 0.7 and at least
    /// `(t − 0.1 l) / (1 − 0.1 l)`. Jaro is at most (m/|a| + m/|b| + 1) / 3 with m the
    /// characters the two share, and each distinct character of one name missing from the
    /// other (its bit not set there; a collision only hides a missing one) takes at least
    /// one occurrence out of m. Names that do not begin alike (most pairs) get no bonus, so
    /// they need the threshold itself.
    pub fn may_reach(self, other: Shape, threshold: f64) -> bool {
        let jaro = jaro_needed(self.prefix_with(other), threshold);
        if jaro <= 0.0 {
            return true;
        }
        if self.len == 0 || other.len == 0 {
            // Similarity 0: reached only by a threshold at or under 0.
            return false;
        }
        let common = (self.bits & other.bits).count_ones();
        let (missing_here, missing_there) = (self.distinct - common, other.distinct - common);
        let shared = self
            .len
            .saturating_sub(missing_here)
            .min(other.len.saturating_sub(missing_there));
        jaro_at_most(shared, self.inverse_len, other.inverse_len) >= jaro
    }
}

/// The Jaro two names need to reach `threshold` (less 1e-9, as the blocks compare) by
/// Jaro–Winkler when they begin alike for `prefix` characters (up to four).
fn jaro_needed(prefix: usize, threshold: f64) -> f64 {
    let target = threshold - 1e-9;
    let bonus = 0.1 * prefix.min(4) as f64;
    target.min(((target - bonus) / (1.0 - bonus)).max(0.7))
}

/// The most Jaro can be for two names of lengths `1 / inverse_a` and `1 / inverse_b` that
/// share at most `shared` characters: (shared / a + shared / b + 1) / 3, with reciprocals (a
/// rounding apart, 1e-16, far under the 1e-12 margin added to keep a pair at the bound in).
fn jaro_at_most(shared: u32, inverse_a: f64, inverse_b: f64) -> f64 {
    let shared = f64::from(shared);
    (shared * inverse_a + shared * inverse_b + 1.0) * (1.0 / 3.0) + 1e-12
}

/// Names' shapes indexed by length and by character bit, to find the names that pass
/// [`Shape::may_reach`] for one name without testing every name: the same names, in far
/// fewer tests when the names are many.
///
/// Of two names of lengths a and b sharing at most s characters, Jaro is at most
/// (s/a + s/b + 1) / 3, so for each length b there is a least s a pair needs (for names
/// that do not begin alike, the Jaro of the threshold itself; the names that begin like the
/// query, which may need less, are kept by first character and tested one by one). The
/// query name counts its shared characters by its bits: it shares at most
/// `len − distinct + common` of them, so a name of length b needs at least k of the query's
/// bits, and therefore holds `t` of any `distinct − k + t` of them. The index counts the
/// query's rarest ones among the names of that length (by their postings or, where they are
/// common, by bitmap words of 64 names) and tests only the
/// names holding `t` of them (up to three); kanji company names never reach a katakana
/// payer, and most katakana names lack its rarer sounds.
pub(super) struct ShapeIndex {
    /// Per length in characters (the index), the names of that length.
    by_length: Vec<LengthBucket>,
    /// Per first character, the names that begin with it. Only a name beginning like the
    /// query gets Winkler's bonus and so may need less Jaro than the threshold: these few are
    /// tested one by one, and the postings are asked for the Jaro of a name without the bonus
    /// (at 0.8, a name of 9 characters must then share 7 of them instead of 5).
    by_head: FastMap<char, Vec<(u32, Shape)>>,
}

#[derive(Default)]
struct LengthBucket {
    ids: Vec<u32>,
    /// Each name's character bits and how many are set ([`Shape::bits`], [`Shape::distinct`]):
    /// all the test of a candidate reads, kept apart from the rest of its shape, as the
    /// candidates of a query are read in no order a cache foresees (a 48-byte shape each was
    /// a fifth of a million-receivable reconciliation, waiting for memory).
    bits: Vec<u128>,
    distinct: Vec<u32>,
    /// Per bit, the positions in `ids` of the names that have it, ascending.
    postings: Vec<Vec<u32>>,
    /// The same as bitmaps, a row of `ids.len() / 64` words (rounded up) per bit, bit after
    /// bit: word `bit × words + w` marks the names among positions `64w..64w + 64` that have
    /// `bit`. Where the query's bits are common among the names of a length (katakana sounds
    /// in katakana names), a word of 64 names is read per bit instead of a posting per name,
    /// each bit's row in order (a cache line holds eight words of one bit; with the bits of
    /// 64 names side by side, it held one word the count read).
    bitmaps: Vec<u64>,
}

/// How [`LengthBucket::candidates`] counts the names holding the query's rarest bits: by
/// reading each bit's postings, or its bitmaps word by word. The same names either way.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Counting {
    Postings,
    Words,
}

impl ShapeIndex {
    /// The index of these names (an id and its shape each).
    pub fn new(names: impl IntoIterator<Item = (u32, Shape)>) -> ShapeIndex {
        let mut by_length: Vec<LengthBucket> = Vec::new();
        let mut by_head: FastMap<char, Vec<(u32, Shape)>> = FastMap::default();
        for (id, shape) in names {
            if shape.len > 0 {
                by_head.entry(shape.head[0]).or_default().push((id, shape));
            }
            let len = shape.len as usize;
            if by_length.len() <= len {
                by_length.resize_with(len + 1, LengthBucket::default);
            }
            let bucket = &mut by_length[len];
            if bucket.postings.is_empty() {
                bucket.postings = vec![Vec::new(); 128];
            }
            let position = bucket.ids.len() as u32;
            bucket.ids.push(id);
            bucket.bits.push(shape.bits);
            bucket.distinct.push(shape.distinct);
            for bit in set_bits(shape.bits) {
                bucket.postings[bit].push(position);
            }
        }
        for bucket in &mut by_length {
            let words = bucket.ids.len().div_ceil(64);
            bucket.bitmaps = vec![0; 128 * words];
            for (bit, postings) in bucket.postings.iter().enumerate() {
                let row = &mut bucket.bitmaps[bit * words..][..words];
                for &at in postings {
                    row[at as usize / 64] |= 1 << (at % 64);
                }
            }
        }
        ShapeIndex { by_length, by_head }
    }

    /// The ids of the names `shape.may_reach(name, threshold)` lets through, ascending.
    pub fn may_reach(&self, shape: Shape, threshold: f64) -> Vec<u32> {
        // A name that does not begin like the query gets no bonus: it needs the Jaro of no
        // prefix. Those that do begin alike are all tested (below).
        let mut found = Vec::new();
        let mut marks = Vec::new();
        self.within_reach(
            shape,
            jaro_needed(0, threshold),
            0..self.by_length.len(),
            &mut marks,
            |id| found.push(id),
        );
        if shape.len > 0
            && let Some(alike) = self.by_head.get(&shape.head[0])
        {
            found.extend(
                alike
                    .iter()
                    .filter(|(_, other)| shape.may_reach(*other, threshold))
                    .map(|&(id, _)| id),
            );
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Gives `found` the ids of the names of `lengths` characters whose characters allow a
    /// Jaro of `jaro` with `shape` (the bound of [`Shape::may_reach`], prefixes not looked at):
    /// length after length, each length's in the order they were indexed. `marks` is room
    /// for the candidates' bitmaps, kept by a caller that asks again.
    fn within_reach(
        &self,
        shape: Shape,
        jaro: f64,
        lengths: std::ops::Range<usize>,
        marks: &mut Vec<u64>,
        mut found: impl FnMut(u32),
    ) {
        let end = lengths.end.min(self.by_length.len());
        let lengths = lengths.start.min(end)..end;
        for (len, bucket) in lengths.clone().zip(&self.by_length[lengths]) {
            let len = len as u32;
            let Some(least) = least_shared(shape, len, jaro) else {
                continue;
            };
            bucket.candidates(shape, least, marks);
            // Shape::may_reach without the bonus, in integers: each name shares at most its
            // length less its bits missing from the other (`least` is the least share whose
            // bound reaches `jaro`). Each is tested as the marks are read.
            let here = shape.len - shape.distinct;
            for at in positions(marks) {
                let at = at as usize;
                let common = (shape.bits & bucket.bits[at]).count_ones();
                if common + here >= least && common + len - bucket.distinct[at] >= least {
                    found(bucket.ids[at]);
                }
            }
        }
    }
}

/// Of the query's rarest bits in a bucket, how many at most a name must hold to be tested
/// ([`LengthBucket::candidates`]): each one more reads one more bit's postings and lets
/// fewer names through.
const MOST_HELD: u32 = 3;

impl LengthBucket {
    /// Into `marks` (a bit per position in the bucket, a word per 64 positions), the names
    /// of this bucket that may share `least` characters with `shape`.
    ///
    /// A name shares at most `len − distinct + common` characters with the query (each
    /// missing bit is at least one character missing), so it must hold `k` of the query's
    /// `distinct` bits, and lacks at most `distinct − k` of them: of any `distinct − k + t`
    /// of them it holds `t` or more. The postings of the query's rarest `distinct − k + t`
    /// bits here are counted up to `t` (a bitmap per count) and the names counted `t` times
    /// are marked, `t` being `k` up to [`MOST_HELD`]. The bits are counted by their postings
    /// or by their bitmaps (`counting`; `None`: whichever reads less).
    fn candidates(&self, shape: Shape, least: u32, marks: &mut Vec<u64>) {
        self.candidates_by(shape, least, marks, None);
    }

    fn candidates_by(
        &self,
        shape: Shape,
        least: u32,
        marks: &mut Vec<u64>,
        counting: Option<Counting>,
    ) {
        marks.clear();
        if self.ids.is_empty() {
            return;
        }
        let words = self.ids.len().div_ceil(64);
        match least.saturating_sub(shape.len - shape.distinct) {
            // Every name of this length may.
            0 => {
                marks.resize(words, u64::MAX);
                let tail = self.ids.len() % 64;
                if let Some(last) = marks.last_mut()
                    && tail != 0
                {
                    *last = (1u64 << tail) - 1;
                }
            }
            k => {
                let held = k.min(MOST_HELD) as usize;
                let mut bits: Vec<usize> = set_bits(shape.bits).collect();
                bits.sort_by_key(|&bit| self.postings[bit].len());
                let rarest = (shape.distinct - k) as usize + held;
                let bits = &bits[..rarest];
                // A posting is a write at a word of the counts in no order; a bitmap word is
                // read in order and counts 64 names.
                let postings: usize = bits.iter().map(|&bit| self.postings[bit].len()).sum();
                let counting = counting.unwrap_or(if rarest * words <= postings {
                    Counting::Words
                } else {
                    Counting::Postings
                });
                // The counts in `marks`, `held` rows of `words`: row `held − 1 − c` marks the
                // names found in more than `c` of the bits read so far, so the names found in
                // `held` of them are the first row, kept when the others are cut off.
                marks.resize(words * held, 0);
                let level = |c: usize| (held - 1 - c) * words;
                for &bit in bits {
                    match counting {
                        // A bit's row at a time, word after word: the loops below are over
                        // rows of words in order, which the compiler vectorises.
                        Counting::Words => {
                            let row = &self.bitmaps[bit * words..][..words];
                            for c in (1..held).rev() {
                                let (above, below) = marks.split_at_mut(level(c - 1));
                                let above = &mut above[level(c)..][..words];
                                for ((at, &under), &word) in above.iter_mut().zip(&*below).zip(row)
                                {
                                    *at |= under & word;
                                }
                            }
                            for (at, &word) in marks[level(0)..].iter_mut().zip(row) {
                                *at |= word;
                            }
                        }
                        Counting::Postings => {
                            for &at in &self.postings[bit] {
                                let (word, mark) = (at as usize / 64, 1u64 << (at % 64));
                                for c in (1..held).rev() {
                                    let below = marks[level(c - 1) + word];
                                    marks[level(c) + word] |= below & mark;
                                }
                                marks[level(0) + word] |= mark;
                            }
                        }
                    }
                }
                marks.truncate(words);
            }
        }
    }
}

/// The positions a bitmap of [`LengthBucket::candidates`] marks, ascending.
fn positions(marks: &[u64]) -> impl Iterator<Item = u32> + '_ {
    marks.iter().enumerate().flat_map(|(word, &mark)| {
        let base = (word * 64) as u32;
        set_bits(u128::from(mark)).map(move |bit| base + bit as u32)
    })
}

/// How many characters `shape` and a name of `len` characters must share to reach a Jaro
/// of `jaro` by [`Shape::may_reach`]'s bound: `None` when none can, 0 when every one may
/// (the bound does not filter, or `jaro` is at or under 0).
fn least_shared(shape: Shape, len: u32, jaro: f64) -> Option<u32> {
    if jaro <= 0.0 {
        return Some(0);
    }
    if shape.len == 0 || len == 0 {
        return None;
    }
    let inverse = 1.0 / f64::from(len);
    // The bound grows with the characters shared: the least that reaches `jaro`.
    (0..=shape.len.min(len))
        .find(|&shared| jaro_at_most(shared, shape.inverse_len, inverse) >= jaro)
}

/// The positions of the bits set in `bits`, lowest first.
fn set_bits(mut bits: u128) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let bit = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            bit
        })
    })
}

/// Pairs of names by their ids, `(a, b, similarity)` with `a < b`.
pub(super) type NamePairs = Vec<(u32, u32, f64)>;

/// The pairs `(a, b, similarity)` (`a < b`) of `names` (already through
/// [`super::normalize_party_name`], each once) whose [`normalized_name_similarity`] is at
/// least `threshold` (less 1e-9, as the blocks compare); `None` when the threshold is too low
/// for the filter below to exclude anything (at or under 0.6), so every pair may qualify.
///
/// Each pair is probed from its shorter name (the lower id between names of one length).
/// Jaro–Winkler adds at most 0.4 × (1 − Jaro) for a common prefix (4 characters × 0.1), so
/// a pair reaching `t` has a Jaro of at least the one [`jaro_needed`] gives with four
/// characters alike; the names of the probe's length or longer whose characters allow that
/// Jaro are found in a [`ShapeIndex`] of all the names (by length and the probe's rarer
/// character bits), then put to the exact shape test (the
/// prefix they really share) and scored. The index's arrays are read in order; a probe that
/// looked up every name sharing one of its rarer characters waited on memory for most of
/// them (a quarter of a 5M-invoice duplicate search, with 50,000 katakana vendor names).
///
/// `stop(done)` is called with the names probed so far before each round of probes (a few
/// thousand names per thread), from the calling thread: an error ends the search with it (a
/// cancelled run does not wait for every name).
pub(super) fn similar_names(
    names: &[String],
    threshold: f64,
    mut stop: impl FnMut(usize) -> Result<(), BlockError>,
) -> Result<Option<NamePairs>, BlockError> {
    let jaro = (threshold - 1e-9 - 0.4) / 0.6;
    if 3.0 * jaro - 1.0 <= 0.0 {
        return Ok(None);
    }
    let shapes: Vec<Shape> = names.iter().map(|n| Shape::of(n)).collect();
    let index = ShapeIndex::new(shapes.iter().enumerate().map(|(id, &s)| (id as u32, s)));
    // The least Jaro any pair needs: that of a pair beginning alike for four characters.
    let least_jaro = jaro_needed(4, threshold);
    // The names met from `a`, each once (a name is in one length's bucket): the pairs at the
    // threshold. Each probe reads only what is built above, so the names are probed on
    // rayon's threads, a run of them at a time, the pieces joined in their order: the same
    // pairs in the same order as one loop over the names. The runs go in rounds of a few per
    // thread, with `stop` between rounds.
    let probe = |a: usize, marks: &mut Vec<u64>, found: &mut NamePairs| {
        let shape = shapes[a];
        if shape.len == 0 {
            return;
        }
        let a = a as u32;
        let lengths = shape.len as usize..usize::MAX;
        index.within_reach(shape, least_jaro, lengths, marks, |b| {
            let b_shape = shapes[b as usize];
            if (b_shape.len == shape.len && b <= a) || !shape.may_reach(b_shape, threshold) {
                return;
            }
            let (x, y) = (a.min(b), a.max(b));
            let score = normalized_name_similarity(&names[x as usize], &names[y as usize]);
            if score + 1e-9 >= threshold {
                found.push((x, y, score));
            }
        });
    };
    const RUN: usize = 1024;
    let runs: Vec<usize> = (0..names.len().div_ceil(RUN)).collect();
    let mut found = Vec::new();
    in_rounds(
        &runs,
        |&run| {
            let (mut marks, mut found) = (Vec::new(), Vec::new());
            for a in run * RUN..names.len().min((run + 1) * RUN) {
                probe(a, &mut marks, &mut found);
            }
            found
        },
        |first| stop(first * RUN),
        |pair| found.push(pair),
    )?;
    Ok(Some(found))
}

/// Runs `work` on each of `pieces` on every core, a round of four pieces per thread at a
/// time, and gives their results to `take` piece after piece: what one loop over the pieces
/// gives, in its order. `before(first)` is asked on the calling thread before the round that
/// starts at piece `first`; an error ends the work there (a cancelled run does not wait for
/// every piece). The name join and the grid of [`super::grid::close_pairs`] run this way.
pub(super) fn in_rounds<P: Sync, T: Send>(
    pieces: &[P],
    work: impl Fn(&P) -> Vec<T> + Sync,
    mut before: impl FnMut(usize) -> Result<(), BlockError>,
    mut take: impl FnMut(T),
) -> Result<(), BlockError> {
    let per_round = 4 * rayon::current_num_threads().max(1);
    for (round, chunk) in pieces.chunks(per_round).enumerate() {
        before(round * per_round)?;
        let results: Vec<Vec<T>> = chunk.par_iter().map(&work).collect();
        results.into_iter().flatten().for_each(&mut take);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Names read into a list of their own and taken over get the ids one list read in that
    /// order gives: ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ is ヤマダショウジ once normalised (its id), ﾏﾂﾓﾄ and ｻﾄｳｺｳｷﾞﾖｳ
    /// are new (the next ids, in the payers' order), and the empty name is not added twice.
    #[test]
    fn names_taken_over_get_the_ids_of_one_reading() {
        let customers = ["", "株式会社山田商事", "ヤマダショウジ", "有限会社佐藤工業"];
        let payers = ["", "ﾏﾂﾓﾄ", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", "ﾏﾂﾓﾄ", "ｻﾄｳｺｳｷﾞﾖｳ"];
        let mut one = Names::default();
        let expected: Vec<u32> = customers.iter().chain(&payers).map(|n| one.id(n)).collect();
        let mut names = Names::default();
        let mut ids: Vec<u32> = customers.iter().map(|n| names.id(n)).collect();
        let mut other = Names::default();
        let theirs: Vec<u32> = payers.iter().map(|n| other.id(n)).collect();
        let here = names.take_over(&other);
        ids.extend(theirs.iter().map(|&id| here[id as usize]));
        assert_eq!(ids, expected);
        assert_eq!(names.texts(), one.texts());
        assert_eq!((ids[4], ids[6], ids[2]), (ids[0], ids[2], 2));
        assert_eq!((ids[5], ids[7], ids[8]), (4, 4, 5));
    }

    proptest! {
        /// Names from a small alphabet (so many share characters, repeated ones too) and
        /// thresholds above 0.6: the filtered join finds exactly the pairs that scoring every
        /// pair finds, with the same scores.
        #[test]
        fn the_name_join_finds_exactly_the_pairs_scoring_every_pair_finds(
            names in prop::collection::btree_set("[アイウ商事山田a-c]{0,7}", 0..24),
            threshold in prop_oneof![Just(0.9), Just(1.0), Just(0.61), 0.601f64..1.0],
        ) {
            let names: Vec<String> = names.into_iter().collect();
            let expected = all_pairs_at(&names, threshold);
            let mut found = similar_names(&names, threshold, |_| Ok(()))
                .unwrap()
                .expect("above 0.6 the filter applies");
            found.sort_by_key(|&(a, b, _)| (a, b));
            prop_assert_eq!(found, expected);
        }
    }

    /// The loop the name join replaced: every pair of names scored, those at `threshold`
    /// (less 1e-9, as the blocks compare), in order.
    fn all_pairs_at(names: &[String], threshold: f64) -> NamePairs {
        let mut pairs = Vec::new();
        for a in 0..names.len() {
            for b in a + 1..names.len() {
                let score = normalized_name_similarity(&names[a], &names[b]);
                if score + 1e-9 >= threshold {
                    pairs.push((a as u32, b as u32, score));
                }
            }
        }
        pairs
    }

    /// `count` names (sorted, repeats dropped) of `lengths` katakana out of 12, from a fixed
    /// linear congruential sequence started at `seed`.
    fn katakana_names(seed: u64, count: usize, lengths: std::ops::Range<u64>) -> Vec<String> {
        let kana: Vec<char> = "アイウエオカキクサシタチ".chars().collect();
        let mut state = seed;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) % n
        };
        let mut names: Vec<String> = (0..count)
            .map(|_| {
                let len = lengths.start + next(lengths.end - lengths.start);
                (0..len).map(|_| kana[next(12) as usize]).collect()
            })
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// More names than one run of the join's probes (1,024), so they are probed in pieces on
    /// several threads: the pairs are exactly those scoring every pair finds, and two calls
    /// give the same list in the same order (the vendors' pairs feed the clusters).
    #[test]
    fn names_probed_in_pieces_give_every_pair_once_and_in_one_order() {
        // 2,600 names of 3 to 7 katakana: many near spellings, in every piece.
        let names = katakana_names(7, 2_600, 3..8);
        assert!(names.len() > 2 * 1_024, "{} names", names.len());
        let threshold = 0.9;
        let expected = all_pairs_at(&names, threshold);
        assert!(expected.len() > 500, "{} pairs", expected.len());
        let first = similar_names(&names, threshold, |_| Ok(()))
            .unwrap()
            .expect("above 0.6 the filter applies");
        let again = similar_names(&names, threshold, |_| Ok(()))
            .unwrap()
            .expect("above 0.6 the filter applies");
        assert_eq!(first, again);
        let mut found = first;
        found.sort_by_key(|&(a, b, _)| (a, b));
        assert_eq!(found, expected);
    }

    /// Rounds of probes: on one thread a round is 4 runs of 1,024 names, and the search asks
    /// `stop` before each with the names probed so far; an error ends it with that error. The
    /// pairs are the same, in the same order, on one thread as on all of them.
    #[test]
    fn the_name_search_stops_between_rounds_and_gives_one_order_on_any_threads() {
        let names = katakana_names(11, 9_500, 4..8);
        assert!(
            (8_193..12_288).contains(&names.len()),
            "{} names",
            names.len()
        );
        let one_thread = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let mut asked = Vec::new();
        let alone = one_thread
            .install(|| {
                similar_names(&names, 0.9, |done| {
                    asked.push(done);
                    Ok(())
                })
            })
            .unwrap()
            .expect("above 0.6 the filter applies");
        assert_eq!(asked, [0, 4_096, 8_192]);
        let everywhere = similar_names(&names, 0.9, |_| Ok(()))
            .unwrap()
            .expect("above 0.6 the filter applies");
        assert!(everywhere.len() > 1_000, "{} pairs", everywhere.len());
        assert_eq!(alone, everywhere);

        let mut asked = Vec::new();
        let stopped = one_thread.install(|| {
            similar_names(&names, 0.9, |done| {
                asked.push(done);
                if done > 0 {
                    return Err(BlockError::failed("止めました", "stopped"));
                }
                Ok(())
            })
        });
        assert_eq!(stopped.unwrap_err().message_en, "stopped");
        assert_eq!(asked, [0, 4_096]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        /// Names from a small alphabet with repeats, near spellings of each other and not,
        /// half of the pairs beginning alike (up to five characters, so Winkler's bonus takes
        /// every size) and around the 0.7 where the bonus starts: the shape test never turns
        /// away a pair that reaches the threshold.
        #[test]
        fn the_shape_test_never_turns_away_a_pair_at_the_threshold(
            a in "[アイウエオカキシヨーa-c山田]{0,9}",
            other in "[アイウエオカキシヨーa-c山田]{0,9}",
            shared_head in prop_oneof![Just(0usize), 0usize..=5],
            threshold in prop_oneof![
                Just(0.8), Just(0.9), Just(1.0), Just(0.5), Just(0.7), 0.69f64..0.72, 0.0f64..1.0
            ],
        ) {
            let b: String = a.chars().take(shared_head).chain(other.chars()).collect();
            let score = normalized_name_similarity(&a, &b);
            if score + 1e-9 >= threshold {
                prop_assert!(
                    Shape::of(&a).may_reach(Shape::of(&b), threshold),
                    "{a} / {b} score {score}, threshold {threshold}"
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]
        /// Names of every length from 0 to 14 out of a small alphabet (katakana with
        /// repeats, a few kanji and letters, so most share characters and many share none),
        /// half of them beginning like the query, and thresholds from under 0 to 1: the index
        /// gives exactly the names the shape test lets through, none missed, none added.
        #[test]
        fn the_shape_index_finds_exactly_the_names_the_shape_test_lets_through(
            query in "[アイウエオカキシヨーa山田]{0,10}",
            names in prop::collection::vec(
                ("[アイウエオカキシヨーa山田商事]{0,14}", prop_oneof![Just(0usize), 0usize..=5]),
                0..40,
            ),
            threshold in prop_oneof![
                Just(0.8), Just(0.9), Just(1.0), Just(0.5), Just(0.7), Just(0.0),
                0.69f64..0.72, -0.5f64..1.0
            ],
        ) {
            let names: Vec<String> = names
                .into_iter()
                .map(|(name, head)| query.chars().take(head).chain(name.chars()).collect())
                .collect();
            let shape = Shape::of(&query);
            let index = ShapeIndex::new(
                names.iter().enumerate().map(|(id, n)| (id as u32, Shape::of(n))),
            );
            let expected: Vec<u32> = (0..names.len() as u32)
                .filter(|&id| shape.may_reach(Shape::of(&names[id as usize]), threshold))
                .collect();
            prop_assert_eq!(index.may_reach(shape, threshold), expected);
            // Each bucket counts the same names by postings and by bitmap words.
            let (mut by_postings, mut by_words) = (Vec::new(), Vec::new());
            for bucket in &index.by_length {
                for least in 0..=shape.len {
                    bucket.candidates_by(shape, least, &mut by_postings, Some(Counting::Postings));
                    bucket.candidates_by(shape, least, &mut by_words, Some(Counting::Words));
                    prop_assert_eq!(&by_postings, &by_words, "least {}", least);
                }
            }
        }
    }

    /// The index looks at few names: a katakana payer is never tested against a kanji name,
    /// nor against a katakana name of its length holding none of its rarer sounds.
    #[test]
    fn the_shape_index_tests_only_names_holding_the_rarer_characters() {
        let names = [
            "ヤマダシヨウジ",
            "山田商事株式会社",
            "タナカシヨウジ",
            "ヤマダシヨウシ",
            "スズキセイサク",
            "マダスズキセイ",
        ];
        let index = ShapeIndex::new(
            names
                .iter()
                .enumerate()
                .map(|(id, n)| (id as u32, Shape::of(n))),
        );
        let payer = Shape::of("ヤマダシヨウジ");
        assert_eq!(index.may_reach(payer, 0.8), vec![0, 3]);
        // A name beginning differently needs a Jaro of 0.8: of 7 characters, at most
        // (s/7 + s/7 + 1) / 3, 0.81 at s = 5 and 0.71 at s = 4: it must hold 5 of the
        // payer's 7 characters, so one of its 7 − 5 + 1 = 3 rarest.
        assert_eq!(least_shared(payer, 7, 0.8 - 1e-9), Some(5));
        // With Winkler's largest bonus, a Jaro of 0.7 would do. Two names of 7
        // characters sharing s of them have at most (s/7 + s/7 + 1) / 3, which is 0.714 at
        // s = 4 and 0.619 at s = 3: a name must hold 4 of the payer's 7 distinct
        // characters, so 3 of any 6 of them (it lacks at most 3). In the bucket of 7 ジ and ヤ
        // are in two names each, the others in three: the 6 rarest are all but one of them.
        // スズキセイサク holds none, マダスズキセイ two (it holds ダ, one of the 4 rarest, and
        // was tested when one of those was enough): neither is tested.
        assert_eq!(least_shared(payer, 7, 0.7), Some(4));
        let mut marks = Vec::new();
        index.by_length[7].candidates(payer, 4, &mut marks);
        assert_eq!(positions(&marks).collect::<Vec<_>>(), vec![0, 1, 2]);
        // The kanji name, 8 characters long, shares none of the payer's characters.
        let least = least_shared(payer, 8, 0.7).unwrap();
        index.by_length[8].candidates(payer, least, &mut marks);
        assert_eq!(positions(&marks).count(), 0);
    }

    #[test]
    fn the_shape_test_turns_away_names_without_characters_in_common() {
        let (yamada, sato) = (Shape::of("ヤマダシヨウジ"), Shape::of("サトウコウギヨウ"));
        assert!(!yamada.may_reach(sato, 0.8));
        assert!(yamada.may_reach(Shape::of("ヤマダシヨウシ"), 0.8));
        // Under 0.7 Winkler adds nothing, so 0.4 needs a Jaro of 0.4: the two share ウ and
        // ヨ, at most (2/7 + 2/8 + 1) / 3 = 0.51.
        assert!(yamada.may_reach(sato, 0.4));
        assert!(!yamada.may_reach(sato, 0.55));
        // At a threshold of 0 or under, every pair goes through.
        assert!(Shape::of("ア").may_reach(Shape::of("山"), 0.0));
    }

    #[test]
    fn names_that_only_end_alike_need_the_threshold_without_the_prefix_bonus() {
        // The same company suffix, different names: 4 of 7 characters in common, a Jaro of at
        // most (4/7 + 4/7 + 1) / 3 = 0.714. With a four-character prefix that could reach 0.8
        // (0.714 + 0.4 × 0.286 = 0.83); without one it stays at 0.714.
        let yamada = Shape::of("ヤマダシヨウジ");
        assert!(!yamada.may_reach(Shape::of("タナカシヨウジ"), 0.8));
        assert!(normalized_name_similarity("ヤマダシヨウジ", "タナカシヨウジ") < 0.8);
        // Beginning alike, a near spelling goes through, and it does reach the threshold.
        assert!(yamada.may_reach(Shape::of("ヤマダシヨジ"), 0.8));
        assert!(normalized_name_similarity("ヤマダシヨウジ", "ヤマダシヨジ") >= 0.8);
    }

    #[test]
    fn a_threshold_at_or_under_0_6_is_left_to_the_caller() {
        assert!(
            similar_names(&["山田商事".into()], 0.6, |_| Ok(()))
                .unwrap()
                .is_none()
        );
        // 5 of 6 characters and a 4-character prefix: 0.933; a different company: 0.
        let found = similar_names(
            &[
                "山田商事東京".into(),
                "田中物産".into(),
                "山田商事東亰".into(),
            ],
            0.9,
            |_| Ok(()),
        )
        .unwrap();
        assert_eq!(
            found.map(|f| f.iter().map(|&(a, b, _)| (a, b)).collect::<Vec<_>>()),
            Some(vec![(0, 2)])
        );
    }
}
