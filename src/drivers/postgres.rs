//! PostgreSQL for the drivers that run on it (pgbench, tpcc, tpch): finding its
//! programs, a throwaway cluster (the embedded default: `initdb` in the run's directory,
//! started on a private loopback port with `pg_ctl`, stopped and removed when the run
//! ends), and the SQL calls they make with `psql`, loads in parallel sessions and rows
//! piped into `COPY` among them.
//!
//! PostgreSQL refuses to run as root. When fathom runs as root, the cluster's programs
//! run as the `postgres` system user (Debian's package creates it), which then owns the
//! cluster's directory.

use super::driver::{RunDir, bad_input};
use crate::children::{self, Tracked};
use crate::error::{Error, Result};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Where PostgreSQL's server programs are: `initdb` on the PATH, else `pg_config
/// --bindir`, else the newest `/usr/lib/postgresql/N/bin` (Debian keeps them there, off
/// the PATH).
pub fn bindir() -> Result<PathBuf> {
    if let Some(dir) = on_path("initdb") {
        return Ok(dir);
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("initdb").exists() {
            return Ok(dir);
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin): &(u32, PathBuf)| bin.join("initdb").exists())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(|| {
        Error::failed(
            "`driver: pgbench` without a `dsn` starts a throwaway PostgreSQL, but initdb was not found \
         (install PostgreSQL: apt-get install postgresql, or give a `dsn`)",
        )
    })
}

/// The directory on the PATH that holds `program`.
fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).find(|dir| dir.join(program).is_file())
}

/// A client program (`pgbench`, `psql`): from the PATH (Debian's wrappers), else next
/// to the server's programs.
pub fn client(program: &str) -> Result<PathBuf> {
    if let Some(dir) = on_path(program) {
        return Ok(dir.join(program));
    }
    let dir =
        bindir().map_err(|_| Error::failed(format!("{program} not found: install PostgreSQL's client programs")))?;
    Ok(dir.join(program))
}

/// The installed pgbench's version line, or why it cannot be run.
pub fn pgbench_version() -> Result<String> {
    let path = client("pgbench")?;
    let out = Command::new(&path).arg("--version").output().map_err(|e| {
        Error::failed(format!("`driver: pgbench` runs pgbench ({}), which could not be started: {e}", path.display()))
    })?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A PostgreSQL program's check before anything is recorded: pgbench installed, and
/// `connect` (each `dsn` reached), as bad input; a wait `stop` ended is
/// [`Error::Interrupted`].
pub fn check(stop: &AtomicBool, connect: impl FnOnce() -> Result<()>) -> Result<()> {
    pgbench_version().map_err(bad_input)?;
    connect().map_err(|e| match stop.load(Ordering::Relaxed) {
        true => Error::Interrupted,
        false => bad_input(e),
    })
}

/// The user the cluster's programs run as: ourselves, or `postgres` when we are root.
#[derive(Clone, Copy)]
struct RunAs {
    uid: u32,
    gid: u32,
}

fn run_as() -> Result<Option<RunAs>> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let name = c"postgres";
    // SAFETY: getpwnam returns a pointer into static storage or null; read at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        return Err(Error::failed(
            "PostgreSQL does not run as root and there is no `postgres` user to run it as \
             (Debian's postgresql package creates one), or give a `dsn`",
        ));
    }
    // SAFETY: pw is non-null and points at a valid passwd entry.
    let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
    Ok(Some(RunAs { uid, gid }))
}

/// How an error of [`Cluster::start`] begins when the `postgres` user cannot reach the
/// directory (a parent such as /root is private).
pub const UNREACHABLE: &str = "PostgreSQL runs as the postgres user";

