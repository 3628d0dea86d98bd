//! `matching.duplicate_invoices`: its inputs and outputs are in `block_specs/matching/matching.duplicate_invoices.yaml`.

use super::blocking::{Names, similar_names};
use super::grid::{Point, close, close_pairs};
use super::{FastMap, FastSet};
use super::{RowSource, date, key_text, num_json, number, object, round4, rows_json, take_rows};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::cancelled;
use crate::blocks::kit::steps::Steps;
use crate::value::{Row, Value, table_error, table_to_rows};
use chrono::{Datelike, NaiveDate};
use polars::prelude::Column;
use rayon::prelude::*;
use serde_json::{Value as Json, json};
use std::borrow::Cow;

// ---------------------------------------------------------------------------------------
// matching.duplicate_invoices

/// Why two invoices look like one, strongest first (the order decides a cluster's reason).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum DuplicateReason {
    /// Same vendor, invoice number, amount and date: the same invoice entered twice.
    ExactDuplicate,
    /// Same invoice number and amount (dates or vendor spelling differ).
    SameInvoiceNo,
    /// Same vendor and amount, invoice numbers with two characters swapped (a typo).
    SimilarInvoiceNo,
    /// Same vendor and amount within the date window (no invoice numbers to compare).
    SameVendorAmount,
}

impl DuplicateReason {
    fn as_str(self) -> &'static str {
        match self {
            DuplicateReason::ExactDuplicate => "exact_duplicate",
            DuplicateReason::SameInvoiceNo => "same_invoice_no",
            DuplicateReason::SimilarInvoiceNo => "similar_invoice_no",
            DuplicateReason::SameVendorAmount => "same_vendor_amount",
        }
    }
}

/// Two invoice numbers this similar (normalised Levenshtein) and with the same characters
/// are the same number mistyped: one swap in a 10-character number is 0.8.
const INVOICE_NO_SIMILARITY: f64 = 0.8;

/// Whether two invoice numbers hold the same characters in a different order: the keying
/// error that turns 08812 into 08821. A number differing in one digit is not counted,
/// because consecutive invoices of a monthly contract (CL-031, CL-021) differ exactly so.
fn is_transposition(a: &str, b: &str) -> bool {
    let mut x: Vec<char> = a.chars().collect();
    let mut y: Vec<char> = b.chars().collect();
    x.sort_unstable();
    y.sort_unstable();
    a != b && x == y
}

fn invoice_no_key(v: Option<&Json>) -> Option<String> {
    key_text(v, true).map(|s| s.chars().filter(|c| c.is_alphanumeric()).collect())
}

/// One invoice as compared.
struct Invoice {
    amount: Option<f64>,
    date: Option<NaiveDate>,
    number: Option<String>,
}

