"""The journal pipeline of benches/journal.rs in pandas (what keiri_agent v0's blocks use):
read the Shift_JIS CSV as text, normalise 和暦/slash dates and ¥/,/△ amounts, add the
year-month, group by account and month, pivot the months into columns, flag the accounts whose
March differs from February by more than 1 %, and write the table to an .xlsx (openpyxl, as
pandas does by default). Prints the median wall time per stage and the peak
RSS, for a side-by-side reading with the Rust numbers. Not part of CI.

usage: python journal_pandas.py JOURNAL.csv [RUNS]
"""

import os
import re
import resource
import statistics
import sys
import time

import pandas as pd

ERAS = {"令和": 2018, "R": 2018, "平成": 1988, "H": 1988}
ERA_RE = re.compile(r"^(令和|R|平成|H)(\d+)[年.](\d+)[月.](\d+)日?$")


def parse_date(s):
    m = ERA_RE.match(s)
    if m:
        return pd.Timestamp(ERAS[m.group(1)] + int(m.group(2)), int(m.group(3)), int(m.group(4)))
    return pd.to_datetime(s, format="%Y/%m/%d", errors="coerce")


def parse_amount(s):
    neg = s.startswith(("△", "▲", "-"))
    # Shift_JIS has the yen sign at 0x5C, which cp932 decodes as a backslash.
    v = float(s.lstrip("△▲-").replace("¥", "").replace("\\", "").replace(",", "").replace("円", ""))
    return -v if neg else v


def run(path):
    t = {}
    s = time.perf_counter()
    df = pd.read_csv(path, encoding="cp932", dtype=str, keep_default_na=False)
    t["csv.read"] = time.perf_counter() - s
    s = time.perf_counter()
    df["伝票日付"] = df["伝票日付"].map(parse_date)
    t["normalize_dates"] = time.perf_counter() - s
    s = time.perf_counter()
    df["year_month"] = df["伝票日付"].dt.strftime("%Y-%m")
    t["fiscal_period"] = time.perf_counter() - s
    s = time.perf_counter()
    df["金額"] = df["金額"].map(parse_amount)
    t["normalize_amounts"] = time.perf_counter() - s
    s = time.perf_counter()
    out = df.groupby(["勘定科目", "year_month"], sort=False)["金額"].agg(["sum", "count"]).reset_index()
    t["group_aggregate"] = time.perf_counter() - s
    s = time.perf_counter()
    wide = out.pivot_table(index="勘定科目", columns="year_month", values="sum", aggfunc="sum", fill_value=0)
    wide.columns = [str(c) for c in wide.columns]
    wide = wide.reset_index()
    t["pivot"] = time.perf_counter() - s
    s = time.perf_counter()
    wide["change_amount"] = wide["2025-03"] - wide["2025-02"]
    wide["change_rate"] = wide["change_amount"] / wide["2025-02"].where(wide["2025-02"] != 0)
    wide["flagged"] = wide["change_rate"].abs() > 0.01
    issues = wide[wide["flagged"]]
    t["variance_check"] = time.perf_counter() - s
    s = time.perf_counter()
    wide.to_excel(os.path.join(os.path.dirname(path), "variance_pandas.xlsx"), sheet_name="増減", index=False)
    t["excel.write_table"] = time.perf_counter() - s
    t["total"] = sum(t.values())
    return t, (len(out), len(issues))


def main():
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    results = [run(path) for _ in range(runs)]
    print(f"pandas {pd.__version__}: groups {results[0][1][0]}, flagged {results[0][1][1]}, runs {runs}")
    for stage in results[0][0]:
        ms = statistics.median(r[0][stage] for r in results) * 1e3
        print(f"  {stage:<18} median {ms:>8.1f} ms")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak RSS           {peak:>8.0f} MB")


if __name__ == "__main__":
    main()
