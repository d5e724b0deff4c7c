#!/usr/bin/env python3
"""fathom's TPROC-C vs HammerDB's: the same workload on the same kind of server, interleaved.

Each repeat runs `fathom run tpcc` and HammerDB 4.12 (through run-tproc-c.sh, which builds its
own throwaway PostgreSQL 15 cluster and schema, or with --dbms mariadb run-tproc-c-mariadb.sh, a
throwaway MariaDB 10.11) with the same warehouses, clients (virtual users), ramp and duration,
and the same server settings (the ones HammerDB's script gives its server, passed to fathom's as
`settings`); each repeat swaps which goes first. Prints per tool the median NOPM and TPM, the
client's CPU per new-order and per transaction (for fathom its whole process tree but the
server: fathom itself and the pgbench or sysbench it runs; hammerdbcli's for HammerDB), the
server's CPU per new-order, and the medians of the per-repeat ratios fathom/HammerDB. See
bench/README.md. Standard library only (Python 3.11); run as root (both start their servers as
the postgres or mysql user).
"""

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import described

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
HZ = os.sysconf("SC_CLK_TCK")

# What run-tproc-c.sh writes into its cluster's postgresql.conf (besides where it listens),
# given to fathom's cluster alike. Kept in step with that script's section 3 by hand: the
# script checks each is still there (hammerdb_settings()) and stops if one is not.
SETTINGS = dict(shared_buffers="1GB", max_wal_size="4GB", checkpoint_timeout="5min",
                max_connections="100", track_functions="pl")
# What run-tproc-c-mariadb.sh writes into its server's my.cnf, given to fathom's alike: the
# three it takes from the environment are given to it here, so both get these by construction.
MARIADB_SETTINGS = dict(innodb_buffer_pool_size="1G", innodb_log_file_size="1G",
                        innodb_flush_log_at_trx_commit="1", max_connections="200")
MARIADB_ENV = dict(BUFFER_POOL="1G", REDO_SIZE="1G", FLUSH_AT_COMMIT="1")

# The client program (pgbench, or sysbench on MariaDB), timed: fathom finds it on the PATH, so
# this stands first on it for fathom's runs. It runs the real program as its child and appends
# to $TPCC_BENCH_RECORD one JSON line: the program's CPU (ru_utime + ru_stime from wait4: every
# thread of it) and fathom's own over the same time (its parent, every thread), the server's
# CPU (the postmaster of the cluster under $TPCC_BENCH_SCRATCH and its children, or that
# mariadbd, as HammerDB's scripts count their server), the machine's busy time, and the
# transactions of each script number in the per-transaction log (pgbench's -l, or the one
# fathom's sysbench timer writes to $FATHOM_SYSBENCH_LOG.N).
WRAPPER = r'''#!/usr/bin/env python3
import glob, json, os, signal, sys, time
real, record, scratch = (os.environ[k] for k in ("TPCC_BENCH_PROGRAM", "TPCC_BENCH_RECORD", "TPCC_BENCH_SCRATCH"))
args = sys.argv[1:]
sysbench = os.path.basename(real) == "sysbench"

def stat(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None

def postmaster():
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            cmd = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        server = cmd[0].endswith(b"mariadbd") if sysbench else cmd[0].endswith(b"postgres") and b"-D" in cmd
        if cmd and server and scratch.encode() in b" ".join(cmd):
            return int(p)

def server_ticks(pm):
    if pm is None:
        return 0
    t = 0
    for p in os.listdir("/proc"):
        f = stat(p) if p.isdigit() else None
        if f and (int(p) == pm or int(f[1]) == pm):
            t += sum(int(x) for x in f[11:15])
    return t

def own_ticks(pid):
    f = stat(pid)
    return sum(int(x) for x in f[11:13]) if f else 0

def busy():
    f = open("/proc/stat").readline().split()
    return sum(int(f[i]) for i in (1, 2, 3, 6, 7, 8))

for s in (signal.SIGALRM, signal.SIGINT, signal.SIGTERM):
    signal.signal(s, lambda *_: None)  # pgbench gets them too: it leads no group of its own
timed = "-T" in args or (sysbench and args[-1:] == ["run"])
pm = postmaster() if timed else None
fathom = os.getppid()
s0, m0, f0, w0 = server_ticks(pm), busy(), own_ticks(fathom), time.monotonic()
pid = os.posix_spawn(real, [real] + args, os.environ)
_, status, usage = os.wait4(pid, 0)
wall = time.monotonic() - w0
time.sleep(0.3)  # its sessions end: their CPU reaches the postmaster
s1, m1, f1 = server_ticks(pm), busy(), own_ticks(fathom)
if timed:
    hz = os.sysconf("SC_CLK_TCK")
    txns, failed = {}, 0
    prefix = os.environ.get("FATHOM_SYSBENCH_LOG") if sysbench else \
        next((a.split("=", 1)[1] for a in args if a.startswith("--log-prefix=")), None)
    for path in glob.glob(prefix + ".*") if prefix else []:
        for line in open(path, errors="replace"):
            f = line.split()
            if len(f) < 4:
                continue
            if f[2] in ("failed", "skipped"):
                failed += 1
            else:
                txns[f[3]] = txns.get(f[3], 0) + 1
    with open(record, "a") as out:
        out.write(json.dumps(dict(cpu_s=usage.ru_utime + usage.ru_stime, fathom_cpu_s=(f1 - f0) / hz, wall_s=wall,
                                  server_cpu_s=(s1 - s0) / hz if pm else None,
                                  machine_busy_s=(m1 - m0) / hz, txns=txns, failed=failed,
                                  exit=os.waitstatus_to_exitcode(status))) + "\n")
sys.exit(max(os.waitstatus_to_exitcode(status), 0) if os.WIFEXITED(status) else 1)
'''


