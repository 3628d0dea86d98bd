"""Writes a bank statement and open receivables for the bank-reconciliation benchmark.

    python3 generate.py RECEIVABLES OUT_DIR

Two Shift_JIS (CP932) files with CRLF line ends:
- `receivables.csv`, an open-receivables list as a sales ledger exports it: `請求書番号`,
  `得意先` (株式会社/(株)/㈱/有限会社 before or after the name), `得意先カナ`, `請求額`
  (`1,234,567`), `入金予定日` (the end of the month after billing, `2025/05/31`). One invoice a
  month per customer (月末締め翌月末払い), RECEIVABLES invoices in all.
- `statement.csv`, an internet-banking export: `取引日`, `摘要` (`ﾌﾘｺﾐ ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ`: half-width
  kana, the legal form abbreviated `ｶ)` or `(ｶ`, small kana written large), `お引出金額`, `お預入金額`,
  `残高`. 85 % of the invoices are paid within ten days of their due date: 80 % of those to the
  yen, 12 % short by a transfer fee (440, 660 or 880 yen), 8 % together with the customer's
  next invoice in one transfer. 3 % more deposits come from payers with no receivable, and a
  withdrawal line follows every fourth deposit.

Standard library only; the same arguments always give the same files.
"""

import datetime
import os
import random
import sys

KANA = ("ア イ ウ エ オ カ キ ク ケ コ サ シ ス セ ソ タ チ ツ テ ト ナ ニ ヌ ネ ノ ハ ヒ フ ヘ ホ マ ミ ム メ モ "
        "ヤ ユ ヨ ラ リ ル レ ロ ワ ガ ギ グ ゲ ゴ ザ ジ ズ ゼ ゾ ダ デ ド バ ビ ブ ベ ボ パ ピ プ ペ ポ "
        "シャ ショ シュ キョ チョ リョ ジョ ン ー").split()
FULL = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワンー"
HALF = "ｱｲｳｴｵｶｷｸｹｺｻｼｽｾｿﾀﾁﾂﾃﾄﾅﾆﾇﾈﾉﾊﾋﾌﾍﾎﾏﾐﾑﾒﾓﾔﾕﾖﾗﾘﾙﾚﾛﾜﾝｰ"
VOICED = {"ガ": "カ", "ギ": "キ", "グ": "ク", "ゲ": "ケ", "ゴ": "コ", "ザ": "サ", "ジ": "シ", "ズ": "ス", "ゼ": "セ",
          "ゾ": "ソ", "ダ": "タ", "デ": "テ", "ド": "ト", "バ": "ハ", "ビ": "ヒ", "ブ": "フ", "ベ": "ヘ", "ボ": "ホ"}
SEMI = {"パ": "ハ", "ピ": "ヒ", "プ": "フ", "ペ": "ヘ", "ポ": "ホ"}
LARGE = str.maketrans("ャュョ", "ヤユヨ")
KANJI = ["山田", "田中", "鈴木", "高橋", "伊藤", "渡辺", "中村", "小林", "加藤", "吉田", "東京", "大阪",
         "日本", "北海", "九州", "中央", "第一", "三和", "富士", "旭", "青葉", "若葉", "桜", "松本"]
TRADES = ["商事", "物産", "工業", "電機", "建設", "運輸", "食品", "印刷", "システム", "サービス", "製作所", "興業"]
FORMS = [("株式会社", "ｶ)", "before"), ("株式会社", "(ｶ", "after"), ("(株)", "ｶ)", "before"),
         ("㈱", "ｶ)", "before"), ("有限会社", "ﾕ)", "before")]
FEES = [440, 660, 880]


def half_width(kana):
    """A bank's spelling of a katakana name: half-width, small kana written large."""
    out = []
    for c in kana.translate(LARGE):
        if c in VOICED:
            out.append(HALF[FULL.index(VOICED[c])] + "ﾞ")
        elif c in SEMI:
            out.append(HALF[FULL.index(SEMI[c])] + "ﾟ")
        else:
            out.append(HALF[FULL.index(c)])
    return "".join(out)


def month_end(year, month):
    first = datetime.date(year + month // 12, month % 12 + 1, 1)
    return first - datetime.timedelta(days=1)


def customers(rng, count):
    seen, out = set(), []
    while len(out) < count:
        kana = "".join(rng.choice(KANA) for _ in range(rng.randint(3, 6))) + rng.choice(["ショウジ", "コウギョウ", "デンキ", "サンギョウ", ""])
        if kana in seen or kana.startswith(("ン", "ー")):
            continue
        seen.add(kana)
        stem = rng.choice(KANJI) + rng.choice(TRADES) + str(len(out))
        form, bank_form, where = rng.choice(FORMS)
        name = stem + form if where == "after" else form + stem
        payer = half_width(kana) + bank_form if where == "after" else bank_form + half_width(kana)
        out.append((name, kana, payer))
    return out


def main():
    count, out = int(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(23)
    people = customers(rng, max(1, count // 12))
    invoices = []
    for n in range(count):
        c = n % len(people)
        month = 4 + n // len(people)
        due = month_end(2024 + (month - 1) // 12, (month - 1) % 12 + 1)
        invoices.append((f"AR-{100000 + n}", c, rng.randint(1_000, 300_000) * 11, due))
    deposits = []
    skip = set()
    for i, (_, c, amount, due) in enumerate(invoices):
        if i in skip or rng.random() >= 0.85:
            continue
        day = due + datetime.timedelta(days=rng.randint(-10, 10))
        r = rng.random()
        nxt = i + len(people)
        if r < 0.08 and nxt < len(invoices):
            skip.add(nxt)
            amount += invoices[nxt][2]
            day = invoices[nxt][3] + datetime.timedelta(days=rng.randint(-10, 0))
        elif r < 0.20:
            amount -= rng.choice(FEES)
        deposits.append((day, "ﾌﾘｺﾐ " + people[c][2], amount))
    for _ in range(len(deposits) * 3 // 100):
        day = datetime.date(2024, 5, 1) + datetime.timedelta(days=rng.randrange(365))
        deposits.append((day, "ﾌﾘｺﾐ " + half_width("".join(rng.choice(KANA[:40]) for _ in range(5))), rng.randint(1_000, 300_000) * 11))
    deposits.sort()
    with open(os.path.join(out, "receivables.csv"), "w", encoding="cp932", newline="") as f:
        f.write("請求書番号,得意先,得意先カナ,請求額,入金予定日\r\n")
        for number, c, amount, due in invoices:
            f.write(f"{number},{people[c][0]},{people[c][1]},\"{amount:,}\",{due:%Y/%m/%d}\r\n")
    balance = 80_000_000
    with open(os.path.join(out, "statement.csv"), "w", encoding="cp932", newline="") as f:
        f.write("取引日,摘要,お引出金額,お預入金額,残高\r\n")
        for n, (day, memo, amount) in enumerate(deposits):
            balance += amount
            f.write(f"{day:%Y/%m/%d},{memo},,\"{amount:,}\",\"{balance:,}\"\r\n")
            if n % 4 == 3:
                paid = rng.randint(1_000, 500_000)
                balance -= paid
                f.write(f"{day:%Y/%m/%d},ﾌﾘｺﾐ ｼﾊﾗｲ,\"{paid:,}\",,\"{balance:,}\"\r\n")


if __name__ == "__main__":
    main()
