//! Real servers the integration tests start on loopback (Debian's `prometheus` and
//! `prometheus-node-exporter`, installed by `scripts/install-deps.sh test`), killed when
//! dropped, and the HTTP calls the tests make to them.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A loopback port nothing listens on, never the same twice in one test binary: the
/// tests of a file run in parallel, and the kernel may hand a just-released port out
/// again, so two servers could otherwise be told to share one.
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
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    out.split_once("\r\n\r\n").map(|(_, b)| b.to_string())
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

/// Waits until GET `path` on `port` answers, for up to 30 s.
fn wait_ready(port: u16, path: &str, what: &str) {
    let started = Instant::now();
    while get(port, path).is_none() {
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
