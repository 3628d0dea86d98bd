//! The grid of [`close_pairs`]: rows close in amount and date, found without comparing every
//! pair (duplicate invoices' candidate pairs).

use super::blocking::in_rounds;
use super::{FastMap, FastSet};
use crate::block::BlockError;
use rayon::prelude::*;

/// Amounts this close are equal (the tolerance is added to it).
pub(super) const AMOUNT_EPSILON: f64 = 1e-9;

/// A cell of [`close_pairs`]' grid: the group, the amount's cell and the date's.
type Cell = (u32, i64, i64);

/// A row with an amount and a date, on the grid of [`close_pairs`].
pub(super) struct Point {
    /// Its row.
    pub index: usize,
    pub amount: f64,
    /// Days since the common era.
    pub day: i64,
    /// Its group (a vendor): only rows of one group or of related groups are paired.
    pub group: u32,
}

/// The pairs of rows close enough to compare: amounts within `amount_tolerance` and dates
/// within `window` days, both in one group or in two groups `related` names (each pair of
/// groups once, in either order), given to `each` as `(i, j)` rows with `i < j`, each once.
///
/// Each group's rows are put on a grid: one axis the amount, in cells at least as wide as
/// the tolerance, the other the date, in cells of `window + 1` days. Two rows close enough
/// are then in the same cell or in neighbouring ones, so a cell is compared with itself and
/// the four neighbours after it in its own group, and with the nine around it in a related
/// group. The pairs are exactly those a loop over every pair keeps (the exact test is made
/// on each), at the cost of the rows that share a neighbourhood instead of every pair.
///
/// The cells are walked on every core, in pieces of consecutive cells (a cell's neighbours
/// are read, never written, so the pieces are apart), each piece's pairs kept in its order
/// and given to `each` piece after piece: the pairs, in the order, of one walk (at 5M
/// invoices the walk was 2.4 s on one core). `stop` is asked between rounds of pieces with
/// the rows of the cells done so far (a cancelled run ends there).
pub(super) fn close_pairs(
    points: &[Point],
    related: &[(u32, u32)],
    amount_tolerance: f64,
    window: i64,
    stop: impl FnMut(usize) -> Result<(), BlockError>,
    each: impl FnMut(usize, usize),
) -> Result<(), BlockError> {
    close_pairs_in(
        points,
        related,
        (amount_tolerance, window),
        CELLS_PER_PIECE,
        stop,
        each,
    )
}

/// [`close_pairs`] walks the grid in pieces of this many cells.
const CELLS_PER_PIECE: usize = 4_096;

/// The runs of a grid's cells (a cell, its rows in order), sorted by cell.
type Runs<'a> = [(Cell, &'a [usize])];

