//! The throwaway database servers of one run, whatever their DBMS ([`Throwaway`]: a
//! PostgreSQL cluster, a MariaDB server): one per place and settings, each started where
//! its workloads ask (their `target`, else the run's directory), settled before the run
//! clock starts, ended as soon as its workloads are over and another server's start,
//! and removed at the run's end.

use super::driver::{DbServer, RunDir, bad_input};
use super::pg_host::{RunAs, chown, unreachable_by};
use super::postgres::Cluster;
use crate::error::{Error, Result};
use crate::scenario::program::seam::ServerDirs;
use std::os::unix::fs::PermissionsExt;
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

/// A database server fathom starts in a directory of its own and throws away with it:
/// what [`Clusters`] needs of each DBMS's.
pub trait Throwaway: Sized {
    /// The DBMS, for messages (`PostgreSQL`).
    const DBMS: &'static str;
    /// What its directories are called (`postgres`: `fathom-postgres-runN-K`).
    const DIR: &'static str;

    /// Creates a server in `made`, a directory just made new, its transaction log in
    /// `apart`'s log directory (another, on the log's own disk) when given and room for
    /// tables in each of its table directories, with `settings`, and starts it; `stop`
    /// set while it waits ends it with an error.
    fn start(
        made: crate::nofollow::Dir,
        apart: Apart,
        settings: &[(String, String)],
        stop: &AtomicBool,
    ) -> Result<Self>;
    /// Whether `e`, from [`Throwaway::start`], says the server's OS user cannot reach
    /// its directory.
    fn unreachable(e: &Error) -> bool;
    /// The workload it was started for, which names it when it dies.
    fn workload(&self) -> &str;
    fn set_workload(&mut self, name: &str);
    /// Writes what loading dirtied, so that it writes nothing while another server's
    /// workloads are measured.
    fn settle(&self, stop: &AtomicBool) -> Result<()>;
    /// Ends the server before the run's end, once: whether it ran until now.
    fn retire(&mut self) -> bool;
    /// Stops the server and removes its directory; an error says how it died, if it did.
    fn stop(&mut self) -> Result<()>;
}

/// A throwaway server's directories on disks of their own, each just made new: its
/// transaction log's, and one for tables on each table disk (`table_targets`).
#[derive(Default)]
pub struct Apart {
    pub log: Option<crate::nofollow::Dir>,
    pub tables: Vec<crate::nofollow::Dir>,
}

impl Apart {
    /// Removes the directories, made and never used (a server that did not start).
    fn remove(&self) {
        for d in self.log.iter().chain(&self.tables) {
            let _ = std::fs::remove_dir(d.path());
        }
    }
}

/// Where a throwaway server lives, made ready for it by [`place`].
pub struct Place {
    /// Its directory, absolute (its programs run in it).
    pub dir: PathBuf,
    /// The directory of its socket: `dir`, or one of its own in the system's temporary
    /// directory when `dir` is too deep for the socket's path.
    pub socket_dir: PathBuf,
    /// The directory of its transaction log, absolute, when it has one apart.
    pub log: Option<PathBuf>,
    /// Its directories for tables, absolute, one per table disk.
    pub tables: Vec<PathBuf>,
    /// The directories recorded with the run until removed, for the next run to remove
    /// should this fathom die first.
    pub left: Vec<crate::children::Leftover>,
}

/// The longest path of a Unix socket (`sun_path`, less its NUL).
const SOCKET_PATH_MAX: usize = 107;

