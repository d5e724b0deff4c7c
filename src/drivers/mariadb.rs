//! MariaDB, and MySQL reached by `dsn`: the throwaway server fathom starts on the storage
//! under test ([`Server`]), where a server is ([`Conn`]) and the questions fathom asks
//! it ([`ask`], through Debian's `mariadb` client).
//!
//! A throwaway server admits fathom alone, as a throwaway PostgreSQL cluster does: its
//! data directory is `mariadb-install-db`'s under a new directory of mode 0700 owned by
//! the server's user (`mysql` when fathom is root); it listens on no TCP port
//! (`skip-networking`), only on a socket in that directory; and its one account besides
//! `mariadb.sys` is fathom's OS user, authenticated by the socket's peer credentials
//! (`unix_socket`). It is fathom's child, killed at the end (nothing it holds outlives
//! its processes) and removed with its directory.

use super::client::Client;
use super::driver::bad_input;
use super::pg_host::{RunAs, chown, os_user, run_as_user};
use crate::children::{self, Group, Leftover};
use crate::coprocess::SENTINEL;
use crate::error::{Error, Result};
use crate::scenario::program::dbms::MysqlDsn;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How an error of [`Server::start`] begins when the `mysql` user cannot reach the
/// directory (a parent such as /root is private).
pub const UNREACHABLE: &str = "MariaDB runs as the mysql user";

/// How long the client may take to open its session (`--connect-timeout`).
const CONNECT_TIMEOUT_S: u64 = 10;

/// How long a throwaway server may take to accept its first connection.
const START_WITHIN: Duration = Duration::from_secs(60);

/// The name of a throwaway server's socket.
const SOCKET: &str = "mariadbd.sock";

/// Where a MariaDB or MySQL server is, and as whom fathom connects.
#[derive(Debug, Clone, PartialEq)]
pub struct Conn {
    /// The socket of a throwaway server; `None`: `host` and `port` (a `dsn`).
    pub socket: Option<PathBuf>,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub database: String,
}

impl Conn {
    /// The server of a `dsn` ([`MysqlDsn`]).
    pub fn parse(dsn: &str) -> std::result::Result<Conn, String> {
        let MysqlDsn { host, port, user, database } = MysqlDsn::parse(dsn)?;
        Ok(Conn { socket: None, host, port, user, database })
    }

    /// Which server and database this is, to tell loads apart.
    pub fn key(&self) -> String {
        format!("{}/{}", self.server_key(), self.database)
    }

    /// Which server this is.
    pub fn server_key(&self) -> String {
        match &self.socket {
            Some(s) => format!("mariadb:{}", s.display()),
            None => format!("mariadb:{}@{}:{}", self.user, self.host, self.port),
        }
    }

    /// The `mariadb` client's options for it: a throwaway server's reads no option file
    /// (its socket and user are all it needs); a `dsn`'s reads the user's, which may hold
    /// the password.
    pub(crate) fn client_args(&self) -> Vec<String> {
        let mut args = match &self.socket {
            Some(s) => vec!["--no-defaults".into(), format!("--socket={}", s.display())],
            None => vec![format!("--host={}", self.host), format!("--port={}", self.port), "--protocol=tcp".into()],
        };
        args.extend([format!("--user={}", self.user), format!("--connect-timeout={CONNECT_TIMEOUT_S}")]);
        args
    }

    /// sysbench's options for it (its MySQL driver). No password: see [`MysqlDsn`].
    pub fn sysbench_args(&self) -> Vec<String> {
        let mut args = vec!["--db-driver=mysql".to_string()];
        match &self.socket {
            Some(s) => args.push(format!("--mysql-socket={}", s.display())),
            None => args.extend([format!("--mysql-host={}", self.host), format!("--mysql-port={}", self.port)]),
        }
        args.extend([format!("--mysql-user={}", self.user), format!("--mysql-db={}", self.database)]);
        args
    }
}

/// A `mariadb` client session on `conn`'s database (none when `in_database` is false: to
/// create it) for fathom's own statements, kept while they last (a load's, a sampler's):
/// output tab-separated without column names, the first error ending it. Its scripts
/// may change the `DELIMITER` (a body holding semicolons) if they put it back.
pub fn session(conn: &Conn, in_database: bool) -> Result<Client> {
    let mut cmd = Command::new("mariadb");
    cmd.args(conn.client_args()).args(["--batch", "--skip-column-names", "--unbuffered"]);
    if in_database {
        cmd.arg(&conn.database);
    }
    Client::start(&mut cmd, "mariadb", |n| format!("SELECT '{SENTINEL} {n}';"), conn.key(), CONNECT_TIMEOUT_S)
        .map_err(|e| Error::failed(format!("{e} (apt-get install mariadb-client)")))
}

