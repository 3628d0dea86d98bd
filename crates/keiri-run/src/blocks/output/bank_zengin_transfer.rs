//! `bank.zengin_transfer`: its inputs and outputs are in
//! `block_specs/output/bank.zengin_transfer.yaml`.
//!
//! The 全銀協 fixed-length format for a 総合振込 (bulk credit transfer) file, as Japanese
//! banks' internet banking takes it: 120-byte records in JIS X 0201 (ASCII and half-width
//! kana, the bytes Shift_JIS gives them) — one header (1), a data record per payment (2), the
//! trailer (8, count and total) and the end record (9).
//!
//! Nothing is guessed: a payment whose bank code, branch, account type or number, name or
//! amount the format cannot carry fails the block with every such row named, and no file is
//! written. Names are converted the way banks do (full-width katakana and hiragana to
//! half-width, small kana to large, letters to capitals, voiced kana as two bytes); a name
//! longer than the field is cut to it, with a warning naming the rows.

use super::{on_conflict, out_file, path_text};
use crate::block::{BlockContext, BlockError, Inputs, Outputs, Warning};
use crate::blocks::kit::outputs::{DEFAULT_OUT_DIR, save, target_dir};
use crate::blocks::kit::text::text;
use crate::jp::{NegativeMarkers, parse_amount, parse_date};
use crate::value::Row;
use serde_json::json;
use unicode_normalization::UnicodeNormalization;

/// The field widths of a data record the payments fill.
const NAME_BYTES: usize = 30;
const AMOUNT_DIGITS: usize = 10;

fn zengin_transfer(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let rows = inputs.rows("rows")?;
    if rows.is_empty() {
        return Err(BlockError::input_invalid(
            "rows",
            "振込データが1件もありません（0件の振込ファイルは作りません）",
            "there are no payments (a transfer file with none is not written)",
        ));
    }
    let header = header_record(inputs)?;
    let field = |key: &str, default: &str| -> Result<String, BlockError> {
        Ok(inputs.str(key)?.unwrap_or(default).to_string())
    };
    let fields = Fields {
        bank_code: field("bank_code_field", "bank_code")?,
        branch_code: field("branch_code_field", "branch_code")?,
        account_type: field("account_type_field", "account_type")?,
        account_no: field("account_no_field", "account_no")?,
        payee_kana: field("payee_kana_field", "payee_kana")?,
        amount: field("amount_field", "amount")?,
        // Empty: the plan's answer that the file has no such column.
        customer_code: inputs
            .str("customer_code_field")?
            .filter(|c| !c.trim().is_empty())
            .map(str::to_string),
    };
    crate::value::require_columns(
        &rows,
        fields
            .required()
            .into_iter()
            .chain(fields.customer_code.as_deref()),
    )?;
    let mut records = vec![header];
    let (mut problems, mut cut) = (Vec::new(), Vec::new());
    let mut total: u64 = 0;
    for (i, row) in rows.iter().enumerate() {
        match data_record(row, &fields) {
            Ok((record, amount, was_cut)) => {
                total += amount;
                if was_cut {
                    cut.push(i + 1);
                }
                records.push(record);
            }
            Err((ja, en)) => problems.push((i + 1, ja, en)),
        }
    }
    if !problems.is_empty() {
        let list = |pick: fn(&(usize, String, String)) -> String| {
            problems
                .iter()
                .take(20)
                .map(pick)
                .collect::<Vec<_>>()
                .join("; ")
        };
        return Err(BlockError::input_invalid(
            "rows",
            &format!(
                "{} 件の振込を全銀フォーマットにできません（ファイルは作っていません）: {}",
                problems.len(),
                list(|(n, ja, _)| format!("{n} 行目 {ja}"))
            ),
            &format!(
                "{} payments cannot be written in the Zengin format (no file was written): {}",
                problems.len(),
                list(|(n, _, en)| format!("row {n}: {en}"))
            ),
        ));
    }
    let count = rows.len();
    if total > 999_999_999_999 || count > 999_999 {
        return Err(BlockError::input_invalid(
            "rows",
            "合計件数（6桁）か合計金額（12桁）が全銀フォーマットの桁を超えます",
            "the count (6 digits) or the total (12 digits) is too large for the format",
        ));
    }
    records.push(format!("8{count:06}{total:012}{}", " ".repeat(101)));
    records.push(format!("9{}", " ".repeat(119)));
    let separator = match inputs.str("line_break")?.unwrap_or("crlf") {
        "crlf" => "\r\n",
        "none" => "",
        _ => {
            return Err(BlockError::input_invalid(
                "line_break",
                "crlf か none です",
                "expected crlf or none",
            ));
        }
    };
    let mut bytes = Vec::with_capacity(records.len() * 122);
    for record in &records {
        bytes.extend(record.chars().filter_map(jis_byte));
        bytes.extend_from_slice(separator.as_bytes());
    }
    if !cut.is_empty() {
        let rows = cut
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        ctx.calls.warn(Warning::new(
            "VALUE_TRUNCATED",
            format!("受取人名が {NAME_BYTES} 桁を超えるため切りました（{rows} 行目）。銀行の口座名義と照合されるのは先頭 {NAME_BYTES} 桁です"),
            format!("payee names over {NAME_BYTES} characters were cut (rows {rows}); banks check the first {NAME_BYTES} against the account holder"),
        ));
    }
    let dir = target_dir(ctx, inputs, Some(DEFAULT_OUT_DIR))?;
    let name = out_file(ctx, inputs, &dir, "sogofurikomi.txt")?;
    let saved = save(&dir, &name, &bytes, on_conflict(inputs)?)?;
    if saved.is_none() {
        ctx.calls.warn(Warning::new(
            "NOT_WRITTEN",
            format!("{name} は既にあり on_conflict が skip のため書きませんでした"),
            format!("{name} exists and on_conflict is skip; nothing was written"),
        ));
    }
    Ok(Outputs::new()
        .with("out_path", path_text(&saved))
        .with("payment_count", json!(count))
        .with("total_amount", json!(total)))
}

