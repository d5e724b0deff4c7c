#!/usr/bin/env python3
"""Runs integration tests from the test binary, each in a process of its own, a few at
once, the longest first: a pass ends when its last test does, and one started late that
runs a minute would leave the other places idle for that minute. libtest itself starts
tests in the order of their names, whatever they take.

How long each test takes is read from tests/integration/longest.txt (the tests that take
longest, longest first, as `python3 bench/suite-times.py --longest` prints them); the rest
follow in name order. A name there that no longer exists is passed over.

Usage: run-tests.py BINARY --jobs N [--skip PATTERN]... [FILTER]...
Prints a line per test as it ends, then the output of each that failed; exits 1 if any
failed, 2 if none matched."""

import argparse
import os
import subprocess
import sys
import tempfile
import time

LONGEST = os.path.join(os.path.dirname(__file__), "..", "tests", "integration", "longest.txt")


def listed(binary, filters, skips):
    argv = [binary, "--list", *filters, *[a for s in skips for a in ("--skip", s)]]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return [line[: -len(": test")] for line in out.splitlines() if line.endswith(": test")]


def longest_first(names):
    try:
        with open(LONGEST) as f:
            known = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    except FileNotFoundError:
        known = []
    wanted = set(names)
    first = [n for n in known if n in wanted]
    return first + [n for n in names if n not in set(first)]


def run(binary, names, jobs):
    """Each test in its own process, `jobs` at once; the names of those that failed."""
    waiting, running, failed = list(names), {}, []
    with tempfile.TemporaryDirectory() as logs:
        while waiting or running:
            while waiting and len(running) < jobs:
                name = waiting.pop(0)
                log = open(os.path.join(logs, f"{len(running)}-{time.monotonic_ns()}"), "w+")
                argv = [binary, "--exact", name, "--test-threads", "1"]
                proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
                running[proc.pid] = (name, time.monotonic(), proc, log)
            pid, status = os.waitpid(-1, 0)
            if pid not in running:
                continue
            name, began, proc, log = running.pop(pid)
            proc.returncode = os.waitstatus_to_exitcode(status)
            took = time.monotonic() - began
            print(f"{'ok' if proc.returncode == 0 else 'FAILED':6} {took:6.1f} s  {name}", flush=True)
            if proc.returncode != 0:
                log.seek(0)
                failed.append((name, log.read()))
            log.close()
    for name, output in failed:
        print(f"\n---- {name} ----\n{output}", flush=True)
    return [name for name, _ in failed]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--skip", action="append", default=[])
    ap.add_argument("filters", nargs="*")
    a = ap.parse_intermixed_args()
    names = longest_first(listed(a.binary, a.filters, a.skip))
    if not names:
        print("no test matched", file=sys.stderr)
        return 2
    began = time.monotonic()
    failed = run(a.binary, names, a.jobs)
    print(f"{len(names) - len(failed)} passed, {len(failed)} failed, {a.jobs} at once, "
          f"in {time.monotonic() - began:.0f} s" + (f": {' '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
