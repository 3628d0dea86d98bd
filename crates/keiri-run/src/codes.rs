//! What the codes blocks write into their rows mean, in Japanese and English: the one place
//! reports, review tables and exports look them up, so an accountant reads 「請求書番号の打ち
//! 間違いの疑い」 where the data says `similar_invoice_no`.
//!
//! Two tables:
//! * [`COLUMNS`]: the headers of the columns blocks add (`cluster_id`, `reason`, `severity`, …)
//!   and of the canonical columns the catalog's inputs name (`vendor`, `amount`, …), with
//!   whether a column holds yen amounts (written `#,##0`).
//! * [`VALUES`]: the codes found in those columns, per column, because one word means
//!   different things in different columns (`none` as a difference reason is 「差額なし」).
//!
//! The data keeps its codes: a plan filters on `reason == "exact_duplicate"` and a CSV export
//! is for machines. Labels are applied where people read, and a value that is not a listed
//! code (a free-text reason, a user's own status) is shown as it is.
//!
//! Kept as Rust tables rather than a data file: they are checked when the crate builds and
//! cannot fail to load.

/// A language labels are given in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    Ja,
    En,
}

/// One label in both languages.
#[derive(Clone, Copy, Debug)]
pub struct Label {
    pub ja: &'static str,
    pub en: &'static str,
}

impl Label {
    pub fn get(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::Ja => self.ja,
            Lang::En => self.en,
        }
    }
}

/// How a column's numbers are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// As they are (counts, ids, rates).
    Plain,
    /// Yen amounts: `#,##0`.
    Amount,
}

const fn l(ja: &'static str, en: &'static str) -> Label {
    Label { ja, en }
}

use Shown::{Amount, Plain};

/// Column headers: the columns blocks add, then the canonical input columns.
pub const COLUMNS: &[(&str, Label, Shown)] = &[
    // Added by matching and control blocks.
    ("cluster_id", l("グループ", "Group"), Plain),
    ("reason", l("理由", "Reason"), Plain),
    ("score", l("一致度", "Score"), Plain),
    ("severity", l("重要度", "Severity"), Plain),
    ("rule_id", l("ルール", "Rule"), Plain),
    ("rule", l("チェック", "Check"), Plain),
    ("check", l("チェック", "Check"), Plain),
    ("type", l("種類", "Type"), Plain),
    ("kind", l("種類", "Kind"), Plain),
    ("status", l("状態", "Status"), Plain),
    ("message", l("内容", "Message"), Plain),
    ("detail", l("詳細", "Detail"), Plain),
    ("field", l("項目", "Field"), Plain),
    ("value", l("値", "Value"), Plain),
    ("row_index", l("データ行（0始まり）", "Row (from 0)"), Plain),
    ("count", l("件数", "Count"), Plain),
    ("flagged", l("要確認", "Flagged"), Plain),
    ("selection_reason", l("抽出理由", "Selected because"), Plain),
    ("sample_no", l("サンプル番号", "Sample no."), Plain),
    ("difference", l("差額", "Difference"), Amount),
    (
        "difference_reason",
        l("差額の理由", "Difference reason"),
        Plain,
    ),
    ("confidence", l("確からしさ", "Confidence"), Plain),
    ("change_amount", l("増減額", "Change"), Amount),
    ("change_rate", l("増減率", "Change rate"), Plain),
    ("voucher", l("伝票番号", "Voucher"), Plain),
    ("user", l("利用者", "User"), Plain),
    ("roles", l("権限", "Roles"), Plain),
    ("decision", l("判断", "Decision"), Plain),
    ("approver", l("承認者", "Approver"), Plain),
    ("comment", l("コメント", "Comment"), Plain),
    // A summary's figures (report.summary's `summary`).
    ("total_count", l("件数", "Count"), Plain),
    (
        "by_severity",
        l("重要度別の件数", "Count by severity"),
        Plain,
    ),
    ("total_amount", l("金額の合計", "Total amount"), Amount),
    // The canonical columns the catalog's inputs name.
    ("invoice_no", l("請求書番号", "Invoice no."), Plain),
    ("vendor", l("取引先", "Vendor"), Plain),
    ("customer", l("得意先", "Customer"), Plain),
    ("invoice_date", l("請求日", "Invoice date"), Plain),
    ("due_date", l("支払期日", "Due date"), Plain),
    ("date", l("日付", "Date"), Plain),
    ("amount", l("金額", "Amount"), Amount),
    ("tax_amount", l("消費税額", "Tax"), Amount),
    ("description", l("摘要", "Description"), Plain),
    ("account", l("勘定科目", "Account"), Plain),
    ("po_no", l("発注番号", "PO no."), Plain),
    ("item", l("品目", "Item"), Plain),
    ("quantity", l("数量", "Quantity"), Plain),
    ("unit_price", l("単価", "Unit price"), Amount),
    ("debit_amount", l("借方金額", "Debit"), Amount),
    ("credit_amount", l("貸方金額", "Credit"), Amount),
    ("debit_account", l("借方科目", "Debit account"), Plain),
    ("credit_account", l("貸方科目", "Credit account"), Plain),
    ("current", l("当期", "Current"), Amount),
    ("prior", l("前期", "Prior"), Amount),
    ("employee", l("従業員", "Employee"), Plain),
    ("department", l("部門", "Department"), Plain),
];

