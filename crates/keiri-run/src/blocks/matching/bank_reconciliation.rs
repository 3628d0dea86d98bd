//! `matching.bank_reconciliation`: its inputs and outputs are in `block_specs/matching/matching.bank_reconciliation.yaml`.

use super::FastMap;
use super::blocking::{Names, Shape, ShapeIndex};
use super::{
    RowSource, cell_text, date, normalized_name_similarity, num_json, number, object, round4,
};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::steps::Steps;
use crate::blocks::{StopCheck, cancelled};
use chrono::NaiveDate;
use rayon::prelude::*;
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;
use unicode_normalization::UnicodeNormalization;

// ---------------------------------------------------------------------------------------
// matching.bank_reconciliation

/// Words a bank puts before the payer's name on a transfer line.
const TRANSFER_PREFIXES: &[&str] = &["振込入金", "振込", "フリコミ", "振替入金", "入金"];

/// Largest number of one customer's open invoices searched for a combined payment; 2^12
/// subsets is instant, and a customer with more open invoices pays them one by one.
const MAX_COMBINED: usize = 12;

/// A payer's names that may reach the threshold are kept for its next deposit when there
/// are at most this many (a low threshold lets most names through).
const MAX_KEPT_NAMES: usize = 1_024;

/// Step 3 reads the receivables under a payer's listed names, without looking for the run
/// of amounts that fit, when they are at most this many (either way gives the same invoice).
const FEW_LISTED: usize = 64;

fn payer_name(description: &str) -> String {
    let folded: String = description.nfkc().collect();
    let mut s = folded.trim();
    for prefix in TRANSFER_PREFIXES {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.trim_start();
        }
    }
    s.to_string()
}

/// Whether invoices totalling `total` are paid by a deposit of `amount`: equal to within half a
/// sen, or short by at most the fee tolerance (the bank took its fee); the difference if so.
fn fits(total: f64, amount: f64, fee_tolerance: f64) -> Option<f64> {
    let diff = total - amount;
    (diff.abs() < 0.005 || (diff > 0.0 && diff <= fee_tolerance + 1e-9)).then_some(diff)
}

/// The receivable amounts that can pay a deposit of `amount` on their own: equal to within
/// half a sen, or more by at most the fee tolerance (the bank took its fee). A little wider
/// than [`fits`], which is then asked of each amount in the range.
fn fit_range(amount: f64, fee_tolerance: f64) -> (f64, f64) {
    let above = (fee_tolerance + 1e-9).max(0.005);
    (amount - 0.006, amount + above + 0.001)
}

