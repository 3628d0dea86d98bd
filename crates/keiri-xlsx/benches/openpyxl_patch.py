"""The openpyxl side of the keiri-xlsx benchmark: load, apply set_value ops, save.

Run by benches/patch_vs_openpyxl.rs as `python openpyxl_patch.py IN.xlsx OPS.json OUT.xlsx`;
prints one JSON line: wall seconds for load+apply+save, peak RSS (VmHWM) and the RSS before
loading (interpreter plus the openpyxl import).
"""

import json
import sys
import time

from bench_sample import report, rss_kb


def main():
    src, ops_path, out = sys.argv[1:4]
    with open(ops_path, encoding="utf-8") as f:
        ops = json.load(f)
    import openpyxl

    baseline = rss_kb("VmRSS")
    start = time.perf_counter()
    wb = openpyxl.load_workbook(src)
    for op in ops:
        wb[op["sheet"]][op["cell"]].value = op["value"]
    wb.save(out)
    seconds = time.perf_counter() - start
    report(seconds, baseline, openpyxl=openpyxl.__version__)


if __name__ == "__main__":
    main()
