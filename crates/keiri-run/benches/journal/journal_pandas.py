"""The journal job in vectorised pandas: the benchmark's pandas peer.

    python3 journal_pandas.py JOURNAL.csv OUT.xlsx

Reads the Shift_JIS journal, reads every date (western, 和暦, full-width) and amount (`,`,
`￥`/`\\`, `円`, `△`/`-`, full-width) into numbers, totals by account × month and writes
the totals to a workbook. An unreadable date or amount stops the job, as in keiri's plan.
"""

import sys

import pandas as pd

WESTERN = r"^(?P<y>\d{4})[/-](?P<m>\d{1,2})[/-](?P<d>\d{1,2})$"
REIWA = r"^(?:令和|R)(?P<y>\d+)[年.](?P<m>\d+)[月.](?P<d>\d+)日?$"


def main():
    src, out = sys.argv[1], sys.argv[2]
    df = pd.read_csv(src, encoding="cp932", dtype=str, keep_default_na=False,
                     usecols=["伝票日付", "勘定科目", "金額"])
    dates = df["伝票日付"].str.normalize("NFKC").str.strip()
    western = dates.str.extract(WESTERN)
    reiwa = dates.str.extract(REIWA)
    year = pd.to_numeric(western["y"]).fillna(pd.to_numeric(reiwa["y"]) + 2018)
    month = pd.to_numeric(western["m"]).fillna(pd.to_numeric(reiwa["m"]))
    day = pd.to_numeric(western["d"]).fillna(pd.to_numeric(reiwa["d"]))
    parsed = pd.to_datetime(pd.DataFrame({"year": year, "month": month, "day": day}), errors="coerce")
    if parsed.isna().any():
        raise SystemExit(f"unreadable date: {df['伝票日付'][parsed.isna()].iloc[0]}")
    amounts = df["金額"].str.normalize("NFKC").str.strip()
    negative = amounts.str.startswith(("△", "▲", "-"))
    digits = amounts.str.replace(r"^[△▲\-]|[¥\\,円]", "", regex=True)
    value = pd.to_numeric(digits, errors="coerce")
    if value.isna().any():
        raise SystemExit(f"unreadable amount: {df['金額'][value.isna()].iloc[0]}")
    totals = (
        pd.DataFrame({
            "勘定科目": df["勘定科目"],
            "year_month": parsed.dt.strftime("%Y-%m"),
            "金額": value.where(~negative, -value),
        })
        .groupby(["勘定科目", "year_month"], sort=True)["金額"]
        .agg(金額合計="sum", 件数="count")
        .reset_index()
    )
    totals.to_excel(out, sheet_name="勘定科目別月別", index=False)
    print(f"{len(totals)} groups, total {totals['金額合計'].sum():.0f}")


if __name__ == "__main__":
    main()
