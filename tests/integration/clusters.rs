//! fathom's throwaway PostgreSQL clusters as front doors: only fathom's own processes
//! enter one (no other local user, whatever port or socket it finds), its server is
//! fathom's child whose death is told as such and whose directory goes whatever
//! happens, and no cluster is made on a kernel pseudo file system.

use crate::common::{Scratch, text};
use crate::interrupt::{count, spawn_job, wait_exit, wait_for};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// A pgbench workload on a throwaway cluster, running `duration` at a modest rate: what
/// these tests judge is who may enter the cluster, not how fast it answers, and a
/// select-only run as fast as it goes would hold both cores.
fn pgbench(s: &Scratch, duration: &str) -> PathBuf {
    s.scenario(&format!(
        "name: pg\nworkloads:\n  tx:\n    driver: pgbench\n    script: select-only\n    clients: 2\n    \
         rate: 300\n    duration: {duration}\n"
    ))
}

/// The postmaster of the throwaway cluster a fathom (pid `fathom`) started for the store
/// in `results` (or in the system's temporary directory, its fallback): its pid and the
/// cluster's directory.
fn postmaster(results: &Path, fathom: u32) -> Option<(i32, PathBuf)> {
    let fallback = format!("/fathom-postgres-{fathom}-");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let cmd = String::from_utf8_lossy(&std::fs::read(e.path().join("cmdline")).ok()?).replace('\0', " ");
        let data = cmd.contains("bin/postgres").then(|| cmd.split(" -D ").nth(1))??.split_whitespace().next()?;
        let data = PathBuf::from(data.trim_matches('"'));
        let ours = data.starts_with(results) || data.to_string_lossy().contains(&fallback);
        (ours && ppid(pid).is_some()).then(|| (pid, data.parent().unwrap().to_path_buf()))
    })
}

/// The parent of `pid`, None once it has ended (or is a zombie).
fn ppid(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    (fields.first() != Some(&"Z")).then(|| fields.get(1)?.parse().ok())?
}

/// The live processes of process group `pgid`.
fn group(pgid: i32) -> Vec<i32> {
    let of = |pid: i32| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let fields: Vec<String> = stat.rsplit_once(')')?.1.split_whitespace().map(str::to_string).collect();
        (fields[0] != "Z").then(|| fields[2].parse::<i32>().ok())?
    };
    let pids = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    pids.filter_map(|e| e.file_name().to_str()?.parse().ok()).filter(|&pid| of(pid) == Some(pgid)).collect()
}

/// Starts a pgbench run of `duration` and waits until its cluster serves it: the run,
/// its postmaster and its cluster's directory.
fn running_pgbench(s: &Scratch, duration: &str) -> (std::process::Child, i32, PathBuf) {
    let scenario = pgbench(s, duration);
    let mut child = spawn_job(s, &["run", scenario.to_str().unwrap()]);
    let results = s.dir.join("results");
    let mut found = None;
    let fathom = child.id();
    wait_for(s, &mut child, "PostgreSQL and pgbench", || {
        found = found.take().or_else(|| postmaster(&results, fathom));
        found.is_some() && count(s, "SELECT count(*) FROM samples") > 0
    });
    let (pid, dir) = found.unwrap();
    (child, pid, dir)
}

fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// psql run by another local user (`nobody`) when the test is root, with nothing of
/// ours in its environment, in `/`.
fn psql_as_stranger(dsn: &str, sql: &str) -> Output {
    let psql = ["/usr/bin/psql", "psql"].into_iter().find(|p| Path::new(p).exists()).unwrap_or("psql");
    let mut cmd = match root() {
        true => {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", psql]);
            c
        }
        false => Command::new(psql),
    };
    cmd.args(["-X", "-w", "-d", dsn, "-c", sql]).current_dir("/").env_clear();
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default()).env("HOME", "/nonexistent");
    cmd.output().unwrap()
}

