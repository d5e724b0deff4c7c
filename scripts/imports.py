#!/usr/bin/env python3
"""Which part of fathom uses which: the `crate::`, `super::` and child-module paths of
every file under src/ (comments, strings and `#[cfg(test)] mod tests` left out), as
edges between top-level modules (src/<name>/ or src/<name>.rs) and between files; the
edges against the layers of docs/architecture.md ("What each module may import", kept
in LAYERS below), and the circles.

    python3 scripts/imports.py            # modules, what each imports, what goes wrong
    python3 scripts/imports.py --files    # the file-level edges too

Exit status 1 when an edge goes against the layers or a circle exists (between modules,
or between files other than a `mod.rs` and its own submodules). `scripts/shape.py`, which
`make test` runs, reads the same analysis ([`analyse`]) with the rest of #16's done-when
checks; it counts a `mod.rs`'s circle with its own submodules too.
"""

import collections
import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"

# docs/architecture.md's table: a module may use lower layers; within a layer, only these.
LAYERS = {
    "error": 0, "clock": 0, "secrets": 0, "nofollow": 0, "http": 0, "meminfo": 0, "terminal": 0, "suggest": 0,
    "metrics": 1,
    "scenario": 2,
    "workload": 3, "analysis": 3, "warnings": 3, "import": 3,
    "store": 4,
    "engine": 5, "drivers": 5, "observe": 5, "transport": 5, "children": 5,
    "coprocess": 5,
    "timeline": 6,
    "report": 7, "export": 7,
    "session": 8,
    "cli": 9,
}
SAME_LAYER = {
    ("drivers", "engine"), ("drivers", "children"), ("drivers", "coprocess"), ("transport", "engine"),
    ("transport", "observe"), ("observe", "children"), ("observe", "coprocess"), ("coprocess", "children"),
    ("transport", "drivers"),
    ("export", "report"),
}
# the reading layer may not use the doing and running ones, `observe` aside
NOT_FROM_READING = {"engine", "drivers", "transport", "timeline"}


def against_layers(a, b):
    """Why module a may not use module b, or None."""
    if b == "error":
        return None  # the crate's one error type: every module returns it
    if a not in LAYERS or b not in LAYERS:
        return f"{a if a not in LAYERS else b} has no layer in docs/architecture.md (and LAYERS here)"
    if LAYERS[a] == 7 and b in NOT_FROM_READING:
        return "reading uses no engine, driver, transport or timeline"
    if LAYERS[b] > LAYERS[a] or (LAYERS[b] == LAYERS[a] and (a, b) not in SAME_LAYER):
        return f"layer {LAYERS[a]} uses layer {LAYERS[b]}"
    return None


