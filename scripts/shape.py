#!/usr/bin/env python3
"""The shape issue #16 asks of the code, checked: what its "Done when" says besides the
test suite, so that a change which undoes it shows in `make test` rather than in review.

    python3 scripts/shape.py              # report what is off; exit 0 (report only)
    python3 scripts/shape.py --strict     # the same, exit 1 when anything is off
    python3 scripts/shape.py --src DIR    # check another crate's src/ (the tests do)

What is off:
- a file under src/ over 800 lines, or `cli/run.rs` over 150 (the run lives in the
  session; the command only turns arguments into options and prints);
- a file named in docs/architecture.md (`src/...`, or `MODULE/...rs`) that does not
  exist (`NAME` stands for any: the doc's templates), so the map stays the territory's;
  a "where to add" count that is not the length of its list, or a registry or function
  a list names that its file does not define;
- a function over 80 lines of code (blank lines and comments not counted, as clippy's
  `too_many_lines` counts them; clippy enforces the same threshold, from clippy.toml);
- `Store::open(` outside src/store/ and src/session/ (one writer to the store: engines,
  drivers, transports and the timeline hand what they have to the run's sink);
- `profile.get(` in src/report/ (the report reads typed stored workloads, not JSON);
- an edge against the layers of docs/architecture.md, or an import circle between
  modules or files, a `mod.rs` with its own submodules included (what they share goes
  in a file of its own). `scripts/imports.py` does this analysis and explains it.

Code is searched without comments, string literals and `#[cfg(test)] mod tests`.
`make test` runs it report-only while #16's branches land; it becomes `--strict` once
they have.
"""

import argparse
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import imports  # noqa: E402  (this folder's analysis of `use` paths)

MAX_LINES = 800
MAX_FN_LINES = 80
MAX_LINES_OF = {("cli", "run.rs"): 150}
# (text, folders of src/, whether it may appear only in them or never in them)
PLACES = [
    ("Store::open(", [("store",), ("session",)], "only"),
    ("profile.get(", [("report",)], "never"),
]


def lines_of(f):
    return len(f.read_text().splitlines())


def line_at(text, index):
    return text.count("\n", 0, index) + 1


def long_functions(code):
    """(name, line, lines of code) of each function in `code` (comments and strings
    already removed) whose body has more than MAX_FN_LINES lines that are not blank."""
    out = []
    for m in re.finditer(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)[^;{]*\{", code):
        depth, i = 1, m.end()
        while depth and i < len(code):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        # the lines inside its braces, as clippy counts them
        body = code[m.end() : i - 1]
        lines = sum(1 for line in body.splitlines() if line.strip())
        if lines > MAX_FN_LINES:
            out.append((m.group(1), line_at(code, m.start()), lines))
    return out


def doc_drift(src):
    """The files docs/architecture.md (beside src/) names that are not in src/."""
    doc = src.parent / "docs" / "architecture.md"
    if not doc.is_file():
        return []
    text = doc.read_text()
    modules = "|".join(sorted(p.name for p in src.iterdir() if p.is_dir()))
    named = set(re.findall(r"(?<![\w/.])src/([A-Za-z0-9_/]+\.rs)", text))
    if modules:
        named |= set(re.findall(rf"(?<![\w/.])((?:{modules})/[A-Za-z0-9_/]+\.rs)", text))
    drift = [f"docs/architecture.md names src/{p}, which does not exist" for p in sorted(named)
             if "NAME" not in p and not (src / p).exists()]
    return drift + where_to_add(src, text)


def where_to_add(src, text):
    """What is off in the doc's "Where to add" section. Under each `### WHAT: N files`
    heading comes a numbered list of N items, each beginning with the distinct `src/`
    file it touches. In a file that exists, each name an item puts after "in" or "its"
    (its line in PROGRAMS, its Command variant) is defined there. So a count cannot
    drift from its list, nor a list from the registries and functions it names."""
    section = re.search(r"^## Where to add[^\n]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not section:
        return []
    out = []
    for m in re.finditer(r"^### ([^\n]+?): (\d+) files?\n(.*?)(?=^### |\Z)", section.group(1), re.M | re.S):
        what, count, body = m.group(1), int(m.group(2)), m.group(3)
        items = re.findall(r"^\d+\. (.*(?:\n {3}.*)*)", body, re.M)
        paths = []
        for item in items:
            first = re.match(r"`src/([^`]+\.rs)`", item)
            if not first:
                out.append(f"docs/architecture.md: an item of \"{what}\" does not begin with its `src/` file")
                continue
            path = first.group(1)
            paths.append(path)
            if "NAME" in path or not (src / path).is_file():
                continue
            code = (src / path).read_text()
            for name in re.findall(r"\b(?:in|its)\s+`(?:[A-Za-z_]+::)*([A-Za-z_][A-Za-z0-9_]*)`", item):
                if not re.search(rf"\b(?:fn|struct|enum|trait|const|static|type)\s+{name}\b", code):
                    out.append(f"docs/architecture.md: \"{what}\" names `{name}` in src/{path}, which does not define it")
        if len(items) != count or len(set(paths)) != len(paths):
            out.append(f"docs/architecture.md: \"{what}\" counts {count} files but lists {len(set(paths))}")
    return out


def findings(src):
    """What is off in the crate whose src/ folder is `src`, as `path:line: what` texts."""
    out = []
    files = sorted(src.rglob("*.rs"))
    for f in files:
        rel = f.relative_to(src)
        limit = MAX_LINES_OF.get(rel.parts, MAX_LINES)
        n = lines_of(f)
        if n > limit:
            out.append(f"{rel}: {n} lines, over {limit}")
        for name, line, lines in long_functions(imports.code_of(f)):
            out.append(f"{rel}:{line}: fn {name}: {lines} lines of code, over {MAX_FN_LINES}")
    for f in files:
        rel = f.relative_to(src)
        code = imports.code_of(f)
        for text, folders, rule in PLACES:
            inside = any(rel.parts[: len(p)] == p for p in folders)
            if inside == (rule == "only"):
                continue
            where = ", ".join("src/" + "/".join(p) + "/" for p in folders)
            start = code.find(text)
            while start != -1:
                out.append(f"{rel}:{line_at(code, start)}: `{text}` ({rule} in {where})")
                start = code.find(text, start + 1)
    out.extend(doc_drift(src))
    found = imports.analyse(src)
    for a, b, why in found.wrong:
        out.append(f"{a} -> {b} against the layers ({why}): {' '.join(sorted(found.modules[a][b]))}")
    for c in found.module_circles:
        out.append(f"circle between modules: {' '.join(c)}")
    for c, kin in found.file_circles:
        names = " ".join(str(f.relative_to(src)) for f in c)
        out.append(f"circle between files{' (a mod.rs and its own submodules)' if kin else ''}: {names}")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strict", action="store_true", help="exit 1 when anything is off")
    parser.add_argument("--src", type=pathlib.Path, default=imports.SRC, help="the crate's src/ folder")
    args = parser.parse_args()
    off = findings(args.src.resolve())
    for f in off:
        print(f)
    mode = "" if args.strict else " (report only: --strict fails on them)"
    print(f"shape: {len(off)} finding{'' if len(off) == 1 else 's'} against issue #16's done-when{mode}")
    return 1 if off and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