builtin!("bank.zengin_transfer", zengin_transfer);

/// The payment columns the block reads.
struct Fields {
    bank_code: String,
    branch_code: String,
    account_type: String,
    account_no: String,
    payee_kana: String,
    amount: String,
    customer_code: Option<String>,
}

impl Fields {
    fn required(&self) -> [&str; 6] {
        [
            &self.bank_code,
            &self.branch_code,
            &self.account_type,
            &self.account_no,
            &self.payee_kana,
            &self.amount,
        ]
    }
}

type Problem = (String, String);

/// The header record (1): the company's code, name, the transfer date and its own account.
fn header_record(inputs: &Inputs) -> Result<String, BlockError> {
    let required = |key: &str| -> Result<String, BlockError> {
        match inputs.str(key)?.map(str::trim) {
            Some(v) if !v.is_empty() => Ok(v.to_string()),
            _ => Err(BlockError::input_invalid(
                key,
                "指定してください",
                "required",
            )),
        }
    };
    let checked = |key: &str, value: Result<String, Problem>| -> Result<String, BlockError> {
        value.map_err(|(ja, en)| BlockError::input_invalid(key, &ja, &en))
    };
    let company_code = checked(
        "company_code",
        digits(
            &required("company_code")?,
            10,
            "委託者コード",
            "company code",
        ),
    )?;
    let company_name = checked(
        "company_name_kana",
        kana_field(&required("company_name_kana")?, 40, false).map(|(f, _)| f),
    )?;
    let date = required("transfer_date")?;
    let date = parse_date(&date).ok_or_else(|| {
        BlockError::input_invalid(
            "transfer_date",
            "日付（例 2025-04-25）です",
            "expected a date such as 2025-04-25",
        )
    })?;
    let bank = checked(
        "bank_code",
        digits(&required("bank_code")?, 4, "仕向銀行番号", "bank code"),
    )?;
    let bank_name = optional_kana(inputs, "bank_name_kana", 15)?;
    let branch = checked(
        "branch_code",
        digits(&required("branch_code")?, 3, "仕向支店番号", "branch code"),
    )?;
    let branch_name = optional_kana(inputs, "branch_name_kana", 15)?;
    let account_type = checked("account_type", account_type(&required("account_type")?))?;
    let account_no = checked(
        "account_no",
        digits(&required("account_no")?, 7, "口座番号", "account number"),
    )?;
    Ok(format!(
        "1210{company_code}{company_name}{}{bank}{bank_name}{branch}{branch_name}{account_type}{account_no}{}",
        date.format("%m%d"),
        " ".repeat(17)
    ))
}

