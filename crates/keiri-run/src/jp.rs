//! Japanese accounting values, parsed in one place and used by every block: 和暦 and
//! western dates, 全角 text, yen amounts with their negative notations, consumption tax
//! (10 % / 軽減税率 8 %) with the rounding the インボイス制度 requires, fiscal periods, and
//! Japanese holidays and business days (営業日).
//!
//! Everything here is a pure function of its arguments (no locale, no clock), so blocks
//! and tests agree on every value.

use chrono::{Datelike, NaiveDate};

pub use keiri_plan::row_expr::fold_width;

/// The Japanese eras with the western year before their first year (`令和1年` = 2019).
const ERAS: &[(&str, &str, i32)] = &[
    ("令和", "R", 2018),
    ("平成", "H", 1988),
    ("昭和", "S", 1925),
    ("大正", "T", 1911),
    ("明治", "M", 1867),
];

/// Parses a date written the ways Japanese documents write them: `令和6年4月1日`, `R6.4.1`,
/// `R06/04/01`, `H31.4.30`, `平成元年5月1日`, `2024年4月1日`, `2024/4/1`, `2024-04-01`,
/// `2024.4.1`, `20240401`, full-width digits, a trailing weekday (`（月）`) or time.
/// `None` when the text is not a valid date.
pub fn parse_date(text: &str) -> Option<NaiveDate> {
    let folded = fold_width(text);
    let mut s = folded.trim();
    // A trailing weekday in brackets: 2024/4/1(月).
    if let Some(open) = s.rfind('(')
        && s.ends_with(')')
        && s[open..].chars().count() <= 4
    {
        s = s[..open].trim_end();
    }
    // A time after the date: 2024-04-01 10:00:00 or 2024-04-01T10:00.
    if let Some(pos) = s.find(' ').or_else(|| s.rfind('T').filter(|&p| p > 0))
        && s[pos + 1..].contains(':')
    {
        s = &s[..pos];
    }
    for (name, letter, base) in ERAS {
        let rest = s
            .strip_prefix(name)
            .or_else(|| s.strip_prefix(letter))
            .or_else(|| s.strip_prefix(&letter.to_ascii_lowercase()));
        if let Some(rest) = rest {
            let rest = rest.trim_start();
            let (year, rest) = match rest.strip_prefix('元') {
                Some(r) => (1, r),
                None => take_number(rest)?,
            };
            if year == 0 {
                return None;
            }
            let (month, day) = month_day(rest)?;
            return NaiveDate::from_ymd_opt(base + year as i32, month, day);
        }
    }
    if s.len() == 8 && s.bytes().all(|b| b.is_ascii_digit()) {
        let n: u32 = s.parse().ok()?;
        return NaiveDate::from_ymd_opt((n / 10000) as i32, n / 100 % 100, n % 100);
    }
    let (year, rest) = take_number(s)?;
    if !(1000..=9999).contains(&year) {
        return None;
    }
    let (month, day) = month_day(rest)?;
    NaiveDate::from_ymd_opt(year as i32, month, day)
}

/// Leading ASCII digits as a number, and the rest.
fn take_number(s: &str) -> Option<(u32, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if end == 0 || end > 4 {
        return None;
    }
    Some((s[..end].parse().ok()?, &s[end..]))
}

/// `年4月1日`, `.4.1`, `/04/01`, `-4-1`: the month and day after the year.
fn month_day(s: &str) -> Option<(u32, u32)> {
    let sep = s.chars().next()?;
    if !matches!(sep, '年' | '.' | '/' | '-') {
        return None;
    }
    let rest = s[sep.len_utf8()..].trim_start();
    let (month, rest) = take_number(rest)?;
    let expected = if sep == '年' { '月' } else { sep };
    let rest = rest.strip_prefix(expected)?.trim_start();
    let (day, rest) = take_number(rest)?;
    let rest = rest.trim();
    let ok_end = if sep == '年' {
        rest == "日" || rest.is_empty()
    } else {
        rest.is_empty()
    };
    ok_end.then_some((month, day))
}

/// An Excel serial day number (1900 date system, with Excel's fictitious 1900-02-29
/// accounted for by counting from 1899-12-30) as a date; only 1 ..= 2958465 (9999-12-31).
pub fn excel_serial_date(serial: f64) -> Option<NaiveDate> {
    if !(1.0..2_958_466.0).contains(&serial) {
        return None;
    }
    let base = NaiveDate::from_ymd_opt(1899, 12, 30)?;
    base.checked_add_days(chrono::Days::new(serial.trunc() as u64))
}