fn bank_reconciliation(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let deposits = RowSource::of(inputs, "deposits")?;
    let receivables = RowSource::of(inputs, "receivables")?;
    let customer_field = inputs
        .str("customer_field")?
        .unwrap_or("customer")
        .to_string();
    let kana_field = inputs
        .str("customer_kana_field")?
        .unwrap_or("customer_kana")
        .to_string();
    let amount_field = inputs.str("amount_field")?.unwrap_or("amount").to_string();
    let due_field = inputs
        .str("due_date_field")?
        .unwrap_or("due_date")
        .to_string();
    let fee_tolerance = inputs.f64("fee_tolerance")?.unwrap_or(880.0);
    let allow_combined = inputs.bool("allow_combined")?.unwrap_or(true);
    let name_threshold = inputs.f64("name_threshold")?.unwrap_or(0.8);
    let window = inputs.i64("date_window_days")?.unwrap_or(60);

    // The columns compared, each distinct text read once (`RowSource::cells`, `texts`);
    // customer and payer names normalised once each (`Names`). Four reads on the cores there
    // are (the seven columns took 2 s on one core at a million receivables): the amounts and
    // dates, the customers' names, their kana and the payers' names, each name column into
    // a list of its own, the later lists taken over by the first in that order (each name
    // gets the id one list reading the columns one after another gives). An error is the
    // first the reads would meet one after another.
    let read_names = |rows: &RowSource<'_>, field: &str, payers: bool| {
        let mut names = Names::default();
        let ids = if payers {
            rows.texts(field, |text| names.id(&payer_name(text)))
        } else {
            rows.texts(field, |text| names.id(text))
        };
        (names, ids)
    };
    let (numbers, ((named, kana), payers)) = rayon::join(
        || {
            (
                receivables.cells(&amount_field, number),
                receivables.cells(&due_field, date),
                deposits.cells("amount", number),
                deposits.cells("date", date),
            )
        },
        || {
            rayon::join(
                || {
                    rayon::join(
                        || read_names(&receivables, &customer_field, false),
                        || read_names(&receivables, &kana_field, false),
                    )
                },
                || read_names(&deposits, "description", true),
            )
        },
    );
    let (rec_amount, rec_due, dep_amounts, dep_dates) = numbers;
    let (mut names, rec_name) = named;
    // The ids a later list's names have in `names`.
    let mut take_over = |(list, ids): (Names, Result<Vec<u32>, BlockError>)| {
        let ids = ids?;
        let here = names.take_over(&list);
        Ok::<_, BlockError>(
            ids.into_iter()
                .map(|id| here[id as usize])
                .collect::<Vec<u32>>(),
        )
    };
    let (rec_amount, rec_due, rec_name) = (rec_amount?, rec_due?, rec_name?);
    let rec_kana = take_over(kana)?;
    let (dep_amounts, dep_dates) = (dep_amounts?, dep_dates?);
    let dep_payers = take_over(payers)?;
    // Receivables by customer name and by kana (`ByName`), for step 1 (the payer's own) and
    // the searches of a near name's invoices: they look only at those under a name at the
    // threshold for the payer, found among the distinct names (most turned away unscored by
    // `Shape::may_reach`, a test on the names' characters that never turns away a name at
    // the threshold), not at every receivable.
    let texts: Vec<String> = names.texts().to_vec();
    let by_name = ByName::new(texts.len(), (&rec_name, &rec_kana), (&rec_amount, &rec_due));
    let shapes: Vec<Shape> = texts.iter().map(|t| Shape::of(t)).collect();
    // The receivables' names by length and character, so that a payer's combined search
    // tests only the names that share enough of its characters (`ShapeIndex`), not all.
    let name_index = ShapeIndex::new(by_name.ids().map(|id| (id, shapes[id as usize])));
    // The names of receivables at the threshold for a payer, each with its similarity: scored
    // once per payer and name (only those at the threshold are kept), after the shape test.
    let at_threshold = |payer: u32| -> Vec<(u32, f64)> {
        name_index
            .may_reach(shapes[payer as usize], name_threshold)
            .into_iter()
            .filter_map(|id| {
                let sim = normalized_name_similarity(&texts[payer as usize], &texts[id as usize]);
                (sim + 1e-9 >= name_threshold).then_some((id, sim))
            })
            .collect()
    };
    // Per payer, those names (step 4 below). A payer with no invoice under its own name can
    // only be cleared by a near name's invoice (steps 3 and 4), and most such deposits reach
    // step 4: their lists are found first, on every core (each reads only what is built
    // above), the same lists the loop would find one by one. A low threshold lets most names
    // through: those lists are not kept, and found again when needed.
    let mut reachable: FastMap<u32, Vec<(u32, f64)>> = FastMap::default();
    if allow_combined {
        let mut strangers: Vec<u32> = dep_payers
            .iter()
            .zip(&dep_amounts)
            .filter(|&(&p, a)| a.is_some() && by_name.get(p).is_empty())
            .map(|(&p, _)| p)
            .collect();
        strangers.sort_unstable();
        strangers.dedup();
        let stop = StopCheck::new(ctx.cancel);
        let lists: Vec<(u32, Vec<(u32, f64)>)> = strangers
            .into_par_iter()
            .enumerate()
            .filter_map(|(i, payer)| {
                if stop.now(i) {
                    return None;
                }
                let ids = at_threshold(payer);
                (ids.len() <= MAX_KEPT_NAMES).then_some((payer, ids))
            })
            .collect();
        cancelled(ctx)?;
        reachable.extend(lists);
    }
    // Step 1 of the loop below (one of the payer's own invoices): the invoice it takes among
    // those `open` leaves (all, for `None`), with its difference and the payer's similarity
    // to it. The payer's own invoices are those under its name (`by_name`: their name or
    // kana is the payer's once normalised), so the payer's similarity to each, the better of
    // its two names, is 1: each is at the threshold (unless the threshold is over 1), and
    // the one taken is the first that can pay the deposit in `single_order`.
    let own_invoice = |d: usize, open: Option<&[bool]>| -> Option<(usize, f64, f64)> {
        let amount = dep_amounts[d]?;
        let payer = dep_payers[d];
        if texts[payer as usize].is_empty() || 1.0 + 1e-9 < name_threshold {
            return None;
        }
        by_name
            .get(payer)
            .iter()
            .filter_map(
                |&Listed {
                     row: k,
                     amount: a,
                     due,
                 }| {
                    let diff = fits(a.filter(|a| a.is_finite())?, amount, fee_tolerance)?;
                    let days = days_off(dep_dates[d], due);
                    (in_window(days, window) && open.is_none_or(|o| o[k]))
                        .then_some((k, diff, days))
                },
            )
            .min_by(single_order)
            .map(|(k, diff, _)| (k, diff, 1.0))
    };
    // Step 1 for every deposit as if every receivable were open, on every core (each reads
    // only what is built above). The loop only closes receivables, so at a deposit's turn its
    // candidates are these less the closed ones, in the same order: when the invoice found
    // here is still open, each invoice before it was turned away by its name, not by being
    // closed, and it is the one step 1 takes; when it was closed, step 1 searches again; when
    // none was found, none is found among fewer.
    let stop = StopCheck::new(ctx.cancel);
    let first_own: Vec<Option<(usize, f64, f64)>> = (0..deposits.len())
        .into_par_iter()
        .map(|d| {
            if stop.now(d) {
                return None;
            }
            own_invoice(d, None)
        })
        .collect();
    cancelled(ctx)?;
    let mut open = vec![true; receivables.len()];
    // The payer's similarity to each candidate of the deposit at hand.
    let mut sims = vec![0.0; receivables.len()];
    // Receivables with a finite amount, by amount (then row), for the single-invoice search.
    // Each with its due date beside it: step 3 reads a run of this list for every deposit it
    // searches (a few hundred receivables at a million rows), and the amount and the date
    // side by side are one read of memory where the receivables' own columns are three far
    // apart.
    let mut by_amount: Vec<(f64, usize, Option<NaiveDate>)> = rec_amount
        .iter()
        .enumerate()
        .filter_map(|(k, a)| a.filter(|x| x.is_finite()).map(|x| (x, k, rec_due[k])))
        .collect();
    // Every row once, so no two are equal and any sort gives this order: on every core.
    by_amount.par_sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));

    // Each cleared deposit: its row, the receivables, the difference (none when exact) and
    // the confidence.
    let mut cleared: Vec<(usize, Vec<usize>, Option<f64>, f64)> = Vec::new();
    let mut unmatched: Vec<usize> = Vec::new();
    // Cleared deposits with an invoice of a customer whose name is only near the payer's
    // (the deposit's index in `cleared`, the first such receivable): a person checks them.
    let mut near: Vec<(usize, usize)> = Vec::new();
    let (mut deposit_total, mut cleared_amount, mut fee_total) = (0.0, 0.0, 0.0);
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(deposits.len()));
    for d in 0..deposits.len() {
        steps.next()?;
        let Some(amount) = dep_amounts[d] else {
            unmatched.push(d);
            continue;
        };
        deposit_total += amount;
        let dep_date = dep_dates[d];
        let payer = dep_payers[d];
        let eligible = |k: usize| {
            open[k] && rec_amount[k].is_some() && in_window(days_off(dep_date, rec_due[k]), window)
        };
        // 1. One of the payer's own invoices: those under the payer's name (`by_name`, a
        // dozen where the receivables under an amount are hundreds at a million rows), found
        // before the loop as if all were open (`first_own`), searched again if it was closed.
        let taken = match first_own[d] {
            Some((k, _, _)) if !open[k] => own_invoice(d, Some(&open)),
            found => found,
        };
        let mut best: Option<(Vec<usize>, f64)> = taken.map(|(k, diff, sim)| {
            sims[k] = sim;
            (vec![k], diff)
        });
        // Whether the payer's name is at the threshold for a receivable's (the best of its
        // name and kana), its similarity kept in `sims` for the confidence; each pair of
        // distinct names is scored once per call, and not at all when the shape test tells
        // it cannot reach the threshold (only a receivable at the threshold has its `sims`
        // read).
        let payer_shape = shapes[payer as usize];
        let mut named = |k: usize| {
            let mut best = 0.0_f64;
            for name in [rec_name[k], rec_kana[k]] {
                if payer_shape.may_reach(shapes[name as usize], name_threshold) {
                    best = best.max(names.similarity(payer, name));
                }
            }
            sims[k] = best;
            best + 1e-9 >= name_threshold
        };
        let fits = |total: f64| fits(total, amount, fee_tolerance);
        // The payer's own customers come first: those whose name or kana is the payer's name
        // once normalised (similarity 1). A customer whose name is only near it (at the
        // threshold) is searched when none of the payer's own invoices can be paid: among a
        // hundred thousand customers many names are near one another, and a near name's
        // invoice of the same amount and a closer date is another customer's invoice.
        let own = |k: usize| {
            !texts[payer as usize].is_empty() && (rec_name[k] == payer || rec_kana[k] == payer)
        };
        // 2. Several of the payer's own invoices paid together.
        if best.is_none() && allow_combined {
            let candidates: Vec<usize> = by_name
                .get(payer)
                .iter()
                .map(|l| l.row)
                .filter(|&k| own(k) && eligible(k) && named(k))
                .collect();
            best = combined(&candidates, &texts, &rec_name, &rec_due, &rec_amount, &fits);
        }
        // 3. One invoice of a customer whose name is near the payer's, the first in
        // `single_order`. The candidates are the receivables whose amount can fit (a run of
        // `by_amount`), or, when the payer's names at the threshold are known (`reachable`:
        // a payer without invoices of its own, or one whose step 4 found them) and hold fewer
        // receivables than that run (or at most `FEW_LISTED`), the receivables under those
        // names: the same invoice either way, for a receivable is at the threshold (`named`)
        // exactly when its name or its kana is in the list, its similarity the better of
        // theirs.
        if best.is_none() && amount.is_finite() {
            let (low, high) = fit_range(amount, fee_tolerance);
            // The run of amounts is found by two binary searches over every receivable (a
            // fifth of this loop's time at a million): not when the listed receivables are
            // so few that reading them costs less.
            let run = || {
                let start = by_amount.partition_point(|c| c.0 < low);
                let run = &by_amount[start..];
                &run[..run.partition_point(|c| c.0 <= high)]
            };
            let (listed, run) = match reachable.get(&payer) {
                Some(ids) => {
                    let under: usize = ids.iter().map(|&(id, _)| by_name.get(id).len()).sum();
                    if under <= FEW_LISTED {
                        (Some(ids), &[][..])
                    } else {
                        let run = run();
                        ((under < run.len()).then_some(ids), run)
                    }
                }
                None => (None, run()),
            };
            let mut singles: Vec<(usize, f64, i64)> = Vec::new();
            if let Some(ids) = listed {
                for (k, sim) in receivables_under(ids, &by_name) {
                    let Some(diff) = rec_amount[k].filter(|a| a.is_finite()).and_then(fits) else {
                        continue;
                    };
                    if eligible(k) && !own(k) {
                        sims[k] = sim;
                        singles.push((k, diff, days_off(dep_date, rec_due[k])));
                    }
                }
                singles.sort_by(single_order);
                best = singles.first().map(|&(k, diff, _)| (vec![k], diff));
            } else {
                for &(a, k, due) in run {
                    let days = days_off(dep_date, due);
                    if let Some(diff) = fits(a)
                        && open[k]
                        && in_window(days, window)
                    {
                        singles.push((k, diff, days));
                    }
                }
                singles.sort_by(single_order);
                best = singles
                    .iter()
                    .find(|&&(k, _, _)| !own(k) && named(k))
                    .map(|&(k, diff, _)| (vec![k], diff));
            }
        }
        // 4. Several invoices of one customer whose name is at the threshold.
        if best.is_none() && allow_combined {
            let computed;
            let ids: &[(u32, f64)] = match reachable.get(&payer) {
                Some(ids) => ids,
                None => {
                    let ids = at_threshold(payer);
                    // A low threshold lets most names through: those lists are not kept.
                    if ids.len() <= MAX_KEPT_NAMES {
                        reachable.entry(payer).or_insert(ids)
                    } else {
                        computed = ids;
                        &computed
                    }
                }
            };
            // The receivables under those names are those at the threshold (`named`): a
            // receivable's similarity is the best of its name's and its kana's, and a name not
            // in the list is below the threshold, so under both it is the larger of the two.
            let candidates: Vec<usize> = receivables_under(ids, &by_name)
                .into_iter()
                .filter(|&(k, _)| eligible(k))
                .map(|(k, sim)| {
                    sims[k] = sim;
                    k
                })
                .collect();
            best = combined(&candidates, &texts, &rec_name, &rec_due, &rec_amount, &fits);
        }
        let Some((ks, diff)) = best else {
            unmatched.push(d);
            continue;
        };
        let name_sim = ks.iter().map(|&k| sims[k]).fold(1.0, f64::min);
        let exact = diff.abs() < 0.005;
        // Confidence: the weakest name similarity, less for a fee-short or combined payment.
        let fee_factor = if exact { 1.0 } else { 0.9 };
        let combined_factor = if ks.len() > 1 { 0.9 } else { 1.0 };
        let confidence = round4(name_sim * fee_factor * combined_factor);
        for &k in &ks {
            open[k] = false;
        }
        if let Some(&k) = ks.iter().find(|&&k| !own(k)) {
            near.push((cleared.len(), k));
        }
        cleared_amount += amount;
        if !exact {
            fee_total += diff;
        }
        cleared.push((d, ks, (!exact).then_some(diff), confidence));
    }
    let open_amount: f64 = rec_amount
        .iter()
        .zip(&open)
        .filter(|(_, o)| **o)
        .filter_map(|(a, _)| *a)
        .sum();
    let unmatched_amount: f64 = unmatched.iter().filter_map(|&d| dep_amounts[d]).sum();
    let no_amount = dep_amounts.iter().filter(|a| a.is_none()).count();
    let deposit_count = deposits.len();
    ctx.calls.warn_rows_skipped(
        no_amount,
        deposit_count,
        (
            "入金額（amount）が空か読めないため照合していません",
            "were not reconciled: their amount is empty or unreadable",
        ),
    );
    ctx.calls.warn_if_mostly_flagged(
        unmatched.len(),
        deposit_count,
        ("消込できない入金", "unmatched deposits"),
    );
    warn_near_names(
        ctx,
        &near,
        &cleared,
        (&deposits, &receivables),
        &customer_field,
        name_threshold,
    )?;
    // Every row goes out once: a deposit is cleared or not, a receivable cleared once or
    // open. The unmatched deposits and the open receivables are taken from their input as it
    // is (a table stays a table, its column types kept); only the cleared rows, which
    // `matches` nests, become JSON — when the plan takes `matches`; else only those the window
    // shows (a million matches nobody reads are 2 GB of JSON).
    let open_rows: Vec<usize> = (0..receivables.len()).filter(|&k| open[k]).collect();
    let built = &cleared[..ctx.items_to_build("matches", cleared.len())];
    let cleared_deposits: Vec<usize> = built.iter().map(|c| c.0).collect();
    let cleared_receivables: Vec<usize> = built.iter().flat_map(|c| c.1.clone()).collect();
    let mut dep_rows = deposits.rows_at(&cleared_deposits)?.into_iter();
    let mut rec_rows = receivables.rows_at(&cleared_receivables)?.into_iter();
    let matches: Vec<Json> = built
        .iter()
        .map(|(_, ks, difference, confidence)| {
            let recs: Vec<Json> = ks
                .iter()
                .map(|_| Json::Object(rec_rows.next().unwrap_or_default()))
                .collect();
            object([
                ("deposit", Json::Object(dep_rows.next().unwrap_or_default())),
                ("receivables", Json::Array(recs)),
                ("difference", num_json(difference.unwrap_or(0.0))),
                (
                    "difference_reason",
                    json!(if difference.is_some() {
                        "transfer_fee"
                    } else {
                        "none"
                    }),
                ),
                ("confidence", num_json(*confidence)),
            ])
        })
        .collect();
    let summary = json!({
        "deposit_count": deposit_count,
        "deposit_amount": num_json(deposit_total),
        "cleared_count": cleared.len(),
        "cleared_amount": num_json(cleared_amount),
        "unmatched_deposit_count": unmatched.len(),
        "unmatched_deposit_amount": num_json(unmatched_amount),
        "open_receivable_count": open_rows.len(),
        "open_receivable_amount": num_json(open_amount),
        "fee_difference_total": num_json(fee_total),
    });
    Ok(Outputs::new()
        .with_shown("matches", matches, cleared.len())
        .with("unmatched_deposits", deposits.take(&unmatched)?)
        .with("open_receivables", receivables.take(&open_rows)?)
        .with("summary", summary))
}

