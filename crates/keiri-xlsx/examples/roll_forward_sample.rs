//! Writes `samples/retirement_schedule.xlsx`, the quarter-end retirement-benefit schedule the
//! `closing/period_roll_forward` template rolls forward (see `samples/README.md` for its
//! contents and the results worked out by hand). Made with the engine's own `workbook_make`,
//! so the sample is a workbook as the studio writes one:
//!
//! ```sh
//! cargo run -p keiri-xlsx --example roll_forward_sample
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples");
    let out = root.join("retirement_schedule.xlsx");
    if out.exists() {
        std::fs::remove_file(&out).unwrap();
    }
    let date = |d: &str| json!({"kind": "date", "value": d});
    let people = [
        (
            "EMP001",
            "田中太郎",
            "課長",
            "2012-04-01",
            json!(null),
            json!(null),
        ),
        (
            "EMP002",
            "佐藤花子",
            "主任",
            "2016-10-01",
            json!(null),
            json!(null),
        ),
        (
            "EMP003",
            "鈴木一郎",
            "一般職",
            "2019-07-16",
            date("2024-11-30"),
            json!(650000),
        ),
        (
            "EMP004",
            "高橋美咲",
            "部長",
            "2008-04-01",
            json!(null),
            json!(null),
        ),
        (
            "EMP005",
            "伊藤健太",
            "一般職",
            "2022-04-01",
            json!(null),
            json!(null),
        ),
    ];
    let rows: Vec<serde_json::Value> = people
        .iter()
        .map(|(id, name, title, joined, left, paid)| {
            json!([id, name, title, date(joined), left, paid])
        })
        .collect();
    // Years of service to the quarter end, and the provision: 100,000 yen a year for those
    // still employed, none once they have left.
    let years = "=IF(D6=\"\",\"\",DATEDIF(D6,$D$2,\"y\"))";
    let provision = "=IF(D6=\"\",\"\",IF(E6<>\"\",0,G6*100000))";
    let req: keiri_xlsx::MakeRequest = serde_json::from_value(json!({
        "out_path": out.display().to_string(),
        "sheet": "2024.12",
        "ops": [
            {"op": "set_value", "cell": "A1", "value": "退職給付引当金明細"},
            {"op": "set_style", "cell": "A1", "bold": true, "font_size": 14},
            {"op": "set_range_values", "range": "A2:D2",
                "values": [["期首", date("2024-04-01"), "四半期末", date("2024-12-31")]]},
            {"op": "set_range_values", "range": "A3:D3",
                "values": [["当年度退職金支払額", null, null, 650000]]},
            {"op": "set_formula", "cell": "G3", "formula": "=SUM(H6:H12)"},
            {"op": "set_value", "cell": "F3", "value": "引当金合計"},
            {"op": "set_range_values", "range": "A5:H5", "values": [[
                "社員番号", "氏名", "役職", "入社日", "退職年月日", "退職金支給額", "勤続年数",
                "引当金"]]},
            {"op": "set_style", "range": "A5:H5", "bold": true, "fill_color": "#DDEBF7",
                "horizontal_align": "center"},
            {"op": "set_range_values", "range": "A6:F10", "values": rows},
            {"op": "fill_formula", "range": "G6:G12", "base_cell": "G6", "formula": years},
            {"op": "fill_formula", "range": "H6:H12", "base_cell": "H6", "formula": provision},
            {"op": "draw_grid_border", "range": "A5:H12"},
            {"op": "set_dimensions", "columns": ["A", "C", "G"], "column_width": 10},
            {"op": "set_dimensions", "columns": ["B", "D", "E", "F", "H"], "column_width": 14},
        ],
    }))
    .unwrap();
    let env = keiri_xlsx::PatchEnv::new(keiri_fs::PathPolicy::new([root.as_path()]));
    let res = keiri_xlsx::workbook_make(&req, &env).unwrap();
    assert!(res.error.is_none(), "{:?}", res.error);
    println!("wrote {}", res.out_path);
}
