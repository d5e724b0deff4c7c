#!/usr/bin/env python3
"""fathom vs fio: the same jobs, side by side, in one run.

For each job both tools do the same IO on the same file (fathom lays it out in a warm-up
run, fio's `filename=` points at it): 4 KiB random reads, or what the job says. Each tool runs as a child process; its CPU is the whole
process's user+system time from os.wait4(), not the tool's own report. Prints per job
the median IOPS and CPU seconds per million IOs of each tool and the median of the
per-repeat fathom/fio ratios. See bench/README.md. Standard library only (Python 3.11).
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

from machine import described, first_line

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH / "out"  # all scratch output lives here (git-ignored)
RESULTS = OUT / "results"  # fathom's results store for these runs
LOGS = OUT / "logs"  # stdout/stderr of every tool invocation
MiB = 1 << 20

# The jobs of the issue. fathom's data file is TARGET/fathom-FILE.dat (a directory
# target); fio reads that same file. Sizes are given in bytes to both tools.
JOBS = [
    dict(name="shm-psync-qd1", target="/dev/shm", file="bench-shm", size=256 * MiB,
         engine="psync", iodepth=1, direct=False),
    dict(name="shm-uring-qd32", target="/dev/shm", file="bench-shm", size=256 * MiB,
         engine="io_uring", iodepth=32, direct=False),
    dict(name="disk-direct-uring-qd32", target=str(OUT), file="bench-disk", size=1024 * MiB,
         engine="io_uring", iodepth=32, direct=True),
    # Sequential 1 MiB writes into tmpfs: mostly the cost of filling write buffers.
    dict(name="shm-psync-write-1m", target="/dev/shm", file="bench-shm", size=256 * MiB,
         engine="psync", iodepth=1, direct=False, rw="write", bs="1m"),
    # No IO at all (fio's ioengine=null): each tool's own cost per IO.
    dict(name="null-qd1", target=None, file=None, size=1024 * MiB, engine="null", iodepth=1, direct=False),
    dict(name="null-qd32", target=None, file=None, size=1024 * MiB, engine="null", iodepth=32, direct=False),
]


def rw(job):
    """The job's pattern: random 4 KiB reads unless it says otherwise."""
    return job.get("rw", "randread")


def bs(job):
    return job.get("bs", "4k")


def data_path(job):
    """The file fathom lays out for a job, and fio reads; None for null jobs."""
    return Path(job["target"]) / f"fathom-{job['file']}.dat" if job["target"] else None


def scenario_text(job, seconds):
    """A one-workload fathom scenario for the job: one worker, no ramp."""
    place = f"target: {job['target']}, file: {job['file']}, " if job["target"] else ""
    w = (f"{{{place}rw: {rw(job)}, bs: {bs(job)}, "
         f"size: {job['size']}, engine: {job['engine']}, iodepth: {job['iodepth']}, jobs: 1, "
         f"direct: {str(job['direct']).lower()}, duration: {seconds}s, ramp: 0s}}")
    return f"name: vs-fio-{job['name']}\nworkloads:\n  {job['name']}: {w}\n"


def fathom_cmd(args, job, seconds, tag):
    """Writes the job's scenario under bench/out and returns the `fathom run` argv."""
    path = OUT / f"{job['name']}-{tag}.yaml"
    path.write_text(scenario_text(job, seconds))
    return [args.fathom, "run", str(path), "--results", str(RESULTS), "-q"]


def fio_cmd(args, job, seconds):
    """The fio argv for the job: the same file, pattern, engine and depth as fathom's."""
    place = [f"--filename={data_path(job)}"] if job["target"] else []
    return [args.fio, f"--name={job['name']}", *place,
            f"--rw={rw(job)}", f"--bs={bs(job)}", f"--size={job['size']}", f"--ioengine={job['engine']}",
            f"--iodepth={job['iodepth']}", "--numjobs=1", f"--direct={int(job['direct'])}",
            "--time_based=1", f"--runtime={seconds}", "--randrepeat=0", "--norandommap=1",
            "--group_reporting=1", "--output-format=json"]


