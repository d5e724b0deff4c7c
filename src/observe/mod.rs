//! What fathom observes besides its own IOs: the environment of a run, and, per second
//! while it runs, the host's CPU, fathom's own, the devices under the targets, the
//! network interfaces, remote Prometheus queries and the PostgreSQL and MariaDB servers
//! its workloads use. Each observer (an
//! [`Observer`], `seam.rs`) runs on a thread of its own and sends what it sees to the
//! run sink as it goes, so an interrupted run keeps it.

pub mod diskstats;
pub mod environment;
pub mod host;
pub mod mariadb;
pub mod network;
pub mod pglog;
pub mod postgres;
pub mod preflight;
pub mod promql;
pub mod seam;

use crate::error::{Error, Result};
use crate::store::sink::Sink;
pub use seam::{Observer, RunClock};

/// Whether an observed series is a counter (read as its rise per second), as the
/// observer that stores it says: PostgreSQL's statistics views and MariaDB's status hold
/// most, and the network interfaces' are all; the host's CPU and the devices' figures are
/// stored as rates already.
pub fn counter(name: &str) -> bool {
    postgres::counter(name) || mariadb::counter(name) || network::counter(name)
}

/// The help of a database observer's or a network interface's series `family` (its name
/// without labels), which the Prometheus endpoint and the OpenMetrics export serve it
/// with; None for the others (the host's CPU, the devices').
pub fn help(family: &str) -> Option<&'static str> {
    postgres::help(family).or_else(|| mariadb::help(family)).or_else(|| network::help(family))
}
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// The observer threads of a run; `stop` ends and joins them.
pub struct Observers {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Result<()>>>,
}

impl Observers {
    /// Starts each of `observers` on a thread of its own, sending to `sink`.
    pub fn start(sink: &Sink, clock: RunClock, observers: Vec<Box<dyn Observer>>) -> Result<Observers> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for o in observers {
            let (sink, halt) = (sink.clone(), stop.clone());
            let name = o.name();
            let thread = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || o.observe(sink, clock, &halt))
                .map_err(|e| Error::failed(format!("starting the {name} thread: {e}")));
            match thread {
                Ok(t) => threads.push(t),
                Err(e) => {
                    // those started stop with the error
                    let _ = (Observers { stop, threads }).stop();
                    return Err(e);
                }
            }
        }
        Ok(Observers { stop, threads })
    }

    /// Ends the observers after their last full second and waits for them.
    pub fn stop(self) -> Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        let mut first = Ok(());
        for t in self.threads {
            first = first.and(t.join().unwrap_or_else(|_| Err(Error::failed("an observer panicked"))));
        }
        first
    }
}
