#!/usr/bin/env python3
"""Which part of fathom uses which: the `crate::`, `super::` and child-module paths of
every file under src/ (comments, strings and `#[cfg(test)] mod tests` left out), as
edges between top-level modules (src/<name>/ or src/<name>.rs) and between files; the
edges against the layers of docs/architecture.md ("What each module may import", kept
in LAYERS below), and the circles.

    python3 scripts/imports.py            # modules, what each imports, what goes wrong
    python3 scripts/imports.py --files    # the file-level edges too

Exit status 1 when an edge goes against the layers or a circle exists (between modules,
or between files other than a `mod.rs` and its own submodules), so it can gate CI once
there are none.
"""

import collections
import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"

# docs/architecture.md's table: a module may use lower layers; within a layer, only these.
LAYERS = {
    "error": 0, "secrets": 0, "nofollow": 0, "http": 0,
    "metrics": 1,
    "scenario": 2,
    "workload": 3, "analysis": 3, "warnings": 3,
    "store": 4,
    "engine": 5, "drivers": 5, "observe": 5, "transport": 5, "children": 5,
    "timeline": 6,
    "report": 7, "export": 7,
    "session": 8,
    "cli": 9,
}
SAME_LAYER = {("drivers", "engine"), ("drivers", "children"), ("transport", "engine")}
# the reading layer may not use the doing and running ones, `observe` aside
NOT_FROM_READING = {"engine", "drivers", "transport", "timeline"}


def against_layers(a, b):
    """Why module a may not use module b, or None."""
    if a not in LAYERS or b not in LAYERS:
        return f"{a if a not in LAYERS else b} has no layer in docs/architecture.md (and LAYERS here)"
    if LAYERS[a] == 7 and b in NOT_FROM_READING:
        return "reading uses no engine, driver, transport or timeline"
    if LAYERS[b] > LAYERS[a] or (LAYERS[b] == LAYERS[a] and (a, b) not in SAME_LAYER):
        return f"layer {LAYERS[a]} uses layer {LAYERS[b]}"
    return None


def module_path(f):
    """src/a/b.rs -> ['a', 'b']; src/a/mod.rs -> ['a']; src/main.rs -> []."""
    parts = list(f.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "mod" or parts == ["main"]:
        parts = parts[:-1]
    return parts


FILES = sorted(SRC.rglob("*.rs"))
BY_PATH = {tuple(module_path(f)): f for f in FILES}


def resolve(segments):
    """The file of the longest module prefix of a path, or None (std, a crate, an item)."""
    for n in range(len(segments), 0, -1):
        hit = BY_PATH.get(tuple(segments[:n]))
        if hit:
            return hit
    return None


def code_of(f):
    """The file's code, without its test module, comments and string literals."""
    text = f.read_text()
    test = re.search(r"#\[cfg\(test\)\]\s*(pub(\(crate\))? )?mod tests", text)
    if test:
        text = text[: test.start()]
    text = re.sub(r'r#*"(?:.|\n)*?"#*|"(?:[^"\\]|\\.)*"', '""', text)
    return re.sub(r"//[^\n]*", "", text)


def targets(f):
    """The files f uses."""
    me = module_path(f)
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
            found.add(resolve(prefix + rest.split("::")))
            continue
        else:
            continue  # std::, serde::, a local variable's enum...
        found.add(resolve(prefix + rest.split("::")))
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
            found.add(resolve(prefix + segs))
    found.discard(None)
    found.discard(f)
    return found


def top(f):
    p = module_path(f)
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


def family(a, b):
    """A mod.rs and a file of its own folder (parent and child modules)."""
    ma, mb = module_path(a), module_path(b)
    return (a.name == "mod.rs" and mb[:-1] == ma) or (b.name == "mod.rs" and ma[:-1] == mb)


def main():
    show_files = "--files" in sys.argv
    files = {f: targets(f) for f in FILES}
    modules = collections.defaultdict(lambda: collections.defaultdict(set))
    for f, ts in files.items():
        for t in ts:
            if top(f) != top(t) and top(f) != "main":
                modules[top(f)][top(t)].add(str(f.relative_to(SRC)))
    print("modules (top-level folders and files) and what they import:")
    for m in sorted({top(f) for f in FILES} - {"main"}):
        print(f"  {m:<10} -> {' '.join(sorted(modules[m])) or '(nothing)'}")
    wrong = [(a, b, against_layers(a, b)) for a in sorted(modules) for b in sorted(modules[a])]
    wrong = [w for w in wrong if w[2]]
    for a, b, why in wrong:
        print(f"\nagainst the layers: {a} -> {b} ({why}): {' '.join(sorted(modules[a][b]))}")
    module_circles = circles({m: set(ts) for m, ts in modules.items()})
    for c in module_circles:
        print(f"\ncircle between modules: {' '.join(c)}")
        for a in c:
            for b in c:
                if b in modules[a]:
                    print(f"  {a} -> {b}: {' '.join(sorted(modules[a][b]))}")
    file_graph = {f: ts for f, ts in files.items()}
    file_circles = circles(file_graph)
    strict = []
    for c in file_circles:
        names = [str(f.relative_to(SRC)) for f in c]
        kin = all(family(a, b) or a == b for a in c for b in c if b in file_graph[a])
        print(f"\ncircle between files{' (a mod.rs and its own submodules)' if kin else ''}: {' '.join(names)}")
        if not kin:
            strict.append(c)
    if show_files:
        print("\nfiles:")
        for f, ts in sorted(files.items()):
            print(f"  {f.relative_to(SRC)} -> {' '.join(sorted(str(t.relative_to(SRC)) for t in ts))}")
    return 1 if wrong or module_circles or strict else 0


if __name__ == "__main__":
    sys.exit(main())
