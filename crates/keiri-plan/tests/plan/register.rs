//! Registering plans to designs/.

use chrono::NaiveDate;
use keiri_plan::{load_plan, register};

fn now() -> chrono::NaiveDateTime {
    NaiveDate::from_ymd_opt(2025, 4, 30)
        .unwrap()
        .and_hms_opt(9, 5, 0)
        .unwrap()
}

#[test]
fn writes_once_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let designs = dir.path().join("designs");
    let text = "id: 月次/締め\ngraph: []\n# a comment that must be kept\n";
    let plan = load_plan(text).unwrap().plan;
    let a = register(&plan, text, 0, &designs, now()).unwrap();
    let b = register(&plan, text, 0, &designs, now()).unwrap();
    assert_eq!(a.file_name().unwrap(), "月次_締め_202504300905.yaml");
    assert_eq!(b.file_name().unwrap(), "月次_締め_202504300905_2.yaml");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), text);
    assert_eq!(
        std::fs::read_dir(&designs).unwrap().count(),
        2,
        "no temp files left"
    );
}

#[test]
fn refuses_an_invalid_plan() {
    let dir = tempfile::tempdir().unwrap();
    let plan = load_plan("id: p\ngraph: []\n").unwrap().plan;
    let err = register(&plan, "", 2, dir.path(), now()).unwrap_err();
    assert!(err.to_string().contains("2 validation error"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn designs_index_finds_plans_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let plan = load_plan("id: close\ngraph: []\n").unwrap().plan;
    register(&plan, "id: close\ngraph: []\n", 0, dir.path(), now()).unwrap();
    let index = keiri_plan::designs_index(dir.path());
    assert!(index.contains_key("close"));
}

#[test]
fn a_previewed_stamp_names_the_minute_it_shows() {
    let time = keiri_plan::parse_stamp("202504300905").unwrap();
    assert_eq!(time, now());
    let dir = tempfile::tempdir().unwrap();
    let plan = load_plan("id: 請求書チェック\ngraph: []\n").unwrap().plan;
    let saved = register(
        &plan,
        "id: 請求書チェック\ngraph: []\n",
        0,
        dir.path(),
        time,
    )
    .unwrap();
    assert_eq!(
        saved.file_name().unwrap(),
        "請求書チェック_202504300905.yaml"
    );
}

#[test]
fn a_stamp_that_is_not_a_real_minute_is_refused() {
    for bad in [
        "",
        "20250430090",
        "2025043009050",
        "202513300905",
        "202504310905",
        "202504302460",
        "2025-04-30T9",
        "２０２５０４３００９０５",
        "../../etc/pw",
    ] {
        assert_eq!(keiri_plan::parse_stamp(bad), None, "{bad:?}");
    }
}
