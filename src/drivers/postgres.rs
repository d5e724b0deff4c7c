//! PostgreSQL for the drivers that run on it (pgbench, tpcc, tpch): finding its
//! programs, a throwaway cluster (the embedded default: `initdb` in the run's directory,
//! its server fathom's child on a private Unix socket that only fathom's OS user may
//! enter, stopped and removed when the run ends), and the SQL calls they make with
//! `psql`, loads in parallel sessions and rows piped into `COPY` among them.
//!
//! PostgreSQL refuses to run as root. When fathom runs as root, the cluster's programs
//! run as the `postgres` system user (Debian's package creates it), which then owns the
//! cluster's directory.

use super::client::{Client, INTERRUPTED};
use super::driver::bad_input;
use super::loading::only_ours;
use super::pg_host::{RunAs, append, chown, conn_value, free_port, os_user, refused, run_as};
use crate::children;
use crate::coprocess::SENTINEL;
use crate::error::{Error, Result};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
    connect().map_err(|e| super::driver::bad_input_unless(stop, e))
}

/// How an error of [`Cluster::start`] begins when the `postgres` user cannot reach the
/// directory (a parent such as /root is private).
pub const UNREACHABLE: &str = "PostgreSQL runs as the postgres user";

/// A PostgreSQL cluster of fathom's own, running until dropped. Only fathom's own
/// processes enter it: the server listens on no TCP port, only on a Unix socket in a
/// directory its user alone can reach (mode 0700, the socket 0700 too), and admits
/// only fathom's OS user (peer authentication, its map naming the roles fathom uses),
/// so no other local user can log in as its superuser and run commands as its OS user
/// (`COPY ... TO PROGRAM`). No password exists to keep or leak.
pub struct Cluster {
    pub dir: PathBuf,
    /// The directory of its WAL (`pg_wal` in it), on the log's own disk, when apart.
    log: Option<PathBuf>,
    /// The directories of its tablespaces, one per table disk ([`Cluster::tablespaces`]).
    tables: Vec<PathBuf>,
    pub port: u16,
    /// The directory of the server's socket: the cluster's, or one of its own in the
    /// system's temporary directory when that path is too long for a socket's.
    socket: PathBuf,
    bin: PathBuf,
    user: Option<RunAs>,
    /// The workload it was started for, which names it when it dies.
    pub(super) workload: String,
    /// Set when fathom ends the server before the run does (its workloads are over and
    /// another cluster's start): its observer then stops without an error.
    pub retired: Arc<AtomicBool>,
    /// How the server had died, when it was found dead on being retired.
    died: Option<String>,
    /// The server, fathom's child leading a process group of its own (never re-parented
    /// to init), known to the signal handler and the store while it runs.
    postmaster: Option<children::Group>,
    /// The directories recorded with the run until removed, for the next run to remove
    /// should this fathom die first; empty once they are removed.
    left: Vec<children::Leftover>,
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

/// The superuser of a throwaway cluster.
pub const SUPERUSER: &str = "fathom";

/// The role HammerDB builds its schema as and its virtual users log in as.
pub const SCHEMA_OWNER: &str = "tpcc";

impl Cluster {
    /// Creates a cluster in `made`, a directory just made new (whatever was planted at
    /// its guessable path is neither used nor, on failure, removed: see [`new_place`]),
    /// with `settings` in its postgresql.conf, its WAL in `apart`'s log directory and a
    /// tablespace in each of its table directories, and starts it. Errors carry
    /// PostgreSQL's own message (from initdb, or the server's log); `stop` set while it
    /// waits ends it with [`INTERRUPTED`].
    pub fn start(
        made: crate::nofollow::Dir,
        apart: super::throwaway::Apart,
        settings: &[(String, String)],
        stop: &AtomicBool,
    ) -> Result<Cluster> {
        let mut cluster = Self::made(made.path(), &apart)?;
        let started = cluster.init(settings, stop).and_then(|()| cluster.serve(settings, stop));
        match started.and_then(|()| cluster.make_tablespaces(stop)) {
            Ok(()) => Ok(cluster),
            Err(e) => {
                // the server's log stays to read; the cluster's files go, its WAL's and
                // tables' too
                cluster.end();
                let _ = std::fs::remove_dir_all(cluster.data());
                for apart in cluster.log.iter().chain(&cluster.tables) {
                    let _ = crate::nofollow::remove_tree(apart);
                }
                cluster.remove_socket_dir();
                cluster.left.clear();
                Err(e)
            }
        }
    }

