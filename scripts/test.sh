#!/usr/bin/env bash
# The whole suite, as `make test` runs it: the checks, the builds and the tests, in the order
# that keeps both cores busy. The tests that judge a rate or a time run apart and leave the
# cores mostly idle, so the work no other test waits for fills them.
#
# Order: formatting, the code's shape and the supply chain (seconds); the integration
# tests' build, with clippy's lints; the integration tests that share the machine; the
# tests that judge a rate or a time, two light ones at once (the `paired` module of their
# file), then the others with the machine to themselves (the `alone` module; see
# tests/integration/common/machine.rs), the unit tests' build and run beside them at the
# lowest priority.
#
# Environment: CARGO (cargo), INTEGRATION_THREADS (how many integration tests share the
# machine at once, 12). Background steps write their output to target/suite/NAME.log.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo="${CARGO:-cargo}"
threads="${INTEGRATION_THREADS:-12}"
logs=target/suite
mkdir -p "$logs"

scripts/install-deps.sh test
if ! command -v clippy-driver >/dev/null; then
  echo "the tests need clippy: rustup component add clippy" >&2
  exit 2
fi
"$cargo" fmt --all -- --check
python3 scripts/shape.py --strict
python3 scripts/supply-chain.py

# Runs "$@" in the background, its output to $logs/$name.log; `finish NAME` waits for it
# and, when it failed, shows its output and fails the suite.
declare -A pids
# On the way out (a failed step), each background step is ended with everything it started
# (its cargo and rustc, which a kill of the step's shell alone leaves running).
kill_tree() {
  local child
  for child in $(pgrep -P "$1"); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
trap 'for pid in "${pids[@]}"; do kill_tree "$pid"; done' EXIT
background() {
  local name=$1
  shift
  "$@" >"$logs/$name.log" 2>&1 &
  pids[$name]=$!
}
# Says when each step of the suite begins, in seconds since the suite began, so that a
# slow suite shows which step grew.
step() {
  echo "suite: $1 at ${SECONDS} s"
}
finish() {
  if ! wait "${pids[$1]}"; then
    cat "$logs/$1.log" >&2
    echo "$1 failed (its output above, and in $logs/$1.log)" >&2
    exit 1
  fi
  grep -h "^test result" "$logs/$1.log" | sed "s/^/$1: /" || true
}

# A clean build gains nothing from incremental compilation's bookkeeping.
export CARGO_INCREMENTAL=0

# Every test runs fathom's static build (musl), the one `--push-agent` copies to hosts: the
# suite then compiles fathom and its dependencies once, not once for this machine's C
# library and once more for musl (about 100 s of one core, half the suite's build).
static_target=x86_64-unknown-linux-musl
step "the integration tests' build"
# Clippy's lints run as the test binaries are built, as `cargo clippy --all-targets -- -D
# warnings` runs them (it is this wrapper over `cargo check`), so the code is compiled once,
# not once checked and once built. The test binaries are run directly, not through cargo,
# so that no cargo waits on another's lock of the build directory while tests run.
lint_build() {
  RUSTFLAGS="-D warnings" RUSTC_WORKSPACE_WRAPPER="$(command -v clippy-driver)" \
    "$cargo" test --locked --target "$static_target" "$@" --no-run
}
# The integration tests and the fathom they run first; the unit tests' build (the crate a
# second time) waits for the idle cores of the one-at-a-time tests, below.
built=$(lint_build --test integration --message-format=json-render-diagnostics)
# The executable cargo built of target $1, its test build when $2 is "test".
executable() {
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] \
            and m.get("executable") and m["profile"]["test"] == (sys.argv[2] == "test"):
        print(m["executable"])' "$1" "$2" <<<"$built"
}
integration=$(executable integration test)
fathom=$(executable fathom bin)
# The static build is where `--push-agent` looks for this fathom's static twin
# (`fathom-static` beside it, as `make install` puts it), for the tests that push it to a
# host.
ln -f "$fathom" "$(dirname "$fathom")/fathom-static"

# First the integration tests that share the machine, $threads at once: they keep both cores
# busy.
step "the integration tests that share the machine"
"$integration" --skip ::alone:: --skip ::paired:: --test-threads "$threads"

# Then the tests that judge a rate or a time: those of a light load (the `paired` modules,
# well under a core each) two at once, then the others (the `alone` modules) one at a
# time. They leave most of the cores idle, so the unit tests run beside them at the lowest
# priority (`nice -n 19`), which gives way to the test at once.
# every other target, the unit tests among them, built with the same lints, then the unit
# tests run (in a subshell at the lowest priority, which what it starts inherits)
unit_tests() {
  renice -n 19 -p "$BASHPID" >/dev/null
  built=$(lint_build --all-targets --message-format=json-render-diagnostics) || return 1
  "$(executable fathom test)"
}
step "the tests that hold the machine two at once, then alone (the unit tests beside them)"
background unit unit_tests
"$integration" ::paired:: --test-threads 2
"$integration" ::alone:: --test-threads 1
step "waiting for the unit tests"
finish unit
step "done"
