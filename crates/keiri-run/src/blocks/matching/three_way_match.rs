//! `matching.three_way_match`: its inputs and outputs are in `block_specs/matching/matching.three_way_match.yaml`.

use super::{cell_text, key_text, num_json, number, object, outputs};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::steps::Steps;
use crate::value::Row;
use serde_json::{Value as Json, json};
use std::collections::{BTreeMap, HashMap};

// ---------------------------------------------------------------------------------------
// matching.three_way_match

fn three_way_match(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let orders = inputs.rows("purchase_orders")?;
    let receipts = inputs.rows("receipts")?;
    let invoices = inputs.rows("invoices")?;
    let map = match inputs.json("field_map") {
        None => None,
        Some(Json::Object(m)) => Some(m),
        Some(_) => {
            return Err(BlockError::input_invalid(
                "field_map",
                "列名の対応のオブジェクトが必要です",
                "expected an object of column names",
            ));
        }
    };
    let name = |k: &str| -> String {
        map.as_ref()
            .and_then(|m| m.get(k))
            .and_then(Json::as_str)
            .unwrap_or(k)
            .to_string()
    };
    let (f_po, f_item, f_qty, f_price, f_amount) = (
        name("po_no"),
        name("item"),
        name("quantity"),
        name("unit_price"),
        name("amount"),
    );
    check_columns(
        ctx,
        &[
            ("purchase_orders", &orders, &[&f_po, &f_qty, &f_price]),
            ("receipts", &receipts, &[&f_po, &f_qty]),
            ("invoices", &invoices, &[&f_po, &f_qty, &f_amount]),
        ],
        &f_item,
        map.as_ref().is_some_and(|m| m.contains_key("item")),
    )?;
    let qty_tol = inputs.f64("quantity_tolerance")?.unwrap_or(0.0);
    let rate = inputs.f64("price_tolerance_rate")?.unwrap_or(0.0);
    let amount_tol = inputs.f64("amount_tolerance")?.unwrap_or(0.0);

    let key = |r: &Row| -> Option<(String, String)> {
        Some((
            key_text(r.get(&f_po), true)?,
            key_text(r.get(&f_item), true).unwrap_or_default(),
        ))
    };
    let mut po_by_key: HashMap<(String, String), usize> = HashMap::new();
    for (i, r) in orders.iter().enumerate() {
        if let Some(k) = key(r) {
            po_by_key.entry(k).or_insert(i);
        }
    }
    // Receipts of one order line are summed: partial deliveries are normal.
    let mut received: HashMap<(String, String), (f64, usize)> = HashMap::new();
    let mut receipt_order: Vec<(String, String)> = Vec::new();
    for (i, r) in receipts.iter().enumerate() {
        if let Some(k) = key(r) {
            let e = received.entry(k.clone()).or_insert_with(|| {
                receipt_order.push(k.clone());
                (0.0, i)
            });
            e.0 += number(r.get(&f_qty)).unwrap_or(0.0);
        }
    }
    let mut invoiced: HashMap<(String, String), bool> = HashMap::new();
    let mut matches = Vec::new();
    let mut exceptions: Vec<Json> = Vec::new();
    let mut by_type: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut difference_total = 0.0;
    let mut push = |exceptions: &mut Vec<Json>,
                    kind: &'static str,
                    po_no: &Json,
                    item: &Json,
                    amount: f64,
                    detail: String,
                    rows: Json| {
        *by_type.entry(kind).or_default() += 1;
        exceptions.push(object([
            ("po_no", po_no.clone()),
            ("item", item.clone()),
            ("type", json!(kind)),
            ("detail", Json::String(detail)),
            ("amount", num_json(amount)),
            ("rows", rows),
        ]));
    };
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(invoices.len()));
    for inv in &invoices {
        steps.next()?;
        let po_no = inv.get(&f_po).cloned().unwrap_or(Json::Null);
        let item = inv.get(&f_item).cloned().unwrap_or(Json::Null);
        let inv_qty = number(inv.get(&f_qty)).unwrap_or(0.0);
        let inv_amount = number(inv.get(&f_amount)).unwrap_or(0.0);
        let Some(k) = key(inv) else {
            push(
                &mut exceptions,
                "missing_po",
                &po_no,
                &item,
                inv_amount,
                "請求書に発注番号がありません".into(),
                json!({"po": null, "receipt": null, "invoice": inv}),
            );
            continue;
        };
        invoiced.insert(k.clone(), true);
        let Some(&pi) = po_by_key.get(&k) else {
            push(
                &mut exceptions,
                "missing_po",
                &po_no,
                &item,
                inv_amount,
                format!(
                    "発注 {} / {} がない請求です",
                    cell_text(Some(&po_no)),
                    cell_text(Some(&item))
                ),
                json!({"po": null, "receipt": null, "invoice": inv}),
            );
            continue;
        };
        let po = &orders[pi];
        let receipt = received.get(&k).map(|(_, first)| &receipts[*first]);
        let rows = json!({"po": po, "receipt": receipt, "invoice": inv});
        let Some(&(rec_qty, _)) = received.get(&k) else {
            push(
                &mut exceptions,
                "missing_receipt",
                &po_no,
                &item,
                inv_amount,
                "検収（入荷）の記録がない請求です".into(),
                rows,
            );
            continue;
        };
        let po_qty = number(po.get(&f_qty)).unwrap_or(0.0);
        let po_price = number(po.get(&f_price)).unwrap_or(0.0);
        let inv_price = number(inv.get(&f_price)).unwrap_or(inv_amount / inv_qty.max(1.0));
        let mut problems = 0;
        let mut exact = true;
        // Over-invoicing: more than was ordered (quantity beyond tolerance).
        if inv_qty > po_qty + qty_tol + 1e-9 {
            let over = (inv_qty - po_qty) * po_price;
            difference_total += over;
            push(
                &mut exceptions,
                "over_invoiced",
                &po_no,
                &item,
                over,
                format!(
                    "請求数量 {} が発注数量 {} を超えています",
                    num_json(inv_qty),
                    num_json(po_qty)
                ),
                rows.clone(),
            );
            problems += 1;
        } else if (inv_qty - rec_qty).abs() > qty_tol + 1e-9 {
            let diff = (inv_qty - rec_qty) * po_price;
            difference_total += diff.abs();
            push(
                &mut exceptions,
                "quantity_mismatch",
                &po_no,
                &item,
                diff.abs(),
                format!(
                    "請求数量 {} と検収数量 {} が違います",
                    num_json(inv_qty),
                    num_json(rec_qty)
                ),
                rows.clone(),
            );
            problems += 1;
        } else if inv_qty != rec_qty {
            exact = false;
        }
        let price_diff = inv_price - po_price;
        let price_allowed = po_price.abs() * rate;
        if price_diff.abs() > price_allowed + 1e-9 {
            let diff = price_diff * inv_qty;
            difference_total += diff.abs();
            push(
                &mut exceptions,
                "price_mismatch",
                &po_no,
                &item,
                diff.abs(),
                format!(
                    "請求単価 {} と発注単価 {} が違います",
                    num_json(inv_price),
                    num_json(po_price)
                ),
                rows.clone(),
            );
            problems += 1;
        } else {
            if price_diff.abs() > 1e-9 {
                exact = false;
            }
            // Amount: the invoice total against the order price for the invoiced quantity.
            let expected = po_price * inv_qty;
            let diff = inv_amount - expected;
            if diff.abs() > expected.abs() * rate + amount_tol + 1e-9 {
                difference_total += diff.abs();
                push(
                    &mut exceptions,
                    "amount_mismatch",
                    &po_no,
                    &item,
                    diff.abs(),
                    format!(
                        "請求金額 {} が発注単価×数量 {} と違います",
                        num_json(inv_amount),
                        num_json(expected)
                    ),
                    rows.clone(),
                );
                problems += 1;
            } else if diff.abs() > 1e-9 {
                exact = false;
            }
        }
        if problems == 0 {
            matches.push(json!({
                "po": po, "receipt": receipt, "invoice": inv,
                "status": if exact { "matched" } else { "within_tolerance" },
            }));
        }
    }
    // Received but never invoiced, and received without an order.
    for k in &receipt_order {
        let Some(&(rec_qty, first)) = received.get(k) else {
            continue;
        };
        let receipt = &receipts[first];
        let po_no = receipt.get(&f_po).cloned().unwrap_or(Json::Null);
        let item = receipt.get(&f_item).cloned().unwrap_or(Json::Null);
        match po_by_key.get(k) {
            None => push(
                &mut exceptions,
                "missing_po",
                &po_no,
                &item,
                0.0,
                "発注のない検収です".into(),
                json!({"po": null, "receipt": receipt, "invoice": null}),
            ),
            Some(&pi) if !invoiced.contains_key(k) => {
                let po = &orders[pi];
                let amount = rec_qty * number(po.get(&f_price)).unwrap_or(0.0);
                push(
                    &mut exceptions,
                    "missing_invoice",
                    &po_no,
                    &item,
                    amount,
                    "検収済みで請求がありません（未着の請求書・未払計上の確認）".into(),
                    json!({"po": po, "receipt": receipt, "invoice": null}),
                );
            }
            Some(_) => {}
        }
    }
    // Nearly every invoice an exception: the columns (or field_map) are likely wrong.
    let invoice_exceptions = exceptions
        .iter()
        .filter(|e| e["type"] != "missing_invoice")
        .count();
    ctx.calls.warn_if_mostly_flagged(
        invoice_exceptions,
        invoices.len(),
        ("例外（請求書）", "exceptions (invoices)"),
    );
    let matched = matches.iter().filter(|m| m["status"] == "matched").count();
    let summary = json!({
        "match_count": matches.len(),
        "matched_count": matched,
        "within_tolerance_count": matches.len() - matched,
        "exception_count": exceptions.len(),
        "exceptions_by_type": by_type,
        "difference_total": num_json(difference_total),
    });
    Ok(outputs(vec![
        ("matches", Json::Array(matches)),
        ("exceptions", Json::Array(exceptions)),
        ("summary", summary),
    ]))
}