/// The first ancestor of `dir` (and its mode) that `u` cannot search, if any.
fn unreachable_by(dir: &Path, u: RunAs) -> Option<(PathBuf, u32)> {
    use std::os::unix::fs::MetadataExt;
    dir.ancestors().skip(1).find_map(|a| {
        let m = std::fs::metadata(a).ok()?;
        let mode = m.mode();
        let searchable =
            (m.uid() == u.uid && mode & 0o100 != 0) || (m.gid() == u.gid && mode & 0o010 != 0) || mode & 0o001 != 0;
        (!searchable).then(|| (a.to_path_buf(), mode & 0o7777))
    })
}

/// Why a server with `settings` would not start, from its log `text`: PostgreSQL's own
/// errors, each without the log line's time and pid, led by the setting they are
/// about. An error that names no setting (`huge_pages = on` on a machine with no huge
/// pages reserved fails to map its shared memory) is led by the setting known to cause
/// it, else by every setting given. None when the log says nothing of it.
fn refused(settings: &[(String, String)], text: &str) -> Option<String> {
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("FATAL") || l.contains("LOG:  invalid") || l.contains("ERROR"))
        .map(|l| ["FATAL:", "ERROR:", "LOG:"].iter().find_map(|k| l.find(k).map(|at| &l[at..])).unwrap_or(l))
        .collect();
    if errors.is_empty() {
        return None;
    }
    let said = errors.join(" / ");
    let set = |k: &str| settings.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    if settings.is_empty() || settings.iter().any(|(k, _)| said.contains(&format!("\"{k}\""))) {
        return Some(said);
    }
    if said.contains("shared memory") && set("huge_pages") == Some("on") {
        let reserved = crate::meminfo::count("HugePages_Total").unwrap_or(0);
        return Some(format!(
            "huge_pages = on, and this machine has {reserved} huge pages reserved (HugePages_Total in \
             /proc/meminfo; reserve them with the vm.nr_hugepages sysctl, enough for shared_buffers): {said}"
        ));
    }
    let all: Vec<String> = settings.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    Some(format!("with the settings {}: {said}", all.join(", ")))
}

/// A PostgreSQL cluster of fathom's own, running until dropped.
pub struct Cluster {
    pub dir: PathBuf,
    pub port: u16,
    bin: PathBuf,
    user: Option<RunAs>,
    running: bool,
    /// The server (pg_ctl starts it in a session of its own), known to the signal
    /// handler and the store while it runs.
    postmaster: Option<Tracked>,
}

/// What a throwaway cluster sets so that the run can observe it: IO timing in the
/// statistics views, and checkpoints and autovacuum runs in its log, each line stamped
/// with Unix time in ms (read by `observe::pglog`). A workload's own `settings` come
/// after these and win.
pub const OBSERVED: &[(&str, &str)] = &[
    ("track_io_timing", "on"),
    ("track_wal_io_timing", "on"),
    ("log_checkpoints", "on"),
    ("log_autovacuum_min_duration", "0"),
    ("log_line_prefix", "%n [%p] "),
];

/// What [`Cluster::start`] says when `stop` was set while it waited.
pub const INTERRUPTED: &str = "interrupted";

/// The superuser of a throwaway cluster.
pub const SUPERUSER: &str = "fathom";

impl Cluster {
    /// Creates a cluster in `made`, a directory just made new (whatever was planted
    /// at its guessable path is neither used nor, on failure, removed), with
    /// `settings` in its postgresql.conf, and starts it on a free loopback port. Errors
    /// carry PostgreSQL's own message (from initdb, or the server's log); `stop` set
    /// while it waits ends it with [`INTERRUPTED`].
    pub fn start(made: crate::nofollow::Dir, settings: &[(String, String)], stop: &AtomicBool) -> Result<Cluster> {
        let dir = made.path();
        let started = Self::create(dir, settings, stop);
        if started.is_err() {
            // the server's log stays to read; the cluster's files go
            let _ = std::fs::remove_dir_all(dir.join("data"));
        }
        started
    }

