//! Japan Standard Time, the zone times are shown in.

/// Japan Standard Time (UTC+9, no daylight saving): the zone times are shown in.
pub(crate) fn jst() -> chrono::FixedOffset {
    use chrono::Offset;
    chrono::FixedOffset::east_opt(9 * 3600).unwrap_or_else(|| chrono::Utc.fix())
}

/// `time` in JST as ISO 8601 with seconds and offset (`2025-03-31T09:30:00+09:00`).
pub(crate) fn jst_text(time: chrono::DateTime<chrono::Utc>) -> String {
    time.with_timezone(&jst())
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, false)
}