/// Another local user finds the cluster's port and socket (`ps`, postmaster.pid) and
/// tries to enter as its superuser and run a command as the server's user; fathom's
/// own workload runs on it all the while.
#[test]
fn a_throwaway_cluster_admits_fathoms_own_processes_and_no_other_user() {
    let s = Scratch::new("cluster-strangers");
    let (child, _, dir) = running_pgbench(&s, "8s");
    let pid_file = std::fs::read_to_string(dir.join("data/postmaster.pid")).unwrap();
    let lines: Vec<&str> = pid_file.lines().map(str::trim).collect();
    let (port, socket) = (lines[3], lines[4]);
    let marker = std::env::temp_dir().join(format!("fathom-stranger-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let copy = format!("COPY (SELECT 1) TO PROGRAM 'id > {}'", marker.display());
    let mut doors = vec![format!("host=127.0.0.1 port={port} user=fathom dbname=postgres")];
    // the socket's directory, to a user who is not fathom's (as root, the test's own
    // user is fathom's, whom the cluster admits)
    if !socket.is_empty() && root() {
        doors.push(format!("host={socket} port={port} user=fathom dbname=postgres"));
    }
    for dsn in &doors {
        let out = psql_as_stranger(dsn, &copy);
        assert!(!out.status.success(), "{dsn}: another user got in: {}", text(&out));
    }
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    let _ = std::fs::remove_file(&marker);
    assert!(ran.is_empty(), "COPY TO PROGRAM ran a command as {ran}");
    let (out, _) = wait_exit(&s, child, Duration::from_secs(120));
    assert!(out.status.success(), "fathom's own workload could not use its cluster: {}", text(&out));
    assert!(count(&s, "SELECT count(*) FROM samples WHERE run_id = 1") > 0);
}

/// The server killed outright mid-run: the run fails telling the server's death, its
/// cluster's directory is removed all the same, and the server was fathom's child (not
/// re-parented to init), so nothing of it outlives the run.
#[test]
fn a_killed_postmaster_fails_the_run_as_its_death_and_its_cluster_is_removed() {
    let s = Scratch::new("cluster-killed-server");
    let (child, pid, dir) = running_pgbench(&s, "60s");
    let parent = ppid(pid);
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill(2) of the postmaster found above.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let fathom = child.id() as i32;
    let (out, _) = wait_exit(&s, child, Duration::from_secs(60));
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("PostgreSQL server") && said.contains("died (killed by signal 9)"), "{said}");
    assert!(!said.contains("does not shut down"), "{said}");
    let error = s.runs()[0].1.clone().unwrap_or_default();
    assert!(error.contains("died (killed by signal 9)"), "{error}");
    assert!(!dir.exists(), "{} is left", dir.display());
    assert_eq!(group(pid), Vec::<i32>::new(), "processes of the server's group (its sessions) are left");
    assert_eq!(parent, Some(fathom), "the server's parent was not fathom");
}

/// A fathom killed outright leaves its cluster running and its directory; the next run
/// stops the one and removes the other.
#[test]
fn the_next_run_removes_the_cluster_a_killed_fathom_left() {
    let s = Scratch::new("cluster-killed-fathom");
    let (mut child, pid, dir) = running_pgbench(&s, "60s");
    child.kill().unwrap(); // SIGKILL: fathom cannot stop anything
    child.wait().unwrap();
    assert!(dir.exists());
    let short = s.dir.join("short.yaml");
    let body =
        format!("name: short\nworkloads:\n  r: {{target: {}, size: 8m, rw: read, duration: 1s}}\n", s.data().display());
    std::fs::write(&short, body).unwrap();
    let out = s.run(&["run", short.to_str().unwrap(), "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    let started = std::time::Instant::now();
    while ppid(pid).is_some() {
        assert!(started.elapsed() < Duration::from_secs(10), "the server is left running");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!dir.exists(), "{} is left", dir.display());
    assert!(text(&out).contains(&dir.display().to_string()), "the removal is said: {}", text(&out));
}

/// Removes cgroup `dir` and the cgroups in it (a cgroup's files go with it).
fn remove_cgroup(dir: &Path) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            remove_cgroup(&e.path());
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// Where a cgroup2 file system is mounted, if anywhere.
fn cgroup2() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(2) == Some(&"cgroup2")).then(|| PathBuf::from(f[1]))
    })
}

