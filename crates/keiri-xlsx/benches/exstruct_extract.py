"""The ExStruct side of the keiri-xlsx benchmark vs_exstruct, extraction: ExStruct's own
`extract` (standard mode, A1 column keys; openpyxl without Excel) serialised to JSON and
written, as its MCP tool does.

Run by benches/vs_exstruct.rs as `python exstruct_extract.py IN.xlsx OUT.json`; prints one
JSON line: wall seconds for read+serialise+write, peak RSS (VmHWM) and the RSS before reading.
"""

import sys
import time

from bench_sample import report, rss_kb


def main():
    src, out = sys.argv[1:3]
    import exstruct

    baseline = rss_kb("VmRSS")
    start = time.perf_counter()
    workbook = exstruct.extract(src, mode="standard", alpha_col=True)
    text = exstruct.serialize_workbook(workbook, "json")
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    seconds = time.perf_counter() - start
    report(seconds, baseline, bytes=len(text))


if __name__ == "__main__":
    main()
