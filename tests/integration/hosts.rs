//! Many hosts: workloads placed with `hosts:` run by `fathom agent` on each host, reached
//! through the `local` transport and through the real OpenSSH (Debian's sshd, started
//! here on loopback addresses, one per simulated host, with throwaway keys).

use crate::common::servers::{self, Sshd};
use crate::common::{Scratch, text};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const FATHOM: &str = env!("CARGO_BIN_EXE_fathom");

/// A workload on every host: two open-loop readers each, `seconds` long.
fn scenario(s: &Scratch, seconds: u32) -> String {
    let path = s.scenario(&format!(
        "name: cluster\n\
         workloads:\n\
         \x20 r:\n\
         \x20   hosts: all\n\
         \x20   per_host: 2\n\
         \x20   rw: randread\n\
         \x20   bs: 4k\n\
         \x20   size: 8m\n\
         \x20   rate_iops: 1200\n\
         \x20   duration: {seconds}s\n"
    ));
    path.display().to_string()
}

/// Starts `fathom run` in the background.
fn spawn_run(s: &Scratch, args: &[&str]) -> Child {
    s.fathom(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

fn wait_output(child: Child) -> std::process::Output {
    child.wait_with_output().unwrap()
}

/// Waits until host `name`'s samples reach the store (the run is under way, however
/// slow the machine), then `after` more, then kills its agent.
fn kill_agent_when_running(s: &Scratch, name: &str, after: Duration) {
    wait_for_samples(s, name);
    std::thread::sleep(after);
    let pattern = format!("agent --name {name}");
    assert!(!servers::running(&pattern).is_empty(), "no agent {name} to kill");
    let out = Command::new("pkill").args(["-KILL", "-f", &pattern]).output().unwrap();
    assert!(out.status.success());
}

/// Waits until host `name`'s samples reach the store.
fn wait_for_samples(s: &Scratch, name: &str) {
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < Duration::from_secs(60), "host {name} never sent a sample");
        let seen: i64 = rusqlite::Connection::open(s.dir.join("results/fathom.db"))
            .and_then(|db| {
                db.busy_timeout(Duration::from_secs(1))?;
                db.query_row(
                    "SELECT count(*) FROM samples x JOIN workers w ON w.run_id = x.run_id AND w.id = x.worker \
                     WHERE w.host = ?1",
                    [name],
                    |r| r.get(0),
                )
            })
            .unwrap_or(0);
        if seen > 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Per host of workload `r`: (host, workers, ops) from `show --json`.
fn per_host(show: &serde_json::Value) -> Vec<(String, i64, f64)> {
    show["workloads"][0]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["host"].as_str().unwrap().to_string(), h["workers"].as_i64().unwrap(), h["iops"].as_f64().unwrap()))
        .collect()
}