def module_path(f, src=SRC):
    """src/a/b.rs -> ['a', 'b']; src/a/mod.rs -> ['a']; src/main.rs -> []."""
    parts = list(f.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod" or parts == ["main"]:
        parts = parts[:-1]
    return parts


def resolve(segments, by_path):
    """The file of the longest module prefix of a path, or None (std, a crate, an item)."""
    for n in range(len(segments), 0, -1):
        hit = by_path.get(tuple(segments[:n]))
        if hit:
            return hit
    return None


def code_of(f):
    """The file's code, without its test module, comments and string literals."""
    text = f.read_text()
    test = re.search(r"#\[cfg\(test\)\]\s*(pub(\(crate\))? )?mod tests", text)
    if test:
        text = text[: test.start()]
    # a char literal first: '"' would otherwise open a string
    text = re.sub(r"'(?:\\.|[^'\\\n])'", "' '", text)
    text = re.sub(r'r#*"(?:.|\n)*?"#*|"(?:[^"\\]|\\.)*"', '""', text)
    return re.sub(r"//[^\n]*", "", text)


def targets(f, src, by_path):
    """The files f uses."""
    me = module_path(f, src)
    parent = me[:-1]
    code = code_of(f)
    children = set(re.findall(r"^\s*(?:pub(?:\([a-z]+\))? )?mod ([a-z_0-9]+);", code, re.M))
    found = set()
    path = r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*"
    for base, rest in re.findall(rf"(?<![A-Za-z0-9_:])(crate|super|self|[a-z_][a-z0-9_]*)::({path})", code):
        if base == "crate":
            prefix = []
        elif base == "super":
            prefix = parent
        elif base == "self":
            prefix = me
        elif base in children:
            prefix, rest = me + [base], rest
            found.add(resolve(prefix + rest.split("::"), by_path))
            continue
        else:
            continue  # std::, serde::, a local variable's enum...
        found.add(resolve(prefix + rest.split("::"), by_path))
    # grouped uses: `use crate::a::{b, c::D}`
    for base, mid, items in re.findall(r"use (crate|super|[a-z_]+)::((?:[a-z_0-9]+::)*)\{([^}]*)\}", code):
        if base == "crate":
            prefix = []
        elif base == "super":
            prefix = parent
        elif base in children:
            prefix = me + [base]
        else:
            continue
        prefix = prefix + [m for m in mid.split("::") if m]
        for item in items.split(","):
            segs = [s for s in item.strip().split(" as ")[0].split("::") if s and s != "self"]
            found.add(resolve(prefix + segs, by_path))
    found.discard(None)
    found.discard(f)
    return found


def top(f, src=SRC):
    p = module_path(f, src)
    return p[0] if p else "main"


def circles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
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
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def family(a, b, src=SRC):
    """A mod.rs and a file of its own folder (parent and child modules)."""
    ma, mb = module_path(a, src), module_path(b, src)
    return (a.name == "mod.rs" and mb[:-1] == ma) or (b.name == "mod.rs" and ma[:-1] == mb)


Analysis = collections.namedtuple("Analysis", "files modules wrong module_circles file_circles")
Analysis.__doc__ = """What the code under a src/ folder imports: `files` (file -> the files it uses),
`modules` (module -> module -> the files behind that edge), `wrong` ((a, b, why) for each
edge against the layers), `module_circles`, and `file_circles` ((files, kin): kin when the
circle is only a `mod.rs` with its own submodules)."""


def analyse(src=SRC):
    """The imports of every file under `src` (a crate's src/ folder), against the layers."""
    all_files = sorted(src.rglob("*.rs"))
    by_path = {tuple(module_path(f, src)): f for f in all_files}
    files = {f: targets(f, src, by_path) for f in all_files}
    modules = collections.defaultdict(lambda: collections.defaultdict(set))
    for f, ts in files.items():
        for t in ts:
            if top(f, src) != top(t, src) and top(f, src) != "main":
                modules[top(f, src)][top(t, src)].add(str(f.relative_to(src)))
    for f in all_files:
        if top(f, src) != "main":
            modules[top(f, src)]  # every module listed, those importing nothing too
    wrong = [(a, b, against_layers(a, b)) for a in sorted(modules) for b in sorted(modules[a])]
    wrong = [w for w in wrong if w[2]]
    module_circles = circles({m: set(ts) for m, ts in modules.items()})
    file_circles = [
        (c, all(family(a, b, src) or a == b for a in c for b in c if b in files[a])) for c in circles(files)
    ]
    return Analysis(files, modules, wrong, module_circles, file_circles)


def main():
    show_files = "--files" in sys.argv
    found = analyse()
    modules = found.modules
    print("modules (top-level folders and files) and what they import:")
    for m in sorted(modules):
        print(f"  {m:<10} -> {' '.join(sorted(modules[m])) or '(nothing)'}")
    for a, b, why in found.wrong:
        print(f"\nagainst the layers: {a} -> {b} ({why}): {' '.join(sorted(modules[a][b]))}")
    for c in found.module_circles:
        print(f"\ncircle between modules: {' '.join(c)}")
        for a in c:
            for b in c:
                if b in modules[a]:
                    print(f"  {a} -> {b}: {' '.join(sorted(modules[a][b]))}")
    for c, kin in found.file_circles:
        names = [str(f.relative_to(SRC)) for f in c]
        print(f"\ncircle between files{' (a mod.rs and its own submodules)' if kin else ''}: {' '.join(names)}")
    if show_files:
        print("\nfiles:")
        for f, ts in sorted(found.files.items()):
            print(f"  {f.relative_to(SRC)} -> {' '.join(sorted(str(t.relative_to(SRC)) for t in ts))}")
    strict = [c for c, kin in found.file_circles if not kin]
    return 1 if found.wrong or found.module_circles or strict else 0


if __name__ == "__main__":
    sys.exit(main())
