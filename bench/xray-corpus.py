#!/usr/bin/env python3
"""fathom on the X-Ray scenarios users already own: how many run as they are, and why
the rest are refused.

For every scenario directory of ../shared/corpus/xray (read in place, never copied; by
default the 43 directories holding the 42 distinct ones: nutanix+curie's built-ins and garyjlittle+xray's custom
ones, --all for the older variant sets too) it lints and runs the scenario on an
inventory of 4 local-transport hosts, each with 6 scratch directories as its targets
(an X-Ray VM's data disks /dev/sdb../dev/sdg are a host's targets in order), at a time
scale that makes the scenario at most about --seconds long (from its waits and
durations; durations below a second are raised to one, so a scenario of many steps runs
longer) and with
`--set size=SIZE` shrinking every working set.

Two passes:
  1. without --hooks: a scenario whose run needs an infrastructure step (a node powered
     off, a snapshot, a playbook) is refused before anything runs, naming the hooks;
  2. with a hooks file of harmless commands (each appends its name and hosts to
     bench/out/xray-scratch/hooks.log): the scenarios pass 1 refused for hooks are run
     again; those pass 1 ran need no hook, so the file changes nothing for them.

Per scenario: ran / refused (reason) / failed (reason) in each pass, and the totals.
--json OUT writes the rows; --limit N and --only NAME (a substring of the scenario's
directory) for quick checks. Standard library only (Python 3.11).
"""

import argparse
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
# the corpus location and the table shared with the fio corpus benchmark
_spec = importlib.util.spec_from_file_location("fio_corpus", BENCH / "fio-corpus.py")
fio_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fio_corpus)
ROOT = BENCH.parent
OUT = BENCH / "out"
SCRATCH = OUT / "xray-scratch"
HOSTS = 4
DISKS = 6
# the 42 distinct scenarios; the other sets are older variants of curie's
DISTINCT = ["nutanix+curie", "garyjlittle+xray"]
# X-Ray's infrastructure steps, each a hook name (docs/xray.md)
HOOKS = ["nodes.PowerOff", "nodes.PowerOn", "vm_group.PowerOff", "vm_group.PowerOn", "vm_group.WaitForPowerOn",
         "vm_group.MigrateGroup", "meta.RollingUpgrade", "vm_group.CreatePeriodicSnapshots", "playbook.Run"]
# a run that takes longer than this is stopped and counted as failed
RUN_TIMEOUT = 300


def inventory():
    """4 local hosts, each with DISKS scratch directories as its targets."""
    text = "hosts:\n"
    for i in range(HOSTS):
        targets = [SCRATCH / f"node{i}" / f"d{k}" for k in range(DISKS)]
        for t in targets:
            t.mkdir(parents=True, exist_ok=True)
        text += f"  node{i}: {{transport: local, target: [{', '.join(str(t) for t in targets)}]}}\n"
    path = SCRATCH / "hosts.yaml"
    path.write_text(text)
    return path


def remove_data_files():
    """The hosts' data files of the scenario just run: a working set at an `offset`
    (`--set size=` shrinks the size, not the offset) can be gigabytes, and 43 scenarios'
    files together would fill the disk."""
    for f in SCRATCH.glob("node*/d*/*"):
        if f.is_file():
            f.unlink()


def hooks_file():
    """Every X-Ray hook as a command that only notes it ran."""
    log = SCRATCH / "hooks.log"
    text = "hooks:\n" + "".join(f"  {h}: 'echo \"$FATHOM_HOOK $FATHOM_HOSTS\" >> {log}'\n" for h in HOOKS)
    path = SCRATCH / "hooks.yaml"
    path.write_text(text)
    return path


def reason(stderr):
    """The refusal in short: its last `fathom:` line, without the file's path."""
    lines = [l for l in stderr.strip().splitlines() if l.strip()]
    said = [l for l in lines if l.startswith("fathom: ")] or lines
    last = said[-1] if said else "no message"
    if " (X-Ray, as a scenario): " in last:
        return last.split(" (X-Ray, as a scenario): ", 1)[1]
    return last.split(": ", 2)[-1] if last.startswith("fathom: ") else last


