"""Bank lines × ledger in DuckDB SQL: the benchmark's DuckDB peer.

    python3 join_duckdb.py BANK.csv LEDGER.csv OUT.csv

Same job as `join_pandas.py`. DuckDB's CSV reader takes UTF-8 only without an extension, so
the Shift_JIS bytes are decoded first; the join and the CSV are DuckDB's.
"""

import sys
import tempfile

import duckdb

DATE = r"""coalesce(
  try_strptime({d}, '%Y/%m/%d'), try_strptime({d}, '%Y-%m-%d'),
  make_date(CAST(regexp_extract({d}, '^(?:令和|R)(\d+)', 1) AS INTEGER) + 2018,
            CAST(regexp_extract({d}, '^(?:令和|R)\d+[年.](\d+)', 1) AS INTEGER),
            CAST(regexp_extract({d}, '[月.](\d+)日?$', 1) AS INTEGER)))::DATE"""
AMOUNT = r"""(CASE WHEN regexp_matches({a}, '^[△▲\-]') THEN -1 ELSE 1 END
  * TRY_CAST(regexp_replace({a}, '^[△▲\-]|[¥\\,円]', '', 'g') AS DOUBLE))"""
FOLD = "trim(translate({c}, '０１２３４５６７８９，／￥', '0123456789,/¥'))"


def typed(table, date_column):
    d = FOLD.format(c=date_column)
    a = FOLD.format(c="金額")
    return (f"SELECT * REPLACE ({DATE.format(d=d)} AS {date_column}, {AMOUNT.format(a=a)} AS 金額) "
            f"FROM read_csv('{table}', all_varchar = true, header = true)")


def utf8(path, directory):
    target = f"{directory}/{path.rsplit('/', 1)[-1]}"
    with open(path, encoding="cp932") as f, open(target, "w", encoding="utf-8") as t:
        t.write(f.read())
    return target


def main():
    bank_csv, ledger_csv, out = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as directory:
        bank, ledger = utf8(bank_csv, directory), utf8(ledger_csv, directory)
        db = duckdb.connect()
        db.execute(f"CREATE TEMP TABLE bank AS {typed(bank, '取引日')}")
        db.execute(f"CREATE TEMP TABLE ledger AS {typed(ledger, '伝票日付')}")
        bad = db.execute("SELECT (SELECT count(*) FROM bank WHERE 取引日 IS NULL OR 金額 IS NULL)"
                         " + (SELECT count(*) FROM ledger WHERE 伝票日付 IS NULL OR 金額 IS NULL)").fetchone()[0]
        if bad:
            raise SystemExit("unreadable date or amount")
        db.execute("COPY (SELECT b.*, l.* EXCLUDE (伝票日付, 金額) FROM bank b JOIN ledger l"
                   " ON b.取引日 = l.伝票日付 AND b.金額 = l.金額) TO '" + out + "' (HEADER)")
        count, total = db.execute(f"SELECT count(*), sum(金額) FROM read_csv('{out}')").fetchone()
    print(f"{count} pairs, total {total:.0f}")


if __name__ == "__main__":
    main()
