#!/usr/bin/env python3
"""fathom's own bookkeeping with 256 workers reporting every second (issue #7): the CPU of
the threads that sample, store and export (collector, observer, Prometheus endpoint,
live view), as a share of one core. Target: under 1%.

fathom runs 256 workers (null engine, 20 IOs/s each, so the workers themselves cost
little) with --prometheus, scraped once a second by this script as Prometheus would.
While it runs, the script reads each thread's CPU time from /proc/PID/task/*/stat; the
figure is their total over the run's wall time. Median of --repeat runs.

Usage: python3 bench/overhead.py [--workers 256] [--seconds 30] [--repeat 3]
"""
import argparse, os, shutil, socket, statistics, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FATHOM = os.path.join(ROOT, "target", "release", "fathom")
BOOKKEEPING = ("collector", "observe-host", "prometheus", "live-view")
TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid):
    """CPU seconds per thread name (summed over threads of the same name)."""
    out = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except FileNotFoundError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out[(name, tid)] = (int(fields[11]) + int(fields[12])) / TICK
    return out


def one(dir, workers, seconds):
    port = socket.socket(); port.bind(("127.0.0.1", 0)); addr = port.getsockname(); port.close()
    scenario = os.path.join(dir, "many.yaml")
    with open(scenario, "w") as f:
        f.write(f"name: many\nworkloads:\n  w: {{target: {dir}/data, size: 16m, engine: null, rw: randread, jobs: {workers}, "
                f"iodepth: 1, rate_iops: {20 * workers}, duration: {seconds}s}}\n")
    os.makedirs(f"{dir}/data", exist_ok=True)
    p = subprocess.Popen([FATHOM, "run", scenario, "--results", dir, "--prometheus", f"{addr[0]}:{addr[1]}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen, scrapes = {}, 0
    start = time.time()
    while p.poll() is None:
        seen.update(thread_cpu(p.pid))
        try:
            urllib.request.urlopen(f"http://{addr[0]}:{addr[1]}/metrics", timeout=1).read()
            scrapes += 1
        except OSError:
            pass
        time.sleep(1)
    wall = time.time() - start
    if p.returncode != 0:
        sys.exit(f"fathom exited {p.returncode}")
    book = sum(v for (name, _), v in seen.items() if name in BOOKKEEPING)
    total = sum(seen.values())
    by_name = {n: sum(v for (m, _), v in seen.items() if m == n) / wall * 100 for n in BOOKKEEPING}
    print("  per thread: " + ", ".join(f"{n} {v:.2f}%" for n, v in by_name.items()), flush=True)
    return book / wall * 100, total / wall * 100, scrapes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=256)
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    results = []
    for _ in range(args.repeat):
        dir = tempfile.mkdtemp(prefix="fathom-overhead-")
        try:
            results.append(one(dir, args.workers, args.seconds))
        finally:
            shutil.rmtree(dir, ignore_errors=True)
        print(f"run: bookkeeping {results[-1][0]:.2f}% of a core, whole process {results[-1][1]:.1f}%, "
              f"{results[-1][2]} scrapes", flush=True)
    book = statistics.median(r[0] for r in results)
    whole = statistics.median(r[1] for r in results)
    print(f"{args.workers} workers: sampling, storing and exporting {book:.2f}% of one core (target < 1%); "
          f"whole fathom {whole:.1f}% (workers included); median of {args.repeat}")


if __name__ == "__main__":
    main()
