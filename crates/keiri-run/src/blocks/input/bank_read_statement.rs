//! `bank.read_statement`: its inputs and outputs are in `block_specs/input/bank.read_statement.yaml`.

use super::record_end;
use super::{decode, number, read_bytes};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::memo::Memo;
use crate::jp;
use crate::value::{json_column, table_error};
use chrono::NaiveDate;
use polars::prelude::{Column, DataFrame};
use rayon::prelude::*;
use serde_json::{Value as J, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One normalised statement line.
struct StatementLine {
    date: NaiveDate,
    amount: f64,
    deposit: bool,
    description: String,
    balance: Option<f64>,
}

/// Header names Japanese banks use, by the field they mean (first match wins).
const BANK_HEADERS: &[(&str, &[&str])] = &[
    (
        "date",
        &[
            "日付",
            "取引日",
            "お取引日",
            "年月日",
            "勘定日",
            "取扱日",
            "取扱日付",
            "入出金日",
            "取引年月日",
        ],
    ),
    (
        "withdrawal",
        &[
            "お引出し",
            "お引出",
            "お引出金額",
            "お引き出し",
            "出金",
            "出金金額",
            "出金額",
            "お支払金額",
            "支払金額",
            "引出額",
        ],
    ),
    (
        "deposit",
        &[
            "お預入れ",
            "お預入",
            "お預入金額",
            "お預け入れ",
            "入金",
            "入金金額",
            "入金額",
            "お預り金額",
            "預入額",
        ],
    ),
    ("amount", &["金額", "取引金額", "入出金額"]),
    (
        "description",
        &[
            "摘要",
            "お取引内容",
            "取引内容",
            "摘要内容",
            "内容",
            "お取引先",
            "取引先",
            "備考",
        ],
    ),
    (
        "balance",
        &["残高", "差引残高", "取引後残高", "お取引後残高", "現在高"],
    ),
];

/// The mapping for a header line, when its names are a known layout.
fn detect_mapping(header: &[String]) -> Option<BTreeMap<String, String>> {
    let mut mapping = BTreeMap::new();
    for (field, names) in BANK_HEADERS {
        let found = names.iter().find_map(|n| {
            header
                .iter()
                .find(|h| h.trim().trim_end_matches("（円）").trim_end_matches("(円)") == *n)
        });
        if let Some(h) = found {
            mapping.insert((*field).to_owned(), h.clone());
        }
    }
    let has_amount = mapping.contains_key("amount")
        || (mapping.contains_key("deposit") && mapping.contains_key("withdrawal"));
    (mapping.contains_key("date") && has_amount).then_some(mapping)
}

fn bank_read_statement(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let path = inputs.require_str("path")?;
    let encoding = inputs.str("encoding")?.unwrap_or("auto");
    let date_format = inputs.str("date_format")?;
    let skip_rows = usize::try_from(inputs.i64("skip_rows")?.unwrap_or(0)).map_err(|_| {
        BlockError::input_invalid("skip_rows", "0以上の整数が必要です", "expected 0 or more")
    })?;
    let mapping: Option<BTreeMap<String, String>> = match inputs.json("mapping") {
        None => None,
        Some(J::Object(m)) => Some(
            m.into_iter()
                .filter_map(|(k, v)| {
                    v.as_str()
                        .filter(|s| !s.is_empty())
                        .map(|s| (k, s.to_owned()))
                })
                .collect(),
        ),
        Some(_) => {
            return Err(BlockError::input_invalid(
                "mapping",
                "オブジェクトが必要です",
                "expected an object",
            ));
        }
    };
    let (_, bytes) = read_bytes(ctx, path)?;
    let (lines, layout) = match zengin_records(&bytes) {
        Some(records) => (parse_zengin(&records)?, "zengin"),
        None => {
            let (text, _) = decode(&bytes, encoding)?;
            (
                parse_bank_csv(&text, skip_rows, mapping, date_format)?,
                "csv",
            )
        }
    };
    let deposits: f64 = lines.iter().filter(|l| l.deposit).map(|l| l.amount).sum();
    let withdrawals: f64 = lines.iter().filter(|l| !l.deposit).map(|l| l.amount).sum();
    let first = lines.iter().map(|l| l.date).min();
    let last = lines.iter().map(|l| l.date).max();
    let opening = lines.first().and_then(|l| {
        l.balance.map(|b| {
            if l.deposit {
                b - l.amount
            } else {
                b + l.amount
            }
        })
    });
    let closing = lines.last().and_then(|l| l.balance);
    let iso = |d: Option<NaiveDate>| d.map(|d| d.format("%Y-%m-%d").to_string());
    let summary = json!({
        "layout": layout,
        "period_start": iso(first),
        "period_end": iso(last),
        "count": lines.len(),
        "deposit_count": lines.iter().filter(|l| l.deposit).count(),
        "withdrawal_count": lines.iter().filter(|l| !l.deposit).count(),
        "deposit_total": number(deposits),
        "withdrawal_total": number(withdrawals),
        "opening_balance": opening.map(number),
        "closing_balance": closing.map(number),
    });
    let table = lines_table(&lines)?;
    Ok(Outputs::new().with("rows", table).with("summary", summary))
}

builtin!("bank.read_statement", bank_read_statement);

/// The lines as a table. `amount` and `balance` are the JSON numbers [`number`] writes, typed
/// by `value::json_column` (the rule `rows_to_table` applies), so every later block, the run
/// record and `csv.write` see the values the rows gave once a block made them a table: whole
/// amounts as integers, amounts with sen as floats. A table and not rows: a statement is read
/// to be filtered and matched column by column, and a hundred thousand lines as JSON objects
/// were a second copy in memory and 15 MB of JSON in the run record.
fn lines_table(lines: &[StatementLine]) -> Result<DataFrame, BlockError> {
    let numbers = |name: &str, value: fn(&StatementLine) -> Option<f64>| {
        number_column(name, lines.iter().map(value).collect())
    };
    let dates = || {
        // Each distinct day written once: a statement has a few hundred days over its lines.
        let mut days: Memo<NaiveDate, Arc<str>> = Memo::default();
        let dates: Vec<Arc<str>> = lines
            .iter()
            .map(|l| days.get_or(l.date, || l.date.format("%Y-%m-%d").to_string().into()))
            .collect();
        Column::new(
            "date".into(),
            dates.iter().map(|d| &**d).collect::<Vec<&str>>(),
        )
    };
    let directions = || {
        Column::new(
            "direction".into(),
            lines
                .iter()
                .map(|l| if l.deposit { "deposit" } else { "withdrawal" })
                .collect::<Vec<_>>(),
        )
    };
    let descriptions = || {
        Column::new(
            "description".into(),
            lines
                .iter()
                .map(|l| l.description.as_str())
                .collect::<Vec<_>>(),
        )
    };
    // The columns are built on every core (a million lines took 0.25 s on one).
    let ((date, description), (direction, (amount, balance))) = rayon::join(
        || rayon::join(dates, descriptions),
        || {
            rayon::join(directions, || {
                rayon::join(
                    || numbers("amount", |l| Some(l.amount)),
                    || numbers("balance", |l| l.balance),
                )
            })
        },
    );
    let columns = vec![date, amount, direction, description, balance];
    DataFrame::new(lines.len(), columns).map_err(|e| table_error(&e))
}

/// A column of amounts, typed as `json_column` types the JSON numbers [`number`] writes:
/// integers when every amount is whole (and under 9e15), else floats. Built from the numbers
/// themselves; an empty column or one with a value that is not finite goes through the JSON.
fn number_column(name: &str, values: Vec<Option<f64>>) -> Column {
    let mut present = values.iter().flatten();
    if present.clone().next().is_none() || present.any(|x| !x.is_finite()) {
        let cells: Vec<J> = values.iter().map(|v| v.map_or(J::Null, number)).collect();
        return json_column(name, &cells);
    }
    if values
        .iter()
        .flatten()
        .all(|x| x.fract() == 0.0 && x.abs() < 9e15)
    {
        let whole: Vec<Option<i64>> = values.iter().map(|v| v.map(|x| x as i64)).collect();
        Column::new(name.into(), whole)
    } else {
        Column::new(name.into(), values)
    }
}

/// How a statement's lines are read from its CSV records: the column of each field (by
/// position), the date format and the negative markers amounts may carry.
struct Columns<'a> {
    date: usize,
    amount: Option<usize>,
    deposit: Option<usize>,
    withdrawal: Option<usize>,
    description: Option<usize>,
    balance: Option<usize>,
    date_format: Option<&'a str>,
    markers: jp::NegativeMarkers,
}

