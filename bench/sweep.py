#!/usr/bin/env python3
"""fathom sweep: steady-state stopping against fixed 60-second steps, in one run.

Runs the same sweep twice, `fathom sweep ... --vary iodepth=...` (each step ends at SNIA
steady state, 10 s to 60 s) and with `--fixed --max 60s`, and prints how long each took
and the USL parameters fitted to each (`fathom fit --run N --json`), with ratios. The
issue's goal: the steady sweep takes at most half the time, and its sigma, kappa and
lambda are within 10% of the fixed sweep's. Standard library only (Python 3.11).
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH / "out"
RESULTS = OUT / "sweep-results"


def sweep(args, extra):
    argv = [args.fathom, "sweep", "quickstart", "--target", str(OUT), "--set", f"size={args.size}",
            "--vary", f"iodepth={args.depths}", "--results", str(RESULTS), "-q", *extra]
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True)
    took = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    fit = json.loads(subprocess.run([args.fathom, "fit", "--run", "last", "--json", "--results", str(RESULTS)],
                                    check=True, capture_output=True, text=True).stdout)
    run = json.loads(subprocess.run([args.fathom, "show", "last", "--json", "--results", str(RESULTS)],
                                    check=True, capture_output=True, text=True).stdout)
    return dict(seconds=took, run_seconds=run["run"]["duration_s"], sigma=fit["sigma"]["value"],
                kappa=fit["kappa"]["value"], lam=fit["lambda"]["value"], n_star=fit["n_star"],
                points=[(p["n"], p["measured"]) for p in fit["points"]])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--depths", default="1,2,4,8,16,32,64")
    p.add_argument("--size", default="1g", help="working set (default 1g)")
    p.add_argument("--fixed-step", default="60s")
    p.add_argument("--fathom", default=str(ROOT / "target/release/fathom"))
    args = p.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    steady = sweep(args, ["--min", "10s", "--max", "60s"])
    fixed = sweep(args, ["--fixed", "--max", args.fixed_step])
    print(f"sweep of 4k random read, iodepth {args.depths}, {args.size} O_DIRECT file on {OUT}")
    print(f"{'':8} {'run s':>7} {'sigma':>9} {'kappa':>10} {'lambda':>9} {'N*':>7}")
    for name, r in (("steady", steady), ("fixed", fixed)):
        n_star = f"{r['n_star']:.1f}" if r["n_star"] else "inf"
        print(f"{name:8} {r['run_seconds']:7.0f} {r['sigma']:9.5f} {r['kappa']:10.3e} {r['lam']:9.0f} {n_star:>7}")
    ratio = lambda k: steady[k] / fixed[k] if fixed[k] else float("nan")
    print(f"{'ratio':8} {ratio('run_seconds'):7.2f} {ratio('sigma'):9.3f} {ratio('kappa'):10.3f} {ratio('lam'):9.3f}")
    print("points (N, IOPS) steady:", [(n, round(x)) for n, x in steady["points"]])
    print("points (N, IOPS) fixed: ", [(n, round(x)) for n, x in fixed["points"]])
    (OUT / "fathom-quickstart.dat").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
