#!/usr/bin/env python3
"""fathom on the fio job files users already own: how many run, why the rest are refused,
and how fathom's numbers compare with fio's on the same files.

Walks the compatibility corpus (../shared/corpus/fio and the X-Ray `.fio` files; read in
place, never copied), lints each file with `fathom lint` (runs / refused by option and
reason / not a job file), runs every runnable file for a few seconds on a scratch directory,
and runs a sample of them `--repeat` times through both fathom's engine and, with
`--engine fio`, the same file as written through fio (fathom rewrites only the targets and
the `--set`s: size shrunk, run length), alternating which goes first. Both land in one
store, so both tools' figures come from `fathom show --json`, computed the same way. A
file's IOPS and MB/s are the sums over its jobs and ops; its p50 and p99 the largest over
them (fio: completion latency).
See bench/README.md. Standard library only (Python 3.11).
"""

import argparse
import json
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parent
# the tool checks shared with the fathom-vs-fio benchmark
_spec = importlib.util.spec_from_file_location("vs_fio", BENCH / "vs-fio.py")
vs_fio = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vs_fio)
ROOT = BENCH.parent
OUT = BENCH / "out"  # all scratch output lives here (git-ignored)
SCRATCH = OUT / "corpus-scratch"  # fathom's and fio's data files
RESULTS = OUT / "corpus-results"  # fathom's results store for these runs
SIZE = "64m"
REFUSED = "fathom's engine cannot run this file as written"
FIGURES = ("iops", "mbps", "p50_us", "p99_us")
def default_corpus():
    """../shared/corpus/fio from the repository (or from the checkout's parents: a worktree)."""
    for base in [ROOT, *ROOT.parents]:
        if (base.parent / "shared/corpus/fio").is_dir():
            return base.parent / "shared/corpus/fio"
    return ROOT.parent / "shared/corpus/fio"


def corpus_files(corpus, every):
    """The corpus's fio files and X-Ray's `.fio` files, fio's own (axboe+fio) only with --all."""
    files = sorted(p for p in corpus.rglob("*") if p.is_file())
    xray = corpus.parent / "xray"
    if xray.is_dir():
        files += sorted(xray.rglob("*.fio"))
    return [f for f in files if every or "axboe+fio" not in f.parts]


def fathom_args(args, target):
    """The arguments lint and run share: the scratch target, a short run, small files."""
    return ["--target", str(target), "--set", f"duration={args.seconds}s", "--set", f"size={SIZE}",
            "--set", "ramp=0s"]


def classify(args, path):
    """Lints the file: ('runs', rates asked) / ('refused', 'OPTION: why') / ('not a job file', message)."""
    proc = subprocess.run([args.fathom, "lint", str(path), *fathom_args(args, SCRATCH / "fathom")],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode == 0:
        return "runs", asked_rates(proc.stdout)
    err = next((l for l in proc.stderr.splitlines() if l.startswith("fathom:")), proc.stderr.strip())
    err = err.removeprefix("fathom:").strip()
    where = re.match(rf"{re.escape(str(path))}(:\d+)?:\s*", err)
    message = err[where.end():] if where else err
    if REFUSED in message:
        return "refused", message.split(f"; {REFUSED}")[0]
    return "not a job file", message


def asked_rates(mapping):
    """The rates the file asks, summed over its jobs, from lint's mapping lines."""
    iops = sum(int(m) for m in re.findall(r"->\s+rate_iops: (\d+)", mapping))
    mbps = sum(float(m) for m in re.findall(r"->\s+rate_mbps: ([\d.]+)", mapping))
    return dict(iops=iops or None, mbps=mbps or None, thinks=bool(re.search(r"->\s+think_time: ", mapping)))


def summarize(parts):
    """IOPS and MB/s summed, p50 and p99 the largest, over (iops, mbps, p50_us, p99_us) parts."""
    parts = [p for p in parts if p[0]]
    if not parts:
        return None
    return dict(iops=sum(p[0] for p in parts), mbps=sum(p[1] for p in parts),
                p50_us=max(p[2] for p in parts), p99_us=max(p[3] for p in parts))


def run_fathom(args, path, stem, engine=None):
    """Runs the file through fathom's engine, or with `engine="fio"` the file as written through
    fio (fathom rewrites only the targets and the `--set`s); its figures from `fathom show last
    --json` either way, or an error."""
    target = SCRATCH / (engine or "fathom")
    target.mkdir(parents=True, exist_ok=True)
    argv = [args.fathom, "run", str(path), *fathom_args(args, target), "--results", str(RESULTS), "-q"]
    if engine:
        argv += ["--engine", engine]
        stem += f"-{engine}"
    # fathom's fio driver runs the `fio` on PATH: the one `--fio` names comes first
    env = {**os.environ, "PATH": f"{Path(args.fio).parent}:{os.environ.get('PATH', '')}"}
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=args.seconds * 10 + 120, env=env)
    except subprocess.TimeoutExpired:
        return dict(error="timed out", argv=shlex.join(argv))
    (OUT / "logs").mkdir(parents=True, exist_ok=True)
    (OUT / "logs" / f"{stem}-fathom.err").write_text(proc.stderr)
    if proc.returncode != 0:
        return dict(error=f"exit {proc.returncode}: " + proc.stderr.strip()[-300:], argv=shlex.join(argv))
    shown = json.loads(subprocess.run([args.fathom, "show", "last", "--json", "--results", str(RESULTS)],
                                      check=True, capture_output=True, text=True).stdout)
    ops = [o for w in shown["workloads"] for o in w["ops"] if o.get("latency")]
    return dict(argv=shlex.join(argv), **(summarize(
        (o["iops"], o["mb_per_s"], o["latency"]["p50_us"], o["latency"]["p99_us"]) for o in ops) or {}))