def die(msg):
    print(f"tpcc-vs-hammerdb: {msg}", file=sys.stderr)
    sys.exit(2)


def hammerdb_script(args):
    """run-tproc-c.sh: --hammerdb, else $TPCC_HAMMERDB, else ../shared/tools/hammerdb beside the
    repository (a worktree's parent's too)."""
    dirs = [args.hammerdb] if args.hammerdb else [os.environ["TPCC_HAMMERDB"]] if os.environ.get("TPCC_HAMMERDB") \
        else [ROOT.parent / "shared/tools/hammerdb", ROOT.parent.parent / "shared/tools/hammerdb"]
    name = "run-tproc-c-mariadb.sh" if args.dbms == "mariadb" else "run-tproc-c.sh"
    for d in map(Path, dirs):
        if (d / name).is_file():
            return d / name
    die(f"HammerDB's {name} not found in {', '.join(map(str, dirs))}: give --hammerdb DIR "
        f"(or TPCC_HAMMERDB), the directory holding {name} and hammerdb-4.12/")


def hammerdb_settings(script, dbms):
    """Checks that HammerDB's script still gives its server the settings fathom's gets."""
    text = script.read_text()
    if dbms == "mariadb":
        given = {"innodb_buffer_pool_size": "BUFFER_POOL", "innodb_log_file_size": "REDO_SIZE",
                 "innodb_flush_log_at_trx_commit": "FLUSH_AT_COMMIT"}
        for k, v in MARIADB_SETTINGS.items():
            want = rf"^{k}=\${given[k]}$" if k in given else rf"^{k}={re.escape(v)}$"
            if not re.search(want, text, re.M):
                die(f"{script} no longer sets `{k}` as {__file__} expects: update MARIADB_SETTINGS")
        return
    for k, v in SETTINGS.items():
        if not re.search(rf"^{k} = '?{re.escape(v)}'?$", text, re.M):
            die(f"{script} no longer sets `{k} = {v}`: update SETTINGS in {__file__}")


def real_sysbench():
    found = shutil.which("sysbench")
    if not found:
        die("sysbench not found: apt-get install sysbench")
    return found


def real_pgbench():
    """The pgbench binary itself (Debian's /usr/bin/pgbench is a Perl wrapper around it)."""
    try:
        bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True).stdout.strip()
        if bindir and os.access(f"{bindir}/pgbench", os.X_OK):
            return f"{bindir}/pgbench"
    except OSError:
        pass
    found = shutil.which("pgbench")
    if not found:
        die("pgbench not found: apt-get install postgresql-client")
    return found


