//! `schedule.trigger`: validates a schedule and records it with this run's accounting period
//! and the next time it is due. It is not a scheduler: something outside the run (the OS
//! scheduler, a future keiri daemon) starts the plan; this block makes the schedule part of
//! the plan, checked, and turns "now" into the `period` later blocks work on.
//!
//! * `cron`: five fields — minute, hour, day of month, month, day of week — each `*`, a
//!   number, a range `a-b`, a step `*/n` or `a-b/n`, or a comma list of these; month names
//!   `JAN`…`DEC` and weekday names `SUN`…`SAT`; weekday `0` and `7` are Sunday. When both
//!   the day of month and the day of week are restricted, a day matching either is due (as
//!   in Vixie cron). `@yearly`, `@monthly`, `@weekly`, `@daily` and `@hourly` are accepted.
//!   An expression that can never be due (`0 9 31 2 *`) is refused.
//! * `monthly_business_day`: the `day`th business day of the month (1 to 15), or the last
//!   one (`-1`), at `time`. Business days skip weekends, Japanese holidays and the bank
//!   holidays of the year end ([`crate::jp::is_business_day`]).
//! * `monthly_day`: day `day` of the month (1 to 31; a short month uses its last day), or the
//!   last day (`-1`), at `time`, moved to the business day before or after by
//!   `holiday_shift` when it is not a business day.
//!
//! Times are in `timezone`: `Asia/Tokyo` (or `JST`), `UTC`, or a fixed offset such as
//! `+09:00`. Outputs: `triggered_at` (the run's clock in that zone), `period` (the month of
//! `triggered_at` moved by `period_offset_months`, as `YYYY-MM`), `next_run_at` (the first
//! due time strictly after `triggered_at`) and `schedule` (the checked schedule).

use chrono::{Datelike, Duration, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, TimeZone};
use serde_json::{Value as Json, json};

use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::jp::is_business_day;

/// How far ahead a due time is looked for (a `29 2` cron can wait eight years).
const SEARCH_DAYS: i64 = 366 * 9;

fn invalid(key: &str, ja: impl Into<String>, en: impl Into<String>) -> BlockError {
    let (ja, en) = (ja.into(), en.into());
    BlockError::input_invalid(key, &ja, &en)
}

/// One cron field as the set of values it allows.
#[derive(Debug, Clone)]
struct Field {
    allowed: Vec<bool>,
    /// Written as `*` (or `*/n`): unrestricted for the day-of-month / day-of-week rule.
    star: bool,
}

impl Field {
    fn has(&self, v: u32) -> bool {
        self.allowed.get(v as usize).copied().unwrap_or(false)
    }
}

