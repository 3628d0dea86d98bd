"""Duplicate invoices in lazy Polars: the benchmark's Polars peer.

    python3 dup_polars.py INVOICES.csv OUT.csv

Same vendor (legal form and spaces aside) and amount, dates at most 30 days apart.
"""

import sys

import polars as pl

LEGAL_FORMS = r"株式会社|有限会社|\(株\)|（株）|㈱|\s|　"


def main():
    src, out = sys.argv[1], sys.argv[2]
    # Polars reads UTF-8 only: decode the Shift_JIS bytes first.
    with open(src, encoding="cp932") as f:
        text = f.read()
    era = pl.col("請求日").str.extract_groups(r"^R(\d+)\.(\d+)\.(\d+)$")
    df = (
        pl.read_csv(text.encode(), infer_schema=False)
        .lazy()
        .with_row_index("row")
        .with_columns(
            vendor_key=pl.col("取引先").str.replace_all(LEGAL_FORMS, ""),
            amount=pl.col("金額").str.replace_all(r"[￥,]", "").cast(pl.Int64),
            date=pl.coalesce(
                pl.col("請求日").str.strptime(pl.Date, "%Y/%m/%d", strict=False),
                pl.date(
                    era.struct.field("1").cast(pl.Int32) + 2018,
                    era.struct.field("2").cast(pl.Int32),
                    era.struct.field("3").cast(pl.Int32),
                ),
            ),
        )
    )
    keys = df.select("row", "vendor_key", "amount", "date")
    pairs = keys.join(keys, on=["vendor_key", "amount"], suffix="_b").filter(
        (pl.col("row") < pl.col("row_b")) & ((pl.col("date") - pl.col("date_b")).abs().dt.total_days() <= 30)
    )
    flagged = pl.concat([pairs.select("row"), pairs.select(pl.col("row_b").alias("row"))]).unique()
    dup = df.join(flagged, on="row", how="semi").sort("row").drop("row", "vendor_key", "amount", "date").collect()
    dup.write_csv(out)
    print(f"{len(dup)} rows")


if __name__ == "__main__":
    main()
