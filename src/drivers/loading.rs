//! Loading a database of any DBMS with fathom's tables: in parallel sessions, once per
//! run for the workloads that ask the same of it, and never into a database holding
//! tables that are not fathom's.

use super::client::{Client, INTERRUPTED};
use crate::error::{Error, Result};
use crate::terminal::Meter;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

/// What this run loaded into which database: workloads that share a database, and ask
/// the same of it, load it once; the later ones take the first one's figures.
pub struct Loads<T>(Vec<(String, T)>);

impl<T> Default for Loads<T> {
    fn default() -> Self {
        Loads(Vec::new())
    }
}

impl<T: Clone> Loads<T> {
    /// Whether anything was loaded into `dsn` yet (its room was checked then).
    pub fn holds(&self, dsn: &str) -> bool {
        self.0.iter().any(|(d, _)| d == dsn)
    }

    /// What `dsn` was loaded with, where `same` says it is what is asked; else what
    /// `load` gives, kept for the next workload.
    pub fn once(&mut self, dsn: &str, same: impl Fn(&T) -> bool, load: impl FnOnce() -> Result<T>) -> Result<T> {
        if let Some((_, done)) = self.0.iter().find(|(d, t)| d == dsn && same(t)) {
            return Ok(done.clone());
        }
        let done = load()?;
        self.0.push((dsn.to_string(), done.clone()));
        Ok(done)
    }
}

/// Sessions a load runs at once: one per core, at most 8.
pub fn sessions() -> u32 {
    std::thread::available_parallelism().map_or(2, |n| n.get() as u32).clamp(1, 8)
}

/// How often [`parallel`] ticks its meter.
const TICK: Duration = Duration::from_millis(100);

/// Runs `run` on each of `jobs` in `sessions` threads at once, each thread with what
/// `open` gives it before its first job (its session with the server); the first error
/// stops the others' next jobs. Meanwhile this thread calls `tick` a few times a second
/// (a [`Meter`](crate::terminal::Meter) saying how far the load is).
pub fn parallel<T: Sync, S>(
    jobs: &[T],
    sessions: u32,
    stop: &AtomicBool,
    tick: &dyn Fn(),
    open: impl Fn() -> Result<S> + Sync,
    run: impl Fn(&mut S, &T) -> Result<()> + Sync,
) -> Result<()> {
    let streams = sessions.max(1);
    let ended = AtomicU32::new(0);
    let next = AtomicU32::new(0);
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let halt = AtomicBool::new(false);
    let fail = |e: Error| {
        halt.store(true, Ordering::Relaxed);
        failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
    };
    std::thread::scope(|scope| {
        for _ in 0..streams {
            scope.spawn(|| {
                let mut state = None;
                while !halt.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                    let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed) as usize) else { break };
                    let opened = match state.take() {
                        Some(s) => Ok(s),
                        None => open(),
                    };
                    match opened.and_then(|mut s| run(&mut s, job).map(|()| s)) {
                        Ok(s) => state = Some(s),
                        Err(e) => fail(e),
                    }
                }
                ended.fetch_add(1, Ordering::Relaxed);
            });
        }
        while ended.load(Ordering::Relaxed) < streams {
            std::thread::sleep(TICK);
            tick();
        }
    });
    if stop.load(Ordering::Relaxed) {
        return Err(Error::failed(INTERRUPTED));
    }
    failed.into_inner().unwrap_or_else(|p| p.into_inner()).map_or(Ok(()), Err)
}

/// A script of one statement a line (comments aside) as jobs for [`metered`], each
/// weighing one: a load's keys and indexes.
pub fn lines_of(script: &str) -> Vec<(String, u64)> {
    let statements = script.lines().filter(|l| !l.starts_with("--") && !l.trim().is_empty());
    statements.map(|l| (l.to_string(), 1)).collect()
}

/// Runs each of `jobs` (a statement and its weight: the rows it loads) in `sessions`
/// sessions that `open` gives, each kept for its share; a meter named `what` counts
/// the weight done and `progress` hears how far it is.
pub fn metered(
    what: &str,
    jobs: &[(String, u64)],
    sessions: u32,
    stop: &AtomicBool,
    progress: &dyn Fn(&str),
    open: impl Fn() -> Result<Client> + Sync,
) -> Result<()> {
    let meter = Meter::new(what, jobs.iter().map(|(_, weight)| weight).sum());
    let run = |c: &mut Client, (sql, weight): &(String, u64)| {
        c.run(sql, stop)?;
        meter.add(*weight);
        Ok(())
    };
    parallel(jobs, sessions, stop, &|| meter.tick(progress), open, run)
}

/// Refuses workload `name`'s database at `dsn` when it holds `foreign` tables, which are
/// not `kind`'s (TPC-C's), of any DBMS.
pub fn only_ours(name: &str, dsn: &str, kind: &str, foreign: &[String]) -> Result<()> {
    if foreign.is_empty() {
        return Ok(());
    }
    Err(Error::failed(format!(
        "{name}: the database of `{dsn}` holds tables that are not {kind}'s ({}): fathom loads its tables into a \
         database of their own and never drops others' (give an empty database)",
        foreign.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_session_is_opened_once_for_all_its_jobs_and_an_error_stops_the_rest() {
        let (opened, ran) = (AtomicU32::new(0), AtomicU32::new(0));
        let jobs: Vec<u32> = (0..40).collect();
        let open = || Ok(opened.fetch_add(1, Ordering::Relaxed));
        let run = |_: &mut u32, _: &u32| {
            ran.fetch_add(1, Ordering::Relaxed);
            Ok(())
        };
        parallel(&jobs, 3, &AtomicBool::new(false), &|| {}, open, run).unwrap();
        assert_eq!(ran.load(Ordering::Relaxed), 40);
        assert!(opened.load(Ordering::Relaxed) <= 3, "{} sessions for 3 streams", opened.load(Ordering::Relaxed));
        // a failed job ends its session: the next jobs of every stream are not run
        let ran = AtomicU32::new(0);
        let fail = |_: &mut (), job: &u32| {
            ran.fetch_add(1, Ordering::Relaxed);
            if *job == 0 { Err(Error::failed("no")) } else { Ok(()) }
        };
        let failed = parallel(&jobs, 1, &AtomicBool::new(false), &|| {}, || Ok(()), fail);
        assert_eq!(failed.unwrap_err().to_string(), "no");
        assert_eq!(ran.load(Ordering::Relaxed), 1);
    }
}
