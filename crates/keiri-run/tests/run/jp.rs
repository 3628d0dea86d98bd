//! Japanese accounting values: hand-written expectations, and round trips as properties.

use chrono::NaiveDate;
use keiri_run::jp::{
    self, AmountBasis, FiscalYearLabel, NegativeMarkers, Rounding, TaxRate, fiscal_period,
    parse_amount, parse_date,
};
use proptest::prelude::*;

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

#[test]
fn dates() {
    let cases: &[(&str, Option<NaiveDate>)] = &[
        ("令和6年4月1日", Some(d(2024, 4, 1))),
        ("令和６年４月１日", Some(d(2024, 4, 1))),
        ("R6.4.1", Some(d(2024, 4, 1))),
        ("R06/04/01", Some(d(2024, 4, 1))),
        ("r6-4-1", Some(d(2024, 4, 1))),
        ("H31.4.30", Some(d(2019, 4, 30))),
        ("平成31年4月30日", Some(d(2019, 4, 30))),
        ("令和元年5月1日", Some(d(2019, 5, 1))),
        ("平成元年1月8日", Some(d(1989, 1, 8))),
        ("昭和64年1月7日", Some(d(1989, 1, 7))),
        ("S50.12.31", Some(d(1975, 12, 31))),
        ("㋿6年4月1日", Some(d(2024, 4, 1))),
        ("㍻30年3月31日", Some(d(2018, 3, 31))),
        ("2024年4月1日", Some(d(2024, 4, 1))),
        ("2024/4/1", Some(d(2024, 4, 1))),
        ("２０２４／０４／０１", Some(d(2024, 4, 1))),
        ("2024-04-01", Some(d(2024, 4, 1))),
        ("2024.4.1", Some(d(2024, 4, 1))),
        ("20240401", Some(d(2024, 4, 1))),
        ("2024/4/1(月)", Some(d(2024, 4, 1))),
        ("2024/4/1（月）", Some(d(2024, 4, 1))),
        ("2024-04-01 10:30:00", Some(d(2024, 4, 1))),
        ("2024-04-01T10:30:00", Some(d(2024, 4, 1))),
        (" 2024/12/31 ", Some(d(2024, 12, 31))),
        ("2024/2/30", None),
        ("令和0年1月1日", None),
        ("2024年4月", None),
        ("4/1", None),
        ("abc", None),
        ("", None),
        ("2024/4/1/5", None),
    ];
    for (text, expect) in cases {
        assert_eq!(parse_date(text), *expect, "{text}");
    }
}

#[test]
fn excel_serials() {
    assert_eq!(jp::excel_serial_date(45383.0), Some(d(2024, 4, 1)));
    assert_eq!(jp::excel_serial_date(1.0), Some(d(1899, 12, 31)));
    assert_eq!(jp::excel_serial_date(0.0), None);
}

#[test]
fn amounts() {
    let m = NegativeMarkers::default();
    let cases: &[(&str, Result<Option<f64>, ()>)] = &[
        ("1234", Ok(Some(1234.0))),
        ("1,234", Ok(Some(1234.0))),
        ("¥1,234", Ok(Some(1234.0))),
        ("￥１，２３４", Ok(Some(1234.0))),
        ("1,234円", Ok(Some(1234.0))),
        ("\\1,234", Ok(Some(1234.0))),
        ("△1,234", Ok(Some(-1234.0))),
        ("▲1,234", Ok(Some(-1234.0))),
        ("(1,234)", Ok(Some(-1234.0))),
        ("（１，２３４）", Ok(Some(-1234.0))),
        ("-1,234", Ok(Some(-1234.0))),
        ("−1,234", Ok(Some(-1234.0))),
        ("¥-1,234", Ok(Some(-1234.0))),
        ("-¥1,234", Ok(Some(-1234.0))),
        ("▲ 500円", Ok(Some(-500.0))),
        ("1,234.5", Ok(Some(1234.5))),
        ("0", Ok(Some(0.0))),
        ("", Ok(None)),
        ("   ", Ok(None)),
        ("abc", Err(())),
        ("12a", Err(())),
        ("--5", Err(())),
        ("(△5)", Err(())),
        ("円", Err(())),
    ];
    for (text, expect) in cases {
        assert_eq!(parse_amount(text, &m).map_err(|_| ()), *expect, "{text}");
    }
    // Only the markers the user names count: here "-" is not a negative sign.
    let triangles = NegativeMarkers::from_list(&["▲".into(), "△".into()]);
    assert!(parse_amount("-5", &triangles).is_err());
    assert!(parse_amount("(5)", &triangles).is_err());
    assert_eq!(parse_amount("△5", &triangles), Ok(Some(-5.0)));
}

