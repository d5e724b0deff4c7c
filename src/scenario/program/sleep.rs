//! `driver: sleep`, a program that exists only in the test build: each of its `sleepers`
//! does one transaction every `every_ms` milliseconds, doing nothing, a `nap` and a
//! `snore` in turn: two ops named by their program, each with its latency. It proves the
//! program seam end to end, and it is the skeleton to copy for a new program: this
//! model file, its runner (`crate::drivers::sleep`), and one line in each registry.

use super::seam::{Keys, Measures, Program, ProgramSpec, Spec};
use crate::error::Result;
use crate::metrics::Op;
use crate::metrics::summary::Throughput;
use serde::Serialize;
use std::any::Any;

pub struct SleepProgram;

/// Its transaction types, in the order a sleeper does them.
pub const OPS: [&str; 2] = ["nap", "snore"];

/// `driver: sleep`'s settings, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sleep {
    /// Its workers.
    pub sleepers: u32,
    /// Milliseconds between one sleeper's transactions.
    pub every_ms: u32,
}

impl Program for SleepProgram {
    fn name(&self) -> &'static str {
        "sleep"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["sleepers", "every_ms"]
    }

    fn concurrency(&self) -> &'static [&'static str] {
        &["sleepers"]
    }

    fn settles(&self) -> &'static str {
        "nothing settles in a program that sleeps"
    }

    fn check(&self, keys: &Keys) -> Result<ProgramSpec> {
        let (sleepers, _) = keys.count("sleepers", 1, 64)?;
        let (every_ms, _) = keys.count("every_ms", 100, 60_000)?;
        Ok(ProgramSpec::new(Sleep { sleepers, every_ms }))
    }
}

impl Spec for Sleep {
    fn program(&self) -> &'static dyn Program {
        &SleepProgram
    }

    fn workers(&self) -> u32 {
        self.sleepers
    }

    fn stored(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        v["driver"] = "sleep".into();
        v
    }

    fn measures(&self) -> Measures {
        let ops = OPS.iter().map(|name| Op::named(name, Throughput::Tps)).collect();
        Measures { unit: Throughput::Tps, ops, latency: true, mb_per_s: false, rate: false }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
