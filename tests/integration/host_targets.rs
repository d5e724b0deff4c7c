//! Several data disks per host: an inventory host's `target:` lists its disks (or
//! directories), and a workload on hosts picks among them with `host_targets`, sharing
//! one queue across them or giving each its own (`queue:`), as a local workload with
//! several targets does. Local-transport agents, the real binary.

use crate::common::{Scratch, text};
use std::path::PathBuf;

const HOSTS: [&str; 2] = ["d1", "d2"];

/// An inventory of two local hosts with three directory targets each; the directories.
fn inventory(s: &Scratch) -> (String, Vec<Vec<PathBuf>>) {
    let mut yaml = String::from("hosts:\n");
    let mut dirs = Vec::new();
    for h in HOSTS {
        let mine: Vec<PathBuf> = (0..3).map(|i| s.dir.join(format!("{h}-disk{i}"))).collect();
        mine.iter().for_each(|d| std::fs::create_dir_all(d).unwrap());
        let listed: Vec<String> = mine.iter().map(|d| d.display().to_string()).collect();
        yaml.push_str(&format!("  {h}: {{transport: local, target: [{}]}}\n", listed.join(", ")));
        dirs.push(mine);
    }
    let path = s.dir.join("hosts.yaml");
    std::fs::write(&path, yaml).unwrap();
    (path.display().to_string(), dirs)
}

/// A random writer on every host, on the host targets `picks`, with `queue`.
fn scenario(s: &Scratch, picks: &str, queue: &str, per_host: u32) -> String {
    s.scenario(&format!(
        "name: disks\n\
         workloads:\n\
         \x20 w:\n\
         \x20   hosts: all\n\
         \x20   per_host: {per_host}\n\
         \x20   host_targets: {picks}\n\
         \x20   queue: {queue}\n\
         \x20   rw: randwrite\n\
         \x20   bs: 4k\n\
         \x20   size: 1m\n\
         \x20   rate_iops: 400\n\
         \x20   duration: 2s\n"
    ))
    .display()
    .to_string()
}

/// The files in `dir`.
fn files_in(dir: &PathBuf) -> Vec<PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
}

/// Whether the one data file in `dir` was written: a fresh layout is zeros.
fn written(dir: &PathBuf) -> bool {
    let files = files_in(dir);
    assert_eq!(files.len(), 1, "{}: {files:?}", dir.display());
    std::fs::read(&files[0]).unwrap().chunks(4096).any(|b| b.iter().any(|&x| x != 0))
}

/// Workers per host, from the store.
fn workers_by_host(s: &Scratch) -> Vec<(String, i64)> {
    s.db()
        .prepare("SELECT host, count(*) FROM workers GROUP BY host ORDER BY host")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_shared_queue_writes_the_picked_targets_of_every_host() {
    let s = Scratch::new("host-targets-shared");
    let (hosts, dirs) = inventory(&s);
    let path = scenario(&s, "[1, 2]", "shared", 1);
    let out = s.run(&["run", &path, "--hosts", &hosts, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    for mine in &dirs {
        assert!(files_in(&mine[0]).is_empty(), "{}: {:?}", mine[0].display(), files_in(&mine[0]));
        assert!(written(&mine[1]) && written(&mine[2]), "{mine:?}");
    }
    // one worker per host: one queue across its two targets
    assert_eq!(workers_by_host(&s), vec![("d1".to_string(), 1), ("d2".to_string(), 1)]);
    let show = s.show_json();
    for h in show["workloads"][0]["hosts"].as_array().unwrap() {
        assert!(h["iops"].as_f64().unwrap() > 0.0, "{show}");
    }
}

#[test]
fn per_target_gives_each_picked_target_its_own_workers() {
    let s = Scratch::new("host-targets-per-target");
    let (hosts, dirs) = inventory(&s);
    let path = scenario(&s, "[0, 2]", "per_target", 2);
    let out = s.run(&["run", &path, "--hosts", &hosts, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    // per_host workers on each of the two targets of each host
    assert_eq!(workers_by_host(&s), vec![("d1".to_string(), 4), ("d2".to_string(), 4)]);
    for mine in &dirs {
        assert!(files_in(&mine[1]).is_empty(), "{}", mine[1].display());
        assert!(written(&mine[0]) && written(&mine[2]), "{mine:?}");
    }
}

#[test]
fn a_position_the_host_lacks_is_refused_before_anything_is_laid_out() {
    let s = Scratch::new("host-targets-refused");
    let (hosts, dirs) = inventory(&s);
    let path = scenario(&s, "[1, 5]", "shared", 1);
    for command in ["lint", "run"] {
        let out = s.run(&[command, &path, "--hosts", &hosts]);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", text(&out));
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains(":6: workloads.w.host_targets: workload w: host d1 has no target at position 5"),
            "{said}"
        );
        assert!(said.contains(&dirs[0][2].display().to_string()) && said.contains("positions 0 to 2"), "{said}");
        assert!(!said.contains("panicked"), "{said}");
    }
    assert!(dirs.iter().flatten().all(|d| files_in(d).is_empty()), "{dirs:?}");
}

#[test]
fn lint_shows_the_targets_each_host_uses() {
    let s = Scratch::new("host-targets-lint");
    let (hosts, dirs) = inventory(&s);
    let out = s.run(&["lint", &scenario(&s, "[1, 2]", "shared", 1), "--hosts", &hosts]);
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    for (h, mine) in HOSTS.iter().zip(&dirs) {
        let line = format!("w on {h}: {}, {}, one queue across, 1 worker", mine[1].display(), mine[2].display());
        assert!(said.contains(&line), "{said}");
    }
    let out = s.run(&["lint", &scenario(&s, "[0, 2]", "per_target", 3), "--hosts", &hosts]);
    let said = String::from_utf8_lossy(&out.stdout);
    let line = format!("w on d2: {}, {}, a queue per target, 6 workers", dirs[1][0].display(), dirs[1][2].display());
    assert!(said.contains(&line), "{said}");
}