#[derive(Debug, Clone)]
struct Cron {
    minute: Field,
    hour: Field,
    day: Field,
    month: Field,
    weekday: Field,
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// Parses one field: `name` for messages, values `min ..= max`, `names` for `min`, `min+1`, ….
fn parse_field(
    text: &str,
    name: (&str, &str),
    min: u32,
    max: u32,
    names: &[&str],
) -> Result<Field, (String, String)> {
    let err = |ja: String, en: String| (format!("{}: {ja}", name.0), format!("{}: {en}", name.1));
    let value = |s: &str| -> Result<u32, (String, String)> {
        let upper = s.to_ascii_uppercase();
        if let Some(i) = names.iter().position(|n| *n == upper) {
            return Ok(min + i as u32);
        }
        let v: u32 = s.parse().map_err(|_| {
            err(
                format!("{s:?} は数値ではありません"),
                format!("{s:?} is not a number"),
            )
        })?;
        if v < min || v > max {
            return Err(err(
                format!("{v} は {min}〜{max} の範囲外です"),
                format!("{v} is outside {min}-{max}"),
            ));
        }
        Ok(v)
    };
    let mut allowed = vec![false; max as usize + 1];
    let star = text.starts_with('*');
    for part in text.split(',') {
        let (base, step) = match part.split_once('/') {
            Some((b, s)) => {
                let step: u32 = s.parse().ok().filter(|s| *s >= 1).ok_or_else(|| {
                    err(
                        format!("間隔 {s:?} が不正です"),
                        format!("step {s:?} is not valid"),
                    )
                })?;
                (b, step)
            }
            None => (part, 1),
        };
        let (from, to) = if base == "*" {
            (min, max)
        } else if let Some((a, b)) = base.split_once('-') {
            let (a, b) = (value(a)?, value(b)?);
            if a > b {
                return Err(err(
                    format!("範囲 {base} が逆順です"),
                    format!("range {base} is reversed"),
                ));
            }
            (a, b)
        } else if base.is_empty() {
            return Err(err("空の値があります".into(), "an empty value".into()));
        } else {
            let v = value(base)?;
            // `5/15` means from 5 to the end, every 15.
            (v, if part.contains('/') { max } else { v })
        };
        let mut v = from;
        while v <= to {
            allowed[v as usize] = true;
            v += step;
        }
    }
    Ok(Field { allowed, star })
}

fn parse_cron(text: &str) -> Result<Cron, (String, String)> {
    let expanded = match text.trim().to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => "0 0 1 1 *".to_string(),
        "@monthly" => "0 0 1 * *".to_string(),
        "@weekly" => "0 0 * * 0".to_string(),
        "@daily" | "@midnight" => "0 0 * * *".to_string(),
        "@hourly" => "0 * * * *".to_string(),
        _ => text.trim().to_string(),
    };
    let fields: Vec<&str> = expanded.split_whitespace().collect();
    if fields.len() != 5 {
        return Err((
            format!(
                "cron式は5項目（分 時 日 月 曜日）です（{} 項目あります）",
                fields.len()
            ),
            format!(
                "a cron expression has 5 fields (minute hour day month weekday), not {}",
                fields.len()
            ),
        ));
    }
    let mut weekday = parse_field(fields[4], ("曜日", "weekday"), 0, 7, &WEEKDAYS)?;
    // 7 is Sunday too.
    if weekday.allowed[7] {
        weekday.allowed[0] = true;
    }
    Ok(Cron {
        minute: parse_field(fields[0], ("分", "minute"), 0, 59, &[])?,
        hour: parse_field(fields[1], ("時", "hour"), 0, 23, &[])?,
        day: parse_field(fields[2], ("日", "day of month"), 1, 31, &[])?,
        month: parse_field(fields[3], ("月", "month"), 1, 12, &MONTHS)?,
        weekday,
    })
}

impl Cron {
    fn day_due(&self, date: NaiveDate) -> bool {
        if !self.month.has(date.month()) {
            return false;
        }
        let by_day = self.day.has(date.day());
        let by_weekday = self.weekday.has(date.weekday().num_days_from_sunday());
        match (self.day.star, self.weekday.star) {
            (false, false) => by_day || by_weekday,
            _ => by_day && by_weekday,
        }
    }

    /// The first due minute strictly after `after`.
    fn next_after(&self, after: NaiveDateTime) -> Option<NaiveDateTime> {
        let start = after.date();
        for offset in 0..SEARCH_DAYS {
            let date = start + Duration::days(offset);
            if !self.day_due(date) {
                continue;
            }
            for hour in (0..24).filter(|h| self.hour.has(*h)) {
                for minute in (0..60).filter(|m| self.minute.has(*m)) {
                    let at = date.and_hms_opt(hour, minute, 0)?;
                    if at > after {
                        return Some(at);
                    }
                }
            }
        }
        None
    }
}