fn optional_kana(inputs: &Inputs, key: &str, width: usize) -> Result<String, BlockError> {
    match inputs.str(key)?.map(str::trim) {
        Some(v) if !v.is_empty() => kana_field(v, width, false)
            .map(|(f, _)| f)
            .map_err(|(ja, en)| BlockError::input_invalid(key, &ja, &en)),
        _ => Ok(" ".repeat(width)),
    }
}

/// A data record (2) for one payment, its amount, and whether the name was cut.
fn data_record(row: &Row, f: &Fields) -> Result<(String, u64, bool), Problem> {
    let cell = |column: &str| text(row.get(column)).trim().to_string();
    let bank = digits(&cell(&f.bank_code), 4, "銀行番号", "bank code")?;
    let branch = digits(&cell(&f.branch_code), 3, "支店番号", "branch code")?;
    let kind = account_type(&cell(&f.account_type))?;
    let account = digits(&cell(&f.account_no), 7, "口座番号", "account number")?;
    let (name, was_cut) = kana_field(&cell(&f.payee_kana), NAME_BYTES, true)?;
    let amount = amount(row.get(&f.amount))?;
    let customer = match &f.customer_code {
        Some(column) => {
            let code = cell(column);
            if code.len() > 20 || !code.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err((
                    format!("顧客コード「{code}」は20桁以内の英数字です"),
                    format!("customer code {code:?} must be up to 20 letters or digits"),
                ));
            }
            format!("{code:<20}")
        }
        None => " ".repeat(20),
    };
    let record = format!(
        "2{bank}{}{branch}{}{}{kind}{account}{name}{amount:0width$}0{customer}7 {}",
        " ".repeat(15),
        " ".repeat(15),
        " ".repeat(4),
        " ".repeat(7),
        width = AMOUNT_DIGITS
    );
    Ok((record, amount, was_cut))
}

/// A code of `width` digits: a shorter one is padded with zeros on the left (a spreadsheet
/// drops them: 5 for 0005), anything else is a problem.
fn digits(value: &str, width: usize, ja: &str, en: &str) -> Result<String, Problem> {
    let value = value.trim();
    let value = value.strip_suffix(".0").unwrap_or(value);
    if value.is_empty() || value.len() > width || !value.chars().all(|c| c.is_ascii_digit()) {
        return Err((
            format!("{ja}「{value}」は{width}桁以内の数字です"),
            format!("{en} {value:?} must be up to {width} digits"),
        ));
    }
    Ok(format!("{value:0>width$}"))
}

/// 預金種目: 1 普通, 2 当座, 4 貯蓄, 9 その他.
fn account_type(value: &str) -> Result<String, Problem> {
    let code = match value.trim() {
        "1" | "普通" | "普通預金" | "総合" => "1",
        "2" | "当座" | "当座預金" => "2",
        "4" | "貯蓄" | "貯蓄預金" => "4",
        "9" | "その他" => "9",
        other => {
            return Err((
                format!("預金種目「{other}」は 普通・当座・貯蓄・その他（1・2・4・9）のどれかです"),
                format!("account type {other:?} must be 普通, 当座, 貯蓄 or その他 (1, 2, 4, 9)"),
            ));
        }
    };
    Ok(code.to_string())
}

/// A whole number of yen from 1 to 10 digits.
fn amount(value: Option<&serde_json::Value>) -> Result<u64, Problem> {
    let shown = text(value);
    let number = match value {
        Some(serde_json::Value::Number(n)) => n.as_f64(),
        _ => parse_amount(&shown, &NegativeMarkers::default())
            .ok()
            .flatten(),
    };
    match number {
        Some(x) if x >= 1.0 && x.fract() == 0.0 && x < 10f64.powi(AMOUNT_DIGITS as i32) => {
            Ok(x as u64)
        }
        _ => Err((
            format!("振込金額「{shown}」は1円以上の整数（10桁以内）です"),
            format!("amount {shown:?} must be a whole number of yen from 1 (up to 10 digits)"),
        )),
    }
}