/// [`close_pairs`] with the grid walked in pieces of `per_piece` cells.
fn close_pairs_in(
    points: &[Point],
    related: &[(u32, u32)],
    (amount_tolerance, window): (f64, i64),
    per_piece: usize,
    mut stop: impl FnMut(usize) -> Result<(), BlockError>,
    mut each: impl FnMut(usize, usize),
) -> Result<(), BlockError> {
    if window < 0 {
        return Ok(());
    }
    // At least 1 (a yen): a cell of 1e-9 would be finer than an f64 tells apart at large
    // amounts. The margin keeps rounding from putting two close amounts two cells apart.
    let width = (amount_tolerance.max(0.0) + AMOUNT_EPSILON).max(1.0) * (1.0 + 1e-6);
    let span = window.saturating_add(1);
    // The rows sorted by cell, each cell a run of that order. A cell's neighbours are found
    // in that order itself (pointers that only move forward, [`seek`] for related groups)
    // instead of a hash map of up to a million cells: on a million invoices the
    // process's peak fell by about 150 MB without it. Sorted on every core (each row's key
    // is unique, so the order is that of one sort).
    let mut placed: Vec<(Cell, usize)> = points
        .iter()
        .enumerate()
        // `as` saturates: an amount past the last cell lands in it and is still compared.
        .map(|(k, p)| {
            let cell = (
                p.group,
                (p.amount / width).floor() as i64,
                p.day.div_euclid(span),
            );
            (cell, k)
        })
        .collect();
    placed.par_sort_unstable();
    let order: Vec<usize> = placed.iter().map(|&(_, k)| k).collect();
    let mut runs: Vec<(Cell, &[usize])> = Vec::new();
    let mut start = 0;
    while start < placed.len() {
        let cell = placed[start].0;
        let end = start + placed[start..].partition_point(|&(c, _)| c == cell);
        runs.push((cell, &order[start..end]));
        start = end;
    }
    drop(placed);
    let close_enough = |a: &Point, b: &Point, found: &mut Vec<(usize, usize)>| {
        if close(a, b, amount_tolerance, window) {
            found.push((a.index.min(b.index), a.index.max(b.index)));
        }
    };
    fn across(
        pair: &mut impl FnMut(&Point, &Point),
        points: &[Point],
        members: &[usize],
        others: &[usize],
    ) {
        for &a in members {
            for &b in others {
                pair(&points[a], &points[b]);
            }
        }
    }
    // The runs from `from` on whose cells are in group `group`, amount cell `x` and date
    // cells `y - 1` to `y + 1`, in order (each cell is one run).
    fn row_of_three<'r>(
        runs: &'r Runs<'r>,
        from: usize,
        (group, x, y): Cell,
    ) -> impl Iterator<Item = &'r [usize]> {
        runs[from.min(runs.len())..]
            .iter()
            .take_while(move |&&((g, cx, cy), _)| {
                (g, cx) == (group, x) && cy.saturating_sub(y) <= 1
            })
            .filter(move |&&((_, _, cy), _)| cy.abs_diff(y) <= 1)
            .map(|&(_, others)| others)
    }
    // The pairs of the cells `cells` (indices into `runs`), in the order of one walk.
    let walk = |cells: std::ops::Range<usize>| -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        let mut pair = |a: &Point, b: &Point| close_enough(a, b, &mut found);
        // The first run at or after the current cell's row of neighbours in the next amount
        // cell (the first cell of that row only grows along the order, so a pointer
        // started at the piece's first cell finds what one started at the first does).
        let mut next_row = 0;
        for at in cells {
            let ((group, x, y), members) = runs[at];
            for (n, &a) in members.iter().enumerate() {
                for &b in &members[n + 1..] {
                    pair(&points[a], &points[b]);
                }
            }
            // The cell after it in date, then the three after it in amount: (x, y + 1),
            // (x + 1, y - 1), (x + 1, y), (x + 1, y + 1), each later in the order.
            if let Some(&((g, cx, cy), others)) = runs.get(at + 1)
                && (g, cx) == (group, x)
                && y.checked_add(1) == Some(cy)
            {
                across(&mut pair, points, members, others);
            }
            let Some(x1) = x.checked_add(1) else {
                continue;
            };
            let first = (group, x1, y.saturating_sub(1));
            next_row = seek(&runs, next_row.max(at + 1), first);
            for others in row_of_three(&runs, next_row, (group, x1, y)) {
                across(&mut pair, points, members, others);
            }
        }
        found
    };
    let per_piece = per_piece.max(1);
    let pieces: Vec<std::ops::Range<usize>> = (0..runs.len())
        .step_by(per_piece)
        .map(|from| from..from.saturating_add(per_piece).min(runs.len()))
        .collect();
    // The rows of the cells before each piece, for `stop`.
    let rows_before: Vec<usize> = pieces
        .iter()
        .scan(0, |done, cells| {
            let before = *done;
            *done += runs[cells.clone()]
                .iter()
                .map(|(_, m)| m.len())
                .sum::<usize>();
            Some(before)
        })
        .collect();
    in_rounds(
        &pieces,
        |cells| walk(cells.clone()),
        |first| stop(rows_before[first]),
        |(i, j)| each(i, j),
    )?;
    // Related groups: each cell of one against the nine around it in the other. A group's
    // cells are found by its span of runs, and a neighbour sought in the other group's span
    // only ([`seek`]): searching all the runs for each (three searches per cell of every
    // related group, over millions of runs) was half of this function's time on 5M invoices. Each
    // pair of groups once, in the order `related` first gives it; the pairs of groups are
    // walked on every core as the cells are above, in pieces of consecutive pairs.
    if related.is_empty() {
        return Ok(());
    }
    let mut spans: FastMap<u32, (usize, usize)> = FastMap::default();
    let mut start = 0;
    while start < runs.len() {
        let group = runs[start].0.0;
        let end = start + runs[start..].partition_point(|((g, _, _), _)| *g == group);
        spans.insert(group, (start, end));
        start = end;
    }
    let mut seen: FastSet<(u32, u32)> = FastSet::default();
    let linked: Vec<(u32, u32)> = related
        .iter()
        .copied()
        .filter(|&(g, h)| g != h && seen.insert((g.min(h), g.max(h))))
        .collect();
    let walk_related = |groups: &[(u32, u32)]| -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        let mut pair = |a: &Point, b: &Point| close_enough(a, b, &mut found);
        for &(g, h) in groups {
            let (Some(&(from, to)), Some(&(h_from, h_to))) = (spans.get(&g), spans.get(&h)) else {
                continue;
            };
            let theirs = &runs[h_from..h_to];
            // Where each of the three rows of neighbours starts in `theirs`: `g`'s cells come
            // in order, so each start only moves forward and is sought from the last one.
            let mut starts = [0usize; 3];
            for &((_, x, y), members) in &runs[from..to] {
                for (start, dx) in starts.iter_mut().zip(-1..=1) {
                    let Some(nx) = x.checked_add(dx) else {
                        continue;
                    };
                    *start = seek(theirs, *start, (h, nx, y.saturating_sub(1)));
                    for others in row_of_three(theirs, *start, (h, nx, y)) {
                        across(&mut pair, points, members, others);
                    }
                }
            }
        }
        found
    };
    // A pair of groups holds many cells: pieces of a 64th as many pairs.
    let pieces: Vec<&[(u32, u32)]> = linked.chunks((per_piece / 64).max(1)).collect();
    in_rounds(
        &pieces,
        |groups| walk_related(groups),
        |_| stop(points.len()),
        |(i, j)| each(i, j),
    )?;
    Ok(())
}