    fn create(dir: &Path, settings: &[(String, String)], stop: &AtomicBool) -> Result<Cluster> {
        let bin = bindir()?;
        let user = run_as()?;
        // absolute: the programs run in the cluster's directory
        let dir = &dir.canonicalize().map_err(|e| Error::failed(format!("{}: {e}", dir.display())))?;
        if let Some(u) = user {
            if let Some(closed) = unreachable_by(dir, u) {
                let _ = std::fs::remove_dir(dir);
                return Err(Error::failed(format!(
                    "{UNREACHABLE}: {} is not searchable by it (mode {:o}), so it cannot reach {}",
                    closed.0.display(),
                    closed.1,
                    dir.display()
                )));
            }
            chown(dir, u)?;
        }
        let mut cluster = Cluster { dir: dir.to_path_buf(), port: 0, bin, user, running: false, postmaster: None };
        let data = cluster.data();
        let mut initdb = cluster.command("initdb");
        initdb.args(["-A", "trust", "-U", SUPERUSER, "-E", "UTF8", "--no-instructions", "-D"]).arg(&data);
        let out = children::output(&mut initdb, "initdb", stop)
            .map_err(|e| Error::failed(format!("starting initdb: {e}")))?
            .ok_or(Error::failed(INTERRUPTED))?;
        if !out.status.success() {
            return Err(Error::failed(format!("initdb failed: {}", last_lines(&out, 5))));
        }
        let mut conf = String::from("\n# fathom: a throwaway cluster on loopback only\n");
        conf.push_str("listen_addresses = '127.0.0.1'\nunix_socket_directories = ''\n");
        for (key, value) in OBSERVED.iter().map(|(k, v)| (k.to_string(), v.to_string())).chain(settings.to_vec()) {
            conf.push_str(&format!("{key} = '{}'\n", value.replace('\'', "''")));
        }
        // a port taken between choosing and binding it: choose again
        for attempt in 0..3 {
            cluster.port = free_port()?;
            let port_line = format!("port = {}\n", cluster.port);
            // the data directory belongs to the server's user: nothing in it is followed
            crate::nofollow::write(&data.join("fathom.conf"), format!("{conf}{port_line}"))
                .map_err(|e| Error::failed(format!("{}: {e}", data.display())))?;
            if attempt == 0 {
                append(&data.join("postgresql.conf"), "include = 'fathom.conf'\n")?;
            }
            if let Some(u) = user {
                chown(&data.join("fathom.conf"), u)?;
            }
            let log = cluster.log();
            let mut pg_ctl = cluster.command("pg_ctl");
            pg_ctl.args(["-w", "-t", "60", "-D"]).arg(&data).arg("-l").arg(&log).arg("start");
            // from here a server may run: stop() stops it, whatever happens
            cluster.running = true;
            let Some(out) = children::output(&mut pg_ctl, "pg_ctl", stop)
                .map_err(|e| Error::failed(format!("starting pg_ctl: {e}")))?
            else {
                return Err(Error::failed(INTERRUPTED));
            };
            if out.status.success() {
                cluster.postmaster = cluster.postmaster_pid().map(|pid| Tracked::new(pid, "postgres"));
                return Ok(cluster);
            }
            cluster.running = false;
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if !text.contains("could not bind") && !text.contains("already in use") {
                let msg = refused(settings, &text).unwrap_or_else(|| last_lines(&out, 5));
                return Err(Error::failed(format!("PostgreSQL did not start: {msg} (log: {})", log.display())));
            }
        }
        Err(Error::failed("PostgreSQL did not start: no free port on 127.0.0.1 after 3 tries"))
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The server's pid, from the first line of its postmaster.pid.
    fn postmaster_pid(&self) -> Option<i32> {
        std::fs::read_to_string(self.data().join("postmaster.pid")).ok()?.lines().next()?.trim().parse().ok()
    }

    /// A command for one of the server's programs, as the cluster's user.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(self.bin.join(program));
        c.stdin(Stdio::null());
        if let Some(u) = self.user {
            c.uid(u.uid).gid(u.gid);
            // the postgres user may not be able to read our working directory
            c.current_dir(&self.dir);
        }
        c
    }

