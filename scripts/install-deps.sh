#!/usr/bin/env bash
# Installs the Debian packages a purpose needs, only those missing, so it is cheap to
# run every time (make test and make bench call it). Usage: install-deps.sh test|bench|run|static
set -euo pipefail

purpose="${1:-test}"
case "$purpose" in
  run)   packages=() ;;            # fathom itself needs nothing beyond a Rust toolchain
  # fio, postgresql (server and pgbench), iperf3: the drivers' programs; prometheus: scrapes
  # --prometheus; node exporter: a remote to observe; chromium: renders the report;
  # openssh: the many-host tests' sshd on loopback and the client fathom reaches it with;
  # python3: scripts/shape.py, the shape check make test runs (and tests/integration/shape.rs);
  # tmux: a real terminal at 80 columns for the live view's test (tests/integration/live_view.rs)
  # man-db: `man` reads the pages `fathom man` writes (tests/integration/completions.rs)
  # openssl: a CA and a certificate for the HTTPS observer's test (tests/integration/observe.rs)
  # musl-tools: the C compiler of the static build (`make static`; its agent's test, tests/integration/hosts.rs)
  test)  packages=(fio postgresql iperf3 prometheus prometheus-node-exporter chromium openssh-server openssh-client python3 tmux man-db openssl musl-tools) ;;
  bench) packages=(fio) ;;         # the peer fathom is measured against
  static) packages=(musl-tools) ;; # the static build's C compiler (SQLite, ring)
  *) echo "usage: $0 run|test|bench|static" >&2; exit 2 ;;
esac

# The static build's standard library, from rustup (Debian's packages have none for musl).
static_target=x86_64-unknown-linux-musl
if [ "$purpose" = test ] || [ "$purpose" = static ]; then
  if ! rustc --print sysroot >/dev/null 2>&1 || [ ! -d "$(rustc --print sysroot)/lib/rustlib/$static_target" ]; then
    if ! command -v rustup >/dev/null 2>&1; then
      echo "the static build needs Rust's $static_target standard library: install Rust with rustup (https://rustup.rs)" >&2
      exit 2
    fi
    rustup target add "$static_target" >&2
  fi
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust (https://rustup.rs) first" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing ${missing[*]} from Debian's packages" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
