//! Dates written as Excel dates: ISO `YYYY-MM-DD` (and `YYYY-MM-DDTHH:MM[:SS]`) text turned
//! into the serial numbers Excel stores, in the workbook's date system, with the number format
//! the cell shows them in.
//!
//! Excel stores a date as a number of days: in the 1900 date system day 1 is 1900-01-01 and,
//! copying a Lotus 1-2-3 bug, 1900 is treated as a leap year, so 1900-02-29 is serial 60 and
//! every date from 1900-03-01 on is one more than its true day count from 1899-12-31. In the
//! 1904 date system (`<workbookPr date1904="1"/>`, old Mac workbooks) day 0 is 1904-01-01 and
//! there is no phantom day. Excel shows no date before its system's first day, so such a date
//! is refused rather than written as a negative number.

/// The number format a date cell gets when it has none (`numFmtId` 0, General).
pub(crate) const DATE_FORMAT: &str = "yyyy/mm/dd";
/// The number format a date-and-time cell gets when it has none.
pub(crate) const DATETIME_FORMAT: &str = "yyyy/mm/dd hh:mm:ss";

/// A calendar date and an optional time of day, as parsed from ISO text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DateTime {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    /// Seconds since midnight (0 for a plain date).
    pub seconds: u32,
}

fn digits(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses exactly `YYYY-MM-DD`; 1900-02-29, which Excel's 1900 date system has, is accepted.
pub(crate) fn parse_date(text: &str) -> Option<DateTime> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year = i64::from(digits(text.get(0..4)?)?);
    let month = digits(text.get(5..7)?)?;
    let day = digits(text.get(8..10)?)?;
    if !(1..=12).contains(&month) || day == 0 {
        return None;
    }
    let excel_leap_day = year == 1900 && month == 2 && day == 29;
    if day > days_in_month(year, month) && !excel_leap_day {
        return None;
    }
    Some(DateTime {
        year,
        month,
        day,
        seconds: 0,
    })
}

/// Parses `YYYY-MM-DDTHH:MM[:SS]` (a space may stand for the `T`; fractional seconds are
/// dropped only when they are zero, so no time is silently rounded) or a plain date.
pub(crate) fn parse_datetime(text: &str) -> Option<DateTime> {
    let text = text.trim();
    if text.len() == 10 {
        return parse_date(text);
    }
    let date = parse_date(text.get(0..10)?)?;
    let sep = text.as_bytes().get(10)?;
    if *sep != b'T' && *sep != b' ' {
        return None;
    }
    let time = text.get(11..)?;
    let (time, fraction) = match time.split_once('.') {
        Some((t, f)) => (t, Some(f)),
        None => (time, None),
    };
    if let Some(f) = fraction
        && (digits(f).is_none() || f.bytes().any(|b| b != b'0'))
    {
        return None;
    }
    let parts: Vec<&str> = time.split(':').collect();
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.len() != 2) {
        return None;
    }
    let hour = digits(parts.first()?)?;
    let minute = digits(parts.get(1)?)?;
    let second = match parts.get(2) {
        Some(s) => digits(s)?,
        None => 0,
    };
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    Some(DateTime {
        seconds: hour * 3600 + minute * 60 + second,
        ..date
    })
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The serial number Excel stores for `d`, or why it cannot be an Excel date.
pub(crate) fn serial(d: DateTime, date1904: bool) -> Result<f64, String> {
    let shown = || format!("{:04}-{:02}-{:02}", d.year.clamp(0, 9999), d.month, d.day);
    let time = f64::from(d.seconds) / 86_400.0;
    if d.year > 9999 {
        return Err(format!(
            "{} is after 9999-12-31, Excel's last date",
            shown()
        ));
    }
    let days = if date1904 {
        if d.year == 1900 && d.month == 2 && d.day == 29 {
            return Err("1900-02-29 does not exist in the 1904 date system".to_string());
        }
        let n = days_from_civil(d.year, d.month, d.day) - days_from_civil(1904, 1, 1);
        if n < 0 {
            return Err(format!(
                "{} is before 1904-01-01, the first date of this workbook's 1904 date system",
                shown()
            ));
        }
        n
    } else if d.year == 1900 && d.month == 2 && d.day == 29 {
        60
    } else {
        let n = days_from_civil(d.year, d.month, d.day) - days_from_civil(1899, 12, 31);
        if n < 1 {
            return Err(format!(
                "{} is before 1900-01-01, Excel's first date",
                shown()
            ));
        }
        // From 1900-03-01 on, Excel counts the phantom 1900-02-29.
        if n >= 60 { n + 1 } else { n }
    };
    Ok(days as f64 + time)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, date1904: bool, want: Result<f64, ()>) {
        let got = parse_datetime(text)
            .ok_or(())
            .and_then(|d| serial(d, date1904).map_err(|_| ()));
        assert_eq!(got, want, "{text} (1904: {date1904})");
    }

    #[test]
    fn serials_as_excel_counts_them() {
        // Worked out by hand: 1900-01-01 is day 1; 1900-02-28 is day 59; the phantom
        // 1900-02-29 is 60; 1900-03-01 is 61. 2025-03-31: 125 years × 365 + 31 leap days
        // (1904…2024, 1900 excluded) = 45,656 days from 1900-01-01 to 2025-01-01, +1 for
        // Excel's day 1, +1 for the phantom day, + 89 days (Jan 31 + Feb 28 + Mar 30) = 45747.
        check("1900-01-01", false, Ok(1.0));
        check("1900-02-28", false, Ok(59.0));
        check("1900-02-29", false, Ok(60.0));
        check("1900-03-01", false, Ok(61.0));
        check("2025-03-31", false, Ok(45747.0));
        check("2024-02-29", false, Ok(45351.0));
        check("9999-12-31", false, Ok(2_958_465.0));
        check("2025-03-31T12:00:00", false, Ok(45747.5));
        check("2025-03-31 06:00", false, Ok(45747.25));
        check("2025-03-31T18:00:00.000", false, Ok(45747.75));
        // The 1904 system counts from 1904-01-01 = 0 with no phantom day: 1,462 fewer.
        check("1904-01-01", true, Ok(0.0));
        check("2025-03-31", true, Ok(44285.0));
        check("1903-12-31", true, Err(()));
        check("1899-12-31", false, Err(()));
        check("1900-02-29", true, Err(()));
    }

    #[test]
    fn only_real_iso_dates_parse() {
        for bad in [
            "2025-02-29",
            "2025-13-01",
            "2025-04-31",
            "2025-3-31",
            "2025/03/31",
            "2025-03-31T24:00",
            "2025-03-31T12:00:00.5",
            "2025-03-31X12:00",
            "２０２５-03-31",
            "",
        ] {
            assert_eq!(parse_datetime(bad), None, "{bad}");
        }
        assert!(parse_date("2025-03-31T00:00").is_none());
    }
}