    /// The server's log.
    pub fn log(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// Connection string for `database` as the cluster's superuser.
    pub fn dsn(&self, database: &str) -> String {
        format!("host=127.0.0.1 port={} user={SUPERUSER} dbname={database}", self.port)
    }

    /// Creates `database` unless it exists, a copy of `template` if given (its files
    /// copied: no WAL is written for it).
    pub fn create_database(&self, database: &str, template: Option<&str>, stop: &AtomicBool) -> Result<()> {
        let admin = self.dsn("postgres");
        let exists = psql(&admin, &format!("SELECT count(*) FROM pg_database WHERE datname = '{database}'"), stop)?;
        if exists != "0" {
            return Ok(());
        }
        let from = template.map(|t| format!(" TEMPLATE {t} STRATEGY FILE_COPY")).unwrap_or_default();
        psql(&admin, &format!("CREATE DATABASE {database}{from}"), stop).map(|_| ())
    }

    /// Stops the server and removes the cluster. Immediate shutdown: open sessions
    /// are ended and nothing is written back, the cluster being thrown away (a fast
    /// shutdown's checkpoint after `pgbench -i` takes seconds).
    pub fn stop(&mut self) -> Result<()> {
        if self.running {
            self.running = false;
            let out = self
                .command("pg_ctl")
                .args(["-w", "-t", "60", "-m", "immediate", "-D"])
                .arg(self.data())
                .arg("stop")
                .output()
                .map_err(|e| Error::failed(format!("starting pg_ctl: {e}")))?;
            // not started after all (pg_ctl interrupted before it started the server)
            let none = String::from_utf8_lossy(&out.stderr).contains("PID file") && self.postmaster_pid().is_none();
            if !out.status.success() && !none {
                return Err(Error::failed(format!("stopping PostgreSQL: {}", last_lines(&out, 3))));
            }
            self.postmaster = None;
        }
        std::fs::remove_dir_all(&self.dir).map_err(|e| Error::failed(format!("removing {}: {e}", self.dir.display())))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // a failure here has nowhere to go but stderr; stop() reports it when called
        if self.running
            && let Err(e) = self.stop()
        {
            crate::terminal::say(&format!("warning: {e}"));
        }
    }
}

/// What makes two workloads' throwaway clusters the same one: their place and settings.
type ClusterKey = (Option<PathBuf>, Vec<(String, String)>);

/// The throwaway clusters of one run, one per place and settings, stopped and removed
/// when dropped or [`Clusters::stop`]ped.
#[derive(Default)]
pub struct Clusters {
    started: Vec<(ClusterKey, Cluster)>,
}

/// Throwaway clusters this process has started: a run's clusters, whichever driver
/// started them, each get a number of their own.
static CLUSTERS_STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Clusters {
    /// The cluster in `target` (else in `dir`, the run's directory) with `settings`,
    /// started unless this run has it already. One that will not start is bad input,
    /// at workload `name`. `progress` hears that it starts.
    pub fn get(
        &mut self,
        name: &str,
        target: &Option<PathBuf>,
        settings: &[(String, String)],
        dir: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<&Cluster> {
        let key = (target.clone(), settings.to_vec());
        if let Some(i) = self.started.iter().position(|(k, _)| *k == key) {
            return Ok(&self.started[i].1);
        }
        let run = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        // numbered across the run's drivers (tpcc's clusters beside tpch's), never by what
        // is on disk: a name taken already (a link planted there) is refused, not skipped
        let n = CLUSTERS_STARTED.fetch_add(1, Ordering::Relaxed);
        let new = |path: &Path| {
            crate::nofollow::create_new_dir(path).map_err(|e| Error::failed(format!("{}: {e}", path.display())))
        };
        // in the run's directory, made through its descriptor: a symlink at `runs` or
        // `RUN` stops the run before anything is built
        let made = match target {
            Some(t) => new(&t.join(format!("fathom-postgres-run{run}-{n}"))),
            None => RunDir::open(dir).and_then(|d| d.new_dir(&format!("postgres-{n}"))),
        }
        .map_err(|e| bad_input(Error::failed(format!("{name}: {e}"))))?;
        progress(&format!("{name}: starting a throwaway PostgreSQL in {}", made.path().display()));
        let cluster = match Cluster::start(made, settings, stop) {
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
        self.started.push((key, cluster));
        Ok(&self.started[self.started.len() - 1].1)
    }

    /// The log of the cluster `dsn` (one of [`Cluster::dsn`]'s) reaches, if it is one
    /// of these.
    fn log_of(&self, dsn: &str) -> Option<PathBuf> {
        let reaches = |c: &Cluster| dsn.starts_with(&format!("host=127.0.0.1 port={} ", c.port));
        self.started.iter().map(|(_, c)| c).find(|c| reaches(c)).map(Cluster::log)
    }

    /// The servers of workloads readied as `(workload, dsn)`, in workload order, each
    /// with its log when it is one of these clusters: what observers watch.
    pub fn servers<'a>(&self, ready: impl Iterator<Item = (usize, &'a str)>) -> Vec<super::driver::PgServer> {
        let server = |(workload, dsn): (usize, &str)| super::driver::PgServer {
            workload,
            dsn: dsn.to_string(),
            log: self.log_of(dsn),
        };
        let mut servers: Vec<_> = ready.map(server).collect();
        servers.sort_by_key(|s| s.workload);
        servers
    }

    /// Stops every cluster; the first error, if any.
    pub fn stop(&mut self) -> Result<()> {
        let mut first = Ok(());
        for (_, mut c) in self.started.drain(..) {
            if let Err(e) = c.stop() {
                first = first.and(Err(e));
            }
        }
        first
    }
}

/// How long libpq may take to open a session (`connect_timeout`, given as
/// PGCONNECT_TIMEOUT unless the environment or the dsn says): a server that accepts the
/// connection and never answers would otherwise hold fathom forever.
pub const CONNECT_TIMEOUT_S: u64 = 10;

/// How long a question fathom asks a server for itself ([`ask`]) may take, its session
/// opened included.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// How long a question goes unanswered before fathom says what it waits for.
const SAY_WAITING: Duration = Duration::from_secs(2);

/// `cmd`, a program that connects with libpq (psql, pgbench, HammerDB), with its
/// sessions' opening bounded by [`CONNECT_TIMEOUT_S`], and named
/// ([`application_name`]) so that this process's sessions can be told from others'.
pub fn connect_bounded(cmd: &mut Command) -> &mut Command {
    if std::env::var_os("PGCONNECT_TIMEOUT").is_none() {
        cmd.env("PGCONNECT_TIMEOUT", CONNECT_TIMEOUT_S.to_string());
    }
    if std::env::var_os("PGAPPNAME").is_none() {
        cmd.env("PGAPPNAME", application_name());
    }
    cmd
}

/// The `application_name` of this process's sessions (unless the dsn or PGAPPNAME
/// gives one).
fn application_name() -> String {
    format!("fathom-{}", std::process::id())
}

/// Runs `sql` with psql against `dsn`; its output (unaligned, tuples only), or
/// PostgreSQL's own error message. Killed when `stop` is set; its session's opening is
/// bounded, the statement (a load's, which takes what it takes) is not.
pub fn psql(dsn: &str, sql: &str, stop: &AtomicBool) -> Result<String> {
    run_psql(dsn, sql, None, stop)
}

/// [`psql`] for a question fathom asks a server for itself (a check, a size, a record
/// of a load), `what` naming it: bounded by [`ANSWER_WITHIN`] whatever the server
/// does, and said on the terminal once it has waited a couple of seconds.
pub fn ask(dsn: &str, sql: &str, what: &str, stop: &AtomicBool) -> Result<String> {
    run_psql(dsn, sql, Some(what), stop)
}

fn run_psql(dsn: &str, sql: &str, what: Option<&str>, stop: &AtomicBool) -> Result<String> {
    let mut cmd = Command::new(client("psql")?);
    cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", sql]).stdin(Stdio::null());
    let server = crate::secrets::dsn_server(dsn);
    let deadline = what.map(|_| Instant::now() + ANSWER_WITHIN);
    let waiting = what.map(|what| format!("waiting for the server at {server} to answer ({what})"));
    let out = crate::terminal::said_if_slow(SAY_WAITING, waiting, || {
        children::output_until(connect_bounded(&mut cmd), "psql", stop, deadline)
    })
    .map_err(|e| Error::failed(format!("starting psql: {e}")))?
    .ok_or(Error::failed(INTERRUPTED))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    let about = what.map(|w| format!(" ({w})")).unwrap_or_default();
    if deadline.is_some_and(|d| Instant::now() >= d) {
        let within = ANSWER_WITHIN.as_secs();
        return Err(Error::failed(format!("the server at {server} did not answer within {within} s{about}")));
    }
    let said = last_lines(&out, 5);
    if said.contains("timeout expired") {
        return Err(Error::failed(format!(
            "the server at {server} did not open a session within {CONNECT_TIMEOUT_S} s{about}: it accepted no \
             connection, or accepted it and never answered ({said})"
        )));
    }
    Err(Error::failed(said))
}

/// Pipes what `write` writes into psql running `sql` against `dsn` (a `COPY ... FROM
/// STDIN`): the rows cross from the client without a file between. PostgreSQL's own error
/// if it refuses them; `stop` set kills psql and ends it with [`INTERRUPTED`]. The rows
/// are written on a thread of their own while this one waits on psql, so a stop ends a
/// writer blocked on a full pipe (a busy server reads slowly) by killing its reader.
pub fn copy_in(
    dsn: &str,
    sql: &str,
    stop: &AtomicBool,
    write: impl FnOnce(&mut dyn Write) -> Result<()> + Send,
) -> Result<()> {
    let mut cmd = Command::new(client("psql")?);
    connect_bounded(&mut cmd).args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", sql]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut group =
        children::Group::spawn(&mut cmd, "psql").map_err(|e| Error::failed(format!("starting psql: {e}")))?;
    let stderr = group.stderr();
    let said = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = stderr {
            let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
        }
        text
    });
    let stdin = group.stdin();
    let (waited, written) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || match stdin {
            Some(stdin) => {
                let mut pipe = Stoppable { inner: std::io::BufWriter::with_capacity(1 << 20, stdin), stop };
                write(&mut pipe).and_then(|()| pipe.flush().map_err(|e| Error::failed(e.to_string())))
            }
            None => Err(Error::failed("psql's input was not a pipe")),
        });
        let waited = group.wait_stopping(None, None, &|| stop.load(Ordering::Relaxed));
        (waited, writer.join().unwrap_or_else(|_| Err(Error::failed("writing the rows panicked"))))
    });
    let (status, stopped) = waited.map_err(|e| Error::failed(format!("waiting for psql: {e}")))?;
    let said = said.join().unwrap_or_default();
    if stopped {
        return Err(Error::failed(INTERRUPTED));
    }
    match (status.success(), written) {
        (true, Ok(())) => Ok(()),
        // psql's own message says more than the broken pipe it left
        (false, _) if !said.trim().is_empty() => Err(Error::failed(said.trim().replace('\n', " / "))),
        (false, Ok(())) => Err(Error::failed(format!("psql exited with {status}"))),
        (_, Err(e)) => Err(e),
    }
}

