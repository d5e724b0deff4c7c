//! Hook steps (`hook:` with `--hooks FILE`), commands in the background (`every:`,
//! `times:`), and `--time-scale`, with the real binary.

use crate::common::{Scratch, text};

/// A scenario with two hooks in the timeline and one that runs every second.
const HOOKED: &str = "\
name: hooked
workloads:
  w: {rw: randread, size: 8m, duration: 4s}
timeline:
  - hook: vm_group.CreatePeriodicSnapshots
    args: {vm_group: db, interval_secs: 1}
    every: 1s
    times: 3
  - hook: nodes.PowerOff
    args: {nodes: [0, 1], 'vm-group': db}
    hosts: [h2, h1]
    timeout: 10s
  - start: w
  - hook: nodes.PowerOn
";

fn is_empty_dir(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).map(|mut d| d.next().is_none()).unwrap_or(true)
}

#[test]
fn a_scenario_needing_hooks_is_refused_before_anything_is_laid_out() {
    let s = Scratch::new("hooks-missing");
    let hosts = s.local_inventory(&["h1", "h2", "h3"]);
    let scenario = s.scenario(HOOKED);
    let scenario = scenario.to_str().unwrap();
    for command in ["run", "lint"] {
        let out = s.run(&[command, scenario, "--hosts", &hosts]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(
                "needs hooks for: vm_group.CreatePeriodicSnapshots, nodes.PowerOff, nodes.PowerOn; give them with --hooks FILE"
            ),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    // a hooks file without one of them: only that one is missing
    let hooks = s.dir.join("hooks.yaml");
    std::fs::write(&hooks, "hooks:\n  nodes.PowerOff: 'true'\n  vm_group.CreatePeriodicSnapshots: 'true'\n").unwrap();
    let out = s.run(&["run", scenario, "--hosts", &hosts, "--hooks", hooks.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs hooks for: nodes.PowerOn; add them to the --hooks file"), "{err}");
    // nothing was laid out, on any host, and no run was stored
    for dir in ["host-h1", "host-h2", "host-h3", "data"] {
        assert!(is_empty_dir(&s.dir.join(dir)), "{dir} was laid out");
    }
    assert!(!s.dir.join("results/fathom.db").exists() || s.run(&["runs"]).stdout.starts_with(b"no runs"));

    // a hooks file's mistakes are located; hosts named without an inventory are refused
    std::fs::write(&hooks, "hooks:\n  nodes.PowerOff: 'true'\n  nodes.PowerOn: [x]\n").unwrap();
    let out = s.run(&["lint", scenario, "--hosts", &hosts, "--hooks", hooks.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hooks.yaml:3: hooks.nodes.PowerOn"), "{}", text(&out));
    std::fs::write(
        &hooks,
        "hooks:\n  nodes.PowerOff: 'true'\n  nodes.PowerOn: 'true'\n  vm_group.CreatePeriodicSnapshots: 'true'\n",
    )
    .unwrap();
    let local = s.scenario(&HOOKED.replace("{rw: randread,", "{target: TARGET, rw: randread,"));
    let out = s.run(&["lint", local.to_str().unwrap(), "--hooks", hooks.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("timeline.1.hosts (hook nodes.PowerOff): names hosts, but no inventory"),
        "{}",
        text(&out)
    );
}

#[test]
fn hooks_run_with_their_arguments_and_hosts_and_are_recorded() {
    let s = Scratch::new("hooks-run");
    let hosts = s.local_inventory(&["h1", "h2", "h3"]);
    let scenario = s.scenario(HOOKED);
    let dir = s.dir.display().to_string();
    let hooks = s.dir.join("hooks.yaml");
    std::fs::write(
        &hooks,
        format!(
            "hooks:\n  \
             vm_group.CreatePeriodicSnapshots: echo \"snap $FATHOM_ARG_INTERVAL_SECS\" >> {dir}/snaps\n  \
             nodes.PowerOff: env | grep ^FATHOM_ | sort > {dir}/off.env\n  \
             nodes.PowerOn: PGPASSWORD=hunter2 env | grep ^FATHOM_ | sort > {dir}/on.env\n"
        ),
    )
    .unwrap();
    let out = s.run(&["run", scenario.to_str().unwrap(), "--hosts", &hosts, "--hooks", hooks.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));

    let off = std::fs::read_to_string(s.dir.join("off.env")).unwrap();
    let off: Vec<&str> = off.lines().collect();
    assert_eq!(
        off,
        vec![
            "FATHOM_ARG_NODES=0,1",
            "FATHOM_ARG_VM_GROUP=db",
            "FATHOM_HOOK=nodes.PowerOff",
            "FATHOM_HOSTS=h1 h2",
            "FATHOM_HOST_ADDRESSES=h1 h2",
            "FATHOM_RUN_ID=1",
        ],
        "hosts in inventory order; a local host's address is its name"
    );
    let on = std::fs::read_to_string(s.dir.join("on.env")).unwrap();
    assert!(on.contains("FATHOM_HOOK=nodes.PowerOn\n") && on.contains("FATHOM_HOSTS=h1 h2 h3\n"), "all hosts: {on}");
    // every: 1s, times: 3
    let snaps = std::fs::read_to_string(s.dir.join("snaps")).unwrap();
    assert_eq!(snaps.lines().collect::<Vec<_>>(), vec!["snap 1"; 3]);

    let db = s.db();
    let mut q = db.prepare("SELECT kind, label, status, at_ms FROM events WHERE run_id = 1 ORDER BY at_ms").unwrap();
    let events: Vec<(String, String, Option<i64>, i64)> =
        q.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap().map(Result::unwrap).collect();
    let hooks_run: Vec<&(String, String, Option<i64>, i64)> = events.iter().filter(|e| e.0 == "hook").collect();
    assert_eq!(hooks_run.len(), 5, "{events:?}");
    assert!(hooks_run.iter().all(|e| e.2 == Some(0)), "{events:?}");
    let snaps: Vec<i64> =
        hooks_run.iter().filter(|e| e.1.starts_with("vm_group.CreatePeriodicSnapshots")).map(|e| e.3).collect();
    assert_eq!(snaps.len(), 3);
    // about a second apart (generous: a loaded machine)
    assert!(snaps[1] - snaps[0] >= 900 && snaps[2] - snaps[1] >= 900, "{snaps:?}");
    assert!(
        hooks_run.iter().any(|e| e.1 == "nodes.PowerOff (nodes=0,1, vm-group=db)"),
        "the hook's name and arguments: {events:?}"
    );
    // the hooks' commands are the user's: not in the store
    let stored = std::fs::read(s.dir.join("results/fathom.db")).unwrap();
    assert!(!stored.windows(7).any(|w| w == b"hunter2"), "a hook's command was stored");
    assert!(!stored.windows(6).any(|w| w == b"env | "), "a hook's command was stored");
}

#[test]
fn a_time_scale_shortens_every_duration_and_is_recorded() {
    let s = Scratch::new("time-scale");
    let scenario = s.scenario(
        "name: scaled\ndefaults: {target: TARGET, size: 8m, rw: randread}\n\
         workloads:\n  a: {duration: 30s}\n  b: {ramp: 10s, duration: 4s}\n\
         timeline:\n  - start: a\n    async: true\n  - wait: 20s\n  - start: b\n",
    );
    let started = std::time::Instant::now();
    let out = s.run(&["run", scenario.to_str().unwrap(), "--time-scale", "0.1"]);
    assert!(out.status.success(), "{}", text(&out));
    // unscaled it takes at least 34 s; scaled about 5 (generous: a loaded machine)
    assert!(started.elapsed() < std::time::Duration::from_secs(25), "took {:?}", started.elapsed());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("· time scale 0.1 (durations ×0.1)"), "{stdout}");

    let show = s.show_json();
    assert_eq!(show["run"]["time_scale"], 0.1);
    let page = s.dir.join("report.html");
    let out = s.run(&["report", "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let header = &html[html.find("<header>").unwrap()..html.find("</header>").unwrap()];
    assert!(header.contains("time scale 0.1 (durations ×0.1)"), "{header}");
    let w = |name: &str| show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap().clone();
    let (a, b) = (w("a"), w("b"));
    let t = |w: &serde_json::Value, key: &str| w[key].as_i64().unwrap();
    assert_eq!(t(&a, "end_t") - t(&a, "start_t"), 3, "30 s x 0.1: {a}");
    assert_eq!(t(&b, "measure_t") - t(&b, "start_t"), 1, "a ramp of 10 s x 0.1: {b}");
    // 4 s x 0.1 is less than a workload's second: raised to 1 s, with a warning
    assert_eq!(t(&b, "end_t") - t(&b, "measure_t"), 1, "{b}");
    let waited = t(&b, "start_t") - t(&a, "start_t");
    assert!((2..=4).contains(&waited), "a wait of 20 s x 0.1: b started {waited} s after a");
    let warnings: Vec<&str> =
        show["warnings"].as_array().unwrap().iter().map(|w| w["code"].as_str().unwrap()).collect();
    assert_eq!(warnings.iter().filter(|c| **c == "time-scale-raised").count(), 1, "{warnings:?}");
    // the stored samples: seconds of each workload's own length
    let db = s.db();
    let seconds = |idx: i64| -> i64 {
        db.query_row("SELECT count(DISTINCT t) FROM samples WHERE run_id = 1 AND workload_idx = ?1", [idx], |r| {
            r.get(0)
        })
        .unwrap()
    };
    let (sa, sb) = (seconds(t(&a, "idx")), seconds(t(&b, "idx")));
    assert!((1..=4).contains(&sa), "a's samples over {sa} s");
    assert!((1..=3).contains(&sb), "b's samples over {sb} s");

    // the scale must be above 0: refused like any bad input
    let out = s.run(&["lint", scenario.to_str().unwrap(), "--time-scale", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--time-scale 0: expected a number from 0.000001 to 1000"),
        "{}",
        text(&out)
    );
}

#[test]
fn background_commands_fail_the_run_as_exec_does_and_stop_at_its_end() {
    let s = Scratch::new("hooks-background");
    // one still running at the run's end is stopped there, which fails nothing
    let scenario = s.scenario(
        "name: bg\nworkloads:\n  w: {target: TARGET, size: 8m, rw: randread, duration: 2s}\n\
         timeline:\n  - exec: sleep 60\n    async: true\n  - start: w\n",
    );
    let started = std::time::Instant::now();
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "waited for it: {:?}", started.elapsed());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("exec `sleep 60`: stopped at the run's end"),
        "{}",
        text(&out)
    );
    let show = s.show_json();
    let events = show["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!((events[0]["kind"].as_str(), events[0]["status"].is_null()), (Some("exec"), true));

    // a periodic run that fails fails the run, as a failing `exec` does
    let scenario = s.scenario(
        "name: bg\nworkloads:\n  w: {target: TARGET, size: 8m, rw: randread, duration: 3s}\n\
         timeline:\n  - exec: exit 4\n    every: 1s\n    times: 2\n  - start: w\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let show = s.show_json();
    assert!(show["run"]["error"].as_str().unwrap().contains("exec `exit 4` failed (exit 4)"), "{show}");
}
