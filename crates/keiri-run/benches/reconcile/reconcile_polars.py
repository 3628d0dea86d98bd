"""Bank reconciliation in lazy Polars: the benchmark's Polars peer.

    python3 reconcile_polars.py STATEMENT.csv RECEIVABLES.csv OUT_DIR

Same job as `reconcile_pandas.py` (a simpler one than keiri's block: see there). Polars
reads UTF-8 only, so the Shift_JIS bytes are decoded first; Polars has no NFKC, so the
half-width kana of the statement are folded by a table, vectorised.
"""

import os
import sys
import unicodedata

import polars as pl

FEE = 880
PREFIX = r"^(?:振込入金|振込|フリコミ|振替入金|入金)\s*"
LEGAL = r"\(?(?:カ|ユ|ド|シャ|ザイ)\)|\((?:カ|ユ)\)?$|株式会社|有限会社|\(株\)"
SMALL = (list("ァィゥェォャュョッ"), list("アイウエオヤユヨツ"))
# Half-width katakana (with their voicing marks) to full width: NFKC of each one.
HALF = [chr(c) for c in range(0xFF61, 0xFFA0)]
PAIRS = [h + m for h in HALF for m in "ﾞﾟ" if len(unicodedata.normalize("NFKC", h + m)) == 1]
NFKC = lambda texts: [unicodedata.normalize("NFKC", t) for t in texts]  # noqa: E731


def key(column):
    # The voiced pairs (ｼﾞ) first, in a pass of their own: `replace_many` is not leftmost-longest.
    folded = pl.col(column).str.replace_many(PAIRS, NFKC(PAIRS)).str.replace_many(HALF, NFKC(HALF))
    return (folded.str.replace(PREFIX, "").str.replace_all(LEGAL, "")
            .str.replace_all(r"\s", "").str.replace_many(*SMALL).alias("key"))


def scan(path):
    with open(path, encoding="cp932") as f:
        return pl.scan_csv(f.read().encode(), infer_schema=False)


def main():
    statement_csv, receivables_csv, out = sys.argv[1:4]
    # The folder is made if missing, as keiri makes its outputs folder.
    os.makedirs(out, exist_ok=True)
    yen = lambda c: pl.col(c).str.replace_all(",", "").cast(pl.Int64)  # noqa: E731
    deposits = (scan(statement_csv).filter(pl.col("お預入金額").is_not_null()).with_row_index("d")
                .with_columns(key("摘要"), amount=yen("お預入金額"),
                              date=pl.col("取引日").str.strptime(pl.Date, "%Y/%m/%d")).collect())
    open_items = (scan(receivables_csv).with_row_index("r")
                  .with_columns(key("得意先カナ"), amount_r=yen("請求額"),
                                due=pl.col("入金予定日").str.strptime(pl.Date, "%Y/%m/%d")).collect())
    best = (
        deposits.lazy().select("d", "key", "amount", "date")
        .join(open_items.lazy().select("r", "key", "amount_r", "due"), on="key")
        .with_columns(short=pl.col("amount_r") - pl.col("amount"),
                      distance=(pl.col("date") - pl.col("due")).abs().dt.total_days())
        .filter(pl.col("short").is_between(0, FEE) & (pl.col("distance") <= 60))
        .sort("d", pl.col("short") > 0, "distance", "r")
        .unique("d", keep="first", maintain_order=True)
        .unique("r", keep="first", maintain_order=True)
        .collect()
    )
    unmatched = deposits.join(best.select("d"), on="d", how="anti")
    still_open = open_items.join(best.select("r"), on="r", how="anti")
    unmatched.drop("d", "key", "amount", "date").write_csv(f"{out}/unmatched_deposits.csv")
    still_open.drop("r", "key", "amount_r", "due").write_csv(f"{out}/open_receivables.csv")
    print(f"{len(best)} cleared, {len(unmatched)} unmatched deposits, {len(still_open)} open receivables")


if __name__ == "__main__":
    main()