/// Below this much text a statement's lines are read on one core.
const PARALLEL_TEXT: usize = 1 << 20;

fn parse_bank_csv(
    text: &str,
    skip_rows: usize,
    mapping: Option<BTreeMap<String, String>>,
    date_format: Option<&str>,
) -> Result<Vec<StatementLine>, BlockError> {
    let parse_error = |e: csv::Error| {
        BlockError::failed(
            format!("CSVを解析できません: {e}"),
            format!("cannot parse the CSV: {e}"),
        )
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    // The records up to the header, each with the byte offset where the next starts: the
    // skipped ones, then up to 30 searched for a known layout (statements often start with
    // account lines; without a mapping the header is the first line whose names are one).
    let mut head: Vec<(csv::StringRecord, usize)> = Vec::new();
    while head.len() < skip_rows + 30 {
        let mut record = csv::StringRecord::new();
        if !reader.read_record(&mut record).map_err(parse_error)? {
            break;
        }
        let end = usize::try_from(reader.position().byte()).unwrap_or(text.len());
        head.push((record, end));
    }
    let records = head.get(skip_rows..).unwrap_or(&[]);
    let (header_at, mapping) = match mapping {
        Some(m) => (0, m),
        None => records
            .iter()
            .enumerate()
            .find_map(|(i, (r, _))| {
                let names: Vec<String> = r.iter().map(str::to_owned).collect();
                detect_mapping(&names).map(|m| (i, m))
            })
            .ok_or_else(|| {
                BlockError::failed("明細の見出し行を判別できません", "cannot recognise the statement's header line").with_hint(
                    "mapping で列名を指定してください（例 {date: 取引日, deposit: お預入金額, withdrawal: お引出金額, description: 摘要}）",
                    "give the column names in mapping",
                )
            })?,
    };
    let header: Vec<String> = records
        .get(header_at)
        .map(|(r, _)| r.iter().map(|h| h.trim().to_owned()).collect())
        .unwrap_or_default();
    let index = |field: &str| -> Result<Option<usize>, BlockError> {
        match mapping.get(field) {
            None => Ok(None),
            Some(name) => header
                .iter()
                .position(|h| h == name.trim())
                .map(Some)
                .ok_or_else(|| BlockError::missing_column(name, &header)),
        }
    };
    let date = index("date")?.ok_or_else(|| {
        BlockError::input_invalid("mapping", "date が必要です", "date is required")
    })?;
    let (amount, deposit, withdrawal) = (index("amount")?, index("deposit")?, index("withdrawal")?);
    if amount.is_none() && (deposit.is_none() || withdrawal.is_none()) {
        return Err(BlockError::input_invalid(
            "mapping",
            "amount か deposit と withdrawal の両方が必要です",
            "either amount or both deposit and withdrawal are required",
        ));
    }
    let columns = Columns {
        date,
        amount,
        deposit,
        withdrawal,
        description: index("description")?,
        balance: index("balance")?,
        date_format,
        markers: jp::NegativeMarkers::default(),
    };
    // The data records follow the header.
    let Some(&(_, data_start)) = records.get(header_at) else {
        return Ok(Vec::new());
    };
    let data_start = data_start.min(text.len());
    let data = &text[data_start..];
    // A large statement is read in pieces cut between records, one per core, and the pieces'
    // lines joined in order: the lines one reading gives. A piece that meets a line it cannot
    // read gives up, and the statement is read again on one core for the error, with its
    // line number.
    let cuts = piece_starts(data, rayon::current_num_threads());
    if cuts.len() > 1 {
        let pieces: Vec<Option<Vec<StatementLine>>> = (0..cuts.len())
            .into_par_iter()
            .map(|p| {
                let end = cuts.get(p + 1).copied().unwrap_or(data.len());
                read_lines(&data[cuts[p]..end], &columns, 0).ok()
            })
            .collect();
        if let Some(pieces) = pieces.into_iter().collect::<Option<Vec<_>>>() {
            return Ok(pieces.into_iter().flatten().collect());
        }
    }
    // The file's line where the data start, for the errors' line numbers (lines as an editor
    // counts them: blank lines and line breaks inside quoted values included).
    let first_line = text.as_bytes()[..data_start]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1;
    read_lines(data, &columns, first_line)
}

/// Where the pieces of `data` start when it is read on `cores` cores: after a record's line
/// end (outside quotes, see `super::record_end`), about evenly; one piece for a short text,
/// and for a text with a quote inside an unquoted field (`1/2"`, keiri-docs' `QuoteCheck`):
/// the csv crate reads it as text, but `record_end` counts quotes and could cut inside a
/// quoted value after it.
fn piece_starts(data: &str, cores: usize) -> Vec<usize> {
    let mut starts = vec![0];
    if data.len() < PARALLEL_TEXT
        || cores < 2
        || keiri_docs::csv::QuoteCheck::new(b',')
            .advance(data.as_bytes(), true)
            .is_err()
    {
        return starts;
    }
    let size = data.len().div_ceil(cores);
    let mut start = 0;
    while let Some(cut) = record_end(&data.as_bytes()[start..], size, 1) {
        start += cut;
        if data.len() - start < size / 2 {
            break;
        }
        starts.push(start);
    }
    starts
}

/// The statement lines of `data` (records only, from a record's start), whose first line is
/// line `first_line` of the file (for the errors' line numbers).
fn read_lines(
    data: &str,
    columns: &Columns<'_>,
    first_line: usize,
) -> Result<Vec<StatementLine>, BlockError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(data.as_bytes());
    // One record reused for every line (a million lines are five million cells).
    let mut record = csv::StringRecord::new();
    let mut days = Days::default();
    let mut out = Vec::new();
    while reader.read_record(&mut record).map_err(|e| {
        BlockError::failed(
            format!("CSVを解析できません: {e}"),
            format!("cannot parse the CSV: {e}"),
        )
    })? {
        // Counted only for an error: the line breaks before the record's first byte (past
        // the line end the reader may leave before it).
        let line_no = || {
            let at = record
                .position()
                .and_then(|p| usize::try_from(p.byte()).ok())
                .unwrap_or(0)
                .min(data.len());
            let at = at
                + data.as_bytes()[at..]
                    .iter()
                    .take_while(|&&b| b == b'\r' || b == b'\n')
                    .count();
            first_line
                + data.as_bytes()[..at]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
        };
        if let Some(line) = statement_line(&record, columns, &mut days, &line_no)? {
            out.push(line);
        }
    }
    Ok(out)
}