/// Asks `conn`'s database `sql` in a session of its own ([`Client::ask`]), `what`
/// naming it.
pub fn ask(conn: &Conn, sql: &str, what: &str, stop: &AtomicBool) -> Result<String> {
    session(conn, true)?.ask(sql, what, stop)
}

/// Runs `sql`, a script, on `conn`'s database in a session of its own ([`Client::run`]).
pub fn script(conn: &Conn, sql: &str, stop: &AtomicBool) -> Result<String> {
    session(conn, true)?.run(sql, stop)
}

/// The tables of `conn`'s database that are not fathom's: a database holding any is
/// someone else's, never to be dropped. Tables of `ours`' names are fathom's only beside
/// its record of the load, `ours`' last.
pub fn foreign_tables(conn: &Conn, ours: &[&str], stop: &AtomicBool) -> Result<Vec<String>> {
    let marker = ours.last().copied().unwrap_or_default();
    let names: Vec<String> = ours.iter().map(|t| format!("'{t}'")).collect();
    let sql = format!(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND NOT (table_name IN ({}) \
         AND EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '{marker}')) \
         ORDER BY 1",
        names.join(", ")
    );
    let found = ask(conn, &sql, "checking for tables that are not fathom's", stop)?;
    Ok(found.split_whitespace().map(str::to_string).collect())
}

/// The size of the database `c` is connected to, in bytes: its tables' data and indexes.
pub fn database_size(c: &mut Client, stop: &AtomicBool) -> Result<f64> {
    let sql = "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables \
               WHERE table_schema = DATABASE()";
    let bytes = c.ask(sql, "reading the database's size", stop)?;
    bytes.parse().map_err(|_| Error::failed(format!("the database's size is not a number: `{bytes}`")))
}

/// A throwaway MariaDB server, running until stopped or dropped.
pub struct Server {
    dir: PathBuf,
    /// The directory of its redo log, on the log's own disk, when apart.
    log: Option<PathBuf>,
    /// The directories its tables may be put in (`DATA DIRECTORY`), one per table disk.
    tables: Vec<PathBuf>,
    /// The socket's directory: the server's own, or one of its own in the system's
    /// temporary directory when that path is too long for a socket's.
    socket_dir: PathBuf,
    user: Option<RunAs>,
    /// fathom's OS user: the account it connects as.
    me: String,
    workload: String,
    server: Option<Group>,
    /// How the server had died, when it was found dead on being retired.
    died: Option<String>,
    /// Set when fathom ends the server before the run's end: its observer then stops
    /// without an error.
    pub retired: std::sync::Arc<AtomicBool>,
    left: Vec<Leftover>,
}

impl Server {
    /// Creates a server in `made`, a directory just made new, with `settings` (options
    /// of mariadbd, `innodb_buffer_pool_size: 1G`), its redo log and room for tables in
    /// `apart`'s directories, and starts it.
    pub fn start(
        made: crate::nofollow::Dir,
        apart: super::throwaway::Apart,
        settings: &[(String, String)],
        stop: &AtomicBool,
    ) -> Result<Server> {
        let mut server = Self::made(made.path(), &apart)?;
        match server.install(stop).and_then(|()| server.serve(settings, stop)) {
            Ok(()) => Ok(server),
            Err(e) => {
                server.kill();
                let _ = crate::nofollow::remove_tree(&server.data());
                for apart in server.log.iter().chain(&server.tables) {
                    let _ = crate::nofollow::remove_tree(apart);
                }
                server.remove_socket_dir();
                server.left.clear();
                Err(e)
            }
        }
    }

    /// The server of the new directory `dir` (its redo log and tables in `apart`'s new
    /// directories, when given): made private to the server's user, and recorded with the
    /// run.
    fn made(dir: &Path, apart: &super::throwaway::Apart) -> Result<Server> {
        let missing = "MariaDB does not run as root and there is no `mysql` user to run it as \
                       (Debian's mariadb-server package creates one), or give a `dsn`";
        let user = run_as_user(c"mysql", missing)?;
        // its directory's name is unique in the run, and the process's id across runs
        let unique = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let place = super::throwaway::place(dir, apart, user, UNREACHABLE, SOCKET, ("mariadb", &unique))?;
        let super::throwaway::Place { dir, socket_dir, log, tables, left } = place;
        let me = os_user()?;
        let (workload, server, died, retired) = (String::new(), None, None, Default::default());
        Ok(Server { dir, log, tables, socket_dir, user, me, workload, server, died, retired, left })
    }

