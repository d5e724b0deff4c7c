#!/usr/bin/env python3
"""sysbench run by fathom vs sysbench alone: the same OLTP test, rounds interleaved.

Each round runs `fathom run` on a `driver: sysbench` scenario (fathom's throwaway PostgreSQL
cluster under --target, its Lua timer around every transaction) and sysbench alone against a
PostgreSQL server this script starts (initdb into a scratch directory, a Unix socket there,
initdb's default settings), each prepared alike (`cleanup`, `prepare`, a CHECKPOINT) and run
for the same time with the same threads; each round swaps which goes first. Prints per round
and as medians: fathom's TPS (op `txn` in `fathom show last --json`), the TPS sysbench itself
printed under fathom and alone, and CPU per transaction: each side's whole process tree
(fathom and everything it started and reaped; the script's initdb, server, sysbench and psql),
setup included, and sysbench's own `run` (under fathom, from a bash wrapper first on its PATH).
Ratios fathom/alone: the median of the per-round ratios, and the ratio of the medians.
Standard library only (Python 3.11); run as root (both servers run as postgres).
See bench/README.md.
"""

import argparse
import json
import os
import resource
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import described

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

# Put first on fathom's PATH: runs the real sysbench as its child and, for `run`, writes the
# CPU of its children (bash's `times`, its second line: user and system of the sysbench it waited
# for; not in a pipeline, whose subshell has no children of its own).
WRAPPER = """#!/bin/bash
"$SB_BENCH_REAL" "$@"
rc=$?
if [ "${@: -1}" = run ]; then times > "$SB_BENCH_RECORD"; fi
exit $rc
"""


def die(msg):
    print(f"sysbench-vs-fathom: {msg}", file=sys.stderr)
    sys.exit(2)


def children_cpu():
    """User + system seconds of every child this process has reaped so far (and theirs)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_logged(argv, log, **kw):
    """Runs argv to its end, output into log; dies with the log's tail when it fails.
    Returns the output and the CPU of the child's tree from os.wait4()."""
    with open(log, "ab") as f:
        proc = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **kw)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    if proc.returncode != 0:
        die(f"{shlex.join(map(str, argv))} failed (exit {proc.returncode}); see {log}:\n"
            + log.read_text(errors="replace")[-2000:])
    return log.read_text(errors="replace"), usage.ru_utime + usage.ru_stime


def closing(text):
    """sysbench's closing `transactions: N (R per sec.)`: (N, R)."""
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["transactions:"]:
            return int(words[1]), float(words[2].lstrip("("))
    die(f"no `transactions:` line in sysbench's report:\n{text[-1500:]}")


def scenario_text(args):
    return (f"name: sysbench-vs-fathom\nworkloads:\n  oltp:\n    driver: sysbench\n    test: {args.test}\n"
            f"    tables: {args.tables}\n    table_size: {args.table_size}\n    threads: {args.threads}\n"
            f"    duration: {args.duration}s\n")


def sysbench_args(args):
    return [f"--tables={args.tables}", f"--table-size={args.table_size}"]


def run_args(args):
    """The options of the timed `run`, as fathom gives them (src/drivers/sysbench.rs)."""
    return [f"--threads={args.threads}", f"--time={args.duration}", "--report-interval=1", "--db-ps-mode=auto"]


def fathom_once(args, scratch, stem):
    """One `fathom run`: its TPS, sysbench's own count under it, and the CPU of fathom's tree."""
    record, results = scratch / f"{stem}.client", scratch / "results"
    env = dict(os.environ, PATH=f"{scratch / 'bin'}:{os.environ.get('PATH', '')}",
               SB_BENCH_REAL=args.sysbench, SB_BENCH_RECORD=str(record))
    argv = [args.fathom, "run", str(scratch / "scenario.yaml"), "--target", str(scratch / f"{stem}-target"),
            "--results", str(results), "-q"]
    start, wall = children_cpu(), time.monotonic()
    run_logged(argv, scratch / f"{stem}.log", env=env)
    wall, tree = time.monotonic() - wall, children_cpu() - start
    shown = json.loads(subprocess.run([args.fathom, "show", "last", "--json", "--results", str(results)],
                                      check=True, capture_output=True, text=True).stdout)
    txn = next(o for w in shown["workloads"] for o in w["ops"] if o["op"] == "txn")
    out = (results / "runs" / str(shown["run"]["id"]) / "oltp.sysbench.out").read_text(errors="replace")
    txns, sb_tps = closing(out)
    user, system = (float(t.split("m")[0]) * 60 + float(t.split("m")[1].rstrip("s"))
                    for t in record.read_text().splitlines()[-1].split())
    shutil.rmtree(scratch / f"{stem}-target", ignore_errors=True)
    return dict(tps=txn["tps"], sb_tps=sb_tps, txns=txns, tree_cpu_s=tree,
                client_cpu_s=user + system, wall_s=wall)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(args, base, port):
    """initdb into base/data as postgres and starts the server as this script's child, on a
    Unix socket in base only; returns it once its postmaster.pid says ready."""
    user = "postgres" if os.geteuid() == 0 else None
    if user:
        shutil.chown(base, user, user)
    run_logged([args.bindir / "initdb", "-D", base / "data", "-U", "postgres", "-E", "UTF8",
                "--auth-local=trust", "--auth-host=reject", "--no-instructions"], base / "initdb.log",
               user=user, cwd=base)
    sets = [a for kv in args.server_set or [] for a in ("-c", kv)]
    log = open(base / "server.log", "ab")
    server = subprocess.Popen([args.bindir / "postgres", "-D", base / "data", "-k", base, "-p", str(port),
                               "-c", "listen_addresses=", *sets], stdout=log, stderr=log,
                              stdin=subprocess.DEVNULL, user=user, cwd=base)
    log.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            die(f"postgres exited with {server.returncode}; see {base / 'server.log'}")
        lines = (base / "data/postmaster.pid").read_text().splitlines() \
            if (base / "data/postmaster.pid").exists() else []
        if len(lines) > 7 and lines[0].strip() == str(server.pid) and lines[7].strip() == "ready":
            return server
        time.sleep(0.02)
    die(f"postgres did not start in 60 s; see {base / 'server.log'}")