def fathom_cmd(args, results):
    sets = [f"warehouses={args.warehouses}", f"clients={args.clients}", f"ramp={args.ramp_min}m",
            f"step={args.duration_min}m", f"oltp.home={args.home}"]
    if args.dbms == "mariadb":
        sets.append("dbms=mariadb")
    if not args.fathom_default_settings:
        given = MARIADB_SETTINGS if args.dbms == "mariadb" else SETTINGS
        sets += [f"oltp.settings.{k}={v}" for k, v in given.items()]
    sets += args.fathom_set or []
    argv = [args.fathom, "run", "tpcc", "--results", str(results), "-q", "--no-expect"]
    for s in sets:
        argv += ["--set", s]
    return argv


def hammerdb_env(args, scratch, first):
    env = dict(W=str(args.warehouses), VU=str(args.clients), RAMPUP_MIN=str(args.ramp_min),
               DURATION_MIN=str(args.duration_min), ALLWAREHOUSE=args.allwarehouse,
               TIMEPROFILE=args.timeprofile, STOREDPROCS=args.storedprocs, CHECK="1" if args.hammerdb_check else "0",
               SCRATCH=str(scratch / "hammerdb"), SKIP_APT="0" if first and not args.skip_apt else "1")
    return dict(env, **MARIADB_ENV) if args.dbms == "mariadb" else env


def run_logged(argv, log, env=None):
    """Runs argv with its output in log; exits with its tail when it fails."""
    with open(log, "wb") as f:
        start = time.monotonic()
        rc = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, env=env).returncode
    if rc != 0:
        die(f"{shlex.join(map(str, argv))} failed (exit {rc}); see {log}:\n" + log.read_text(errors="replace")[-3000:])
    return log.read_text(errors="replace"), time.monotonic() - start


def fathom_once(args, scratch, stem):
    """One fathom run: its NOPM and TPM from the run's `tpcc` event, the client's CPU (the
    program's and fathom's) and transactions from the wrapper's record."""
    results = scratch / f"results-{stem}"
    record = scratch / f"{stem}.client.json"
    env = dict(os.environ, PATH=f"{scratch / 'bin'}:{os.environ.get('PATH', '')}",
               TPCC_BENCH_PROGRAM=args.program, TPCC_BENCH_RECORD=str(record), TPCC_BENCH_SCRATCH=str(results))
    _, wall = run_logged(fathom_cmd(args, results), scratch / f"{stem}.log", env)
    shown = json.loads(subprocess.run([args.fathom, "show", "last", "--json", "--results", str(results)],
                                      check=True, capture_output=True, text=True).stdout)
    detail = next(e["detail"] for e in shown["events"] if e["kind"] == "tpcc")
    m = re.search(r"System achieved (\d+) NOPM from (\d+) (PostgreSQL|MariaDB) TPM", detail)
    if not m:
        die(f"no NOPM in fathom's tpcc event: {detail[:300]}")
    recs = [json.loads(line) for line in record.read_text().splitlines()]
    if len(recs) != 1:
        die(f"{record}: {len(recs)} timed client runs, expected 1")
    r = recs[0]
    new_orders = r["txns"].get("0", 0)  # new-order is fathom's first transaction type
    shutil.rmtree(results, ignore_errors=True)  # the run's store and the client's log: hundreds of MB
    return dict(nopm=int(m[1]), tpm=int(m[2]), client_cpu_s=r["cpu_s"] + r["fathom_cpu_s"],
                program_cpu_s=r["cpu_s"], fathom_cpu_s=r["fathom_cpu_s"], server_cpu_s=r["server_cpu_s"],
                machine_busy_s=r["machine_busy_s"], new_orders=new_orders, txns=sum(r["txns"].values()),
                wall_s=round(wall, 1), detail=detail)


