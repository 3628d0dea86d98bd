"""The openpyxl side of the update-by-key benchmark, written as openpyxl's users write it:
load, read the header row and the key column once (values only) into dicts, write each key's
columns, save.

Run by benches/update_by_key_vs_openpyxl.rs as
`python openpyxl_update_by_key.py IN.xlsx OPS.json OUT.xlsx` (OPS.json holds one
update_rows_by_key op); prints one JSON line: wall seconds for load+update+save, peak RSS
(VmHWM) and the RSS before loading.
"""

import json
import sys
import time

from bench_sample import report, rss_kb


def main():
    src, ops_path, out = sys.argv[1:4]
    with open(ops_path, encoding="utf-8") as f:
        (op,) = json.load(f)
    import openpyxl

    baseline = rss_kb("VmRSS")
    start = time.perf_counter()
    wb = openpyxl.load_workbook(src)
    ws = wb[op["sheet"]]
    header_row = op["header_row"]
    headers = {
        str(v).strip(): i + 1
        for i, v in enumerate(next(ws.iter_rows(min_row=header_row, max_row=header_row,
                                                values_only=True)))
        if v is not None
    }
    key_col = headers[op["key_column"]]
    index = {}
    for r, (key,) in enumerate(ws.iter_rows(min_row=header_row + 1, min_col=key_col,
                                            max_col=key_col, values_only=True),
                               start=header_row + 1):
        if key is not None:
            index[str(key).strip()] = r
    for row in op["rows"]:
        r = index[str(row[op["key_column"]]).strip()]
        for name, value in row.items():
            if name != op["key_column"]:
                ws.cell(row=r, column=headers[name]).value = value
    wb.save(out)
    seconds = time.perf_counter() - start
    report(seconds, baseline, openpyxl=openpyxl.__version__)


if __name__ == "__main__":
    main()
