# The two commands a newcomer needs: `make run` and `make test` (see README.md).
CARGO ?= cargo
FATHOM := target/release/fathom

.PHONY: build run check test bench

build:
	scripts/install-deps.sh run
	$(CARGO) build --release --locked

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

# Formatting, lints, the code's shape (scripts/shape.py: layers, circles, file sizes), unit
# and integration tests (those run the real binary, all in one test binary). The tests run
# one per core, as cargo's default: at twice that, on two busy cores, runs asked for 1000
# IOPS achieved 500 and the fidelity tests failed, rightly.
test:
	scripts/install-deps.sh test
	$(CARGO) fmt --all -- --check
	python3 scripts/shape.py --strict
	$(CARGO) clippy --all-targets --locked -- -D warnings
	$(CARGO) test --locked

# fathom and fio side by side on identical jobs (see bench/README.md).
bench: build
	scripts/install-deps.sh bench
	python3 bench/vs-fio.py
