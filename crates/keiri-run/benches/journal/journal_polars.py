"""The journal job in lazy Polars: the benchmark's Polars peer.

    python3 journal_polars.py JOURNAL.csv OUT.xlsx

Same job as `journal_pandas.py`. Polars reads UTF-8 only, so the Shift_JIS bytes are
decoded first; the rest is lazy queries.
"""

import sys

import polars as pl

WESTERN = r"^(\d{4})[/-](\d{1,2})[/-](\d{1,2})$"
REIWA = r"^(?:令和|R)(\d+)[年.](\d+)[月.](\d+)日?$"
FULL = list("０１２３４５６７８９，／－￥")
HALF = list("0123456789,/-¥")


def main():
    src, out = sys.argv[1], sys.argv[2]
    with open(src, encoding="cp932") as f:
        text = f.read()
    # Full-width digits and signs folded in the two columns read, vectorised.
    date = pl.col("伝票日付").str.replace_many(FULL, HALF).str.strip_chars()
    western = date.str.extract_groups(WESTERN)
    reiwa = date.str.extract_groups(REIWA)

    def part(i, base=0):
        return pl.coalesce(western.struct.field(str(i)).cast(pl.Int32),
                           reiwa.struct.field(str(i)).cast(pl.Int32) + base)

    amount = pl.col("金額").str.replace_many(FULL, HALF).str.strip_chars()
    value = amount.str.replace_all(r"^[△▲\-]|[¥\\,円]", "").cast(pl.Float64, strict=False)
    frame = (
        pl.scan_csv(text.encode(), infer_schema=False)
        .select(
            "勘定科目",
            parsed=pl.date(part(1, 2018), part(2), part(3)),
            value=pl.when(amount.str.contains(r"^[△▲\-]")).then(-value).otherwise(value),
        )
        .collect()
    )
    if frame["parsed"].null_count() or frame["value"].null_count():
        raise SystemExit("unreadable date or amount")
    totals = (
        frame.lazy()
        .group_by("勘定科目", year_month=pl.col("parsed").dt.strftime("%Y-%m"))
        .agg(金額合計=pl.col("value").sum(), 件数=pl.len())
        .sort("勘定科目", "year_month")
        .collect()
    )
    totals.write_excel(out, worksheet="勘定科目別月別")
    print(f"{len(totals)} groups, total {totals['金額合計'].sum():.0f}")


if __name__ == "__main__":
    main()
