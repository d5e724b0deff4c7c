//! Real servers the integration tests start on loopback (Debian's `prometheus` and
//! `prometheus-node-exporter`, installed by `scripts/install-deps.sh test`), killed when
//! dropped, and the HTTP calls the tests make to them.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A loopback port nothing listens on, never the same twice in the test binary: its
/// tests run in parallel, and the kernel may hand a just-released port out again, so two
/// servers could otherwise be told to share one.
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap();
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// GET `path` from 127.0.0.1:`port`, the body.
pub fn get(port: u16, path: &str) -> Option<String> {
    get_with_status(port, path).map(|(_, body)| body)
}

/// GET `path` from 127.0.0.1:`port`: the status code and the body.
fn get_with_status(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let (head, body) = out.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

/// A Prometheus query's vector or matrix result.
pub fn query(port: u16, q: &str) -> serde_json::Value {
    let enc: String = q
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"_.-".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") }
        })
        .collect();
    let body = get(port, &format!("/api/v1/query?query={enc}")).expect("prometheus answers");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(v["status"], "success", "{v}");
    v["data"]["result"].clone()
}

/// A server process, killed and reaped when dropped.
pub struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits until GET `path` on `port` answers 200, for up to 30 s: Prometheus listens
/// before it is ready, and answers 503 Service Unavailable until its storage is open.
fn wait_ready(port: u16, path: &str, what: &str) {
    let started = Instant::now();
    while get_with_status(port, path).is_none_or(|(status, _)| status != 200) {
        assert!(started.elapsed() < Duration::from_secs(30), "{what} did not start");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Prometheus on 127.0.0.1:`port`, scraping `targets` (HOST:PORT) every second as job
/// `job`, its files under `dir`; returns once it is ready.
pub fn prometheus(dir: &Path, port: u16, job: &str, targets: &[String]) -> Server {
    let config = dir.join("prometheus.yml");
    let targets: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: {job}\n    \
             static_configs:\n      - targets: [{}]\n",
            targets.join(", ")
        ),
    )
    .unwrap();
    let server = Server(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("tsdb").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus is installed by scripts/install-deps.sh test"),
    );
    wait_ready(port, "/-/ready", "prometheus");
    server
}

/// The queries of the Grafana dashboard (deploy/grafana/fathom.json) in its row titled
/// `row` (a panel is in the last row above it, as Grafana lays them out; `""` is the
/// panels above every row, with the annotations): each (panel title, query).
pub fn dashboard_queries(row: &str) -> Vec<(String, String)> {
    let path = format!("{}/deploy/grafana/fathom.json", env!("CARGO_MANIFEST_DIR"));
    let dashboard: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let panels = dashboard["panels"].as_array().unwrap();
    let y = |p: &serde_json::Value| p["gridPos"]["y"].as_i64().unwrap();
    let rows: Vec<&serde_json::Value> = panels.iter().filter(|p| p["type"] == "row").collect();
    let row_of = |p: &serde_json::Value| {
        rows.iter().filter(|r| y(r) < y(p)).max_by_key(|r| y(r)).map_or("", |r| r["title"].as_str().unwrap())
    };
    let mut queries = Vec::new();
    for p in panels.iter().filter(|p| p["type"] != "row" && row_of(p) == row) {
        for t in p["targets"].as_array().unwrap() {
            queries.push((p["title"].as_str().unwrap().to_string(), t["expr"].as_str().unwrap().to_string()));
        }
    }
    if row.is_empty() {
        for a in dashboard["annotations"]["list"].as_array().unwrap() {
            queries.push((a["name"].as_str().unwrap().to_string(), a["expr"].as_str().unwrap().to_string()));
        }
    }
    queries
}

/// Every one of `queries` (the dashboard's) has data in the Prometheus on `port` over
/// its last minute, `$run` any run and `$__rate_interval` 3 s (a 1 s scrape).
pub fn assert_answered(port: u16, queries: &[(String, String)]) {
    assert!(!queries.is_empty(), "no queries");
    for (title, expr) in queries {
        let expr = expr.replace("$run", ".*").replace("$__rate_interval", "3s");
        let result = query(port, &format!("max_over_time(({expr})[1m:1s])"));
        assert!(!result.as_array().unwrap().is_empty(), "panel {title}: no data for {expr}");
    }
}

