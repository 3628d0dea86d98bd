"""Bank lines × ledger in vectorised pandas: the benchmark's pandas peer.

    python3 join_pandas.py BANK.csv LEDGER.csv OUT.csv

Reads both Shift_JIS files, reads every date (western, 和暦, full-width) and amount (`,`,
`￥`/`\\`, `円`, full-width) into values, and writes the pairs of a bank line and a ledger
line on the same day for the same amount. An unreadable date or amount stops the job, as in
keiri's plan.
"""

import sys

import pandas as pd

WESTERN = r"^(?P<y>\d{4})[/-](?P<m>\d{1,2})[/-](?P<d>\d{1,2})$"
REIWA = r"^(?:令和|R)(?P<y>\d+)[年.](?P<m>\d+)[月.](?P<d>\d+)日?$"


def dates(column):
    text = column.str.normalize("NFKC").str.strip()
    western = text.str.extract(WESTERN)
    reiwa = text.str.extract(REIWA)
    parts = pd.DataFrame({
        "year": pd.to_numeric(western["y"]).fillna(pd.to_numeric(reiwa["y"]) + 2018),
        "month": pd.to_numeric(western["m"]).fillna(pd.to_numeric(reiwa["m"])),
        "day": pd.to_numeric(western["d"]).fillna(pd.to_numeric(reiwa["d"])),
    })
    parsed = pd.to_datetime(parts, errors="coerce")
    if parsed.isna().any():
        raise SystemExit(f"unreadable date: {column[parsed.isna()].iloc[0]}")
    return parsed


def amounts(column):
    text = column.str.normalize("NFKC").str.strip()
    negative = text.str.startswith(("△", "▲", "-"))
    value = pd.to_numeric(text.str.replace(r"^[△▲\-]|[¥\\,円]", "", regex=True), errors="coerce")
    if value.isna().any():
        raise SystemExit(f"unreadable amount: {column[value.isna()].iloc[0]}")
    return value.where(~negative, -value)


def main():
    bank_csv, ledger_csv, out = sys.argv[1:4]
    bank = pd.read_csv(bank_csv, encoding="cp932", dtype=str, keep_default_na=False)
    ledger = pd.read_csv(ledger_csv, encoding="cp932", dtype=str, keep_default_na=False)
    bank["取引日"] = dates(bank["取引日"])
    bank["金額"] = amounts(bank["金額"])
    ledger["伝票日付"] = dates(ledger["伝票日付"])
    ledger["金額"] = amounts(ledger["金額"])
    pairs = bank.merge(ledger, left_on=["取引日", "金額"], right_on=["伝票日付", "金額"],
                       suffixes=("_left", "_right"))
    pairs.to_csv(out, index=False, date_format="%Y-%m-%d")
    print(f"{len(pairs)} pairs, total {pairs['金額'].sum():.0f}")


if __name__ == "__main__":
    main()