/// A pipe that fails once `stop` is set, so that what generates a table into COPY ends
/// with the run instead of writing the table to its end first.
struct Stoppable<'a, W: Write> {
    inner: W,
    stop: &'a AtomicBool,
}

impl<W: Write> Write for Stoppable<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(std::io::Error::other(INTERRUPTED));
        }
        self.inner.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

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

/// Runs `run` on each of `jobs` in `sessions` threads at once; the first error stops the
/// others' next jobs.
pub fn parallel<T: Sync>(
    jobs: &[T],
    sessions: u32,
    stop: &AtomicBool,
    run: impl Fn(&T) -> Result<()> + Sync,
) -> Result<()> {
    let next = AtomicU32::new(0);
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let halt = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..sessions.max(1) {
            scope.spawn(|| {
                while !halt.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                    let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed) as usize) else { return };
                    if let Err(e) = run(job) {
                        halt.store(true, Ordering::Relaxed);
                        failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                    }
                }
            });
        }
    });
    if stop.load(Ordering::Relaxed) {
        return Err(Error::failed(INTERRUPTED));
    }
    failed.into_inner().unwrap_or_else(|p| p.into_inner()).map_or(Ok(()), Err)
}

/// Runs each of `jobs` (one SQL statement) against `dsn` in one of `sessions` sessions
/// at once; the first error stops the others' next jobs.
pub fn statements(dsn: &str, jobs: &[String], sessions: u32, stop: &AtomicBool) -> Result<()> {
    parallel(jobs, sessions, stop, |job| psql(dsn, job, stop).map(|_| ()))
}

