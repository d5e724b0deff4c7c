#!/usr/bin/env python3
"""The integration suite's time, test by test: runs `cargo test --test integration` once
with SUITE_TEST_TIMES set (each test's scratch directory appends its test's name,
how it held the machine (shared, paired or alone), how long it waited for the machine
and how long it held it), then prints the whole run's time, the slowest tests, and how
long the machine-exclusive tests (`Scratch::alone`) held the machine, during which
nothing else ran, and the paired ones (`Scratch::paired`, two at most at once). Usage: python3 bench/suite-times.py [--threads 12] [--most 30] [-- FILTER...]

A test that makes no scratch directory is not timed (it is counted, and said)."""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from machine import described  # noqa: E402


def run_suite(threads, filters, times):
    """Builds, then runs the suite; its wall seconds and how many tests it ran."""
    env = dict(os.environ, SUITE_TEST_TIMES=times)
    build = ["cargo", "test", "--locked", "--test", "integration", "--no-run"]
    subprocess.run(build, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    argv = ["cargo", "test", "--locked", "--test", "integration", "--", "--test-threads", str(threads), *filters]
    began = time.monotonic()
    out = subprocess.run(argv, env=env, capture_output=True, text=True)
    took = time.monotonic() - began
    ran = re.search(r"test result: \w+\. (\d+) passed; (\d+) failed", out.stdout)
    if out.returncode != 0:
        print(out.stdout[-4000:], file=sys.stderr)
    return took, (int(ran[1]) + int(ran[2])) if ran else 0, out.returncode


def read(times):
    rows = []
    with open(times) as f:
        for line in f:
            test, kind, waited, held, since = line.rstrip("\n").split("\t")
            rows.append((test, kind, float(waited), float(held), float(since)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=12, help="--test-threads, as make test gives (12)")
    ap.add_argument("--most", type=int, default=30, help="how many of the slowest tests to list (30)")
    ap.add_argument("filters", nargs="*", help="test name filters, as cargo test takes them")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        times = os.path.join(tmp, "times.tsv")
        took, ran, code = run_suite(a.threads, a.filters, times)
        rows = read(times) if os.path.exists(times) else []
    for k, v in described({}).items():
        print(f"{k}: {v}")
    print(f"integration tests: {ran} run in {took:.0f} s with {a.threads} threads (exit {code}); "
          f"{len({r[0] for r in rows})} of them timed by their scratch directory")
    for kind, what in [("alone", "machine-exclusive tests"), ("paired", "paired tests (two at most at once)")]:
        apart = [r for r in rows if r[1] == kind]
        held = sum(r[3] for r in apart)
        print(f"{what}: {len(apart)}, holding the machine {held:.0f} s "
              f"({100 * held / took:.0f}% of the run)" if took else "")
    print(f"\nthe {a.most} slowest (seconds held; waited: for the machine first)")
    print(f"{'test':<72} {'kind':<6} {'held':>6} {'waited':>7}")
    for test, kind, waited, held, _ in sorted(rows, key=lambda r: -r[3])[:a.most]:
        print(f"{test[:72]:<72} {kind:<6} {held:6.1f} {waited:7.1f}")
    timeline(rows)
    return code


def timeline(rows):
    """How many tests held the machine in each tenth of the run, and which tests ended
    last: a run whose last stretch holds one or two long tests is as long as they are,
    whatever the rest cost."""
    if not rows:
        return
    began = min(r[4] for r in rows)
    ended = max(r[4] + r[3] for r in rows)
    span = (ended - began) / 10 or 1
    print("\ntests holding the machine, by tenth of the run (mean of each tenth)")
    for k in range(10):
        lo, hi = began + k * span, began + (k + 1) * span
        busy = sum(max(0.0, min(hi, r[4] + r[3]) - max(lo, r[4])) for r in rows) / span
        print(f"{lo - began:6.0f}-{hi - began:4.0f} s  {busy:4.1f}")
    print("\nthe last ten to end (started, ended: seconds into the run)")
    for test, _, _, held, since in sorted(rows, key=lambda r: r[4] + r[3])[-10:]:
        print(f"{test[:72]:<72} {since - began:6.0f} {since + held - began:6.0f}")


if __name__ == "__main__":
    sys.exit(main())
