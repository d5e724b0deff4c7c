//! What one counted operation is: the direction of an IO, or what a program counts (a
//! database transaction of some type, bytes sent over the network), named by its program
//! and counted in its unit ([`Throughput`]). fathom's engine issues the fixed ops on its
//! hot path; a program names its own ops, each with its own latency histogram, and
//! every table, chart, export and the Prometheus endpoint shows them by name.

use serde::Serialize;
use std::sync::{LazyLock, RwLock};

/// An op: a small code, the same for every op of that name in this process. The six
/// ops fathom has always had keep the codes the store has always kept for them; other
/// names get codes from [`Op::FIRST_NAMED`] on, which a run records with their names in
/// its store (table `ops`), so a store is read by name, not by this process's codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Op(u16);

/// The ops known to this process, by code: the fixed six, then the named ones in the
/// order they were first asked for. Names are leaked once each: a run has a handful.
static KNOWN: LazyLock<RwLock<Vec<(&'static str, Throughput)>>> = LazyLock::new(|| {
    use Throughput::*;
    let fixed = [("read", Iops), ("write", Iops), ("sync", Iops), ("txn", Tps), ("send", Gbits), ("recv", Gbits)];
    RwLock::new(fixed.to_vec())
});

#[allow(
    non_upper_case_globals,
    reason = "the fixed ops keep the names they had as enum variants, so code reads `Op::Read`"
)]
impl Op {
    pub const Read: Op = Op(0);
    pub const Write: Op = Op(1);
    /// An fsync or fdatasync (`fsync_every`): no bytes, but a latency of its own.
    pub const Sync: Op = Op(2);
    /// A program's transaction of no named type: no bytes; its latency is the program's.
    pub const Txn: Op = Op(3);
    /// Network streams' bytes sent: no per-op latency.
    pub const Send: Op = Op(4);
    /// Network streams' bytes received.
    pub const Recv: Op = Op(5);
    /// The ops fathom's own IO engine issues.
    pub const IO: [Op; 3] = [Op::Read, Op::Write, Op::Sync];
    /// The first code of a named op: codes below it are the fixed ones, in every store.
    pub const FIRST_NAMED: u16 = 6;

    /// The op called `name`, counted in `unit`: the one this process knows by that name,
    /// or a new one. A name is one op whatever unit a later caller gives.
    pub fn named(name: &str, unit: Throughput) -> Op {
        if let Some(op) = Op::find(name) {
            return op;
        }
        let mut known = KNOWN.write().unwrap_or_else(|e| e.into_inner());
        // another thread may have added it meanwhile
        if let Some(i) = known.iter().position(|(n, _)| *n == name) {
            return Op(i as u16);
        }
        known.push((Box::leak(name.to_string().into_boxed_str()), unit));
        Op((known.len() - 1) as u16)
    }

    /// The op called `name`, if this process knows it.
    pub fn find(name: &str) -> Option<Op> {
        let known = KNOWN.read().unwrap_or_else(|e| e.into_inner());
        known.iter().position(|(n, _)| *n == name).map(|i| Op(i as u16))
    }

    /// Every op this process knows, fixed ones first.
    pub fn all() -> Vec<Op> {
        let known = KNOWN.read().unwrap_or_else(|e| e.into_inner());
        (0..known.len()).map(|i| Op(i as u16)).collect()
    }

    /// The op of a code of this process's, if it has one.
    pub fn of_code(code: i64) -> Option<Op> {
        let known = KNOWN.read().unwrap_or_else(|e| e.into_inner());
        usize::try_from(code).ok().filter(|&c| c < known.len()).map(|c| Op(c as u16))
    }

    /// Its code in this process (and in the store, with the run's `ops` table for a
    /// named op).
    pub const fn code(self) -> u16 {
        self.0
    }

    /// Whether it is one of the six fixed ops, whose codes every store shares.
    pub fn is_fixed(self) -> bool {
        self.0 < Op::FIRST_NAMED
    }

    pub fn as_str(self) -> &'static str {
        KNOWN.read().unwrap_or_else(|e| e.into_inner()).get(self.0 as usize).map_or("?", |(n, _)| n)
    }

    /// What its rate is counted in.
    pub fn unit(self) -> Throughput {
        KNOWN.read().unwrap_or_else(|e| e.into_inner()).get(self.0 as usize).map_or(Throughput::Iops, |(_, u)| *u)
    }

    /// Network streams' bytes: counted in bytes only, with no per-op latency.
    pub fn is_network(self) -> bool {
        self.unit() == Throughput::Gbits
    }

    /// The part of a workload's rate (`rate_iops`, a program's `rate`) this op is asked
    /// to carry, given the share of IOs that are reads. A program's named transaction
    /// types share its rate in proportions it does not promise: none is asked a part.
    pub fn rate_share(self, read_share: f64) -> f64 {
        match self {
            Op::Read => read_share,
            Op::Write => 1.0 - read_share,
            Op::Txn => 1.0,
            _ => 0.0,
        }
    }
}

/// What an op's rate is counted in, and so which of its figures were measured: IOs
/// (IOPS, MB/s, a latency per IO), a database's transactions (TPS, and TPM as database
/// people quote it; a latency per transaction, but no bytes fathom counts) or network
/// streams (Gbit/s; iperf3 counts neither ops nor a latency per op). Decided once, by
/// the op, so that the terminal, `fathom runs`, `--json`, the HTML report and export
/// all name a figure by what it is and leave out what was not measured, instead of
/// printing `IOPS` and `0.00 MB/s` for a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Throughput {
    Iops,
    Tps,
    Gbits,
}

impl Throughput {
    /// The rate's name as a reader knows it: `IOPS`, `TPS`, `Gbit/s`.
    pub fn label(self) -> &'static str {
        match self {
            Throughput::Iops => "IOPS",
            Throughput::Tps => "TPS",
            Throughput::Gbits => "Gbit/s",
        }
    }

    /// The rate's key in `--json` and export: `iops`, `tps`, `gbit_per_s`.
    pub fn key(self) -> &'static str {
        match self {
            Throughput::Iops => "iops",
            Throughput::Tps => "tps",
            Throughput::Gbits => "gbit_per_s",
        }
    }

    /// The unit of a [`Throughput::key`], as the store keeps it.
    pub fn from_key(key: &str) -> Option<Throughput> {
        [Throughput::Iops, Throughput::Tps, Throughput::Gbits].into_iter().find(|u| u.key() == key)
    }

    /// The rate in this unit, from ops and megabytes (10^6 bytes) per second.
    pub fn rate(self, ops_per_s: f64, mb_per_s: f64) -> f64 {
        match self {
            Throughput::Iops | Throughput::Tps => ops_per_s,
            Throughput::Gbits => mb_per_s * 8.0 / 1000.0,
        }
    }

    /// True when its ops are counted one by one (IOPS, TPS): network streams are bytes.
    pub fn counts_ops(self) -> bool {
        self != Throughput::Gbits
    }

    /// True when MB/s was measured: a transaction's bytes are not fathom's to count.
    pub fn counts_bytes(self) -> bool {
        self != Throughput::Tps
    }

    /// True when each op has a latency (percentiles, Little's law).
    pub fn has_latency(self) -> bool {
        self != Throughput::Gbits
    }
}
