"""Measure the Python libraries a user would otherwise reach for on the keiri-docs corpus.

Run by compare_python.sh after `cargo bench -p keiri-docs --bench extract` wrote the corpus
and rust.json. Prints a side-by-side table of MB/s and the speed-up.
"""

import json
import statistics
import sys
import time
from pathlib import Path

import docx  # python-docx
import openpyxl
import pypdf


def pdf_text(path):
    reader = pypdf.PdfReader(path)
    return "\n".join(page.extract_text() or "" for page in reader.pages)


def docx_text(path):
    # Paragraphs and tables in document order, as keiri-docs does.
    document = docx.Document(path)
    out = []
    for block in document.element.body.iterchildren():
        tag = block.tag.rsplit("}", 1)[-1]
        if tag == "p":
            out.append(docx.text.paragraph.Paragraph(block, document).text)
        elif tag == "tbl":
            table = docx.table.Table(block, document)
            for row in table.rows:
                out.append("\t".join(cell.text for cell in row.cells))
    return "\n".join(out)


def xlsx_text(path):
    workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    sheet = workbook.worksheets[0]
    rows = []
    for row in sheet.iter_rows(values_only=True):
        rows.append("\t".join("" if v is None else str(v) for v in row))
    workbook.close()
    return "\n".join(rows)


def csv_text(path):
    # The encoding is given, not detected: Python gets the easier job here.
    return Path(path).read_text(encoding="cp932")


def txt_text(path):
    return Path(path).read_text(encoding="utf-8")


READERS = {
    "pdf": ("pypdf " + pypdf.__version__, pdf_text),
    "docx": ("python-docx", docx_text),
    "xlsx": ("openpyxl " + openpyxl.__version__, xlsx_text),
    "csv": ("open(encoding=cp932)", csv_text),
    "txt": ("open(encoding=utf-8)", txt_text),
}


def measure(fn, path, min_runs=3, budget=20.0):
    times = []
    started = time.perf_counter()
    while len(times) < min_runs or (len(times) < 10 and time.perf_counter() - started < budget):
        t = time.perf_counter()
        text = fn(path)
        times.append(time.perf_counter() - t)
        if time.perf_counter() - started > budget * 3:
            break
    return statistics.median(times), len(text)


def main():
    bench_dir = Path(sys.argv[1])
    rust = json.loads((bench_dir / "rust.json").read_text())
    rows = []
    print(f"{'file':<20} {'MB':>7} {'keiri-docs MB/s':>16} {'python MB/s':>12} {'speed-up':>9}  python reader")
    for r in rust:
        path = bench_dir / "corpus" / r["file"]
        label, fn = READERS[r["format"]]
        seconds, chars = measure(fn, path)
        mb = r["bytes"] / 1e6
        py_rate = mb / seconds
        speedup = r["mb_per_s"] / py_rate
        rows.append({**r, "python": label, "python_mb_per_s": py_rate, "python_chars": chars, "speedup": speedup})
        print(f"{r['file']:<20} {mb:>7.2f} {r['mb_per_s']:>16.1f} {py_rate:>12.2f} {speedup:>8.1f}x  {label}")
    (bench_dir / "comparison.json").write_text(json.dumps(rows, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