#[test]
fn tax() {
    use AmountBasis::{Excluded, Included};
    use Rounding::{Ceil, Floor, Round};
    // (amount, rate, basis, rounding) -> (net, tax, gross), computed by hand.
    type Case = (f64, TaxRate, AmountBasis, Rounding, (f64, f64, f64));
    let cases: &[Case] = &[
        (
            1000.0,
            TaxRate::STANDARD,
            Excluded,
            Floor,
            (1000.0, 100.0, 1100.0),
        ),
        (
            1234.0,
            TaxRate::STANDARD,
            Excluded,
            Floor,
            (1234.0, 123.0, 1357.0),
        ),
        (
            1235.0,
            TaxRate::STANDARD,
            Excluded,
            Round,
            (1235.0, 124.0, 1359.0),
        ),
        (
            1231.0,
            TaxRate::STANDARD,
            Excluded,
            Ceil,
            (1231.0, 124.0, 1355.0),
        ),
        (
            1230.0,
            TaxRate::STANDARD,
            Excluded,
            Ceil,
            (1230.0, 123.0, 1353.0),
        ),
        (
            1080.0,
            TaxRate::REDUCED,
            Included,
            Floor,
            (1000.0, 80.0, 1080.0),
        ),
        (
            1100.0,
            TaxRate::STANDARD,
            Included,
            Floor,
            (1000.0, 100.0, 1100.0),
        ),
        // 1000 × 10/110 = 90.909…: 切り捨て 90, 四捨五入 91, 切り上げ 91.
        (
            1000.0,
            TaxRate::STANDARD,
            Included,
            Floor,
            (910.0, 90.0, 1000.0),
        ),
        (
            1000.0,
            TaxRate::STANDARD,
            Included,
            Round,
            (909.0, 91.0, 1000.0),
        ),
        (
            1000.0,
            TaxRate::STANDARD,
            Included,
            Ceil,
            (909.0, 91.0, 1000.0),
        ),
        // 598 × 8 % = 47.84.
        (
            598.0,
            TaxRate::REDUCED,
            Excluded,
            Floor,
            (598.0, 47.0, 645.0),
        ),
        (
            598.0,
            TaxRate::REDUCED,
            Excluded,
            Round,
            (598.0, 48.0, 646.0),
        ),
        // A return rounds symmetrically: -1234 × 10 % = -123.4 → -123.
        (
            -1234.0,
            TaxRate::STANDARD,
            Excluded,
            Floor,
            (-1234.0, -123.0, -1357.0),
        ),
    ];
    for &(amount, rate, basis, rounding, (net, tax, gross)) in cases {
        let s = jp::tax_of(amount, rate, basis, rounding);
        assert_eq!(
            (s.net, s.tax, s.gross),
            (net, tax, gross),
            "{amount} {rate:?} {basis:?} {rounding:?}"
        );
    }
}

#[test]
fn rates_and_rounding_names() {
    for (text, expect) in [
        ("10%", 1000),
        ("１０％", 1000),
        ("8", 800),
        ("0.08", 800),
        ("軽減8%", 800),
        ("0.1", 1000),
    ] {
        assert_eq!(TaxRate::parse(text), Some(TaxRate(expect)), "{text}");
    }
    assert_eq!(TaxRate::parse("非課税"), None);
    assert_eq!(Rounding::parse("切り捨て"), Some(Rounding::Floor));
    assert_eq!(Rounding::parse("四捨五入"), Some(Rounding::Round));
    assert_eq!(Rounding::parse("切り上げ"), Some(Rounding::Ceil));
    assert_eq!(Rounding::parse("banker"), None);
    assert!(jp::is_reduced_flag(&serde_json::json!("※")));
    assert!(jp::is_reduced_flag(&serde_json::json!("軽")));
    assert!(jp::is_reduced_flag(&serde_json::json!(true)));
    assert!(!jp::is_reduced_flag(&serde_json::json!("")));
}