builtin!("matching.bank_reconciliation", bank_reconciliation);

/// Warns `NAMES_DIFFER` when deposits were cleared against an invoice of a customer whose
/// name is only near the payer's (`near`: the index in `cleared`, that receivable): a near
/// spelling is how banks write names, but among many customers it may be another customer's
/// invoice, and the run would otherwise look the same. The count and the first three, the
/// payer as the statement writes it and the customer as the receivables do.
fn warn_near_names(
    ctx: &BlockContext<'_>,
    near: &[(usize, usize)],
    cleared: &[(usize, Vec<usize>, Option<f64>, f64)],
    (deposits, receivables): (&RowSource<'_>, &RowSource<'_>),
    customer_field: &str,
    threshold: f64,
) -> Result<(), BlockError> {
    if near.is_empty() {
        return Ok(());
    }
    let first = &near[..near.len().min(3)];
    let dep_rows =
        deposits.rows_at(&first.iter().map(|&(c, _)| cleared[c].0).collect::<Vec<_>>())?;
    let rec_rows = receivables.rows_at(&first.iter().map(|&(_, k)| k).collect::<Vec<_>>())?;
    let text = |row: &serde_json::Map<String, Json>, field: &str| cell_text(row.get(field));
    let examples: Vec<String> = first
        .iter()
        .zip(dep_rows.iter().zip(&rec_rows))
        .map(|(&(c, _), (dep, rec))| {
            format!(
                "{} → {} ({})",
                text(dep, "description"),
                text(rec, customer_field),
                cleared[c].3
            )
        })
        .collect();
    let (more_ja, more_en) = crate::blocks::kit::text::and_more(near.len(), first.len());
    ctx.calls.warn(crate::block::Warning::new(
        "NAMES_DIFFER",
        format!(
            "{} 件の入金を、振込依頼人名と名前が一致しない得意先（類似度 {threshold} 以上の近い名前）の請求に消し込みました。別の得意先の請求かもしれません。確信度（confidence）を見て確認してください: {}{more_ja}",
            near.len(),
            examples.join("、"),
        ),
        format!(
            "{} cleared against invoices of a customer whose name is not the payer's (a near name, similarity {threshold} or more): they may be another customer's invoices, check them by their confidence: {}{more_en}",
            match near.len() {
                1 => "1 deposit was".to_string(),
                n => format!("{n} deposits were"),
            },
            examples.join(", "),
        ),
    ));
    Ok(())
}