/// Readies `dir`, a directory just made new, and `apart`'s (the same, for its transaction
/// log and its tables), for a server run as `user` (when root runs fathom): recorded with
/// the run, made private to that user, who must be able to reach them (`unreachable`
/// begins the error that says it cannot, which [`Throwaway::unreachable`] recognises). Its socket
/// `socket` (the file's name) goes in `dir`, or, where that path would be too long, in a
/// private directory `fathom-DIR-PID-socket-UNIQUE` of the system's temporary directory.
pub fn place(
    dir: &Path,
    apart: &Apart,
    user: Option<RunAs>,
    unreachable: &str,
    socket: &str,
    (kind, unique): (&str, &str),
) -> Result<Place> {
    let failed = |d: &Path, e: std::io::Error| Error::failed(format!("{}: {e}", d.display()));
    let private =
        |d: &Path| std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).map_err(|e| failed(d, e));
    let mut left = Vec::new();
    let mut ready = |dir: &Path| -> Result<PathBuf> {
        let dir = dir.canonicalize().map_err(|e| failed(dir, e))?;
        left.push(crate::children::Leftover::new(&dir));
        private(&dir)?;
        if let Some(u) = user {
            if let Some((closed, mode)) = unreachable_by(&dir, u) {
                let _ = std::fs::remove_dir(&dir);
                return Err(Error::failed(format!(
                    "{unreachable}: {} is not searchable by it (mode {mode:o}), so it cannot reach {}",
                    closed.display(),
                    dir.display()
                )));
            }
            chown(&dir, u)?;
        }
        Ok(dir)
    };
    let dir = ready(dir)?;
    let log = apart.log.as_ref().map(|l| ready(l.path())).transpose()?;
    let tables = apart.tables.iter().map(|t| ready(t.path())).collect::<Result<Vec<_>>>()?;
    let mut socket_dir = dir.clone();
    if dir.join(socket).as_os_str().len() > SOCKET_PATH_MAX {
        socket_dir = std::env::temp_dir().join(format!("fathom-{kind}-{}-socket-{unique}", std::process::id()));
        crate::nofollow::create_new_dir(&socket_dir).map_err(|e| failed(&socket_dir, e))?;
        left.push(crate::children::Leftover::new(&socket_dir));
        private(&socket_dir)?;
        if let Some(u) = user {
            chown(&socket_dir, u)?;
        }
    }
    Ok(Place { dir, socket_dir, log, tables, left })
}

/// A throwaway server's log, made new (never through a symlink), and a second handle of
/// it: its standard output and error.
pub fn server_log(path: &Path) -> Result<(std::fs::File, std::fs::File)> {
    use std::os::unix::fs::OpenOptionsExt;
    let failed = |e: std::io::Error| Error::failed(format!("{}: {e}", path.display()));
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create_new(true)
        .mode(0o640)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(failed)?;
    let err = file.try_clone().map_err(failed)?;
    Ok((file, err))
}

/// What makes two workloads' throwaway servers the same one: their places (data, log)
/// and settings.
type ClusterKey = (ServerDirs, Vec<(String, String)>);

/// One server of a run, and the workloads (by index) it serves.
struct Started<S> {
    key: ClusterKey,
    /// Locked to end it mid-run ([`Clusters::retire`]), while the run holds `&self`.
    cluster: Mutex<S>,
    workloads: Vec<usize>,
}

/// The throwaway servers of one run, one per place and settings, stopped and removed
/// when dropped or [`Clusters::stop`]ped.
pub struct Clusters<S = Cluster> {
    started: Vec<Started<S>>,
}

impl<S> Default for Clusters<S> {
    fn default() -> Self {
        Clusters { started: Vec::new() }
    }
}