#[test]
fn agents_stop_when_their_controller_vanishes() {
    let s = Scratch::new("hosts-orphans");
    let hosts = s.local_inventory(&["orph1", "orph2"]);
    let path = scenario(&s, 30);
    let mut run = spawn_run(&s, &["run", &path, "--hosts", &hosts, "-q"]);
    let start = Instant::now();
    while servers::running("agent --name orph").len() < 2 {
        assert!(start.elapsed() < Duration::from_secs(20), "agents did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2));
    run.kill().unwrap(); // SIGKILL: nothing is told to anyone
    run.wait().unwrap();
    let gone = Instant::now();
    while !servers::running("agent --name orph").is_empty() {
        assert!(gone.elapsed() < Duration::from_secs(2), "agents outlived their controller by 2 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_different_version_is_refused_with_the_push_hint() {
    let s = Scratch::new("hosts-version");
    let fake = s.dir.join("old-fathom");
    let script = "#!/bin/sh\necho '{\"type\":\"hello\",\"protocol\":1,\"version\":\"0.0.1\",\"host\":\"x\",\"cores\":1,\"memory_bytes\":null}'\ncat >/dev/null\n";
    // written by a child process: had this process opened it for writing, a child that
    // another test forks meanwhile could hold that descriptor when fathom executes the
    // script (ETXTBSY, "Text file busy")
    let wrote = Command::new("sh")
        .args(["-c", "printf '%s' \"$1\" > \"$2\" && chmod +x \"$2\"", "sh", script])
        .arg(&fake)
        .status()
        .unwrap();
    assert!(wrote.success());
    let inventory = s.dir.join("hosts.yaml");
    std::fs::write(
        &inventory,
        format!("hosts:\n  old: {{transport: local, fathom: {}, target: /tmp}}\n", fake.display()),
    )
    .unwrap();
    let path = scenario(&s, 2);
    let out = s.run(&["run", &path, "--hosts", inventory.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("host old (local): its fathom is 0.0.1") && err.contains("--push-agent"), "{err}");
    // nothing was stored: the run never started
    assert!(!s.dir.join("results/fathom.db").exists() || s.run(&["runs"]).stdout.starts_with(b"no runs"));
}

/// Three sshd on 127.0.0.2-4, a user key they accept, and an inventory reaching them
/// with that key and a known_hosts file of their host keys.
struct SshHosts {
    _servers: Vec<Sshd>,
    inventory: String,
}

fn ssh_hosts(s: &Scratch, names: &[&str], known_hosts: impl Fn(&[Sshd]) -> String) -> SshHosts {
    let (user_key, user_pub) = servers::ssh_key(&s.dir, "user_key");
    let servers: Vec<Sshd> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            Sshd::start(
                &s.dir.join(format!("sshd-{n}")),
                &format!("127.0.0.{}", i + 2),
                servers::free_port(),
                &user_pub,
            )
        })
        .collect();
    let known = s.dir.join("known_hosts");
    std::fs::write(&known, known_hosts(&servers)).unwrap();
    let mut text = String::from("hosts:\n");
    for (n, sshd) in names.iter().zip(&servers) {
        let dir = s.dir.join(format!("target-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        text.push_str(&format!(
            "  {n}:\n    address: {}\n    port: {}\n    user: {}\n    fathom: {FATHOM}\n    target: {}\n    \
             ssh_options: [-F, /dev/null, -i, {}, -o, UserKnownHostsFile={}, -o, GlobalKnownHostsFile=/dev/null]\n",
            sshd.addr,
            sshd.port,
            whoami(),
            dir.display(),
            user_key.display(),
            known.display()
        ));
    }
    let path = s.dir.join("hosts.yaml");
    std::fs::write(&path, text).unwrap();
    SshHosts { _servers: servers, inventory: path.display().to_string() }
}

fn whoami() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn known_all(servers: &[Sshd]) -> String {
    servers.iter().map(|s| format!("{}\n", s.known_host)).collect()
}

#[test]
fn a_wrong_host_key_is_refused() {
    let s = Scratch::new("hosts-hostkey");
    // the known_hosts file holds another key for the host
    let (_, other) = servers::ssh_key(&s.dir, "impostor");
    let hosts = ssh_hosts(&s, &["keyed"], |servers| {
        format!(
            "[{}]:{} {}\n",
            servers[0].addr,
            servers[0].port,
            other.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
        )
    });
    let path = scenario(&s, 2);
    let out = s.run(&["run", &path, "--hosts", &hosts.inventory]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("host keyed (ssh):") && err.contains("Host key verification failed"), "{err}");
    assert!(!Path::new(&s.dir.join("target-keyed/fathom-r.dat")).exists());
}

#[test]
fn an_unreachable_host_stops_the_run_before_it_starts() {
    let s = Scratch::new("hosts-unreachable");
    let port = servers::free_port();
    let inventory = s.dir.join("hosts.yaml");
    std::fs::write(
        &inventory,
        format!("hosts:\n  far: {{address: 127.0.0.1, port: {port}, target: /tmp, ssh_options: [-F, /dev/null]}}\n"),
    )
    .unwrap();
    let path = scenario(&s, 2);
    let out = s.run(&["run", &path, "--hosts", inventory.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("host far (ssh):") && err.contains("Connection refused"), "{err}");
    // without an inventory, a placed workload says what is missing
    let out = s.run(&["run", &path]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--hosts FILE"), "{}", text(&out));
}

/// This build's static twin, `fathom-static` beside the fathom under test, which
/// `--push-agent` copies to hosts: `make test` builds the tests and the fathom they run
/// statically (musl), and puts it there.
fn static_build() -> std::path::PathBuf {
    let built = Path::new(FATHOM).parent().unwrap().join("fathom-static");
    assert!(built.is_file(), "no static build at {}: `make test` puts it there (scripts/test.sh)", built.display());
    built
}

/// This fathom's build identity, as `fathom --version` says it: `0.1.0 (7ab8b6a)`.
fn build() -> String {
    let out = Command::new(FATHOM).arg("--version").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    said.strip_prefix("fathom ").unwrap_or_else(|| panic!("{said}")).to_string()
}

/// The file `--push-agent` copies this fathom to: `fathom-0.1.0-7ab8b6a`.
fn pushed_name() -> String {
    let build = build();
    let words: Vec<&str> =
        build.split(|c: char| !c.is_ascii_alphanumeric() && c != '.').filter(|w| !w.is_empty()).collect();
    format!("fathom-{}", words.join("-"))
}

#[test]
fn the_build_is_in_version_and_in_the_stored_run() {
    let s = Scratch::new("hosts-build");
    let build = build();
    // the version, then the commit and whether the sources differed from it, or `unknown`
    let (version, rest) = build.split_once(" (").unwrap_or_else(|| panic!("{build}"));
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    assert!(rest.ends_with(')') && rest.len() > 1, "{build}");
    let inventory = s.local_inventory(&["here"]);
    let out = s.run(&["run", &scenario(&s, 1), "--hosts", &inventory, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    let stored: String =
        s.db().query_row("SELECT json_extract(environment, '$.fathom_build') FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(stored, build);
}

#[test]
fn hosts_join_one_at_a_time_with_add_host() {
    let s = Scratch::new("hosts-join");
    let hosts = s.local_inventory(&["j1", "j2", "j3"]);
    let path = s.scenario(
        "name: joining\n\
         workloads:\n\
         \x20 r:\n\
         \x20   hosts: all\n\
         \x20   per_host: 2\n\
         \x20   rw: randread\n\
         \x20   bs: 4k\n\
         \x20   size: 8m\n\
         \x20   rate_iops: 600\n\
         \x20   duration: 6s\n\
         timeline:\n\
         \x20 - ramp: r\n\
         \x20   add_host: 1\n\
         \x20   every: 2s\n\
         \x20   until: 3\n\
         expect:\n\
         \x20 - 'r.iops during \"r x6\" >= 0.5 x \"r x2\"'\n",
    );
    let out = s.run(&["run", path.to_str().unwrap(), "--hosts", &hosts, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    let show = s.show_json();
    // a phase per host count, each named by its workers, the last one too
    let labels: Vec<&str> = show["phases"].as_array().unwrap().iter().map(|p| p["label"].as_str().unwrap()).collect();
    assert_eq!(labels, vec!["r x2", "r x4", "r x6"], "{show}");
    let judged = &show["expectations"][0];
    assert!(judged["measured"].as_f64().is_some_and(|m| m > 0.0) && judged["passed"] == true, "{judged}");
    let first_second: Vec<(String, i64)> = s
        .db()
        .prepare(
            "SELECT w.host, min(s.t) FROM samples s JOIN workers w ON w.run_id = s.run_id AND w.id = s.worker \
             GROUP BY w.host ORDER BY w.host",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let starts: Vec<i64> = first_second.iter().map(|(_, t)| *t).collect();
    assert_eq!(starts[1] - starts[0], 2, "{first_second:?}");
    assert_eq!(starts[2] - starts[1], 2, "{first_second:?}");
    // `add_host` on a workload that is not placed is refused at its line
    let bad = s.scenario("name: x\nworkloads:\n  r: {target: /tmp, rw: read, duration: 4s}\ntimeline:\n  - ramp: r\n    add_host: 1\n    every: 2s\n    until: 2\n");
    let out = s.run(&["lint", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains(":6: timeline.0.add_host: `r` is not placed on hosts"), "{}", text(&out));
}

/// A file the shell of a hostile inventory value would create, unique to this test
/// process, and whether it was.
struct Pwned(std::path::PathBuf);

impl Pwned {
    fn new(tag: &str) -> Pwned {
        let p = std::env::temp_dir().join(format!("PWNED-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_file(&p);
        Pwned(p)
    }

    fn path(&self) -> String {
        self.0.display().to_string()
    }

    fn assert_untouched(&self) {
        assert!(!self.0.exists(), "{} was created: a command ran on the host", self.0.display());
    }
}

impl Drop for Pwned {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn option_like_hosts_and_users_are_refused_before_ssh_runs() {
    let s = Scratch::new("hosts-options");
    let path = scenario(&s, 2);
    let pwned = Pwned::new("proxy");
    let proxy = format!("-oProxyCommand=touch${{IFS}}{}", pwned.path());
    let inventory = s.dir.join("hosts.yaml");
    for (entry, key) in [
        (format!("'{proxy}': {{target: /tmp}}"), format!("hosts.{proxy}.name")),
        (format!("evil: {{address: '{proxy}', target: /tmp}}"), "hosts.evil.address".into()),
        (format!("evil: {{user: '{proxy}', target: /tmp}}"), "hosts.evil.user".into()),
    ] {
        std::fs::write(&inventory, format!("hosts:\n  {entry}\n")).unwrap();
        let out = s.run(&["run", &path, "--hosts", inventory.to_str().unwrap()]);
        pwned.assert_untouched();
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        let want = format!("{}:2: {key}: `{proxy}` starts with `-`", inventory.display());
        assert!(err.contains(&want), "want {want}\n{err}");
    }
}

/// With `--hosts`, a workload that says no `hosts:` runs on every host of the inventory
/// (as X-Ray and HCIBench run a workload on every VM), its `jobs` on each, on each host's
/// inventory target: also when the scenario gives a target of its own.
#[test]
fn a_workload_without_hosts_runs_on_every_host_of_the_inventory() {
    let s = Scratch::new("hosts-every");
    let hosts = s.local_inventory(&["e1", "e2"]);
    let own = s.dir.join("scenario-target");
    std::fs::create_dir_all(&own).unwrap();
    let path = s.scenario(&format!(
        "name: everywhere\n\
         workloads:\n\
         \x20 r:\n\
         \x20   jobs: 2\n\
         \x20   rw: randread\n\
         \x20   bs: 4k\n\
         \x20   size: 8m\n\
         \x20   rate_iops: 800\n\
         \x20   duration: 3s\n\
         \x20 w:\n\
         \x20   target: {}\n\
         \x20   rw: write\n\
         \x20   bs: 64k\n\
         \x20   size: 8m\n\
         \x20   rate_iops: 100\n\
         \x20   duration: 3s\n",
        own.display()
    ));
    let out = s.run(&["run", path.to_str().unwrap(), "--hosts", &hosts]);
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("r: no `hosts:` in the scenario: on every host of the inventory (e1, e2), 2 workers each"),
        "{said}"
    );
    let show = s.show_json();
    let r = per_host(&show);
    assert_eq!(r.iter().map(|h| (h.0.as_str(), h.1)).collect::<Vec<_>>(), vec![("e1", 2), ("e2", 2)], "{show}");
    // each host's files are on its inventory target, none on the scenario's own
    for h in ["e1", "e2"] {
        let files: Vec<String> = std::fs::read_dir(s.dir.join(format!("host-{h}")))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(files.iter().any(|f| f.contains('r')) && files.iter().any(|f| f.contains('w')), "{h}: {files:?}");
    }
    assert_eq!(std::fs::read_dir(&own).unwrap().count(), 0, "the scenario's target was used");
    // the environment names no target of the controller's (its stand-in was `null`)
    let targets = show["run"]["environment"]["targets"].as_array().unwrap();
    assert!(targets.iter().all(|t| t["path"] != "null"), "{targets:?}");
    // without --hosts the same scenario is refused for its missing target, as before
    let out = s.run(&["lint", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("missing `target`"), "{}", text(&out));
}

/// A `prefill` step on a workload placed on hosts fills each host's files there, through
/// its agent.
#[test]
fn a_prefill_step_fills_the_files_on_each_host() {
    let s = Scratch::new("hosts-prefill");
    let hosts = s.local_inventory(&["p1", "p2"]);
    let path = s.scenario(
        "name: filled\n\
         workloads:\n\
         \x20 r:\n\
         \x20   hosts: all\n\
         \x20   rw: randread\n\
         \x20   bs: 4k\n\
         \x20   size: 4m\n\
         \x20   rate_iops: 200\n\
         \x20   duration: 2s\n\
         timeline:\n\
         \x20 - prefill: r\n\
         \x20 - start: r\n",
    );
    let out = s.run(&["run", path.to_str().unwrap(), "--hosts", &hosts, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    let show = s.show_json();
    let fills: Vec<&serde_json::Value> =
        show["events"].as_array().unwrap().iter().filter(|e| e["kind"] == "prefill").collect();
    assert_eq!(fills.len(), 1, "{show}");
    assert_eq!(fills[0]["status"], 0, "{show}");
    // the data is there: no block of the file is left as zeros (a fresh layout would be)
    for h in ["p1", "p2"] {
        let dir = s.dir.join(format!("host-{h}"));
        let file = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
        let data = std::fs::read(&file).unwrap();
        assert_eq!(data.len(), 4 << 20, "{}", file.display());
        assert!(data.chunks(4096).all(|b| b.iter().any(|&x| x != 0)), "{h}: a block of zeros");
    }
}

/// On hosts, per-size counts cross the wire: the asked-vs-achieved block sizes are what
/// the agents did, not 0%.
#[test]
fn block_sizes_on_hosts_are_counted() {
    let s = Scratch::new("hosts-sizes");
    let hosts = s.local_inventory(&["b1", "b2"]);
    let path = s.scenario(
        "name: split\n\
         workloads:\n\
         \x20 r:\n\
         \x20   hosts: all\n\
         \x20   rw: randread\n\
         \x20   bssplit: 8k/90:32k/10\n\
         \x20   size: 8m\n\
         \x20   rate_iops: 1000\n\
         \x20   duration: 3s\n",
    );
    let out = s.run(&["run", path.to_str().unwrap(), "--hosts", &hosts, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    let show = s.show_json();
    let sizes = show["workloads"][0]["fidelity"]["block_sizes"].as_array().unwrap();
    let share = |bytes: u64| {
        sizes.iter().find(|z| z["bytes"] == bytes).and_then(|z| z["achieved_percent"].as_f64()).unwrap_or(-1.0)
    };
    assert!((share(8192) - 90.0).abs() < 5.0, "{sizes:?}");
    assert!((share(32768) - 10.0).abs() < 5.0, "{sizes:?}");
}

/// Each host's own latency percentiles: its histograms are stored per host, the
/// workload's are theirs merged. `show`, `--json` and the report give p50, p99 and
/// p99.9 per host, and the report charts IOPS and p99 per host over time.
#[test]
fn each_host_has_its_own_percentiles_and_charts() {
    let s = Scratch::new("hosts-percentiles");
    let hosts = s.local_inventory(&["q1", "q2"]);
    let path = scenario(&s, 3);
    let out = s.run(&["run", &path, "--hosts", &hosts, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    let table = &said[said.find("per host").unwrap_or_else(|| panic!("{said}"))..];
    assert!(
        table.lines().nth(1).is_some_and(|l| l.contains("p50") && l.contains("p99") && l.contains("p99.9")),
        "{table}"
    );
    let show = s.show_json();
    let merged = show["workloads"][0]["ops"][0]["latency"]["p99_us"].as_f64().unwrap();
    let mut p99s = Vec::new();
    for h in show["workloads"][0]["hosts"].as_array().unwrap() {
        let q = |k: &str| h[k].as_f64().unwrap_or_else(|| panic!("no {k}: {h}"));
        assert!(q("p50_us") > 0.0 && q("p50_us") <= q("p99_us") && q("p99_us") <= q("p99_9_us"), "{h}");
        p99s.push(q("p99_us"));
    }
    assert_eq!(p99s.len(), 2, "{show}");
    // a merge's percentile lies between its parts' (histogram buckets: within 1%)
    let (lo, hi) = (p99s.iter().cloned().fold(f64::MAX, f64::min), p99s.iter().cloned().fold(0.0, f64::max));
    assert!(merged >= lo * 0.99 && merged <= hi * 1.01, "{merged} outside {p99s:?}");
    // the report: the table has them, and a chart of each host's IOPS and p99 over time
    let page = s.dir.join("report.html");
    let charts = s.dir.join("charts");
    let out = s.run(&["report", "-o", page.to_str().unwrap(), "--svg", charts.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("data-host=\"q1\" data-metric=\"p99_us\""), "no per-host p99 in the table");
    for id in ["ts-hosts-iops", "ts-hosts-p99"] {
        let svg = std::fs::read_to_string(charts.join(format!("{id}.svg"))).unwrap_or_else(|_| panic!("no {id}"));
        assert!(svg.contains("r q1") && svg.contains("r q2"), "{id}: {svg}");
    }
}

/// Each agent observes its host as fathom does here: its own CPU (`fathom:HOST`
/// `cpu_cores`), the host's CPU and network interfaces (`host:HOST`) and the devices
/// under its targets (`device:NAME@HOST`), sent to the controller and stored with the
/// run; the report draws each host's device charts.
#[test]
fn agents_send_their_cpu_and_devices() {
    use std::os::unix::fs::MetadataExt;
    let s = Scratch::new("hosts-observe");
    let hosts = s.local_inventory(&["o1", "o2"]);
    let path = scenario(&s, 4);
    let out = s.run(&["run", &path, "--hosts", &hosts, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    let rows: Vec<(String, String, f64)> = s
        .db()
        .prepare("SELECT source, name, value FROM observations")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let values = |source: &str, name: &str| -> Vec<f64> {
        rows.iter().filter(|r| r.0 == source && r.1 == name).map(|r| r.2).collect()
    };
    let on_device = libc::major(std::fs::metadata(s.dir.join("host-o1")).unwrap().dev()) != 0;
    for h in ["o1", "o2"] {
        let cpu = values(&format!("fathom:{h}"), "cpu_cores");
        assert!(cpu.len() >= 3, "{h}: {} seconds of the agent's CPU", cpu.len());
        assert!(cpu.iter().any(|&c| c > 0.0), "{h}: the agent did IO with no CPU: {cpu:?}");
        assert!(!values(&format!("host:{h}"), "usr_pct").is_empty(), "{h}: no host CPU");
        // every interface that is up, its loopback aside, as a running count of bytes
        for dev in up_interfaces() {
            let rx = values(&format!("host:{h}"), &format!("node_network_receive_bytes_total{{device=\"{dev}\"}}"));
            assert!(rx.len() >= 3 && rx.windows(2).all(|w| w[0] <= w[1]), "{h} {dev}: {rx:?}");
        }
        let lo = rows.iter().find(|r| r.0 == format!("host:{h}") && r.1.contains("device=\"lo\""));
        assert!(lo.is_none(), "{h}: its loopback carried none of the run: {lo:?}");
        if on_device {
            let devices: Vec<&String> = rows
                .iter()
                .map(|r| &r.0)
                .filter(|src| src.starts_with("device:") && src.ends_with(&format!("@{h}")))
                .collect();
            assert!(!devices.is_empty(), "{h}: no device under its target");
        }
    }
    let show = s.show_json();
    let observed = show["observed"].as_array().unwrap();
    assert!(observed.iter().any(|o| o["source"] == "fathom:o1" && o["name"] == "cpu_cores"), "{show}");
    if on_device {
        let charts = s.dir.join("charts");
        let out = s.run(&["report", "-o", s.dir.join("r.html").to_str().unwrap(), "--svg", charts.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out));
        let names: Vec<String> = std::fs::read_dir(&charts)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        for h in ["o1", "o2"] {
            assert!(names.iter().any(|n| n.starts_with("obs-") && n.ends_with(&format!("@{h}-iops.svg"))), "{names:?}");
        }
    }
}

/// The interfaces of this machine that are up (IFF_UP in sysfs's flags), the loopback aside.
fn up_interfaces() -> Vec<String> {
    let up = |e: &std::fs::DirEntry| {
        let flags = std::fs::read_to_string(e.path().join("flags")).unwrap_or_default();
        u32::from_str_radix(flags.trim().trim_start_matches("0x"), 16).is_ok_and(|f| f & 0x1 != 0 && f & 0x8 == 0)
    };
    let entries = std::fs::read_dir("/sys/class/net").unwrap().map(Result::unwrap);
    entries.filter(up).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
}

/// A placed workload's start line says how its hosts opened their files, as a local
/// run on the same directory says it (it said `buffered` while the agents opened with
/// O_DIRECT: the controller's stand-in was described).
#[test]
fn a_placed_workload_says_how_its_hosts_opened_its_files() {
    let s = Scratch::new("hosts-direct");
    let hosts = s.local_inventory(&["od1"]);
    let opened = |out: &std::process::Output| {
        let all = text(out);
        let line = all.lines().find(|l| l.contains("] r: randread")).unwrap_or_else(|| panic!("{all}")).to_string();
        assert!(line.contains("O_DIRECT") != line.contains("buffered"), "{line}");
        line.contains("O_DIRECT")
    };
    let body = "name: od\nworkloads:\n  r: {hosts: all, rw: randread, bs: 4k, size: 8m, direct: true, duration: 1s}\n";
    let path = s.scenario(body);
    let placed = s.run(&["run", path.to_str().unwrap(), "--hosts", &hosts]);
    assert!(placed.status.success(), "{}", text(&placed));
    let here = s.scenario(&body.replace("hosts: all", &format!("target: {}", s.dir.join("host-od1").display())));
    let local = s.run(&["run", here.to_str().unwrap()]);
    assert!(local.status.success(), "{}", text(&local));
    assert_eq!(opened(&placed), opened(&local), "{}\n---\n{}", text(&placed), text(&local));
}

/// Local agents and the controller share one machine: summed, their CPU is that
/// machine's, never more than its 100 %, and the environment says each host's machine
/// and CPU topology.
#[test]
fn local_hosts_are_one_machines_cpu() {
    let s = Scratch::new("hosts-cpu");
    let hosts = s.local_inventory(&["m1", "m2", "m3"]);
    let path = s.scenario(
        "name: cpu\nworkloads:\n  r: {engine: null, rw: randread, rate_iops: 100, duration: 2s}\n\
         results:\n  - name: Cluster CPU\n    observed: cpu\n    aggregate: sum\n",
    );
    let out = s.run(&["run", path.to_str().unwrap(), "--hosts", &hosts, "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let view = &show["results"][0];
    assert_eq!(view["unit"], "% busy", "{view}");
    let highest = view["series"].as_array().unwrap().iter().map(|p| p["value"].as_f64().unwrap()).fold(0.0, f64::max);
    assert!(highest <= 100.0 + 1e-6, "{view}");
    let env = &show["run"]["environment"];
    let machine = env["machine"].as_str().unwrap();
    assert!(!machine.is_empty() && ["m1", "m2", "m3"].iter().all(|h| env["hosts"][h]["machine"] == machine), "{env}");
    // and each host's CPU topology, this machine's
    let topology = &env["cpu_topology"];
    assert!(["m1", "m2", "m3"].iter().all(|h| &env["hosts"][h]["cpu_topology"] == topology), "{env}");
    assert!(env["hosts"]["m1"]["cpu_topology"]["sockets"].as_u64().is_some_and(|n| n > 0), "{env}");
}

#[test]
fn push_agent_copies_this_fathom_where_it_is_missing() {
    let static_build = static_build();
    let s = Scratch::new("hosts-push");
    let hosts = ssh_hosts(&s, &["bare"], known_all);
    let push_dir = s.dir.join("pushed");
    let inventory = std::fs::read_to_string(&hosts.inventory).unwrap().replace(
        &format!("fathom: {FATHOM}"),
        &format!("fathom: /nonexistent/fathom\n    push_dir: {}", push_dir.display()),
    );
    std::fs::write(&hosts.inventory, inventory).unwrap();
    let path = scenario(&s, 2);
    let out = s.run(&["run", &path, "--hosts", &hosts.inventory]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not on that host (install it, or use --push-agent)"));
    let out = s.run(&["run", &path, "--hosts", &hosts.inventory, "--push-agent"]);
    assert!(out.status.success(), "{}", text(&out));
    // the copy is this build's static twin (`make test` puts it there), which needs no C
    // library on the host, and it served the run as its agent
    let pushed = push_dir.join(pushed_name());
    assert_eq!(std::fs::read(&pushed).unwrap(), std::fs::read(&static_build).unwrap());
    let ldd = Command::new("ldd").arg(&pushed).output().unwrap();
    let said = String::from_utf8_lossy(&ldd.stdout) + String::from_utf8_lossy(&ldd.stderr);
    assert!(!said.contains("libc.so"), "the pushed fathom links the C library: {said}");
    assert_eq!(per_host(&s.show_json())[0].1, 2);
}

#[test]
fn an_agent_of_another_build_is_refused_naming_both_and_replaced_by_push_agent() {
    let static_build = static_build();
    let s = Scratch::new("hosts-build-other");
    let hosts = ssh_hosts(&s, &["older"], known_all);
    // what a fathom built from an older commit says: the same version and protocol
    let push_dir = s.dir.join("pushed");
    std::fs::create_dir_all(&push_dir).unwrap();
    let stale = push_dir.join("fathom-0.1.0");
    let script = "#!/bin/sh\necho '{\"type\":\"hello\",\"protocol\":3,\"version\":\"0.1.0\",\"host\":\"older\",\"cores\":1,\"memory_bytes\":null}'\ncat >/dev/null\n";
    // written by a child process, so that no descriptor of it leaks into a forked one
    let wrote = Command::new("sh")
        .args(["-c", "printf '%s' \"$1\" > \"$2\" && chmod +x \"$2\"", "sh", script])
        .arg(&stale)
        .status()
        .unwrap();
    assert!(wrote.success());
    let inventory = std::fs::read_to_string(&hosts.inventory).unwrap().replace(
        &format!("fathom: {FATHOM}"),
        &format!("fathom: {}\n    push_dir: {}", stale.display(), push_dir.display()),
    );
    std::fs::write(&hosts.inventory, inventory).unwrap();
    let path = scenario(&s, 2);
    let out = s.run(&["run", &path, "--hosts", &hosts.inventory]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    let both = format!("host older (ssh): its fathom is 0.1.0, agent protocol 3; this one is {}, protocol 6", build());
    assert!(err.contains(&both) && err.contains("--push-agent"), "{err}");
    // --push-agent copies this build there, under its own name, and runs it
    let out = s.run(&["run", &path, "--hosts", &hosts.inventory, "--push-agent"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read(push_dir.join(pushed_name())).unwrap(), std::fs::read(&static_build).unwrap());
    assert_eq!(per_host(&s.show_json())[0].1, 2);
}

#[test]
fn hostile_inventory_values_run_no_shell_on_the_host() {
    let static_build = static_build();
    let s = Scratch::new("hosts-quoting");
    let hosts = ssh_hosts(&s, &["quoted"], known_all);
    let original = std::fs::read_to_string(&hosts.inventory).unwrap();
    let (semi, subst) = (Pwned::new("semicolon"), Pwned::new("substitution"));
    let path = scenario(&s, 2);
    // a program path that would be shell: it is a path that is not there
    for program in [format!("/nonexistent/fathom; touch {} #", semi.path()), format!("/x$(touch {})", subst.path())] {
        let inventory = original.replace(&format!("fathom: {FATHOM}"), &format!("fathom: \"{program}\""));
        std::fs::write(&hosts.inventory, inventory).unwrap();
        let out = s.run(&["run", &path, "--hosts", &hosts.inventory]);
        semi.assert_untouched();
        subst.assert_untouched();
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(String::from_utf8_lossy(&out.stderr).contains("is not on that host"), "{}", text(&out));
    }
    // a push_dir with a space, `$(...)` and `;`: fathom is copied to exactly that
    // directory and runs from there
    let push_dir = s.dir.join(format!("push dir/$(touch {}); touch {} #", subst.path(), semi.path()));
    let inventory = original.replace(
        &format!("fathom: {FATHOM}"),
        &format!("fathom: /nonexistent/fathom\n    push_dir: \"{}\"", push_dir.display()),
    );
    std::fs::write(&hosts.inventory, inventory).unwrap();
    let out = s.run(&["run", &path, "--hosts", &hosts.inventory, "--push-agent"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read(push_dir.join(pushed_name())).unwrap(), std::fs::read(&static_build).unwrap());
    assert_eq!(per_host(&s.show_json())[0].1, 2);
    semi.assert_untouched();
    subst.assert_untouched();
}

/// The tests that judge a rate or a time of a light load (well under a core each), and so
/// hold the machine with at most one other such test: `make test` runs them after the
/// shared tests, two at once (see `Scratch::paired`).
mod paired {
    use super::*;

    #[test]
    fn local_agents_make_one_run_and_a_lost_one_makes_it_partial() {
        let s = Scratch::paired("hosts-local");
        let hosts = s.local_inventory(&["la1", "la2", "la3"]);
        // 6 s: la2 is lost at its third second or so, the others run on to the end
        let path = scenario(&s, 6);
        let port = servers::free_port();
        let addr = format!("127.0.0.1:{port}");
        let run = spawn_run(&s, &["run", &path, "--hosts", &hosts, "-q", "--prometheus", &addr]);
        // live, each worker's counters carry its host; the workload's histogram merges them
        let start = Instant::now();
        let has_all = |m: &str| ["la1", "la2", "la3"].iter().all(|h| m.contains(&format!("host=\"{h}\",op=\"read\"")));
        let metrics = loop {
            let m = servers::get(port, "/metrics").unwrap_or_default();
            if has_all(&m) {
                break m;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "no host labels: {m}");
            std::thread::sleep(Duration::from_millis(200));
        };
        assert!(
            metrics.contains("fathom_latency_seconds_count{run=\"1\",workload=\"r\",group=\"\",host=\"all\""),
            "{metrics}"
        );
        kill_agent_when_running(&s, "la2", Duration::from_millis(1000));
        let out = wait_output(run);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let show = s.show_json();
        assert_eq!(show["run"]["status"], "partial", "{show}");
        let hosts = per_host(&show);
        let names: Vec<&str> = hosts.iter().map(|h| h.0.as_str()).collect();
        assert_eq!(names, vec!["la1", "la2", "la3"]);
        // every host ran its two workers: each at a third of the rate while it lived; the
        // lost one's samples up to then are kept
        for (host, workers, iops) in &hosts {
            assert_eq!(*workers, 2);
            if host == "la2" {
                assert!(*iops > 20.0 && *iops < 350.0, "{host}: {iops}");
            } else {
                // a third of 1,200 each: never above it (one host running the whole rate, or a
                // half, would be 1,200 or 600), and not a sixth (200) or less; a busy machine may
                // leave a host somewhat short of its share, never over it
                assert!(*iops <= 420.0 && *iops >= 300.0, "{host}: {iops} IOPS, its share is 400");
            }
        }
        let events = show["events"].as_array().unwrap();
        let lost = events.iter().find(|e| e["kind"] == "host-lost").unwrap_or_else(|| panic!("{show}"));
        assert_eq!(lost["label"], "la2");
        let at = lost["at_ms"].as_f64().unwrap() / 1000.0;
        assert!(at > 2.0 && at < 6.0, "{at}");
        // each worker is recorded on its host
        let on: Vec<(i64, String)> = s
            .db()
            .prepare("SELECT id, host FROM workers ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let hosts_of: Vec<&str> = on.iter().map(|(_, h)| h.as_str()).collect();
        assert_eq!(hosts_of, vec!["la1", "la1", "la2", "la2", "la3", "la3"]);
        // clocks were measured, and no agent is left
        let offsets: i64 = s
            .db()
            .query_row("SELECT count(*) FROM observations WHERE name = 'clock_offset_ms'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(offsets, 3);
        for n in ["la1", "la2", "la3"] {
            assert!(servers::running(&format!("agent --name {n}")).is_empty(), "{n}");
        }
    }

    #[test]
    fn three_hosts_over_ssh_and_one_lost() {
        let s = Scratch::paired("hosts-ssh");
        let hosts = ssh_hosts(&s, &["ssh1", "ssh2", "ssh3"], known_all);
        let path = scenario(&s, 6);
        let run = spawn_run(&s, &["run", &path, "--hosts", &hosts.inventory]);
        kill_agent_when_running(&s, "ssh3", Duration::from_millis(1500));
        let out = wait_output(run);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("ssh1 (ssh): clock offset"), "{err}");
        let show = s.show_json();
        assert_eq!(show["run"]["status"], "partial");
        let hosts = per_host(&show);
        assert_eq!(hosts.len(), 3);
        for (host, workers, iops) in &hosts {
            assert_eq!(*workers, 2);
            if host == "ssh3" {
                assert!(*iops > 0.0 && *iops < 380.0, "{host}: {iops}");
            } else {
                // a third of 1,200 each: never above it (one host running the whole rate, or a
                // half, would be 1,200 or 600), and not a sixth (200) or less; a busy machine may
                // leave a host somewhat short of its share, never over it
                assert!(*iops <= 420.0 && *iops >= 300.0, "{host}: {iops} IOPS, its share is 400");
            }
        }
        // each host laid out its own target
        for n in ["ssh1", "ssh2", "ssh3"] {
            assert!(s.dir.join(format!("target-{n}/fathom-r.dat")).exists(), "{n}");
        }
        assert!(servers::running("agent --name ssh").is_empty());
    }

    #[test]
    fn ctrl_c_tells_every_agent_to_stop_and_keeps_their_seconds() {
        let s = Scratch::paired("hosts-interrupt");
        let hosts = s.local_inventory(&["int1", "int2"]);
        let path = scenario(&s, 30);
        let run = spawn_run(&s, &["run", &path, "--hosts", &hosts, "-q"]);
        wait_for_samples(&s, "int2");
        std::thread::sleep(Duration::from_millis(3000));
        // SIGINT to the controller alone, as a terminal's Ctrl-C reaches its process group
        // (the agents have groups of their own)
        let status = Command::new("kill").args(["-INT", &run.id().to_string()]).status().unwrap();
        assert!(status.success());
        let out = wait_output(run);
        assert_eq!(out.status.code(), Some(130), "{}", text(&out));
        let show = s.show_json();
        assert_eq!(show["run"]["status"], "aborted");
        // both hosts' seconds up to the interrupt are stored
        for (host, workers, iops) in per_host(&show) {
            assert_eq!(workers, 2, "{host}");
            assert!(iops > 300.0, "{host}: {iops}");
        }
        assert!(servers::running("agent --name int").is_empty());
    }

    /// `rate_iops_per_host`: "4,000 IOPS per host" as written, whatever the number of hosts
    /// (also with no `hosts:`, on every host of the inventory); checked as `rate_iops` is.
    #[test]
    fn a_rate_per_host_is_each_hosts_rate() {
        let s = Scratch::paired("hosts-rate");
        let hosts = s.local_inventory(&["r1", "r2"]);
        let body = |extra: &str| {
            format!(
                "name: per-host\n\
             workloads:\n\
             \x20 r:\n\
             \x20   per_host: 2\n\
             \x20   hosts: all\n\
             \x20   rw: randread\n\
             \x20   bs: 4k\n\
             \x20   size: 8m\n\
             \x20   duration: 4s\n\
             \x20   rate_iops_per_host: 300\n{extra}"
            )
        };
        let path = s.scenario(&body(""));
        let out = s.run(&["run", path.to_str().unwrap(), "--hosts", &hosts, "-q"]);
        assert!(out.status.success(), "{}", text(&out));
        let show = s.show_json();
        for (host, workers, iops) in per_host(&show) {
            assert_eq!(workers, 2);
            assert!((iops / 300.0 - 1.0).abs() < 0.05, "{host}: {iops}");
        }
        let target = show["workloads"][0]["ops"][0]["target_iops"].as_f64().unwrap();
        assert_eq!(target, 600.0, "{show}");
        // refused as rate_iops is, at its line
        let bad = s.scenario(&body("    rate_iops: 100\n"));
        let out = s.run(&["lint", bad.to_str().unwrap(), "--hosts", &hosts]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(
            text(&out).contains(":11: workloads.r.rate_iops: set `rate_iops` or `rate_iops_per_host`, not both"),
            "{}",
            text(&out)
        );
        let bad = s.scenario(&body("").replace("300", "-1"));
        let out = s.run(&["lint", bad.to_str().unwrap(), "--hosts", &hosts]);
        assert!(
            text(&out).contains(":10: workloads.r.rate_iops_per_host: -1 must be a positive number of IOs per second"),
            "{}",
            text(&out)
        );
        let here =
            s.scenario("name: x\nworkloads:\n  r: {target: /tmp, rw: read, duration: 2s, rate_iops_per_host: 10}\n");
        let out = s.run(&["lint", here.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(":3: workloads.r.rate_iops_per_host: only applies on hosts"), "{}", text(&out));
    }
}

/// Appenders on hosts each grow a file of their own on their host, as on the
/// controller: two sharing one file wrote at the same offsets, the file holding half of
/// what they wrote.
#[test]
fn appenders_on_hosts_each_grow_a_file_of_their_own() {
    let s = Scratch::new("hosts-appenders");
    let hosts = s.local_inventory(&["ap1", "ap2"]);
    let path = s.scenario(
        "name: appenders\nworkloads:\n  log: {hosts: all, per_host: 2, rw: write, bs: 64k, extend: true, \
         rate_iops: 200, duration: 1s}\n",
    );
    let out = s.run(&["run", path.to_str().unwrap(), "--hosts", &hosts, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    let written = s.show_json()["workloads"][0]["ops"][0]["bytes"].as_u64().unwrap();
    let mut held = 0;
    for host in ["ap1", "ap2"] {
        let dir = s.dir.join(format!("host-{host}"));
        let mut files: Vec<(String, u64)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| (e.file_name().to_string_lossy().to_string(), e.metadata().unwrap().len()))
            .collect();
        files.sort();
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["fathom-log.0.dat", "fathom-log.1.dat"], "{host}");
        assert!(files.iter().all(|(_, len)| *len > 0), "{host}: {files:?}");
        held += files.iter().map(|(_, len)| len).sum::<u64>();
    }
    // IOs still in flight at the end are written but not counted: the files may hold more
    assert!(held >= written && written > 0, "the files hold {held} bytes of the {written} written");
}
