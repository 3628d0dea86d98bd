"""Duplicate invoices in vectorised pandas: the benchmark's pandas peer.

    python3 dup_pandas.py INVOICES.csv OUT.csv

Same vendor (legal form and spaces aside) and amount, dates at most 30 days apart.
"""

import sys

import pandas as pd

LEGAL_FORMS = r"株式会社|有限会社|\(株\)|（株）|㈱|\s|　"


def dates(text: pd.Series) -> pd.Series:
    era = text.str.extract(r"^R(\d+)\.(\d+)\.(\d+)$").astype("float")
    wareki = pd.to_datetime(
        pd.DataFrame({"year": era[0] + 2018, "month": era[1], "day": era[2]}), errors="coerce"
    )
    return pd.to_datetime(text, format="%Y/%m/%d", errors="coerce").fillna(wareki)


def main():
    src, out = sys.argv[1], sys.argv[2]
    df = pd.read_csv(src, encoding="cp932", dtype=str)
    df["row"] = range(len(df))
    df["vendor_key"] = df["取引先"].str.replace(LEGAL_FORMS, "", regex=True)
    df["amount"] = pd.to_numeric(df["金額"].str.replace(r"[￥,]", "", regex=True))
    df["date"] = dates(df["請求日"])
    keys = df[["row", "vendor_key", "amount", "date"]]
    pairs = keys.merge(keys, on=["vendor_key", "amount"], suffixes=("_a", "_b"))
    pairs = pairs[(pairs["row_a"] < pairs["row_b"]) & ((pairs["date_a"] - pairs["date_b"]).abs().dt.days <= 30)]
    flagged = pd.unique(pd.concat([pairs["row_a"], pairs["row_b"]]))
    dup = df[df["row"].isin(flagged)].drop(columns=["row", "vendor_key", "amount", "date"])
    dup.to_csv(out, index=False)
    print(f"{len(pairs)} pairs, {len(dup)} rows")


if __name__ == "__main__":
    main()
