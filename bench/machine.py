"""What a benchmark's figures were measured on, printed and stored beside them: shared by
the benchmarks that run fathom against a peer (vs-fio.py, tpcc-vs-hammerdb.py)."""

import os
import platform
import subprocess


def first_line(argv):
    """The first line a program prints (its version), or `?` when it cannot be run."""
    try:
        return subprocess.run(argv, capture_output=True, text=True).stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        return "?"


def described(programs, **extra):
    """The cores, CPU, kernel and load of this machine, each program's `--version` line
    (`programs`: name to path), and `extra` as given."""
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    found = dict(nproc=len(os.sched_getaffinity(0)), cpu=model, kernel=platform.release(),
                 loadavg=" ".join(f"{x:.2f}" for x in os.getloadavg()))
    found.update({name: first_line([path, "--version"]) for name, path in programs.items()})
    found.update(extra)
    return found
