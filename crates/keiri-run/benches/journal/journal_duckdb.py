"""The journal job in DuckDB SQL: the benchmark's DuckDB peer.

    python3 journal_duckdb.py JOURNAL.csv OUT.xlsx

Same job as `journal_pandas.py`. DuckDB's CSV reader takes UTF-8 only without an
extension, so the Shift_JIS bytes are decoded first; the totals are
written with openpyxl (DuckDB's own Excel writer is an extension it would download).
"""

import sys
import tempfile

import duckdb
import openpyxl

QUERY = r"""
WITH parsed AS (
  SELECT 勘定科目,
          trim(translate(伝票日付, '０１２３４５６７８９／', '0123456789/')) AS d,
         trim(translate(金額, '０１２３４５６７８９，￥', '0123456789,¥')) AS a
  FROM read_csv(?, all_varchar = true, header = true)
), typed AS (
  SELECT 勘定科目,
         coalesce(
           try_strptime(d, '%Y/%m/%d'),
           try_strptime(d, '%Y-%m-%d'),
           make_date(
             CAST(regexp_extract(d, '^(?:令和|R)(\d+)', 1) AS INTEGER) + 2018,
             CAST(regexp_extract(d, '^(?:令和|R)\d+[年.](\d+)', 1) AS INTEGER),
             CAST(regexp_extract(d, '[月.](\d+)日?$', 1) AS INTEGER))) AS day,
         CASE WHEN regexp_matches(a, '^[△▲\-]') THEN -1 ELSE 1 END
           * TRY_CAST(regexp_replace(a, '^[△▲\-]|[¥\\,円]', '', 'g') AS DOUBLE) AS value
  FROM parsed
)
SELECT 勘定科目, strftime(day, '%Y-%m') AS year_month, sum(value) AS 金額合計, count(*) AS 件数,
       count(*) FILTER (WHERE day IS NULL OR value IS NULL) AS unreadable
FROM typed GROUP BY ALL ORDER BY 勘定科目, year_month
"""


def main():
    src, out = sys.argv[1], sys.argv[2]
    with open(src, encoding="cp932") as f, tempfile.NamedTemporaryFile("w", suffix=".csv", encoding="utf-8") as utf8:
        utf8.write(f.read())
        utf8.flush()
        rows = duckdb.execute(QUERY, [utf8.name]).fetchall()
    if any(r[4] for r in rows):
        raise SystemExit("unreadable date or amount")
    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("勘定科目別月別")
    sheet.append(["勘定科目", "year_month", "金額合計", "件数"])
    for r in rows:
        sheet.append(r[:4])
    book.save(out)
    print(f"{len(rows)} groups, total {sum(r[2] for r in rows):.0f}")


if __name__ == "__main__":
    main()