def uses_bssplit(path):
    return any(re.match(r"\s*bssplit\s*=", l) for l in path.read_text(errors="replace").splitlines())


def parity(args, entries):
    """Runs each sampled file `--repeat` times through both engines, alternating which goes
    first; per file each tool's median figures and the median of the per-repeat ratios."""
    rows = []
    for e in entries:
        path, stem = Path(e["path"]), e["name"].replace("/", "_")
        runs = {"fathom": [], "fio": []}
        for rep in range(args.repeat):
            print(f"parity {rep + 1}/{args.repeat}: {e['name']}", file=sys.stderr, flush=True)
            order = [None, "fio"] if rep % 2 == 0 else ["fio", None]
            for engine in order:
                runs[engine or "fathom"].append(run_fathom(args, path, stem, engine))
        row = dict(name=e["name"], runs=runs)
        for tool, got in runs.items():
            ok = [g for g in got if "error" not in g and g.get("iops")]
            row[tool] = ({k: statistics.median(g[k] for g in ok) for k in FIGURES} if ok
                         else dict(error=next((g["error"] for g in got if "error" in g), "no IO reported")))
        pairs = [(f, g) for f, g in zip(runs["fathom"], runs["fio"])
                 if "error" not in f and "error" not in g and f.get("iops") and g.get("iops")]
        if pairs:
            row["ratio"] = {k: statistics.median(f[k] / g[k] for f, g in pairs) for k in FIGURES
                            if all(g[k] for _, g in pairs)}
        asked = e["asked"]
        if uses_bssplit(path) and (asked["iops"] or asked["mbps"]):
            key, want = ("iops", asked["iops"]) if asked["iops"] else ("mbps", asked["mbps"])
            got = {t: row[t].get(key) for t in ("fathom", "fio")}
            row["rate"] = dict(unit=key, asked=want, **got,
                               fio_under=bool(got["fio"] is not None and got["fio"] < 0.9 * want))
        rows.append(row)
    return rows