    /// The cluster of the new directory `dir` (its WAL and tablespaces in `apart`'s new
    /// directories, when given): made private to the server's user, and recorded with the
    /// run.
    fn made(dir: &Path, apart: &super::throwaway::Apart) -> Result<Cluster> {
        let bin = bindir()?;
        let user = run_as()?;
        let port = free_port()?;
        let socket = format!(".s.PGSQL.{port}");
        let place = super::throwaway::place(dir, apart, user, UNREACHABLE, &socket, ("postgres", &port.to_string()))?;
        let super::throwaway::Place { dir, socket_dir: socket, log, tables, left } = place;
        let retired = Arc::new(AtomicBool::new(false));
        Ok(Cluster {
            dir,
            log,
            tables,
            port,
            socket,
            bin,
            user,
            workload: String::new(),
            retired,
            died: None,
            postmaster: None,
            left,
        })
    }

    /// initdb, and the settings: the workload's, those the run observes by, and who may
    /// enter (`fathom_hba.conf`, `fathom_ident.conf`).
    fn init(&mut self, settings: &[(String, String)], stop: &AtomicBool) -> Result<()> {
        let data = self.data();
        let mut initdb = self.command("initdb");
        initdb.args(["--auth-local=peer", "--auth-host=reject", "-U", SUPERUSER, "-E", "UTF8", "--no-instructions"]);
        initdb.arg("-D").arg(&data);
        if let Some(log) = &self.log {
            initdb.arg(format!("--waldir={}", log.join("pg_wal").display()));
        }
        let out = children::output(&mut initdb, "initdb", stop)
            .map_err(|e| Error::failed(format!("starting initdb: {e}")))?
            .ok_or(Error::failed(INTERRUPTED))?;
        if !out.status.success() {
            return Err(Error::failed(format!("initdb failed: {}", last_lines(&out, 5))));
        }
        let me = os_user()?;
        let ident: String = [SUPERUSER, SCHEMA_OWNER].iter().map(|role| format!("fathom {me} {role}\n")).collect();
        let quoted = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "''"));
        let mut conf = String::from("\n# fathom: a throwaway cluster only fathom's OS user enters\n");
        conf.push_str(&format!(
            "listen_addresses = ''\nunix_socket_directories = {}\nunix_socket_permissions = 0700\nport = {}\n\
             hba_file = {}\nident_file = {}\n",
            quoted(&self.socket),
            self.port,
            quoted(&data.join("fathom_hba.conf")),
            quoted(&data.join("fathom_ident.conf"))
        ));
        for (key, value) in OBSERVED.iter().map(|(k, v)| (k.to_string(), v.to_string())).chain(settings.to_vec()) {
            // quoted as the server reads it back: `\` escapes in a quoted value
            conf.push_str(&format!("{key} = '{}'\n", value.replace('\\', "\\\\").replace('\'', "''")));
        }
        let files = [
            ("fathom.conf", conf),
            ("fathom_hba.conf", "local all all peer map=fathom\n".to_string()),
            ("fathom_ident.conf", ident),
        ];
        for (name, text) in files {
            // the data directory belongs to the server's user: nothing in it is followed
            crate::nofollow::write(&data.join(name), text)
                .map_err(|e| Error::failed(format!("{}: {e}", data.display())))?;
            if let Some(u) = self.user {
                chown(&data.join(name), u)?;
            }
        }
        append(&data.join("postgresql.conf"), "include = 'fathom.conf'\n")
    }

    /// Starts the server as fathom's child, its output into the log, and waits until it
    /// accepts connections (its postmaster.pid says `ready`, as pg_ctl waits for).
    fn serve(&mut self, settings: &[(String, String)], stop: &AtomicBool) -> Result<()> {
        let log = self.log();
        let (file, err) = super::throwaway::server_log(&log)?;
        let mut server = self.command("postgres");
        server.arg("-D").arg(self.data()).stdout(file).stderr(err);
        let group = children::Group::spawn(&mut server, "postgres")
            .map_err(|e| Error::failed(format!("starting postgres: {e}")))?;
        let pid = group.id().to_string();
        let pid_file = self.data().join("postmaster.pid");
        let postmaster = self.postmaster.insert(group);
        let started = std::time::Instant::now();
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err(Error::failed(INTERRUPTED));
            }
            let status = postmaster.try_wait().map_err(|e| Error::failed(format!("waiting for postgres: {e}")))?;
            if let Some(status) = status {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                let msg = refused(settings, &text).unwrap_or_else(|| format!("postgres exited with {status}"));
                return Err(Error::failed(format!("PostgreSQL did not start: {msg} (log: {})", log.display())));
            }
            let said = std::fs::read_to_string(&pid_file).unwrap_or_default();
            let lines: Vec<&str> = said.lines().map(str::trim).collect();
            if lines.first() == Some(&pid.as_str()) && lines.get(7) == Some(&"ready") {
                return Ok(());
            }
            if started.elapsed() > std::time::Duration::from_secs(60) {
                return Err(Error::failed(format!("PostgreSQL did not start in 60 s (log: {})", log.display())));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// One tablespace in each of its table directories, named in their order
    /// ([`Cluster::tablespaces`]): fathom's DDL (or pgbench's options) then puts tables
    /// there by name.
    fn make_tablespaces(&self, stop: &AtomicBool) -> Result<()> {
        let sql: Vec<String> = self
            .tablespaces()
            .iter()
            .zip(&self.tables)
            .map(|(name, dir)| {
                format!("CREATE TABLESPACE {name} LOCATION '{}';", dir.display().to_string().replace('\'', "''"))
            })
            .collect();
        if sql.is_empty() {
            return Ok(());
        }
        psql(&self.dsn("postgres"), &sql.join("\n"), stop).map(drop)
    }

    /// The names of its tablespaces, one per table directory in the order the scenario
    /// gives them (`table_targets`); empty when its tables stay with its data.
    pub fn tablespaces(&self) -> Vec<String> {
        (1..=self.tables.len()).map(|i| format!("fathom_tables_{i}")).collect()
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

    /// Where the server is, as libpq's keywords: its socket's directory and port.
    pub(super) fn server(&self) -> String {
        format!("host={} port={}", conn_value(&self.socket.display().to_string()), self.port)
    }

    /// Connection string for `database` as the cluster's superuser.
    pub fn dsn(&self, database: &str) -> String {
        format!("{} user={SUPERUSER} dbname={database}", self.server())
    }

    /// The directory of its socket, which HammerDB is given as the host.
    pub fn socket(&self) -> &Path {
        &self.socket
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

    /// Ends the server, if it runs: immediate shutdown (SIGQUIT, which ends open sessions
    /// and writes nothing back, the cluster being thrown away), its group killed if it
    /// has not ended a moment later. How it died, if it had ended before.
    fn end(&mut self) -> Option<String> {
        self.end_while(|| {})
    }

    /// [`Cluster::end`], running `meanwhile` once the server and its sessions have been
    /// told to end. The sessions are told directly: each leads a process session of its
    /// own, and the server's first act on SIGQUIT is to write its lock file and fsync
    /// it, which on a busy disk takes a second before it passes the signal on.
    fn end_while(&mut self, meanwhile: impl FnOnce() + Send) -> Option<String> {
        use std::os::unix::process::ExitStatusExt;
        let Some(mut server) = self.postmaster.take() else {
            meanwhile();
            return None;
        };
        if let Ok(Some(status)) = server.try_wait() {
            // what is left of its group (sessions a killed server left) goes too
            // SAFETY: kill(2) of the group our child led, whose members keep its id.
            unsafe { libc::kill(-(server.id() as i32), libc::SIGKILL) };
            meanwhile();
            return Some(match status.signal() {
                Some(signal) => format!("killed by signal {signal}"),
                None => format!("exited with {status}"),
            });
        }
        server.signal(libc::SIGQUIT);
        for session in children::children_of(server.id() as i32) {
            // SAFETY: kill(2) of the server's child and the group it leads.
            unsafe {
                libc::kill(session, libc::SIGQUIT);
                libc::kill(-session, libc::SIGQUIT);
            }
        }
        std::thread::scope(|scope| {
            scope.spawn(meanwhile);
            // signal 0 sends nothing: the server has been told; its group is killed if it
            // has not ended a moment later
            let _ = server.wait_stopping(Some(0), Some(std::time::Instant::now()), &|| true);
        });
        None
    }

    /// Ends the server before the run's end, once: whether it ran until now. A server
    /// found dead already says so when the cluster is stopped.
    pub fn retire(&mut self) -> bool {
        if self.postmaster.is_none() || self.retired.swap(true, Ordering::Relaxed) {
            return false;
        }
        self.died = self.end();
        true
    }

    fn remove_socket_dir(&self) {
        if self.socket != self.dir {
            let _ = std::fs::remove_dir_all(&self.socket);
        }
    }

    /// Stops the server and removes the cluster, whatever became of the server. A
    /// server that died before (killed, crashed) is an error that says so.
    /// The files go while the server ends: on a busy disk both wait for its journal, and
    /// waits made together are shared.
    pub fn stop(&mut self) -> Result<()> {
        let dirs: Vec<PathBuf> =
            std::iter::once(self.dir.clone()).chain(self.log.clone()).chain(self.tables.clone()).collect();
        let remove = |dirs: &[PathBuf]| -> Result<()> {
            for d in dirs {
                crate::nofollow::remove_tree(d).map_err(|e| Error::failed(format!("removing {}: {e}", d.display())))?;
            }
            Ok(())
        };
        let mut removed = None;
        let died = self.end_while(|| removed = Some(remove(&dirs))).or(self.died.take());
        self.remove_socket_dir();
        // what the server wrote as it ended (nothing is expected) goes now that it has
        let removed = match removed {
            Some(Ok(())) => Ok(()),
            _ => remove(&dirs),
        };
        self.left.clear();
        if let Some(how) = died {
            return Err(Error::failed(format!("the PostgreSQL server of workload {} died ({how})", self.workload)));
        }
        removed
    }
}

impl super::throwaway::Throwaway for Cluster {
    const DBMS: &'static str = "PostgreSQL";
    const DIR: &'static str = "postgres";

    fn start(
        made: crate::nofollow::Dir,
        apart: super::throwaway::Apart,
        settings: &[(String, String)],
        stop: &AtomicBool,
    ) -> Result<Cluster> {
        Cluster::start(made, apart, settings, stop)
    }

    fn unreachable(e: &Error) -> bool {
        e.to_string().starts_with(UNREACHABLE)
    }

    fn workload(&self) -> &str {
        &self.workload
    }

    fn set_workload(&mut self, name: &str) {
        self.workload = name.to_string();
    }

    /// A `CHECKPOINT`: with no WAL since, its timed checkpoints are skipped.
    fn settle(&self, stop: &AtomicBool) -> Result<()> {
        psql(&self.dsn("postgres"), "CHECKPOINT", stop).map(drop)
    }

    fn retire(&mut self) -> bool {
        Cluster::retire(self)
    }

    fn stop(&mut self) -> Result<()> {
        Cluster::stop(self)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // a failure here has nowhere to go but stderr; stop() reports it when called
        if !self.left.is_empty()
            && let Err(e) = self.stop()
        {
            crate::terminal::say(&format!("warning: {e}"));
        }
    }
}

/// How long libpq may take to open a session (`connect_timeout`, given as
/// PGCONNECT_TIMEOUT unless the environment or the dsn says): a server that accepts the
/// connection and never answers would otherwise hold fathom forever.
pub const CONNECT_TIMEOUT_S: u64 = 10;

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

/// A psql session on `dsn` for fathom's own statements, kept while they last (a load's,
/// a sampler's): output unaligned without headers, the first error ending it, its
/// opening bounded ([`connect_bounded`]).
pub fn session(dsn: &str) -> Result<Client> {
    let mut cmd = Command::new(client("psql")?);
    cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", dsn]);
    let server = crate::secrets::dsn_server(dsn);
    Client::start(connect_bounded(&mut cmd), "psql", |n| format!("\\echo {SENTINEL} {n}"), server, CONNECT_TIMEOUT_S)
}

/// Runs `sql` against `dsn` in a session of its own ([`Client::run`]): a statement run
/// once, where no session is kept.
pub fn psql(dsn: &str, sql: &str, stop: &AtomicBool) -> Result<String> {
    session(dsn)?.run(sql, stop)
}

/// Asks `dsn` `sql` in a session of its own ([`Client::ask`]), `what` naming it.
pub fn ask(dsn: &str, sql: &str, what: &str, stop: &AtomicBool) -> Result<String> {
    session(dsn)?.ask(sql, what, stop)
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

/// The database a load of fathom's fills: its `dsn`, whether it is the user's (a `dsn`,
/// which a failed load leaves as found) and the tablespaces its tables are spread over (a
/// throwaway cluster's table disks, [`Cluster::tablespaces`]).
pub struct Database<'a> {
    pub dsn: &'a str,
    pub users: bool,
    pub tablespaces: Vec<String>,
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
    only_ours(name, dsn, kind, &foreign)
}

/// Runs `CHECKPOINT` on `dsn`'s server, so that a load's pages are written before the
/// run rather than by its first checkpoint. It needs a superuser or a member of
/// `pg_checkpoint` (PostgreSQL 15 on), which a managed server's role (RDS, Cloud SQL)
/// often is not; the load is whole without it, so then `progress` says it was skipped.
pub fn checkpoint(c: &mut Client, stop: &AtomicBool, progress: &dyn Fn(&str)) -> Result<()> {
    let may = "SELECT current_user || ' ' || (rolsuper OR EXISTS (SELECT FROM pg_roles c WHERE \
               c.rolname = 'pg_checkpoint' AND pg_has_role(current_user, c.oid, 'USAGE'))) \
               FROM pg_roles WHERE rolname = current_user";
    let said = c.run(may, stop)?;
    match said.rsplit_once(' ') {
        Some((role, "false")) => {
            progress(&format!(
                "CHECKPOINT skipped: the role {role} is neither a superuser nor a member of pg_checkpoint, so the \
                 load's pages are written by the server's next checkpoint, during the run"
            ));
            Ok(())
        }
        _ => c.run("CHECKPOINT", stop).map(drop),
    }
}

/// The size of the database `c` is connected to, in bytes.
pub fn database_size(c: &mut Client, stop: &AtomicBool) -> Result<f64> {
    let bytes = c.ask("SELECT pg_database_size(current_database())", "reading the database's size", stop)?;
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