/// The dates of a statement's date texts, each distinct text read once: its lines share a
/// few hundred days, in runs (a statement is in date order), so the last text is kept beside
/// the memo and a line of the same day as the one before costs a comparison.
#[derive(Default)]
struct Days {
    last: Option<(String, Option<NaiveDate>)>,
    memo: Memo<String, Option<NaiveDate>>,
}

impl Days {
    fn of(&mut self, text: &str, format: Option<&str>) -> Option<NaiveDate> {
        if let Some((last, date)) = &self.last
            && last == text
        {
            return *date;
        }
        let date = self.memo.get_or(text.to_owned(), || match format {
            Some(f) => NaiveDate::parse_from_str(&jp::fold_width(text), f).ok(),
            None => jp::parse_date(text),
        });
        self.last = Some((text.to_owned(), date));
        date
    }
}

/// The statement line of one record, on the file's line `line_no()`; `None` for a record without a date
/// (a blank line) or an amount, and for a totals line (「合計」).
fn statement_line(
    record: &csv::StringRecord,
    columns: &Columns<'_>,
    days: &mut Days,
    line_no: &dyn Fn() -> usize,
) -> Result<Option<StatementLine>, BlockError> {
    let cell = |i: Option<usize>| i.and_then(|i| record.get(i)).map_or("", str::trim);
    let date_text = cell(Some(columns.date));
    if date_text.is_empty() {
        return Ok(None);
    }
    let date = days.of(date_text, columns.date_format);
    let Some(date) = date else {
        // Totals and footers (「合計」) have no date; anything else is a real error.
        if date_text.contains("合計") || date_text.contains('計') {
            return Ok(None);
        }
        return Err(BlockError::failed(
            format!("{}行目の日付「{date_text}」を解釈できません", line_no()),
            format!("line {}: cannot parse the date {date_text:?}", line_no()),
        ));
    };
    let amount = |i: Option<usize>| -> Result<Option<f64>, BlockError> {
        jp::parse_amount(cell(i), &columns.markers).map_err(|e| {
            BlockError::failed(
                format!("{}行目の金額「{}」を解釈できません", line_no(), e.text),
                format!("line {}: cannot parse the amount {:?}", line_no(), e.text),
            )
        })
    };
    let (value, deposit) = match columns.amount {
        Some(i) => match amount(Some(i))? {
            Some(a) => (a.abs(), a >= 0.0),
            None => return Ok(None),
        },
        None => match (
            amount(columns.deposit)?.filter(|a| *a != 0.0),
            amount(columns.withdrawal)?.filter(|a| *a != 0.0),
        ) {
            (Some(d), _) => (d, true),
            (None, Some(w)) => (w, false),
            (None, None) => return Ok(None),
        },
    };
    Ok(Some(StatementLine {
        date,
        amount: value,
        deposit,
        description: cell(columns.description).to_owned(),
        balance: amount(columns.balance)?,
    }))
}