/// A kana field of `width` bytes, left-aligned and padded with spaces, and whether the name
/// was longer (cut only where `cut` allows it; a problem otherwise).
fn kana_field(value: &str, width: usize, cut: bool) -> Result<(String, bool), Problem> {
    let mut out = String::new();
    for c in value.trim().chars() {
        let Some(converted) = half_width(c) else {
            return Err((
                format!(
                    "「{value}」の「{c}」は全銀フォーマットで使えない文字です（カナ・英数字・空白と ( ) - . / , が使えます）"
                ),
                format!(
                    "{c:?} in {value:?} cannot be written in the Zengin format (kana, letters, digits, spaces and ( ) - . / , only)"
                ),
            ));
        };
        out.push_str(&converted);
    }
    if out.is_empty() {
        return Err(("名前が空です".into(), "the name is empty".into()));
    }
    let chars = out.chars().count();
    if chars > width && !cut {
        return Err((
            format!("「{value}」は {width} 桁を超えます"),
            format!("{value:?} is longer than {width} characters"),
        ));
    }
    let kept: String = out.chars().take(width).collect();
    let pad = width - kept.chars().count();
    Ok((format!("{kept}{}", " ".repeat(pad)), chars > width))
}

/// One character as the format writes it (one or two half-width characters), or `None` when
/// the format has no such character.
fn half_width(c: char) -> Option<String> {
    const SYMBOLS: &str = "()-./, ";
    match c {
        '0'..='9' | 'A'..='Z' => Some(c.to_string()),
        'a'..='z' => Some(c.to_ascii_uppercase().to_string()),
        _ if SYMBOLS.contains(c) => Some(c.to_string()),
        // Full-width forms of the ASCII above, and the ideographic space.
        '\u{FF01}'..='\u{FF5E}' => half_width(char::from_u32(c as u32 - 0xFEE0)?),
        '\u{3000}' => Some(" ".into()),
        // The format has no long-vowel mark: banks write it as a hyphen.
        'ー' | 'ｰ' | '‐' | '−' => Some("-".into()),
        // Half-width kana: small ones as large, the rest as they are.
        '\u{FF67}'..='\u{FF6F}' => Some(large_half(c).to_string()),
        '\u{FF70}'..='\u{FF9F}' | '\u{FF66}' => Some(c.to_string()),
        // Hiragana as katakana, then katakana as half-width.
        '\u{3041}'..='\u{3096}' => half_width(char::from_u32(c as u32 + 0x60)?),
        '\u{30A1}'..='\u{30FA}' => katakana_half(c),
        _ => None,
    }
}

/// Half-width small kana as their large forms.
fn large_half(c: char) -> char {
    match c {
        'ｧ' => 'ｱ',
        'ｨ' => 'ｲ',
        'ｩ' => 'ｳ',
        'ｪ' => 'ｴ',
        'ｫ' => 'ｵ',
        'ｬ' => 'ﾔ',
        'ｭ' => 'ﾕ',
        'ｮ' => 'ﾖ',
        _ => 'ﾂ',
    }
}

/// Full-width katakana as half-width: a voiced one as its base and ﾞ or ﾟ (its canonical
/// decomposition), a small one as large; ヮ ヰ ヱ ヵ ヶ, which have no half-width form, as the
/// kana banks write for them.
fn katakana_half(c: char) -> Option<String> {
    match c {
        'ヮ' => return Some("ﾜ".into()),
        'ヰ' => return Some("ｲ".into()),
        'ヱ' => return Some("ｴ".into()),
        'ヵ' => return Some("ｶ".into()),
        'ヶ' => return Some("ｹ".into()),
        _ => {}
    }
    let mut out = String::new();
    for part in c.to_string().nfd() {
        match part {
            '\u{3099}' => out.push('ﾞ'),
            '\u{309A}' => out.push('ﾟ'),
            base => {
                let half = *HALF_KANA.get(&base)?;
                out.push(if ('\u{FF67}'..='\u{FF6F}').contains(&half) {
                    large_half(half)
                } else {
                    half
                });
            }
        }
    }
    Some(out)
}

