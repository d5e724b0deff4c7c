//! The throwaway clusters of one run: one per place and settings, each started where
//! its workloads ask (their `target`, else the run's directory), settled before the run
//! clock starts, ended as soon as its workloads are over and another cluster's start,
//! and removed at the run's end.

use super::driver::{RunDir, bad_input};
use super::postgres::{Cluster, UNREACHABLE, psql};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// A throwaway cluster's directory `path`, made new (whatever was planted at its
/// guessable path is neither used nor, on failure, removed), and never on a kernel pseudo
/// file system: a directory made there (a cgroup) is a control, not storage.
fn new_place(path: &Path) -> Result<crate::nofollow::Dir> {
    if let Some(fs) = crate::nofollow::pseudo_fs(path) {
        return Err(Error::failed(format!(
            "{} is on {fs}, one of the kernel's pseudo file systems: its files are the kernel's controls, not storage",
            path.display()
        )));
    }
    crate::nofollow::create_new_dir(path).map_err(|e| Error::failed(format!("{}: {e}", path.display())))
}

/// What makes two workloads' throwaway clusters the same one: their place and settings.
type ClusterKey = (Option<PathBuf>, Vec<(String, String)>);

/// One cluster of a run, and the workloads (by index) it serves.
struct Started {
    key: ClusterKey,
    /// Locked to end it mid-run ([`Clusters::retire`]), while the run holds `&self`.
    cluster: Mutex<Cluster>,
    workloads: Vec<usize>,
}

/// The throwaway clusters of one run, one per place and settings, stopped and removed
/// when dropped or [`Clusters::stop`]ped.
#[derive(Default)]
pub struct Clusters {
    started: Vec<Started>,
}

/// Throwaway clusters this process has started: a run's clusters, whichever driver
/// started them, each get a number of their own.
static CLUSTERS_STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Clusters {
    /// The cluster in `target` (else in `dir`, the run's directory) with `settings`,
    /// started unless this run has it already, for workload `(index, name)`. One that
    /// will not start is bad input, at that workload. `progress` hears that it starts.
    pub fn get(
        &mut self,
        (idx, name): (usize, &str),
        target: &Option<PathBuf>,
        settings: &[(String, String)],
        dir: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<&Cluster> {
        let key = (target.clone(), settings.to_vec());
        let at = match self.started.iter().position(|s| s.key == key) {
            Some(at) => at,
            None => {
                let cluster = Self::start(name, target, settings, dir, stop, progress)?;
                self.started.push(Started { key, cluster: Mutex::new(cluster), workloads: Vec::new() });
                self.started.len() - 1
            }
        };
        let s = &mut self.started[at];
        s.workloads.push(idx);
        Ok(s.cluster.get_mut().unwrap_or_else(PoisonError::into_inner))
    }

    /// A new cluster for workload `name`: in `target`, else in the run's directory `dir`.
    fn start(
        name: &str,
        target: &Option<PathBuf>,
        settings: &[(String, String)],
        dir: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<Cluster> {
        let run = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        // numbered across the run's drivers (tpcc's clusters beside tpch's), never by what
        // is on disk: a name taken already (a link planted there) is refused, not skipped
        let n = CLUSTERS_STARTED.fetch_add(1, Ordering::Relaxed);
        let new = new_place;
        // in the run's directory, made through its descriptor: a symlink at `runs` or
        // `RUN` stops the run before anything is built
        let made = match target {
            Some(t) => new(&t.join(format!("fathom-postgres-run{run}-{n}"))),
            None => RunDir::open(dir).and_then(|d| d.new_dir(&format!("postgres-{n}"))),
        }
        .map_err(|e| bad_input(Error::failed(format!("{name}: {e}"))))?;
        progress(&format!("{name}: starting a throwaway PostgreSQL in {}", made.path().display()));
        let mut cluster = match Cluster::start(made, settings, stop) {
            // the run's directory is behind a private one (fathom runs as root from
            // /root, say): the system's temporary directory is as good a place, the
            // run's directory being no storage under test; a `target` given stays an
            // error
            Err(e) if e.to_string().starts_with(UNREACHABLE) && target.is_none() => {
                let tmp = std::env::temp_dir().join(format!("fathom-postgres-{}-{run}-{n}", std::process::id()));
                progress(&format!("{name}: {e}; using {} instead", tmp.display()));
                new(&tmp).and_then(|made| Cluster::start(made, settings, stop))
            }
            other => other,
        }
        // a cluster that will not start is its settings' or its place's
        .map_err(|e| bad_input(Error::failed(format!("{name}: {e}"))))?;
        cluster.workload = name.to_string();
        Ok(cluster)
    }

    /// A `CHECKPOINT` on each cluster once everything is loaded, so that a cluster
    /// waiting for its workloads writes nothing meanwhile: with no WAL since, its timed
    /// checkpoints are skipped while another cluster is measured.
    pub fn settle(&self, stop: &AtomicBool) -> Result<()> {
        for s in &self.started {
            let dsn = s.cluster.lock().unwrap_or_else(PoisonError::into_inner).dsn("postgres");
            psql(&dsn, "CHECKPOINT", stop)?;
        }
        Ok(())
    }

    /// Ends the servers whose workloads are all `over` (started and ended), before a
    /// workload of another one starts: a cluster left running would go on with its own
    /// autovacuum and checkpoints inside the next one's measured window, and bias an A/B
    /// study of the two. The server ends at once, writing nothing back (the cluster is
    /// thrown away). The workloads each ended server was started for.
    pub fn retire(&self, over: &[usize]) -> Vec<String> {
        let mut ended = Vec::new();
        for s in self.started.iter().filter(|s| s.workloads.iter().all(|w| over.contains(w))) {
            let mut c = s.cluster.lock().unwrap_or_else(PoisonError::into_inner);
            if c.retire() {
                ended.push(c.workload.clone());
            }
        }
        ended
    }

    /// The log of the cluster `dsn` (one of [`Cluster::dsn`]'s) reaches, and its flag
    /// of being retired, if it is one of these.
    fn of_dsn(&self, dsn: &str) -> Option<(PathBuf, Arc<AtomicBool>)> {
        self.started.iter().find_map(|s| {
            let c = s.cluster.lock().unwrap_or_else(PoisonError::into_inner);
            dsn.starts_with(&format!("{} ", c.server())).then(|| (c.log(), c.retired.clone()))
        })
    }

    /// The servers of workloads readied as `(workload, dsn)`, in workload order, each
    /// with its log when it is one of these clusters: what observers watch.
    pub fn servers<'a>(&self, ready: impl Iterator<Item = (usize, &'a str)>) -> Vec<super::driver::PgServer> {
        let server = |(workload, dsn): (usize, &str)| {
            let (log, retired) = self.of_dsn(dsn).unzip();
            super::driver::PgServer { workload, dsn: dsn.to_string(), log, retired }
        };
        let mut servers: Vec<_> = ready.map(server).collect();
        servers.sort_by_key(|s| s.workload);
        servers
    }

    /// Stops every cluster; the first error, if any.
    pub fn stop(&mut self) -> Result<()> {
        let mut first = Ok(());
        for s in self.started.drain(..) {
            if let Err(e) = s.cluster.into_inner().unwrap_or_else(PoisonError::into_inner).stop() {
                first = first.and(Err(e));
            }
        }
        first
    }
}
