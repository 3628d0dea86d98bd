#!/usr/bin/env python3
"""The house rules of issue 36 that a reviewer cannot keep by eye, checked on every `make test`.

1. sizes:  no file in `crates/*/src` or `src-tauri/src` over 1,200 lines (files marked
           `@generated` aside).
2. cycles: no import cycle spanning more than 3 files inside a crate. The edges are the
           `use` and in-code paths that start at `crate::`, `super::`, `self::` or a child module, from the
           file that names them to the file that defines the item (a `pub use` re-export is
           followed to where the item is defined; `mod` declarations are ownership, not
           edges). A strongly connected component of more than 3 files is an offender.
3. lists:  an API function, a tool or a block is named in hand-written lists of at most one
           file. A list is a literal array (`["a", "b", …]` in Rust, `['a', …]` in TS/JS, files
           marked generated aside) holding at least 5 such names: a registry-like list, not a
           test's two or three examples. The definitions themselves (`function!` lines, the
           tools' `NAME`/`tool("…")`, `block_specs/*.yaml`) are not lists. A block's
           implementation names its id once beside its code (`registry.insert("id", …)` or
           a self-registration), which keiri-run's spec↔implementation test matches to the
           spec; that is not a list either, on either layout.

Today's offenders are listed below (KNOWN_*). They may only shrink: a new offender fails, a
listed offender that grew fails, and a listed one that is no longer an offender fails with
"remove it from the list", so the list keeps telling the truth.

Usage: python3 scripts/check-structure.py [sizes|cycles|lists]...   (default: all three)
"""

from __future__ import annotations

import os
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 1200

# path -> its line count when listed (it may shrink, never grow, and leaves the list once under
# the limit).
KNOWN_LARGE: dict[str, int] = {}

# crate -> size of its largest import cycle (files) when listed.
KNOWN_CYCLES: dict[str, int] = {}

# (name, file) pairs: a name found in a hand-written list in that file while also defined or
# listed elsewhere. Empty: each front-end's share of the tools is derived from what each tool
# declares, and the tests read those shares.
KNOWN_LISTED: set[tuple[str, str]] = set()


def rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


def source_dirs() -> list[Path]:
    dirs = sorted((ROOT / "crates").glob("*/src"))
    if (ROOT / "src-tauri/src").is_dir():
        dirs.append(ROOT / "src-tauri/src")
    return dirs


def is_generated(text: str) -> bool:
    head = "\n".join(text.splitlines()[:5])
    return "@generated" in head or re.search(r"(?i)\bgenerated\b.*do not edit", head) is not None


# ---------------------------------------------------------------------------------------------
def check_sizes() -> list[str]:
    errors = []
    seen = set()
    for d in source_dirs():
        for p in sorted(d.rglob("*")):
            if not p.is_file():
                continue
            try:
                text = p.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            if is_generated(text):
                continue
            n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            r = rel(p)
            if r in KNOWN_LARGE:
                seen.add(r)
                if n <= LIMIT:
                    errors.append(f"sizes: {r} has {n} lines, under the limit of {LIMIT}: remove it from the list (KNOWN_LARGE)")
                elif n > KNOWN_LARGE[r]:
                    errors.append(f"sizes: {r} grew to {n} lines (listed at {KNOWN_LARGE[r]}); a listed file may only shrink: split it")
            elif n > LIMIT:
                errors.append(f"sizes: {r} has {n} lines, over the limit of {LIMIT}: split it by concern")
    for r in sorted(set(KNOWN_LARGE) - seen):
        errors.append(f"sizes: {r} is listed but does not exist: remove it from the list (KNOWN_LARGE)")
    return errors