/// The dashboard drawn by `scripts/dashboard-preview.py` from the Prometheus on `port`
/// (scraping every second) over the last `since`, into `page`: each panel's title and
/// the series it drew with at least one value.
pub fn dashboard_preview(port: u16, since: Duration, page: &Path) -> std::collections::BTreeMap<String, usize> {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/scripts/dashboard-preview.py"))
        .arg(format!("{root}/deploy/grafana/fathom.json"))
        .args(["--prometheus", &format!("http://127.0.0.1:{port}"), "--scrape-interval", "1s"])
        .args(["--since", &format!("{}s", since.as_secs() + 1), "-o"])
        .arg(page)
        .output()
        .unwrap();
    assert!(out.status.success(), "dashboard-preview.py: {}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(page).unwrap();
    let mut drawn = std::collections::BTreeMap::new();
    for figure in html.split("<figure class=\"panel\"").skip(1) {
        let attribute = |name: &str| figure.split(&format!(" {name}=\"")).nth(1).and_then(|r| r.split('"').next());
        let series = attribute("data-series").and_then(|n| n.parse().ok()).expect("data-series");
        drawn.insert(attribute("data-title").expect("data-title").to_string(), series);
    }
    drawn
}

/// Debian's node exporter on 127.0.0.1:`port`; returns once it serves /metrics.
pub fn node_exporter(port: u16) -> Server {
    let server = Server(
        Command::new("prometheus-node-exporter")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus-node-exporter is installed by scripts/install-deps.sh test"),
    );
    wait_ready(port, "/metrics", "the node exporter");
    server
}

/// A PostgreSQL server of the test's own (Debian's `postgresql`), on 127.0.0.1:`port`
/// with trust authentication for the user `tester`; stopped (fast shutdown) when dropped.
pub struct Postgres {
    child: Child,
    pub port: u16,
    /// Where its cluster is, removed when dropped.
    dir: std::path::PathBuf,
}

impl Postgres {
    /// initdb in `dir` and start the server in the foreground. PostgreSQL will not run as
    /// root: then it runs as the `postgres` user, in a directory of the system's temporary
    /// one (which it can reach wherever the checkout is).
    pub fn start(dir: &Path, port: u16) -> Postgres {
        use std::os::unix::process::CommandExt;
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let tmp = std::env::temp_dir().join(format!("fathom-test-pg-{port}"));
        let dir = if root { tmp.as_path() } else { dir };
        let _ = std::fs::remove_dir_all(dir);
        let bin = ["/usr/lib/postgresql"]
            .iter()
            .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
            .map(|e| e.path().join("bin"))
            .filter(|b| b.join("initdb").exists())
            .max()
            .expect("PostgreSQL's server programs (scripts/install-deps.sh test installs them)");
        std::fs::create_dir_all(dir).unwrap();
        let as_postgres = |c: &mut Command| {
            if root {
                let id = |flag: &str| -> u32 {
                    let out = Command::new("id").args([flag, "postgres"]).output().unwrap();
                    String::from_utf8_lossy(&out.stdout).trim().parse().expect("a postgres user")
                };
                let (uid, gid) = (id("-u"), id("-g"));
                std::os::unix::fs::chown(dir, Some(uid), Some(gid)).unwrap();
                c.uid(uid).gid(gid);
            }
            c.current_dir(dir);
        };
        let data = dir.join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb.args(["-A", "trust", "-U", "tester", "--no-instructions", "-D"]).arg(&data);
        as_postgres(&mut initdb);
        let out = initdb.output().unwrap();
        assert!(out.status.success(), "initdb: {}", String::from_utf8_lossy(&out.stderr));
        let mut server = Command::new(bin.join("postgres"));
        server.arg("-D").arg(&data).args(["-p", &port.to_string(), "-k", "", "-c", "listen_addresses=127.0.0.1"]);
        server.stdout(Stdio::null()).stderr(std::fs::File::create(dir.join("server.log")).unwrap());
        as_postgres(&mut server);
        let child = server.spawn().unwrap();
        let pg = Postgres { child, port, dir: dir.to_path_buf() };
        // ready when it accepts a session, not when it listens: a busy machine can leave it
        // listening and still "starting up" for a while
        let start = Instant::now();
        let ready = || {
            let mut isready = Command::new(bin.join("pg_isready"));
            isready.args(["-q", "-h", "127.0.0.1", "-p", &port.to_string()]).status().is_ok_and(|s| s.success())
        };
        while !ready() {
            assert!(start.elapsed() < Duration::from_secs(60), "PostgreSQL did not start on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        pg
    }

    pub fn dsn(&self, database: &str) -> String {
        format!("host=127.0.0.1 port={} user=tester dbname={database}", self.port)
    }

    /// Stops the server and its backends where they stand (SIGSTOP), or lets them go on
    /// (SIGCONT): a server that stops answering mid-run, its connections held open.
    pub fn pause(&self, paused: bool) {
        let signal = if paused { libc::SIGSTOP } else { libc::SIGCONT };
        let postmaster = self.child.id() as libc::pid_t;
        let mut pids = vec![postmaster];
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // the parent's pid is the second field after the command name in parentheses
            let parent = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok());
            if parent == Some(postmaster) {
                pids.extend(entry.file_name().to_str().and_then(|p| p.parse::<libc::pid_t>().ok()));
            }
        }
        for pid in pids {
            // SAFETY: kill(2) of our own server and its backends.
            unsafe { libc::kill(pid, signal) };
        }
    }

    /// Ends the server as a crash would: SIGQUIT, immediate shutdown, every session cut.
    pub fn crash(&mut self) {
        // SAFETY: signalling our own child, not yet reaped.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGQUIT) };
        self.child.wait().unwrap();
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_some() {
            let _ = std::fs::remove_dir_all(&self.dir);
            return;
        }
        self.pause(false);
        // SIGINT: fast shutdown, which also ends its backends
        // SAFETY: signalling our own child, not yet reaped.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGINT) };
        let start = Instant::now();
        while self.child.try_wait().ok().flatten().is_none() {
            if start.elapsed() > Duration::from_secs(10) {
                let _ = self.child.kill();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A MariaDB server of the test's own (Debian's `mariadb-server`), on 127.0.0.1:`port`,
/// with the user `tester` (no password) allowed everything from there; killed and
/// removed when dropped.
pub struct Mariadb {
    child: Child,
    pub port: u16,
    dir: std::path::PathBuf,
}

impl Mariadb {
    /// mariadb-install-db in a directory of the system's temporary one (which the mysql
    /// user can reach wherever the checkout is), and the server in the foreground.
    pub fn start(port: u16) -> Mariadb {
        use std::os::unix::process::CommandExt;
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let dir = std::env::temp_dir().join(format!("fathom-test-mariadb-{port}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let as_mysql = |c: &mut Command| {
            if root {
                let id = |flag: &str| -> u32 {
                    let out = Command::new("id").args([flag, "mysql"]).output().unwrap();
                    String::from_utf8_lossy(&out.stdout).trim().parse().expect("a mysql user")
                };
                let (uid, gid) = (id("-u"), id("-g"));
                std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
                std::os::unix::fs::chown(dir.join("tmp"), Some(uid), Some(gid)).unwrap();
                c.uid(uid).gid(gid);
            }
            c.current_dir(&dir);
        };
        let data = format!("--datadir={}", dir.join("data").display());
        // a temporary directory of its own: servers bootstrapping at once in one /tmp clash
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        let tmp = format!("--tmpdir={}", dir.join("tmp").display());
        let mut install = Command::new("mariadb-install-db");
        install.args(["--no-defaults", &data, &tmp, "--skip-test-db"]);
        as_mysql(&mut install);
        let out = install.output().expect("mariadb-server is installed by scripts/install-deps.sh test");
        assert!(out.status.success(), "mariadb-install-db: {}", String::from_utf8_lossy(&out.stderr));
        let socket = format!("--socket={}", dir.join("test.sock").display());
        let mut server = Command::new("/usr/sbin/mariadbd");
        server.args(["--no-defaults", &data, &tmp, &socket, "--bind-address=127.0.0.1", &format!("--port={port}")]);
        server.stdout(Stdio::null()).stderr(std::fs::File::create(dir.join("server.log")).unwrap());
        as_mysql(&mut server);
        let db = Mariadb { child: server.spawn().unwrap(), port, dir: dir.clone() };
        // the socket admits root by its peer credentials: the test's user is made there
        let grant = "CREATE USER tester@'127.0.0.1'; GRANT ALL ON *.* TO tester@'127.0.0.1';";
        let start = Instant::now();
        while !Command::new("mariadb")
            .args(["--no-defaults", &socket, "-u", "root", "-e", grant])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            assert!(start.elapsed() < Duration::from_secs(60), "MariaDB did not start on {port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        db
    }

    /// fathom's `dsn` of it, database `database`.
    pub fn dsn(&self, database: &str) -> String {
        format!("mysql://tester@127.0.0.1:{}/{database}", self.port)
    }

    /// `sql`'s answer as the test's user, tab-separated.
    pub fn ask(&self, sql: &str) -> String {
        let port = format!("--port={}", self.port);
        let out = Command::new("mariadb")
            .args(["--no-defaults", "--protocol=tcp", "-h", "127.0.0.1", &port, "-u", "tester", "-N", "-B", "-e", sql])
            .output()
            .unwrap();
        assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Mariadb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Mariadb {
    /// Debian's mysqld_exporter (`prometheus-mysqld-exporter`) on 127.0.0.1:`port`,
    /// reading this server as the test's user, its `INNODB_METRICS` collector on; returns
    /// once it serves /metrics.
    pub fn exporter(&self, port: u16) -> Server {
        let mut cmd = Command::new("prometheus-mysqld-exporter");
        cmd.arg("--collect.info_schema.innodb_metrics")
            .env("DATA_SOURCE_NAME", format!("tester@tcp(127.0.0.1:{})/", self.port));
        exporter(cmd, port, "mysqld_exporter")
    }
}

/// Debian's postgres_exporter (`prometheus-postgres-exporter`) on 127.0.0.1:`port`,
/// reading the server libpq's `dsn` (`host=... port=... user=...`) reaches; returns once
/// it serves /metrics.
pub fn postgres_exporter(port: u16, dsn: &str) -> Server {
    let mut cmd = Command::new("prometheus-postgres-exporter");
    cmd.env("DATA_SOURCE_NAME", format!("{dsn} sslmode=disable"));
    exporter(cmd, port, "postgres_exporter")
}

/// An exporter `cmd` (installed by scripts/install-deps.sh test) on 127.0.0.1:`port`,
/// quiet; returns once it serves /metrics.
fn exporter(mut cmd: Command, port: u16, what: &str) -> Server {
    let child = cmd
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e} (scripts/install-deps.sh test installs it)"));
    let server = Server(child);
    wait_ready(port, "/metrics", what);
    server
}

/// Fails unless `promtool check metrics` (Debian's, with prometheus) passes `text`, an
/// exposition in the text format: every family with help and type, a counter `_total`.
pub fn promtool_check(text: &str) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool is installed with prometheus by scripts/install-deps.sh test");
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "promtool check metrics: {said}\n{text}");
}

/// The samples of an exposition (the text format's lines): name, labels, value.
pub fn samples(text: &str) -> Vec<(String, std::collections::BTreeMap<String, String>, f64)> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let Some((series, value)) = line.rsplit_once(' ') else { continue };
        let Ok(value) = value.parse::<f64>() else { continue };
        let (name, rest) = series.split_once('{').unwrap_or((series, "}"));
        let mut labels = std::collections::BTreeMap::new();
        let mut rest = rest.trim_end_matches('}');
        while let Some((key, after)) = rest.split_once("=\"") {
            // a value ends at the first quote no backslash escapes
            let end = after
                .char_indices()
                .find(|&(i, c)| c == '"' && !after[..i].ends_with('\\'))
                .map_or(after.len(), |p| p.0);
            labels.insert(key.trim_start_matches(',').to_string(), after[..end].to_string());
            rest = after.get(end + 1..).unwrap_or("");
        }
        out.push((name.to_string(), labels, value));
    }
    out
}

/// Processes still running (not zombies) whose command line contains `needle`.
pub fn running(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let path = entry.path();
        let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
        // the state follows the command name in parentheses
        let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start().chars().next()).unwrap_or(None);
        if state.is_none() || state == Some('Z') {
            continue;
        }
        let cmdline = std::fs::read(path.join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) {
            found.push(cmdline);
        }
    }
    found
}

/// An ed25519 key pair made by ssh-keygen in `dir`: (private key, public key line).
pub fn ssh_key(dir: &Path, name: &str) -> (std::path::PathBuf, String) {
    let key = dir.join(name);
    let _ = std::fs::remove_file(&key);
    let _ = std::fs::remove_file(key.with_extension("pub"));
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&key)
        .output()
        .expect("ssh-keygen (scripts/install-deps.sh test installs openssh-client)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap().trim().to_string();
    (key, public)
}

/// Debian's sshd on `addr`:`port` with a throwaway host key, letting in whoever holds a
/// key listed in `authorized` (the test's user key); stopped when dropped.
pub struct Sshd {
    /// Killed when dropped, with the sshd.
    _server: Server,
    pub addr: String,
    pub port: u16,
    /// The host's public key, as a known_hosts line for this address and port.
    pub known_host: String,
}

impl Sshd {
    pub fn start(dir: &Path, addr: &str, port: u16, authorized: &str) -> Sshd {
        std::fs::create_dir_all(dir).unwrap();
        // sshd wants its privilege separation directory
        let _ = std::fs::create_dir_all("/run/sshd");
        let (host_key, host_pub) = ssh_key(dir, "host_key");
        let keys = dir.join("authorized_keys");
        std::fs::write(&keys, format!("{authorized}\n")).unwrap();
        let config = dir.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress {addr}\nHostKey {}\nAuthorizedKeysFile {}\nPidFile none\n\
                 StrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPrintMotd no\nLogLevel ERROR\n",
                host_key.display(),
                keys.display()
            ),
        )
        .unwrap();
        let child = Command::new("/usr/sbin/sshd")
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("sshd.log")).unwrap())
            .spawn()
            .expect("sshd (scripts/install-deps.sh test installs openssh-server)");
        let server = Server(child);
        let start = Instant::now();
        while TcpStream::connect((addr, port)).is_err() {
            let log = std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default();
            assert!(start.elapsed() < Duration::from_secs(20), "sshd did not start on {addr}:{port}: {log}");
            std::thread::sleep(Duration::from_millis(50));
        }
        let known_host =
            format!("[{addr}]:{port} {}", host_pub.split_whitespace().take(2).collect::<Vec<_>>().join(" "));
        Sshd { _server: server, addr: addr.to_string(), port, known_host }
    }
}