/// How a negative amount may be written. The default knows all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NegativeMarkers {
    /// Leading signs that make the amount negative (`▲`, `△`, `-`).
    pub prefixes: Vec<char>,
    /// Whether `(1,234)` is negative.
    pub parentheses: bool,
}

impl Default for NegativeMarkers {
    fn default() -> NegativeMarkers {
        NegativeMarkers {
            prefixes: vec!['▲', '△', '-'],
            parentheses: true,
        }
    }
}

impl NegativeMarkers {
    /// From the spec's list form: `["▲", "△", "-", "()"]`. Full-width markers are folded.
    pub fn from_list(markers: &[String]) -> NegativeMarkers {
        let mut out = NegativeMarkers {
            prefixes: Vec::new(),
            parentheses: false,
        };
        for m in markers {
            let m = fold_width(m.trim());
            if m == "()" {
                out.parentheses = true;
            } else if let Some(c) = m.chars().next() {
                out.prefixes.push(c);
            }
        }
        out
    }
}

/// Why an amount did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmountError {
    pub text: String,
}

/// Parses a yen amount: `1234`, `1,234`, `¥1,234`, `￥１，２３４`, `1,234円`, `\1,234`
/// (the yen sign of Shift_JIS text shown as a backslash), `1,234.5`, and the negatives
/// `△1,234`, `▲1,234`, `(1,234)`, `-1,234`, `−1,234`, `¥-1,234`. Empty text is `Ok(None)`.
pub fn parse_amount(text: &str, markers: &NegativeMarkers) -> Result<Option<f64>, AmountError> {
    let folded = fold_width(text);
    let mut s = folded.trim();
    if s.is_empty() {
        return Ok(None);
    }
    let bad = || AmountError {
        text: text.to_owned(),
    };
    let mut negative = false;
    if markers.parentheses && s.starts_with('(') && s.ends_with(')') {
        negative = true;
        s = s[1..s.len() - 1].trim();
    }
    // Currency marks may stand before or after the sign: ¥-1,234 and -¥1,234 are both seen.
    for _ in 0..2 {
        s = s.trim_start_matches(['¥', '\\']).trim_start();
        if let Some(c) = s.chars().next()
            && markers.prefixes.contains(&c)
        {
            if negative {
                return Err(bad());
            }
            negative = true;
            s = s[c.len_utf8()..].trim_start();
        }
    }
    s = s.strip_suffix('円').unwrap_or(s).trim_end();
    if s.is_empty() || !s.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return Err(bad());
    }
    let digits: String = s.chars().filter(|&c| c != ',').collect();
    if !digits.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(bad());
    }
    let value: f64 = digits.parse().map_err(|_| bad())?;
    Ok(Some(if negative { -value } else { value }))
}

/// 端数処理: how a fraction of a yen is rounded. Negative amounts (returns, credit notes)
/// round symmetrically, so a return's tax is the negative of the sale's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rounding {
    /// 切り捨て (toward zero), the usual choice and the default.
    #[default]
    Floor,
    /// 四捨五入 (half away from zero).
    Round,
    /// 切り上げ (away from zero).
    Ceil,
}

impl Rounding {
    /// `floor`/`round`/`ceil` or 切り捨て/四捨五入/切り上げ.
    pub fn parse(s: &str) -> Option<Rounding> {
        match s.trim() {
            "floor" | "切り捨て" | "切捨て" | "切捨" | "truncate" => Some(Rounding::Floor),
            "round" | "四捨五入" => Some(Rounding::Round),
            "ceil" | "切り上げ" | "切上げ" | "切上" => Some(Rounding::Ceil),
            _ => None,
        }
    }

    /// `numerator / denominator` rounded to a whole number (denominator > 0).
    pub fn divide(self, numerator: i128, denominator: i128) -> i128 {
        let (q, r) = (numerator / denominator, numerator % denominator);
        if r == 0 {
            return q;
        }
        let away = if numerator < 0 { q - 1 } else { q + 1 };
        match self {
            Rounding::Floor => q,
            Rounding::Ceil => away,
            Rounding::Round => {
                if 2 * r.abs() >= denominator {
                    away
                } else {
                    q
                }
            }
        }
    }

