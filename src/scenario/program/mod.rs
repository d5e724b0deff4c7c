//! Programs a workload can name with `driver:` instead of fathom's IO engine, each in
//! one model file behind the seam in [`seam`], listed once in [`PROGRAMS`]. A program's
//! runner lives in `crate::drivers`, listed there once; no other file names it.

pub mod dbms;
pub mod iperf3;
pub mod pgbench;
pub mod seam;
#[cfg(test)]
pub mod sleep;
pub mod sysbench;
pub mod tpcc;
pub mod tpch;

pub use seam::{Keys, Measures, Program, ProgramSpec};

/// Every program, by name: the one list a new program's model joins.
pub const PROGRAMS: &[&dyn Program] = &[
    &pgbench::PgbenchProgram,
    &iperf3::Iperf3Program,
    &tpcc::TpccProgram,
    &tpch::TpchProgram,
    &sysbench::SysbenchProgram,
];

/// Programs of the test build only ([`sleep`], the skeleton a new program copies).
#[cfg(test)]
const TEST_PROGRAMS: &[&dyn Program] = &[&sleep::SleepProgram];
#[cfg(not(test))]
const TEST_PROGRAMS: &[&dyn Program] = &[];

/// Every program this build has.
pub fn all() -> impl Iterator<Item = &'static dyn Program> {
    PROGRAMS.iter().chain(TEST_PROGRAMS).copied()
}

/// The program called `name`, or by one of its aliases.
pub fn find(name: &str) -> Option<&'static dyn Program> {
    all().find(|p| p.name() == name || p.aliases().contains(&name))
}

/// The names of every program, for messages (`driver: one of ...`).
pub fn names() -> Vec<&'static str> {
    all().map(|p| p.name()).collect()
}
