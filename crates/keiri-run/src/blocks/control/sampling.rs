//! `control.sampling`: audit samples that the next auditor can draw again.
//!
//! # Reproducibility
//!
//! The same population (same rows, same order), method, size, seed, amount column and
//! key-item threshold give the same sample, on every platform and in every later version of
//! this block. That holds because every random draw comes from ChaCha20 (`rand_chacha`),
//! whose output stream is fixed by its specification, seeded with `SeedableRng::seed_from_u64`
//! (a documented, portable expansion of the 64-bit seed), and because the draws themselves —
//! an integer below `n` by rejection, a fraction from the top 53 bits — are done here rather
//! than by library helpers whose algorithms may change between versions. A negative seed is
//! used as its two's-complement `u64`.
//!
//! # Methods
//!
//! Key items (`|amount| >= key_item_threshold`, when the threshold is above 0) are always
//! selected and are not part of the population the method samples from.
//!
//! * `random`: `size` distinct rows, by a partial Fisher–Yates shuffle of the remaining rows.
//! * `systematic`: the interval is `⌊N / size⌋` rows and the random start `r` is drawn from
//!   `1 ..= interval`; rows `r, r + interval, …` (1-based) are selected, `size` of them.
//! * `monetary_unit` (MUS): the interval is `J = Σ|amount| / size` over the remaining rows and
//!   the random start `s` is drawn from `[0, J)`; the points `s, s + J, …, s + (size − 1)·J`
//!   fall on the cumulative absolute amounts, and a row is selected when a point falls in its
//!   range `[before, before + |amount|)`. A row whose absolute amount is at least `J` always
//!   holds a point, so it is always selected; a row hit by several points counts once, so the
//!   sample can be smaller than `size`. Rows with a zero amount are never selected.
//!
//! Samples keep the population order; `sample_no` numbers them 1, 2, … in that order.

use rand_chacha::ChaCha20Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use serde_json::{Value as Json, json};

use super::{cancelled, number};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::numbers::num_json;

/// How often long loops look at the cancellation token.
const CANCEL_EVERY: usize = 4096;

/// The seeded generator and the two draws the methods need.
struct Draws(ChaCha20Rng);

impl Draws {
    fn new(seed: i64) -> Draws {
        Draws(ChaCha20Rng::seed_from_u64(seed as u64))
    }

