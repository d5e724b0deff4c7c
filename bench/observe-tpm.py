#!/usr/bin/env python3
"""Does fathom's PostgreSQL observer inflate the TPM it reports? Goal: the TPM with and
without observation within 0.2%.

Each repeat runs `fathom run tpcc` (its throwaway PostgreSQL cluster; 1 warehouse and 2
clients by default) and compares, over the workload's measured window (its `measure_t`
to `end_t` seconds in `fathom show last --json`, `--duration` long):

* TPM (server), with observation: the `tpm` fathom reports (observation `tpcc:oltp`
  `tpm`), HammerDB's method: the database's pg_stat_database xact_commit +
  xact_rollback read at the window's start and after the clients' sessions ended, per
  minute of the window. The server counted them while the observer queried it once a
  second, so any of the observer's statements counted in that database would be in it.
* TPM (client), without observation: the transactions the clients ran, from pgbench's
  own per-transaction log in RESULTS/runs/N/oltp.pgbench-log/, which the observer never
  touches: the lines whose end time falls in the window (the run clock's second 0 is
  the store's runs.clock_start_unix_ms), each a transaction that ended in a commit or a
  rollback (TPC-C's 1% of new-orders roll back by design), plus the retries their last
  field counts (each an attempt the server rolled back), per minute of the window. The
  completed lines equal the calls of the `tpcc` event's time profile and the `ops` of
  `workloads[].ops[]`: fathom counts them from the same log over the same seconds (log
  NOPM in src/drivers/tpcc/figures.rs); the script checks that they agree.

The two differ without any observer by the transactions in flight at the window's two
ends (the log counts a transaction in the second it ended, the server between its two
readings) and by fathom's own few reading statements in the measured database: a
handful against tens of thousands a minute.

The observer's share, directly: while fathom runs, every 2 s the script asks the
cluster (as fathom's OS user, from the template1 database, which the observer does not
chart) which database the `fathom-observe` session (its application_name) is in, and
reads the `postgres` database's xact_commit. The observer keeps its session in
`postgres`, so its statements are not in the measured database's commits; their rate
there (one batch a second, one commit per statement) as a share of the client TPM is
what they would add to the reported TPM if it were connected to the measured database,
as it was before. Standard library only (Python 3.11); run as root (fathom runs its
cluster as the postgres user). See bench/README.md.

Usage: python3 bench/observe-tpm.py [--duration 60s] [--ramp 10s] [--repeat 3]
                                    [--warehouses 1] [--clients 2]
"""

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

from machine import described

ROOT = Path(__file__).resolve().parent.parent
GOAL_PCT = 0.2
POLL_S = 2.0
TYPES = ("new-order", "payment", "delivery", "order-status", "stock-level")


def die(msg):
    print(f"observe-tpm: {msg}", file=sys.stderr)
    sys.exit(2)


def seconds(text):
    m = re.fullmatch(r"(\d+)(s|m)?", text)
    if not m:
        raise argparse.ArgumentTypeError(f"`{text}`: give seconds, e.g. 60s or 2m")
    return int(m[1]) * (60 if m[2] == "m" else 1)


def descendants(pid):
    """The pids below `pid` (children, theirs, ...)."""
    kids = {}
    for p in os.listdir("/proc"):
        try:
            ppid = int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1]) if p.isdigit() else None
        except (OSError, IndexError, ValueError):
            continue
        if ppid is not None:
            kids.setdefault(ppid, []).append(int(p))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def cluster_of(pid):
    """libpq keywords for the cluster fathom (`pid`) runs: its postmaster's -D, whose
    postmaster.pid gives the port (line 4) and the socket's directory (line 5)."""
    for p in descendants(pid):
        try:
            cmd = open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if cmd and cmd[0].endswith("postgres") and "-D" in cmd[:-1]:
            try:
                lines = (Path(cmd[cmd.index("-D") + 1]) / "postmaster.pid").read_text().splitlines()
            except OSError:
                continue
            if len(lines) > 7 and lines[7].strip() == "ready":
                return f"host={lines[4].strip()} port={lines[3].strip()} user=fathom dbname=template1"
    return None


# the observer's databases, fathom's own sessions (pgbench's clients among them: fathom
# names its sessions fathom-PID) in the TPC-C databases, the postgres database's count
POLL_SQL = ("SELECT (SELECT coalesce(string_agg(coalesce(datname, '-'), ','), '') FROM pg_stat_activity "
            "WHERE application_name = 'fathom-observe'), "
            "(SELECT count(*) FROM pg_stat_activity WHERE application_name = 'fathom-{pid}' "
            "AND datname LIKE 'tpcc%'), "
            "(SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'postgres')")


