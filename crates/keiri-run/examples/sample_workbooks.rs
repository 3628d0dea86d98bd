//! Writes the sample workbooks under `samples/` (the receivables list, the trial balance and
//! two months of payroll) from the data below, so the binary files the repo ships can be
//! rebuilt and reviewed as text: `cargo run -p keiri-run --example sample_workbooks`.

use std::error::Error;
use std::path::{Path, PathBuf};

use rust_xlsxwriter::{ExcelDateTime, Format, Workbook};

/// A cell of the sample data.
enum Cell {
    Text(&'static str),
    Number(f64),
    Date(u16, u8, u8),
    Empty,
}

use Cell::{Date, Empty, Number, Text};

fn write(
    path: &Path,
    sheet_name: &str,
    header: &[&str],
    rows: &[Vec<Cell>],
) -> Result<(), Box<dyn Error>> {
    let mut book = Workbook::new();
    let sheet = book.add_worksheet();
    sheet.set_name(sheet_name)?;
    let bold = Format::new().set_bold();
    let date = Format::new().set_num_format("yyyy/mm/dd");
    let yen = Format::new().set_num_format("#,##0");
    for (c, h) in header.iter().enumerate() {
        sheet.write_string_with_format(0, u16::try_from(c)?, *h, &bold)?;
    }
    for (r, row) in rows.iter().enumerate() {
        let r = u32::try_from(r)? + 1;
        for (c, cell) in row.iter().enumerate() {
            let c = u16::try_from(c)?;
            match cell {
                Text(s) => {
                    sheet.write_string(r, c, *s)?;
                }
                Number(x) => {
                    sheet.write_number_with_format(r, c, *x, &yen)?;
                }
                Date(y, m, d) => {
                    sheet.write_datetime_with_format(
                        r,
                        c,
                        ExcelDateTime::from_ymd(*y, *m, *d)?,
                        &date,
                    )?;
                }
                Empty => {}
            }
        }
    }
    sheet.set_column_width(0, 14)?;
    sheet.set_column_width(1, 24)?;
    book.save(path)?;
    Ok(())
}

fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples")
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = samples_dir();
    write(
        &dir.join("receivables.xlsx"),
        "売掛金",
        &[
            "invoice_no",
            "customer",
            "customer_kana",
            "amount",
            "due_date",
        ],
        &[
            vec![
                Text("AR-1001"),
                Text("株式会社山田商事"),
                Text("ヤマダショウジ"),
                Number(330_000.0),
                Date(2025, 3, 31),
            ],
            vec![
                Text("AR-1002"),
                Text("有限会社佐藤工業"),
                Text("サトウコウギョウ"),
                Number(132_000.0),
                Date(2025, 3, 31),
            ],
            vec![
                Text("AR-1003"),
                Text("株式会社鈴木製作所"),
                Text("スズキセイサクショ"),
                Number(88_000.0),
                Date(2025, 3, 25),
            ],
            vec![
                Text("AR-1004"),
                Text("株式会社鈴木製作所"),
                Text("スズキセイサクショ"),
                Number(44_000.0),
                Date(2025, 3, 31),
            ],
            vec![
                Text("AR-1005"),
                Text("合同会社田中デザイン"),
                Text("タナカデザイン"),
                Number(220_000.0),
                Date(2025, 3, 31),
            ],
            vec![
                Text("AR-1006"),
                Text("株式会社高橋物流"),
                Text("タカハシブツリュウ"),
                Number(550_000.0),
                Date(2025, 4, 30),
            ],
            vec![
                Text("AR-1007"),
                Text("株式会社伊藤電機"),
                Text("イトウデンキ"),
                Number(77_000.0),
                Date(2025, 3, 31),
            ],
        ],
    )?;
    write(
        &dir.join("trial_balance.xlsx"),
        "試算表",
        &["account", "current", "prior"],
        &[
            vec![Text("現金"), Number(520_000.0), Number(480_000.0)],
            vec![Text("普通預金"), Number(12_800_000.0), Number(11_900_000.0)],
            vec![Text("売掛金"), Number(4_620_000.0), Number(3_850_000.0)],
            vec![Text("商品"), Number(2_100_000.0), Number(2_050_000.0)],
            vec![Text("未払金"), Number(1_450_000.0), Number(1_180_000.0)],
            vec![Text("売上高"), Number(9_800_000.0), Number(9_200_000.0)],
            vec![Text("給料手当"), Number(3_200_000.0), Number(3_150_000.0)],
            vec![Text("広告宣伝費"), Number(680_000.0), Number(250_000.0)],
            vec![Text("旅費交通費"), Number(95_000.0), Number(60_000.0)],
            vec![Text("通信費"), Number(88_000.0), Number(85_000.0)],
        ],
    )?;
    let payroll_header = [
        "employee_no",
        "name",
        "department",
        "base_pay",
        "allowance",
        "gross_pay",
        "bank_account",
        "my_number",
    ];
    write(
        &dir.join("payroll_prior.xlsx"),
        "給与",
        &payroll_header,
        &[
            vec![
                Text("E001"),
                Text("山田太郎"),
                Text("営業部"),
                Number(300_000.0),
                Number(50_000.0),
                Number(350_000.0),
                Text("0001-001-1234567"),
                Text("123456789012"),
            ],
            vec![
                Text("E002"),
                Text("佐藤花子"),
                Text("経理部"),
                Number(280_000.0),
                Number(30_000.0),
                Number(310_000.0),
                Text("0001-001-2345678"),
                Text("234567890123"),
            ],
            vec![
                Text("E003"),
                Text("鈴木一郎"),
                Text("製造部"),
                Number(255_000.0),
                Number(30_000.0),
                Number(285_000.0),
                Text("0005-123-3456789"),
                Text("345678901234"),
            ],
            vec![
                Text("E004"),
                Text("高橋美咲"),
                Text("総務部"),
                Number(268_000.0),
                Number(30_000.0),
                Number(298_000.0),
                Text("0009-456-4567890"),
                Text("456789012345"),
            ],
            vec![
                Text("E005"),
                Text("田中健"),
                Text("営業部"),
                Number(370_000.0),
                Number(50_000.0),
                Number(420_000.0),
                Text("0001-002-5678901"),
                Text("567890123456"),
            ],
            vec![
                Text("E006"),
                Text("伊藤誠"),
                Text("製造部"),
                Number(240_000.0),
                Number(25_000.0),
                Number(265_000.0),
                Text("0005-124-6789012"),
                Text("678901234567"),
            ],
        ],
    )?;
    write(
        &dir.join("payroll_current.xlsx"),
        "給与",
        &payroll_header,
        &[
            vec![
                Text("E001"),
                Text("山田太郎"),
                Text("営業部"),
                Number(302_000.0),
                Number(50_000.0),
                Number(352_000.0),
                Text("0001-001-1234567"),
                Text("123456789012"),
            ],
            vec![
                Text("E002"),
                Text("佐藤花子"),
                Text("経理部"),
                Number(280_000.0),
                Number(30_000.0),
                Number(310_000.0),
                Text("0001-001-2345678"),
                Text("234567890123"),
            ],
            vec![
                Text("E003"),
                Text("鈴木一郎"),
                Text("製造部"),
                Number(255_000.0),
                Number(130_000.0),
                Number(385_000.0),
                Text("0005-123-3456789"),
                Text("345678901234"),
            ],
            vec![
                Text("E004"),
                Text("高橋美咲"),
                Text("総務部"),
                Number(268_000.0),
                Number(30_000.0),
                Number(298_000.0),
                Text("0009-456-4567890"),
                Text("456789012345"),
            ],
            vec![
                Text("E005"),
                Text("田中健"),
                Text("営業部"),
                Number(370_000.0),
                Number(50_000.0),
                Number(420_000.0),
                Text("0001-002-5678901"),
                Text("567890123456"),
            ],
            vec![
                Text("E007"),
                Text("渡辺翔"),
                Text("営業部"),
                Number(220_000.0),
                Number(20_000.0),
                Number(240_000.0),
                Text("0001-003-7890123"),
                Text("789012345678"),
            ],
            vec![
                Empty,
                Text("臨時 木村"),
                Text("製造部"),
                Number(50_000.0),
                Number(0.0),
                Number(50_000.0),
                Text("0005-125-8901234"),
                Empty,
            ],
            vec![
                Text("E008"),
                Text("小林直子"),
                Text("総務部"),
                Number(0.0),
                Number(-12_000.0),
                Number(-12_000.0),
                Text("0009-457-9012345"),
                Text("890123456789"),
            ],
        ],
    )?;
    Ok(())
}
