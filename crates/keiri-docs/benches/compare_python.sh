#!/usr/bin/env bash
# Side-by-side extraction throughput: keiri-docs vs pypdf / python-docx / openpyxl.
# Installs the Python libraries into a venv under target/ (nothing global), runs the Rust
# benchmark (which writes the corpus), then the Python measurements on the same files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
bench="$target/keiri-docs-bench"
venv="$bench/venv"
mkdir -p "$bench"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check pypdf python-docx openpyxl
fi
(cd "$root" && cargo bench -p keiri-docs --bench extract)
"$venv/bin/python" "$here/compare_python.py" "$bench"