/// Runs `fill`, which loads fathom's tables into `dsn`'s database. Into the user's
/// database (`users`: a `dsn`), a load that fails or is stopped (a signal) is undone:
/// this process's statements still running there are ended (the server runs one on
/// after its psql is gone, holding the locks a drop waits for), then `drop` (SQL) drops
/// what it created, so the server is left as it was found. A throwaway cluster's is
/// thrown away whole: nothing to undo, and an interrupt's seconds are not spent on it.
pub fn filled_or_dropped(dsn: &str, users: bool, drop: &str, fill: impl FnOnce() -> Result<()>) -> Result<()> {
    let filled = fill();
    if filled.is_err() && users {
        let end = format!(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() \
             AND pid <> pg_backend_pid() AND application_name = '{}';\n{drop}",
            application_name()
        );
        let _ = ask(dsn, &end, "undoing a load that did not end", &AtomicBool::new(false));
    }
    filled
}

/// The tables of `dsn`'s database that are not fathom's: a database holding any is
/// someone else's, never to be dropped. Tables of `ours`' names (in schema `public`)
/// are fathom's only beside its record of the load, `ours`' last: an `orders` table
/// alone is someone's.
pub fn foreign_tables(dsn: &str, ours: &[&str], stop: &AtomicBool) -> Result<Vec<String>> {
    let marker = ours.last().copied().unwrap_or_default();
    let names: Vec<String> = ours.iter().map(|t| format!("'{t}'")).collect();
    let sql = format!(
        "SELECT string_agg(table_schema || '.' || table_name, ' ' ORDER BY 1) FROM information_schema.tables \
         WHERE table_schema NOT IN ('pg_catalog', 'information_schema') \
         AND NOT (table_schema = 'public' AND table_name IN ({}) AND EXISTS (SELECT FROM information_schema.tables \
         WHERE table_schema = 'public' AND table_name = '{marker}'))",
        names.join(", ")
    );
    let found = ask(dsn, &sql, "checking for tables that are not fathom's", stop)?;
    Ok(found.split_whitespace().map(str::to_string).collect())
}