/// Throwaway clusters this process has started: a run's clusters, whichever driver
/// started them, each get a number of their own.
static CLUSTERS_STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl<S: Throwaway> Clusters<S> {
    /// The server in `dirs` (its data else in `dir`, the run's directory; its log apart
    /// when given) with `settings`, started unless this run has it already, for workload
    /// `(index, name)`. One that will not start is bad input, at that workload.
    /// `progress` hears that it starts.
    pub fn get(
        &mut self,
        (idx, name): (usize, &str),
        dirs: &ServerDirs,
        settings: &[(String, String)],
        dir: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<&S> {
        let key = (dirs.clone(), settings.to_vec());
        let at = match self.started.iter().position(|s| s.key == key) {
            Some(at) => at,
            None => {
                let cluster = Self::start(name, dirs, settings, dir, stop, progress)?;
                self.started.push(Started { key, cluster: Mutex::new(cluster), workloads: Vec::new() });
                self.started.len() - 1
            }
        };
        let s = &mut self.started[at];
        s.workloads.push(idx);
        Ok(s.cluster.get_mut().unwrap_or_else(PoisonError::into_inner))
    }

    /// The server already started for workload `idx` ([`Clusters::get`]), if any.
    pub fn serving(&mut self, idx: usize) -> Option<&S> {
        let s = self.started.iter_mut().find(|s| s.workloads.contains(&idx))?;
        Some(s.cluster.get_mut().unwrap_or_else(PoisonError::into_inner))
    }

    /// A new cluster for workload `name`: in `dirs`' data directory, else in the run's
    /// directory `dir`, its log in a directory of its own under `dirs`' log directory,
    /// and its tables in one of its own under each of `dirs`' table directories.
    fn start(
        name: &str,
        dirs: &ServerDirs,
        settings: &[(String, String)],
        dir: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<S> {
        let run = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        // numbered across the run's drivers (tpcc's clusters beside tpch's), never by what
        // is on disk: a name taken already (a link planted there) is refused, not skipped
        let n = CLUSTERS_STARTED.fetch_add(1, Ordering::Relaxed);
        let new = new_place;
        // in the run's directory, made through its descriptor: a symlink at `runs` or
        // `RUN` stops the run before anything is built
        let made = match &dirs.data {
            Some(t) => new(&t.join(format!("fathom-{}-run{run}-{n}", S::DIR))),
            None => RunDir::open(dir).and_then(|d| d.new_dir(&format!("{}-{n}", S::DIR))),
        }
        .map_err(|e| bad_input(Error::failed(format!("{name}: {e}"))))?;
        let new_apart = |again: &str| -> Result<Apart> {
            let named = |l: &PathBuf, what: &str| new(&l.join(format!("fathom-{}-{what}-run{run}-{n}{again}", S::DIR)));
            let fail = |e: Error| bad_input(Error::failed(format!("{name}: {e}")));
            let mut apart = Apart {
                log: dirs.log.as_ref().map(|l| named(l, "log")).transpose().map_err(fail)?,
                ..Apart::default()
            };
            for t in &dirs.tables {
                match named(t, "tables") {
                    Ok(made) => apart.tables.push(made),
                    Err(e) => {
                        apart.remove();
                        return Err(fail(e));
                    }
                }
            }
            Ok(apart)
        };
        let apart = new_apart("")?;
        let first: Vec<PathBuf> = apart.log.iter().chain(&apart.tables).map(|d| d.path().to_path_buf()).collect();
        let mut said = apart.log.as_ref().map(|l| format!(", its log in {}", l.path().display())).unwrap_or_default();
        let tables: Vec<String> = apart.tables.iter().map(|t| t.path().display().to_string()).collect();
        if !tables.is_empty() {
            said.push_str(&format!(", its tables in {}", tables.join(", ")));
        }
        progress(&format!("{name}: starting a throwaway {} in {}{said}", S::DBMS, made.path().display()));
        let target = &dirs.data;
        let mut cluster = match S::start(made, apart, settings, stop) {
            // the run's directory is behind a private one (fathom runs as root from
            // /root, say): the system's temporary directory is as good a place, the
            // run's directory being no storage under test; a `target` given stays an
            // error
            Err(e) if S::unreachable(&e) && target.is_none() => {
                let tmp = std::env::temp_dir().join(format!("fathom-{}-{}-{run}-{n}", S::DIR, std::process::id()));
                progress(&format!("{name}: {e}; using {} instead", tmp.display()));
                // the first log and table directories were made, and never used
                for d in &first {
                    let _ = std::fs::remove_dir(d);
                }
                let apart = new_apart(&format!("-{}", std::process::id()))?;
                new(&tmp).and_then(|made| S::start(made, apart, settings, stop))
            }
            other => other,
        }
        // a cluster that will not start is its settings' or its place's
        .map_err(|e| bad_input(Error::failed(format!("{name}: {e}"))))?;
        cluster.set_workload(name);
        Ok(cluster)
    }

    /// Settles each server once everything is loaded ([`Throwaway::settle`]), so that
    /// a server waiting for its workloads writes nothing while another is measured.
    pub fn settle(&self, stop: &AtomicBool) -> Result<()> {
        for s in &self.started {
            s.cluster.lock().unwrap_or_else(PoisonError::into_inner).settle(stop)?;
        }
        Ok(())
    }

    /// Ends the servers whose workloads are all `over` (started and ended), before a
    /// workload of another one starts: a cluster left running would go on with its own
    /// autovacuum and checkpoints inside the next one's measured window, and bias an A/B
    /// study of the two. The server ends at once, writing nothing back (the cluster is
    /// thrown away). Each ended server, said as the workload it was started for and its
    /// DBMS (`w1: its throwaway MariaDB`).
    pub fn retire(&self, over: &[usize]) -> Vec<String> {
        let mut ended = Vec::new();
        for s in self.started.iter().filter(|s| s.workloads.iter().all(|w| over.contains(w))) {
            let mut c = s.cluster.lock().unwrap_or_else(PoisonError::into_inner);
            if c.retire() {
                ended.push(format!("{}: its throwaway {}", c.workload(), S::DBMS));
            }
        }
        ended
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

/// The throwaway servers of a driver that runs on either DBMS (sysbench, HammerDB's):
/// one set per DBMS, settled, retired, listed and stopped together.
#[derive(Default)]
pub struct Servers {
    pub postgres: Clusters<Cluster>,
    pub mariadb: Clusters<super::mariadb::Server>,
}

impl Servers {
    pub fn settle(&self, stop: &AtomicBool) -> Result<()> {
        self.postgres.settle(stop)?;
        self.mariadb.settle(stop)
    }

    /// Stops every server; the first error, if any.
    pub fn stop(&mut self) -> Result<()> {
        let postgres = self.postgres.stop();
        postgres.and(self.mariadb.stop())
    }

    pub fn retire(&self, over: &[usize]) -> Vec<String> {
        let mut ended = self.postgres.retire(over);
        ended.extend(self.mariadb.retire(over));
        ended
    }

    /// The servers of workloads readied on PostgreSQL as `(workload, dsn)` and on
    /// MariaDB as `(workload, conn)`, which the run observes.
    pub fn servers<'a>(
        &self,
        postgres: impl Iterator<Item = (usize, &'a str)>,
        mariadb: impl Iterator<Item = (usize, &'a super::mariadb::Conn)>,
    ) -> Vec<DbServer> {
        let mut all = self.postgres.servers(postgres);
        all.extend(self.mariadb.servers(mariadb));
        all
    }
}

impl Clusters<Cluster> {
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
    pub fn servers<'a>(&self, ready: impl Iterator<Item = (usize, &'a str)>) -> Vec<DbServer> {
        let server = |(workload, dsn): (usize, &str)| {
            let (log, retired) = self.of_dsn(dsn).unzip();
            DbServer::Postgres(super::driver::PgServer { workload, dsn: dsn.to_string(), log, retired })
        };
        let mut servers: Vec<_> = ready.map(server).collect();
        servers.sort_by_key(DbServer::workload);
        servers
    }
}

impl Clusters<super::mariadb::Server> {
    /// The servers of workloads readied as `(workload, conn)`, in workload order, each
    /// with its flag of being retired when it is one of these: what observers watch.
    pub fn servers<'a>(&self, ready: impl Iterator<Item = (usize, &'a super::mariadb::Conn)>) -> Vec<DbServer> {
        let retired = |conn: &super::mariadb::Conn| {
            self.started.iter().find_map(|s| {
                let server = s.cluster.lock().unwrap_or_else(PoisonError::into_inner);
                (conn.socket.is_some() && server.conn(&conn.database).socket == conn.socket)
                    .then(|| server.retired.clone())
            })
        };
        let mut servers: Vec<_> = ready
            .map(|(workload, conn)| {
                DbServer::Mariadb(super::driver::MariadbServer {
                    workload,
                    at: conn.server_key(),
                    client: conn.client_args(),
                    retired: retired(conn),
                })
            })
            .collect();
        servers.sort_by_key(DbServer::workload);
        servers
    }
}
