//! The programs fathom starts (fio, pgbench, PostgreSQL, iperf3, a timeline's `exec`
//! command). Each leads a process group of its own, so that a terminal's Ctrl-C reaches
//! fathom alone, which then stops them itself and keeps what they measured; and so that
//! stopping one stops what it started in turn (`sh -c 'sleep 37'`).
//!
//! While a run goes on, every group is known twice: to the signal handler, which kills
//! them all before a second Ctrl-C ends fathom at once ([`exit_on_second_signal`]), and
//! to the store, so that a fathom killed outright leaves rows from which the next
//! `fathom run` stops what it left ([`clean_up`]).

use crate::error::Result;
use crate::store::{FATHOM, ProcessRow, Status, Store};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a program asked to end (SIGINT, SIGALRM) has before its group is killed.
pub const GRACE: Duration = Duration::from_secs(1);

/// The groups the signal handler kills, as kill(2) targets (-pgid, or a pid that leads
/// no group of its own); 0 is a free slot. A fixed table of atomics: a signal handler
/// may neither lock nor allocate.
static TARGETS: [AtomicI32; 256] = [const { AtomicI32::new(0) }; 256];

/// The store the current run's processes are recorded in.
static RECORDER: Mutex<Option<(Store, i64)>> = Mutex::new(None);

/// The kill(2) target of what `pid` started: its whole group when it leads one.
fn target(pid: i32, pgid: i32) -> i32 {
    if pid == pgid { -pid } else { pid }
}

/// Which process `pid` is, beyond its number (which the kernel reuses): the host's
/// name, this boot's id and the process's start time in clock ticks after boot (field
/// 22 of /proc/PID/stat), as `HOST/BOOT/START`, with its process group. None when no
/// such process runs.
pub fn identity(pid: i32) -> Option<(String, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // the command name, in parentheses, may hold spaces: count fields after it
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // fields[0] is field 3 (the state); a zombie has ended
    if fields.first() == Some(&"Z") {
        return None;
    }
    let pgid = fields.get(2)?.parse().ok()?;
    let start = fields.get(19)?;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    Some((format!("{}/{}/{start}", this_host(), boot.trim()), pgid))
}

/// The programs running now, as kill(2) targets: `-pgid` for a group (a program and
/// what it started, as PostgreSQL's backends), a pid for a lone process. What the
/// observers count the CPU of ([`crate::observe::host::programs_cpu_seconds`]).
pub fn running() -> Vec<i32> {
    TARGETS.iter().map(|t| t.load(Ordering::SeqCst)).filter(|&t| t != 0).collect()
}

/// The processes whose parent is `pid` now, read from /proc.
pub fn children_of(pid: i32) -> Vec<i32> {
    let parent = |child: &str| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).ok()?;
        // the command name, in parentheses, may hold spaces: count fields after it
        stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
    };
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.bytes().all(|b| b.is_ascii_digit()) && parent(name) == Some(pid))
        .filter_map(|name| name.parse().ok())
        .collect()
}

/// This host's name, as the kernel has it.
fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_string()
}

/// A process group fathom answers for, known to the signal handler and recorded in the
/// run's store until dropped.
pub struct Tracked {
    pid: i32,
    slot: Option<usize>,
}

impl Tracked {
    /// Tracks `pid` (what its row calls `what`) and the group it leads.
    pub fn new(pid: i32, what: &str) -> Tracked {
        let Some((identity, pgid)) = identity(pid) else { return Tracked { pid, slot: None } };
        let kill = target(pid, pgid);
        let slot = TARGETS.iter().position(|t| t.compare_exchange(0, kill, Ordering::SeqCst, Ordering::SeqCst).is_ok());
        if let Some((store, run)) = RECORDER.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            let row = ProcessRow { pid: pid.into(), pgid: pgid.into(), identity, what: what.to_string() };
            if let Err(e) = store.add_process(*run, &row) {
                crate::terminal::say(&format!("warning: recording {what} (pid {pid}) in the results store: {e}"));
            }
        }
        Tracked { pid, slot }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            TARGETS[slot].store(0, Ordering::SeqCst);
        }
        if let Some((store, run)) = RECORDER.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            let _ = store.remove_processes(*run, Some(self.pid.into()));
        }
    }
}

/// A directory fathom makes for a run and removes at its end (a throwaway cluster's),
/// recorded in the run's store while it exists, so that the next `fathom run` removes it
/// if this fathom dies first ([`clean_up`]). Dropping this forgets it: drop it once the
/// directory is removed.
pub struct Leftover {
    path: String,
}