def poll(pid, until, out):
    """Every POLL_S while fathom (`pid`) runs: (monotonic s, the observer's databases,
    fathom's sessions in the TPC-C databases, the postgres database's transactions)
    into `out`."""
    dsn = None
    while not until.is_set():
        dsn = dsn or cluster_of(pid)
        if dsn:
            r = subprocess.run(["psql", "-X", "-A", "-t", "-F", "\t", "-d", dsn, "-c", POLL_SQL.format(pid=pid)],
                               capture_output=True, text=True)
            f = r.stdout.strip().split("\t")
            if r.returncode == 0 and len(f) == 3:
                out.append((time.monotonic(), f[0], int(f[1]), int(f[2])))
            elif r.returncode != 0:
                dsn = None  # the cluster went (a run has one after another: load, then run)
        until.wait(POLL_S)


def observer_share(polls, clients):
    """The observer's databases, and its statements per minute in `postgres` while the
    clients ran (polls seeing it and all the clients' sessions), with the span they
    cover."""
    seen = sorted({d for _, dbs, _, _ in polls for d in dbs.split(",") if d})
    during = [p for p in polls if p[1] and p[2] >= clients]
    if len(during) < 2 or during[-1][0] - during[0][0] < 5:
        return seen, None, 0.0
    span = during[-1][0] - during[0][0]
    return seen, (during[-1][3] - during[0][3]) / span * 60, span


def run_dir_and_clock(results, run_id):
    with sqlite3.connect(f"file:{results / 'fathom.db'}?mode=ro", uri=True) as db:
        (clock,) = db.execute("SELECT clock_start_unix_ms FROM runs WHERE id = ?", (run_id,)).fetchone()
    return results / "runs" / str(run_id), clock


def log_counts(logs, from_ms, to_ms):
    """pgbench's log lines that ended in [from_ms, to_ms): completed per script number,
    failed, and the retries (the last field: pgbench runs with --max-tries)."""
    done, failed, retries = {}, 0, 0
    for path in sorted(logs.glob("txn.*")):
        for line in open(path, errors="replace"):
            f = line.split()
            if len(f) < 6:
                continue
            ended = int(f[4]) * 1000 + int(f[5]) / 1000
            if not from_ms <= ended < to_ms:
                continue
            retries += int(f[-1])
            if f[2] in ("failed", "serialization", "deadlock", "other"):
                failed += 1
            elif f[2] != "skipped":
                done[int(f[3])] = done.get(int(f[3]), 0) + 1
    return done, failed, retries


