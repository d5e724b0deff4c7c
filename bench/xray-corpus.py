#!/usr/bin/env python3
"""fathom on the X-Ray scenarios users already own: how many it reads, places and maps,
and why the rest are refused (first version).

For every scenario directory of ../shared/corpus/xray (read in place, never copied) it
runs `fathom lint DIR --hosts H` on an inventory of 4 local-transport hosts with scratch
targets, and reports per scenario: maps (it would run) / refused (the reason: the hooks it
needs, a step or key fathom refuses). With --run, scenarios that map are also run with
`--set size=64m`; until `--time-scale` exists they run at X-Ray's own durations (hours), so
--run is for a machine with time to spare. --json OUT writes the rows.
Standard library only (Python 3.11).
"""

import argparse
import importlib.util
import json
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


def inventory():
    """4 local hosts, each with a scratch target of its own."""
    text = "hosts:\n"
    for i in range(HOSTS):
        target = SCRATCH / f"host-{i}"
        target.mkdir(parents=True, exist_ok=True)
        text += f"  node{i}: {{transport: local, target: {target}}}\n"
    path = SCRATCH / "hosts.yaml"
    path.write_text(text)
    return path


def reason(stderr):
    """The refusal in short: its last line, without the file's path."""
    lines = [l for l in stderr.strip().splitlines() if l.strip()]
    last = lines[-1] if lines else "no message"
    return last.split(": ", 2)[-1] if last.startswith("fathom: ") else last


def classify(args, hosts, scenario):
    argv = [str(args.fathom), "lint", str(scenario), "--hosts", str(hosts)]
    lint = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    row = {"scenario": f"{scenario.parent.name}/{scenario.name}", "exit": lint.returncode}
    if lint.returncode == 0:
        row["class"] = "maps"
    else:
        row["class"] = "refused"
        row["reason"] = reason(lint.stderr)
        row["hooks"] = "needs hooks" in lint.stderr
    if args.run and row["class"] == "maps":
        run = subprocess.run([str(args.fathom), "run", str(scenario), "--hosts", str(hosts), "--set", "size=64m",
                              "--results", str(SCRATCH / "results"), "--quiet"], capture_output=True, text=True)
        row["class"] = "ran" if run.returncode in (0, 3) else "failed"
        if run.returncode not in (0, 3):
            row["reason"] = reason(run.stderr)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, default=fio_corpus.default_corpus().parent / "xray")
    p.add_argument("--fathom", type=Path, default=ROOT / "target/debug/fathom")
    p.add_argument("--run", action="store_true", help="also run the scenarios that map (long: X-Ray's durations)")
    p.add_argument("--json", type=Path, metavar="OUT")
    args = p.parse_args()
    if not args.fathom.exists():
        print(f"fathom not found at {args.fathom}: build it with `cargo build`", file=sys.stderr)
        sys.exit(2)
    hosts = inventory()
    dirs = sorted(t.parent for t in args.corpus.glob("*/*/test.yml"))
    rows = [classify(args, hosts, d) for d in dirs]
    print(fio_corpus.table(["scenario", "result", "reason"],
                           [[r["scenario"], r["class"], r.get("reason", "")[:100]] for r in rows]))
    count = lambda k: sum(1 for r in rows if r["class"] == k)
    hooks = sum(1 for r in rows if r.get("hooks"))
    print(f"\n{len(rows)} scenarios: {count('maps') + count('ran')} map ({count('ran')} ran), "
          f"{count('refused')} refused ({hooks} only for the hooks they need), {count('failed')} failed to run")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
