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
//! was chosen. What neither the dictionary nor the values settle, the local embedding model
//! may: the header nearest in meaning to the template's column, when it stands clear of the
//! others ([`propose_by_meaning`]).

use keiri_plan::column_meaning::gloss;
use keiri_plan::columns::TableSchema;
use keiri_plan::columns::normalize_column;
use keiri_plan::{AnswerUse, FileSchema, NO_COLUMN, Plan, Requirement};
use keiri_search::{EmbedKind, Embedder};
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

/// The table a column question's columns come from: every option (but the sentinels) is one
/// of its headers.
fn question_table<'s>(r: &Requirement, schemas: &'s [FileSchema]) -> Option<&'s TableSchema> {
    let options: Vec<&str> = r.options.iter().filter_map(Value::as_str).collect();
    schemas.iter().flat_map(|f| &f.tables).find(|t| {
        let names = t.names();
        options
            .iter()
            .filter(|o| names.iter().any(|n| n == *o))
            .count()
            == names.len()
            && !names.is_empty()
    })
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
        let Some(table) = question_table(r, schemas) else {
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

/// A header the model places nearest to the template's column is proposed only at this cosine
/// or above, and only this far ahead of the next candidate. Measured with multilingual-e5-small
/// on short accounting headers, the column glossed in both languages: right answers stood
/// 0.02–0.08 ahead (お客様名 for `customer`, お支払先 for `vendor`, 支給額合計 for `gross_pay`,
/// 従業員コード for `employee_id`), while the wrong firsts it gave were within 0.015 of the
/// runner-up (担当者 over 会社名 for `customer`; 支払予定日 over 受付日 for `invoice_date`, a due
/// date for an invoice date). Nearer than that, the question stays open.
const MIN_SIMILARITY: f32 = 0.87;
const MIN_MARGIN: f32 = 0.02;

/// Whether a column whose values are of type `column` may hold what a template column of
/// [`wanted_type`] `wanted` holds: dates and amounts by their values, a code in anything but
/// dates (codes are often numbers), anything else — a party, a description, a person — in text.
fn may_hold(wanted: Option<&str>, column: &str) -> bool {
    match wanted {
        Some("date") => column == "date",
        Some("number") => column == "number",
        Some(CODE) => column == "text" || column == "number",
        _ => column == "text",
    }
}

/// Pre-selects, for each column question still without a proposal, the header the local
/// embedding model places nearest in meaning to the template's column ([`gloss`]: `customer
/// 得意先` for お客様名), among the headers whose values may hold it ([`may_hold`]), when it
/// stands clear of the next ([`MIN_SIMILARITY`], [`MIN_MARGIN`]). The dictionary and the
/// values go first ([`propose_by_values`]); a proposal to go without the column is kept (reading
/// a wrong column is worse than reading none). With one candidate, or a model that fails,
/// nothing is proposed. The question's description says which header came next and how near.
pub(super) fn propose_by_meaning(
    plan: &Plan,
    requirements: &mut [Requirement],
    schemas: &[FileSchema],
    asked: impl Fn(&Plan, &Requirement) -> Option<String>,
    embedder: &dyn Embedder,
) {
    for r in requirements.iter_mut() {
        if r.answer_use != AnswerUse::Column || r.default.is_some() {
            continue;
        }
        let (Some(wanted), Some(table)) = (asked(plan, r), question_table(r, schemas)) else {
            continue;
        };
        let ty = wanted_type(&wanted);
        let candidates: Vec<&str> = table
            .columns
            .iter()
            .filter(|c| may_hold(ty, &c.ty))
            .map(|c| c.name.as_str())
            .collect();
        if candidates.len() < 2 {
            continue;
        }
        let texts: Vec<String> = std::iter::once(gloss(&wanted))
            .chain(candidates.iter().map(|c| c.to_string()))
            .collect();
        // Both sides are short labels compared with each other: e5's `query:` prefix on both.
        let Ok(vectors) = embedder.embed(&texts, EmbedKind::Query) else {
            continue;
        };
        let Some((column_vector, header_vectors)) = vectors.split_first() else {
            continue;
        };
        let mut scored: Vec<(f32, &str)> = header_vectors
            .iter()
            .map(|v| keiri_search::embed::cosine(column_vector, v))
            .zip(candidates.iter().copied())
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let [(best, column), (next, runner_up), ..] = scored.as_slice() else {
            continue;
        };
        if *best < MIN_SIMILARITY || best - next < MIN_MARGIN {
            continue;
        }
        r.default = Some(Value::from(*column));
        r.description.push_str(&format!(
            "（見出しの意味が「{wanted}」に最も近い列として「{column}」を選んでおきました。類似度 {best:.2}、次は「{runner_up}」{next:.2}）"
        ));
        if let Some(d) = r.description_en.as_mut() {
            d.push_str(&format!(
                " ({column:?} is proposed as the header nearest in meaning to {wanted:?}: similarity {best:.2}, next {runner_up:?} at {next:.2}.)"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_is_compared_by_meaning_only_with_headers_whose_values_may_hold_it() {
        assert!(may_hold(Some("date"), "date") && !may_hold(Some("date"), "text"));
        assert!(may_hold(Some("number"), "number") && !may_hold(Some("number"), "text"));
        assert!(may_hold(Some(CODE), "number") && may_hold(Some(CODE), "text"));
        assert!(!may_hold(Some(CODE), "date") && !may_hold(Some(CODE), "empty"));
        assert!(may_hold(Some(PARTY), "text") && !may_hold(Some(PARTY), "number"));
        assert!(may_hold(None, "text") && !may_hold(None, "date"));
    }

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
