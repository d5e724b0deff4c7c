#!/usr/bin/env python3
"""fathom's engine vs the fio driver: one workload through both, side by side.

Each workload runs as `fathom run SCENARIO --engine io_uring` (fathom's own engine) and
`--engine fio` (the same profile translated into a fio job file and run by the real
fio, whose reports fathom stores). Both end up in the same store, so IOPS, MB/s and
latency percentiles come from `fathom show --json` for each, computed the same way.
CPU is the whole `fathom run` process, fio included, from os.wait4(). Prints the medians
of each figure and of the per-repeat ratios. Standard library only (Python 3.11).
"""

import argparse
import importlib.util
import json
import os
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
# measurement helpers shared with the fathom-vs-fio benchmark
_spec = importlib.util.spec_from_file_location("vs_fio", BENCH / "vs-fio.py")
vs_fio = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vs_fio)
OUT, RESULTS, LOGS, MiB = vs_fio.OUT, vs_fio.RESULTS, vs_fio.LOGS, vs_fio.MiB

# Workloads on the local disk (O_DIRECT), each a profile key string for the scenario.
WORKLOADS = {
    "randread-4k-qd32": "rw: randread, bs: 4k, iodepth: 32",
    "randrw-8k-qd16": "rw: randrw, rwmixread: 70, bs: 8k, iodepth: 16",
    "mixed-sizes-qd8": "rw: randread, bssplit: 8k/90:32k/10, iodepth: 8, jobs: 2",
    "seqread-1m-qd4": "rw: read, bs: 1m, iodepth: 4",
}


def scenario(name, profile, seconds):
    w = (f"{{target: {OUT}, file: parity, size: {512 * MiB}, direct: true, {profile}, "
         f"duration: {seconds}s, ramp: 1s}}")
    return f"name: parity-{name}\nworkloads:\n  {name}: {w}\n"


def once(args, name, profile, engine, stem):
    """One run: the figures of `show --json` summed over ops, and CPU per million IOs."""
    path = OUT / f"parity-{name}.yaml"
    path.write_text(scenario(name, profile, args.seconds))
    argv = [args.fathom, "run", str(path), "--engine", engine, "--results", str(RESULTS), "-q"]
    _, cpu, _ = vs_fio.run_measured(argv, stem)
    shown = subprocess.run([args.fathom, "show", "last", "--json", "--results", str(RESULTS)],
                           check=True, capture_output=True, text=True).stdout
    ops = [o for w in json.loads(shown)["workloads"] for o in w["ops"]]
    main = max(ops, key=lambda o: o["ops"])  # the op whose latency is shown
    ios = sum(o["ops"] for o in ops)
    return dict(iops=sum(o["iops"] for o in ops), mb_per_s=sum(o["mb_per_s"] for o in ops),
                p50_us=main["latency"]["p50_us"], p99_us=main["latency"]["p99_us"],
                cpu_s_per_mio=cpu / (ios / 1e6) if ios else float("nan"))


KEYS = ["iops", "mb_per_s", "p50_us", "p99_us", "cpu_s_per_mio"]


def bench(args, name, profile):
    runs = {"io_uring": [], "fio": []}
    for r in range(args.repeat):
        for engine in (["io_uring", "fio"] if r % 2 == 0 else ["fio", "io_uring"]):
            s = once(args, name, profile, engine, f"parity-{name}-{engine}-{r + 1}")
            runs[engine].append(s)
            print(f"  {name} #{r + 1} {engine:8}: {s['iops']:>9,.0f} IOPS  p99 {s['p99_us']:8.1f} µs  "
                  f"{s['cpu_s_per_mio']:6.2f} s/M IO", file=sys.stderr)
    med = {e: {k: statistics.median(s[k] for s in runs[e]) for k in KEYS} for e in runs}
    ratio = {k: statistics.median(a[k] / b[k] for a, b in zip(runs["io_uring"], runs["fio"])) for k in KEYS}
    return dict(name=name, profile=profile, median=med, ratio=ratio, runs=runs)


def table(results, args):
    head = ("workload", "driver", "IOPS", "MB/s", "p50 µs", "p99 µs", "CPU s/M IO")
    rows = [head]
    for r in results:
        for label, m in (("fathom", r["median"]["io_uring"]), ("fio", r["median"]["fio"])):
            rows.append((r["name"] if label == "fathom" else "", label, f"{m['iops']:,.0f}", f"{m['mb_per_s']:,.1f}",
                         f"{m['p50_us']:.1f}", f"{m['p99_us']:.1f}", f"{m['cpu_s_per_mio']:.2f}"))
        q = r["ratio"]
        rows.append(("", "ratio", f"{q['iops']:.3f}", f"{q['mb_per_s']:.3f}", f"{q['p50_us']:.2f}",
                     f"{q['p99_us']:.2f}", f"{q['cpu_s_per_mio']:.2f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
             for row in rows]
    return "\n".join(lines) + (f"\n\nmedians of {args.repeat} runs of {args.seconds} s (after a 1 s ramp); "
                               "ratio = median of per-repeat fathom/fio")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=int, default=10, help="measured seconds per run (default 10)")
    p.add_argument("--repeat", type=int, default=3, help="runs per driver and workload (default 3)")
    p.add_argument("--workload", action="append", choices=list(WORKLOADS), help="only this one (repeatable)")
    p.add_argument("--json", metavar="PATH", help="also write machine-readable results here")
    p.add_argument("--fathom", default=str(vs_fio.ROOT / "target/release/fathom"), help="fathom binary")
    p.add_argument("--fio", default="/usr/bin/fio", help="fio binary, for the machine line (fathom runs fio from PATH)")
    args = p.parse_args()
    if args.seconds < 1 or args.repeat < 1:
        p.error("--seconds and --repeat must be at least 1")
    for what, path, fix in (("fio", args.fio, "run `scripts/install-deps.sh bench`"),
                            ("fathom", args.fathom, "build it with `cargo build --release`")):
        if not os.access(path, os.X_OK):
            print(f"{what} not found at {path}: {fix}", file=sys.stderr)
            sys.exit(2)
    LOGS.mkdir(parents=True, exist_ok=True)
    info = vs_fio.machine(args)
    print("machine: " + ", ".join(f"{k} {v}" for k, v in info.items()))
    chosen = {n: w for n, w in WORKLOADS.items() if not args.workload or n in args.workload}
    for n, w in chosen.items():
        print(f"  {n}: {shlex.quote(scenario(n, w, args.seconds).splitlines()[-1].strip())}")
    data = OUT / "fathom-parity.dat"
    results = []
    try:
        # lay out the shared file once, untimed, so no measured run pays for it
        warm = OUT / "parity-layout.yaml"
        warm.write_text(scenario("layout", "rw: randread", 1))
        vs_fio.run_measured([args.fathom, "run", str(warm), "--results", str(RESULTS), "-q"], "parity-layout")
        for n, w in chosen.items():
            results.append(bench(args, n, w))
    finally:
        data.unlink(missing_ok=True)
    print(table(results, args))
    if args.json:
        Path(args.json).write_text(json.dumps(dict(machine=info, seconds=args.seconds, repeat=args.repeat,
                                                   results=results), indent=2) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