def run_measured(argv, log_stem):
    """Runs argv to completion and returns (stdout text, CPU seconds, wall seconds).

    os.wait4() reports the rusage of the whole child process: every thread it ever had
    (io_uring io-wq workers included, they are threads of the process) and the children
    it reaped itself (fio's forked job process), i.e. what `time` would print.
    Output goes to files, not pipes, so a chatty tool cannot block before we reap it.
    """
    out, err = LOGS / f"{log_stem}.out", LOGS / f"{log_stem}.err"
    with open(out, "wb") as fo, open(err, "wb") as fe:
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdout=fo, stderr=fe, cwd=OUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by us, not by Popen
    if proc.returncode != 0:
        sys.exit(f"{shlex.join(argv)} failed (exit {proc.returncode}); see {err}:\n"
                 + err.read_text(errors="replace")[-2000:])
    return out.read_text(errors="replace"), usage.ru_utime + usage.ru_stime, wall


def fathom_once(args, job, seconds, stem):
    """One fathom run of the job: (total IOs, IOPS, CPU s, wall s).

    The counts come from `fathom show last --json`, run afterwards and not measured.
    """
    _, cpu, wall = run_measured(fathom_cmd(args, job, seconds, "run"), stem)
    shown = subprocess.run([args.fathom, "show", "last", "--json", "--results", str(RESULTS)],
                           check=True, capture_output=True, text=True).stdout
    ops = [op for w in json.loads(shown)["workloads"] for op in w["ops"]]
    return sum(o["ops"] for o in ops), sum(o["iops"] for o in ops), cpu, wall


def fio_once(args, job, seconds, stem):
    """One fio run of the job: (total IOs, IOPS, CPU s, wall s)."""
    text, cpu, wall = run_measured(fio_cmd(args, job, seconds), stem)
    job = json.loads(text[text.index("{"):])["jobs"][0]  # skip any notes before the JSON
    done = [job[d] for d in ("read", "write")]
    return sum(d["total_ios"] for d in done), sum(d["iops"] for d in done), cpu, wall


def lay_out(args, job):
    """Has fathom write the job's file once (a 1 s warm-up run) before anything is timed."""
    if not job["target"]:
        return
    run_measured(fathom_cmd(args, job, 1, "layout"), f"{job['name']}-layout")
    size = data_path(job).stat().st_size
    if size < job["size"]:
        sys.exit(f"{data_path(job)} is {size} bytes after layout, expected {job['size']}")


def sample(ios, iops, cpu, wall):
    """One measurement as a dict; CPU per million IOs = CPU seconds / (IOs / 1e6)."""
    return dict(ios=ios, iops=iops, cpu_s=round(cpu, 3), wall_s=round(wall, 3),
                cpu_s_per_mio=cpu / (ios / 1e6) if ios else float("nan"))


def bench_job(args, job):
    """Runs the job `--repeat` times, alternating which tool goes first, and summarizes."""
    runs = {"fathom": [], "fio": []}
    for r in range(args.repeat):
        order = ["fathom", "fio"] if r % 2 == 0 else ["fio", "fathom"]
        for tool in order:
            once = fathom_once if tool == "fathom" else fio_once
            s = sample(*once(args, job, args.seconds, f"{job['name']}-{tool}-{r + 1}"))
            runs[tool].append(s)
            print(f"  {job['name']} #{r + 1} {tool:6}: {s['iops']:>11,.0f} IOPS  "
                  f"{s['cpu_s']:6.2f} s CPU  {s['cpu_s_per_mio']:6.2f} s/M IO", file=sys.stderr)
    med = lambda tool, key: statistics.median(s[key] for s in runs[tool])
    ratio = lambda key: statistics.median(a[key] / b[key] for a, b in zip(runs["fathom"], runs["fio"]))
    return dict(job=job, runs=runs, median=dict(
        fathom_iops=med("fathom", "iops"), fio_iops=med("fio", "iops"), iops_ratio=ratio("iops"),
        fathom_cpu=med("fathom", "cpu_s_per_mio"), fio_cpu=med("fio", "cpu_s_per_mio"),
        cpu_ratio=ratio("cpu_s_per_mio")))