# ---------------------------------------------------------------------------------------------
def strip_comments_and_strings(text: str) -> str:
    # Character literals first: a `'"'` or `b'"'` would otherwise open a string below.
    text = re.sub(r"(?<!\w)b?'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^'\\\n])'", "' '", text)
    text = re.sub(r'r(#+)"(.*?)"\1', '""', text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return text


def module_files(src: Path) -> dict[tuple[str, ...], Path]:
    mods = {}
    for p in src.rglob("*.rs"):
        parts = list(p.relative_to(src).with_suffix("").parts)
        if parts in (["lib"], ["main"]):
            parts = []
        elif parts and parts[-1] == "mod":
            parts = parts[:-1]
        mods[tuple(parts)] = p
    return mods


def defines(text: str, name: str) -> bool:
    return re.search(rf"\b(?:fn|struct|enum|trait|type|const|static|mod|union|macro_rules!)\s+{re.escape(name)}\b", text) is not None


def without_test_modules(text: str) -> str:
    """The text without its `#[cfg(test)] mod … { … }` blocks (tests are not the design)."""
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        depth, j = 0, m.end() - 1
        while j < len(text):
            depth += text[j] == "{"
            depth -= text[j] == "}"
            if depth == 0:
                break
            j += 1
        out.append(text[i:m.start()])
        i = j + 1
    out.append(text[i:])
    return "".join(out)


def split_use_tree(tree: str) -> list[str]:
    """`a::{b, c::{d, e}}` -> [`a::b`, `a::c::d`, `a::c::e`]."""
    tree = tree.strip()
    m = re.match(r"^(.*?)\{(.*)\}$", tree, flags=re.S)
    if not m:
        return [tree]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for c in inner:
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += c == "{"
        depth -= c == "}"
        cur += c
    parts.append(cur)
    out = []
    for part in parts:
        if part.strip():
            out += [prefix + x for x in split_use_tree(part)]
    return out


def check_cycles() -> list[str]:
    errors = []
    found: dict[str, int] = {}
    for src in source_dirs():
        crate = src.parent.name
        mods = module_files(src)
        file_mod = {p: m for m, p in mods.items()}
        texts = {p: without_test_modules(strip_comments_and_strings(p.read_text(encoding="utf-8"))) for p in mods.values()}
        raw = {p: p.read_text(encoding="utf-8") for p in mods.values()}
        globs: dict[tuple[str, ...], list[list[str]]] = defaultdict(list)

        # re-exports: (module, name) -> absolute path of the item
        def absolute(mod: tuple[str, ...], path: list[str]) -> list[str] | None:
            if not path:
                return None
            if tuple(mod) + (path[0],) in mods:
                # a child module named without `self::` (`input::register`)
                return list(mod) + path
            if path[0] == "crate":
                return path[1:]
            if path[0] == "self":
                return list(mod) + path[1:]
            if path[0] == "super":
                base = list(mod)
                while path and path[0] == "super":
                    base = base[:-1]
                    path = path[1:]
                return base + path
            return None

        reexports: dict[tuple[tuple[str, ...], str], list[str]] = {}
        uses: dict[Path, list[list[str]]] = defaultdict(list)
        for p, text in texts.items():
            mod = file_mod[p]
            for m in re.finditer(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", text):
                for item in split_use_tree(m.group(2)):
                    item = re.sub(r"\s+as\s+\w+$", "", item.strip())
                    path = [x for x in re.split(r"\s*::\s*", item) if x]
                    ab = absolute(mod, path)
                    if ab is None:
                        continue
                    uses[p].append(ab)
                    if m.group(1) and ab and ab[-1] == "*":
                        globs[mod].append(ab[:-1])
                    elif m.group(1) and ab and ab[-1] != "self":
                        reexports[(mod, ab[-1])] = ab
            for m in re.finditer(r"(?<![\w:])(\w+(?:\s*::\s*\w+)+)", text):
                path = re.split(r"\s*::\s*", m.group(1))
                ab = absolute(mod, path)
                if ab is not None:
                    uses[p].append(ab)

        def resolve(ab: list[str], depth: int = 0) -> Path | None:
            ab = [x for x in ab if x not in ("*", "self")]
            for k in range(len(ab), -1, -1):
                prefix = tuple(ab[:k])
                if prefix in mods:
                    rest = ab[k:]
                    if rest and depth < 8 and (prefix, rest[0]) in reexports:
                        target = reexports[(prefix, rest[0])]
                        if target != ab:
                            return resolve(target + rest[1:], depth + 1)
                    if rest and depth < 8 and not defines(raw[mods[prefix]], rest[0]):
                        for g in globs.get(prefix, []):
                            src_file = mods.get(tuple(g))
                            if src_file is not None and defines(raw[src_file], rest[0]):
                                return resolve(g + rest, depth + 1)
                    return mods[prefix]
            return None

        graph: dict[Path, set[Path]] = {p: set() for p in mods.values()}
        for p, paths in uses.items():
            for ab in paths:
                t = resolve(ab)
                if t is not None and t != p:
                    graph[p].add(t)

        biggest = 0
        for comp in sccs(graph):
            if len(comp) > 3:
                biggest = max(biggest, len(comp))
                if crate not in KNOWN_CYCLES:
                    names = ", ".join(sorted(rel(p) for p in comp))
                    errors.append(f"cycles: {crate} has an import cycle over {len(comp)} files: {names}")
        if biggest:
            found[crate] = biggest
        if crate in KNOWN_CYCLES:
            if not biggest:
                errors.append(f"cycles: {crate} has no import cycle over 3 files any more: remove it from the list (KNOWN_CYCLES)")
            elif biggest > KNOWN_CYCLES[crate]:
                errors.append(f"cycles: {crate}'s largest import cycle grew to {biggest} files (listed at {KNOWN_CYCLES[crate]})")
    if os.environ.get("CHECK_STRUCTURE_VERBOSE"):
        print("cycles found:", found)
    return errors


def sccs(graph: dict[Path, set[Path]]) -> list[list[Path]]:
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# ---------------------------------------------------------------------------------------------
def universe() -> dict[str, str]:
    """Every name that has one defining place: name -> kind."""
    names: dict[str, str] = {}
    for p in (ROOT / "crates/keiri-api/src").rglob("*.rs"):
        text = p.read_text(encoding="utf-8")
        for m in re.finditer(r"function!\s*\(\s*\w+\s+(\w+)\s*\(", text):
            names[m.group(1)] = "API function"
    tool_sources = list((ROOT / "crates/keiri-agent/src").rglob("*.rs")) + list(
        (ROOT / "crates/keiri-api/src").rglob("*.rs")
    )
    for p in tool_sources:
        text = p.read_text(encoding="utf-8")
        for m in re.finditer(r"const NAME: &'static str = \"(\w+)\"", text):
            names.setdefault(m.group(1), "tool")
        for m in re.finditer(r"\btool\(\s*\"(\w+)\"", text):
            names.setdefault(m.group(1), "tool")
    for p in (ROOT / "block_specs").rglob("*.yaml"):
        m = re.search(r"^id:\s*['\"]?([\w.]+)", p.read_text(encoding="utf-8"), flags=re.M)
        if m:
            names[m.group(1)] = "block"
    return names


LIST_SOURCES = ["crates", "src-tauri/src", "src-tauri/tests", "ui/src", "ui/e2e", "ui/tests", "scripts"]
ARRAY = re.compile(r"""\[\s*((?:(?:"[\w.]+"|'[\w.]+')\s*,\s*(?://[^\n]*\n\s*)?)+(?:"[\w.]+"|'[\w.]+')?\s*,?)\s*\]""")


def check_lists() -> list[str]:
    names = universe()
    listed: dict[str, list[str]] = defaultdict(list)  # name -> files (one entry per list)
    for base in LIST_SOURCES:
        d = ROOT / base
        if not d.is_dir():
            continue
        for p in sorted(d.rglob("*")):
            if p.suffix not in (".rs", ".ts", ".tsx", ".mjs", ".js", ".py") or "node_modules" in p.parts:
                continue
            if p.resolve() == Path(__file__).resolve():
                continue
            text = p.read_text(encoding="utf-8", errors="replace")
            if is_generated(text):
                continue
            for m in ARRAY.finditer(text):
                items = re.findall(r"""["']([\w.]+)["']""", m.group(1))
                hits = [x for x in dict.fromkeys(items) if x in names]
                if len(hits) >= 5:
                    for x in hits:
                        if rel(p) not in listed[x]:
                            listed[x].append(rel(p))
    offenders = {(n, f) for n, files in listed.items() if len(files) > 1 for f in files}
    errors = []
    for n, f in sorted(offenders - KNOWN_LISTED):
        others = sorted(set(listed[n]) - {f}) or [f]
        errors.append(
            f"lists: the {names[n]} `{n}` is named in a hand-written list in {f} and again in {', '.join(others)}: derive the list from the one definition instead of copying names"
        )
    for n, f in sorted(KNOWN_LISTED - offenders):
        errors.append(f"lists: `{n}` in {f} is no longer named in two lists: remove it from the list (KNOWN_LISTED)")
    if os.environ.get("CHECK_STRUCTURE_VERBOSE"):
        for n, f in sorted(offenders):
            print(f"    (\"{n}\", \"{f}\"),")
    return errors


CHECKS = {"sizes": check_sizes, "cycles": check_cycles, "lists": check_lists}


def main(argv: list[str]) -> int:
    wanted = argv or list(CHECKS)
    errors = []
    for name in wanted:
        if name not in CHECKS:
            print(f"unknown check {name!r}; choose from {', '.join(CHECKS)}", file=sys.stderr)
            return 2
        errors += CHECKS[name]()
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"check-structure: {len(errors)} problem(s)", file=sys.stderr)
        return 1
    print(f"check-structure: {', '.join(wanted)}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
