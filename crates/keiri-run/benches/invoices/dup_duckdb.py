"""Duplicate invoices in DuckDB SQL: the benchmark's DuckDB peer.

    python3 dup_duckdb.py INVOICES.csv OUT.csv

Same vendor (legal form and spaces aside) and amount, dates at most 30 days apart.
"""

import sys

import duckdb

SQL = r"""
CREATE TEMP TABLE inv AS
SELECT row_number() OVER () AS row, *,
       regexp_replace(取引先, '株式会社|有限会社|\(株\)|（株）|㈱|\s|　', '', 'g') AS vendor_key,
       CAST(regexp_replace(金額, '[￥,]', '', 'g') AS BIGINT) AS amount,
       coalesce(
         try_strptime(請求日, '%Y/%m/%d')::DATE,
         make_date(2018 + CAST(regexp_extract(請求日, '^R(\d+)\.(\d+)\.(\d+)$', 1) AS INT),
                   CAST(regexp_extract(請求日, '^R(\d+)\.(\d+)\.(\d+)$', 2) AS INT),
                   CAST(regexp_extract(請求日, '^R(\d+)\.(\d+)\.(\d+)$', 3) AS INT))
       ) AS date
FROM read_csv(?, all_varchar = true, header = true);
COPY (
  WITH pairs AS (
    SELECT a.row AS ra, b.row AS rb FROM inv a JOIN inv b
      ON a.vendor_key = b.vendor_key AND a.amount = b.amount AND a.row < b.row
     AND abs(a.date - b.date) <= 30
  ), flagged AS (SELECT ra AS row FROM pairs UNION SELECT rb FROM pairs)
  SELECT 請求書番号, 取引先, 請求日, 金額, 摘要 FROM inv WHERE row IN (SELECT row FROM flagged) ORDER BY row
) TO '{out}' (HEADER);
"""


def main():
    src, out = sys.argv[1], sys.argv[2]
    # DuckDB reads UTF-8 only: decode the Shift_JIS bytes first, as a UTF-8 copy beside OUT.
    utf8 = out + ".utf8.csv"
    with open(src, encoding="cp932") as f, open(utf8, "w", encoding="utf-8") as g:
        g.write(f.read())
    con = duckdb.connect()
    first, second = SQL.replace("{out}", out.replace("'", "''")).split(";\nCOPY")
    con.execute(first, [utf8])
    con.execute("COPY" + second)
    print(con.execute("SELECT count(*) FROM read_csv(?)", [out]).fetchone()[0], "rows")


if __name__ == "__main__":
    main()
