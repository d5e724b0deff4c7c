#!/usr/bin/env python3
"""`fathom report` on a day-long run of 64 workers: under 10 s and 1 GiB (issue #6).

A real 3-second run of 64 workers (4 workloads x 16 jobs, the null engine) is stretched
into 24 hours: its per-second rows (counters per worker, HDR histograms per workload,
as fathom wrote them) are repeated for every second of the day, with the load following
a daily curve and one phase per hour, and the host observations likewise. Then
`fathom report` and `fathom show` run on it under /usr/bin/time; the script prints wall
time and peak memory, median of --repeat runs, against the targets.

Usage: python3 bench/report.py [--hours 24] [--repeat 3]
"""
import argparse, json, math, os, shutil, sqlite3, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FATHOM = os.path.join(ROOT, "target", "release", "fathom")

SCENARIO = """name: day
defaults: {target: DATA, size: 16m, engine: null, jobs: 16, iodepth: 1, think_time: 10ms, duration: 3s}
workloads:
  oltp: {rw: randrw, bs: 8k}
  logs: {rw: write, bs: 64k}
  reads: {rw: randread, bs: 4k}
  scans: {rw: read, bs: 1m}
"""


def build(dir, hours):
    data = os.path.join(dir, "data")
    os.makedirs(data)
    scenario = os.path.join(dir, "day.yaml")
    with open(scenario, "w") as f:
        f.write(SCENARIO.replace("DATA", data))
    subprocess.run([FATHOM, "run", scenario, "-q", "--results", dir], check=True, stdout=subprocess.DEVNULL)
    db = sqlite3.connect(os.path.join(dir, "fathom.db"))
    seconds = hours * 3600
    samples = db.execute("SELECT worker, op, workload_idx, ops, bytes, latency_sum_ns FROM samples WHERE t = 1").fetchall()
    hists = db.execute("SELECT workload_idx, op, kind, hist FROM histograms WHERE t = 1").fetchall()
    obs = db.execute("SELECT source, name, value FROM observations WHERE t = 1").fetchall()
    db.execute("DELETE FROM samples"); db.execute("DELETE FROM histograms"); db.execute("DELETE FROM observations")
    db.execute("DELETE FROM phases")
    t0 = time.time()
    for t in range(seconds):
        load = 0.6 + 0.4 * math.sin(2 * math.pi * t / 86400)
        db.executemany(
            "INSERT INTO samples (run_id, worker, t, op, workload_idx, ops, bytes, latency_sum_ns) VALUES (1,?,?,?,?,?,?,?)",
            [(w, t, op, wl, int(n * load), int(b * load), int(l * load)) for (w, op, wl, n, b, l) in samples])
        db.executemany("INSERT INTO histograms (run_id, workload_idx, t, op, kind, hist) VALUES (1,?,?,?,?,?)",
                       [(wl, t, op, k, h) for (wl, op, k, h) in hists])
        db.executemany("INSERT INTO observations (run_id, t, source, name, value) VALUES (1,?,?,?,?)",
                       [(t, s, n, v) for (s, n, v) in obs])
    db.executemany("INSERT INTO phases (run_id, idx, label, start_t, end_t) VALUES (1,?,?,?,?)",
                   [(h, f"hour {h}", h * 3600, (h + 1) * 3600) for h in range(hours)])
    db.execute("UPDATE workloads SET start_t = 0, measure_t = 0, end_t = ?, stopped_at = NULL", (seconds,))
    db.execute("UPDATE runs SET ended_unix_ms = started_unix_ms + ?", (seconds * 1000,))
    db.commit()
    rows = db.execute("SELECT count(*) FROM samples").fetchone()[0]
    db.close()
    size = os.path.getsize(os.path.join(dir, "fathom.db"))
    print(f"synthetic run: {hours} h x 64 workers, {rows:,} sample rows, {size / 2**30:.2f} GiB store, "
          f"built in {time.time() - t0:.0f} s", flush=True)


def timed(cmd):
    """Wall seconds and peak RSS (MiB) of a command, from GNU time."""
    start = time.time()
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    wall = time.time() - start
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {r.stderr}")
    return wall, int(r.stderr.strip().splitlines()[-1]) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hours", type=int, default=24)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not os.path.exists("/usr/bin/time"):
        sys.exit("needs GNU time (Debian package `time`): scripts/install-deps.sh bench installs it")
    dir = tempfile.mkdtemp(prefix="fathom-report-bench-")
    try:
        build(dir, args.hours)
        page = os.path.join(dir, "report.html")
        for name, cmd in [("report", [FATHOM, "report", "1", "-o", page, "--results", dir]),
                          ("show", [FATHOM, "show", "1", "--results", dir])]:
            runs = [timed(cmd) for _ in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            rss = statistics.median(r[1] for r in runs)
            print(f"fathom {name:6}: {wall:6.2f} s (target < 10 s), peak {rss:6.0f} MiB (target < 1024 MiB), "
                  f"median of {args.repeat}", flush=True)
        print(f"report page: {os.path.getsize(page) / 1024:.0f} KiB")
    finally:
        if os.environ.get("FATHOM_BENCH_KEEP"):
            print(f"kept {dir}")
        else:
            shutil.rmtree(dir, ignore_errors=True)


if __name__ == "__main__":
    main()