    /// A non-integral yen value rounded; used only when an amount has a fraction itself.
    pub fn apply(self, x: f64) -> f64 {
        // Snap away float noise first (1100 * 0.1 = 110.00000000000001 must not ceil to 111).
        let x = (x * 1e6).round() / 1e6;
        match self {
            Rounding::Floor => x.trunc(),
            Rounding::Ceil => x.signum() * x.abs().ceil(),
            Rounding::Round => x.signum() * (x.abs() + 0.5).floor(),
        }
    }
}

/// A consumption tax rate in basis points of a percent (10 % = 1000, 8 % = 800), so rates
/// compare and group exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaxRate(pub u32);

impl TaxRate {
    pub const STANDARD: TaxRate = TaxRate(1000);
    pub const REDUCED: TaxRate = TaxRate(800);

    /// As a fraction (0.1 for 10 %).
    pub fn as_fraction(self) -> f64 {
        f64::from(self.0) / 10_000.0
    }

    /// From a fraction (`0.1`) or a percent (`10`): values below 1 are fractions.
    pub fn from_number(x: f64) -> Option<TaxRate> {
        if !x.is_finite() || !(0.0..100.0).contains(&x) {
            return None;
        }
        let percent = if x < 1.0 { x * 100.0 } else { x };
        Some(TaxRate((percent * 100.0).round() as u32))
    }

    /// `10%`, `１０％`, `8`, `0.08`, `軽減8%`, `8%軽減`, `※8%`.
    pub fn parse(text: &str) -> Option<TaxRate> {
        let folded = fold_width(text);
        let number: String = folded
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        if number.is_empty() {
            return None;
        }
        TaxRate::from_number(number.parse().ok()?)
    }
}

/// Whether a reduced-rate flag cell marks the line as 軽減税率: `true`, `1`, `※`, `軽`,
/// `軽減`, `*`, `○`, `〇`, `yes`, `対象`.
pub fn is_reduced_flag(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Bool(b) => *b,
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        serde_json::Value::String(s) => {
            let s = fold_width(s.trim()).to_lowercase();
            matches!(
                s.as_str(),
                "true"
                    | "1"
                    | "※"
                    | "*"
                    | "軽"
                    | "軽減"
                    | "軽減税率"
                    | "○"
                    | "〇"
                    | "yes"
                    | "y"
                    | "対象"
            )
        }
        _ => false,
    }
}

/// Whether an amount includes the tax or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AmountBasis {
    /// 税込.
    Included,
    /// 税抜.
    #[default]
    Excluded,
}

/// The tax, net and gross of one amount (one line, or one invoice's total at one rate).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaxSplit {
    pub net: f64,
    pub tax: f64,
    pub gross: f64,
}

/// The consumption tax in `amount` at `rate`, rounded once. Integral amounts are computed
/// exactly in integers (`tax = amount × rate`, or `amount × rate / (1 + rate)` for a
/// tax-included amount), so no float error can move a yen.
pub fn tax_of(amount: f64, rate: TaxRate, basis: AmountBasis, rounding: Rounding) -> TaxSplit {
    let r = i128::from(rate.0);
    let tax = if amount.fract() == 0.0 && amount.abs() < 1e15 {
        let a = amount as i128;
        let t = match basis {
            AmountBasis::Excluded => rounding.divide(a * r, 10_000),
            AmountBasis::Included => rounding.divide(a * r, 10_000 + r),
        };
        t as f64
    } else {
        let f = rate.as_fraction();
        match basis {
            AmountBasis::Excluded => rounding.apply(amount * f),
            AmountBasis::Included => rounding.apply(amount * f / (1.0 + f)),
        }
    };
    match basis {
        AmountBasis::Excluded => TaxSplit {
            net: amount,
            tax,
            gross: amount + tax,
        },
        AmountBasis::Included => TaxSplit {
            net: amount - tax,
            tax,
            gross: amount,
        },
    }
}

/// Splits a whole-yen `total` over lines in proportion to `shares` (largest remainder), so
/// the line values are whole yen and add up to `total` exactly. Used to show per-line tax
/// when the tax is rounded once per invoice and rate.
pub fn allocate(total: f64, shares: &[f64]) -> Vec<f64> {
    let sum: f64 = shares.iter().sum();
    if shares.is_empty() {
        return Vec::new();
    }
    if sum == 0.0 {
        let mut out = vec![0.0; shares.len()];
        out[0] = total;
        return out;
    }
    let raw: Vec<f64> = shares.iter().map(|s| total * s / sum).collect();
    let mut out: Vec<f64> = raw.iter().map(|x| x.trunc()).collect();
    let mut left = (total - out.iter().sum::<f64>()).round() as i64;
    let mut order: Vec<usize> = (0..raw.len()).collect();
    order.sort_by(|&a, &b| {
        (raw[b] - out[b])
            .abs()
            .total_cmp(&(raw[a] - out[a]).abs())
            .then(a.cmp(&b))
    });
    let step = if left < 0 { -1.0 } else { 1.0 };
    for &i in order.iter().cycle().take(raw.len() * 2) {
        if left == 0 {
            break;
        }
        out[i] += step;
        left -= step as i64;
    }
    out
}