/// Codes, per column: `(column, code, label)`.
pub const VALUES: &[(&str, &str, Label)] = &[
    // matching.duplicate_invoices
    (
        "reason",
        "exact_duplicate",
        l("同じ請求書（完全一致）", "Same invoice (exact duplicate)"),
    ),
    (
        "reason",
        "same_invoice_no",
        l("同じ請求書番号・金額", "Same invoice number and amount"),
    ),
    (
        "reason",
        "similar_invoice_no",
        l(
            "請求書番号の打ち間違いの疑い",
            "Invoice number likely mistyped",
        ),
    ),
    (
        "reason",
        "same_vendor_amount",
        l("同じ取引先・金額", "Same vendor and amount"),
    ),
    // matching.three_way_match: exception types and match statuses
    ("type", "missing_po", l("発注なし", "No purchase order")),
    ("type", "missing_receipt", l("検収なし", "Not received")),
    (
        "type",
        "missing_invoice",
        l("請求書なし（検収済み）", "Received, not invoiced"),
    ),
    (
        "type",
        "quantity_mismatch",
        l("数量の不一致", "Quantity mismatch"),
    ),
    (
        "type",
        "price_mismatch",
        l("単価の不一致", "Price mismatch"),
    ),
    (
        "type",
        "amount_mismatch",
        l("金額の不一致", "Amount mismatch"),
    ),
    (
        "type",
        "over_invoiced",
        l("発注数量を超える請求", "Invoiced over the order"),
    ),
    ("status", "matched", l("一致", "Matched")),
    (
        "status",
        "within_tolerance",
        l("許容差内", "Within tolerance"),
    ),
    // control.journal_check
    (
        "check",
        "balance",
        l("貸借の不一致", "Debits and credits differ"),
    ),
    (
        "check",
        "account_exists",
        l("科目表にない勘定科目", "Account not in the chart"),
    ),
    ("check", "zero_amount", l("金額ゼロ", "Zero amount")),
    (
        "check",
        "negative_amount",
        l("マイナスの金額", "Negative amount"),
    ),
    (
        "check",
        "period",
        l("会計期間外の日付", "Date outside the period"),
    ),
    (
        "check",
        "tax_category",
        l("税区分の不備", "Tax category missing or invalid"),
    ),
    ("check", "description", l("摘要なし", "No description")),
    ("check", "weekend", l("休日の計上", "Posted on a weekend")),
    (
        "check",
        "round_amount",
        l("大きな端数のない金額", "Large round amount"),
    ),
    // control.data_quality and control.variance_check
    (
        "rule",
        "required",
        l("必須項目が空欄", "Required value missing"),
    ),
    ("rule", "unique", l("値の重複", "Duplicate value")),
    ("rule", "range", l("範囲外の値", "Value out of range")),
    (
        "rule",
        "allowed_values",
        l("使えない値", "Value not allowed"),
    ),
    ("rule", "type", l("型の不一致", "Wrong type")),
    ("rule", "regex", l("形式の不一致", "Wrong format")),
    (
        "rule",
        "variance",
        l("増減が基準超", "Change over the threshold"),
    ),
    // severities, in every checking block
    ("severity", "critical", l("重大", "Critical")),
    ("severity", "error", l("エラー", "Error")),
    ("severity", "high", l("高", "High")),
    ("severity", "warning", l("警告", "Warning")),
    ("severity", "medium", l("中", "Medium")),
    ("severity", "info", l("情報", "Info")),
    ("severity", "low", l("低", "Low")),
    // control.sampling
    (
        "selection_reason",
        "key_item",
        l("高額のため全件", "Key item (over the threshold)"),
    ),
    ("selection_reason", "random", l("無作為抽出", "Random")),
    (
        "selection_reason",
        "systematic",
        l("系統抽出", "Systematic"),
    ),
    (
        "selection_reason",
        "monetary_unit",
        l("金額単位抽出", "Monetary unit"),
    ),
    // matching.bank_reconciliation
    ("difference_reason", "none", l("差額なし", "No difference")),
    (
        "difference_reason",
        "transfer_fee",
        l("振込手数料の差し引き", "Transfer fee deducted"),
    ),
    // control.sod_check
    ("kind", "self_approval", l("自己承認", "Self-approval")),
    (
        "kind",
        "role_conflict",
        l("職務の兼務", "Conflicting roles"),
    ),
    // control.approval
    ("decision", "approved", l("承認", "Approved")),
    ("decision", "rejected", l("却下", "Rejected")),
];