def hammerdb_once(args, scratch, stem, first):
    """One run-tproc-c.sh run: its TEST RESULT line and ANCHOR lines."""
    env = dict(os.environ, **hammerdb_env(args, scratch, first))
    text, wall = run_logged(["bash", str(args.script)], scratch / f"{stem}.log", env)
    m = re.search(r"System achieved (\d+) NOPM from (\d+) (PostgreSQL|MariaDB) TPM", text)
    cpu = re.search(r"ANCHOR run=1 vu=\S+ .*client_cpu_s=([\d.]+) server_cpu_s=([\d.]+) machine_busy_s=([\d.]+)", text)
    whole = re.search(r"ANCHOR run=1 whole_run new_orders=(\d+) (?:xact_commit|com_commit)=(\d+) "
                      r"(?:xact_rollback|com_rollback)=(\d+)", text)
    calls = re.search(r"ANCHOR run=1 whole_run .*com_call_procedure=(\d+)", text)
    mix = re.search(r"ANCHOR run=1 server_mix (.*)", text)
    if not (m and cpu and whole):
        die(f"run-tproc-c.sh printed no TEST RESULT or ANCHOR run=1 lines; see {scratch / stem}.log")
    calls = dict(kv.split("=") for kv in mix[1].split()) if mix else {}
    # its transactions: the calls of its five procedures (server_mix), else the database's commits
    procs = [int(calls[p]) for p in ("neword", "payment", "delivery", "slev", "ostat") if p in calls]
    # on MariaDB each transaction is one CALL of its procedure
    txns = sum(procs) if len(procs) == 5 else int(calls[1]) if calls else int(whole[2]) + int(whole[3])
    return dict(nopm=int(m[1]), tpm=int(m[2]), client_cpu_s=float(cpu[1]), server_cpu_s=float(cpu[2]),
                machine_busy_s=float(cpu[3]), new_orders=int(whole[1]), txns=txns, wall_s=round(wall, 1),
                server_mix=calls)


def per(sample):
    """CPU in milliseconds per new-order and per transaction, over the whole run (ramp too)."""
    s = dict(sample)
    no, tx = s["new_orders"] or float("nan"), s["txns"] or float("nan")
    s["client_ms_per_no"] = 1000 * s["client_cpu_s"] / no
    s["client_ms_per_txn"] = 1000 * s["client_cpu_s"] / tx
    s["server_ms_per_no"] = 1000 * s["server_cpu_s"] / no if s["server_cpu_s"] is not None else float("nan")
    return s


KEYS = [("nopm", "NOPM", "{:,.0f}"), ("tpm", "TPM", "{:,.0f}"),
        ("client_ms_per_no", "client CPU ms/new-order", "{:.3f}"),
        ("client_ms_per_txn", "client CPU ms/txn", "{:.3f}"),
        ("server_ms_per_no", "server CPU ms/new-order", "{:.3f}")]


def table(runs, args):
    tools = [t for t in ("fathom", "hammerdb") if runs[t]]
    med = {t: {k: statistics.median(s[k] for s in runs[t]) for k, _, _ in KEYS} for t in tools}
    head = ("figure", *tools, *(["fathom/HammerDB"] if len(tools) == 2 else []))
    rows = [head]
    for k, name, fmt in KEYS:
        row = [name] + [fmt.format(med[t][k]) for t in tools]
        if len(tools) == 2:
            row.append(f"{statistics.median(a[k] / b[k] for a, b in zip(runs['fathom'], runs['hammerdb'])):.2f}")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    n = max(len(runs[t]) for t in tools)
    return "\n".join(lines) + (
        f"\n\nmedians of {n} run(s) each: {args.warehouses} warehouses, {args.clients} clients, "
        f"{args.ramp_min} min ramp + {args.duration_min} min measured; the ratio is the median of the "
        "per-repeat ratios. CPU per new-order and per transaction is over each whole run (ramp included): "
        f"client = fathom and the {args.program_name} it runs, or hammerdbcli (HammerDB); server = "
        f"{'mariadbd' if args.dbms == 'mariadb' else 'the postmaster and its children'}.")