/// Each full-width katakana that has a half-width form, to that form (ｦ to ﾝ and the small
/// ones), read off NFKC, which maps the half-width forms to the full-width ones.
static HALF_KANA: std::sync::LazyLock<std::collections::HashMap<char, char>> =
    std::sync::LazyLock::new(|| {
        ('\u{FF66}'..='\u{FF9D}')
            .filter_map(|half| {
                let full: Vec<char> = half.to_string().nfkc().collect();
                matches!(full.as_slice(), [_]).then(|| (full[0], half))
            })
            .collect()
    });

/// The JIS X 0201 byte of a character [`half_width`] gave (ASCII and half-width kana).
fn jis_byte(c: char) -> Option<u8> {
    match c as u32 {
        cp @ 0x20..=0x7E => Some(cp as u8),
        cp @ 0xFF61..=0xFF9F => Some((cp - 0xFF61 + 0xA1) as u8),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str) -> String {
        kana_field(name, 30, true).unwrap().0.trim_end().to_string()
    }

    #[test]
    fn names_are_written_as_banks_take_them() {
        assert_eq!(field("ヤマダショウジ(カ"), "ﾔﾏﾀﾞｼﾖｳｼﾞ(ｶ");
        assert_eq!(field("ｶ)ﾔﾏﾀﾞｼｮｳｼﾞ"), "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ");
        assert_eq!(field("すずき　ぱん"), "ｽｽﾞｷ ﾊﾟﾝ");
        assert_eq!(field("ヴィーナス"), "ｳﾞｲ-ﾅｽ");
        assert_eq!(field("ＡＢＣｼｽﾃﾑ"), "ABCｼｽﾃﾑ");
        assert_eq!(field("abc-1"), "ABC-1");
        assert_eq!(field("ヲン"), "ｦﾝ");
        assert!(kana_field("山田商事", 30, true).is_err());
        // Cut to the field, and said.
        let (long, cut) = kana_field(&"ア".repeat(31), 30, true).unwrap();
        assert_eq!((long.chars().count(), cut), (30, true));
        assert!(kana_field(&"ア".repeat(41), 40, false).is_err());
    }

    #[test]
    fn every_katakana_has_its_half_width_form() {
        for (full, half) in [
            ("ァ", "ｱ"),
            ("ガ", "ｶﾞ"),
            ("ッ", "ﾂ"),
            ("ヂ", "ﾁﾞ"),
            ("ヅ", "ﾂﾞ"),
            ("ド", "ﾄﾞ"),
            ("パ", "ﾊﾟ"),
            ("ボ", "ﾎﾞ"),
            ("ポ", "ﾎﾟ"),
            ("マ", "ﾏ"),
            ("ャ", "ﾔ"),
            ("ヮ", "ﾜ"),
            ("ワ", "ﾜ"),
            ("ヰ", "ｲ"),
            ("ヱ", "ｴ"),
            ("ヲ", "ｦ"),
            ("ン", "ﾝ"),
            ("ヴ", "ｳﾞ"),
            ("ヵ", "ｶ"),
            ("ヶ", "ｹ"),
        ] {
            let c = full.chars().next().unwrap();
            assert_eq!(katakana_half(c).as_deref(), Some(half), "{full}");
        }
        // Every katakana letter converts to bytes of the format.
        for cp in 0x30A1..=0x30F6 {
            let c = char::from_u32(cp).unwrap();
            let half = katakana_half(c).unwrap_or_else(|| panic!("{c}"));
            assert!(half.chars().all(|h| jis_byte(h).is_some()), "{c}");
        }
    }

    #[test]
    fn codes_are_padded_and_checked() {
        assert_eq!(digits("5", 4, "", "").unwrap(), "0005");
        assert_eq!(digits("123.0", 3, "", "").unwrap(), "123");
        assert!(digits("12345", 4, "", "").is_err());
        assert!(digits("12-3", 4, "", "").is_err());
        assert_eq!(account_type("当座").unwrap(), "2");
        assert!(account_type("定期").is_err());
        assert_eq!(amount(Some(&json!("1,234,000"))).unwrap(), 1_234_000);
        assert!(amount(Some(&json!(0))).is_err());
        assert!(amount(Some(&json!(10.5))).is_err());
        assert!(amount(Some(&json!("△500"))).is_err());
    }
}
