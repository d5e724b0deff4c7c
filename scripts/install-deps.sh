#!/usr/bin/env bash
# Installs the Debian packages a purpose needs, only those missing, so it is cheap to
# run every time (make test and make bench call it). Usage: install-deps.sh test|bench|run|static
#
# For `test` it also builds HammerDB's CLI (for `engine: hammerdb`, docs/tpcc.md) from
# HammerDB's sources, found at $FATHOM_HAMMERDB_SRC, else <repo>/../shared/tools/hammerdb,
# else /work/shared/tools/hammerdb (a directory holding hammerdb-4.12/ and pgtclng/): its
# PostgreSQL binding Pgtcl-ng is compiled and the CLI laid out in
# ${XDG_CACHE_HOME:-~/.cache}/fathom/hammerdb (FATHOM_HAMMERDB_HOME overrides), where
# fathom looks for it; skipped when already built there.
set -euo pipefail

purpose="${1:-test}"
case "$purpose" in
  run)   packages=() ;;            # fathom itself needs nothing beyond a Rust toolchain
  # fio, postgresql (server and pgbench), iperf3: the drivers' programs; prometheus: scrapes
  # --prometheus; node exporter: a remote to observe; chromium: renders the report;
  # openssh: the many-host tests' sshd on loopback and the client fathom reaches it with;
  # python3: scripts/shape.py, the shape check make test runs (and tests/integration/shape.rs);
  # tmux: a real terminal at 80 columns for the live view's test (tests/integration/live_view.rs);
  # man-db: `man` reads the pages `fathom man` writes (tests/integration/completions.rs);
  # openssl: a CA and a certificate for the HTTPS observer's test (tests/integration/observe.rs);
  # musl-tools: the C compiler of the static build (`make static`, and `make test`, whose tests run it);
  # sysbench, mariadb-server: driver: sysbench on both databases; prometheus-mysqld-exporter: the
  # names MariaDB's observer publishes, checked against the real exporter's (tests/integration/sysbench.rs);
  # prometheus-postgres-exporter: the same for PostgreSQL's (tests/integration/databases.rs)
  # tcl8.6 to libc6-dev: HammerDB's CLI and the build of its PostgreSQL binding (Pgtcl-ng),
  # for engine: hammerdb (never Debian's libpgtcl, another fork Tcl would load instead);
  # mysqltcl: its MariaDB binding, under the names HammerDB calls (mariatcl, below)
  test)  packages=(fio postgresql sysbench mariadb-server prometheus-mysqld-exporter prometheus-postgres-exporter iperf3 prometheus prometheus-node-exporter chromium openssh-server openssh-client python3 tmux
                   man-db openssl musl-tools tcl8.6 tcl8.6-dev tcllib tcl-thread libsqlite3-tcl libpq-dev gcc make libc6-dev
                   mysqltcl) ;;
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
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing ${missing[*]} from Debian's packages" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# HammerDB's CLI, built once: its tree copied, ./bin/tclsh8.6 (which hammerdbcli execs)
# linked to Debian's, and Pgtcl-ng compiled into its lib/pgtcl.
build_hammerdb() {
  local repo src dest tmp
  repo=$(cd "$(dirname "$0")/.." && pwd)
  dest=${FATHOM_HAMMERDB_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/fathom/hammerdb}
  [ -x "$dest/hammerdbcli" ] && [ -f "$dest/lib/pgtcl/pkgIndex.tcl" ] && return 0
  for src in "${FATHOM_HAMMERDB_SRC:-}" "$repo/../shared/tools/hammerdb" /work/shared/tools/hammerdb; do
    [ -n "$src" ] && [ -d "$src/pgtclng" ] && ls -d "$src"/hammerdb-*/ >/dev/null 2>&1 && break
    src=""
  done
  if [ -z "$src" ]; then
    echo "HammerDB's sources not found (FATHOM_HAMMERDB_SRC, ../shared/tools/hammerdb): engine: hammerdb stays unavailable" >&2
    return 0
  fi
  if dpkg-query -W -f='${Status}' libpgtcl 2>/dev/null | grep -q "install ok installed"; then
    echo "warning: Debian's libpgtcl is installed; Tcl may load it instead of Pgtcl-ng (apt-get remove libpgtcl)" >&2
  fi
  echo "building HammerDB's CLI from $src into $dest" >&2
  mkdir -p "$(dirname "$dest")"
  tmp=$(mktemp -d "$dest.build.XXXXXX")
  cp -a "$(ls -d "$src"/hammerdb-*/ | sort -V | tail -1)." "$tmp/"
  mkdir -p "$tmp/bin" "$tmp/lib/pgtcl"
  ln -sf "$(command -v tclsh8.6)" "$tmp/bin/tclsh8.6"
  cp -a "$src/pgtclng" "$tmp/pgtclng-build"
  if ! ( cd "$tmp/pgtclng-build" && ./configure --with-tcl=/usr/lib/tcl8.6 \
        --with-postgres-include="$(pg_config --includedir)" --with-postgres-lib="$(pg_config --libdir)" \
        && make ) >"$tmp/pgtclng-build.log" 2>&1; then
    echo "building Pgtcl-ng failed: see $tmp/pgtclng-build.log" >&2
    exit 1
  fi
  cp "$tmp"/pgtclng-build/libpgtcl*.so "$tmp/pgtclng-build/pkgIndex.tcl" "$tmp/lib/pgtcl/"
  rm -rf "$tmp/pgtclng-build" "$tmp/pgtclng-build.log"
  local got
  got=$(echo 'puts "[package require Pgtcl] [llength [info commands pg_notice_handler]]"' | TCLLIBPATH="$tmp/lib" tclsh8.6)
  case "$got" in
    *" 1") ;;
    *) echo "Tcl loads Pgtcl '$got', not Pgtcl-ng with pg_notice_handler (apt-get remove libpgtcl?)" >&2; exit 1 ;;
  esac
  rm -rf "$dest"
  mv "$tmp" "$dest"
  echo "HammerDB's CLI is at $dest/hammerdbcli" >&2
}