def machine(args):
    return described({"fathom": args.fathom, args.program_name: args.program})


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dbms", default="postgresql", choices=["postgresql", "mariadb"],
                   help="the database both run on (default postgresql)")
    p.add_argument("--warehouses", type=int, default=4, help="TPC-C warehouses (default 4)")
    p.add_argument("--clients", type=int, default=4, help="fathom's clients = HammerDB's virtual users (default 4)")
    p.add_argument("--ramp-min", type=int, default=1, help="ramp (HammerDB's rampup) in whole minutes (default 1)")
    p.add_argument("--duration-min", type=int, default=1, help="measured minutes (default 1)")
    p.add_argument("--repeat", type=int, default=2, help="runs per tool, interleaved (default 2)")
    p.add_argument("--home", default="per-client", choices=["per-client", "random", "all"],
                   help="fathom's home: per-client (default) is what ALLWAREHOUSE=true gives when "
                        "warehouses = clients: virtual user k on warehouse k alone")
    p.add_argument("--allwarehouse", default="true", choices=["true", "false"], help="HammerDB's (default true)")
    p.add_argument("--timeprofile", default="true", choices=["true", "false"], help="HammerDB's (default true)")
    p.add_argument("--storedprocs", default="true", choices=["true", "false"], help="HammerDB's (default true)")
    p.add_argument("--hammerdb-check", action="store_true", help="run HammerDB's checkschema after each run")
    p.add_argument("--fathom-default-settings", action="store_true",
                   help="do not give fathom's cluster HammerDB's server settings")
    p.add_argument("--fathom-set", action="append", metavar="KEY=VALUE", help="another --set for fathom")
    p.add_argument("--only", choices=["fathom", "hammerdb"], help="run one tool only")
    p.add_argument("--fathom", default=str(ROOT / "target/release/fathom"), help="fathom binary")
    p.add_argument("--hammerdb", help="the directory of run-tproc-c.sh (default $TPCC_HAMMERDB, else "
                                      "../shared/tools/hammerdb beside the repository)")
    p.add_argument("--skip-apt", action="store_true", help="run-tproc-c.sh skips apt-get (SKIP_APT=1)")
    p.add_argument("--scratch", help="parent of the scratch directory (default /tmp); removed at the end")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory (logs)")
    p.add_argument("--json", metavar="PATH", help="also write machine-readable results here")
    args = p.parse_args()
    if min(args.warehouses, args.clients, args.ramp_min, args.duration_min, args.repeat) < 1:
        p.error("--warehouses, --clients, --ramp-min, --duration-min and --repeat must be at least 1")
    if os.geteuid() != 0:
        die("run as root: HammerDB's scripts and fathom run their servers as the postgres or mysql user")
    tools = [args.only] if args.only else ["fathom", "hammerdb"]
    if "hammerdb" in tools:
        args.script = hammerdb_script(args)
        hammerdb_settings(args.script, args.dbms)
    if "fathom" in tools and not os.access(args.fathom, os.X_OK):
        die(f"fathom not found at {args.fathom}: build it with `cargo build --release --locked`")
    args.program_name = "sysbench" if args.dbms == "mariadb" else "pgbench"
    args.program = real_sysbench() if args.dbms == "mariadb" else real_pgbench()

    scratch = Path(tempfile.mkdtemp(prefix="bench-tpcc-", dir=args.scratch or "/tmp"))
    scratch.chmod(0o755)  # the server runs as postgres or mysql under it
    (scratch / "bin").mkdir()
    (scratch / "bin" / args.program_name).write_text(WRAPPER)
    (scratch / "bin" / args.program_name).chmod(0o755)
    info = machine(args)
    print("machine: " + ", ".join(f"{k} {v}" for k, v in info.items()))
    commands = {}
    if "fathom" in tools:
        commands["fathom"] = shlex.join(fathom_cmd(args, Path("RESULTS")))
        print(f"fathom:   {commands['fathom']}")
    if "hammerdb" in tools:
        env = hammerdb_env(args, Path("SCRATCH"), False)
        commands["hammerdb"] = " ".join(f"{k}={v}" for k, v in env.items() if k not in ("SCRATCH", "SKIP_APT")) \
            + f" bash {args.script}"
        print(f"HammerDB: {commands['hammerdb']}")
    print(f"scratch:  {scratch}", flush=True)

    runs = {"fathom": [], "hammerdb": []}
    try:
        for r in range(args.repeat):
            for tool in (tools if r % 2 == 0 else tools[::-1]):
                stem = f"{tool}-{r + 1}"
                s = per(fathom_once(args, scratch, stem) if tool == "fathom"
                        else hammerdb_once(args, scratch, stem, not runs["hammerdb"]))
                runs[tool].append(s)
                print(f"  #{r + 1} {tool:8}: {s['nopm']:>7,} NOPM {s['tpm']:>8,} TPM  client "
                      f"{s['client_cpu_s']:6.1f} s CPU, {s['client_ms_per_no']:.3f} ms/new-order, "
                      f"{s['client_ms_per_txn']:.3f} ms/txn; server {s['server_ms_per_no']:.3f} ms/new-order; "
                      f"{s['wall_s']:.0f} s", file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print(table(runs, args))
    if args.json:
        doc = dict(machine=info, commands=commands, settings=MARIADB_SETTINGS if args.dbms == "mariadb" else SETTINGS, args={k: str(v) for k, v in vars(args).items()},
                   runs=runs)
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