/// The first of `runs` at or after `from` whose cell is not before `cell`, all runs before
/// `from` being before it: a gallop from `from` (1, 2, 4 … runs ahead), then a binary search
/// in the last step. A start that moves a run or two costs a comparison or two, one that
/// jumps far (a small group beside a large one) a logarithm of the jump. A binary search over
/// the other group's whole span for each cell (three per cell) was most of the related
/// groups' walk on 5M invoices.
fn seek(runs: &Runs<'_>, from: usize, cell: Cell) -> usize {
    let (mut before, mut probe, mut step) = (from, from, 1usize);
    while probe < runs.len() && runs[probe].0 < cell {
        before = probe + 1;
        probe = probe.saturating_add(step);
        step = step.saturating_mul(2);
    }
    let end = probe.min(runs.len());
    before + runs[before..end].partition_point(|(c, _)| *c < cell)
}

/// Whether two rows are close enough to compare: amounts within the tolerance, dates within
/// the window.
pub(super) fn close(a: &Point, b: &Point, amount_tolerance: f64, window: i64) -> bool {
    (a.amount - b.amount).abs() <= amount_tolerance + AMOUNT_EPSILON
        && (a.day - b.day).abs() <= window
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn pairs_of(
        points: &[Point],
        related: &[(u32, u32)],
        tolerance: f64,
        window: i64,
    ) -> BTreeSet<(usize, usize)> {
        let mut found = BTreeSet::new();
        close_pairs(
            points,
            related,
            tolerance,
            window,
            |_| Ok(()),
            |i, j| {
                assert!(i < j, "({i}, {j}) is not ordered");
                assert!(found.insert((i, j)), "({i}, {j}) was given twice");
            },
        )
        .unwrap();
        found
    }

    /// The loop the grid replaced: every pair, the same test.
    fn all_pairs(
        points: &[Point],
        related: &[(u32, u32)],
        tolerance: f64,
        window: i64,
    ) -> BTreeSet<(usize, usize)> {
        let linked = |g: u32, h: u32| {
            g == h
                || related
                    .iter()
                    .any(|&(x, y)| (x, y) == (g, h) || (y, x) == (g, h))
        };
        let mut found = BTreeSet::new();
        for (n, a) in points.iter().enumerate() {
            for b in &points[n + 1..] {
                if linked(a.group, b.group)
                    && (a.amount - b.amount).abs() <= tolerance + AMOUNT_EPSILON
                    && (a.day - b.day).abs() <= window
                {
                    found.insert((a.index.min(b.index), a.index.max(b.index)));
                }
            }
        }
        found
    }

    fn points(raw: &[(f64, i64, u32)]) -> Vec<Point> {
        raw.iter()
            .enumerate()
            .map(|(index, &(amount, day, group))| Point {
                index,
                amount,
                day,
                group,
            })
            .collect()
    }

    proptest! {
        /// Amounts on and around cell edges (yen, half yen, quarters near 110,000, a hundred
        /// billion, negative), days around window edges, a few groups some of them related
        /// (twice, or to themselves): the grid gives every pair the all-pairs loop gives,
        /// once, and no other.
        #[test]
        fn the_grid_gives_exactly_the_pairs_of_the_all_pairs_loop(
            raw in prop::collection::vec(
                (
                    prop_oneof![
                        (-20i64..20).prop_map(|k| k as f64),
                        (-20i64..20).prop_map(|k| k as f64 * 0.5),
                        (0i64..40).prop_map(|k| 110_000.0 + k as f64 * 0.25),
                        (0i64..4).prop_map(|k| 1e11 + k as f64),
                    ],
                    -40i64..80,
                    0u32..4,
                ),
                0..48,
            ),
            related in prop::collection::vec((0u32..4, 0u32..4), 0..4),
            tolerance in prop_oneof![Just(0.0), Just(0.5), Just(1.0), Just(2.5), 0.0f64..30.0],
            window in -1i64..35,
        ) {
            let points = points(&raw);
            prop_assert_eq!(
                pairs_of(&points, &related, tolerance, window),
                all_pairs(&points, &related, tolerance, window)
            );
            // Walked in pieces of one cell, two or three, on every core: the same pairs in
            // the order of one walk.
            let in_pieces = |per_piece: usize| {
                let mut found = Vec::new();
                close_pairs_in(
                    &points,
                    &related,
                    (tolerance, window),
                    per_piece,
                    |_| Ok(()),
                    |i, j| found.push((i, j)),
                )
                .unwrap();
                found
            };
            let whole = in_pieces(usize::MAX);
            for per_piece in [1, 2, 3] {
                prop_assert_eq!(&in_pieces(per_piece), &whole);
            }
        }
    }

    proptest! {
        /// From any start before which every run is before the cell, `seek` finds what a
        /// binary search over all the runs finds: cells in gaps and not, starts at the answer
        /// or up to all the runs before it, answers at the end.
        #[test]
        fn seek_finds_what_a_binary_search_finds(
            cells in prop::collection::btree_set((0u32..3, -6i64..6, -6i64..6), 0..80),
            cell in (0u32..3, -7i64..7, -7i64..7),
            back in 0usize..90,
        ) {
            let rows = [0usize];
            let runs: Vec<(Cell, &[usize])> =
                cells.into_iter().map(|c| (c, &rows[..])).collect();
            let answer = runs.partition_point(|(c, _)| *c < cell);
            let from = answer.saturating_sub(back);
            prop_assert_eq!(seek(&runs, from, cell), answer);
        }
    }

    #[test]
    fn amounts_a_tolerance_apart_are_a_pair_and_a_little_more_is_not() {
        let points = points(&[
            (100.0, 0, 0),
            (150.0, 30, 0),
            (150.01, 30, 0),
            (100.0, 31, 0),
        ]);
        let found = pairs_of(&points, &[], 50.0, 30);
        assert_eq!(found, BTreeSet::from([(0, 1), (1, 2), (1, 3)]));
    }

    #[test]
    fn rows_of_unrelated_groups_are_never_paired() {
        let points = points(&[(100.0, 0, 0), (100.0, 0, 1), (100.0, 0, 2)]);
        assert_eq!(
            pairs_of(&points, &[(0, 2)], 0.0, 30),
            BTreeSet::from([(0, 2)])
        );
    }
}