    /// A uniform integer in `0 .. n` (`n > 0`), by rejection so that no value is favoured.
    fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let zone = (u64::MAX / n) * n;
        loop {
            let x = self.0.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    /// A uniform fraction in `[0, 1)` from the top 53 bits of one draw.
    fn fraction(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub(super) fn sampling(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let rows = inputs.rows("population")?;
    let method = inputs.str("method")?.unwrap_or("random");
    if !matches!(method, "random" | "systematic" | "monetary_unit") {
        return Err(BlockError::input_invalid(
            "method",
            "random・systematic・monetary_unit のどれかです",
            "expected random, systematic or monetary_unit",
        ));
    }
    let size = inputs
        .i64("size")?
        .ok_or_else(|| BlockError::input_invalid("size", "必須です", "it is required"))?;
    let size = usize::try_from(size).map_err(|_| {
        BlockError::input_invalid("size", "0以上の整数が必要です", "expected 0 or more")
    })?;
    let seed = inputs.i64("seed")?.unwrap_or(42);
    let amount_field = inputs.str("amount_field")?.unwrap_or("amount");
    let threshold = inputs.f64("key_item_threshold")?.unwrap_or(0.0);
    if !threshold.is_finite() || threshold < 0.0 {
        return Err(BlockError::input_invalid(
            "key_item_threshold",
            "0以上の金額が必要です",
            "expected an amount of 0 or more",
        ));
    }

    let amounts: Vec<Option<f64>> = rows.iter().map(|r| number(r.get(amount_field))).collect();
    if (method == "monetary_unit" || threshold > 0.0)
        && let Some(i) = amounts.iter().position(Option::is_none)
    {
        let shown = rows[i]
            .get(amount_field)
            .map_or_else(|| "（なし）".to_string(), Json::to_string);
        let columns: Vec<String> = rows[i].keys().cloned().collect();
        return Err(BlockError::failed(
                format!("{i}行目（0始まり）の {amount_field} {shown} を金額として読めません"),
                format!("row {i} (0-based): {amount_field} {shown} is not an amount"),
            )
            .with_hint(
                format!(
                    "金額単位抽出と精査のしきい値には全行の金額が必要です。この行の列: {}",
                    columns.join(", ")
                ),
                format!(
                    "monetary unit sampling and key items need an amount on every row; this row's columns: {}",
                    columns.join(", ")
                ),
            ));
    }

    // Key items first: they are tested in full and leave the sampled population.
    let mut reason: Vec<Option<&'static str>> = vec![None; rows.len()];
    if threshold > 0.0 {
        for (i, a) in amounts.iter().enumerate() {
            if a.is_some_and(|a| a.abs() >= threshold) {
                reason[i] = Some("key_item");
            }
        }
    }
    let key_item_count = reason.iter().filter(|r| r.is_some()).count();
    let rest: Vec<usize> = (0..rows.len()).filter(|&i| reason[i].is_none()).collect();

    let mut draws = Draws::new(seed);
    let (mut interval, mut random_start) = (Json::Null, Json::Null);
    match method {
        "random" => {
            let n = size.min(rest.len());
            let mut order = rest.clone();
            for i in 0..n {
                if i % CANCEL_EVERY == 0 {
                    cancelled(ctx)?;
                }
                let j = i + draws.below((order.len() - i) as u64) as usize;
                order.swap(i, j);
            }
            for &i in &order[..n] {
                reason[i] = Some("random");
            }
        }
        "systematic" if size > 0 && !rest.is_empty() => {
            let n = size.min(rest.len());
            let k = rest.len() / n;
            let start = 1 + draws.below(k as u64) as usize;
            for step in 0..n {
                reason[rest[start - 1 + step * k]] = Some("systematic");
            }
            interval = json!(k);
            random_start = json!(start);
        }
        "monetary_unit" if size > 0 && !rest.is_empty() => {
            let total: f64 = rest.iter().filter_map(|&i| amounts[i]).map(f64::abs).sum();
            if total <= 0.0 {
                return Err(BlockError::failed(
                    "母集団の金額の合計が0なので金額単位抽出ができません",
                    "the population's amounts add up to 0, so monetary unit sampling cannot pick anything",
                )
                .with_hint(
                    "method を random か systematic にしてください",
                    "use method random or systematic",
                ));
            }
            let j = total / size as f64;
            let s = draws.fraction() * j;
            // Each row is checked once, by arithmetic rather than by walking the points, so a
            // huge `size` cannot make the loop long: the first point at or after the row's start
            // is number ⌈(before − s) / J⌉, and the row holds it when it comes before the row's
            // end.
            let (mut before, mut last_with_amount) = (0.0, None);
            for (n, &i) in rest.iter().enumerate() {
                if n % CANCEL_EVERY == 0 {
                    cancelled(ctx)?;
                }
                let a = amounts[i].map_or(0.0, f64::abs);
                let end = before + a;
                if a > 0.0 {
                    let first = ((before - s) / j).ceil().max(0.0);
                    if first < size as f64 && s + first * j < end {
                        reason[i] = Some("monetary_unit");
                    }
                    last_with_amount = Some(i);
                }
                before = end;
            }
            // Rounding can put the last point a hair past the total: it belongs to the last
            // row with an amount.
            if s + (size - 1) as f64 * j >= before
                && let Some(i) = last_with_amount
            {
                reason[i] = Some("monetary_unit");
            }
            interval = num_json(j);
            random_start = num_json(s);
        }
        _ => {}
    }

    let sum = |pick: &dyn Fn(usize) -> bool| -> Json {
        let mut any = false;
        let mut total = 0.0;
        for (i, a) in amounts.iter().enumerate() {
            if let Some(a) = a
                && pick(i)
            {
                any = true;
                total += a;
            }
        }
        if any { num_json(total) } else { Json::Null }
    };
    let population_amount = sum(&|_| true);
    let sample_amount = sum(&|i| reason[i].is_some());
    let mut samples = Vec::new();
    let mut not_selected = Vec::new();
    for (i, row) in rows.into_iter().enumerate() {
        match reason[i] {
            Some(why) => {
                let mut row = row;
                row.insert("sample_no".into(), json!(samples.len() + 1));
                row.insert("selection_reason".into(), json!(why));
                samples.push(Json::Object(row));
            }
            None => not_selected.push(Json::Object(row)),
        }
    }
    let summary = json!({
        "method": method,
        "seed": seed,
        "size": size,
        "population_count": samples.len() + not_selected.len(),
        "population_amount": population_amount,
        "key_item_count": key_item_count,
        "sample_count": samples.len(),
        "sample_amount": sample_amount,
        "interval": interval,
        "random_start": random_start,
    });
    Ok(Outputs::new()
        .with("samples", Json::Array(samples))
        .with("not_selected", Json::Array(not_selected))
        .with("summary", summary))
}

builtin!("control.sampling", sampling);