#[test]
fn per_invoice_rounding_differs_from_per_line() {
    // Three lines of 333 yen at 10 %: per line 33 + 33 + 33 = 99; per invoice 999 × 10 % = 99.9 → 99.
    // Three lines of 105 yen at 8 %: per line 8 × 3 = 24; per invoice 315 × 8 % = 25.2 → 25.
    let line: f64 = (0..3)
        .map(|_| {
            jp::tax_of(
                105.0,
                TaxRate::REDUCED,
                AmountBasis::Excluded,
                Rounding::Floor,
            )
            .tax
        })
        .sum();
    let invoice = jp::tax_of(
        315.0,
        TaxRate::REDUCED,
        AmountBasis::Excluded,
        Rounding::Floor,
    )
    .tax;
    assert_eq!((line, invoice), (24.0, 25.0));
    assert_eq!(
        jp::allocate(25.0, &[105.0, 105.0, 105.0]),
        vec![9.0, 8.0, 8.0]
    );
    assert_eq!(
        jp::allocate(100.0, &[500.0, 300.0, 200.0]),
        vec![50.0, 30.0, 20.0]
    );
    assert_eq!(jp::allocate(7.0, &[1.0, 1.0]), vec![4.0, 3.0]);
}

#[test]
fn fiscal_periods() {
    let p = fiscal_period(d(2025, 3, 31), 4, FiscalYearLabel::StartYear).unwrap();
    assert_eq!((p.fiscal_year, p.quarter, p.month), (2024, 4, 12));
    assert_eq!((p.year_start, p.year_end), (d(2024, 4, 1), d(2025, 3, 31)));
    assert_eq!(
        (p.quarter_start, p.quarter_end),
        (d(2025, 1, 1), d(2025, 3, 31))
    );
    assert_eq!(
        (p.month_start, p.month_end),
        (d(2025, 3, 1), d(2025, 3, 31))
    );
    let p = fiscal_period(d(2024, 4, 1), 4, FiscalYearLabel::EndYear).unwrap();
    assert_eq!((p.fiscal_year, p.quarter, p.month), (2025, 1, 1));
    let p = fiscal_period(d(2024, 2, 29), 4, FiscalYearLabel::StartYear).unwrap();
    assert_eq!(
        (p.fiscal_year, p.quarter, p.month, p.month_end),
        (2023, 4, 11, d(2024, 2, 29))
    );
    // A December year end (January start): the calendar year under either label.
    let p = fiscal_period(d(2024, 7, 15), 1, FiscalYearLabel::EndYear).unwrap();
    assert_eq!((p.fiscal_year, p.quarter, p.month), (2024, 3, 7));
    // A September year end (October start).
    let p = fiscal_period(d(2024, 10, 1), 10, FiscalYearLabel::StartYear).unwrap();
    assert_eq!(
        (p.fiscal_year, p.quarter, p.quarter_end),
        (2024, 1, d(2024, 12, 31))
    );
    assert!(fiscal_period(d(2024, 1, 1), 13, FiscalYearLabel::StartYear).is_none());
}

#[test]
fn width_folding() {
    assert_eq!(jp::fold_width("ＡＢＣ　１２３－４"), "ABC 123-4");
    assert_eq!(jp::fold_width("請求書"), "請求書");
}