/// The due date of a monthly rule in (year, month), or `None` when the month has none.
fn monthly_date(rule: &Monthly, year: i32, month: u32) -> Option<NaiveDate> {
    let first = NaiveDate::from_ymd_opt(year, month, 1)?;
    let last = first
        .checked_add_months(chrono::Months::new(1))?
        .pred_opt()?;
    match rule {
        Monthly::BusinessDay(n) if *n > 0 => first
            .iter_days()
            .take_while(|d| *d <= last)
            .filter(|d| is_business_day(*d))
            .nth(*n as usize - 1),
        Monthly::BusinessDay(_) => {
            let mut d = last;
            while !is_business_day(d) {
                d = d.pred_opt()?;
            }
            Some(d)
        }
        Monthly::Day(n, shift) => {
            let day = if *n < 0 {
                last
            } else {
                NaiveDate::from_ymd_opt(year, month, (*n as u32).min(last.day()))?
            };
            let mut d = day;
            match shift.as_str() {
                "before" => {
                    while !is_business_day(d) {
                        d = d.pred_opt()?;
                    }
                }
                "after" => {
                    while !is_business_day(d) {
                        d = d.succ_opt()?;
                    }
                }
                _ => {}
            }
            Some(d)
        }
    }
}

enum Monthly {
    /// The nth business day (1-based), or the last one (-1).
    BusinessDay(i64),
    /// Day n (or the last day, -1) and the holiday shift.
    Day(i64, String),
}

/// `Asia/Tokyo`, `JST`, `UTC` or a fixed offset `±HH:MM`.
fn parse_zone(text: &str) -> Option<FixedOffset> {
    match text.trim() {
        "Asia/Tokyo" | "JST" | "Japan" => FixedOffset::east_opt(9 * 3600),
        "UTC" | "Etc/UTC" | "Z" | "GMT" => FixedOffset::east_opt(0),
        other => {
            let (sign, rest) = match other.as_bytes().first()? {
                b'+' => (1, &other[1..]),
                b'-' => (-1, &other[1..]),
                _ => return None,
            };
            let (h, m) = rest.split_once(':')?;
            let (h, m): (i32, i32) = (h.parse().ok()?, m.parse().ok()?);
            if h > 14 || m > 59 {
                return None;
            }
            FixedOffset::east_opt(sign * (h * 3600 + m * 60))
        }
    }
}

