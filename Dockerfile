# fathom's image: the static build (musl: SQLite and io_uring inside, no C library needed)
# on a small Debian, with the programs every built-in scenario starts: fio, iperf3,
# PostgreSQL 15 (the server's programs for throwaway clusters, psql, and pgbench, which
# Debian 12 ships in the server's package, not the client's), sysbench, and MariaDB's
# server and client cores (throwaway MariaDB servers; without the full package's Perl,
# Galera and init scripts). HammerDB (`engine: hammerdb`) is not in Debian: none of the
# built-ins needs it.
# It runs as the unprivileged user 10001, named by number so that Kubernetes can check
# `runAsNonRoot` (deploy/kubernetes/ meets the PodSecurity `restricted` level). Under the
# default seccomp profile of Docker and containerd io_uring is blocked: fathom then runs
# its io_uring workloads with psync and says so (docs/hosts.md, "In a container").
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
# No cluster made at install (fathom makes its own, in the run's directory), and no
# question asked (iperf3's, whether to start its daemon: no).
RUN mkdir -p /etc/postgresql-common/createcluster.d \
    && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/fathom.conf \
    && apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
       fio iperf3 postgresql-15 sysbench mariadb-server-core mariadb-client-core ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/x86_64-unknown-linux-musl/release/fathom /usr/local/bin/fathom
RUN useradd --create-home --uid 10001 --user-group fathom
USER 10001:10001
WORKDIR /home/fathom
ENTRYPOINT ["fathom"]
CMD ["--help"]