fn amount_text(n: i64, style: u8) -> String {
    let grouped = {
        let digits = n.unsigned_abs().to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    let body = match style % 4 {
        0 => grouped,
        1 => format!("¥{grouped}"),
        2 => format!("{grouped}円"),
        _ => grouped
            .chars()
            .map(|c| {
                if c.is_ascii_digit() {
                    char::from_u32(c as u32 + 0xFEE0).unwrap()
                } else {
                    '，'
                }
            })
            .collect(),
    };
    if n >= 0 {
        return body;
    }
    match style / 4 % 4 {
        0 => format!("△{body}"),
        1 => format!("▲{body}"),
        2 => format!("({body})"),
        _ => format!("-{body}"),
    }
}

proptest! {
    #[test]
    fn wareki_round_trips(days in 0i64..(200 * 365)) {
        let date = d(1900, 1, 1) + chrono::Duration::days(days);
        let text = jp::format_wareki(date).unwrap();
        prop_assert_eq!(parse_date(&text), Some(date), "{}", text);
    }

    #[test]
    fn iso_dates_round_trip(days in 0i64..(300 * 365)) {
        let date = d(1850, 1, 1) + chrono::Duration::days(days);
        prop_assert_eq!(parse_date(&date.format("%Y-%m-%d").to_string()), Some(date));
        prop_assert_eq!(parse_date(&date.format("%Y年%-m月%-d日").to_string()), Some(date));
    }

    #[test]
    fn amounts_round_trip(n in -10_000_000_000i64..10_000_000_000, style in 0u8..16) {
        let text = amount_text(n, style);
        prop_assert_eq!(parse_amount(&text, &NegativeMarkers::default()), Ok(Some(n as f64)), "{}", text);
    }

    #[test]
    fn parsers_never_panic(s in "\\PC{0,40}") {
        let _ = parse_date(&s);
        let _ = parse_amount(&s, &NegativeMarkers::default());
        let _ = TaxRate::parse(&s);
    }

    #[test]
    fn allocation_adds_up(total in -100_000i64..100_000, shares in proptest::collection::vec(1u32..100_000, 1..20)) {
        let shares: Vec<f64> = shares.into_iter().map(f64::from).collect();
        let parts = jp::allocate(total as f64, &shares);
        prop_assert_eq!(parts.iter().sum::<f64>(), total as f64);
        prop_assert!(parts.iter().all(|p| p.fract() == 0.0));
    }

    #[test]
    fn included_and_excluded_agree(net in 0i64..10_000_000, reduced in any::<bool>()) {
        // With 切り捨て on both sides, the gross of a tax-excluded amount read back as
        // tax-included splits into the same net: gross × r/(1+r) = tax + (fraction)/(1+r),
        // and that fraction is below one yen.
        let rate = if reduced { TaxRate::REDUCED } else { TaxRate::STANDARD };
        let ex = jp::tax_of(net as f64, rate, AmountBasis::Excluded, Rounding::Floor);
        let inc = jp::tax_of(ex.gross, rate, AmountBasis::Included, Rounding::Floor);
        prop_assert_eq!(inc.net, ex.net);
    }
}

/// Every holiday of `year` as (month, day, name), from [`jp::holiday_name`].
fn holidays(year: i32) -> Vec<(u32, u32, &'static str)> {
    use chrono::Datelike;
    d(year, 1, 1)
        .iter_days()
        .take_while(|x| x.year() == year)
        .filter_map(|x| jp::holiday_name(x).map(|n| (x.month(), x.day(), n)))
        .collect()
}

#[test]
fn holidays_of_2025_with_three_substitute_days() {
    // 2/23, 5/4 and 11/23 fall on Sundays. 5/4's substitute skips 5/5 (a holiday) to 5/6.
    // 春分 ⌊20.8431 + 0.242194 × 45 − ⌊45 / 4⌋⌋ = ⌊20.74⌋ = 20; 秋分 ⌊23.2488 + 10.8987 − 11⌋ = 23.
    // Happy Mondays: 2nd Monday of January (6, 13), 3rd of July (7, 14, 21) and September
    // (1, 8, 15), 2nd of October (6, 13).
    assert_eq!(
        holidays(2025),
        [
            (1, 1, "元日"),
            (1, 13, "成人の日"),
            (2, 11, "建国記念の日"),
            (2, 23, "天皇誕生日"),
            (2, 24, "振替休日"),
            (3, 20, "春分の日"),
            (4, 29, "昭和の日"),
            (5, 3, "憲法記念日"),
            (5, 4, "みどりの日"),
            (5, 5, "こどもの日"),
            (5, 6, "振替休日"),
            (7, 21, "海の日"),
            (8, 11, "山の日"),
            (9, 15, "敬老の日"),
            (9, 23, "秋分の日"),
            (10, 13, "スポーツの日"),
            (11, 3, "文化の日"),
            (11, 23, "勤労感謝の日"),
            (11, 24, "振替休日"),
        ]
    );
}

#[test]
fn holidays_of_2019_the_change_of_era() {
    // 4/30 and 5/2 are 国民の休日 between two holidays; 5/1 and 10/22 were set for 2019 only;
    // no 天皇誕生日 that year (12/23 until 2018, 2/23 from 2020).
    assert_eq!(
        holidays(2019),
        [
            (1, 1, "元日"),
            (1, 14, "成人の日"),
            (2, 11, "建国記念の日"),
            (3, 21, "春分の日"),
            (4, 29, "昭和の日"),
            (4, 30, "国民の休日"),
            (5, 1, "即位の日"),
            (5, 2, "国民の休日"),
            (5, 3, "憲法記念日"),
            (5, 4, "みどりの日"),
            (5, 5, "こどもの日"),
            (5, 6, "振替休日"),
            (7, 15, "海の日"),
            (8, 11, "山の日"),
            (8, 12, "振替休日"),
            (9, 16, "敬老の日"),
            (9, 23, "秋分の日"),
            (10, 14, "体育の日"),
            (10, 22, "即位礼正殿の儀の行われる日"),
            (11, 3, "文化の日"),
            (11, 4, "振替休日"),
            (11, 23, "勤労感謝の日"),
        ]
    );
}

#[test]
fn moved_and_sandwiched_holidays() {
    type Case = ((i32, u32, u32), Option<&'static str>);
    let cases: &[Case] = &[
        // Tokyo Olympics: 海の日, スポーツの日 and 山の日 moved in 2020 and 2021.
        ((2020, 7, 20), None),
        ((2020, 7, 23), Some("海の日")),
        ((2020, 7, 24), Some("スポーツの日")),
        ((2020, 8, 10), Some("山の日")),
        ((2020, 8, 11), None),
        ((2020, 10, 12), None),
        ((2021, 7, 22), Some("海の日")),
        ((2021, 8, 8), Some("山の日")),
        ((2021, 8, 9), Some("振替休日")),
        // 2026: 敬老の日 9/21 and 秋分の日 9/23 put 9/22 between two holidays.
        ((2026, 9, 21), Some("敬老の日")),
        ((2026, 9, 22), Some("国民の休日")),
        ((2026, 9, 23), Some("秋分の日")),
        // Before 2007 4/29 was みどりの日 and a Sunday holiday moved to the Monday only.
        ((2006, 4, 29), Some("みどりの日")),
        ((2007, 4, 29), Some("昭和の日")),
        ((2018, 12, 23), Some("天皇誕生日")),
        ((2018, 12, 24), Some("振替休日")),
        ((2025, 12, 31), None),
    ];
    for &((y, m, day), want) in cases {
        assert_eq!(jp::holiday_name(d(y, m, day)), want, "{y}-{m}-{day}");
    }
}

#[test]
fn business_days_skip_weekends_holidays_and_the_bank_year_end() {
    let cases = [
        // Golden Week 2025: Thu 5/1 and Fri 5/2 work, 5/3–5/6 off, Wed 5/7 works.
        (d(2025, 5, 1), true),
        (d(2025, 5, 2), true),
        (d(2025, 5, 6), false),
        (d(2025, 5, 7), true),
        // 12/31 to 1/3 are bank holidays even on weekdays (Wed 2025-12-31, Fri 2026-01-02).
        (d(2025, 12, 30), true),
        (d(2025, 12, 31), false),
        (d(2026, 1, 2), false),
        (d(2026, 1, 5), true),
        (d(2025, 3, 29), false),
        (d(2025, 3, 31), true),
    ];
    for (date, want) in cases {
        assert_eq!(jp::is_business_day(date), want, "{date}");
    }
}

#[test]
fn every_month_from_2000_to_2099_has_fifteen_business_days() {
    // schedule.trigger accepts the 1st to the 15th business day: it must exist in every month.
    for year in 2000..=2099 {
        for month in 1..=12 {
            let first = d(year, month, 1);
            let count = first
                .iter_days()
                .take_while(|x| chrono::Datelike::month(x) == month)
                .filter(|x| jp::is_business_day(*x))
                .count();
            assert!(count >= 15, "{year}-{month} has {count} business days");
        }
    }
}
