//! The bounds on the keys that decide how much a workload asks for (workers, rate,
//! waits, run time), documented in docs/scenarios.md ("Limits"); [`super::budget`]
//! costs the memory what they allow takes.

use std::time::Duration;

/// What IO buffers (and so O_DIRECT sizes) are aligned to: the engine allocates them so
/// (`engine::buffer`), and the budget costs them so.
pub const ALIGN: usize = 4096;

/// Most workers one workload may have, ramps included (`jobs` alone stops at 1024).
pub const MAX_WORKERS: u32 = 4096;
/// Most IOs (or transactions) per second one workload may be asked for: ten times what
/// the fastest single devices do today, and beyond what fathom's own engine issues.
pub const MAX_RATE: f64 = 10_000_000.0;
/// Longest `think_time`: slots that wait longer issue too few IOs to measure.
pub const MAX_THINK_TIME: Duration = Duration::from_secs(3600);
/// Longest a workload may run (its ramp, duration, or a timeline ramp's steps).
pub const MAX_RUN: Duration = Duration::from_secs(30 * 24 * 3600);