/// Several invoices of one customer that pay a deposit together (`fits` gives the difference
/// of a total): the candidates grouped by customer name, in the order of the names; of each
/// customer, the first twelve by due date, and of those the subsets from two invoices up, in
/// order, an exact total before one short by a fee. The first customer with a subset wins.
/// The receivables under these names (as customer or as kana, each name with its similarity
/// to the payer), each once with the better similarity of its two names, by row.
fn receivables_under(ids: &[(u32, f64)], by_name: &ByName) -> Vec<(usize, f64)> {
    let mut under: Vec<(usize, f64)> = ids
        .iter()
        .flat_map(|&(id, sim)| by_name.get(id).iter().map(move |l| (l.row, sim)))
        .collect();
    under.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    under.dedup_by_key(|c| c.0);
    under
}

/// The receivables under each name (as customer or as kana; a receivable whose kana is its
/// name once), by row, each with its amount and due date: one list cut by name id, read by
/// index. A map of a list of rows per name hashed every id and grew a list per name (0.1 s
/// on one core at a million receivables), and step 1 then read each row's amount and due
/// date from columns where the rows lie far apart (a dozen reads at random per deposit).
struct ByName {
    /// A name's receivables are `rows[starts[id]..starts[id + 1]]`.
    starts: Vec<usize>,
    rows: Vec<Listed>,
}