/// A column's header, when it is one the catalog knows.
pub fn column_label(column: &str, lang: Lang) -> Option<&'static str> {
    COLUMNS
        .iter()
        .find(|(c, _, _)| *c == column)
        .map(|(_, label, _)| label.get(lang))
}

/// Whether a header of the data's own reads as a yen amount: 金額, a name ending in 額
/// (支払額, 増減額), one with 円 or 残高, or English `amount`.
pub fn reads_as_amount(column: &str) -> bool {
    let name = column.trim();
    name.contains("金額")
        || name.trim_end_matches(['）', ')']).ends_with('額')
        || name.contains('円')
        || name.contains("残高")
        || name.to_lowercase().contains("amount")
}

/// Whether a column the catalog knows holds yen amounts.
pub fn is_amount(column: &str) -> bool {
    COLUMNS
        .iter()
        .any(|(c, _, shown)| *c == column && *shown == Amount)
}

/// Whether a column holds codes, so its values are to be shown as their labels: every text
/// value in it (ignoring empty ones) is a code listed for that column, and there is one. A
/// column where even one value is not a code is the data's own (a user's `status` column with
/// `matched` beside `open`), and none of its values is relabelled: a report never changes a
/// user's words because one of them happens to spell a code.
pub fn is_code_column<'a>(
    column: &str,
    values: impl IntoIterator<Item = &'a serde_json::Value>,
) -> bool {
    // The column's codes, looked up once: most columns have none and no value is read.
    let listed: Vec<&str> = VALUES
        .iter()
        .filter(|(c, _, _)| *c == column)
        .map(|(_, v, _)| *v)
        .collect();
    if listed.is_empty() {
        return false;
    }
    let mut any = false;
    for value in values {
        match value {
            serde_json::Value::Null => {}
            serde_json::Value::String(s) if s.trim().is_empty() => {}
            serde_json::Value::String(s) => {
                if !listed.contains(&s.as_str()) {
                    return false;
                }
                any = true;
            }
            _ => return false,
        }
    }
    any
}

/// The label of a code in a column; `None` for a value that is not a listed code, which is
/// then shown as it is.
pub fn value_label(column: &str, code: &str, lang: Lang) -> Option<&'static str> {
    VALUES
        .iter()
        .find(|(c, v, _)| *c == column && *v == code)
        .map(|(_, _, label)| label.get(lang))
}

