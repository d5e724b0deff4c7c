#!/usr/bin/env python3
"""The integration suite's cost, test by test: runs each test in a process of its own
(the integration binary with `--exact NAME`), a few at once, and prints what each one
cost the machine: its CPU (user and system, counting every process it started and
waited for: fathom, PostgreSQL, fio, ...) and its wall time. The suite's wall time on
two cores is bounded below by its CPU over two, so the CPU column
says which tests make `make test` slow when the machine is busy, as `suite-times.py`'s
held column says which make it slow when it waits.

Usage: python3 bench/suite-cpu.py [--jobs 3] [--most 40] [FILTER...]"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from machine import described  # noqa: E402


def binary():
    """Builds the integration test binary; its path."""
    argv = ["cargo", "test", "--locked", "--test", "integration", "--no-run", "--message-format=json"]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "integration":
            if msg.get("executable"):
                return msg["executable"]
    sys.exit("no integration test binary was built")


def tests(exe, filters):
    out = subprocess.run([exe, "--list", *filters], check=True, capture_output=True, text=True).stdout
    return [line[: -len(": test")] for line in out.splitlines() if line.endswith(": test")]


def run_each(exe, names, jobs):
    """Each test in its own process, `jobs` at once; a row per test."""
    waiting, running, rows = list(names), {}, []
    while waiting or running:
        while waiting and len(running) < jobs:
            name = waiting.pop(0)
            argv = [exe, "--exact", name, "--test-threads", "1"]
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # the Popen is kept: one dropped is reaped by the subprocess module, not here
            running[proc.pid] = (name, time.monotonic(), proc)
        pid, status, usage = os.wait4(-1, 0)
        if pid not in running:
            continue
        name, began, proc = running.pop(pid)
        proc.returncode = os.waitstatus_to_exitcode(status)
        rows.append((name, os.waitstatus_to_exitcode(status), usage.ru_utime, usage.ru_stime,
                     time.monotonic() - began))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=3, help="tests run at once (3)")
    ap.add_argument("--most", type=int, default=40, help="how many of the costliest tests to list (40)")
    ap.add_argument("filters", nargs="*", help="test name filters, as cargo test takes them")
    a = ap.parse_args()
    exe = binary()
    names = tests(exe, a.filters)
    began = time.monotonic()
    rows = run_each(exe, names, a.jobs)
    took = time.monotonic() - began
    for k, v in described({}).items():
        print(f"{k}: {v}")
    cpu = sum(r[2] + r[3] for r in rows)
    failed = [r[0] for r in rows if r[1] != 0]
    print(f"integration tests: {len(rows)} run one per process, {a.jobs} at once, in {took:.0f} s; "
          f"CPU {cpu:.0f} s (user {sum(r[2] for r in rows):.0f}, system {sum(r[3] for r in rows):.0f}); "
          f"failed: {len(failed)} {' '.join(failed)}")
    print(f"\nthe {a.most} costliest in CPU (seconds)")
    print(f"{'test':<64} {'cpu':>6} {'user':>6} {'sys':>6} {'wall':>6}")
    for name, _, user, sys_, wall in sorted(rows, key=lambda r: -(r[2] + r[3]))[: a.most]:
        print(f"{name[:64]:<64} {user + sys_:6.1f} {user:6.1f} {sys_:6.1f} {wall:6.1f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