    /// `mariadb-install-db`: the system tables, and fathom's OS user as the one account
    /// that logs in (by the socket's peer credentials).
    fn install(&mut self, stop: &AtomicBool) -> Result<()> {
        let mut install = self.command("mariadb-install-db");
        install.arg("--no-defaults").arg(format!("--datadir={}", self.data().display())).arg(self.tmpdir()?);
        install.args(self.log_apart());
        install.args(["--auth-root-authentication-method=socket", "--skip-test-db"]);
        install.arg(format!("--auth-root-socket-user={}", self.me));
        let out = children::output(&mut install, "mariadb-install-db", stop)
            .map_err(|e| Error::failed(format!("starting mariadb-install-db: {e} (apt-get install mariadb-server)")))?
            .ok_or(Error::failed(super::client::INTERRUPTED))?;
        if !out.status.success() {
            return Err(Error::failed(format!("mariadb-install-db failed: {}", super::postgres::last_lines(&out, 5))));
        }
        Ok(())
    }

    /// The directories its tables may be put in, one per table disk (`table_targets`),
    /// for fathom's DDL to name in `DATA DIRECTORY`.
    pub fn table_dirs(&self) -> &[PathBuf] {
        &self.tables
    }

    /// The option that puts InnoDB's redo log in its own directory, when it has one.
    fn log_apart(&self) -> Option<String> {
        self.log.as_ref().map(|l| format!("--innodb-log-group-home-dir={}", l.display()))
    }

    /// Starts mariadbd as fathom's child, its errors into its log, and waits until it
    /// answers.
    fn serve(&mut self, settings: &[(String, String)], stop: &AtomicBool) -> Result<()> {
        let log = self.log();
        let (file, err) = super::throwaway::server_log(&log)?;
        let mut server = self.command(&mariadbd()?.display().to_string());
        server.arg("--no-defaults").arg(format!("--datadir={}", self.data().display())).arg(self.tmpdir()?);
        server.args(self.log_apart());
        server.arg(format!("--socket={}", self.socket().display())).arg("--skip-networking");
        server.arg(format!("--pid-file={}", self.dir.join("mariadbd.pid").display()));
        // without --log-error its errors go to stderr: the log, from its first line on
        server.args(settings.iter().map(|(k, v)| format!("--{k}={v}"))).stdout(file).stderr(err);
        let group =
            Group::spawn(&mut server, "mariadbd").map_err(|e| Error::failed(format!("starting mariadbd: {e}")))?;
        let (socket, conn) = (self.socket(), self.conn("mysql"));
        let running = self.server.insert(group);
        let started = Instant::now();
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err(Error::failed(super::client::INTERRUPTED));
            }
            if let Some(status) = running.try_wait().map_err(|e| Error::failed(format!("waiting for mariadbd: {e}")))? {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                let errors: Vec<&str> = text.lines().filter(|l| l.contains("[ERROR]")).collect();
                let said =
                    if errors.is_empty() { format!("mariadbd exited with {status}") } else { errors.join(" / ") };
                return Err(Error::failed(format!("MariaDB did not start: {said} (log: {})", log.display())));
            }
            if socket.exists() && session(&conn, false).and_then(|mut c| c.ask("SELECT 1", "starting", stop)).is_ok() {
                return Ok(());
            }
            if started.elapsed() > START_WITHIN {
                let within = START_WITHIN.as_secs();
                return Err(Error::failed(format!("MariaDB did not start in {within} s (log: {})", log.display())));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// `--tmpdir`, a directory of the server's own (made at first use): its temporary
    /// tables go to the storage under test, and servers bootstrapping at once in one /tmp
    /// clash on their names.
    fn tmpdir(&self) -> Result<String> {
        let tmp = self.dir.join("tmp");
        if !tmp.exists() {
            crate::nofollow::create_new_dir(&tmp).map_err(|e| Error::failed(format!("{}: {e}", tmp.display())))?;
            if let Some(u) = self.user {
                chown(&tmp, u)?;
            }
        }
        Ok(format!("--tmpdir={}", tmp.display()))
    }

    fn socket(&self) -> PathBuf {
        self.socket_dir.join(SOCKET)
    }

    /// The server's log.
    pub fn log(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// Where it is, database `database`, as fathom's OS user.
    pub fn conn(&self, database: &str) -> Conn {
        let (host, port) = ("localhost".to_string(), 0);
        let (socket, user) = (Some(self.socket()), self.me.clone());
        Conn { socket, host, port, user, database: database.into() }
    }

    /// Creates `database` unless it exists.
    pub fn create_database(&self, database: &str, stop: &AtomicBool) -> Result<()> {
        let sql = format!("CREATE DATABASE IF NOT EXISTS `{database}`");
        session(&self.conn(database), false)?.ask(&sql, "creating its database", stop).map(drop)
    }

    /// A command for one of the server's programs, as the server's user.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.stdin(Stdio::null()).current_dir(&self.dir);
        if let Some(u) = self.user {
            c.uid(u.uid).gid(u.gid);
        }
        c
    }

    /// Kills the server, if it runs (nothing of it outlives its processes): how it had
    /// died, if it had ended before.
    fn kill(&mut self) -> Option<String> {
        let mut server = self.server.take()?;
        let died = match server.try_wait() {
            Ok(Some(status)) => Some(format!("exited with {status}")),
            _ => None,
        };
        server.signal(libc::SIGKILL);
        let _ = server.wait();
        died
    }

    fn remove_socket_dir(&self) {
        if self.socket_dir != self.dir {
            let _ = std::fs::remove_dir_all(&self.socket_dir);
        }
    }
}

/// mariadbd: on the PATH, else where Debian installs it (/usr/sbin, not on a user's PATH).
fn mariadbd() -> Result<PathBuf> {
    let on_path =
        std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).find(|d| d.join("mariadbd").is_file()));
    let found = on_path
        .map(|d| d.join("mariadbd"))
        .or_else(|| ["/usr/sbin/mariadbd", "/usr/libexec/mariadbd"].iter().map(PathBuf::from).find(|p| p.is_file()));
    found.ok_or_else(|| bad_input(Error::failed("mariadbd not found: apt-get install mariadb-server")))
}