impl Leftover {
    /// Records `path` (absolute) with the run, when a run is recorded.
    pub fn new(path: &std::path::Path) -> Leftover {
        let path = path.display().to_string();
        if let Some((store, run)) = RECORDER.lock().unwrap_or_else(|e| e.into_inner()).as_ref()
            && let Err(e) = store.add_leftover(*run, &path)
        {
            crate::terminal::say(&format!("warning: recording {path} in the results store: {e}"));
        }
        Leftover { path }
    }
}

impl Drop for Leftover {
    fn drop(&mut self) {
        if let Some((store, run)) = RECORDER.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            let _ = store.remove_leftovers(*run, Some(&self.path));
        }
    }
}

/// Removes a directory a dead run left, if it is one fathom makes: an absolute path
/// whose name is a throwaway server's (`fathom-postgres-...`, `postgres-N`,
/// `fathom-mariadb-...`, `mariadb-N`), never through a symlink. What it says it
/// removed, if anything.
fn remove_leftover(path: &str) -> Option<String> {
    let p = std::path::Path::new(path);
    let name = p.file_name()?.to_str()?;
    let numbered = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    let ours = ["postgres", "mariadb"].iter().any(|dbms| {
        name.starts_with(&format!("fathom-{dbms}-")) || name.strip_prefix(&format!("{dbms}-")).is_some_and(numbered)
    });
    let dir = std::fs::symlink_metadata(p).ok()?.is_dir();
    (p.is_absolute() && ours && dir && std::fs::remove_dir_all(p).is_ok()).then(|| path.to_string())
}

/// A program fathom started, leading a process group of its own. Dropped before it was
/// waited for, its whole group is killed.
pub struct Group {
    child: Child,
    /// None once the program has ended and been reaped.
    tracked: Option<Tracked>,
}

impl Group {
    /// Starts `cmd` in a new process group; `what` names it in the store.
    pub fn spawn(cmd: &mut Command, what: &str) -> std::io::Result<Group> {
        let child = cmd.process_group(0).spawn()?;
        let tracked = Some(Tracked::new(child.id() as i32, what));
        Ok(Group { child, tracked })
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    pub fn stdout(&mut self) -> Option<std::process::ChildStdout> {
        self.child.stdout.take()
    }

    pub fn stderr(&mut self) -> Option<std::process::ChildStderr> {
        self.child.stderr.take()
    }

    /// Its standard input, for a program fed as it runs (a coprocess).
    pub fn stdin(&mut self) -> Option<std::process::ChildStdin> {
        self.child.stdin.take()
    }

    /// Sends `signal` to the whole group (nothing once it has been reaped).
    pub fn signal(&self, signal: i32) {
        if self.tracked.is_some() {
            // SAFETY: kill(2) of our own child's group, which has not been reaped.
            unsafe { libc::kill(-(self.child.id() as i32), signal) };
        }
    }

    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        let status = self.child.try_wait()?;
        if status.is_some() {
            self.tracked = None;
        }
        Ok(status)
    }

    pub fn wait(&mut self) -> std::io::Result<ExitStatus> {
        let status = self.child.wait();
        self.tracked = None;
        status
    }

    /// Waits for the program to end. When `stop()` says so or `deadline` passes, asks it
    /// to end with `gentle` (to its whole group; None: kills it at once) and kills the
    /// group if it has not ended [`GRACE`] later. Its status, and whether it was stopped.
    pub fn wait_stopping(
        &mut self,
        gentle: Option<i32>,
        deadline: Option<Instant>,
        stop: &dyn Fn() -> bool,
    ) -> std::io::Result<(ExitStatus, bool)> {
        let mut asked: Option<Instant> = None;
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok((status, asked.is_some()));
            }
            let now = Instant::now();
            match asked {
                None if stop() || deadline.is_some_and(|d| now >= d) => {
                    asked = Some(now);
                    self.signal(gentle.unwrap_or(libc::SIGKILL));
                }
                Some(at) if now >= at + GRACE => self.signal(libc::SIGKILL),
                _ => {}
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.tracked.is_some() {
            self.signal(libc::SIGKILL);
            let _ = self.wait();
        }
    }
}

/// Runs `cmd` to its end, as [`Command::output`] does, but in a group of its own that is
/// killed when `stop` is set: None then.
pub fn output(cmd: &mut Command, what: &str, stop: &AtomicBool) -> std::io::Result<Option<Output>> {
    output_until(cmd, what, stop, None)
}

