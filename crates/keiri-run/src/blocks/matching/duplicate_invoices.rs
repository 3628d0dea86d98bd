//! `matching.duplicate_invoices`: its inputs and outputs are in `block_specs/matching/matching.duplicate_invoices.yaml`.

use super::{
    cell_text, date, key_text, name_similarity, num_json, number, outputs, round4, rows_json,
};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::cancelled;
use crate::value::Row;
use chrono::NaiveDate;
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;

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

fn duplicate_invoices(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let rows = inputs.rows("rows")?;
    let vendor_field = inputs.str("vendor_field")?.unwrap_or("vendor").to_string();
    let amount_field = inputs.str("amount_field")?.unwrap_or("amount").to_string();
    let date_field = inputs
        .str("date_field")?
        .unwrap_or("invoice_date")
        .to_string();
    let number_field = inputs.str("invoice_no_field")?.map(str::to_string);
    let window = inputs.i64("date_window_days")?.unwrap_or(30);
    let amount_tolerance = inputs.f64("amount_tolerance")?.unwrap_or(0.0);
    let vendor_threshold = inputs.f64("vendor_similarity")?.unwrap_or(0.9);

    struct Inv {
        vendor: String,
        amount: Option<f64>,
        date: Option<NaiveDate>,
        number: Option<String>,
    }
    let invs: Vec<Inv> = rows
        .iter()
        .map(|r| Inv {
            vendor: cell_text(r.get(&vendor_field)),
            amount: number(r.get(&amount_field)),
            date: date(r.get(&date_field)),
            number: number_field.as_ref().and_then(|f| invoice_no_key(r.get(f))),
        })
        .collect();

    // Every pair is compared: invoice lists are thousands of rows, not millions, and a
    // blocking key would miss exactly the vendor-spelling variants this block is for.
    let n = invs.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut pair_best: Vec<Option<(DuplicateReason, f64)>> = vec![None; n];
    for i in 0..n {
        cancelled(ctx)?;
        for j in (i + 1)..n {
            let (a, b) = (&invs[i], &invs[j]);
            let (Some(x), Some(y)) = (a.amount, b.amount) else {
                continue;
            };
            let amount_diff = (x - y).abs();
            if amount_diff > amount_tolerance + 1e-9 {
                continue;
            }
            let days = match (a.date, b.date) {
                (Some(d1), Some(d2)) => (d1 - d2).num_days().abs(),
                _ => continue,
            };
            if days > window {
                continue;
            }
            let vendor_sim = name_similarity(&a.vendor, &b.vendor);
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
                Some(s) if s >= 1.0 && same_vendor && amount_diff == 0.0 && days == 0 => {
                    DuplicateReason::ExactDuplicate
                }
                Some(s) if s >= 1.0 => DuplicateReason::SameInvoiceNo,
                Some(s) if s + 1e-9 >= INVOICE_NO_SIMILARITY && typo && same_vendor => {
                    DuplicateReason::SimilarInvoiceNo
                }
                Some(_) => continue,
                None if same_vendor => DuplicateReason::SameVendorAmount,
                None => continue,
            };
            let amount_sim = if x.abs().max(y.abs()) > 0.0 {
                1.0 - amount_diff / x.abs().max(y.abs())
            } else {
                1.0
            };
            let date_sim = if window > 0 {
                1.0 - days as f64 / window as f64
            } else {
                1.0
            };
            let mut parts = vec![vendor_sim, amount_sim, date_sim];
            parts.extend(number_sim);
            let score = round4(parts.iter().sum::<f64>() / parts.len() as f64);
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
    }

    // Clusters in order of their first row; a cluster's reason and score are its best pair's.
    let mut cluster_of_root: BTreeMap<usize, usize> = BTreeMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, best) in pair_best.iter().enumerate() {
        if best.is_none() {
            continue;
        }
        let root = find(&mut parent, i);
        let id = *cluster_of_root.entry(root).or_insert_with(|| {
            members.push(Vec::new());
            members.len()
        });
        members[id - 1].push(i);
    }
    let mut clusters = Vec::new();
    let mut duplicates = Vec::new();
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
        let mut cluster_rows = Vec::new();
        for (pos, &i) in idx.iter().enumerate() {
            if pos > 0 {
                // The first invoice of a cluster is the one to pay; the rest are at risk.
                at_risk += invs[i].amount.unwrap_or(0.0);
            }
            let mut row = rows[i].clone();
            row.insert("cluster_id".into(), json!(id));
            row.insert("reason".into(), json!(reason.as_str()));
            cluster_rows.push(Json::Object(rows[i].clone()));
            duplicates.push(row);
        }
        clusters.push(json!({
            "cluster_id": id, "reason": reason.as_str(), "score": num_json(score), "rows": cluster_rows,
        }));
    }
    // Duplicates in input order, like the invoice list they came from.
    let mut order: Vec<(usize, Row)> = Vec::new();
    let mut it = duplicates.into_iter();
    for idx in &members {
        for &i in idx {
            if let Some(row) = it.next() {
                order.push((i, row));
            }
        }
    }
    order.sort_by_key(|(i, _)| *i);
    let duplicates: Vec<Row> = order.into_iter().map(|(_, r)| r).collect();
    let summary = json!({
        "cluster_count": clusters.len(),
        "row_count": duplicates.len(),
        "amount_at_risk": num_json(at_risk),
    });
    Ok(outputs(vec![
        ("clusters", Json::Array(clusters)),
        ("duplicates", rows_json(duplicates)),
        ("summary", summary),
    ]))
}

builtin!("matching.duplicate_invoices", duplicate_invoices);