# HammerDB's MariaDB workload loads the package `mariatcl`, which is neither in its
# sources nor in Debian: it is mysqltcl (Debian's is built against MariaDB Connector/C)
# with its commands renamed. This writes a package of that name into the CLI's lib/ that
# loads mysqltcl and gives each of its commands the name HammerDB calls (mysqlexec is
# mariaexec, mysql::sel is maria::sel, the array mysqlstatus is mariastatus).
write_mariatcl() {
  local dest=${FATHOM_HAMMERDB_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/fathom/hammerdb}
  [ -x "$dest/hammerdbcli" ] || return 0
  [ -f "$dest/lib/mariatcl/mariatcl.tcl" ] && return 0
  mkdir -p "$dest/lib/mariatcl"
  cat >"$dest/lib/mariatcl/mariatcl.tcl" <<'TCL'
# mariatcl for HammerDB's MariaDB workload, written by fathom's scripts/install-deps.sh:
# mysqltcl's commands under the names HammerDB's scripts call.
package require mysqltcl
foreach command [info commands ::mysql*] {
    if {[string match ::mysql::* $command]} { continue }
    interp alias {} ::maria[string range $command 7 end] {} $command
}
namespace eval ::maria {}
foreach command [info commands ::mysql::*] {
    interp alias {} ::maria::[namespace tail $command] {} $command
}
unset command
upvar #0 mysqlstatus mariastatus
package provide mariatcl [package present mysqltcl]
TCL
  local version
  version=$(echo 'puts [package require mysqltcl]' | tclsh8.6)
  echo "package ifneeded mariatcl $version [list source [file join \$dir mariatcl.tcl]]" >"$dest/lib/mariatcl/pkgIndex.tcl"
  local got
  got=$(echo 'puts "[package require mariatcl] [llength [info commands ::maria::sel]] [llength [info commands mariaexec]]"' \
    | TCLLIBPATH="$dest/lib" tclsh8.6 2>&1) || true
  if [ "$got" != "$version 1 1" ]; then
    rm -rf "$dest/lib/mariatcl"
    echo "HammerDB's mariatcl (over mysqltcl $version) does not load: '$got'" >&2
    exit 1
  fi
}

if [ "$purpose" = test ]; then
  build_hammerdb
  write_mariatcl
fi
exit 0
