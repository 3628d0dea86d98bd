"""Writes a realistic Japanese journal export for the journal benchmark.

    python3 generate.py ROWS OUT.csv

Shift_JIS (CP932) with CRLF line ends, as 弥生-style accounting packages export it, for the
fiscal year April 2024 – March 2025. Dates are written the ways such exports write them:
`2024/04/05` mostly, also `2024/4/5`, 和暦 (`令和6年4月5日`, `R6.4.5`) and full-width digits.
Amounts carry thousands separators, `￥` or the Shift_JIS yen byte (read back as `\\`), `円`,
full-width digits, and the negatives `△1,234` and `-1234`. Standard library only; the same
arguments always give the same file.
"""

import random
import sys

ACCOUNTS = ["現金", "普通預金", "売掛金", "買掛金", "未払金", "旅費交通費", "会議費", "交際費",
            "消耗品費", "通信費", "水道光熱費", "支払手数料", "地代家賃", "売上高", "仕入高"]
DEPARTMENTS = ["本社", "営業部", "管理部", "東京支店", "大阪支店"]
VENDORS = ["株式会社山田商事", "(株)田中物産", "東京電機㈱", "大阪運輸株式会社", "有限会社鈴木印刷",
           "ＪＲ東日本", "日本郵便", "株式会社ＮＴＴドコモ", "東京電力エナジーパートナー", "アマゾンジャパン合同会社"]
FULL = str.maketrans("0123456789,/", "０１２３４５６７８９，／")
# Month lengths of April 2024 – March 2025 (2025 is not a leap year).
DAYS = {4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31, 1: 31, 2: 28, 3: 31}


def date_text(rng, year, month, day):
    r = rng.random()
    if r < 0.60:
        return f"{year}/{month:02d}/{day:02d}"
    if r < 0.75:
        return f"{year}/{month}/{day}"
    if r < 0.85:
        return f"令和{year - 2018}年{month}月{day}日"
    if r < 0.95:
        return f"R{year - 2018}.{month}.{day}"
    return f"{year}/{month:02d}/{day:02d}".translate(FULL)


def amount_text(rng, amount):
    r = rng.random()
    if r < 0.50:
        return f"{amount:,}"
    if r < 0.65:
        return str(amount)
    if r < 0.73:
        return f"￥{amount:,}"
    if r < 0.78:
        return f"\\{amount:,}"
    if r < 0.86:
        return f"△{amount:,}"
    if r < 0.88:
        return f"-{amount}"
    if r < 0.94:
        return f"{amount:,}".translate(FULL)
    return f"{amount:,}円"


def main():
    rows, out = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(31)
    months = [4, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3]
    with open(out, "w", encoding="cp932", newline="") as f:
        f.write("伝票番号,伝票日付,勘定科目,部門,取引先,金額,摘要\r\n")
        for n in range(rows):
            month = rng.choice(months)
            year = 2024 if month >= 4 else 2025
            day = rng.randint(1, DAYS[month])
            amount = rng.choice([1_100, 3_300, 5_500, 11_000, 55_000]) if rng.random() < 0.2 \
                else rng.randint(1, 500_000)
            account = rng.choice(ACCOUNTS)
            vendor = rng.choice(VENDORS)
            memo = f"{vendor} {month}月分 {rng.choice(['請求', '支払', '精算', '振替'])}"
            f.write(f"{100000 + n},{date_text(rng, year, month, day)},{account},{rng.choice(DEPARTMENTS)},"
                    f"{vendor},\"{amount_text(rng, amount)}\",{memo}\r\n")


if __name__ == "__main__":
    main()
