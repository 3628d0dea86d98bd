//! Accounting column names by meaning: the names Japanese accounting exports and our templates
//! give the same column (取引先 / 取引先名 / 仕入先 / vendor, 請求日 / 請求日付 / invoice_date,
//! 金額 / 請求金額（税込）/ amount, …), so a template's column can be matched to the file's
//! header that means the same, not only to one written the same.
//!
//! The groups are narrow on purpose: a name is in one group only, and a group holds names for
//! one column, never for a wider or narrower one (the invoice date is not the posting date, the
//! net amount is not the amount including tax). A wrong match would read the wrong column
//! silently; a missing one only asks a question.

use crate::columns::normalize_column;

/// Names of one column, compared after [`normalize_column`] (NFKC, lowercase, no spaces, `_`
/// or `-`).
const GROUPS: &[&[&str]] = &[
    // The counterparty that sent the invoice or is paid.
    &[
        "vendor",
        "vendor_name",
        "supplier",
        "supplier_name",
        "payee",
        "取引先",
        "取引先名",
        "仕入先",
        "仕入先名",
        "支払先",
        "支払先名",
        "請求元",
        "請求元名",
        "業者名",
    ],
    // A vendor's code in the vendor master (never its name).
    &[
        "vendor_code",
        "vendor_id",
        "取引先コード",
        "取引先cd",
        "取引先番号",
        "仕入先コード",
        "仕入先cd",
        "仕入先番号",
        "支払先コード",
    ],
    // The customer that is billed or pays in.
    &[
        "customer",
        "customer_name",
        "得意先",
        "得意先名",
        "顧客",
        "顧客名",
        "請求先",
        "請求先名",
    ],
    &[
        "invoice_date",
        "請求日",
        "請求日付",
        "請求書日付",
        "請求年月日",
        "発行日",
        "issue_date",
    ],
    &[
        "invoice_no",
        "invoice_number",
        "請求番号",
        "請求書番号",
        "請求書no",
        "請求no",
        "請求書no.",
        "請求書ナンバー",
    ],
    // An invoice's or payment's amount, tax included, as invoice lists give it.
    &[
        "amount",
        "金額",
        "請求金額",
        "請求額",
        "税込金額",
        "金額(税込)",
        "請求金額(税込)",
        "税込請求金額",
        "支払金額",
        "支払額",
        "支払予定額",
        "振込金額",
        "振込額",
    ],
    // A payee's bank account, as transfer lists and vendor masters name its parts.
    &[
        "bank_code",
        "銀行コード",
        "銀行番号",
        "金融機関コード",
        "金融機関番号",
        "振込先銀行コード",
    ],
    &[
        "branch_code",
        "支店コード",
        "支店番号",
        "店番",
        "振込先支店コード",
    ],
    &[
        "account_type",
        "預金種目",
        "預金種別",
        "口座種別",
        "口座種目",
    ],
    &["account_no", "account_number", "口座番号", "振込先口座番号"],
    &[
        "payee_kana",
        "口座名義",
        "口座名義カナ",
        "口座名義人",
        "名義カナ",
        "受取人名",
        "受取人名カナ",
        "振込先名カナ",
    ],
    &[
        "approval_status",
        "承認状況",
        "承認状態",
        "承認区分",
        "承認",
    ],
    &["voucher_no", "伝票番号", "伝票no", "伝票no.", "仕訳番号"],
    &["description", "摘要", "内容", "明細", "備考", "memo"],
    // A qualified invoice's figures: the supplier's registration number, the rate, and the
    // net and tax of that rate.
    &[
        "registration_no",
        "登録番号",
        "適格請求書発行事業者登録番号",
        "インボイス登録番号",
        "t番号",
    ],
    &["tax_rate", "税率", "消費税率"],
    &["net_amount", "税抜金額", "税抜額", "本体価格", "本体金額"],
    &["tax_amount", "消費税額", "消費税", "税額"],
    // A journal line's date (the posting date; never an invoice's, see below).
    &[
        "date",
        "日付",
        "取引日",
        "取引日付",
        "伝票日付",
        "計上日",
        "仕訳日",
    ],
    &["debit_account", "借方勘定科目", "借方科目"],
    &["credit_account", "貸方勘定科目", "貸方科目"],
    &["debit_amount", "借方金額"],
    &["credit_amount", "貸方金額"],
    &[
        "employee_no",
        "社員番号",
        "従業員番号",
        "社員コード",
        "従業員コード",
    ],
    &["employee_name", "氏名", "社員名", "従業員名"],
    &["gross_pay", "総支給額", "支給合計", "総支給金額"],
    &["po_no", "発注番号", "注文番号", "発注書番号", "発注no"],
    &["quantity", "数量"],
    &["unit_price", "単価"],
    // The day an invoice is due: paid by us (支払期日) or to us (入金期日, 回収期日).
    &[
        "due_date",
        "支払期日",
        "支払期限",
        "期日",
        "入金期日",
        "入金期限",
        "回収期日",
        "回収予定日",
        "入金予定日",
    ],
    // What is still open on an invoice, after partial payments (never the invoice's amount).
    &[
        "open_amount",
        "未収残高",
        "未収金額",
        "未収額",
        "請求残高",
        "未回収残高",
        "未回収額",
        "未入金額",
        "未入金残高",
        "売掛残高",
        "売掛金残高",
    ],
    // A purchase order's dates, people and quotes. The delivery date is the one agreed (納期),
    // not the day the goods came (納品日).
    &[
        "order_date",
        "発注日",
        "発注日付",
        "発注年月日",
        "注文日",
        "注文日付",
    ],
    &["delivery_date", "納期", "納期日", "納入期日", "納入期限"],
    &["requester", "発注者", "発注依頼者", "依頼者", "申請者"],
    &["approver", "承認者", "承認者名", "決裁者"],
    &[
        "quote_count",
        "見積件数",
        "見積数",
        "相見積件数",
        "相見積数",
    ],
];