def time_scale(args, scenario, hosts, seconds):
    """The factor that makes the scenario at most about `seconds` long (at most 1): its
    length bounded by every wait and every workload's duration one after the other (its
    mapping, `fathom convert`; X-Ray's estimated_runtime is often less than its steps),
    at least its estimated_runtime."""
    text = (scenario / "test.yml").read_text(errors="replace")
    m = re.search(r"^estimated_runtime:\s*([0-9.]+)\s*$", text, re.M)
    longest = float(m.group(1)) if m else 0.0
    convert = subprocess.run([str(args.fathom), "convert", str(scenario), "--hosts", str(hosts)],
                             capture_output=True, text=True, timeout=120)
    steps = sum(int(n) for n in re.findall(r"\b(?:wait|duration): (\d+)s\b", convert.stdout))
    longest = max(longest, steps, 1.0)
    return min(1.0, seconds / longest)


def attempt(args, scenario, hosts, hooks):
    """Lint, then run, the scenario; its class (ran / refused / failed) and reason."""
    common = ["--hosts", str(hosts)] + (["--hooks", str(hooks)] if hooks else [])
    lint = subprocess.run([str(args.fathom), "lint", str(scenario), *common], capture_output=True, text=True,
                          timeout=120)
    if lint.returncode != 0:
        return {"class": "refused", "reason": reason(lint.stderr), "hooks": "needs hooks" in lint.stderr}
    scale = time_scale(args, scenario, hosts, args.seconds)
    argv = [str(args.fathom), "run", str(scenario), *common, "--set", f"size={args.size}",
            "--time-scale", f"{scale:.6g}", "--results", str(SCRATCH / "results"), "--quiet"]
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"class": "failed", "reason": f"still running after {RUN_TIMEOUT} s", "time_scale": scale}
    finally:
        remove_data_files()
    # 3: ran, an expectation (a result band) failed
    if run.returncode in (0, 3):
        return {"class": "ran", "time_scale": scale}
    out = {"class": "refused" if run.returncode == 2 else "failed", "reason": reason(run.stderr), "time_scale": scale}
    out["hooks"] = "needs hooks" in run.stderr
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, default=fio_corpus.default_corpus().parent / "xray")
    p.add_argument("--fathom", type=Path, default=ROOT / "target/debug/fathom")
    p.add_argument("--all", action="store_true", help="also the older variant sets (75 directories)")
    p.add_argument("--seconds", type=float, default=15.0, help="what each scenario's length is scaled to (15)")
    p.add_argument("--size", default="16m", help="every working set (--set size=, 16m)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N scenarios")
    p.add_argument("--only", metavar="NAME", help="only scenarios whose directory contains NAME")
    p.add_argument("--json", type=Path, metavar="OUT")
    args = p.parse_args()
    if not args.fathom.exists():
        print(f"fathom not found at {args.fathom}: build it with `cargo build`", file=sys.stderr)
        sys.exit(2)
    shutil.rmtree(SCRATCH, ignore_errors=True)
    hosts, hooks = inventory(), hooks_file()
    dirs = sorted(t.parent for t in args.corpus.glob("*/*/test.yml"))
    if not args.all:
        dirs = [d for d in dirs if d.parent.name in DISTINCT]
    if args.only:
        dirs = [d for d in dirs if args.only in f"{d.parent.name}/{d.name}"]
    dirs = dirs[: args.limit] if args.limit else dirs
    rows = []
    for d in dirs:
        row = {"scenario": f"{d.parent.name}/{d.name}"}
        row["without_hooks"] = attempt(args, d, hosts, None)
        first = row["without_hooks"]
        # pass 2: only what pass 1 refused for its hooks runs differently with them
        row["with_hooks"] = attempt(args, d, hosts, hooks) if first.get("hooks") else first
        rows.append(row)
        print(f"{row['scenario']}: {first['class']} / {row['with_hooks']['class']}", file=sys.stderr, flush=True)

    def cell(r):
        return r["class"] + (f" ({r['reason'][:70]})" if r.get("reason") else "")

    print(fio_corpus.table(["scenario", "without --hooks", "with --hooks"],
                           [[r["scenario"], cell(r["without_hooks"]), cell(r["with_hooks"])] for r in rows]))
    for key, label in [("without_hooks", "without --hooks"), ("with_hooks", "with the hooks file")]:
        count = lambda k: sum(1 for r in rows if r[key]["class"] == k)
        hooked = sum(1 for r in rows if r[key].get("hooks"))
        print(f"{label}: {count('ran')} of {len(rows)} ran, {count('refused')} refused "
              f"({hooked} for the hooks they need), {count('failed')} failed")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
