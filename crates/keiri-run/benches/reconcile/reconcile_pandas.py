"""Bank reconciliation in vectorised pandas: the benchmark's pandas peer.

    python3 reconcile_pandas.py STATEMENT.csv RECEIVABLES.csv OUT_DIR

A deposit clears the open receivable whose customer kana is the payer's name (after NFKC,
the transfer prefix and the legal-form abbreviation removed, small kana written large), for
the same amount or short by at most 880 yen (a transfer fee), due within 60 days: the exact
one first, then the closest due date; a receivable is cleared by its first deposit. This is
how a pandas user writes it — a merge on the name key and ranks — and it is a simpler job than
keiri's block, which also takes near spellings of a name and one transfer paying several
invoices (see the README).
"""

import os
import sys

import pandas as pd

FEE = 880
WINDOW = pd.Timedelta(days=60)
PREFIX = r"^(?:振込入金|振込|フリコミ|振替入金|入金)\s*"
LEGAL = r"\(?(?:カ|ユ|ド|シャ|ザイ)\)|\((?:カ|ユ)\)?$|株式会社|有限会社|\(株\)"
SMALL = str.maketrans("ァィゥェォャュョッ", "アイウエオヤユヨツ")


def key(text):
    return (text.str.normalize("NFKC").str.replace(PREFIX, "", regex=True).str.replace(LEGAL, "", regex=True)
            .str.replace(r"\s", "", regex=True).str.translate(SMALL))


def yen(text):
    return pd.to_numeric(text.str.replace(",", "", regex=False), errors="coerce")


def main():
    statement_csv, receivables_csv, out = sys.argv[1:4]
    # The folder is made if missing, as keiri makes its outputs folder.
    os.makedirs(out, exist_ok=True)
    bank = pd.read_csv(statement_csv, encoding="cp932", dtype=str, keep_default_na=False)
    deposits = bank[bank["お預入金額"] != ""].reset_index(drop=True)
    deposits["d"] = deposits.index
    deposits["key"] = key(deposits["摘要"])
    deposits["amount"] = yen(deposits["お預入金額"])
    deposits["date"] = pd.to_datetime(deposits["取引日"], format="%Y/%m/%d")
    open_items = pd.read_csv(receivables_csv, encoding="cp932", dtype=str, keep_default_na=False)
    open_items["r"] = open_items.index
    open_items["key"] = key(open_items["得意先カナ"])
    open_items["amount"] = yen(open_items["請求額"])
    open_items["due"] = pd.to_datetime(open_items["入金予定日"], format="%Y/%m/%d")
    pairs = deposits[["d", "key", "amount", "date"]].merge(open_items[["r", "key", "amount", "due"]], on="key",
                                                           suffixes=("", "_r"))
    short = pairs["amount_r"] - pairs["amount"]
    pairs = pairs[(short >= 0) & (short <= FEE) & ((pairs["date"] - pairs["due"]).abs() <= WINDOW)].assign(
        short=short, distance=(pairs["date"] - pairs["due"]).abs())
    best = (pairs.assign(inexact=pairs["short"] > 0).sort_values(["d", "inexact", "distance", "r"])
            .drop_duplicates("d").drop_duplicates("r"))
    unmatched = deposits[~deposits["d"].isin(best["d"])]
    still_open = open_items[~open_items["r"].isin(best["r"])]
    unmatched.drop(columns=["d", "key", "amount", "date"]).to_csv(f"{out}/unmatched_deposits.csv", index=False)
    still_open.drop(columns=["r", "key", "amount", "due"]).to_csv(f"{out}/open_receivables.csv", index=False)
    print(f"{len(best)} cleared, {len(unmatched)} unmatched deposits, {len(still_open)} open receivables")


if __name__ == "__main__":
    main()