/// A receivable under a name: its row, amount and due date.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Listed {
    row: usize,
    amount: Option<f64>,
    due: Option<NaiveDate>,
}

impl ByName {
    /// The receivables under the names of `rec_name` and `rec_kana` (ids below `names`),
    /// with their amounts and due dates.
    fn new(
        names: usize,
        (rec_name, rec_kana): (&[u32], &[u32]),
        (rec_amount, rec_due): (&[Option<f64>], &[Option<NaiveDate>]),
    ) -> ByName {
        let pairs = || {
            rec_name
                .iter()
                .zip(rec_kana)
                .map(|(&name, &kana)| (name as usize, (kana != name).then_some(kana as usize)))
        };
        let mut starts = vec![0; names + 1];
        for (name, kana) in pairs() {
            starts[name + 1] += 1;
            if let Some(kana) = kana {
                starts[kana + 1] += 1;
            }
        }
        for id in 0..names {
            starts[id + 1] += starts[id];
        }
        let mut next = starts.clone();
        let empty = Listed {
            row: 0,
            amount: None,
            due: None,
        };
        let mut rows = vec![empty; starts[names]];
        for (k, (name, kana)) in pairs().enumerate() {
            for id in std::iter::once(name).chain(kana) {
                rows[next[id]] = Listed {
                    row: k,
                    amount: rec_amount.get(k).copied().flatten(),
                    due: rec_due.get(k).copied().flatten(),
                };
                next[id] += 1;
            }
        }
        ByName { starts, rows }
    }

