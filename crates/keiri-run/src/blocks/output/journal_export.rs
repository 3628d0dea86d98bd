//! `journal.export`: its inputs and outputs are in `block_specs/output/journal.export.yaml`.

use super::{
    DEFAULT_OUT_DIR, counted, csv_encoding, csv_text, encode, on_conflict, out_file, path_text,
    save, target_dir, text, warn_lines, warn_replaced,
};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::jp::parse_date;
use crate::value::Row;
use serde_json::{Value as Json, json};
use unicode_width::UnicodeWidthStr;

/// Yayoi's 摘要 holds 64 bytes (32 full-width characters).
const YAYOI_DESCRIPTION_WIDTH: usize = 64;

fn journal_export(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let entries = inputs.rows("entries")?;
    let format = inputs.str("format")?.unwrap_or("generic").to_string();
    let mapping = match inputs.json("field_mapping") {
        Some(Json::Object(m)) => m,
        None => serde_json::Map::new(),
        Some(_) => {
            return Err(BlockError::input_invalid(
                "field_mapping",
                "オブジェクトが必要です",
                "expected an object",
            ));
        }
    };
    let default_encoding = match format.as_str() {
        "yayoi" => "cp932",
        "generic" | "freee" | "moneyforward" => "utf-8-sig",
        _ => {
            return Err(BlockError::input_invalid(
                "format",
                "generic・yayoi・freee・moneyforward のどれかです",
                "expected generic, yayoi, freee or moneyforward",
            ));
        }
    };
    let encoding = csv_encoding(inputs.str("encoding")?.unwrap_or(default_encoding))?;
    let dir = target_dir(ctx, inputs, Some(DEFAULT_OUT_DIR))?;
    let name = out_file(ctx, inputs, &dir, "journal.csv")?;
    let conflict = on_conflict(inputs)?;

    let mut warnings = Vec::new();
    // What the file holds that the accounting software will refuse or read otherwise, by
    // line, for the run's warnings (`warnings` above lists each in the run's language).
    let mut unreadable_dates: Vec<(usize, String)> = Vec::new();
    let mut unreadable_amounts: Vec<(usize, String)> = Vec::new();
    let mut no_account: Vec<(usize, &str, &str)> = Vec::new();
    let mut truncated: Vec<usize> = Vec::new();
    let field = |row: &Row, f: &str| -> String {
        let column = mapping.get(f).and_then(Json::as_str).unwrap_or(f);
        text(row.get(column))
    };
    let mut lines = Vec::new();
    for (i, row) in entries.iter().enumerate() {
        let get = |f: &str| field(row, f);
        let date = match parse_date(&get("date")) {
            Some(d) => d.format("%Y/%m/%d").to_string(),
            None => {
                let (n, raw) = (i + 1, get("date"));
                warnings.push(ctx.say(
                    format!("{n}行目: 日付 {raw:?} を読めません"),
                    format!("line {n}: date {raw:?} is not a date"),
                ));
                unreadable_dates.push((n, raw));
                get("date")
            }
        };
        let mut amount = |f: &str| -> String {
            let raw = get(f);
            match crate::jp::parse_amount(&raw, &Default::default()) {
                Ok(Some(x)) if x.fract() == 0.0 => format!("{}", x as i64),
                Ok(Some(x)) => format!("{x}"),
                Ok(None) => String::new(),
                Err(_) => {
                    let n = i + 1;
                    warnings.push(ctx.say(
                        format!("{n}行目: 金額 {raw:?} を読めません"),
                        format!("line {n}: amount {raw:?} is not a number"),
                    ));
                    unreadable_amounts.push((n, raw.clone()));
                    raw
                }
            }
        };
        let (debit_amount, credit_amount) = (amount("debit_amount"), amount("credit_amount"));
        // Journal software refuses a line with an amount but no account.
        for (account, amt, side_ja, side_en) in [
            ("debit_account", &debit_amount, "借方", "debit"),
            ("credit_account", &credit_amount, "貸方", "credit"),
        ] {
            if get(account).is_empty() && !amt.is_empty() {
                let n = i + 1;
                warnings.push(ctx.say(
                    format!("{n}行目: {side_ja}勘定科目がありません"),
                    format!("line {n}: no {side_en} account"),
                ));
                no_account.push((n, side_ja, side_en));
            }
        }
        let mut description = get("description");
        if format == "yayoi"
            && UnicodeWidthStr::width(description.as_str()) > YAYOI_DESCRIPTION_WIDTH
        {
            let mut cut = String::new();
            for c in description.chars() {
                if UnicodeWidthStr::width(format!("{cut}{c}").as_str()) > YAYOI_DESCRIPTION_WIDTH {
                    break;
                }
                cut.push(c);
            }
            let n = i + 1;
            warnings.push(ctx.say(
                format!("{n}行目: 摘要を弥生の上限（全角32文字）で切り詰めました"),
                format!("line {n}: description truncated to Yayoi's 32 full-width characters"),
            ));
            truncated.push(n);
            description = cut;
        }
        let line: Vec<String> = match format.as_str() {
            // 弥生会計 仕訳日記帳インポート (25 columns; 2000 = a one-line entry, no header).
            "yayoi" => vec![
                "2000".into(),
                get("voucher_no"),
                String::new(),
                date,
                get("debit_account"),
                get("debit_sub_account"),
                get("department"),
                get("debit_tax_category"),
                debit_amount,
                String::new(),
                get("credit_account"),
                get("credit_sub_account"),
                get("department"),
                get("credit_tax_category"),
                credit_amount,
                String::new(),
                description,
                String::new(),
                String::new(),
                "0".into(),
                String::new(),
                String::new(),
                "0".into(),
                "0".into(),
                "no".into(),
            ],
            "freee" => vec![
                date,
                get("voucher_no"),
                get("debit_account"),
                get("debit_sub_account"),
                get("debit_tax_category"),
                debit_amount,
                get("department"),
                get("credit_account"),
                get("credit_sub_account"),
                get("credit_tax_category"),
                credit_amount,
                get("department"),
                description,
            ],
            "moneyforward" => vec![
                get("voucher_no"),
                date,
                get("debit_account"),
                get("debit_sub_account"),
                get("department"),
                get("debit_tax_category"),
                debit_amount,
                get("credit_account"),
                get("credit_sub_account"),
                get("department"),
                get("credit_tax_category"),
                credit_amount,
                description,
            ],
            _ => vec![
                get("voucher_no"),
                date,
                get("debit_account"),
                get("debit_sub_account"),
                debit_amount,
                get("debit_tax_category"),
                get("credit_account"),
                get("credit_sub_account"),
                credit_amount,
                get("credit_tax_category"),
                description,
                get("department"),
            ],
        };
        lines.push(line);
    }
    let header: Option<Vec<String>> = match format.as_str() {
        "yayoi" => None,
        "freee" => Some(
            [
                "取引日",
                "伝票番号",
                "借方勘定科目",
                "借方補助科目",
                "借方税区分",
                "借方金額",
                "借方部門",
                "貸方勘定科目",
                "貸方補助科目",
                "貸方税区分",
                "貸方金額",
                "貸方部門",
                "摘要",
            ]
            .map(String::from)
            .to_vec(),
        ),
        "moneyforward" => Some(
            [
                "取引No",
                "取引日",
                "借方勘定科目",
                "借方補助科目",
                "借方部門",
                "借方税区分",
                "借方金額(円)",
                "貸方勘定科目",
                "貸方補助科目",
                "貸方部門",
                "貸方税区分",
                "貸方金額(円)",
                "摘要",
            ]
            .map(String::from)
            .to_vec(),
        ),
        _ => Some(
            [
                "伝票番号",
                "日付",
                "借方勘定科目",
                "借方補助科目",
                "借方金額",
                "借方税区分",
                "貸方勘定科目",
                "貸方補助科目",
                "貸方金額",
                "貸方税区分",
                "摘要",
                "部門",
            ]
            .map(String::from)
            .to_vec(),
        ),
    };
    let body = csv_text(header.as_deref(), &lines, ",");
    let mut replaced = Vec::new();
    let bytes = encode(body, encoding, &mut replaced);
    warnings.extend(replaced.iter().map(|r| r.warning(ctx.lang)));
    let saved = save(&dir, &name, &bytes, conflict)?;
    if let Some(path) = &saved {
        let file = path
            .file_name()
            .map_or_else(|| name.clone(), |n| n.to_string_lossy().into_owned());
        // A date or an amount written as it was given: the accounting software refuses it
        // (a date it may read as another day).
        let unreadable = |lines: &[(usize, String)],
                          (ja, one, many): (&str, &str, &str),
                          or: (&str, &str)| {
            let n = lines.len();
            let examples: Vec<(String, String)> = lines
                .iter()
                .take(3)
                .map(|(n, raw)| (format!("{n}行目 {raw:?}"), format!("line {n} {raw:?}")))
                .collect();
            let (was, them) = if n == 1 {
                ("was written as it was", "it")
            } else {
                ("were written as they were", "them")
            };
            warn_lines(
                ctx,
                "VALUES_UNREADABLE",
                n,
                &examples,
                (
                    format!(
                        "{file} の {n} 行は{ja}を読めないため、書かれたままの値を書き出しました。会計ソフトは取り込め{}",
                        or.0
                    ),
                    format!(
                        "{file}: {} could not be read and {was} given: the accounting software will refuse {them}{}",
                        counted(n, one, many),
                        or.1,
                    ),
                ),
            );
        };
        unreadable(
            &unreadable_dates,
            ("日付", "date", "dates"),
            ("ないか、別の日付に読みます", " or read another date"),
        );
        unreadable(
            &unreadable_amounts,
            ("金額", "amount", "amounts"),
            ("ません", ""),
        );
        let sides: Vec<(String, String)> = no_account
            .iter()
            .take(3)
            .map(|(n, ja, en)| (format!("{n}行目 {ja}"), format!("line {n} {en}")))
            .collect();
        let n = no_account.len();
        warn_lines(
            ctx,
            "VALUES_MISSING",
            n,
            &sides,
            (
                format!(
                    "{file} の {n} か所は金額があるのに勘定科目が空です。会計ソフトはその行を取り込めません"
                ),
                format!(
                    "{file}: {} an amount but no account: the accounting software will refuse those lines",
                    counted(n, "side has", "sides have"),
                ),
            ),
        );
        let cut: Vec<(String, String)> = truncated
            .iter()
            .take(3)
            .map(|n| (format!("{n}行目"), format!("line {n}")))
            .collect();
        let n = truncated.len();
        warn_lines(
            ctx,
            "VALUE_TRUNCATED",
            n,
            &cut,
            (
                format!(
                    "{file} の {n} 行は摘要が弥生の上限（全角32文字）を超えるため切り詰めました"
                ),
                format!(
                    "{file}: {} cut to Yayoi's 32 full-width characters",
                    counted(n, "description was", "descriptions were"),
                ),
            ),
        );
        warn_replaced(ctx, &file, &replaced);
    }
    Ok(Outputs::new()
        .with("out_path", path_text(&saved))
        .with(
            "row_count",
            json!(if saved.is_some() { lines.len() } else { 0 }),
        )
        .with("warnings", json!(warnings)))
}

builtin!("journal.export", journal_export);
