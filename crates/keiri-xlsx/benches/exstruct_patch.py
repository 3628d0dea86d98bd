"""The ExStruct side of the keiri-xlsx benchmark vs_exstruct: ExStruct's own patch engine
(`exstruct.edit.patch_workbook`, openpyxl backend) loads the workbook, applies the styling ops
and saves it.

Run by benches/vs_exstruct.rs as `python exstruct_patch.py IN.xlsx OPS.json OUT_DIR`; prints
one JSON line: wall seconds for load+apply+save, peak RSS (VmHWM) and the RSS before loading
(interpreter plus the import).
"""

import json
import sys
import time

from bench_sample import report, rss_kb


def main():
    src, ops_path, out_dir = sys.argv[1:4]
    with open(ops_path, encoding="utf-8") as f:
        ops = json.load(f)
    from exstruct.edit import PatchRequest, patch_workbook
    import exstruct

    baseline = rss_kb("VmRSS")
    start = time.perf_counter()
    request = PatchRequest(xlsx_path=src, ops=ops, out_dir=out_dir, out_name="exstruct.xlsx",
                           on_conflict="overwrite", backend="openpyxl")
    result = patch_workbook(request)
    seconds = time.perf_counter() - start
    if result.error is not None:
        print(result.error, file=sys.stderr)
        sys.exit(1)
    report(seconds, baseline, diff_items=len(result.patch_diff),
           exstruct=getattr(exstruct, "__version__", "?"))


if __name__ == "__main__":
    main()