/// [`output`], the program also killed once `deadline` is past: its output then, with
/// the status of a killed program (the caller knows its deadline).
pub fn output_until(
    cmd: &mut Command,
    what: &str,
    stop: &AtomicBool,
    deadline: Option<Instant>,
) -> std::io::Result<Option<Output>> {
    let mut group = Group::spawn(cmd.stdout(Stdio::piped()).stderr(Stdio::piped()), what)?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(group.child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(group.child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let (status, _) = group.wait_stopping(None, deadline, &|| stop.load(Ordering::Relaxed))?;
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    Ok((!stop.load(Ordering::Relaxed)).then_some(Output { status, stdout, stderr }))
}

/// Records the run's processes in `store` from now until the returned guard is dropped
/// (the run has ended: nothing of it is left to clean up). Its own connection, not the
/// run sink: a process is recorded before `spawn` returns, from before the collector
/// starts until after it ends, so a crash at any point leaves none unrecorded.
pub fn record_run(store: Store, run: i64) -> Result<RunRecord> {
    let me = std::process::id() as i32;
    if let Some((identity, pgid)) = identity(me) {
        store.add_process(run, &ProcessRow { pid: me.into(), pgid: pgid.into(), identity, what: FATHOM.into() })?;
    }
    *RECORDER.lock().unwrap_or_else(|e| e.into_inner()) = Some((store, run));
    RECORDING.store(true, Ordering::SeqCst);
    std::thread::Builder::new()
        .name("forced-stop".into())
        .spawn(end_when_forced)
        .map_err(|e| crate::error::Error::failed(format!("starting a thread: {e}")))?;
    Ok(RunRecord)
}

/// While it lives, the processes fathom starts are recorded with the run.
pub struct RunRecord;

impl Drop for RunRecord {
    fn drop(&mut self) {
        RECORDING.store(false, Ordering::SeqCst);
        if let Some((store, run)) = RECORDER.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = store.remove_processes(run, None);
            let _ = store.remove_leftovers(run, None);
        }
    }
}

/// Signals closer together than this are one interrupt delivered more than once: a
/// terminal's Ctrl-C reaches every process of the group, and `timeout` forwards what it
/// gets to the group as well, so fathom sees it two or three times. Those copies come
/// microseconds apart on an idle machine but may wait tens of ms for a CPU on a busy
/// one. A person's second Ctrl-C, which means "stop now", comes later than this.
const ONE_INTERRUPT_NS: u64 = 100_000_000;

/// When the first SIGINT, SIGTERM or SIGHUP arrived (CLOCK_MONOTONIC, ns); 0 before one.
static FIRST_SIGNAL_NS: AtomicU64 = AtomicU64::new(0);

/// A second interrupt asked to stop at once: the recorded run's thread marks it aborted
/// and exits (a signal handler may not write to the store).
static FORCED: AtomicBool = AtomicBool::new(false);

/// A run is recorded ([`record_run`]), with a thread that ends it on a forced stop.
static RECORDING: AtomicBool = AtomicBool::new(false);

/// What a run stopped at once says it ended by.
pub const FORCED_STOP: &str =
    "interrupted twice: stopped at once, the programs it started killed; the seconds stored before are kept";

/// CLOCK_MONOTONIC in ns (clock_gettime(2) is async-signal-safe).
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime(2) writes the timespec it is given, which lives here.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec as u64)
}

/// Makes a second SIGINT, SIGTERM or SIGHUP stop fathom at once, killing every group it started
/// first. The first stops the run in order (the flags registered after this handler);
/// a repeat within [`ONE_INTERRUPT_NS`] is the same interrupt and changes nothing. A
/// recorded run is then marked `aborted` by its thread before fathom exits 130; without
/// one (or at a third interrupt) fathom exits 130 here.
pub fn exit_on_second_signal(signal: i32) -> std::io::Result<()> {
    let action = move || {
        let now = monotonic_ns();
        let first = match FIRST_SIGNAL_NS.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => return,
            Err(first) => first,
        };
        if now.saturating_sub(first) < ONE_INTERRUPT_NS {
            return;
        }
        for t in &TARGETS {
            let target = t.load(Ordering::SeqCst);
            if target != 0 {
                // SAFETY: kill(2) is async-signal-safe.
                unsafe { libc::kill(target, libc::SIGKILL) };
            }
        }
        if !RECORDING.load(Ordering::SeqCst) || FORCED.swap(true, Ordering::SeqCst) {
            signal_hook::low_level::exit(130);
        }
    };
    // SAFETY: the action only reads and writes atomics and calls clock_gettime(2),
    // kill(2) and _exit(2), all async-signal-safe.
    unsafe { signal_hook::low_level::register(signal, action) }.map(|_| ())
}