pub(super) fn schedule_trigger(
    ctx: &BlockContext<'_>,
    inputs: &Inputs,
) -> Result<Outputs, BlockError> {
    let kind = inputs.require_str("kind")?;
    let zone_text = inputs.str("timezone")?.unwrap_or("Asia/Tokyo").trim();
    let zone = parse_zone(zone_text).ok_or_else(|| {
        invalid(
            "timezone",
            format!("タイムゾーン {zone_text:?} は使えません"),
            format!("time zone {zone_text:?} is not supported"),
        )
        .with_hint(
            "Asia/Tokyo・UTC、または +09:00 のような時差で指定してください",
            "use Asia/Tokyo, UTC or an offset such as +09:00",
        )
    })?;
    let offset = inputs.i64("period_offset_months")?.unwrap_or(-1);
    if !(-120..=120).contains(&offset) {
        return Err(invalid(
            "period_offset_months",
            "-120〜120 か月で指定してください",
            "expected -120 to 120 months",
        ));
    }
    let time_text = inputs.str("time")?.unwrap_or("09:00").trim();
    let time = NaiveTime::parse_from_str(time_text, "%H:%M").map_err(|_| {
        invalid(
            "time",
            format!("時刻 {time_text:?} は HH:MM（00:00〜23:59）で指定してください"),
            format!("time {time_text:?} must be HH:MM (00:00 to 23:59)"),
        )
    })?;
    let day = inputs.i64("day")?;
    let shift = inputs.str("holiday_shift")?.unwrap_or("before");
    if !matches!(shift, "before" | "after" | "none") {
        return Err(invalid(
            "holiday_shift",
            "before・after・none のどれかです",
            "expected before, after or none",
        ));
    }

    let now = ctx.now.with_timezone(&zone);
    let local_now = now.naive_local();
    let (next, schedule) = match kind {
        "cron" => {
            let text = inputs
                .str("cron")?
                .filter(|c| !c.trim().is_empty())
                .ok_or_else(|| {
                    invalid(
                        "cron",
                        "kind=cron には cron 式が必要です",
                        "kind cron needs a cron expression",
                    )
                })?;
            let cron = parse_cron(text).map_err(|(ja, en)| {
                invalid("cron", format!("{text:?}: {ja}"), format!("{text:?}: {en}")).with_hint(
                    "例 0 9 * * 1-5（平日の9時）",
                    "e.g. 0 9 * * 1-5 (weekdays at 9:00)",
                )
            })?;
            let next = cron.next_after(local_now).ok_or_else(|| {
                invalid(
                    "cron",
                    format!("cron 式 {text:?} に当てはまる日時がありません"),
                    format!("cron expression {text:?} is never due"),
                )
            })?;
            (
                next,
                json!({"kind": kind, "cron": text.trim(), "timezone": zone_text}),
            )
        }
        "monthly_business_day" | "monthly_day" => {
            let day = day.ok_or_else(|| {
                invalid(
                    "day",
                    format!("kind={kind} には day が必要です"),
                    format!("kind {kind} needs day"),
                )
            })?;
            let rule = if kind == "monthly_business_day" {
                if !(day == -1 || (1..=15).contains(&day)) {
                    return Err(invalid(
                        "day",
                        "第N営業日の N は 1〜15、または -1（最終営業日）です",
                        "the business day must be 1 to 15, or -1 for the last one",
                    ));
                }
                Monthly::BusinessDay(day)
            } else {
                if !(day == -1 || (1..=31).contains(&day)) {
                    return Err(invalid(
                        "day",
                        "日は 1〜31、または -1（月末）です",
                        "the day must be 1 to 31, or -1 for the last day",
                    ));
                }
                Monthly::Day(day, shift.to_string())
            };
            let mut next = None;
            for m in 0..=24u32 {
                let month = local_now
                    .date()
                    .with_day(1)
                    .and_then(|d| d.checked_add_months(chrono::Months::new(m)));
                let Some(month) = month else { break };
                if let Some(date) = monthly_date(&rule, month.year(), month.month()) {
                    let at = date.and_time(time);
                    if at > local_now {
                        next = Some(at);
                        break;
                    }
                }
            }
            let next = next.ok_or_else(|| {
                BlockError::failed(
                    "次の実行日を求められませんでした",
                    "could not find the next run date",
                )
            })?;
            let mut schedule = json!({"kind": kind, "day": day, "time": time.format("%H:%M").to_string(), "timezone": zone_text});
            if kind == "monthly_day"
                && let Json::Object(m) = &mut schedule
            {
                m.insert("holiday_shift".into(), json!(shift));
            }
            (next, schedule)
        }
        _ => {
            return Err(invalid(
                "kind",
                "cron・monthly_business_day・monthly_day のどれかです",
                "expected cron, monthly_business_day or monthly_day",
            ));
        }
    };
    let next = zone.from_local_datetime(&next).single().ok_or_else(|| {
        BlockError::failed(
            "次の実行日時を表せません",
            "cannot express the next run time",
        )
    })?;
    let period_month = local_now
        .date()
        .with_day(1)
        .and_then(|d| {
            if offset >= 0 {
                d.checked_add_months(chrono::Months::new(offset as u32))
            } else {
                d.checked_sub_months(chrono::Months::new(offset.unsigned_abs() as u32))
            }
        })
        .ok_or_else(|| {
            BlockError::failed("対象月を求められませんでした", "cannot compute the period")
        })?;
    let seconds = chrono::SecondsFormat::Secs;
    Ok(Outputs::new()
        .with("triggered_at", json!(now.to_rfc3339_opts(seconds, false)))
        .with("period", json!(period_month.format("%Y-%m").to_string()))
        .with("next_run_at", json!(next.to_rfc3339_opts(seconds, false)))
        .with("schedule", schedule))
}

builtin!("schedule.trigger", schedule_trigger);