/// Reaches `dsn` and refuses its database if it holds tables not fathom's
/// ([`foreign_tables`]): fathom loads `kind`'s tables into a database of their own and
/// never drops others'.
pub fn own_database(name: &str, dsn: &str, ours: &[&str], kind: &str, stop: &AtomicBool) -> Result<()> {
    let foreign = foreign_tables(dsn, ours, stop).map_err(|e| Error::failed(format!("{name}: `{dsn}`: {e}")))?;
    if foreign.is_empty() {
        return Ok(());
    }
    Err(Error::failed(format!(
        "{name}: the database of `{dsn}` holds tables that are not {kind}'s ({}): fathom loads its tables into a \
         database of their own and never drops others' (give an empty database)",
        foreign.join(", ")
    )))
}

/// The size of `dsn`'s database in bytes.
pub fn database_size(dsn: &str, stop: &AtomicBool) -> Result<f64> {
    let bytes = ask(dsn, "SELECT pg_database_size(current_database())", "reading the database's size", stop)?;
    bytes.parse().map_err(|_| Error::failed(format!("the database's size is not a number: `{bytes}`")))
}

/// A program's last lines of stderr (else stdout), joined: what it said when it failed.
pub fn last_lines(out: &Output, n: usize) -> String {
    let text = if out.stderr.is_empty() { &out.stdout } else { &out.stderr };
    let text = String::from_utf8_lossy(text);
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(n)..].join(" / ");
    if tail.is_empty() { format!("exited with {}", out.status) } else { tail }
}