/// How a fiscal year is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FiscalYearLabel {
    /// By the year it starts in (April 2024 – March 2025 is 2024年度), the Japanese habit.
    #[default]
    StartYear,
    /// By the year it ends in (the same period is FY2025).
    EndYear,
}

/// The fiscal period a date falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FiscalPeriod {
    pub fiscal_year: i32,
    /// 1 ..= 4.
    pub quarter: u32,
    /// Months since the start of the fiscal year, 1 ..= 12.
    pub month: u32,
    pub year_start: NaiveDate,
    pub year_end: NaiveDate,
    pub quarter_start: NaiveDate,
    pub quarter_end: NaiveDate,
    pub month_start: NaiveDate,
    pub month_end: NaiveDate,
}

/// The first day of the month `months` after (year, month).
fn add_months(year: i32, month: u32, months: u32) -> Option<NaiveDate> {
    let index = year * 12 + month as i32 - 1 + months as i32;
    NaiveDate::from_ymd_opt(index.div_euclid(12), index.rem_euclid(12) as u32 + 1, 1)
}

/// The fiscal year, 四半期 and period bounds of `date` for a year starting in `start_month`
/// (1 ..= 12; 4 for a March year end). `None` for a start month outside 1 ..= 12.
pub fn fiscal_period(
    date: NaiveDate,
    start_month: u32,
    label: FiscalYearLabel,
) -> Option<FiscalPeriod> {
    if !(1..=12).contains(&start_month) {
        return None;
    }
    let start_year = if date.month() >= start_month {
        date.year()
    } else {
        date.year() - 1
    };
    let month = (date.month() + 12 - start_month) % 12 + 1;
    let quarter = (month - 1) / 3 + 1;
    let year_start = add_months(start_year, start_month, 0)?;
    let year_end = add_months(start_year, start_month, 12)?.pred_opt()?;
    let quarter_start = add_months(start_year, start_month, (quarter - 1) * 3)?;
    let quarter_end = add_months(start_year, start_month, quarter * 3)?.pred_opt()?;
    let month_start = NaiveDate::from_ymd_opt(date.year(), date.month(), 1)?;
    let month_end = add_months(date.year(), date.month(), 1)?.pred_opt()?;
    let fiscal_year = match label {
        FiscalYearLabel::StartYear => start_year,
        // A January start is the calendar year under either label.
        FiscalYearLabel::EndYear => year_end.year(),
    };
    Some(FiscalPeriod {
        fiscal_year,
        quarter,
        month,
        year_start,
        year_end,
        quarter_start,
        quarter_end,
        month_start,
        month_end,
    })
}

/// A date in the 和暦 long form (`令和6年4月1日`, `平成元年5月1日`); the inverse of
/// [`parse_date`] for dates from 明治 on.
pub fn format_wareki(date: NaiveDate) -> Option<String> {
    let starts = [
        (NaiveDate::from_ymd_opt(2019, 5, 1)?, 0),
        (NaiveDate::from_ymd_opt(1989, 1, 8)?, 1),
        (NaiveDate::from_ymd_opt(1926, 12, 25)?, 2),
        (NaiveDate::from_ymd_opt(1912, 7, 30)?, 3),
        (NaiveDate::from_ymd_opt(1873, 1, 1)?, 4),
    ];
    let (_, i) = starts.iter().find(|(start, _)| date >= *start)?;
    let (name, _, base) = ERAS[*i];
    let year = date.year() - base;
    let year_text = if year == 1 {
        "元".to_owned()
    } else {
        year.to_string()
    };
    Some(format!(
        "{name}{year_text}年{}月{}日",
        date.month(),
        date.day()
    ))
}