/// The 200-byte records of a Zengin (全銀協) fixed-width file, if `bytes` is one: every
/// record starts with its kind (1 header, 2 data, 8 trailer, 9 end), with or without line
/// breaks between records.
fn zengin_records(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    const LEN: usize = 200;
    // Looked at lazily: a CSV statement is told apart at its first line, not after a list
    // of its million lines.
    let lines = || {
        bytes
            .split(|&b| b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
            .filter(|l| !l.is_empty() && *l != b"\x1a")
    };
    let records: Vec<&[u8]> = if lines().all(|l| l.len() == LEN) && lines().nth(1).is_some() {
        lines().collect()
    } else if bytes.len() >= LEN && bytes.len().is_multiple_of(LEN) && !bytes.contains(&b'\n') {
        bytes.chunks(LEN).collect()
    } else {
        return None;
    };
    let kinds_ok = records
        .iter()
        .all(|r| matches!(r[0], b'1' | b'2' | b'8' | b'9'));
    (kinds_ok && records[0][0] == b'1').then_some(records)
}

/// A 和暦 YYMMDD field of a Zengin record. The era is not in the data: 31 and later are
/// 平成 (平成31年 is 2019, the last 平成 year), earlier years 令和, which holds for
/// statements from 2019 until 令和31 (2049).
fn zengin_date(field: &[u8]) -> Option<NaiveDate> {
    let s = std::str::from_utf8(field).ok()?;
    if s.len() != 6 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let yy: i32 = s[0..2].parse().ok()?;
    let (mm, dd): (u32, u32) = (s[2..4].parse().ok()?, s[4..6].parse().ok()?);
    let year = if yy >= 31 { 1988 + yy } else { 2018 + yy };
    NaiveDate::from_ymd_opt(year, mm, dd)
}

fn zengin_text(field: &[u8]) -> String {
    encoding_rs::SHIFT_JIS
        .decode_without_bom_handling(field)
        .0
        .trim()
        .to_owned()
}

fn zengin_number(field: &[u8]) -> Option<f64> {
    std::str::from_utf8(field).ok()?.trim().parse().ok()
}

/// Data records of the two Zengin statement kinds (kind code in the header, bytes 2–3):
/// `01` 振込入金通知 (deposits only) and `03` 入出金取引明細 (both directions).
fn parse_zengin(records: &[&[u8]]) -> Result<Vec<StatementLine>, BlockError> {
    let kind = &records[0][1..3];
    let bad = |n: usize, what: &str| {
        BlockError::failed(
            format!("全銀データの{n}件目のレコードを解釈できません（{what}）"),
            format!("Zengin record {n}: cannot read the {what}"),
        )
    };
    let mut out = Vec::new();
    for (n, r) in records.iter().enumerate().filter(|(_, r)| r[0] == b'2') {
        let n = n + 1;
        let line = match kind {
            // 1 区分, 6 照会番号, 6 勘定日, 6 起算日, 10 金額, 10 他店券, 10 依頼人コード,
            // 48 振込依頼人名, 15 仕向銀行名, 15 仕向支店名, …
            b"01" => StatementLine {
                date: zengin_date(&r[7..13]).ok_or_else(|| bad(n, "勘定日"))?,
                amount: zengin_number(&r[19..29]).ok_or_else(|| bad(n, "金額"))?,
                deposit: true,
                description: zengin_text(&r[49..97]),
                balance: None,
            },
            // 1 区分, 8 照会番号, 6 勘定日, 6 預入払出日, 1 入払区分 (1 入金 2 出金),
            // 2 取引区分, 12 取引金額, 12 他店券, 6 交換呈示日, 6 不渡返還日, 1 手形区分,
            // 7 手形番号, 3 僚店番号, 10 依頼人コード, 48 振込依頼人名, 15, 15, 20 摘要内容, …
            b"03" => {
                let payer = zengin_text(&r[81..129]);
                let memo = zengin_text(&r[159..179]);
                StatementLine {
                    date: zengin_date(&r[9..15]).ok_or_else(|| bad(n, "勘定日"))?,
                    amount: zengin_number(&r[24..36]).ok_or_else(|| bad(n, "取引金額"))?,
                    deposit: r[21] == b'1',
                    description: if payer.is_empty() { memo } else { payer },
                    balance: None,
                }
            }
            other => {
                let code = String::from_utf8_lossy(other);
                return Err(BlockError::failed(
                    format!(
                        "全銀データの種別コード {code} には対応していません（01 振込入金通知、03 入出金取引明細）"
                    ),
                    format!(
                        "Zengin kind {code} is not supported (01 transfer notices, 03 statements)"
                    ),
                ));
            }
        };
        out.push(line);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A statement over a megabyte with an inch mark in one description and a quoted line
    /// break in a later one: the lines are those written (by hand: 30,000, the two values
    /// as written), read on one core, as counting quotes would cut inside the quoted value.
    #[test]
    fn a_statement_with_a_quote_inside_a_value_is_read_whole() {
        let mut text = String::from("取引日,お預入金額,お引出金額,摘要,残高\n");
        for i in 0..30_000 {
            let description = match i {
                100 => "ボルト 1/2\" 代".to_string(),
                20_000 => "\"振込\nメモ\"".to_string(),
                _ => format!("振込 テスト{i}"),
            };
            text.push_str(&format!("2025-03-01,1000,,{description},\n"));
        }
        assert!(text.len() > PARALLEL_TEXT);
        let data = &text[text.find('\n').unwrap() + 1..];
        assert_eq!(piece_starts(data, 2), [0]);
        let clean = data.replace("1/2\"", "1/2");
        assert!(piece_starts(&clean, 2).len() > 1, "a clean text is cut");
        let lines = parse_bank_csv(&text, 0, None, None).unwrap();
        assert_eq!(lines.len(), 30_000);
        assert_eq!(lines[100].description, "ボルト 1/2\" 代");
        assert_eq!(lines[20_000].description, "振込\nメモ");
        assert_eq!(lines[29_999].description, "振込 テスト29999");
    }

    /// The amounts' column is the one `json_column` makes of the JSON numbers `number`
    /// writes: its type and every value, for whole amounts, sen, a mix, nulls, values past
    /// 9e15, negative balances, no value at all and a value that is not finite.
    #[test]
    fn amounts_are_typed_as_their_json_would_be() {
        let cases: Vec<Vec<Option<f64>>> = vec![
            vec![Some(110_000.0), Some(440.0), None],
            vec![Some(12.34), Some(500.0)],
            vec![Some(-1_000.0), None, Some(0.5)],
            vec![Some(-0.0), Some(3.0)],
            vec![Some(9e15), Some(1.0)],
            vec![None, None],
            vec![],
            vec![Some(f64::INFINITY), Some(1.0)],
        ];
        for values in cases {
            let cells: Vec<J> = values.iter().map(|v| v.map_or(J::Null, number)).collect();
            let expected = json_column("amount", &cells);
            let got = number_column("amount", values.clone());
            assert_eq!(got.dtype(), expected.dtype(), "{values:?}");
            assert!(
                got.as_materialized_series()
                    .equals_missing(expected.as_materialized_series()),
                "{values:?}: {got:?} against {expected:?}"
            );
        }
    }
}
