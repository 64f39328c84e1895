#!/usr/bin/env python3
"""The shape measures of docs/architecture.md, counted on src/ (issue 28).

File rings and suite-to-sibling imports come from the layers test
(`cargo test --test layers -- --ignored --nocapture file_measures`, which
parses every file with syn); this script counts the rest by reading the
text, test modules (from the first `#[cfg(test)]` at the start of a line)
left out:

  - the record's words spelled as string literals: regimes ("L1", "L2",
    "L3", "DRAM"), comparisons of an op (`op == "…"`, `op != "…"`), and
    transports ("tcp", "mpi");
  - `.get("` on a rank's reply (src/app/fleet);
  - keys of `run.options` read in views (src/report/views);
  - functions longer than 100 lines (from `fn` to its closing brace),
    and over 150;
  - `unsafe {` blocks without a `// SAFETY:` comment in the 6 lines above.

Usage: scripts/shape-measures.py [-v]
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
VERBOSE = "-v" in sys.argv


def files():
    for d, _, fs in os.walk(ROOT):
        for f in sorted(fs):
            if f.endswith(".rs") and f != "tests.rs" and "/tests" not in d:
                p = os.path.join(d, f)
                yield os.path.relpath(p, ROOT), open(p).read()


def non_test(text):
    lines = text.split("\n")
    for i, l in enumerate(lines):
        if l.startswith("#[cfg(test)]"):
            return lines[:i]
    return lines


def strip_comment(l):
    i = l.find("//")
    return l if i < 0 else l[:i]


REGIME = re.compile(r'"(L1|L2|L3|DRAM)"')
OP = re.compile(r'\bop\s*[!=]=\s*"')
TRANSPORT = re.compile(r'(?<!feature = )"(tcp|mpi)"')


def show(name, hits):
    print(f"{name}: {len(hits)}")
    if VERBOSE:
        for h in hits:
            print("   ", h)


def functions(lines):
    """(name, first line, length) of each fn with a body."""
    out = []
    i = 0
    fn = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"C\"\s+)?fn\s+(\w+)")
    while i < len(lines):
        m = fn.match(lines[i])
        if not m:
            i += 1
            continue
        depth, started, j = 0, False, i
        while j < len(lines):
            s = strip_comment(lines[j])
            if not started and ";" in s and "{" not in s:
                break
            for c in s:
                if c == "{":
                    depth += 1
                    started = True
                elif c == "}":
                    depth -= 1
            if started and depth <= 0:
                break
            j += 1
        if started:
            out.append((m.group(7), i + 1, j - i + 1))
        i += 1
    return out


def main():
    regime, op, transport, get, opts, long_fns, unsafe = [], [], [], [], [], [], []
    for rel, text in files():
        lines = non_test(text)
        for n, l in enumerate(lines, 1):
            code = strip_comment(l)
            where = f"{rel}:{n}: {l.strip()}"
            if not code.strip().startswith(("///", "//!")):
                regime += [where] * len(REGIME.findall(code))
                op += [where] * len(OP.findall(code))
                transport += [where] * len(TRANSPORT.findall(code))
            if rel.startswith("app/fleet") and '.get("' in code:
                get.append(where)
            if rel.startswith("report/views") and re.search(
                r'(options|opts|\bo)\s*\[\s*"|(options|\bo)\.get\("', code
            ):
                opts += [where] * len(re.findall(r'\[\s*"|\.get\("', code))
            if re.search(r"\bunsafe\s*\{", code):
                above = "\n".join(lines[max(0, n - 7) : n])
                if "SAFETY:" not in above:
                    unsafe.append(where)
        for name, first, length in functions(lines):
            if length > 100:
                long_fns.append(f"{rel}:{first}: fn {name} ({length} lines)")
    show("regime literals", regime)
    show("op comparisons with a literal", op)
    show("transport literals", transport)
    print(f"record words as literals (sum): {len(regime) + len(op) + len(transport)}")
    show('.get(" in app/fleet', get)
    show("run.options keys read in views", opts)
    show("functions over 100 lines", long_fns)
    print(f"  of which over 150: {sum(1 for f in long_fns if int(f.split('(')[-1].split()[0]) > 150)}")
    show("unsafe blocks without SAFETY", unsafe)


main()
