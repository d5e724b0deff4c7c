# fathom's image: the static build (musl: SQLite and io_uring inside, no C library needed)
# on a small Debian, with fio and PostgreSQL's client for the drivers that use them.
# Build it from the same commit as the fathom that controls the run (the agent protocol
# refuses another build):  docker build -t registry.example.com/fathom:$(git rev-parse --short HEAD) .
# Used by deploy/kubernetes/ (a Job that benchmarks a PersistentVolumeClaim, and a
# DaemonSet of agents for runs over many nodes).
FROM rust:1-bookworm AS build
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends musl-tools && rm -rf /var/lib/apt/lists/*
RUN rustup target add x86_64-unknown-linux-musl
WORKDIR /src
COPY . .
RUN cargo build --release --locked --target x86_64-unknown-linux-musl

FROM debian:bookworm-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends fio postgresql-client ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/x86_64-unknown-linux-musl/release/fathom /usr/local/bin/fathom
RUN useradd --create-home --uid 10001 fathom
WORKDIR /home/fathom
ENTRYPOINT ["fathom"]
CMD ["--help"]