fn free_port() -> Result<u16> {
    let l =
        std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| Error::failed(format!("finding a free port: {e}")))?;
    l.local_addr().map(|a| a.port()).map_err(|e| Error::failed(format!("finding a free port: {e}")))
}

/// Appends to a file of the server's data directory, never through a symlink (its owner
/// could have put one there for root to follow).
fn append(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| Error::failed(format!("{}: {e}", path.display())))?;
    f.write_all(text.as_bytes()).map_err(|e| Error::failed(format!("{}: {e}", path.display())))
}

/// lchown: a symlink swapped in by the server's user is changed itself, not followed.
fn chown(path: &Path, u: RunAs) -> Result<()> {
    std::os::unix::fs::lchown(path, Some(u.uid), Some(u.gid))
        .map_err(|e| Error::failed(format!("chown {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_refused_start_names_the_setting_with_postgresqls_words() {
        let set = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let log = "2026-11-27 08:34:02.229 UTC [26244] FATAL:  could not map anonymous shared memory: Cannot \
                   allocate memory\n2026-11-27 08:34:02.229 UTC [26244] HINT:  This error usually means ...\n";
        let said = refused(&set(&[("shared_buffers", "1GB"), ("huge_pages", "on")]), log).unwrap();
        assert!(said.starts_with("huge_pages = on, and this machine has "), "{said}");
        assert!(said.ends_with("): FATAL:  could not map anonymous shared memory: Cannot allocate memory"), "{said}");
        // the server names the setting itself: its words alone
        let log = "2026-11-27 08:00:00 UTC [1] LOG:  invalid value for parameter \"wal_level\": \"lots\"\n";
        let said = refused(&set(&[("wal_level", "lots")]), log).unwrap();
        assert_eq!(said, "LOG:  invalid value for parameter \"wal_level\": \"lots\"");
        // an error that names none: every setting given leads it
        let said = refused(&set(&[("max_connections", "9"), ("work_mem", "4MB")]), "x FATAL:  no").unwrap();
        assert_eq!(said, "with the settings max_connections = 9, work_mem = 4MB: FATAL:  no");
        assert_eq!(refused(&[], "LOG:  database system is shut down"), None);
    }

    #[test]
    fn a_private_parent_is_found() {
        let base = std::env::temp_dir().join(format!("fathom-reach-{}", std::process::id()));
        let inner = base.join("open/cluster");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::set_permissions(base.join("open"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        // someone who owns none of it: the ancestors must be searchable by all
        let stranger = RunAs { uid: 54_321, gid: 54_321 };
        let open = unreachable_by(&inner, stranger);
        // (a private directory further up, such as /root, would show here too)
        assert!(open.is_none() || !open.as_ref().unwrap().0.starts_with(&base), "{open:?}");
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(unreachable_by(&inner, stranger), Some((base.clone(), 0o700)));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