/// The labels a person's view of `value` needs, for a question the window draws: for each
/// column the catalog knows among the rows' (and one level into nested objects, which the
/// window shows as columns), its header in both languages; for each code found, its label;
/// and which columns hold yen amounts. `{}` parts are left out; `null` when nothing is known.
pub fn labels_for(value: Option<&serde_json::Value>) -> serde_json::Value {
    use serde_json::{Map, Value, json};
    // Rows, or one object (a summary: `{total_count, by_severity: {error: 2}}`) as one row.
    let rows: Vec<&Value> = match value {
        Some(Value::Array(rows)) => rows.iter().collect(),
        Some(object @ Value::Object(_)) => vec![object],
        _ => return Value::Null,
    };
    // Every (column, value) of the rows, one level into nested objects; and the keys of a
    // `by_<column>` object, which are codes of <column> (`by_severity: {error: 2}`).
    let mut cells: indexmap::IndexMap<&str, Vec<&Value>> = indexmap::IndexMap::new();
    let mut keyed: Vec<(&str, &str)> = Vec::new();
    for row in rows {
        let Value::Object(row) = row else { continue };
        for (column, cell) in row {
            match cell {
                Value::Object(inner) => {
                    // The object's own name too: a summary's `by_severity` has a label.
                    cells.entry(column.as_str()).or_default();
                    let of = column.strip_prefix("by_");
                    for (key, inner_cell) in inner {
                        cells.entry(key.as_str()).or_default().push(inner_cell);
                        if let Some(of) = of {
                            keyed.push((of, key.as_str()));
                        }
                    }
                }
                _ => cells.entry(column.as_str()).or_default().push(cell),
            }
        }
    }
    let mut columns = Map::new();
    let mut values: Map<String, Value> = Map::new();
    let mut amounts: Vec<&str> = Vec::new();
    // Each column is looked up once in the tables, and its values only when it holds codes.
    for (column, cells) in &cells {
        if let Some((name, label, shown)) = COLUMNS.iter().find(|(c, _, _)| c == column) {
            columns.insert((*name).to_string(), json!({"ja": label.ja, "en": label.en}));
            if *shown == Amount {
                amounts.push(name);
            }
        } else if reads_as_amount(column)
            && cells.iter().any(|c| c.is_number())
            && cells.iter().all(|c| c.is_number() || c.is_null())
        {
            // The data's own amount column (支払額, 請求金額（税込）): numbers under a header
            // that says so, shown as yen like the catalog's.
            amounts.push(column);
        }
        if !is_code_column(column, cells.iter().copied()) {
            continue;
        }
        let mut of_column = Map::new();
        for cell in cells {
            if let Value::String(code) = cell
                && let Some((_, _, label)) =
                    VALUES.iter().find(|(c, v, _)| c == column && v == code)
            {
                of_column
                    .entry(code.clone())
                    .or_insert_with(|| json!({"ja": label.ja, "en": label.en}));
            }
        }
        values.insert((*column).to_string(), Value::Object(of_column));
    }
    for (column, code) in keyed {
        if let Some((_, _, label)) = VALUES.iter().find(|(c, v, _)| *c == column && *v == code)
            && let Value::Object(of_column) = values
                .entry(column.to_string())
                .or_insert_with(|| Value::Object(Map::new()))
        {
            of_column
                .entry(code.to_string())
                .or_insert_with(|| json!({"ja": label.ja, "en": label.en}));
        }
    }
    if columns.is_empty() && values.is_empty() && amounts.is_empty() {
        return Value::Null;
    }
    json!({"columns": columns, "values": values, "amounts": amounts})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_for_a_summary_name_its_figures_and_the_codes_it_counts() {
        let summary = serde_json::json!({"total_count": 5, "by_severity": {"error": 2, "warning": 3}, "total_amount": 330000});
        let labels = labels_for(Some(&summary));
        assert_eq!(labels["columns"]["total_count"]["ja"], "件数");
        assert_eq!(labels["columns"]["by_severity"]["ja"], "重要度別の件数");
        assert_eq!(labels["values"]["severity"]["error"]["ja"], "エラー");
        assert_eq!(labels["values"]["severity"]["warning"]["en"], "Warning");
        assert_eq!(labels["amounts"], serde_json::json!(["total_amount"]));
    }

    #[test]
    fn the_datas_own_amount_columns_are_shown_as_yen() {
        // 支払額 and 請求金額（税込） hold numbers and say they are amounts; 件数 and a 金額 column
        // with text in it are not shown as yen.
        let rows = serde_json::json!([
            {"取引先": "山田商事", "支払額": 550000, "請求金額（税込）": 605000, "件数": 2, "備考金額": "未定"},
            {"取引先": "東京事務機", "支払額": 88000, "請求金額（税込）": null, "件数": 1, "備考金額": 1}
        ]);
        let labels = labels_for(Some(&rows));
        let mut amounts: Vec<&str> = labels["amounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        amounts.sort();
        assert_eq!(amounts, ["支払額", "請求金額（税込）"]);
        assert!(!reads_as_amount("件数") && !reads_as_amount("金曜"));
        assert!(reads_as_amount("残高") && reads_as_amount("Amount (JPY)"));
    }

    #[test]
    fn labels_for_a_question_name_the_known_columns_codes_and_amounts() {
        let rows = serde_json::json!([
            {"vendor": "山田商事", "amount": 110000, "reason": "exact_duplicate", "自社コード": "A-1"},
            {"rule_id": "PO-01", "severity": "error", "row": {"po_no": "P-3", "amount": 180000}},
        ]);
        let labels = labels_for(Some(&rows));
        assert_eq!(
            labels["columns"]["vendor"],
            serde_json::json!({"ja": "取引先", "en": "Vendor"})
        );
        assert_eq!(labels["columns"]["po_no"]["ja"], "発注番号");
        assert!(labels["columns"].get("自社コード").is_none());
        assert_eq!(
            labels["values"]["reason"]["exact_duplicate"]["ja"],
            "同じ請求書（完全一致）"
        );
        assert_eq!(labels["values"]["severity"]["error"]["en"], "Error");
        assert_eq!(labels["amounts"], serde_json::json!(["amount"]));
        assert_eq!(
            labels_for(Some(&serde_json::json!([{"x": 1}]))),
            serde_json::Value::Null
        );
        // A user's own status column that happens to hold one code word is not relabelled.
        let own = serde_json::json!([{"status": "matched"}, {"status": "open"}]);
        assert!(labels_for(Some(&own))["values"].get("status").is_none());
        assert_eq!(
            labels_for(Some(&serde_json::json!({"a": 1}))),
            serde_json::Value::Null
        );
        assert_eq!(labels_for(None), serde_json::Value::Null);
    }

    #[test]
    fn every_column_and_code_is_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for (c, _, _) in COLUMNS {
            assert!(seen.insert(*c), "column {c} twice");
        }
        let mut seen = std::collections::HashSet::new();
        for (c, v, _) in VALUES {
            assert!(seen.insert((*c, *v)), "{c}={v} twice");
            assert!(
                column_label(c, Lang::Ja).is_some(),
                "{c} has codes but no header"
            );
        }
    }

    #[test]
    fn a_column_is_a_code_column_only_when_all_its_text_is_codes() {
        let v = |items: serde_json::Value| items.as_array().unwrap().clone();
        for (column, values, want) in [
            (
                "reason",
                v(serde_json::json!([
                    "exact_duplicate",
                    "similar_invoice_no",
                    "",
                    null
                ])),
                true,
            ),
            ("status", v(serde_json::json!(["matched", "open"])), false),
            ("status", v(serde_json::json!(["matched", 1])), false),
            ("reason", v(serde_json::json!(["", null])), false),
            ("vendor", v(serde_json::json!(["matched"])), false),
        ] {
            assert_eq!(is_code_column(column, &values), want, "{column} {values:?}");
        }
    }

    #[test]
    fn labels_are_per_column_and_unknown_values_have_none() {
        assert_eq!(
            value_label("reason", "similar_invoice_no", Lang::Ja),
            Some("請求書番号の打ち間違いの疑い")
        );
        assert_eq!(
            value_label("difference_reason", "none", Lang::En),
            Some("No difference")
        );
        assert_eq!(value_label("reason", "none", Lang::Ja), None);
        assert_eq!(
            value_label("reason", "起票者と承認者が同じです", Lang::Ja),
            None
        );
        assert!(is_amount("amount") && !is_amount("count"));
    }
}