/// The group `name` belongs to, if any.
fn group_of(name: &str) -> Option<&'static [&'static str]> {
    let norm = normalize_column(name);
    GROUPS
        .iter()
        .copied()
        .find(|g| g.iter().any(|n| normalize_column(n) == norm))
}

/// The columns of `columns` that mean the same as `wanted`, in the order of `columns`; empty
/// when `wanted` is in no group.
pub fn same_meaning<'c>(wanted: &str, columns: &'c [String]) -> Vec<&'c String> {
    let Some(group) = group_of(wanted) else {
        return Vec::new();
    };
    let names: Vec<String> = group.iter().map(|n| normalize_column(n)).collect();
    columns
        .iter()
        .filter(|c| names.contains(&normalize_column(c)))
        .collect()
}

/// `wanted` said in both languages, for comparing it by meaning with headers the groups do
/// not hold: its group's first English name (`_` read as a space) and first Japanese one
/// (`customer 得意先`, `invoice date 請求日`); `wanted` alone, `_` read as a space, when it
/// is in no group. A bilingual text is what lets a multilingual model place a short header
/// such as お客様名 near `customer`.
pub fn gloss(wanted: &str) -> String {
    let spaced = |name: &str| name.replace('_', " ");
    let Some(group) = group_of(wanted) else {
        return spaced(wanted);
    };
    let english = group.iter().find(|n| n.is_ascii()).copied();
    let japanese = group.iter().find(|n| !n.is_ascii()).copied();
    [english, japanese]
        .into_iter()
        .flatten()
        .map(spaced)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_is_glossed_in_both_languages() {
        assert_eq!(gloss("customer_name"), "customer 得意先");
        assert_eq!(gloss("請求日"), "invoice date 請求日");
        assert_eq!(gloss("gross_pay"), "gross pay 総支給額");
        assert_eq!(gloss("bonus_amount"), "bonus amount");
    }

    fn headers(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn a_template_column_finds_the_header_that_means_the_same() {
        let file = headers(&[
            "請求番号",
            "取引先名",
            "請求日付",
            "請求金額（税込）",
            "摘要",
        ]);
        assert_eq!(same_meaning("vendor", &file), ["取引先名"]);
        assert_eq!(same_meaning("invoice_date", &file), ["請求日付"]);
        // Full-width brackets are the same after NFKC.
        assert_eq!(same_meaning("amount", &file), ["請求金額（税込）"]);
        assert_eq!(same_meaning("invoice_no", &file), ["請求番号"]);
        assert_eq!(same_meaning("description", &file), ["摘要"]);
    }

    #[test]
    fn nothing_is_proposed_for_another_column_or_an_unknown_name() {
        let file = headers(&["取引日付", "借方金額", "得意先名"]);
        // The posting date is not the invoice date; a debit amount is not an invoice amount;
        // a customer is not a vendor.
        assert!(same_meaning("invoice_date", &file).is_empty());
        assert!(same_meaning("amount", &file).is_empty());
        assert!(same_meaning("vendor", &file).is_empty());
        assert!(same_meaning("frobnicate", &file).is_empty());
        // A journal's 取引日付 is its posting date.
        assert_eq!(same_meaning("date", &file), ["取引日付"]);
    }

    #[test]
    fn two_headers_of_one_meaning_are_both_returned() {
        let file = headers(&["取引先", "仕入先名", "金額"]);
        assert_eq!(same_meaning("vendor", &file), ["取引先", "仕入先名"]);
    }

    #[test]
    fn every_name_is_in_one_group_only() {
        let mut seen = std::collections::HashMap::new();
        for (i, g) in GROUPS.iter().enumerate() {
            for n in *g {
                if let Some(j) = seen.insert(normalize_column(n), i) {
                    assert_eq!(j, i, "{n} is in two groups");
                }
            }
        }
    }
}