fn duplicate_invoices(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let source = RowSource::of(inputs, "rows")?;
    let vendor_field = inputs.str("vendor_field")?.unwrap_or("vendor").to_string();
    let amount_field = inputs.str("amount_field")?.unwrap_or("amount").to_string();
    let date_field = inputs
        .str("date_field")?
        .unwrap_or("invoice_date")
        .trim()
        .to_string();
    // An empty date_field: the file has no dates (`absent_ok` in the spec). Invoices are then
    // compared without a date window, and the run says so.
    let dated = !date_field.is_empty();
    let number_field = inputs.str("invoice_no_field")?.map(str::to_string);
    let window = inputs.i64("date_window_days")?.unwrap_or(30);
    let amount_tolerance = inputs.f64("amount_tolerance")?.unwrap_or(0.0);
    let vendor_threshold = inputs.f64("vendor_similarity")?.unwrap_or(0.9);

    let n = source.len();
    // A vendor's name is normalised once (`Names`) and each pair of distinct names scored
    // once (`RowSource::texts`); amounts, dates and numbers are read once per distinct text
    // (`RowSource::cells`), on one core while the vendors are read on the other; an error is
    // the first the reads would meet one after another.
    let ((mut vendors, vendor_ids), (amounts, dates, numbers)) = rayon::join(
        || {
            let mut vendors = Names::default();
            let ids = source.texts(&vendor_field, |text| vendors.id(text));
            (vendors, ids)
        },
        || {
            (
                source.cells(&amount_field, |v| number(v).filter(|x| x.is_finite())),
                match dated {
                    true => source.cells(&date_field, date),
                    false => Ok(vec![None; n]),
                },
                match &number_field {
                    Some(field) => source.cells(field, invoice_no_key),
                    None => Ok(vec![None; n]),
                },
            )
        },
    );
    let (vendor_ids, amounts, dates, numbers) = (vendor_ids?, amounts?, dates?, numbers?);
    let invs: Vec<Invoice> = amounts
        .into_iter()
        .zip(dates)
        .zip(numbers)
        .map(|((amount, date), number)| Invoice {
            amount,
            date,
            number,
        })
        .collect();

    // An invoice without a readable amount or date is never paired: say how many.
    let no_amount = invs.iter().filter(|i| i.amount.is_none()).count();
    let no_date = invs
        .iter()
        .filter(|i| dated && i.amount.is_some() && i.date.is_none())
        .count();
    if !dated {
        ctx.calls.warn(crate::block::Warning::new(
            "WITHOUT_COLUMN",
            "日付の列がないため、日付を見ずに比較しました。同じ取引先・同じ金額（番号があれば同じ番号）の請求書はすべて重複の候補になり、毎月同じ金額の請求も含まれます",
            "there is no date column, so invoices were compared without dates: every invoice with the same vendor and amount (or the same number) is a candidate, monthly invoices of the same amount included",
        ));
    }
    ctx.calls.warn_rows_skipped(
        no_amount,
        invs.len(),
        (
            &format!("金額（{amount_field}）が空か読めないため比較していません"),
            &format!("were not compared: their amount ({amount_field}) is empty or unreadable"),
        ),
    );
    ctx.calls.warn_rows_skipped(
        no_date,
        invs.len(),
        (
            &format!("日付（{date_field}）が空か読めないため比較していません"),
            &format!("were not compared: their date ({date_field}) is empty or unreadable"),
        ),
    );

    // Only invoices close in amount and date whose vendors count as the same (or, with
    // numbers, whose numbers are equal) are compared: `blocking` finds them without
    // comparing every pair. Spelling variants are still caught: similar names are found by a
    // join on their characters, not keyed on.
    let similar = similar_names(vendors.texts(), vendor_threshold, |_| cancelled(ctx))?;
    let related: Vec<(u32, u32)> = similar
        .iter()
        .flatten()
        .map(|&(a, b, score)| {
            vendors.remember(a, b, score);
            (a, b)
        })
        .collect();
    // A threshold so low that any two names may count as one vendor: one group.
    let by_vendor = similar.is_some();
    // Room for every invoice at once: a vector grown by doubling copies its rows into fresh
    // memory each time.
    let mut points: Vec<Point> = Vec::with_capacity(n);
    points.extend(invs.iter().enumerate().filter_map(|(index, inv)| {
        Some(Point {
            index,
            amount: inv.amount?,
            day: if dated {
                i64::from(inv.date?.num_days_from_ce())
            } else {
                0
            },
            group: if by_vendor { vendor_ids[index] } else { 0 },
        })
    }));
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut pair_best: Vec<Option<(DuplicateReason, f64)>> = vec![None; n];
    // Whether two invoices are duplicates, and why and how alike (`None`: not duplicates).
    // It reads only the invoices, so the pairs are judged on every core, a batch at a time.
    let judge = |i: usize, j: usize, vendor_sim: f64| -> Option<(DuplicateReason, f64)> {
        let (a, b) = (&invs[i], &invs[j]);
        let (x, y) = (a.amount?, b.amount?);
        let days = match (a.date, b.date) {
            (Some(d1), Some(d2)) => (d1 - d2).num_days().abs(),
            _ if !dated => 0,
            _ => return None,
        };
        let amount_diff = (x - y).abs();
        let same_vendor = vendor_sim + 1e-9 >= vendor_threshold;
        let number_sim = match (&a.number, &b.number) {
            (Some(p), Some(q)) => Some(strsim::normalized_levenshtein(p, q)),
            _ => None,
        };
        let typo = match (&a.number, &b.number) {
            (Some(p), Some(q)) => is_transposition(p, q),
            _ => false,
        };
        let reason = match number_sim {
            // The same date can only be said of invoices that have dates.
            Some(s) if s >= 1.0 && same_vendor && amount_diff == 0.0 && dated && days == 0 => {
                DuplicateReason::ExactDuplicate
            }
            Some(s) if s >= 1.0 => DuplicateReason::SameInvoiceNo,
            Some(s) if s + 1e-9 >= INVOICE_NO_SIMILARITY && typo && same_vendor => {
                DuplicateReason::SimilarInvoiceNo
            }
            Some(_) => return None,
            None if same_vendor => DuplicateReason::SameVendorAmount,
            None => return None,
        };
        let amount_sim = if x.abs().max(y.abs()) > 0.0 {
            1.0 - amount_diff / x.abs().max(y.abs())
        } else {
            1.0
        };
        let date_sim = match window > 0 {
            _ if !dated => None,
            true => Some(1.0 - days as f64 / window as f64),
            false => Some(1.0),
        };
        let mut parts = vec![vendor_sim, amount_sim];
        parts.extend(date_sim);
        parts.extend(number_sim);
        Some((
            reason,
            round4(parts.iter().sum::<f64>() / parts.len() as f64),
        ))
    };
    // The pairs to compare, as the searches below give them, a batch at a time: the vendors'
    // similarities looked up in order (each pair of names scored once), the pairs judged in
    // parallel, then taken in their order (each row's best pair, the clusters joined), the
    // same as judging each pair as it comes.
    const BATCH: usize = 1 << 16;
    let mut vendor_sims: Vec<f64> = Vec::with_capacity(BATCH);
    let mut judge_all = |pending: &mut Vec<(usize, usize)>| {
        vendor_sims.clear();
        vendor_sims.extend(
            pending
                .iter()
                .map(|&(i, j)| vendors.similarity(vendor_ids[i], vendor_ids[j])),
        );
        let judged: Vec<Option<(DuplicateReason, f64)>> = pending
            .par_iter()
            .zip(&vendor_sims)
            .map(|(&(i, j), &vendor_sim)| judge(i, j, vendor_sim))
            .collect();
        for (&(i, j), judged) in pending.iter().zip(judged) {
            let Some((reason, score)) = judged else {
                continue;
            };
            for k in [i, j] {
                let better = match pair_best[k] {
                    None => true,
                    Some((r, s)) => reason < r || (reason == r && score > s),
                };
                if better {
                    pair_best[k] = Some((reason, score));
                }
            }
            let (ri, rj) = (find(&mut parent, i), find(&mut parent, j));
            if ri != rj {
                parent[ri.max(rj)] = ri.min(rj);
            }
        }
        pending.clear();
    };
    let mut pending: Vec<(usize, usize)> = Vec::with_capacity(BATCH);
    let mut compare = |i: usize, j: usize| {
        pending.push((i, j));
        if pending.len() == BATCH {
            judge_all(&mut pending);
        }
    };
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(points.len()));
    let stop = |done: usize| steps.advance_to(done as u64);
    close_pairs(
        &points,
        &related,
        amount_tolerance,
        window,
        stop,
        &mut compare,
    )?;
    // The same invoice number under vendors that do not count as one (`same_invoice_no`):
    // invoices sharing a number, close in amount and date, not paired above.
    if by_vendor && number_field.is_some() {
        let related: FastSet<(u32, u32)> = related.iter().copied().collect();
        let mut by_number: FastMap<&str, Vec<&Point>> = FastMap::default();
        for p in &points {
            if let Some(number) = &invs[p.index].number {
                by_number.entry(number.as_str()).or_default().push(p);
            }
        }
        for same in by_number.values() {
            cancelled(ctx)?;
            for (n, p) in same.iter().enumerate() {
                for q in &same[n + 1..] {
                    let groups = (p.group.min(q.group), p.group.max(q.group));
                    if groups.0 != groups.1
                        && !related.contains(&groups)
                        && close(p, q, amount_tolerance, window)
                    {
                        compare(p.index.min(q.index), p.index.max(q.index));
                    }
                }
            }
        }
    }

    judge_all(&mut pending);

    // Clusters in order of their first row; a cluster's reason and score are its best pair's.
    // A cluster's root is its first row (a union keeps the smaller root), a paired row itself,
    // so it is met before the rest of its cluster and found among the rows flagged so far.
    let mut members: Vec<Vec<usize>> = Vec::new();
    // The rows in a cluster, ascending, and the cluster of each.
    let mut flagged: Vec<usize> = Vec::new();
    let mut cluster_ids: Vec<usize> = Vec::new();
    for (i, best) in pair_best.iter().enumerate() {
        if best.is_none() {
            continue;
        }
        let root = find(&mut parent, i);
        let id = if root == i {
            members.push(Vec::new());
            members.len()
        } else {
            cluster_ids[flagged.partition_point(|&f| f < root)]
        };
        members[id - 1].push(i);
        flagged.push(i);
        cluster_ids.push(id);
    }
    // Only these rows become JSON. A table's flagged rows are taken once: as a table they are
    // the duplicates, as JSON only the clusters', so each row moves into its cluster (one copy
    // of 170,000 rows fewer on a million invoices); JSON rows are the duplicates' rows as well,
    // so they are copied. When the plan does not take `clusters`, a table's rows become JSON
    // only for the clusters the window shows.
    let built = ctx.groups_to_build("clusters", members.iter().map(Vec::len));
    let (mut picked, taken, in_json) = match &source {
        RowSource::Table(df) => {
            let taken = take_rows(df, &flagged)?;
            if built == members.len() {
                (table_to_rows(&taken)?, Some(taken), Cow::Borrowed(&flagged))
            } else {
                let mut shown: Vec<usize> = members[..built].iter().flatten().copied().collect();
                shown.sort_unstable();
                (
                    table_to_rows(&take_rows(df, &shown)?)?,
                    Some(taken),
                    Cow::Owned(shown),
                )
            }
        }
        RowSource::Rows(_) => (source.rows_at(&flagged)?, None, Cow::Borrowed(&flagged)),
    };
    let copied = taken.is_none();
    let mut clusters = Vec::new();
    let mut reasons = Vec::new();
    let mut at_risk = 0.0;
    for (k, idx) in members.iter().enumerate() {
        let id = k + 1;
        let (reason, score) = idx.iter().filter_map(|&i| pair_best[i]).fold(
            (DuplicateReason::SameVendorAmount, 0.0),
            |(r, s), (r2, s2)| {
                if r2 < r || (r2 == r && s2 > s) {
                    (r2, s2)
                } else {
                    (r, s)
                }
            },
        );
        reasons.push(reason);
        // The first invoice of a cluster is the one to pay; the rest are at risk.
        for &i in idx.iter().skip(1) {
            at_risk += invs[i].amount.unwrap_or(0.0);
        }
        if k >= built {
            continue;
        }
        let mut cluster_rows = Vec::new();
        for &i in idx {
            let row = &mut picked[in_json.partition_point(|&f| f < i)];
            cluster_rows.push(Json::Object(if copied {
                row.clone()
            } else {
                std::mem::take(row)
            }));
        }
        clusters.push(object([
            ("cluster_id", json!(id)),
            ("reason", json!(reason.as_str())),
            ("score", num_json(score)),
            ("rows", Json::Array(cluster_rows)),
        ]));
    }
    // Duplicates in input order, like the invoice list they came from, each with its cluster
    // and the cluster's reason: a table stays a table (the flagged rows are not turned into
    // JSON a second time), rows stay rows.
    let row_count = flagged.len();
    let reason_of: Vec<&str> = cluster_ids
        .iter()
        .map(|&id| reasons[id - 1].as_str())
        .collect();
    let duplicates: Value = match taken {
        Some(mut table) => {
            let ids: Vec<i64> = cluster_ids.iter().map(|&id| id as i64).collect();
            table
                .with_column(Column::new("cluster_id".into(), ids))
                .and_then(|t| t.with_column(Column::new("reason".into(), reason_of)))
                .map_err(|e| table_error(&e))?;
            Value::Table(table)
        }
        None => {
            let rows: Vec<Row> = picked
                .into_iter()
                .zip(cluster_ids)
                .zip(reason_of)
                .map(|((mut row, id), reason)| {
                    row.insert("cluster_id".into(), json!(id));
                    row.insert("reason".into(), json!(reason));
                    row
                })
                .collect();
            rows_json(rows).into()
        }
    };
    ctx.calls
        .warn_if_mostly_flagged(row_count, n, ("重複の疑い", "suspected duplicates"));
    let summary = json!({
        "cluster_count": members.len(),
        "row_count": row_count,
        "amount_at_risk": num_json(at_risk),
    });
    Ok(Outputs::new()
        .with_shown("clusters", clusters, members.len())
        .with("duplicates", duplicates)
        .with("summary", summary))
}

builtin!("matching.duplicate_invoices", duplicate_invoices);

#[cfg(test)]
mod tests {
    use super::DuplicateReason;

    #[test]
    fn every_reason_has_a_label_for_reports() {
        for reason in [
            DuplicateReason::ExactDuplicate,
            DuplicateReason::SameInvoiceNo,
            DuplicateReason::SimilarInvoiceNo,
            DuplicateReason::SameVendorAmount,
        ] {
            // A new variant fails to compile here until it is listed.
            match reason {
                DuplicateReason::ExactDuplicate
                | DuplicateReason::SameInvoiceNo
                | DuplicateReason::SimilarInvoiceNo
                | DuplicateReason::SameVendorAmount => {}
            }
            assert!(
                crate::codes::value_label("reason", reason.as_str(), crate::codes::Lang::Ja)
                    .is_some(),
                "{} has no label in codes.rs",
                reason.as_str()
            );
        }
    }
}
