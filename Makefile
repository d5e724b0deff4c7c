# The two commands a newcomer needs: `make run` and `make test` (see README.md).
CARGO ?= cargo
FATHOM := target/release/fathom

.PHONY: build run check test bench install static

# Where `make install` puts fathom and its manual pages.
PREFIX ?= /usr/local

build:
	scripts/install-deps.sh run
	$(CARGO) build --release --locked

# The statically linked build (musl): it runs on any x86-64 Linux whatever its C library,
# and `--push-agent` copies it to hosts instead of the build above when it is the same
# commit (see docs/hosts.md).
STATIC_TARGET := x86_64-unknown-linux-musl
STATIC := target/$(STATIC_TARGET)/release/fathom
static:
	scripts/install-deps.sh static
	$(CARGO) build --release --locked --target $(STATIC_TARGET)

# The binary (and the static one, when `make static` built it) and a manual page per
# command, generated from the command line's definition.
install: build
	install -Dm755 $(FATHOM) $(DESTDIR)$(PREFIX)/bin/fathom
	if [ -x $(STATIC) ]; then install -m755 $(STATIC) $(DESTDIR)$(PREFIX)/bin/fathom-static; fi
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	$(FATHOM) man --dir $(DESTDIR)$(PREFIX)/share/man/man1

# The quickstart: 4k random reads at depth 1, 4, 16, 64 on ./fathom-data (about 75 s).
run: build
	$(FATHOM) run

# The inner loop: formatting, the code's shape, lints and the unit tests (seconds, not
# minutes; nothing installed, no real programs run).
check:
	$(CARGO) fmt --all -- --check
	python3 scripts/shape.py --strict
	$(CARGO) clippy --all-targets --locked -- -D warnings
	$(CARGO) test --locked --bin fathom

# How many integration tests share the machine at once. Most of them wait on real
# seconds (a run paced at a rate, a server starting), not on the cores, so several per
# core finish sooner: on two cores the shared tests took 297 s 8 at once, 250 s 12 at
# once, 252 s 16 at once (the cores full from 12 on). A test that judges a rate or a time
# holds the machine alone (`Scratch::alone`, in its file's `alone` module), or with one
# other light one (`Scratch::paired`), and those run last.
INTEGRATION_THREADS ?= 12

# Formatting, the code's shape (scripts/shape.py: layers, circles, file sizes), the supply
# chain, lints, unit and integration tests (those run the real binary, all in one test
# binary), with the steps that do not wait for each other side by side (scripts/test.sh).
test:
	CARGO=$(CARGO) INTEGRATION_THREADS=$(INTEGRATION_THREADS) scripts/test.sh

# fathom and fio side by side on identical jobs (see bench/README.md).
bench: build
	scripts/install-deps.sh bench
	python3 bench/vs-fio.py
