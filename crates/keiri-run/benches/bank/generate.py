"""Writes a bank statement and a ledger for the bank-lines × ledger benchmark.

    python3 generate.py ROWS OUT_DIR

Two Shift_JIS (CP932) files with CRLF line ends, ROWS lines each, for April 2024 – March 2025:
- `bank.csv`, as an internet-banking export writes it: `取引日` (`2024/04/05`, sometimes
  `2024/4/5`), `入出金区分`, `金額` (`12,345`), half-width kana `摘要`, `残高`;
- `ledger.csv`, as a 弥生-style journal export writes it: `伝票日付` (`2024/04/05`, `2024/4/5`,
  `令和6年4月5日`, `R6.4.5`, full-width digits), `勘定科目`, `取引先`, `金額` (`12,345`, `￥`,
  the Shift_JIS yen byte read back as `\\`, `円`, full-width digits), `摘要`.

About 70 % of the bank lines have a ledger line on the same day for the same amount; 1 % of
the lines on each side are small fixed amounts (bank fees, stamps) that repeat within a day.
Standard library only; the same arguments always give the same files.
"""

import datetime
import os
import random
import sys

FULL = str.maketrans("0123456789,/", "０１２３４５６７８９，／")
PAYERS = ["ﾔﾏﾀﾞｼﾖｳｼﾞ", "ﾀﾅｶﾌﾞﾂｻﾝ", "ﾄｳｷﾖｳﾃﾞﾝｷ", "ｵｵｻｶｳﾝﾕ", "ｽｽﾞｷｲﾝｻﾂ", "ﾆﾎﾝﾕｳﾋﾞﾝ", "ｴﾇﾃｲﾃｲﾄﾞｺﾓ"]
VENDORS = ["株式会社山田商事", "(株)田中物産", "東京電機㈱", "大阪運輸株式会社", "有限会社鈴木印刷", "日本郵便",
           "株式会社ＮＴＴドコモ"]
ACCOUNTS = ["売掛金", "買掛金", "未払金", "支払手数料", "通信費", "地代家賃", "仕入高"]
FIXED = [110, 220, 440, 660, 880]
START = datetime.date(2024, 4, 1)


def bank_date(rng, day):
    return day.strftime("%Y/%m/%d") if rng.random() < 0.8 else f"{day.year}/{day.month}/{day.day}"


def ledger_date(rng, day):
    r = rng.random()
    if r < 0.60:
        return day.strftime("%Y/%m/%d")
    if r < 0.75:
        return f"{day.year}/{day.month}/{day.day}"
    if r < 0.85:
        return f"令和{day.year - 2018}年{day.month}月{day.day}日"
    if r < 0.95:
        return f"R{day.year - 2018}.{day.month}.{day.day}"
    return day.strftime("%Y/%m/%d").translate(FULL)


def ledger_amount(rng, amount):
    r = rng.random()
    if r < 0.55:
        return f"{amount:,}"
    if r < 0.70:
        return str(amount)
    if r < 0.80:
        return f"￥{amount:,}"
    if r < 0.85:
        return f"\\{amount:,}"
    if r < 0.93:
        return f"{amount:,}".translate(FULL)
    return f"{amount:,}円"


def line(rng):
    day = START + datetime.timedelta(days=rng.randrange(365))
    amount = rng.choice(FIXED) if rng.random() < 0.01 else rng.randint(1_000, 3_000_000)
    return day, amount


def main():
    rows, out = int(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(11)
    bank = [line(rng) for _ in range(rows)]
    # The ledger: the bank's line for 70 % of them (in another order), anything else for the rest.
    ledger = [b if rng.random() < 0.7 else line(rng) for b in bank]
    rng.shuffle(ledger)
    balance = 50_000_000
    with open(os.path.join(out, "bank.csv"), "w", encoding="cp932", newline="") as f:
        f.write("取引日,入出金区分,金額,摘要,残高\r\n")
        for day, amount in sorted(bank):
            deposit = rng.random() < 0.5
            balance += amount if deposit else -amount
            kind = "入金" if deposit else "出金"
            memo = f"ﾌﾘｺﾐ {rng.choice(PAYERS)}" if deposit else f"ﾌﾘｺﾐ ﾃｽｳﾘﾖｳ {rng.choice(PAYERS)}"
            f.write(f"{bank_date(rng, day)},{kind},\"{amount:,}\",{memo},\"{balance:,}\"\r\n")
    with open(os.path.join(out, "ledger.csv"), "w", encoding="cp932", newline="") as f:
        f.write("伝票番号,伝票日付,勘定科目,取引先,金額,摘要\r\n")
        for n, (day, amount) in enumerate(ledger):
            vendor = rng.choice(VENDORS)
            f.write(f"{200000 + n},{ledger_date(rng, day)},{rng.choice(ACCOUNTS)},{vendor},"
                    f"\"{ledger_amount(rng, amount)}\",{vendor} {day.month}月分\r\n")


if __name__ == "__main__":
    main()
