"""Bank lines × ledger in lazy Polars: the benchmark's Polars peer.

    python3 join_polars.py BANK.csv LEDGER.csv OUT.csv

Same job as `join_pandas.py`. Polars reads UTF-8 only, so the Shift_JIS bytes are decoded
first; the rest is one lazy query.
"""

import sys

import polars as pl

WESTERN = r"^(\d{4})[/-](\d{1,2})[/-](\d{1,2})$"
REIWA = r"^(?:令和|R)(\d+)[年.](\d+)[月.](\d+)日?$"
FULL = list("０１２３４５６７８９，／－￥")
HALF = list("0123456789,/-¥")


def date(name):
    text = pl.col(name).str.replace_many(FULL, HALF).str.strip_chars()
    western = text.str.extract_groups(WESTERN)
    reiwa = text.str.extract_groups(REIWA)

    def part(i, base=0):
        return pl.coalesce(western.struct.field(str(i)).cast(pl.Int32),
                           reiwa.struct.field(str(i)).cast(pl.Int32) + base)

    return pl.date(part(1, 2018), part(2), part(3)).alias(name)


def amount(name):
    text = pl.col(name).str.replace_many(FULL, HALF).str.strip_chars()
    value = text.str.replace_all(r"^[△▲\-]|[¥\\,円]", "").cast(pl.Float64, strict=False)
    return pl.when(text.str.contains(r"^[△▲\-]")).then(-value).otherwise(value).alias(name)


def scan(path):
    with open(path, encoding="cp932") as f:
        return pl.scan_csv(f.read().encode(), infer_schema=False)


def main():
    bank_csv, ledger_csv, out = sys.argv[1:4]
    bank = scan(bank_csv).with_columns(date("取引日"), amount("金額")).collect()
    ledger = scan(ledger_csv).with_columns(date("伝票日付"), amount("金額")).collect()
    for frame, name in ((bank, "取引日"), (ledger, "伝票日付")):
        if frame[name].null_count() or frame["金額"].null_count():
            raise SystemExit("unreadable date or amount")
    pairs = bank.lazy().join(ledger.lazy(), left_on=["取引日", "金額"], right_on=["伝票日付", "金額"],
                             suffix="_right").collect()
    pairs.write_csv(out)
    print(f"{len(pairs)} pairs, total {pairs['金額'].sum():.0f}")


if __name__ == "__main__":
    main()