/// Whether a second interrupt asked to stop at once: the run's end then says so,
/// whichever thread writes it first.
pub fn stopped_at_once() -> bool {
    FORCED.load(Ordering::SeqCst)
}

/// Waits, while a run is recorded, for a forced stop; then marks the run `aborted` with
/// what it stored and exits 130, so that a run stopped at once is never left `running`.
fn end_when_forced() {
    while RECORDING.load(Ordering::SeqCst) {
        if FORCED.load(Ordering::SeqCst) {
            if let Some((store, run)) = RECORDER.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                let _ = store.finish_run(*run, Status::Aborted, Some(FORCED_STOP));
            }
            #[expect(clippy::exit, reason = "a forced stop ends fathom from this thread, the run recorded first")]
            std::process::exit(130);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs left `running` by a fathom of this host that is gone (killed, crashed, the
/// machine restarted): kills the process groups they left that still run (the same
/// processes: a recycled pid is left alone), removes the directories they would have
/// removed ([`Leftover`]) and marks the runs aborted. Runs of another host (a store on
/// shared storage) are its own to judge. Returns a line per run, to warn with.
pub fn clean_up(store: &Store) -> Result<Vec<String>> {
    let mut said = Vec::new();
    let here = format!("{}/", this_host());
    for u in store.unfinished_runs()? {
        let alive = |p: &ProcessRow| identity(p.pid as i32).is_some_and(|(id, _)| id == p.identity);
        let (fathom, left) = u.processes.split_first().expect("unfinished_runs gives fathom first");
        if !fathom.identity.starts_with(&here) || alive(fathom) {
            continue; // another host's, or another fathom is running it
        }
        let mut stopped = Vec::new();
        for p in left.iter().filter(|p| alive(p)) {
            // SAFETY: kill(2) of the process (group) the run started, identified above.
            unsafe { libc::kill(target(p.pid as i32, p.pgid as i32), libc::SIGKILL) };
            stopped.push(format!("{} (pid {})", p.what, p.pid));
        }
        let mut left = if stopped.is_empty() {
            "nothing of it was left running".to_string()
        } else {
            format!("stopped what it left running: {}", stopped.join(", "))
        };
        let removed: Vec<String> = store.leftovers(u.run)?.iter().filter_map(|p| remove_leftover(p)).collect();
        if !removed.is_empty() {
            left.push_str(&format!("; removed {}", removed.join(", ")));
        }
        let reason = format!("fathom (pid {}) was killed or crashed before the run ended; {left}", fathom.pid);
        store.finish_run(u.run, Status::Aborted, Some(&reason))?;
        store.remove_processes(u.run, None)?;
        store.remove_leftovers(u.run, None)?;
        said.push(format!("run {}: {reason}", u.run));
    }
    Ok(said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_s_children_are_found_and_only_they() {
        let mut sh = Command::new("sh").args(["-c", "sleep 30 & sleep 30 & wait"]).spawn().unwrap();
        let pid = sh.id() as i32;
        let comms_of = |found: &[i32]| -> Vec<String> {
            found.iter().map(|c| std::fs::read_to_string(format!("/proc/{c}/comm")).unwrap_or_default()).collect()
        };
        // until both children have executed sleep: a child forked but not yet past its exec
        // is still named sh (a busy machine, or the lowest priority, stretches that moment)
        let started = Instant::now();
        let mut found = children_of(pid);
        while (found.len() < 2 || comms_of(&found).iter().any(|c| c != "sleep\n"))
            && started.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(10));
            found = children_of(pid);
        }
        let comms = comms_of(&found);
        // SAFETY: kill(2) of the shell's children, then of the shell we started.
        found.iter().for_each(|&c| unsafe {
            libc::kill(c, libc::SIGKILL);
        });
        sh.kill().unwrap();
        sh.wait().unwrap();
        assert_eq!(comms, ["sleep\n", "sleep\n"]);
    }

    #[test]
    fn a_process_is_known_by_its_start_as_well_as_its_pid() {
        let (me, pgid) = identity(std::process::id() as i32).unwrap();
        // SAFETY: getpgrp has no preconditions.
        assert_eq!(pgid, unsafe { libc::getpgrp() });
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
        assert!(me.starts_with(&format!("{}/{}/", this_host(), boot.trim())), "{me}");
        let mut child = Command::new("sleep").arg("5").process_group(0).spawn().unwrap();
        let (started, group) = identity(child.id() as i32).unwrap();
        assert_eq!(group, child.id() as i32);
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(identity(child.id() as i32).unwrap().0, started, "the same process, the same identity");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(identity(child.id() as i32).is_none());
    }

    #[test]
    fn stopping_a_group_kills_what_its_leader_started() {
        let stop = AtomicBool::new(false);
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 31; true"]).stdin(Stdio::null());
        let mut group = Group::spawn(&mut cmd, "test").unwrap();
        let sh = group.id() as i32;
        std::thread::sleep(Duration::from_millis(200));
        let sleeper: Vec<i32> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .filter(|pid: &i32| identity(*pid).is_some_and(|(_, g)| g == sh) && *pid != sh)
            .collect();
        assert_eq!(sleeper.len(), 1, "sh's sleep is in its group");
        stop.store(true, Ordering::Relaxed);
        let (status, stopped) = group.wait_stopping(None, None, &|| stop.load(Ordering::Relaxed)).unwrap();
        assert!(stopped && !status.success());
        std::thread::sleep(Duration::from_millis(100));
        assert!(identity(sleeper[0]).is_none(), "the sleep went with its group");
    }

    #[test]
    fn only_directories_named_as_fathom_names_them_are_removed_as_leftovers() {
        let dir = std::env::temp_dir().join(format!("fathom-leftovers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for name in [
            "postgres-3",
            "fathom-postgres-run1-0",
            "mariadb-2",
            "fathom-mariadb-run1-1",
            "mariadb-",
            "postgres-x",
            "data",
        ] {
            std::fs::create_dir_all(dir.join(name).join("data")).unwrap();
        }
        std::os::unix::fs::symlink(dir.join("data"), dir.join("postgres-4")).unwrap();
        let said = |name: &str| remove_leftover(&dir.join(name).display().to_string());
        assert!(said("postgres-3").is_some() && said("fathom-postgres-run1-0").is_some());
        assert!(said("mariadb-2").is_some() && said("fathom-mariadb-run1-1").is_some());
        // another name, a link (to a directory that stays), a relative path: left alone
        assert_eq!([said("postgres-x"), said("mariadb-"), said("data"), said("postgres-4")], [None, None, None, None]);
        assert_eq!(remove_leftover("postgres-5"), None);
        assert!(dir.join("data/data").is_dir() && dir.join("postgres-x").is_dir());
        assert!(!dir.join("postgres-3").exists() && !dir.join("fathom-postgres-run1-0").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn leftovers_of_a_dead_fathom_are_killed_but_never_a_recycled_pid() {
        let dir = std::env::temp_dir().join(format!("fathom-children-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::open(&dir).unwrap();
        let run = store.create_run("t", "", "", &serde_json::json!({})).unwrap();
        let spawn = || Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
        let (mut left, mut innocent) = (spawn(), spawn());
        let row = |pid: u32, what: &str, identity: String| ProcessRow {
            pid: pid.into(),
            pgid: pid.into(),
            identity,
            what: what.into(),
        };
        // a fathom that is gone (its pid now names nobody: a reaped child's)
        let mut gone = Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        let here = this_host();
        store.add_process(run, &row(gone.id(), FATHOM, format!("{here}/boot/1"))).unwrap();
        store.add_process(run, &row(left.id(), "iperf3", identity(left.id() as i32).unwrap().0)).unwrap();
        // the same pid, started at another time: not what the run started
        store.add_process(run, &row(innocent.id(), "postgres", format!("{here}/boot/1"))).unwrap();
        // a run of another host sharing the store: not this host's to judge
        let elsewhere = store.create_run("t", "", "", &serde_json::json!({})).unwrap();
        store.add_process(elsewhere, &row(gone.id(), FATHOM, "elsewhere/boot/1".into())).unwrap();
        // a run whose fathom still runs (this test) is left alone
        let live = store.create_run("t", "", "", &serde_json::json!({})).unwrap();
        let me = std::process::id();
        store.add_process(live, &row(me, FATHOM, identity(me as i32).unwrap().0)).unwrap();

        let said = clean_up(&store).unwrap();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains(&format!("iperf3 (pid {})", left.id())) && !said[0].contains("postgres"), "{said:?}");
        let status = left.wait().unwrap();
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGKILL));
        assert!(innocent.try_wait().unwrap().is_none(), "a recycled pid was killed");
        innocent.kill().unwrap();
        innocent.wait().unwrap();
        let statuses: Vec<String> =
            [run, live, elsewhere].iter().map(|r| store.run(&r.to_string()).unwrap().status).collect();
        assert_eq!(statuses, ["aborted", "running", "running"]);
        assert!(clean_up(&store).unwrap().is_empty(), "cleaned up once");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
