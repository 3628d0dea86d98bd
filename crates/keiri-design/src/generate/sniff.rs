//! Column proposals from the file's values (#33 item 3): a column question that no header
//! meaning answers (the dictionary of `keiri_plan::column_meaning`) is pre-selected with the
//! file's only column whose values are dates, for a date the template reads (請求日,
//! invoice_date, due_date…), or its only column of numbers, for an amount (金額, amount,
//! price…); for a number or code (請求番号, invoice_no) its only header that names one (番号,
//! No, コード, ID: no value type tells a code from a name); for a counterparty (vendor, 得意先)
//! its only header that names a party (…先, 社名, 会社, 業者; not an address, contact or
//! code). Only one such column makes a proposal: with two date columns the question stays
//! open, since an invoice date is not a due date. A proposal is a default the user sees and
//! may change, never an answer applied in silence; the question's description says why it
//! was chosen.

use keiri_plan::columns::normalize_column;
use keiri_plan::{AnswerUse, FileSchema, NO_COLUMN, Plan, Requirement};
use serde_json::Value;

/// The value type (`date` or `number`) a template's column `name` holds, from its words.
fn wanted_type(name: &str) -> Option<&'static str> {
    let n = normalize_column(name);
    let any = |words: &[&str]| words.iter().any(|w| n.contains(w));
    if any(&["date", "日付", "年月日", "期日"]) || n.ends_with('日') || n.ends_with("day") {
        Some("date")
    } else if any(&[
        "amount", "金額", "price", "total", "単価", "税込", "税抜", "残高", "balance",
    ]) || n.ends_with('額')
    {
        Some("number")
    } else if any(&["number", "番号", "code", "コード"]) || n.ends_with("no") || n.ends_with("id")
    {
        Some(CODE)
    } else if any(&[
        "vendor",
        "supplier",
        "customer",
        "payee",
        "counterparty",
        "client",
        "取引先",
        "得意先",
        "仕入先",
        "支払先",
        "相手先",
        "請求先",
    ]) {
        Some(PARTY)
    } else {
        None
    }
}

/// A number or code (請求番号, invoice_no, 取引先コード): no value type says it, so its header
/// does — the only header with 番号, No, コード, code, ID or CD in it.
const CODE: &str = "code";

/// A counterparty (vendor, customer): its header says so — the only one naming a party (…先,
/// 社名, 会社, 業者, name), never its address, contact or code.
const PARTY: &str = "party";

fn looks_like_party(header: &str) -> bool {
    let n = normalize_column(header);
    let party = ["先", "社名", "会社", "業者", "name"]
        .iter()
        .any(|w| n.contains(w));
    let detail = [
        "住所",
        "電話",
        "メール",
        "mail",
        "tel",
        "担当",
        "コード",
        "code",
        "番号",
        "cd",
    ]
    .iter()
    .any(|w| n.contains(w));
    party && !detail
}

fn looks_like_code(header: &str) -> bool {
    let n = normalize_column(header);
    // `no` and `id` only at the end (Invoice No., 伝票No, vendor_id): Notes and Paid-by are
    // not codes.
    ["番号", "コード", "code", "cd", "№"]
        .iter()
        .any(|w| n.contains(w))
        || ["no", "no.", "id"].iter().any(|w| n.ends_with(w))
}

/// Pre-selects the one column of the right value type for each column question of
/// `requirements` without a proposal from the header's meaning (or proposing to go without
/// the column). `asked` gives the plan's name of the column a question replaces.
pub(super) fn propose_by_values(
    plan: &Plan,
    requirements: &mut [Requirement],
    schemas: &[FileSchema],
    asked: impl Fn(&Plan, &Requirement) -> Option<String>,
) {
    for r in requirements.iter_mut() {
        if r.answer_use != AnswerUse::Column {
            continue;
        }
        if r.default
            .as_ref()
            .is_some_and(|d| d.as_str() != Some(NO_COLUMN))
        {
            continue;
        }
        let Some(wanted) = asked(plan, r) else {
            continue;
        };
        let Some(ty) = wanted_type(&wanted) else {
            continue;
        };
        let options: Vec<&str> = r.options.iter().filter_map(Value::as_str).collect();
        // The table the question's columns come from: every option (but the sentinels) is one
        // of its headers.
        let Some(table) = schemas.iter().flat_map(|f| &f.tables).find(|t| {
            let names = t.names();
            options
                .iter()
                .filter(|o| names.iter().any(|n| n == *o))
                .count()
                == names.len()
                && !names.is_empty()
        }) else {
            continue;
        };
        let of_type: Vec<&str> = table
            .columns
            .iter()
            .filter(|c| match ty {
                CODE => looks_like_code(&c.name),
                PARTY => looks_like_party(&c.name),
                ty => c.ty == ty,
            })
            .map(|c| c.name.as_str())
            .collect();
        let [column] = of_type.as_slice() else {
            continue;
        };
        r.default = Some(Value::from(*column));
        let (ja, en) = match ty {
            "date" => ("値が日付の列", "column of dates"),
            "number" => ("値が数値の列", "column of numbers"),
            CODE => (
                "番号・コードらしい見出しの列",
                "header that names a number or code",
            ),
            _ => ("取引先らしい見出しの列", "header that names a counterparty"),
        };
        r.description.push_str(&format!(
            "（{ja}は「{column}」だけなので、これを選んでおきました）"
        ));
        if let Some(d) = r.description_en.as_mut() {
            d.push_str(&format!(
                " ({column:?} is the file's only {en}, so it is proposed.)"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_columns_words_say_whether_it_holds_dates_or_amounts() {
        for date in ["invoice_date", "請求日", "due_date", "支払期日", "計上日"] {
            assert_eq!(wanted_type(date), Some("date"), "{date}");
        }
        for amount in ["amount", "請求金額", "unit_price", "税込額", "残高"] {
            assert_eq!(wanted_type(amount), Some("number"), "{amount}");
        }
        for code in ["invoice_no", "請求番号", "vendor_code", "取引先コード"] {
            assert_eq!(wanted_type(code), Some(CODE), "{code}");
        }
        assert!(
            looks_like_code("証憑番号")
                && looks_like_code("伝票No.")
                && looks_like_code("取引先CD")
        );
        assert!(!looks_like_code("相手先") && !looks_like_code("摘要"));
        assert!(looks_like_code("Invoice No") && looks_like_code("vendor_id"));
        assert!(!looks_like_code("Notes") && !looks_like_code("Paid by"));
        for party in ["vendor", "customer", "取引先", "得意先名"] {
            assert_eq!(wanted_type(party), Some(PARTY), "{party}");
        }
        assert!(
            looks_like_party("相手先")
                && looks_like_party("仕入先名")
                && looks_like_party("会社名")
        );
        assert!(
            !looks_like_party("相手先コード")
                && !looks_like_party("送付先住所")
                && !looks_like_party("摘要")
        );
        for other in ["摘要", "description", "勘定科目"] {
            assert_eq!(wanted_type(other), None, "{other}");
        }
    }
}
