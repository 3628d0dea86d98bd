"""Writes a realistic Japanese invoice list for the duplicate-invoice benchmark.

    python3 generate.py ROWS OUT.csv

Shift_JIS (CP932), as accounting packages export it. Vendors are written the ways people
write them (株式会社 before or after the name, (株), ㈱, full-width parentheses and spaces);
amounts carry `￥` and thousands separators; most dates are `yyyy/mm/dd`, some 和暦 (`R7.5.12`).
About 1.5 % of the rows are planted duplicates of an earlier invoice: entered again as is,
a few days later, with two digits of the number swapped, or under another spelling of the
vendor. Standard library only; the same arguments always give the same file.
"""

import csv
import datetime
import random
import sys

SYLLABLES = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワ"
KANJI = ["山田", "田中", "鈴木", "高橋", "伊藤", "渡辺", "中村", "小林", "加藤", "吉田", "東京", "大阪",
         "日本", "北海", "九州", "中央", "第一", "三和", "富士", "旭"]
TRADES = ["商事", "物産", "工業", "電機", "建設", "運輸", "食品", "印刷", "システム", "サービス", "製作所", "興業"]


def vendor_names(rng, count):
    names = set()
    while len(names) < count:
        stem = rng.choice(KANJI) if rng.random() < 0.6 else "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        names.add(stem + rng.choice(TRADES))
    return sorted(names)


def written(rng, stem, form):
    """One way of writing a vendor: the usual one, or (rarely) a variant."""
    if form == "after":
        return stem + "株式会社"
    if form == "ltd":
        return "有限会社" + stem
    return rng.choice(["株式会社", "(株)", "㈱", "（株）", "株式会社　"]) + stem


def amount_text(rng, amount):
    text = f"{amount:,}"
    return "￥" + text if rng.random() < 0.05 else text


def date_text(rng, day):
    if rng.random() < 0.02:
        return f"R{day.year - 2018}.{day.month}.{day.day}"
    return day.strftime("%Y/%m/%d")


def main():
    rows, out = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(7)
    stems = vendor_names(rng, max(50, rows // 100))
    forms = [rng.choice(["before"] * 7 + ["after"] * 2 + ["ltd"]) for _ in stems]
    start = datetime.date(2025, 4, 1)
    base_amounts = [1_000, 3_300, 5_500, 11_000, 22_000, 33_000, 55_000, 110_000, 220_000, 330_000, 550_000, 1_100_000]
    invoices = []
    for n in range(rows):
        if invoices and rng.random() < 0.015:
            v, number, amount, day, _ = rng.choice(invoices[-2000:])
            kind = rng.randrange(4)
            if kind == 1:
                day = day + datetime.timedelta(days=rng.randint(1, 20))
            elif kind == 2 and len(number) > 3:
                k = rng.randrange(len(number) - 2, len(number) - 1)
                number = number[:k] + number[k + 1] + number[k] + number[k + 2:]
            spelled = written(rng, stems[v], "before" if kind == 3 else forms[v])
            invoices.append((v, number, amount, day, spelled))
            continue
        v = rng.randrange(len(stems))
        amount = rng.choice(base_amounts) if rng.random() < 0.3 else rng.randint(1, 2_000) * 100 + rng.choice([0, 0, 0, 10, 50])
        day = start + datetime.timedelta(days=rng.randrange(365))
        number = f"{v:04d}-{n:07d}"
        spelled = written(rng, stems[v], forms[v]) if forms[v] != "before" else "株式会社" + stems[v]
        invoices.append((v, number, amount, day, spelled))
    with open(out, "w", encoding="cp932", newline="") as f:
        w = csv.writer(f, lineterminator="\r\n")
        w.writerow(["請求書番号", "取引先", "請求日", "金額", "摘要"])
        for v, number, amount, day, spelled in invoices:
            w.writerow([number, spelled, date_text(rng, day), amount_text(rng, amount), rng.choice(["業務委託料", "消耗品", "保守料", "運送費", "広告費"])])


if __name__ == "__main__":
    main()