def alone_once(args, scratch, stem):
    """One round of sysbench alone: its own server, prepared as fathom prepares, then run."""
    base = scratch / stem
    base.mkdir()
    port, log = free_port(), base / "sysbench.log"
    start, wall = children_cpu(), time.monotonic()
    server = start_server(args, base, port)
    conn = ["--db-driver=pgsql", f"--pgsql-host={base}", f"--pgsql-port={port}", "--pgsql-user=postgres"]
    psql = [args.psql, "-X", "-q", "-h", str(base), "-p", str(port), "-U", "postgres", "-v", "ON_ERROR_STOP=1"]
    try:
        run_logged([*psql, "-d", "postgres", "-c", "CREATE DATABASE sbtest"], base / "psql.log")
        for step in ("cleanup", "prepare"):  # as fathom: --threads up to 4 for the load
            run_logged([args.sysbench, args.test, *conn, "--pgsql-db=sbtest", *sysbench_args(args),
                        f"--threads={min(args.tables, 4)}", step], base / "prepare.log")
        run_logged([*psql, "-d", "sbtest", "-c", "CHECKPOINT"], base / "psql.log")
        out, client = run_logged([args.sysbench, args.test, *conn, "--pgsql-db=sbtest", *sysbench_args(args),
                                  *run_args(args), "run"], log)
    finally:
        server.send_signal(signal.SIGQUIT)  # immediate shutdown, as fathom ends its cluster: no
        os.wait4(server.pid, 0)              # shutdown checkpoint; the server reaps its processes first
    wall, tree = time.monotonic() - wall, children_cpu() - start
    txns, tps = closing(out)
    shutil.rmtree(base / "data", ignore_errors=True)
    return dict(tps=tps, sb_tps=tps, txns=txns, tree_cpu_s=tree, client_cpu_s=client, wall_s=wall)


def per_txn(s):
    s = dict(s, wall_s=round(s["wall_s"], 1))
    s["tree_ms"] = 1000 * s["tree_cpu_s"] / s["txns"]
    s["client_ms"] = 1000 * s["client_cpu_s"] / s["txns"]
    return s


KEYS = [("tps", "TPS (fathom: op txn; alone: sysbench's)", "{:,.1f}"),
        ("sb_tps", "TPS sysbench printed", "{:,.1f}"),
        ("tree_ms", "CPU ms/txn, whole process tree", "{:.3f}"),
        ("client_ms", "CPU ms/txn, sysbench run", "{:.3f}")]