    /// The receivables under name `id`, by row (none for a name no receivable has).
    fn get(&self, id: u32) -> &[Listed] {
        let id = id as usize;
        match (self.starts.get(id), self.starts.get(id + 1)) {
            (Some(&start), Some(&end)) => &self.rows[start..end],
            _ => &[],
        }
    }

    /// The names some receivable is under, by id.
    fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.starts
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[0] < w[1])
            .map(|(id, _)| id as u32)
    }
}

/// How many days a deposit is from a due date; `i64::MAX` when either date is missing.
fn days_off(day: Option<NaiveDate>, due: Option<NaiveDate>) -> i64 {
    match (day, due) {
        (Some(day), Some(due)) => (day - due).num_days().abs(),
        _ => i64::MAX,
    }
}

/// Whether an invoice `days` off (by [`days_off`]) is inside the date window: without dates
/// on either side the window cannot exclude it.
fn in_window(days: i64, window: i64) -> bool {
    days == i64::MAX || days <= window
}

/// The order a deposit's single invoices `(row, difference, days off)` are tried in: exact
/// before fee-short, then the closest due date, then the row (a total order, so each step
/// takes the first of its own in it).
fn single_order(a: &(usize, f64, i64), b: &(usize, f64, i64)) -> std::cmp::Ordering {
    (a.1.abs() >= 0.005)
        .cmp(&(b.1.abs() >= 0.005))
        .then(a.2.cmp(&b.2))
        .then(a.0.cmp(&b.0))
}