def once(args, scratch, n):
    results = scratch / f"results-{n}"
    argv = [args.fathom, "run", "tpcc", "--results", str(results), "-q", "--set", f"warehouses={args.warehouses}",
            "--set", f"clients={args.clients}", "--set", f"duration={args.duration}s", "--set", f"ramp={args.ramp}s"]
    log = scratch / f"fathom-{n}.log"
    polls, until = [], threading.Event()
    with open(log, "wb") as f:
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT)
        poller = threading.Thread(target=poll, args=(p.pid, until, polls), daemon=True)
        poller.start()
        rc = p.wait()
        until.set()
        poller.join()
    if rc != 0:
        die(f"fathom exited {rc}; see {log}:\n" + log.read_text(errors="replace")[-2000:])
    shown = json.loads(subprocess.run([args.fathom, "show", "last", "--results", str(results), "--json"],
                                      check=True, capture_output=True, text=True).stdout)
    w = next(w for w in shown["workloads"] if w["engine"] == "tpcc")
    name = w["name"]
    tpm = next(o["mean"] for o in shown["observed"] if o["source"] == f"tpcc:{name}" and o["name"] == "tpm")
    window_s = w["end_t"] - w["measure_t"]
    detail = next(e["detail"] for e in shown["events"] if e["kind"] == "tpcc" and e["label"] == name)
    calls = {t: int(m[1]) for t in TYPES if (m := re.search(rf"[:;] {t} (\d+), [\d.]+/", detail))}
    ops = {o["op"]: o["ops"] for o in w["ops"]}
    run_dir, clock = run_dir_and_clock(results, shown["run"]["id"])
    done, failed, retries = log_counts(run_dir / f"{name}.pgbench-log", clock + 1000 * w["measure_t"],
                                       clock + 1000 * w["end_t"])
    by_type = {t: done.get(i, 0) for i, t in enumerate(TYPES)}
    agree = by_type == calls == {t: ops.get(t) for t in TYPES}
    client = (sum(done.values()) + failed + retries) / (window_s / 60)
    seen, per_min, span = observer_share(polls, args.clients)
    if not args.keep:
        shutil.rmtree(results, ignore_errors=True)  # the store and pgbench's log
    return dict(tpm=tpm, client_tpm=client, diff_pct=100 * (tpm - client) / client, window_s=window_s,
                completed=sum(done.values()), failed=failed, retries=retries, calls=calls, log=by_type,
                counts_agree=agree, observer_dbs=seen, observer_per_min=per_min, observer_span_s=round(span, 1),
                observer_pct=100 * per_min / client if per_min is not None else None, polls=len(polls))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=seconds, default=60, help="measured window (default 60s)")
    ap.add_argument("--ramp", type=seconds, default=10, help="ramp before it (default 10s)")
    ap.add_argument("--repeat", type=int, default=3, help="runs (default 3)")
    ap.add_argument("--warehouses", type=int, default=1, help="TPC-C warehouses (default 1)")
    ap.add_argument("--clients", type=int, default=2, help="pgbench clients (default 2)")
    ap.add_argument("--fathom", default=str(ROOT / "target/release/fathom"), help="fathom binary")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory (stores, logs)")
    ap.add_argument("--json", metavar="PATH", help="also write the runs here")
    args = ap.parse_args()
    if min(args.duration, args.repeat, args.warehouses, args.clients) < 1:
        ap.error("--duration, --repeat, --warehouses and --clients must be at least 1")
    if os.geteuid() != 0:
        die("run as root: fathom runs its PostgreSQL cluster as the postgres user")
    if not os.access(args.fathom, os.X_OK):
        die(f"fathom not found at {args.fathom}: build it with `cargo build --release`")
    if not shutil.which("psql"):
        die("psql not found: apt-get install postgresql-client")
    scratch = Path(tempfile.mkdtemp(prefix="bench-observe-tpm-"))
    scratch.chmod(0o755)  # PostgreSQL runs as postgres under it
    info = described(dict(fathom=args.fathom, psql="psql"))
    print(textwrap.fill("machine: " + ", ".join(f"{k} {v}" for k, v in info.items()), 79,
                        subsequent_indent="  "))
    print(f"fathom run tpcc -q --set warehouses={args.warehouses} --set clients={args.clients}\n"
          f"  --set duration={args.duration}s --set ramp={args.ramp}s")
    print(f"scratch: {scratch}\n")
    print("run   TPM server  TPM client  server/client   diff  observer/min  share")
    runs = []
    try:
        for n in range(1, args.repeat + 1):
            r = once(args, scratch, n)
            runs.append(r)
            obs = "—" if r["observer_per_min"] is None else f"{r['observer_per_min']:.0f}"
            share = "—" if r["observer_pct"] is None else f"{r['observer_pct']:.2f}%"
            print(f"#{n:<3} {r['tpm']:>11,.0f} {r['client_tpm']:>11,.0f} {r['tpm'] / r['client_tpm']:>14.5f} "
                  f"{r['diff_pct']:>+6.3f}% {obs:>13} {share:>6}", flush=True)
            notes = [f"observer's session in: {', '.join(r['observer_dbs']) or 'not seen'}",
                     f"retries {r['retries']}, failed {r['failed']}"]
            if not r["counts_agree"]:
                notes.append(f"log {r['log']} vs profile {r['calls']}: DISAGREE")
            print("     " + "; ".join(notes), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    med = lambda k: statistics.median(r[k] for r in runs)
    diff = statistics.median(abs(r["diff_pct"]) for r in runs)
    shares = [r["observer_pct"] for r in runs if r["observer_pct"] is not None]
    print(f"\nmedian of {len(runs)}: TPM server {med('tpm'):,.0f}, client {med('client_tpm'):,.0f}; "
          f"|diff| {diff:.3f}%")
    print(f"TPM with and without observation within {GOAL_PCT}%: "
          f"{'yes' if diff <= GOAL_PCT else 'NO'} ({diff:.3f}%)")
    above = sum(r["diff_pct"] > 0 for r in runs)
    print(f"server above client (what counted statements would do): {above} of {len(runs)} runs")
    if shares:
        print(f"the observer's statements, were they counted: {statistics.median(shares):.2f}% of TPM")
    dbs = sorted({d for r in runs for d in r["observer_dbs"]})
    print(f"the observer's session was in: {', '.join(dbs) or 'not seen'}")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(machine=info, args=vars(args), runs=runs), indent=2) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