def machine(args):
    """What the numbers were measured on."""
    disk = first_line(["findmnt", "-n", "-o", "SOURCE,FSTYPE", "--target", str(OUT)])
    return described(dict(fio=args.fio, fathom=args.fathom), disk=disk)


def table(results, args):
    """The plain result table: medians, and medians of the per-repeat ratios."""
    head = ("job", "fathom IOPS", "fio IOPS", "IOPS f/fio", "fathom CPU s/M", "fio CPU s/M", "CPU f/fio")
    rows = [head] + [(r["job"]["name"], f"{m['fathom_iops']:,.0f}", f"{m['fio_iops']:,.0f}",
                      f"{m['iops_ratio']:.2f}", f"{m['fathom_cpu']:.2f}", f"{m['fio_cpu']:.2f}",
                      f"{m['cpu_ratio']:.2f}") for r in results for m in [r["median"]]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
             for row in rows]
    return "\n".join(lines) + (f"\n\nmedians of {args.repeat} runs of {args.seconds} s each; ratios are "
                               "fathom/fio (IOPS: >1 fathom faster; CPU: >1 fathom costlier per IO)")


def require_tools(args):
    """Exits 2, saying how to get it, when fio or fathom is not there (shared with
    fio-corpus.py)."""
    if not os.access(args.fio, os.X_OK):
        print(f"fio not found at {args.fio}: run `scripts/install-deps.sh bench` (or `apt-get install fio`)", file=sys.stderr)
        sys.exit(2)
    if not os.access(args.fathom, os.X_OK):
        print(f"fathom not found at {args.fathom}: build it with `cargo build --release`", file=sys.stderr)
        sys.exit(2)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=int, default=15, help="measured seconds per run (default 15)")
    p.add_argument("--repeat", type=int, default=3, help="runs per tool and job (default 3)")
    p.add_argument("--json", metavar="PATH", help="also write machine-readable results here")
    p.add_argument("--job", action="append", choices=[j["name"] for j in JOBS], help="run only this job (repeatable)")
    p.add_argument("--fathom", default=str(ROOT / "target/release/fathom"), help="fathom binary")
    p.add_argument("--fio", default="/usr/bin/fio", help="fio binary (default /usr/bin/fio)")
    p.add_argument("--keep-files", action="store_true", help="keep the data files for the next run")
    args = p.parse_args()
    if args.seconds < 1 or args.repeat < 1:
        p.error("--seconds and --repeat must be at least 1")
    require_tools(args)
    LOGS.mkdir(parents=True, exist_ok=True)
    jobs = [j for j in JOBS if not args.job or j["name"] in args.job]

    info = machine(args)
    print("machine: " + ", ".join(f"{k} {v}" for k, v in info.items()))
    commands = {}
    for job in jobs:
        commands[job["name"]] = dict(fathom=shlex.join(fathom_cmd(args, job, args.seconds, "run")),
                                     scenario=scenario_text(job, args.seconds),
                                     fio=shlex.join(fio_cmd(args, job, args.seconds)))
        print(f"\n{job['name']}:\n  fathom: {commands[job['name']]['fathom']}\n  scenario: "
              + scenario_text(job, args.seconds).splitlines()[-1].strip()
              + f"\n  fio:    {commands[job['name']]['fio']}")
    print(flush=True)

    results = []
    try:
        for job in jobs:
            if job["target"]:
                print(f"{job['name']}: laying out {data_path(job)}", file=sys.stderr)
            lay_out(args, job)
            results.append(bench_job(args, job))
    finally:
        if not args.keep_files:
            for path in {data_path(j) for j in jobs} - {None}:
                path.unlink(missing_ok=True)

    print(table(results, args))
    if args.json:
        doc = dict(machine=info, seconds=args.seconds, repeat=args.repeat, commands=commands,
                   jobs=[dict(name=r["job"]["name"], spec=r["job"], median=r["median"], runs=r["runs"])
                         for r in results])
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