fn combined(
    candidates: &[usize],
    texts: &[String],
    rec_name: &[u32],
    rec_due: &[Option<NaiveDate>],
    rec_amount: &[Option<f64>],
    fits: &impl Fn(f64) -> Option<f64>,
) -> Option<(Vec<usize>, f64)> {
    let mut by_customer: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for &k in candidates {
        by_customer
            .entry(texts[rec_name[k] as usize].as_str())
            .or_default()
            .push(k);
    }
    for group in by_customer.values() {
        let mut group = group.clone();
        group.sort_by_key(|&k| (rec_due[k], k));
        group.truncate(MAX_COMBINED);
        let mut found: Option<(Vec<usize>, f64)> = None;
        for size in 2..=group.len() {
            for subset in subsets(group.len(), size) {
                let ks: Vec<usize> = subset.iter().map(|&p| group[p]).collect();
                let total: f64 = ks.iter().map(|&k| rec_amount[k].unwrap_or(0.0)).sum();
                if let Some(d) = fits(total) {
                    let better = match &found {
                        None => true,
                        Some((_, fd)) => fd.abs() >= 0.005 && d.abs() < 0.005,
                    };
                    if better {
                        found = Some((ks, d));
                    }
                }
            }
            if found.as_ref().is_some_and(|(_, d)| d.abs() < 0.005) {
                break;
            }
        }
        if found.is_some() {
            return found;
        }
    }
    None
}