def table(head, rows):
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    return "\n".join("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths))) for r in [head, *rows])


def report(files, rows):
    """The summary: how many run, refused by reason, not job files, and the parity table."""
    n = len(files)
    count = lambda k: sum(1 for f in files if f["class"] == k)
    runs = count("runs")
    out = [f"{n} files: {runs} run ({100 * runs / n:.0f}%), {count('refused')} refused, "
           f"{count('not a job file')} not a job file"
           + (f"; {sum(1 for f in files if 'error' in f.get('run', {}))} of those that lint failed to run"
              if any("error" in f.get("run", {}) for f in files) else "")]
    reasons = {}
    for f in files:
        if f["class"] == "refused":
            reasons.setdefault(f["why"], []).append(f["name"])
    if reasons:
        out += ["", "refused, by reason:"]
        out += [f"  {len(v):3}  {k}" for k, v in sorted(reasons.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
    failed = [f for f in files if "error" in f.get("run", {})]
    if failed:
        out += ["", "lint passed but the run failed:"] + [f"  {f['name']}: {f['run']['error']}" for f in failed]
    if rows:
        fmt = lambda d, k, p: "-" if "error" in d or d.get(k) is None else f"{d[k]:,.{p}f}"
        head = ("file", "fathom IOPS", "fio IOPS", "f/fio", "fathom MB/s", "fio MB/s", "f/fio",
                "fathom p50 µs", "fio p50 µs", "f/fio", "fathom p99 µs", "fio p99 µs", "f/fio")
        body = []
        for r in rows:
            cells = [r["name"]]
            for k, p in (("iops", 0), ("mbps", 1), ("p50_us", 0), ("p99_us", 0)):
                cells += [fmt(r["fathom"], k, p), fmt(r["fio"], k, p),
                          f"{r['ratio'][k]:.2f}" if k in r.get("ratio", {}) else "-"]
            body.append(cells)
        out += ["", "parity (fathom vs fio, same file):", table(head, body)]
        med = {k: statistics.median(r["ratio"][k] for r in rows if k in r.get("ratio", {}))
               for k in ("iops", "mbps", "p50_us", "p99_us") if any(k in r.get("ratio", {}) for r in rows)}
        out.append("median fathom/fio: " + ", ".join(f"{k} {v:.2f}" for k, v in med.items()))
        for r in rows:
            if "error" in r["fio"]:
                out.append(f"fio failed on {r['name']}: {r['fio']['error']}")
        for r in rows:
            if "rate" in r:
                q = r["rate"]
                note = "fio under-delivers with bssplit" if q["fio_under"] else "both near the rate"
                out.append(f"rate with bssplit, {r['name']}: asked {q['asked']:,.0f} {q['unit']}, "
                           f"fathom {q['fathom'] or 0:,.0f}, fio {q['fio'] or 0:,.0f}: {note}")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, default=default_corpus(), help="the fio corpus (default ../shared/corpus/fio)")
    p.add_argument("--all", action="store_true", help="include fio's own examples and tests (axboe+fio)")
    p.add_argument("--seconds", type=int, default=3, help="measured seconds per run (default 3)")
    p.add_argument("--sample", type=int, default=20, help="runnable files also run through fio (default 20)")
    p.add_argument("--seed", type=int, default=1, help="seed of the sample's choice (default 1)")
    p.add_argument("--repeat", type=int, default=1,
                   help="runs of each sampled file per engine, alternating which goes first (default 1)")
    p.add_argument("--only", metavar="REGEX", help="only the files whose corpus name matches")
    p.add_argument("--no-survey", action="store_true",
                   help="lint every file but run only the sample (through both engines)")
    p.add_argument("--unthrottled", action="store_true",
                   help="sample only files that ask no rate: device-bound (or tool-bound) files")
    p.add_argument("--json", metavar="PATH", help="also write machine-readable results here")
    p.add_argument("--fathom", default=str(ROOT / "target/release/fathom"), help="fathom binary")
    p.add_argument("--fio", default="/usr/bin/fio", help="fio binary (default /usr/bin/fio)")
    args = p.parse_args()
    if args.seconds < 1 or args.sample < 0 or args.repeat < 1:
        p.error("--seconds and --repeat must be at least 1 and --sample at least 0")
    vs_fio.require_tools(args)
    if not args.corpus.is_dir():
        print(f"corpus not found at {args.corpus}: give it with --corpus DIR", file=sys.stderr)
        sys.exit(2)
    (SCRATCH / "fathom").mkdir(parents=True, exist_ok=True)
    base = args.corpus.parent

    files = []
    try:
        for path in corpus_files(args.corpus, args.all):
            name = str(path.relative_to(base)) if path.is_relative_to(base) else str(path)
            if args.only and not re.search(args.only, name):
                continue
            kind, detail = classify(args, path)
            entry = dict(name=name, path=str(path), **{"class": kind})
            if kind == "runs":
                entry.update(asked=detail, run={})
                if not args.no_survey:
                    print(f"run: {name}", file=sys.stderr, flush=True)
                    entry["run"] = run_fathom(args, path, name.replace("/", "_"))
            else:
                entry["why"] = detail
            files.append(entry)
        ran = [f for f in files if f["class"] == "runs" and "error" not in f["run"]
               and not (args.unthrottled and (f["asked"]["iops"] or f["asked"]["mbps"] or f["asked"]["thinks"]))]
        chosen = sorted(random.Random(args.seed).sample(ran, min(args.sample, len(ran))), key=lambda f: f["name"])
        rows = parity(args, chosen)
    finally:
        for d in ("fathom", "fio"):
            for f in (SCRATCH / d).glob("*"):
                if f.is_file():
                    f.unlink()

    print(report(files, rows))
    if args.json:
        doc = dict(corpus=str(args.corpus), seconds=args.seconds, size=SIZE, sample=args.sample, repeat=args.repeat,
                   fathom=args.fathom, fio=args.fio, files=files, parity=rows)
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