/// A certificate authority of the test's own and a certificate it signed for 127.0.0.1
/// (openssl, installed by `scripts/install-deps.sh test`): `ca.pem`, `server.pem` and
/// `server.key` in `dir`.
pub fn tls_certificates(dir: &Path) {
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    for command in [
        format!(
            "req -x509 {key} -days 2 -subj /CN=fathom-test-CA -addext basicConstraints=critical,CA:TRUE \
             -addext keyUsage=critical,keyCertSign -keyout ca.key -out ca.pem"
        ),
        format!("req {key} -subj /CN=127.0.0.1 -keyout server.key -out server.csr"),
        "x509 -req -days 2 -set_serial 2 -in server.csr -CA ca.pem -CAkey ca.key -extfile server.ext -out server.pem"
            .to_string(),
    ] {
        let out = Command::new("openssl")
            .args(command.split_whitespace())
            .current_dir(dir)
            .output()
            .expect("openssl is installed by scripts/install-deps.sh test");
        assert!(out.status.success(), "openssl {command}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// An HTTPS proxy on 127.0.0.1:`port` in front of the plain HTTP server on `upstream`,
/// as sites put one before Prometheus (which checks no token itself): it answers 401 to
/// a request whose `Authorization` header is none of `accepted`. Its certificate is
/// [`tls_certificates`]' in `dir`. Python's standard library, so nothing else to install.
pub fn https_proxy(dir: &Path, port: u16, upstream: u16, accepted: &[&str]) -> Server {
    let script = dir.join("proxy.py");
    std::fs::write(&script, PROXY).unwrap();
    let server = Server(
        Command::new("python3")
            .arg(&script)
            .args([port.to_string(), upstream.to_string()])
            .arg(dir.join("server.pem"))
            .arg(dir.join("server.key"))
            .args(accepted)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(30), "the HTTPS proxy did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

const PROXY: &str = r#"
import http.server, ssl, sys, urllib.request
port, upstream, cert, key, accepted = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.headers.get("Authorization") not in accepted:
            self.send_response(401)
            self.send_header("WWW-Authenticate", "Bearer")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with urllib.request.urlopen(f"http://127.0.0.1:{upstream}{self.path}") as answer:
            body, code = answer.read(), answer.status
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
"#;
