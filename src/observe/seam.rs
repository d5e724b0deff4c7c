//! The seam every observer implements: the host and its devices (`host.rs`), remote
//! Prometheus queries (`promql.rs`), PostgreSQL (`postgres.rs`). The run session builds
//! the ones a run needs and [`super::Observers`] runs each on a thread of its own, so a
//! new observer is a file and the line that builds it (see docs/architecture.md, "An
//! observer").

use crate::error::Result;
use crate::store::sink::Sink;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Second 0 of the run clock, as an instant and in Unix milliseconds (for what is
/// stamped in wall-clock time, such as a server's log).
#[derive(Debug, Clone, Copy)]
pub struct RunClock {
    pub start: Instant,
    pub unix_ms: i64,
}

/// What watches something around the workloads while a run measures.
pub trait Observer: Send {
    /// Its thread's name.
    fn name(&self) -> &'static str;

    /// Observes until `stop` is set, sending what it sees (observations, events) to
    /// `sink` as it goes, so an interrupted run keeps it. An error ends the run's
    /// observing with it; what merely fails to answer is said and let go.
    fn observe(self: Box<Self>, sink: Sink, clock: RunClock, stop: &AtomicBool) -> Result<()>;
}
