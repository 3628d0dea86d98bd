"""Bank reconciliation in DuckDB SQL: the benchmark's DuckDB peer.

    python3 reconcile_duckdb.py STATEMENT.csv RECEIVABLES.csv OUT_DIR

Same job as `reconcile_pandas.py` (a simpler one than keiri's block: see there). DuckDB's
CSV reader takes UTF-8 only without an extension, so the Shift_JIS bytes are decoded first;
`nfc_normalize` does not fold half-width kana, so the key is NFKC-folded while decoding.
"""

import os
import sys
import tempfile
import unicodedata

import duckdb

QUERY = r"""
CREATE TEMP TABLE deposits AS
  SELECT row_number() OVER () AS d, *,
         translate(regexp_replace(regexp_replace(regexp_replace(folded, '^(?:振込入金|振込|フリコミ|振替入金|入金)\s*', ''),
           '\(?(?:カ|ユ|ド|シャ|ザイ)\)|\((?:カ|ユ)\)?$|株式会社|有限会社|\(株\)', '', 'g'), '\s', '', 'g'),
           'ァィゥェォャュョッ', 'アイウエオヤユヨツ') AS key,
         CAST(replace(お預入金額, ',', '') AS BIGINT) AS amount, strptime(取引日, '%Y/%m/%d')::DATE AS date
  FROM read_csv(?, all_varchar = true, header = true) WHERE お預入金額 IS NOT NULL;
CREATE TEMP TABLE receivables AS
  SELECT row_number() OVER () AS r, *,
         translate(regexp_replace(得意先カナ, '\s', '', 'g'), 'ァィゥェォャュョッ', 'アイウエオヤユヨツ') AS key,
         CAST(replace(請求額, ',', '') AS BIGINT) AS amount, strptime(入金予定日, '%Y/%m/%d')::DATE AS due
  FROM read_csv(?, all_varchar = true, header = true);
CREATE TEMP TABLE best AS
  WITH pairs AS (
    SELECT d.d, r.r, r.amount - d.amount AS short, abs(d.date - r.due) AS distance
    FROM deposits d JOIN receivables r USING (key)
    WHERE r.amount - d.amount BETWEEN 0 AND 880 AND abs(d.date - r.due) <= 60
  ), per_deposit AS (
    SELECT * FROM pairs QUALIFY row_number() OVER (PARTITION BY d ORDER BY short > 0, distance, r) = 1
  )
  SELECT * FROM per_deposit QUALIFY row_number() OVER (PARTITION BY r ORDER BY d) = 1;
"""


def main():
    statement_csv, receivables_csv, out = sys.argv[1:4]
    # The folder is made if missing, as keiri makes its outputs folder.
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as directory:
        statement = f"{directory}/statement.csv"
        with open(statement_csv, encoding="cp932") as f, open(statement, "w", encoding="utf-8") as t:
            lines = f.read().split("\n")
            # The payer column folded to NFKC as an extra column (half-width kana to full width).
            t.write(lines[0].rstrip("\r") + ",folded\n")
            for line in lines[1:]:
                if line:
                    line = line.rstrip("\r")
                    t.write(f"{line},{unicodedata.normalize('NFKC', line.split(',', 2)[1])}\n")
        receivables = f"{directory}/receivables.csv"
        with open(receivables_csv, encoding="cp932") as f, open(receivables, "w", encoding="utf-8") as t:
            t.write(f.read())
        db = duckdb.connect()
        for statement_sql, path in zip(QUERY.split(";")[:3], [statement, receivables, None]):
            db.execute(statement_sql, [path] if path else [])
        db.execute(f"COPY (SELECT * EXCLUDE (d, key, amount, date, folded) FROM deposits"
                   f" WHERE d NOT IN (SELECT d FROM best) ORDER BY d) TO '{out}/unmatched_deposits.csv' (HEADER)")
        db.execute(f"COPY (SELECT * EXCLUDE (r, key, amount, due) FROM receivables"
                   f" WHERE r NOT IN (SELECT r FROM best) ORDER BY r) TO '{out}/open_receivables.csv' (HEADER)")
        cleared, unmatched, still_open = db.execute(
            "SELECT (SELECT count(*) FROM best), (SELECT count(*) FROM deposits) - (SELECT count(*) FROM best),"
            " (SELECT count(*) FROM receivables) - (SELECT count(*) FROM best)").fetchone()
    print(f"{cleared} cleared, {unmatched} unmatched deposits, {still_open} open receivables")


if __name__ == "__main__":
    main()
