#!/usr/bin/env python3
"""What fathom is built from, checked: every crate's licence against the licences a
binary distributed under Apache-2.0 may include, and known advisories when
`cargo audit` and its advisory database are reachable (skipped, saying why, otherwise:
the database is a git repository on GitHub, which some machines cannot reach).

The licence check needs nothing but cargo: it reads `cargo metadata` (the lock file as
it is) and accepts a crate when one alternative of its SPDX expression has only allowed
licences. Exit 1 names each crate that has none. Usage: scripts/supply-chain.py
"""

import json
import re
import shutil
import subprocess
import sys

# Permissive licences, and two weak copylefts whose terms bind only their own files
# (MPL-2.0) or data (CDLA-Permissive-2.0, Mozilla's root certificates), which fathom
# distributes unmodified.
ALLOWED = {
    "MIT", "Apache-2.0", "Apache-2.0 WITH LLVM-exception", "BSD-2-Clause", "BSD-3-Clause",
    "ISC", "Zlib", "Unicode-3.0", "Unicode-DFS-2016", "Unlicense", "0BSD", "BSL-1.0",
    "CC0-1.0", "MPL-2.0", "CDLA-Permissive-2.0",
}


def alternatives(expression):
    """The expression's OR alternatives, each a list of the licences it ANDs together.
    Old crates write `MIT/Apache-2.0` for `MIT OR Apache-2.0`; parentheses group."""
    text = expression.replace("/", " OR ")
    tokens = re.findall(r"\(|\)|[A-Za-z0-9.+-]+(?: WITH [A-Za-z0-9.+-]+)?", text)
    def parse(i):
        ors, ands = [], [[]]
        while i < len(tokens):
            t = tokens[i]
            if t == "(":
                inner, i = parse(i + 1)
                ands = [a + b for a in ands for b in inner]
            elif t == ")":
                return ors + ands, i
            elif t == "OR":
                ors, ands = ors + ands, [[]]
            elif t != "AND":
                ands = [a + [t] for a in ands]
            i += 1
        return ors + ands, i
    return parse(0)[0]


def licences():
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--locked", "--format-version", "1", "--filter-platform", "x86_64-unknown-linux-gnu"],
        check=True, capture_output=True, text=True).stdout)
    used = {n["id"] for n in meta["resolve"]["nodes"]}
    bad = []
    for p in meta["packages"]:
        if p["id"] not in used or p["source"] is None:
            continue
        expression = p.get("license") or ""
        if not any(alt and all(l in ALLOWED for l in alt) for alt in alternatives(expression)):
            bad.append(f"{p['name']} {p['version']}: {expression or 'no licence given'}")
    return len(used), bad


def advisories():
    if shutil.which("cargo-audit") is None:
        return "advisories: skipped (cargo-audit is not installed: cargo install --locked cargo-audit)"
    run = subprocess.run(["cargo", "audit", "--deny", "warnings"], capture_output=True, text=True)
    said = run.stdout + run.stderr
    if run.returncode != 0 and ("couldn't fetch" in said or "failed to fetch" in said or "resolve" in said):
        return "advisories: skipped (the advisory database is not reachable from here)"
    if run.returncode != 0:
        sys.stderr.write(said)
        sys.exit(1)
    return "advisories: none known"


def main():
    crates, bad = licences()
    for b in bad:
        print(f"licence not allowed: {b}", file=sys.stderr)
    if bad:
        sys.exit(1)
    print(f"licences: {crates} crates, each under a licence Apache-2.0 may distribute")
    print(advisories())


if __name__ == "__main__":
    main()