/// The name of the Japanese national holiday (国民の祝日), substitute holiday (振替休日) or
/// citizens' holiday (国民の休日) on `date`, or `None` on any other day.
///
/// The rules are those of the 国民の祝日に関する法律 as amended up to 2021, including the
/// one-off days of 2019 (改元) and the moved holidays of 2020 and 2021 (東京オリンピック).
/// They are exact from 2000 to 2099; outside those years (the equinox formula's range, and
/// holidays set by future amendments) the answer is a best effort.
pub fn holiday_name(date: NaiveDate) -> Option<&'static str> {
    if let Some(name) = national_holiday(date) {
        return Some(name);
    }
    if is_substitute_holiday(date) {
        return Some("振替休日");
    }
    // 国民の休日: a day between two national holidays.
    if national_holiday(date.pred_opt()?).is_some() && national_holiday(date.succ_opt()?).is_some()
    {
        return Some("国民の休日");
    }
    None
}

/// 振替休日: a Sunday holiday moves to the next day that is not a holiday (from 2007; before
/// that, only to the Monday).
fn is_substitute_holiday(date: NaiveDate) -> bool {
    let mut day = date;
    while let Some(previous) = day.pred_opt() {
        if national_holiday(previous).is_none() {
            return false;
        }
        if previous.weekday() == chrono::Weekday::Sun {
            return true;
        }
        if date.year() < 2007 {
            return false;
        }
        day = previous;
    }
    false
}

/// Whether `date` is a business day (営業日) the way Japanese banks count them: not a
/// Saturday or Sunday, not a holiday ([`holiday_name`]) and not a bank holiday of the year
/// end (12月31日 to 1月3日).
pub fn is_business_day(date: NaiveDate) -> bool {
    let year_end = matches!((date.month(), date.day()), (12, 31) | (1, 1..=3));
    !matches!(date.weekday(), chrono::Weekday::Sat | chrono::Weekday::Sun)
        && !year_end
        && holiday_name(date).is_none()
}

/// The `n`th `weekday` of a month (1-based), e.g. the 2nd Monday.
fn nth_weekday(year: i32, month: u32, weekday: chrono::Weekday, n: u8) -> Option<NaiveDate> {
    NaiveDate::from_weekday_of_month_opt(year, month, weekday, n)
}

/// The day of the 春分 (vernal) and 秋分 (autumnal) equinox: the formula the 国立天文台 uses
/// for 1980–2099.
fn equinox_day(year: i32, autumn: bool) -> u32 {
    let base = if autumn { 23.2488 } else { 20.8431 };
    let y = f64::from(year - 1980);
    (base + 0.242_194 * y - (y / 4.0).floor()).floor() as u32
}

/// The 国民の祝日 themselves (not the substitute or citizens' holidays).
fn national_holiday(date: NaiveDate) -> Option<&'static str> {
    use chrono::Weekday::Mon;
    let (y, m, d) = (date.year(), date.month(), date.day());
    let monday = |month: u32, n: u8| nth_weekday(y, month, Mon, n) == Some(date);
    let name = match (m, d) {
        (1, 1) => "元日",
        (1, _) if monday(1, 2) => "成人の日",
        (2, 11) => "建国記念の日",
        (2, 23) if y >= 2020 => "天皇誕生日",
        (3, _) if d == equinox_day(y, false) => "春分の日",
        (4, 29) if y >= 2007 => "昭和の日",
        (4, 29) => "みどりの日",
        (5, 1) if y == 2019 => "即位の日",
        (5, 3) => "憲法記念日",
        (5, 4) if y >= 2007 => "みどりの日",
        (5, 5) => "こどもの日",
        (7, 23) if y == 2020 => "海の日",
        (7, 24) if y == 2020 => "スポーツの日",
        (7, 22) if y == 2021 => "海の日",
        (7, 23) if y == 2021 => "スポーツの日",
        (7, 20) if y <= 2002 => "海の日",
        (7, _) if y >= 2003 && y != 2020 && y != 2021 && monday(7, 3) => "海の日",
        (8, 10) if y == 2020 => "山の日",
        (8, 8) if y == 2021 => "山の日",
        (8, 11) if y >= 2016 && y != 2020 && y != 2021 => "山の日",
        (9, 15) if y <= 2002 => "敬老の日",
        (9, _) if y >= 2003 && monday(9, 3) => "敬老の日",
        (9, _) if d == equinox_day(y, true) => "秋分の日",
        (10, _) if y <= 2019 && monday(10, 2) => "体育の日",
        (10, _) if y >= 2022 && monday(10, 2) => "スポーツの日",
        (10, 22) if y == 2019 => "即位礼正殿の儀の行われる日",
        (11, 3) => "文化の日",
        (11, 23) => "勤労感謝の日",
        (12, 23) if (1989..=2018).contains(&y) => "天皇誕生日",
        _ => return None,
    };
    Some(name)
}