/// How long [`Throwaway::settle`] waits for InnoDB to write its dirty pages.
const SETTLE_WITHIN: Duration = Duration::from_secs(60);

impl super::throwaway::Throwaway for Server {
    const DBMS: &'static str = "MariaDB";
    const DIR: &'static str = "mariadb";

    fn start(
        made: crate::nofollow::Dir,
        apart: super::throwaway::Apart,
        settings: &[(String, String)],
        stop: &AtomicBool,
    ) -> Result<Server> {
        Server::start(made, apart, settings, stop)
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

    /// InnoDB's dirty pages written (its page cleaners asked to leave none, as fast as
    /// the storage takes them, then told their settings back), as PostgreSQL's CHECKPOINT
    /// writes its. At InnoDB's default pace (`innodb_io_capacity`, 200 pages a second) a
    /// warehouse's 100 MB would take half a minute.
    fn settle(&self, stop: &AtomicBool) -> Result<()> {
        let conn = self.conn("mysql");
        // the ceiling raised before the pace, and put back after it
        let settle = [
            ("innodb_io_capacity_max", 1_000_000),
            ("innodb_io_capacity", 1_000_000),
            ("innodb_max_dirty_pages_pct", 0),
        ];
        let mut client = session(&conn, false)?;
        let mut ask = |sql: &str| client.ask(sql, "writing its dirty pages", stop);
        let mut were = Vec::new();
        for (name, value) in settle {
            were.push((name, ask(&format!("SELECT @@GLOBAL.{name}"))?));
            ask(&format!("SET GLOBAL {name} = {value}"))?;
        }
        let dirty = "SELECT variable_value FROM information_schema.global_status \
                     WHERE variable_name = 'INNODB_BUFFER_POOL_PAGES_DIRTY'";
        let started = Instant::now();
        while ask(dirty)? != "0" && started.elapsed() < SETTLE_WITHIN {
            std::thread::sleep(Duration::from_millis(100));
        }
        for (name, was) in were.iter().rev() {
            ask(&format!("SET GLOBAL {name} = {}", was.parse::<f64>().unwrap_or_default()))?;
        }
        Ok(())
    }

    fn retire(&mut self) -> bool {
        if self.server.is_none() || self.retired.swap(true, Ordering::Relaxed) {
            return false;
        }
        self.died = self.kill();
        true
    }

    fn stop(&mut self) -> Result<()> {
        let died = self.kill().or(self.died.take());
        self.remove_socket_dir();
        let removed = std::iter::once(&self.dir).chain(&self.log).chain(&self.tables).try_for_each(|d| {
            crate::nofollow::remove_tree(d).map_err(|e| Error::failed(format!("removing {}: {e}", d.display())))
        });
        self.left.clear();
        if let Some(how) = died {
            return Err(Error::failed(format!("the MariaDB server of workload {} died ({how})", self.workload)));
        }
        removed
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if !self.left.is_empty()
            && let Err(e) = super::throwaway::Throwaway::stop(self)
        {
            crate::terminal::say(&format!("warning: {e}"));
        }
    }
}
