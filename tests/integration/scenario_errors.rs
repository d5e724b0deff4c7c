//! Mistakes and hostile text in a scenario, end to end: each one ends in exit 2 with a
//! message naming the file, the line and the key, in lint and in run alike, and a run
//! refused this way records nothing.

use crate::common::{Scratch, text};
use std::time::{Duration, Instant};

/// A run whose workload mixes `${mix}` percent reads, where `mix` names `reads`.
#[test]
fn a_variable_naming_another_gets_its_value_and_a_cycle_is_refused() {
    let s = Scratch::new("errors-vars");
    let path = s.scenario(
        "name: x\nvars: {reads: 70, mix: ${reads}}\nworkloads:\n  a: {engine: null, rw: randrw, rwmixread: ${mix}, \
         duration: 1s}\n",
    );
    let out = s.run(&["run", path.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let fidelity = &show["workloads"][0]["fidelity"]["read_percent"];
    assert_eq!(show["workloads"][0]["profile"]["rwmixread"], 70, "{show}");
    let achieved = fidelity["achieved"].as_f64().unwrap();
    assert!((60.0..80.0).contains(&achieved), "reads are 70%, not 0%: {fidelity}");
    // --set reaches through the reference
    let out = s.run(&["lint", path.to_str().unwrap(), "--set", "reads=90", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let path = s
        .scenario("name: x\nvars:\n  a: ${b}\n  b: ${a}\nworkloads:\n  w: {engine: null, rw: read, duration: ${a}s}\n");
    for cmd in ["lint", "run"] {
        let out = s.run(&[cmd, path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("scenario.yaml:3: vars.a: `a` and `b` refer to each other"), "{err}");
    }
    let path = s.scenario("name: x\nvars:\n  a: ${nope}\nworkloads:\n  w: {engine: null, rw: read, duration: ${a}s}\n");
    let out = s.run(&["lint", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("scenario.yaml:3: vars.a: `${nope}` is not a variable (vars: a)"), "{}", text(&out));
    let runs: i64 = s.db().query_row("SELECT count(*) FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(runs, 1, "the refused ones recorded no run");
}

/// 200 KB of `[[[[` took the parser 28 s; more than 1 MiB is refused unread; a byte
/// order mark is dropped; bytes that are not UTF-8 are located.
#[test]
fn hostile_text_is_refused_before_it_is_parsed() {
    let s = Scratch::new("errors-text");
    let path = s.scenario(&format!("name: x\nworkloads: {}\n", "[".repeat(200_000)));
    let started = Instant::now();
    let out = s.run(&["lint", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("scenario.yaml:2: nested more than 64 levels deep"), "{}", text(&out));
    // a generous bound for a loaded machine: the parser alone took 28 s
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());

    let path = s.scenario(&format!(
        "name: x\nworkloads: {{w: {{engine: null, rw: read, duration: 1s}}}}\n{}",
        "# padding\n".repeat(110_000)
    ));
    let out = s.run(&["lint", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("scenario.yaml: goes on past 1 MiB"), "{}", text(&out));

    let path = s.scenario("\u{feff}name: x\nworkloads:\n  w: {engine: null, rw: read, duration: 1s}\n");
    let out = s.run(&["lint", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "a BOM is dropped: {}", text(&out));

    let path = s.dir.join("latin1.yaml");
    std::fs::write(&path, b"name: x\ndescription: caf\xe9\n").unwrap();
    let out = s.run(&["lint", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("latin1.yaml:2: not UTF-8 text"), "{}", text(&out));
}

/// Each mistake of the issue: (scenario, extra arguments, what the message says).
/// Scenarios with one mistake each (`w`: a workload that is right), and what the error
/// must say, where.
fn mistakes(w: &str) -> Vec<(String, &'static str)> {
    vec![
        (
            format!("name: x\nvars:\n  a: 1\n  a: 2\nworkloads:\n  {w}\n"),
            "scenario.yaml:3: vars: `a` is given twice: a key once per mapping",
        ),
        (
            "name: x\nworkloads:\n  w: {target: '', rw: read, size: 1m, duration: 1s}\n".to_string(),
            "scenario.yaml:3: workloads.w.target: \"\" is not a path",
        ),
        (format!("name: \"a\\nb\"\nworkloads:\n  {w}\n"), "scenario.yaml:1: name: is more than one line"),
        (
            "name: x\nworkloads:\n  w:\n    target: \"TARGET\\n\"\n    rw: read\n    size: 1m\n    duration: 1s\n"
                .to_string(),
            "scenario.yaml:4: workloads.w.target: \"",
        ),
        (
            "name: x\nworkloads:\n  w: {target: TARGET, rw: read, size: 1m, duration: 1s, hosts: all}\n".to_string(),
            "scenario.yaml:3: workloads.w.hosts: runs on hosts (`all`): give the inventory with --hosts FILE",
        ),
        (
            format!("name: x\nworkloads:\n  {w}\nexpect:\n  - w.iops > nan\n"),
            "scenario.yaml:5: expect.0: `nan` is not a threshold",
        ),
        (
            format!("name: x\nworkloads:\n  {w}\nexpect:\n  - w.iops > -1\n"),
            "scenario.yaml:5: expect.0: `-1` is not a threshold",
        ),
        (
            format!("name: x\nworkloads:\n  {w}\nexpect:\n  - w.read.p99 < 1e400ms\n"),
            "scenario.yaml:5: expect.0: `1e400ms` is not a threshold",
        ),
        (
            format!("name: x\nworkloads:\n  {w}\nexpect:\n  - w.iops > 1 during peak\n"),
            "scenario.yaml:5: expect.0: `during peak`: no phase is labelled `peak` and no workload has that name",
        ),
        (
            format!("name: x\nworkloads:\n  {w}\nexpect:\n  - w.p99 <= 2 x before\n"),
            "scenario.yaml:5: expect.0: `x before`: no phase is labelled `before` and no workload has that name",
        ),
        (
            format!("name: x\nworkloads:\n  {w}\nexpect:\n  - w.p99 <= 2ms x w\n"),
            "scenario.yaml:5: expect.0: `2ms` is not a number",
        ),
        (
            "name: x\nworkloads:\n  w: {target: TARGET, rw: read, size: 1m, duration: 1s, bs: 4k, bsrange: 4k-64k}\n"
                .to_string(),
            "scenario.yaml:3: workloads.w.bsrange: set one of `bs`, `bssplit` and `bsrange`, not `bs` too",
        ),
        (
            "name: x\nworkloads:\n  w: {target: TARGET, rw: read, size: 1m, duration: 1s, bsrange: 64k-4k}\n"
                .to_string(),
            "scenario.yaml:3: workloads.w.bsrange: `64k-4k`: the smallest size must be above 0 and at most the largest",
        ),
        (
            "name: x\nworkloads:\n  w: {target: TARGET, rw: read, size: 1m, size_percent: 30, duration: 1s}\n"
                .to_string(),
            "scenario.yaml:3: workloads.w.size_percent: set `size` or `size_percent`, not both",
        ),
        (
            "name: x\nworkloads:\n  w: {target: TARGET, rw: read, size_percent: 0, duration: 1s}\n".to_string(),
            "scenario.yaml:3: workloads.w.size_percent: 0: expected a share of the target from 1 to 100",
        ),
        (
            format!("name: x\nquestion: \"two\\nlines?\"\nworkloads:\n  {w}\n"),
            "scenario.yaml:2: question: is more than one line",
        ),
    ]
}

#[test]
fn each_mistake_is_located_with_exit_2_in_lint_and_run() {
    let s = Scratch::new("errors-located");
    let w = "w: {target: TARGET, rw: read, size: 1m, duration: 1s}";
    let cases = mistakes(w);
    for (body, says) in &cases {
        let path = s.scenario(body);
        for cmd in ["lint", "run"] {
            let out = s.run(&[cmd, path.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(2), "{cmd} {body}: {}", text(&out));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(says), "{cmd} {body}: expected `{says}` in {err}");
            assert!(!err.contains("panicked"), "{err}");
        }
        assert!(!s.dir.join("results/fathom.db").exists(), "{body}: no run recorded");
        assert!(!s.data().join("fathom-w.dat").exists(), "{body}: nothing laid out");
    }
}

/// `description: 1` is text in the file, and stays text when an unrelated `--set` is
/// given (it was blamed on that `--set`); a wrong `--set` is blamed on itself alone.
#[test]
fn a_set_is_blamed_only_for_what_it_changed() {
    let s = Scratch::new("errors-set");
    let path = s.scenario("name: x\ndescription: 1\nworkloads:\n  w: {engine: null, rw: read, duration: 1s}\n");
    for sets in [&[][..], &["--set", "duration=2s"][..]] {
        let out = s.run(&[&["lint", path.to_str().unwrap()][..], sets].concat());
        assert_eq!(out.status.code(), Some(0), "{sets:?}: {}", text(&out));
    }
    let out = s.run(&["lint", path.to_str().unwrap(), "--set", "duration=2s", "--set", "w.iodepth=deep"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "--set w.iodepth=deep: workloads.w.iodepth: expected a whole number from 0 to 4294967295, not \"deep\""
        ),
        "{err}"
    );
    assert!(!err.contains("duration=2s"), "{err}");
}

/// `fathom lint --hosts` places the workloads as `run` does: a selector the inventory
/// does not match is refused at the line of `hosts`, before anything runs.
#[test]
fn lint_places_workloads_on_the_inventory() {
    let s = Scratch::new("errors-hosts");
    let inventory = s.dir.join("hosts.yaml");
    std::fs::write(&inventory, format!("hosts:\n  n1: {{transport: local, target: {}}}\n", s.data().display()))
        .unwrap();
    let path = s.scenario("name: x\nworkloads:\n  w:\n    rw: read\n    size: 1m\n    duration: 1s\n    hosts: n1\n");
    let out = s.run(&["lint", path.to_str().unwrap(), "--hosts", inventory.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for cmd in ["lint", "run"] {
        let out = s.run(&[cmd, path.to_str().unwrap(), "--hosts", inventory.to_str().unwrap(), "--set", "hosts=n2"]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(
            text(&out).contains("--set hosts=n2: workloads.w.hosts: `n2` is neither a host (n1)"),
            "{}",
            text(&out)
        );
    }
    let out = s.run(&["run", path.to_str().unwrap(), "--hosts", inventory.to_str().unwrap(), "--set", "w.hosts=n2"]);
    assert!(text(&out).contains("--set w.hosts=n2: workloads.w.hosts: `n2`"), "{}", text(&out));
    std::fs::write(&path, "name: x\nworkloads:\n  w:\n    rw: read\n    size: 1m\n    duration: 1s\n    hosts: n2\n")
        .unwrap();
    let out = s.run(&["lint", path.to_str().unwrap(), "--hosts", inventory.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("scenario.yaml:7: workloads.w.hosts: `n2` is neither a host (n1)"), "{}", text(&out));
    assert!(!s.dir.join("results/fathom.db").exists(), "no run recorded");
}

/// A workload's name is the first part of its run's files (`RUNDIR/NAME.fio`,
/// `NAME.pgbench-log`): one that is a path, `.`, `..`, an option or too long for a file
/// name is refused at its line by lint and run alike, before anything is written; a fio
/// job's section, which names its workload, is held to the same rule.
#[test]
fn workload_names_that_are_not_part_of_a_file_name_are_refused() {
    let s = Scratch::new("errors-names");
    std::fs::write(s.data().join("f"), vec![0u8; 1 << 20]).unwrap();
    let file = s.data().join("f").display().to_string();
    let outside = s.dir.join("outside");
    let long = "x".repeat(300);
    let cases = [
        ("../../x", "engine: fio, target: FILE, file: ok, rw: read", "it must not contain `/`"),
        (&format!("{}/abs", outside.display()), "driver: pgbench", "it must not contain `/`"),
        ("..", "engine: null, rw: read", "it must not start with `.`"),
        ("-o", "engine: null, rw: read", "it must not start with `-`"),
        (&long, "driver: pgbench", "a name of 300 bytes cannot name a file: at most 100"),
    ];
    for (name, keys, says) in cases {
        let keys = keys.replace("FILE", &file);
        let path = s.scenario(&format!("name: x\nworkloads:\n  {name:?}: {{{keys}, duration: 1s}}\n"));
        for cmd in ["lint", "run"] {
            let out = s.run(&[cmd, path.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(2), "{cmd} {name}: {}", text(&out));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("scenario.yaml:3: workloads: ") && err.contains(says), "{cmd} {name}: {err}");
        }
    }
    let job = s.dir.join("job.fio");
    std::fs::write(&job, format!("[a]\nrw=read\nfilename={file}\n[../../y]\nrw=read\nfilename={file}\n")).unwrap();
    for engine in ["fathom", "fio"] {
        let out = s.run(&["run", job.to_str().unwrap(), "--engine", engine]);
        assert_eq!(out.status.code(), Some(2), "{engine}: {}", text(&out));
        assert!(text(&out).contains("job.fio:4: [NAME]: \"../../y\" cannot name a file"), "{engine}: {}", text(&out));
    }
    assert!(!s.dir.join("results/fathom.db").exists(), "no run recorded");
    for left in ["results/x.fio", "x.fio", "y.fio", "results/y.fio", "outside"] {
        assert!(!s.dir.join(left).exists(), "{left} written outside the run's directory");
    }
}

/// Malformed YAML of every kind that the YAML and serde libraries describe in their own
/// terms (Rust types, their functions, their parser's states): each error names the
/// file and the line and says what was expected in fathom's words, in a scenario and in
/// a hosts inventory alike.
#[test]
fn every_yaml_error_reads_in_fathoms_words_at_its_line() {
    let s = Scratch::new("errors-words");
    let w = "w: {engine: null, rw: read, duration: 1s}";
    let cases: Vec<(String, &str)> = vec![
        (format!("name: x\nworkloads:\n  {w}\n---\nname: y\n"), "more than one YAML document"),
        ("name: x\nworkloads:\n  w: {engine: null, rw: read, duration: 1s, iodepth: deep}\n".into(), "whole number"),
        ("name: x\nworkloads: 5\n".into(), "expected a mapping"),
        ("name: x\nworkloads:\n  w:\n    rw: read\n    target:\n    duration: 1s\n".into(), "has no value"),
        ("name: x\nworkloads:\n  w: {engine: null, rw: raed, duration: 1s}\n".into(), "unknown choice `raed`"),
        ("name: x\nworkloads:\n  w: {engine: null, rw: read, iodeph: 1, duration: 1s}\n".into(), "unknown key"),
        (format!("description: x\nworkloads:\n  {w}\n"), "missing key `name`"),
        ("name: x\nworkloads:\n  w: {engine: null, rw: read, duration: [1]}\n".into(), "expected a duration"),
        (format!("name: [a]\nworkloads:\n  {w}\n"), "expected text"),
        (format!("name: x\ndescription: @x\nworkloads:\n  {w}\n"), "quote the value"),
        (format!("name: x: y\nworkloads:\n  {w}\n"), "quote a value that holds"),
        (format!("name: 'x\nworkloads:\n  {w}\n"), "not closed"),
        (format!("name: x\nworkloads:\n\t{w}\n"), "spaces"),
        (format!("name: *x\nworkloads:\n  {w}\n"), "refers to no"),
        (format!("name: !!binary x\nworkloads:\n  {w}\n"), "tagged value"),
        ("name: x\nworkloads:\n  w: {engine: null, rw: read, duration: 1s, size: .nan}\n".into(), "size"),
        (format!("name: x\nexpect: x\nworkloads:\n  {w}\n"), "expected a list"),
        (format!("name: x\nworkloads:\n  {w}\ntimeline:\n  - start: [w]\n"), "expected text"),
        (format!("name: x\nworkloads:\n  {w}\n  {w}\n"), "`w` is given twice"),
        ("name: x\nworkloads:\n  p: {driver: pgbench, duration: 1s, settings: x}\n".into(), "expected a mapping"),
        ("name: x\nworkloads:\n  w: [1\n".into(), "is not closed"),
    ];
    for (body, says) in &cases {
        let path = s.scenario(body);
        let out = s.run(&["lint", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{body}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        let located =
            err.split_once("scenario.yaml:").is_some_and(|(_, rest)| rest.starts_with(|c: char| c.is_ascii_digit()));
        assert!(located && err.contains(says), "{body}: expected `{says}` at a line in {err}");
        assert_eq!(crate::fuzz_scenarios::library_words(&err), None, "{body}: {err}");
    }
    let hosts = s.dir.join("hosts.yaml");
    for (inventory, says) in [("hosts: 5\n", "expected a mapping"), ("hosts:\n  n1: {transport: local, port: x}\n", "")]
    {
        std::fs::write(&hosts, inventory).unwrap();
        let path = s.scenario(&format!("name: x\nworkloads:\n  {w}\n"));
        let out = s.run(&["lint", path.to_str().unwrap(), "--hosts", hosts.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{inventory}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("hosts.yaml:") && err.contains(says), "{inventory}: {err}");
        assert_eq!(crate::fuzz_scenarios::library_words(&err), None, "{inventory}: {err}");
    }
    // a `--set` is named instead of a line, in the same words
    let path = s.scenario(&format!("name: x\nworkloads:\n  {w}\n"));
    let out = s.run(&["lint", path.to_str().unwrap(), "--set", "w.iodepth=deep", "--set", "direct=yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(crate::fuzz_scenarios::library_words(&text(&out)), None, "{}", text(&out));
}