/// All `size`-element subsets of `0..n` as sorted index lists, in lexicographic order.
fn subsets(n: usize, size: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut current = Vec::with_capacity(size);
    fn go(
        start: usize,
        n: usize,
        size: usize,
        current: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
    ) {
        if current.len() == size {
            out.push(current.clone());
            return;
        }
        for i in start..n {
            current.push(i);
            go(i + 1, n, size, current, out);
            current.pop();
        }
    }
    go(0, n, size, &mut current, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn receivables_are_listed_under_their_name_and_their_kana_by_row() {
        // Four receivables; the second's kana is its name, the third's name is the first's.
        let due = NaiveDate::from_ymd_opt(2025, 4, 30);
        let amounts = [Some(1_000.0), None, Some(3_300.0), Some(-5.0)];
        let by_name = ByName::new(5, (&[2, 0, 2, 1], &[3, 0, 2, 3]), (&amounts, &[due; 4]));
        let rows = |id: u32| -> Vec<(usize, Option<f64>)> {
            by_name
                .get(id)
                .iter()
                .map(|l| {
                    assert_eq!(l.due, due);
                    (l.row, l.amount)
                })
                .collect()
        };
        assert_eq!(rows(0), [(1, None)]);
        assert_eq!(rows(1), [(3, Some(-5.0))]);
        assert_eq!(rows(2), [(0, Some(1_000.0)), (2, Some(3_300.0))]);
        assert_eq!(rows(3), [(0, Some(1_000.0)), (3, Some(-5.0))]);
        // A name no receivable has (a payer's), and an id past every name.
        assert!(by_name.get(4).is_empty() && by_name.get(9).is_empty());
        assert_eq!(by_name.ids().collect::<Vec<_>>(), [0, 1, 2, 3]);
    }

    proptest! {
        /// Every amount that fits a deposit is inside the range searched for it: yen, sen and
        /// large amounts, differences around half a sen and around the fee tolerance.
        #[test]
        fn every_amount_that_fits_is_in_the_range_searched(
            amount in prop_oneof![(0i64..2_000_000).prop_map(|k| k as f64), (0i64..2_000_000).prop_map(|k| k as f64 / 100.0), Just(1e12)],
            offset in prop_oneof![-0.01f64..0.01, -1.0f64..1_000.0, Just(0.005), Just(-0.005), Just(880.0)],
            fee_tolerance in prop_oneof![Just(0.0), Just(880.0), 0.0f64..1_000.0, Just(-5.0)],
        ) {
            let total = amount + offset;
            let (low, high) = fit_range(amount, fee_tolerance);
            if fits(total, amount, fee_tolerance).is_some() {
                prop_assert!(low <= total && total <= high, "{total} outside {low}..={high}");
            }
        }
    }
}