/// Each non-empty table must have the columns the match reads (`COLUMN_NOT_FOUND` naming the
/// table, the column and the table's columns): a PO number under another name would make
/// every invoice "without an order". The item column is used by all three tables or by none;
/// with none the match is by PO number alone, which the run says (`WITHOUT_COLUMN`), unless
/// field_map named an item column, which must then be there.
fn check_columns(
    ctx: &BlockContext<'_>,
    tables: &[(&str, &[Row], &[&String])],
    item: &str,
    item_named: bool,
) -> Result<(), BlockError> {
    let mut with_item = Vec::new();
    let mut without_item = Vec::new();
    for (input, rows, needed) in tables {
        if rows.is_empty() {
            continue;
        }
        let columns = crate::value::columns_of(rows);
        let missing = |column: &str| {
            let mut e = BlockError::missing_column(column, &columns);
            e.message_ja = format!(
                "入力 {input} に{}（field_map で別の名前を指定できます）",
                e.message_ja
            );
            e.message_en = format!(
                "input {input}: {} (field_map can name another column)",
                e.message_en
            );
            e
        };
        if let Some(column) = needed.iter().find(|c| !columns.contains(c)) {
            return Err(missing(column));
        }
        if columns.iter().any(|c| c == item) {
            with_item.push(*input);
        } else if item_named {
            return Err(missing(item));
        } else {
            without_item.push((*input, missing(item)));
        }
    }
    match (with_item.is_empty(), without_item.into_iter().next()) {
        (false, Some((_, e))) => Err(e),
        (true, Some(_)) => {
            ctx.calls.warn(crate::block::Warning::new(
                "WITHOUT_COLUMN",
                format!("品目の列（{item}）がどの表にもないため、発注番号だけで照合しました（1 つの発注に複数の品目があると正しく照合できません）"),
                format!("no table has the item column ({item}), so lines were matched by PO number alone (an order with several items cannot be matched right)"),
            ));
            Ok(())
        }
        _ => Ok(()),
    }
}

builtin!("matching.three_way_match", three_way_match);
