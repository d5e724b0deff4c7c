//! What the integration tests share: a scratch directory with a target and a results
//! store, and ways to run the real `fathom` binary against it.

pub mod live;
pub mod machine;
pub mod servers;
pub mod tmpfs;
pub mod tmux;

use machine::{Held, Hold};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A scratch directory (on the build disk, so O_DIRECT works) with a target and a
/// results store, removed at the end.
pub struct Scratch {
    pub dir: PathBuf,
    /// The machine, held for as long as the directory is there.
    held: Option<Held>,
    /// How long the test waited for the machine, and since when it holds it.
    timing: (std::time::Duration, std::time::Instant),
}

/// Where each test's timing is appended when set (`bench/suite-times.py` sets it): a
/// line per scratch directory, `test<TAB>shared|paired|alone<TAB>waited s<TAB>held
/// s<TAB>held since (seconds since the epoch)`.
const TIMES: &str = "SUITE_TEST_TIMES";

impl Scratch {
    /// An inventory (hosts.yaml, its path returned) of local-transport hosts named
    /// `names`, each with its own target directory `host-NAME` in the scratch dir.
    pub fn local_inventory(&self, names: &[&str]) -> String {
        let mut text = String::from("hosts:\n");
        for n in names {
            let dir = self.dir.join(format!("host-{n}"));
            std::fs::create_dir_all(&dir).unwrap();
            text.push_str(&format!("  {n}: {{transport: local, target: {}}}\n", dir.display()));
        }
        let path = self.dir.join("hosts.yaml");
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    /// The scratch directory `run-NAME`, the machine held with other tests.
    pub fn new(name: &str) -> Scratch {
        Scratch::holding(name, Hold::Shared)
    }

    /// The scratch directory `run-NAME`, once no other test runs: for a test that judges
    /// a rate or a time, which a busy machine would fail. Such a test lives in its file's
    /// `alone` module, which `make test` runs after the rest (scripts/test.sh): there it
    /// waits for no other test, and no other test waits for it.
    pub fn alone(name: &str) -> Scratch {
        Scratch::holding(name, Hold::Alone)
    }

    /// The scratch directory `run-NAME`, once no test runs but at most one other paired
    /// one: for a test that judges a rate or a time of a light load (well under a core and
    /// little IO: agents at a rate, a signal's stop, think time), which a busy machine would fail
    /// and one other such test, leaving it a core, does not. Such a test lives in its
    /// file's `paired` module, which `make test` runs after the shared tests, two at once.
    pub fn paired(name: &str) -> Scratch {
        Scratch::holding(name, Hold::Paired)
    }

    /// The scratch directory `run-NAME`, the machine held as `hold` says.
    fn holding(name: &str, hold: Hold) -> Scratch {
        let test = std::thread::current().name().unwrap_or_default().to_string();
        // a test that holds the machine apart lives in the module `make test` runs apart
        let (apart, module) = (hold != Hold::Shared, hold.name());
        assert!(
            !apart || test.contains(&format!("::{module}::")),
            "{test} holds the machine {module} outside `mod {module}`"
        );
        let asked = std::time::Instant::now();
        let held = machine::hold(hold);
        let mut s = Scratch::at(name);
        s.held = Some(held);
        s.timing = (asked.elapsed(), std::time::Instant::now());
        s
    }

    /// The scratch directory `run-NAME`, emptied; a name another test holds fails the
    /// test, as tests of every file run at once in one binary and would remove each
    /// other's files.
    fn at(name: &str) -> Scratch {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        assert!(!held.iter().any(|n| n == name), "two tests at once in scratch directory run-{name}");
        held.push(name.to_string());
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("run-{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let timing = (std::time::Duration::ZERO, std::time::Instant::now());
        Scratch { dir, held: None, timing }
    }

    pub fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Writes a scenario whose `defaults.target` is this scratch's data directory.
    pub fn scenario(&self, body: &str) -> PathBuf {
        let path = self.dir.join("scenario.yaml");
        let text = body.replace("TARGET", &self.data().display().to_string());
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn fathom(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fathom"));
        cmd.args(args).arg("--results").arg(self.dir.join("results")).current_dir(&self.dir);
        cmd.env_remove("FATHOM_RESULTS").env_remove("FATHOM_DISABLE_IO_URING");
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.fathom(args).output().unwrap()
    }

    pub fn db(&self) -> Connection {
        Connection::open(self.dir.join("results/fathom.db")).unwrap()
    }

    /// Every run recorded: its status and error, in order.
    pub fn runs(&self) -> Vec<(String, Option<String>)> {
        let db = self.db();
        let mut rows = db.prepare("SELECT status, error FROM runs ORDER BY id").unwrap();
        rows.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
    }

    /// The stored observations, per (source, name): the values by second.
    pub fn observations(&self) -> std::collections::BTreeMap<(String, String), Vec<(i64, f64)>> {
        let db = self.db();
        let mut stmt = db.prepare("SELECT source, name, t, value FROM observations ORDER BY t").unwrap();
        let mut out: std::collections::BTreeMap<(String, String), Vec<(i64, f64)>> = Default::default();
        for row in stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap() {
            let (source, name, t, v): (String, String, i64, f64) = row.unwrap();
            out.entry((source, name)).or_default().push((t, v));
        }
        out
    }

    pub fn show_json(&self) -> serde_json::Value {
        let out = self.run(&["show", "last", "--json"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(path) = std::env::var_os(TIMES) {
            let test = std::thread::current().name().unwrap_or("?").to_string();
            let kind = self.held.as_ref().map_or("shared", |h| h.hold().name());
            let (waited, held) = (self.timing.0.as_secs_f64(), self.timing.1.elapsed().as_secs_f64());
            let since =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64() - held;
            let line = format!("{test}\t{kind}\t{waited:.2}\t{held:.2}\t{since:.2}\n");
            let file = std::fs::OpenOptions::new().create(true).append(true).open(path);
            let _ = file.and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        let name = self.dir.file_name().unwrap().to_string_lossy().trim_start_matches("run-").to_string();
        HELD.lock().unwrap_or_else(|e| e.into_inner()).retain(|n| *n != name);
    }
}

/// The names of the scratch directories tests hold now.
static HELD: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Runs headless Chromium (Debian's `chromium`) on a local file with `args`.
pub fn chromium(page: &Path, args: &[&str]) -> Output {
    Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0"])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium is installed by scripts/install-deps.sh test")
}

pub fn text(out: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The op summaries of workload `name` in `show --json` output.
pub fn ops<'a>(show: &'a serde_json::Value, name: &str) -> &'a Vec<serde_json::Value> {
    let w = show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap();
    w["ops"].as_array().unwrap()
}

/// The IOs open-loop workload `name` had due and never sent, as its `rate-not-kept`
/// warning counts them (none without the warning).
pub fn unsent(show: &serde_json::Value, name: &str) -> f64 {
    let lead = format!("{name} did not keep its rate: ");
    let warnings = show["warnings"].as_array().unwrap();
    let said = warnings.iter().filter(|w| w["code"] == "rate-not-kept").filter_map(|w| w["message"].as_str());
    let count = said.filter_map(|m| m.strip_prefix(&lead)).filter_map(|m| m.split_whitespace().next()).next();
    count.map_or(0.0, |n| n.replace(',', "").parse().unwrap())
}

/// How far a bounded fathom may go before it is killed: how much CPU it may work (time
/// on the clock would fail it on a machine busy with other tests), and how long it may
/// wait on the clock (reading a FIFO works nothing and would wait forever).
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    pub cpu: std::time::Duration,
    pub clock: std::time::Duration,
}

/// The bound of [`bounded`]: a refusal is immediate, so any of these is a hang.
pub const REFUSED_PROMPTLY: Bound =
    Bound { cpu: std::time::Duration::from_secs(20), clock: std::time::Duration::from_secs(60) };

/// Runs `cmd` (a fathom of `s`) within `bound`: its output, or why it was killed. Its
/// output goes to files in the scratch directory, as a full pipe would stall it.
pub fn within(s: &Scratch, mut cmd: Command, bound: Bound) -> Result<Output, String> {
    let (out, err) = (s.dir.join("bounded.stdout"), s.dir.join("bounded.stderr"));
    cmd.stdout(std::fs::File::create(&out).unwrap()).stderr(std::fs::File::create(&err).unwrap());
    let started = std::time::Instant::now();
    let mut child = cmd.spawn().unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let worked = cpu_time(child.id());
        if worked > bound.cpu || started.elapsed() > bound.clock {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {worked:?} of CPU, {:?} in all", started.elapsed()));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let read = |path: &Path| std::fs::read(path).unwrap_or_default();
    Ok(Output { status, stdout: read(&out), stderr: read(&err) })
}

/// The CPU time process `pid` has used so far (user and system), from /proc; zero once
/// it is gone.
fn cpu_time(pid: u32) -> std::time::Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // the fields after the command name, which may hold spaces and parentheses
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    // utime and stime, fields 14 and 15 of the line, are 12 and 13 after the name
    let ticks: u64 = [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<u64>().ok()).sum();
    // SAFETY: sysconf only reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    std::time::Duration::from_millis(ticks * 1000 / per_second)
}

/// Runs fathom with `args` within [`REFUSED_PROMPTLY`] (the test failed past it): for
/// inputs that must be refused, not read forever (a FIFO, a device, an include that
/// multiplies).
pub fn bounded(s: &Scratch, args: &[&str]) -> Output {
    within(s, s.fathom(args), REFUSED_PROMPTLY).unwrap_or_else(|e| panic!("fathom {args:?}: {e}"))
}

/// Two tests that name the same scratch directory fail only when they happen to run
/// at once: every name given to `Scratch::new` or `Scratch::alone` in the test sources
/// is checked to be given once, so the clash fails every run instead.
#[test]
fn every_scratch_directory_is_named_once() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration");
    let mut seen: std::collections::BTreeMap<String, String> = Default::default();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for call in ["Scratch::new(\"", "Scratch::alone(\""] {
            for (at, _) in text.match_indices(call) {
                let rest = &text[at + call.len()..];
                let name = &rest[..rest.find('"').unwrap()];
                let file = path.file_name().unwrap().to_string_lossy().to_string();
                if let Some(first) = seen.insert(name.to_string(), file.clone()) {
                    panic!("scratch directory {name} is named in {first} and again in {file}");
                }
            }
        }
    }
    assert!(seen.len() > 100, "only {} scratch names found", seen.len());
}