def table(runs, args):
    sides = [s for s in ("fathom", "sysbench") if runs[s]]
    head = ("figure", *sides, *(["f/s per round", "f/s of medians"] if len(sides) == 2 else []))
    rows = [head]
    for k, name, fmt in KEYS:
        med = [statistics.median(r[k] for r in runs[s]) for s in sides]
        row = [name] + [fmt.format(m) for m in med]
        if len(sides) == 2:
            row.append(f"{statistics.median(a[k] / b[k] for a, b in zip(runs['fathom'], runs['sysbench'])):.3f}")
            row.append(f"{med[0] / med[1]:.3f}")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    n = max(len(runs[s]) for s in sides)
    return "\n".join(lines) + (
        f"\n\nmedians of {n} round(s): {args.test}, {args.tables} tables x {args.table_size} rows, "
        f"{args.threads} threads, {args.duration} s; f/s: fathom/sysbench, the median of the per-round "
        "ratios and the ratio of the medians. CPU per "
        "transaction is over sysbench's own count of transactions: the whole tree includes setup "
        "(initdb, prepare, checkpoint, shutdown) and, for fathom, fathom itself.")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3, help="rounds, each running both sides (default 3)")
    p.add_argument("--test", default="oltp_read_write", help="sysbench test (default oltp_read_write)")
    p.add_argument("--tables", type=int, default=4, help="sysbench --tables (default 4)")
    p.add_argument("--table-size", type=int, default=20000, help="sysbench --table-size (default 20000)")
    p.add_argument("--threads", type=int, default=2, help="sysbench --threads (default 2)")
    p.add_argument("--duration", type=int, default=20, help="seconds of each timed run (default 20)")
    p.add_argument("--only", choices=["fathom", "sysbench"], help="run one side only")
    p.add_argument("--server-set", action="append", metavar="KEY=VALUE",
                   help="a setting for sysbench alone's server (-c KEY=VALUE), e.g. track_io_timing=on")
    p.add_argument("--fathom", default=str(ROOT / "target/release/fathom"), help="fathom binary")
    p.add_argument("--sysbench", default="/usr/bin/sysbench", help="sysbench binary (default /usr/bin/sysbench)")
    p.add_argument("--scratch", help="parent of the scratch directory (default /tmp); removed at the end")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory (logs)")
    p.add_argument("--json", metavar="PATH", help="also write machine-readable results here")
    args = p.parse_args()
    if min(args.rounds, args.tables, args.table_size, args.threads, args.duration) < 1:
        p.error("--rounds, --tables, --table-size, --threads and --duration must be at least 1")
    if not os.access(args.fathom, os.X_OK):
        die(f"fathom not found at {args.fathom}: build it with `cargo build --release` (or give --fathom)")
    if not os.access(args.sysbench, os.X_OK):
        die(f"sysbench not found at {args.sysbench}: apt-get install sysbench")
    initdb, args.psql = shutil.which("initdb"), shutil.which("psql")
    if not initdb or not args.psql:
        die("initdb and psql must be on the PATH (apt-get install postgresql)")
    args.bindir = Path(initdb).resolve().parent
    return args


def main():
    args = parse_args()
    sides = [args.only] if args.only else ["fathom", "sysbench"]
    scratch = Path(tempfile.mkdtemp(prefix="bench-sysbench-", dir=args.scratch or "/tmp"))
    scratch.chmod(0o755)  # PostgreSQL runs as postgres under it
    (scratch / "bin").mkdir()
    (scratch / "bin/sysbench").write_text(WRAPPER)
    (scratch / "bin/sysbench").chmod(0o755)
    (scratch / "scenario.yaml").write_text(scenario_text(args))
    info = described(dict(fathom=args.fathom, sysbench=args.sysbench, postgres=str(args.bindir / "postgres")))
    print("machine: " + ", ".join(f"{k} {v}" for k, v in info.items()))
    print("fathom:   fathom run SCENARIO --target DIR -q; scenario: "
          + scenario_text(args).split("oltp:\n")[1].replace("\n", "").replace("    ", " ").strip())
    print(f"sysbench: sysbench {args.test} --db-driver=pgsql --pgsql-host=DIR ... {shlex.join(sysbench_args(args))} "
          f"prepare; CHECKPOINT; ... {shlex.join(run_args(args))} run")
    print(f"scratch:  {scratch}", flush=True)
    runs = {"fathom": [], "sysbench": []}
    try:
        for r in range(args.rounds):
            for side in (sides if r % 2 == 0 else sides[::-1]):
                once = fathom_once if side == "fathom" else alone_once
                s = dict(per_txn(once(args, scratch, f"{side}-{r + 1}")), load=round(os.getloadavg()[0], 2))
                runs[side].append(s)
                print(f"  #{r + 1} {side:8}: {s['tps']:8,.1f} TPS (sysbench printed {s['sb_tps']:8,.1f}, "
                      f"{s['txns']:,} txns)  tree {s['tree_cpu_s']:5.1f} s CPU, {s['tree_ms']:.3f} ms/txn; "
                      f"sysbench run {s['client_ms']:.3f} ms/txn; {s['wall_s']:.0f} s, load {s['load']:.1f}",
                      file=sys.stderr, flush=True)
            if len(sides) == 2:
                print(f"  #{r + 1} fathom/sysbench TPS: {runs['fathom'][-1]['tps'] / runs['sysbench'][-1]['tps']:.3f}",
                      file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print(table(runs, args))
    if args.json:
        doc = dict(machine=info, scenario=scenario_text(args), args={k: str(v) for k, v in vars(args).items()},
                   runs=runs)
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
