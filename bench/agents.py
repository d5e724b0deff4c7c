#!/usr/bin/env python3
"""The controller of a many-host run (issue #8) with 64 agents: its CPU, its memory, and
the lag from the end of a sample's second to its arrival at the controller. Goals: a
median lag under 100 ms and under 5% of a core for the controller.

The agents are `fathom agent` processes on this machine (`transport: local`), each with
two open-loop readers of 25 IOs/s on a small file of its own, so the agents cost little
and the controller's share is what is measured. The controller's CPU is the seconds its
own process used (/proc/PID/stat, agents excluded) over the run's wall time, read while
it runs; its memory is the peak of VmRSS; the lag is what fathom stores for the run
(`controller` `sample_lag_p50_ms`, `sample_lag_p99_ms`). Median of --repeat runs.

Usage: python3 bench/agents.py [--agents 64] [--seconds 30] [--repeat 3]
"""
import argparse, json, os, sqlite3, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FATHOM = os.path.join(ROOT, "target", "release", "fathom")
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except FileNotFoundError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def one(dir, agents, seconds):
    with open(os.path.join(dir, "hosts.yaml"), "w") as f:
        f.write("hosts:\n")
        for i in range(agents):
            target = os.path.join(dir, f"h{i}")
            os.makedirs(target, exist_ok=True)
            f.write(f"  h{i}: {{transport: local, target: {target}}}\n")
    scenario = os.path.join(dir, "fleet.yaml")
    with open(scenario, "w") as f:
        f.write(f"name: fleet\nworkloads:\n  r: {{hosts: all, per_host: 2, rw: randread, bs: 4k, size: 4m, "
                f"direct: false, rate_iops: {50 * agents}, duration: {seconds}s}}\n")
    p = subprocess.Popen([FATHOM, "run", scenario, "--hosts", os.path.join(dir, "hosts.yaml"), "--results", dir, "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # the run clock starts once every agent is connected and laid out: time from there
    cpu0 = t0 = None
    cpu, peak = 0.0, 0
    db = os.path.join(dir, "fathom.db")
    while p.poll() is None:
        c = cpu_seconds(p.pid)
        peak = max(peak, rss_kib(p.pid))
        if t0 is None and os.path.exists(db):
            try:
                started = sqlite3.connect(db).execute("SELECT clock_start_unix_ms FROM runs").fetchone()
            except sqlite3.Error:
                started = None
            if started and started[0]:
                cpu0, t0 = c, time.time()
        if t0 is not None and c is not None and time.time() - t0 <= seconds:
            cpu = c - cpu0
        time.sleep(0.2)
    if p.returncode != 0:
        sys.exit(f"fathom failed: {p.stderr.read().decode()}")
    lag = dict(sqlite3.connect(db).execute(
        "SELECT name, value FROM observations WHERE source = 'controller'").fetchall())
    return {"cpu_share": cpu / seconds, "peak_rss_mib": peak / 1024,
            "lag_p50_ms": lag["sample_lag_p50_ms"], "lag_p99_ms": lag["sample_lag_p99_ms"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=int, default=64)
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if not os.path.exists(FATHOM):
        sys.exit("build first: cargo build --release")
    runs = []
    for i in range(a.repeat):
        with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "target")) as dir:
            r = one(dir, a.agents, a.seconds)
        runs.append(r)
        print(f"run {i + 1}: controller {r['cpu_share'] * 100:.2f}% of a core, peak RSS {r['peak_rss_mib']:.1f} MiB, "
              f"sample lag p50 {r['lag_p50_ms']:.0f} ms, p99 {r['lag_p99_ms']:.0f} ms", flush=True)
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"\n{a.agents} agents x 2 workers, {a.seconds} s, median of {a.repeat}:")
    print(f"  controller CPU   {med['cpu_share'] * 100:.2f}% of a core   (goal < 5%)")
    print(f"  controller RSS   {med['peak_rss_mib']:.1f} MiB")
    print(f"  sample lag p50   {med['lag_p50_ms']:.0f} ms   (goal < 100 ms)")
    print(f"  sample lag p99   {med['lag_p99_ms']:.0f} ms")
    print(json.dumps({"agents": a.agents, "seconds": a.seconds, "median": med}))


if __name__ == "__main__":
    main()
