//! Lint, end to end: `fathom lint` finds mistakes without running, `--strict` refuses
//! them, and a run records what only measuring shows (a depth that cannot carry the
//! rate, a busy generator).

use crate::common::{Scratch, text};

fn codes(show: &serde_json::Value) -> Vec<String> {
    show["warnings"].as_array().unwrap().iter().map(|w| w["code"].as_str().unwrap().to_string()).collect()
}

#[test]
fn lint_finds_before_running_and_strict_refuses() {
    let s = Scratch::new("lint-before");
    let scenario = s.scenario(
        "name: cached\nworkloads:\n  w: {target: [TARGET/a.dat, TARGET/b.dat], rw: randread, direct: false, size: 16m, \
         iodepth: 1, duration: 5s}\n",
    );
    let out = s.run(&["lint", scenario.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<&str> = found.as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap()).collect();
    assert_eq!(found, vec!["page-cache", "depth-across-targets", "short-run"]);
    let out = s.run(&["lint", scenario.to_str().unwrap(), "--strict"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("lint warning [page-cache]"), "{}", text(&out));
    // run --strict refuses before writing anything
    let out = s.run(&["run", scenario.to_str().unwrap(), "--strict"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!s.data().join("a.dat").exists(), "nothing laid out");
    assert!(!s.dir.join("results/fathom.db").exists(), "no run recorded");
    // without --strict it runs, and the findings are stored with it
    let out = s.run(&["run", scenario.to_str().unwrap(), "--set", "duration=1s"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    assert!(codes(&show).contains(&"lint-page-cache".to_string()), "{show}");
}

#[test]
fn a_run_records_what_only_measuring_shows() {
    let s = Scratch::new("lint-after");
    // depth 1 cannot carry 2 million IOPS at any real latency
    let scenario = s.scenario(
        "name: deep\nworkloads:\n  w: {target: TARGET, rw: randread, size: 16m, iodepth: 1, rate_iops: 2000000, \
         duration: 2s}\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    assert!(codes(&show).contains(&"lint-depth-limits-rate".to_string()), "{:?}", codes(&show));
    assert!(String::from_utf8_lossy(&out.stdout).contains("IOs in flight (Little's law)"), "{}", text(&out));

    // the null engine does no IO: its one worker wants a core all the time. How much
    // of one a busy machine lets it have is not the test's to assume: the run keeps the
    // figure it judged (the rule itself is a unit test of `lint::after` on given
    // figures), and says generator-bound exactly when that figure is at 90% or more
    let scenario = s.scenario("name: busy\nworkloads:\n  w: {engine: null, rw: randread, duration: 2s}\n");
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let busy: f64 = s
        .db()
        .query_row(
            "SELECT value FROM observations WHERE run_id = ?1 AND source = 'fathom' AND name = 'generator_busy_pct'",
            [show["run"]["id"].as_i64().unwrap()],
            |r| r.get(0),
        )
        .expect("the generator's share is kept with the run");
    assert!((0.0..=101.0).contains(&busy), "{busy}");
    let bound = codes(&show).contains(&"lint-generator-bound".to_string());
    assert_eq!(bound, busy >= 90.0, "{busy}% busy: {:?}", codes(&show));
}

/// A run says each finding once: grouped over the workloads it is true of (pgbench's
/// five client counts made five lines), printed as the run starts and not again in
/// its closing summary (unless `-q` kept it from the start), and stored once.
#[test]
fn a_run_says_each_finding_once_over_its_workloads() {
    let s = Scratch::new("lint-once");
    let scenario = s.scenario(
        "name: twice\ndefaults: {target: TARGET, rw: randread, direct: false, size: 16m, duration: 1s}\n\
         workloads:\n  a: {iodepth: 1}\n  b: {iodepth: 2}\n  c: {iodepth: 4}\n",
    );
    let lint = s.run(&["lint", scenario.to_str().unwrap(), "--json"]);
    assert_eq!(lint.status.code(), Some(0), "{}", text(&lint));
    let found: serde_json::Value = serde_json::from_slice(&lint.stdout).unwrap();
    let found = found.as_array().unwrap();
    let codes: Vec<&str> = found.iter().map(|f| f["code"].as_str().unwrap()).collect();
    assert_eq!(codes, vec!["page-cache", "short-run"], "{found:?}");
    for f in found {
        assert_eq!(f["workloads"], serde_json::json!(["a", "b", "c"]), "{f}");
        assert!(f["message"].as_str().unwrap().starts_with("a, b, c: "), "{f}");
    }
    for quiet in [false, true] {
        let mut args = vec!["run", scenario.to_str().unwrap()];
        if quiet {
            args.push("-q");
        }
        let out = s.run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let all = text(&out);
        for finding in ["a, b, c: buffered IO", "a, b, c: 1 s of measurement"] {
            assert_eq!(all.matches(finding).count(), 1, "quiet {quiet}, once: {all}");
        }
        assert!(!all.contains("b: buffered IO"), "{all}");
        let show = s.show_json();
        assert_eq!(codes_of(&show), vec!["lint-page-cache", "lint-short-run"], "{show}");
    }
}

fn codes_of(show: &serde_json::Value) -> Vec<String> {
    codes(show).into_iter().filter(|c| c.starts_with("lint-")).collect()
}

/// Lint's advice is for the workload's kind and the value that changes what it is
/// about: a ramp's steps, not a duration the ramp overrides; no flash garbage
/// collection for a network run.
#[test]
fn short_run_advice_fits_the_workload_and_changes_what_it_names() {
    let s = Scratch::new("lint-advice");
    let ramp = s.scenario(
        "name: steps\nvars:\n  step: 8s\nworkloads:\n  vm: {target: TARGET, rw: randread, size: 16m}\n\
         timeline:\n  - ramp: vm\n    every: ${step}\n    until: 4\n",
    );
    let lint = |path: &std::path::Path, sets: &[&str]| {
        let mut args = vec!["lint", path.to_str().unwrap()];
        for set in sets {
            args.extend(["--set", set]);
        }
        let out = s.run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let said = lint(&ramp, &[]);
    assert!(said.contains("vm: 8 s of measurement per step of its ramp") && said.contains("--set step=5m"), "{said}");
    assert!(!said.contains("duration=5m"), "a ramp sets the duration: {said}");
    // the advice, taken, silences it; the duration the ramp overrides would not
    assert!(!lint(&ramp, &["step=5m"]).contains("short-run"));
    assert!(lint(&ramp, &["duration=5m"]).contains("short-run"));

    let net = s.scenario("name: net\nworkloads:\n  s1: {driver: iperf3, streams: 1, duration: 10s}\n");
    let said = lint(&net, &[]);
    assert!(said.contains("s1: 10 s of measurement") && said.contains("TCP"), "{said}");
    assert!(!said.contains("garbage collection"), "{said}");
    assert!(!lint(&net, &["duration=5m"]).contains("short-run"));
}

/// `fathom lint` takes `--hosts` as `fathom run` does, and needs it for a scenario
/// placed on hosts.
#[test]
fn lint_accepts_hosts_as_run_does() {
    let s = Scratch::new("lint-hosts");
    let dir = s.dir.join("host-h1");
    std::fs::create_dir_all(&dir).unwrap();
    let hosts = s.dir.join("hosts.yaml");
    std::fs::write(&hosts, format!("hosts:\n  h1: {{transport: local, target: {}}}\n", dir.display())).unwrap();
    let scenario = s.scenario("name: placed\nworkloads:\n  w: {hosts: h1, rw: randread, size: 16m, duration: 5s}\n");
    let out = s.run(&["lint", scenario.to_str().unwrap(), "--hosts", hosts.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("w: 5 s of measurement"), "{}", text(&out));
    let out = s.run(&["lint", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--hosts"), "{}", text(&out));
}

/// A fio job without `time_based` ends after its pass, however long its `runtime`:
/// lint promises no more than that pass before the run, and after it says how short
/// the measurement was, on fathom's engine and on fio alike.
#[test]
fn a_job_that_ends_after_its_pass_is_not_promised_its_runtime() {
    let s = Scratch::new("lint-pass");
    let job = s.dir.join("pass.fio");
    let data = s.data();
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=psync\nsize=4m\nruntime=3\ndirectory={}\n\n[job]\nrw=read\nbs=64k\n",
            data.display()
        ),
    )
    .unwrap();
    let out = s.run(&["lint", job.to_str().unwrap()]);
    let said = text(&out);
    assert!(
        said.contains("job: at most 3 s of measurement, less if its IO (4 MiB per worker) is done sooner"),
        "{said}"
    );
    for engine in [&[][..], &["--engine", "fio"][..]] {
        let mut args = vec!["run", job.to_str().unwrap()];
        args.extend(engine);
        let out = s.run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(codes(&s.show_json()).contains(&"lint-short-io".to_string()), "{engine:?}: {}", text(&out));
        assert!(text(&out).contains("was done after"), "{}", text(&out));
    }
}

/// A command step that uses `$FATHOM_DSN` with no database workload to provide it would
/// act on libpq's default server, or fail mid-run: lint and run refuse it at its line.
#[test]
fn a_command_asking_for_a_server_the_scenario_lacks_is_refused() {
    let s = Scratch::new("lint-dsn");
    let io_only = s.scenario(
        "name: no-db\nworkloads:\n  w: {target: TARGET, rw: randread, size: 1m, duration: 1s}\ntimeline:\n  \
         - start: w\n  - exec: psql -X -d \"$FATHOM_DSN\" -c CHECKPOINT\n",
    );
    for command in ["lint", "run"] {
        let out = s.run(&[command, io_only.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(":6: timeline.1.exec: uses `$FATHOM_DSN`"), "{command}: {err}");
        assert!(err.contains("no database workload"), "{command}: {err}");
    }
    assert!(!s.dir.join("results/fathom.db").exists(), "no run recorded");
    // a variable for a workload the scenario does not have names the ones it has
    let other = s.scenario(
        "name: other\nworkloads:\n  tight: {driver: pgbench, duration: 5s}\ntimeline:\n  - start: tight\n  \
         - exec: psql -X -d \"$FATHOM_DSN_SPREAD\" -c CHECKPOINT\n",
    );
    let out = s.run(&["lint", other.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`$FATHOM_DSN_SPREAD`, which names no database workload"), "{err}");
    assert!(err.contains("`$FATHOM_DSN_TIGHT`"), "{err}");
    // the built-in that uses one lints clean of it
    let out = s.run(&["lint", "checkpoint-tuning"]);
    assert_ne!(out.status.code(), Some(2), "{}", text(&out));
}