/// A cluster's `target` (and HammerDB's directory) on a kernel pseudo file system is
/// refused before anything is made or recorded, for each program that makes one.
#[test]
fn a_cluster_on_a_pseudo_file_system_is_refused_before_anything_is_made() {
    let s = Scratch::new("cluster-pseudo");
    let cgroup = cgroup2().expect("a cgroup2 file system is mounted");
    let before = std::fs::read_dir(&cgroup).unwrap().count();
    for (target, fs) in [(cgroup.display().to_string(), "cgroup2"), ("/proc".to_string(), "procfs")] {
        for program in ["driver: pgbench", "driver: tpcc", "driver: tpch", "{driver: tpcc, engine: hammerdb}"] {
            let program = program.trim_matches(['{', '}']);
            let body = format!("name: pg\nworkloads:\n  db: {{{program}, target: {target}, duration: 10s}}\n");
            let path = s.scenario(&body);
            let out = s.run(&["run", path.to_str().unwrap()]);
            let said = text(&out);
            assert_eq!(out.status.code(), Some(2), "{program} on {target}: {said}");
            assert!(said.contains(&format!("{target} is on {fs}, one of the kernel's pseudo file systems")), "{said}");
            let runs = if s.dir.join("results/fathom.db").exists() { s.runs().len() } else { 0 };
            assert_eq!(runs, 0, "refused before a run was recorded: {said}");
        }
    }
    let body =
        "name: pg\nworkloads:\n  db: {driver: tpcc, engine: hammerdb, hammerdb_dir: /proc/self, duration: 60s}\n";
    let out = s.run(&["run", s.scenario(body).to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("/proc/self is on procfs"), "{}", text(&out));
    let made: Vec<_> = std::fs::read_dir(&cgroup)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("fathom-postgres"))
        .map(|e| e.path())
        .collect();
    // the unfixed fathom made cgroups (in cgroups): leave none behind
    made.iter().for_each(|d| remove_cgroup(d));
    assert!(made.is_empty(), "made {made:?}");
    assert_eq!(std::fs::read_dir(&cgroup).unwrap().count(), before);
}

/// A cluster whose path is too long for a Unix socket's (107 bytes) has its socket in a
/// private directory of the system's temporary one, which goes with the cluster.
#[test]
fn a_cluster_too_deep_for_a_socket_has_one_in_a_private_directory_removed_with_it() {
    let s = Scratch::new("cluster-deep");
    let deep = s.dir.join("d".repeat(100));
    std::fs::create_dir_all(&deep).unwrap();
    let body = format!(
        "name: pg\nworkloads:\n  tx: {{driver: pgbench, script: select-only, target: {}, duration: 2s}}\n",
        deep.display()
    );
    let path = s.scenario(&body);
    let mut child = spawn_job(&s, &["run", path.to_str().unwrap()]);
    let fathom = child.id();
    let sockets = || -> Vec<PathBuf> {
        let prefix = format!("fathom-postgres-{fathom}-socket-");
        let tmp = std::fs::read_dir(std::env::temp_dir()).unwrap().flatten();
        tmp.filter(|e| e.file_name().to_string_lossy().starts_with(&prefix)).map(|e| e.path()).collect()
    };
    let mut seen = Vec::new();
    wait_for(&s, &mut child, "the socket's directory", || {
        seen = sockets();
        !seen.is_empty()
    });
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&seen[0]).unwrap().permissions().mode() & 0o777;
    let (out, _) = wait_exit(&s, child, Duration::from_secs(120));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(mode, 0o700, "{}", seen[0].display());
    assert_eq!(sockets(), Vec::<PathBuf>::new(), "left behind");
    assert!(count(&s, "SELECT count(*) FROM samples WHERE run_id = 1") > 0);
}
