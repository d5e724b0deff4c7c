//! Every built-in scenario runs to completion shortened by `--time-scale` (its
//! timeline's shape kept), on `./fathom-data` of a scratch directory; every one of its
//! expectations is measured, and its phases, events and expectations are in `fathom show`.

use crate::common::{Scratch, servers, text};

/// The time scale the built-ins run at here: a minute's study in about six seconds.
const SCALE: &str = "0.1";

/// The data file of a built-in whose study is not about its size (`vars: size`): 64 MiB,
/// not its 1 GiB, laid out as random data before the first step.
const SMALL: &[&str] = &["size=64m"];

/// Runs built-in `name` at [`SCALE`] and returns `show --json` of the run. A threshold
/// may fail on a slow machine (exit 3), but every expectation must have been measured.
fn run_builtin(name: &str) -> serde_json::Value {
    run_builtin_with(name, &[])
}

/// Like [`run_builtin`], with `--set`s (a smaller database, a setting to compare).
fn run_builtin_with(name: &str, sets: &[&str]) -> serde_json::Value {
    run_builtin_scaled(name, SCALE, sets)
}

/// Like [`run_builtin_with`], at time scale `scale`: a study whose steps need a few
/// seconds each to have a figure per step.
fn run_builtin_scaled(name: &str, scale: &str, sets: &[&str]) -> serde_json::Value {
    run_builtin_in(&Scratch::new(&format!("builtin-{name}")), name, Some(scale), sets)
}

/// Like [`run_builtin_scaled`], in scratch directory `s`, for a test that reads the run
/// further; at full length without a `scale`.
fn run_builtin_in(s: &Scratch, name: &str, scale: Option<&str>, sets: &[&str]) -> serde_json::Value {
    let mut args = vec!["run", name, "-q"];
    args.extend(scale.iter().flat_map(|scale| ["--time-scale", scale]));
    for set in sets {
        args.extend(["--set", set]);
    }
    let out = s.run(&args);
    let show = s.show_json();
    let expectations = show["expectations"].as_array().unwrap();
    let failed = expectations.iter().any(|e| e["passed"] == false);
    let expected_code = if failed { 3 } else { 0 };
    assert_eq!(out.status.code(), Some(expected_code), "{}", text(&out));
    assert_eq!(show["run"]["status"], "completed", "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for e in expectations {
        assert!(stdout.contains(e["text"].as_str().unwrap()), "{stdout}");
        // a verdict is on a figure the run measured, never on none
        assert!(e["measured"].is_number(), "{name}: not measured: {e}");
        let relative = e["text"].as_str().unwrap().contains(" x ");
        assert!(!relative || e["reference"].is_number(), "{name}: nothing to compare with: {e}");
    }
    assert!(!stdout.contains("nothing measured"), "{name}: {stdout}");
    // every built-in answers its question in one line, printed before the results
    let answer = &show["answer"];
    let question = answer["question"].as_str().unwrap_or_else(|| panic!("{name}: no question: {answer}"));
    let line = format!("{question} {}", answer["answer"].as_str().unwrap());
    assert!(line.ends_with(if failed { ": FAIL" } else { ": PASS" }), "{line}");
    let at = stdout.find(&line).unwrap_or_else(|| panic!("{line} not printed: {stdout}"));
    assert!(Some(at) < stdout.find(&format!("run {} ·", show["run"]["id"])), "{stdout}");
    concurrency_curve_only_where_concurrency_varies(name, s, &stdout, &show);
    show
}

/// The built-ins whose phases are steps of one workload differing only in concurrency:
/// only these get a concurrency curve, its knee, "you are here" and a USL fit.
const CURVED: &[&str] =
    &["quickstart", "you-are-here", "pgbench-clients", "net-streams", "tpcc-clients", "sysbench-threads"];

/// Issue #17's done-when: the terminal, `show --json` and the report speak of a curve
/// (knee, "you are here", USL) only for [`CURVED`]; every other built-in carries the
/// reason in `curve_reason` and prints nothing about a curve.
fn concurrency_curve_only_where_concurrency_varies(name: &str, s: &Scratch, stdout: &str, show: &serde_json::Value) {
    let analysis = &show["analysis"];
    let page = s.dir.join("report.html");
    let out = s.run(&["report", "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    if CURVED.contains(&name) {
        assert!(analysis["curve"].is_object(), "{name}: no curve: {analysis}");
        assert!(stdout.contains("you are here"), "{name}: {stdout}");
        assert!(html.contains("you are here"), "{name}: the page has no \"you are here\"");
    } else {
        assert!(analysis["curve"].is_null(), "{name}: a curve: {}", analysis["curve"]);
        assert!(analysis["curve_reason"].as_str().is_some_and(|r| !r.is_empty()), "{name}: no reason: {analysis}");
        for said in ["you are here", "USL", "knee"] {
            assert!(!stdout.contains(said), "{name}: the terminal says {said}: {stdout}");
            assert!(!html.contains(said), "{name}: the page says {said}");
        }
    }
}

#[test]
fn quickstart() {
    let show = run_builtin_with("quickstart", &["size=64m"]);
    assert_eq!(labels(&show), vec!["qd1", "qd4", "qd16", "qd64"]);
}

/// The one built-in run at its full length, as `make run` runs it: the other tests
/// shorten every step by a time scale, and this keeps the unscaled path tested. The
/// steps' length is what it judges, so its file is the scaled test's 64 MiB, not 1 GiB
/// (writing the gigabyte first took most of its CPU), and its reads are paced at 500 a
/// second (a minute of reads as fast as they go held a core).
#[test]
fn quickstart_at_full_length() {
    let s = Scratch::new("builtin-quickstart-full");
    let show = run_builtin_in(&s, "quickstart", None, &["size=64m", "rate_iops=500"]);
    assert_eq!(labels(&show), vec!["qd1", "qd4", "qd16", "qd64"]);
    for w in show["workloads"].as_array().unwrap() {
        // after its 2 s ramp, each step measured its whole 15 s
        let measured = w["end_t"].as_f64().unwrap() - w["measure_t"].as_f64().unwrap();
        assert!((measured - 15.0).abs() < 0.5, "{w}");
    }
}

fn labels(show: &serde_json::Value) -> Vec<String> {
    show["phases"].as_array().unwrap().iter().map(|p| p["label"].as_str().unwrap().to_string()).collect()
}

/// An A/B study of two clusters, `first` then `second` (each a phase of its own):
/// while either is measured the other is idle, as its observation shows. The second's
/// cluster, loaded before the run, commits nothing in its databases (`database` a prefix
/// of their names) and neither checkpoints nor vacuums during the first's phase; the
/// first's is stopped as the second starts, so none of its events or observations fall
/// in the second's phase.
fn each_side_measured_alone(s: &Scratch, show: &serde_json::Value, [first, second]: [&str; 2], database: &str) {
    let window = |label: &str| {
        let p = show["phases"].as_array().unwrap().iter().find(|p| p["label"] == label).unwrap();
        (p["start_t"].as_i64().unwrap(), p["end_t"].as_i64().unwrap())
    };
    let events = show["events"].as_array().unwrap();
    let busy = |name: &str, (from, to): (i64, i64)| -> Vec<&serde_json::Value> {
        let during = |e: &&serde_json::Value| {
            let (at, took) = (e["at_ms"].as_i64().unwrap(), e["took_ms"].as_i64().unwrap_or(0));
            at < to * 1000 && at + took > from * 1000
        };
        let kinds = ["checkpoint", "autovacuum"];
        events
            .iter()
            .filter(|e| e["label"] == name && kinds.contains(&e["kind"].as_str().unwrap()))
            .filter(during)
            .collect()
    };
    let (one, two) = (window(first), window(second));
    assert!(busy(second, one).is_empty(), "{second} busy while {first} ran: {:?}", busy(second, one));
    assert!(busy(first, two).is_empty(), "{first} busy while {second} ran: {:?}", busy(first, two));
    let observed = s.observations();
    let commits: Vec<&Vec<(i64, f64)>> = observed
        .iter()
        .filter(|((source, name), _)| {
            source == &format!("postgres:{second}")
                && name.starts_with(&format!("pg_stat_database_xact_commit{{datname=\"{database}"))
        })
        .map(|(_, v)| v)
        .collect();
    assert!(!commits.is_empty(), "{second}'s databases unobserved: {:?}", observed.keys());
    for series in commits {
        let in_one: Vec<f64> = series.iter().filter(|(t, _)| (one.0..one.1).contains(t)).map(|(_, v)| *v).collect();
        assert!(in_one.len() >= 2 && in_one.windows(2).all(|p| p[0] == p[1]), "{second} committed: {in_one:?}");
    }
    let first_seen = observed.iter().filter(|((source, _), _)| source == &format!("postgres:{first}"));
    let late: std::collections::BTreeSet<i64> =
        first_seen.flat_map(|(_, v)| v.iter().map(|(t, _)| *t)).filter(|t| *t > two.0).collect();
    assert!(late.is_empty(), "{first} still observed at {late:?} while {second} ran");
}

/// IOPS (TPS for pgbench's transactions) of all of `workload`'s ops in phase `label`.
fn iops_in(show: &serde_json::Value, label: &str, workload: &str) -> f64 {
    let p = show["phases"].as_array().unwrap().iter().find(|p| p["label"] == label).unwrap();
    p["ops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["workload"] == workload)
        .map(|o| o["iops"].as_f64().or(o["tps"].as_f64()).unwrap())
        .sum()
}

#[test]
fn four_corners() {
    let show = run_builtin_with("four-corners", SMALL);
    assert_eq!(labels(&show), vec!["randread-4k", "randwrite-4k", "read-1m", "write-1m"]);
    for l in labels(&show) {
        assert!(iops_in(&show, &l, &l) > 0.0, "{l}");
    }
}

#[test]
fn you_are_here() {
    let show = run_builtin("you-are-here");
    let l = labels(&show);
    assert_eq!(l, (1..=6).map(|n| format!("vm x{n}")).collect::<Vec<_>>());
    // depth 1 per worker: in phase n, at most n IOs in flight (Little's law); a busy
    // machine keeps each worker a while between one IO's end and the next's start, so
    // fewer, but never fewer than half
    for (n, p) in show["phases"].as_array().unwrap().iter().enumerate() {
        let little = p["ops"][0]["littles_n"].as_f64().unwrap();
        let workers = (n + 1) as f64;
        assert!(little <= workers + 0.2 && little >= workers / 2.0, "phase {n}: {little} in flight");
    }
}

#[test]
fn db_colocation() {
    let show = run_builtin_with("db-colocation", SMALL);
    assert_eq!(labels(&show), ["before", "during", "after"]);
    // judged on rate and latency: OLTP's p99 during and after DSS against before
    assert_eq!(show["expectations"].as_array().unwrap().len(), 4);
    let answer = show["answer"]["answer"].as_str().unwrap();
    for says in ["oltp-data kept", "of its rate in phase during", "oltp-data p99", "from before to during", " -> "] {
        assert!(answer.contains(says), "{says}: {answer}");
    }
    assert!(iops_in(&show, "during", "dss-data") > 0.0);
    assert_eq!(show["workloads"][0]["workers"], 4, "a queue per data file");
}

#[test]
fn ilm_warmup() {
    let show = run_builtin_with("ilm-warmup", SMALL);
    let kinds: Vec<&str> = show["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["prefill", "zero", "prefill", "zero", "prefill"]);
    assert_eq!(labels(&show), vec!["read-16k", "read-32k", "read-64k"]);
}

#[test]
fn restore_ingest() {
    let show = run_builtin_with("restore-ingest", SMALL);
    let sizes = show["workloads"][0]["fidelity"]["block_sizes"].as_array().unwrap();
    assert_eq!(sizes.len(), 5);
    for b in sizes {
        assert!((b["achieved_percent"].as_f64().unwrap() - 20.0).abs() < 5.0, "{b}");
    }
}

#[test]
fn vioperf() {
    let show = run_builtin("vioperf");
    assert_eq!(labels(&show), vec!["write", "rewrite", "read", "skip-read"]);
    assert_eq!(show["expectations"].as_array().unwrap().len(), 4);
    // reads check the crc of what rewrite wrote
    let read = show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == "read").unwrap();
    assert!(read["ops"][0]["verify"]["good"].as_u64().unwrap() > 0, "{read}");
}

#[test]
fn seek_sweep() {
    let show = run_builtin("seek-sweep");
    assert_eq!(labels(&show), vec!["set-1g", "set-16m", "set-64m", "set-256m"]);
}

#[test]
fn hotspot() {
    let show = run_builtin_with("hotspot", SMALL);
    assert_eq!(labels(&show), vec!["uniform", "pareto-0.8", "zipf-1.2"]);
}

#[test]
fn pgbench_clients() {
    let show = run_builtin_scaled("pgbench-clients", "0.25", &["scale=1"]);
    assert_eq!(labels(&show), vec!["c1", "c2", "c4", "c8", "c16"]);
    for (label, clients) in [("c1", 1), ("c16", 16)] {
        assert!(iops_in(&show, label, label) > 0.0, "{label}");
        let w = show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == label).unwrap();
        assert_eq!(w["workers"], clients);
    }
    // one point per client count, and the USL fitted to them
    let curve = &show["analysis"]["curve"];
    let n: Vec<f64> = curve["points"].as_array().unwrap().iter().map(|p| p[0].as_f64().unwrap()).collect();
    assert_eq!(n, vec![1.0, 2.0, 4.0, 8.0, 16.0]);
    assert!(curve["usl"]["lambda"]["value"].as_f64().unwrap() > 0.0, "{curve}");
}

#[test]
fn sysbench_threads_on_mariadb() {
    let s = Scratch::new("builtin-sysbench-threads");
    let show = run_builtin_in(&s, "sysbench-threads", Some("0.2"), &["dbms=mariadb", "tables=2", "table_size=2000"]);
    // sysbench's own seconds are listed in the order of the workloads, not of their names
    let shown = String::from_utf8(s.run(&["show", "last"]).stdout).unwrap();
    let at = |source: &str| shown.find(&format!("\n{source} ")).unwrap_or_else(|| panic!("no {source}: {shown}"));
    assert!(at("sysbench:t2") < at("sysbench:t16"), "{shown}");
    assert_eq!(labels(&show), vec!["t1", "t2", "t4", "t8", "t16"]);
    for (label, threads) in [("t1", 1), ("t16", 16)] {
        assert!(iops_in(&show, label, label) > 0.0, "{label}");
        let w = show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == label).unwrap();
        assert_eq!(w["workers"], threads);
        assert_eq!(w["profile"]["dbms"], "mariadb", "{w}");
    }
    let curve = &show["analysis"]["curve"];
    let n: Vec<f64> = curve["points"].as_array().unwrap().iter().map(|p| p[0].as_f64().unwrap()).collect();
    assert_eq!(n, vec![1.0, 2.0, 4.0, 8.0, 16.0]);
    // N counts what sysbench calls its sessions
    assert_eq!(curve["counts"], "threads");
    // the verdict is t16's TPS against t1's, as the run measured them
    let verdict = &show["expectations"][0];
    let (t1, t16) = (iops_in(&show, "t1", "t1"), iops_in(&show, "t16", "t16"));
    assert_eq!(verdict["passed"], t16 >= 1.5 * t1, "{verdict}: t1 {t1}, t16 {t16}");
}

#[test]
fn tpcc() {
    // a 3 s step: its transactions, figures and answer, not its rate, are judged
    let show = run_builtin_scaled("tpcc", "0.05", &["warehouses=1", "clients=2"]);
    let ops: Vec<&str> =
        show["workloads"][0]["ops"].as_array().unwrap().iter().map(|o| o["op"].as_str().unwrap()).collect();
    assert_eq!(ops, ["new-order", "payment", "delivery", "order-status", "stock-level"]);
    let tpcc = show["events"].as_array().unwrap().iter().find(|e| e["kind"] == "tpcc").unwrap();
    assert!(tpcc["detail"].as_str().unwrap().starts_with("System achieved "), "{tpcc}");
    // the question is about NOPM, and the answer leads with it, the response-time limits
    // one clause when they all hold
    let nopm = show["observed"].as_array().unwrap().iter().find(|o| o["source"] == "tpcc:oltp" && o["name"] == "nopm");
    let nopm = nopm.unwrap()["mean"].as_f64().unwrap();
    assert_eq!(show["headline"]["label"], "NOPM", "{}", show["headline"]);
    assert_eq!(show["headline"]["value"].as_f64(), Some(nopm));
    let answer = show["answer"]["answer"].as_str().unwrap();
    let lead = format!("{} NOPM from ", fmt_count(nopm));
    assert!(answer.starts_with(&lead) && answer.contains(" TPM; "), "{answer}");
    let limits_held = show["expectations"].as_array().unwrap().iter().all(|e| e["passed"] == true);
    let grouped = answer.contains("; oltp: every transaction type's p90 within its limit: PASS");
    assert_eq!(grouped, limits_held, "{answer}");
}

#[test]
fn db_engines_runs_the_same_tpcc_on_both_databases() {
    // 2 s steps: each side's figures and verdicts, not their rates, are judged
    let show = run_builtin_scaled("db-engines", "0.05", &["warehouses=1", "clients=2"]);
    let dbms: Vec<&str> =
        show["workloads"].as_array().unwrap().iter().map(|w| w["profile"]["dbms"].as_str().unwrap()).collect();
    assert_eq!(dbms, ["postgresql", "mariadb"]);
    let events: Vec<&str> = show["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "tpcc")
        .map(|e| e["detail"].as_str().unwrap())
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        events.iter().any(|d| d.contains(" PostgreSQL TPM; ")) && events.iter().any(|d| d.contains(" MariaDB TPM; ")),
        "{events:?}"
    );
    assert!(events.iter().all(|d| d.contains("consistency conditions 1-4 hold")), "{events:?}");
    // the answer leads with each database's NOPM, as each server counted it
    let nopm = |w: &str| {
        let o = show["observed"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["source"] == format!("tpcc:{w}") && o["name"] == "nopm");
        o.unwrap_or_else(|| panic!("no NOPM of {w}"))["mean"].as_f64().unwrap()
    };
    let answer = show["answer"]["answer"].as_str().unwrap();
    let lead =
        format!("postgresql {} NOPM, mariadb {} NOPM; ", fmt_count(nopm("postgresql")), fmt_count(nopm("mariadb")));
    assert!(answer.starts_with(&lead), "{answer}");
    // each limit judged on the p90 the run measured (ns)
    for e in show["expectations"].as_array().unwrap() {
        assert_eq!(e["passed"], e["measured"].as_f64().unwrap() <= 5e9, "{e}");
    }
    let all = show["expectations"].as_array().unwrap().iter().all(|e| e["passed"] == true);
    assert_eq!(answer.ends_with(": PASS"), all, "{answer}");
}

/// `1234.6` as fathom prints a count: `1,235`.
fn fmt_count(v: f64) -> String {
    let digits = format!("{:.0}", v);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn tpch() {
    let s = Scratch::new("builtin-tpch");
    let show = run_builtin_in(&s, "tpch", Some("0.1"), &["scale=0.01"]);
    let ops: Vec<&str> =
        show["workloads"][0]["ops"].as_array().unwrap().iter().map(|o| o["op"].as_str().unwrap()).collect();
    let queries: Vec<String> = (1..=22).map(|n| format!("q{n}")).collect();
    assert_eq!(ops, queries);
    let tpch = show["events"].as_array().unwrap().iter().find(|e| e["kind"] == "tpch").unwrap();
    let detail = tpch["detail"].as_str().unwrap();
    assert!(detail.starts_with("power run (stream 0") && detail.contains("geometric mean"), "{tpch}");
    // the database fits in memory here, and lint says the run measures memory
    let lint = show["warnings"].to_string();
    assert!(lint.contains("tpch-in-memory"), "{lint}");
    // read by its query-set time; its queries run once each, so no rate, stall or
    // Little's law is read into them
    assert_eq!(show["headline"]["label"], "query set", "{}", show["headline"]);
    assert_eq!(show["headline"]["better"], "lower");
    assert_eq!(show["analysis"]["littles_law"], serde_json::json!([]), "{}", show["analysis"]);
    assert_eq!(show["analysis"]["checkpoints"], serde_json::json!([]), "{}", show["analysis"]);
    // nor a rate in its tables: their header has latency columns only
    let shown = s.run(&["show", "last"]);
    let text = String::from_utf8_lossy(&shown.stdout);
    let header = text.lines().find(|l| l.starts_with("workload  op")).unwrap_or_else(|| panic!("{text}"));
    assert!(!header.contains("TPS") && !header.contains("MB/s") && header.contains("p99"), "{header}");
}

#[test]
fn db_colocation_sql() {
    // 2 s before DSS, 2 s beside it, 2 s after: the phases and the verdict's figures are
    // judged, not the rates themselves
    let show = run_builtin_scaled("db-colocation-sql", "0.05", &["warehouses=1", "clients=1", "scale=0.01"]);
    assert_eq!(labels(&show), ["before", "during", "after"]);
    let events = show["events"].as_array().unwrap();
    for kind in ["tpcc", "tpch"] {
        assert!(events.iter().any(|e| e["kind"] == kind && e["status"] == 0), "{kind}: {events:?}");
    }
    // the verdict is the measured figures against the limits: OLTP's new orders and their
    // p99 during and after DSS against before, and what DSS achieved meanwhile
    let expectations = show["expectations"].as_array().unwrap();
    let limits = [(">=", 0.5), ("<=", 4.0), ("<=", 4.0), (">", 0.0)];
    assert_eq!(expectations.len(), limits.len());
    for (e, (cmp, factor)) in expectations.iter().zip(limits) {
        let measured = e["measured"].as_f64().unwrap();
        let limit = factor * e["reference"].as_f64().unwrap_or(1.0);
        let holds = match cmp {
            ">=" => measured >= limit,
            "<=" => measured <= limit,
            _ => measured > limit,
        };
        assert_eq!(e["passed"].as_bool(), Some(holds), "{e}");
    }
    assert!(expectations[3]["measured"].as_f64().unwrap() > 0.0, "DSS ran no query during its phase");
    let answer = show["answer"]["answer"].as_str().unwrap();
    for says in ["oltp new-order TPS", "from before to during", "from before to after", "dss TPS in phase during"] {
        assert!(answer.contains(says), "{says}: {answer}");
    }
}

#[test]
fn tpcc_clients() {
    let show = run_builtin_scaled("tpcc-clients", SCALE, &["warehouses=1"]);
    assert_eq!(labels(&show), vec!["c1", "c2", "c4", "c8"]);
    let curve = &show["analysis"]["curve"];
    let n: Vec<f64> = curve["points"].as_array().unwrap().iter().map(|p| p[0].as_f64().unwrap()).collect();
    assert_eq!(n, vec![1.0, 2.0, 4.0, 8.0]);
    // each step's NOPM, from its own copy of the loaded database
    let events = show["events"].as_array().unwrap();
    assert_eq!(events.iter().filter(|e| e["kind"] == "tpcc" && e["status"] == 0).count(), 4, "{events:?}");
}

#[test]
fn commit_latency() {
    let show = run_builtin("commit-latency");
    let w = &show["workloads"][0];
    let txn = w["ops"].as_array().unwrap().iter().find(|o| o["op"] == "txn").unwrap();
    assert!(txn["ops"].as_u64().unwrap() > 0);
    let l = &txn["latency"];
    assert!(l["p50_us"].as_f64().unwrap() <= l["p99_us"].as_f64().unwrap());
    assert_eq!(w["workers"], 1);
}

#[test]
fn pgbench_ab() {
    let s = Scratch::new("builtin-pgbench-ab");
    let show = run_builtin_in(
        &s,
        "pgbench-ab",
        Some("0.2"),
        &["scale=1", "a.settings.shared_buffers=16MB", "b.settings.shared_buffers=64MB"],
    );
    assert_eq!(labels(&show), vec!["a", "b"]);
    each_side_measured_alone(&s, &show, ["a", "b"], "pgbench_");
    let compared = show["analysis"]["compared"].as_array().unwrap();
    assert_eq!(compared.len(), 1);
    assert_eq!((compared[0]["workload"].as_str(), compared[0]["baseline"].as_str()), (Some("b"), Some("a")));
    let (a, b) = (iops_in(&show, "a", "a"), iops_in(&show, "b", "b"));
    let change = compared[0]["change"]["iops_percent"].as_f64().unwrap();
    assert!((change - (b - a) / a * 100.0).abs() < 1e-6, "{change} vs {a} -> {b}");
    // a sweep of settings, in transactions, its values as a DBA writes them
    let sweep = &show["analysis"]["sweep"];
    assert_eq!(sweep["unit"], "tps", "{sweep}");
    assert_eq!(sweep["rows"][0]["values"][0], "shared_buffers=16MB", "{sweep}");
    the_verdict_is_beyond_the_noise_of_the_runs_own_seconds(&s, &show);
}

/// A setting the server refuses to start with, on one side of pgbench-ab: refused
/// (exit 2) naming the setting and PostgreSQL's own reason, and nothing left running.
#[test]
fn pgbench_ab_with_a_setting_the_server_refuses() {
    let s = Scratch::new("builtin-pgbench-ab-refused");
    let reserved = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("HugePages_Total:").map(|n| n.trim().parse::<u64>().unwrap()))
        .unwrap_or(0);
    let (a, b) = if reserved == 0 {
        ("a.settings.huge_pages=off", "b.settings.huge_pages=on")
    } else {
        // huge pages are reserved here: a value PostgreSQL refuses outright instead
        ("a.settings.wal_level=replica", "b.settings.wal_level=lots")
    };
    let out = s.run(&["run", "pgbench-ab", "--set", "scale=1", "--set", a, "--set", b, "-q"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    let says = match reserved {
        0 => ["b: PostgreSQL did not start: huge_pages = on", "could not map anonymous shared memory"],
        _ => ["b: PostgreSQL did not start", "invalid value for parameter \"wal_level\": \"lots\""],
    };
    assert!(says.iter().all(|s| err.contains(s)), "{err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{err}");
    assert!(servers::running(&s.dir.join("results").display().to_string()).is_empty(), "a server left running");
}

/// pgbench-ab passes only when b's TPS is above a's beyond the noise of their
/// per-second samples: recomputed here from the seconds the run exports (how fast
/// either side is depends on the machine, so the verdict is checked, not assumed).
fn the_verdict_is_beyond_the_noise_of_the_runs_own_seconds(s: &Scratch, show: &serde_json::Value) {
    let out = s.run(&["export", "last", "--format", "json", "--samples"]);
    assert!(out.status.success(), "{}", text(&out));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    // each side's TPS in every second of its measured window, a second without rows as 0
    let seconds = |name: &str| -> Vec<f64> {
        let w = show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap();
        let end = w["end_t"].as_f64().unwrap().min(w["stopped_at"].as_f64().unwrap_or(f64::MAX));
        (w["measure_t"].as_i64().unwrap()..end.floor() as i64)
            .map(|t| {
                let at = |r: &&serde_json::Value| r["workload"] == name && r["t"] == t && r["op"] != "sync";
                rows.iter().filter(at).map(|r| r["ops"].as_f64().unwrap()).sum()
            })
            .collect()
    };
    let (a, b) = (seconds("a"), seconds("b"));
    let (ia, ib) = (interval(&a), interval(&b));
    let e = &show["expectations"][0];
    assert_eq!(e["text"], "b.tps > 1 x a.tps beyond noise", "{e}");
    // the figures compared are the means of those seconds
    let near = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs().max(1.0);
    assert!(
        near(e["measured"].as_f64().unwrap(), ib.0) && near(e["reference"].as_f64().unwrap(), ia.0),
        "{e} {a:?} {b:?}"
    );
    // beyond the noise: the 95% intervals of the two means do not overlap
    let beyond = ib.0 - ia.0 > ia.1 + ib.1 || ia.0 - ib.0 > ia.1 + ib.1;
    assert_eq!(e["beyond_noise"], beyond, "{e} {a:?} {b:?}");
    assert!(near(e["noise"].as_f64().unwrap(), ia.1 + ib.1), "{e} {a:?} {b:?}");
    let passed = beyond && ib.0 > ia.0;
    assert_eq!(e["passed"], passed, "{e} {a:?} {b:?}");
    assert_eq!(show["answer"]["passed"], passed);
    let answer = show["answer"]["answer"].as_str().unwrap();
    let said = if beyond { "beyond the noise of their per-second samples (±" } else { "within the noise" };
    assert!(answer.contains(said), "{answer}");
    // the compare: table judges the same seconds the same way, a second without
    // transactions as 0 as the expectation counts it
    let verdict = &show["analysis"]["compared"][0]["verdict"]["iops"];
    assert_eq!(verdict == "better", passed, "{verdict} {e}");
}

/// The mean of `v` and the half-width of its 95% confidence interval (Student's t).
fn interval(v: &[f64]) -> (f64, f64) {
    const T95: [f64; 10] = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];
    let n = v.len();
    assert!((2..=T95.len() + 1).contains(&n), "{n} seconds: the test's t table has 2 to 11");
    let mean = v.iter().sum::<f64>() / n as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, T95[n - 2] * (var / n as f64).sqrt())
}

#[test]
fn net_streams() {
    let show = run_builtin_scaled("net-streams", "0.2", &[]);
    assert_eq!(labels(&show), vec!["s1", "s2", "s4", "s8"]);
    // judged in the study's unit, on the figures measured: the ratio the answer gives is
    // the workloads' own, and it passes exactly when that ratio meets the limit (how fast
    // loopback is depends on what else the machine does, so the verdict is checked, not
    // assumed)
    let answer = show["answer"]["answer"].as_str().unwrap();
    assert!(answer.contains("s8 Gbit/s is ") && answer.contains(" Gbit/s -> ") && !answer.contains("MB/s"), "{answer}");
    let said: f64 = answer.split("s8 Gbit/s is ").nth(1).and_then(|r| r.split('x').next()).unwrap().parse().unwrap();
    let gbit = |name: &str| {
        let w = show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap();
        w["ops"].as_array().unwrap().iter().find(|o| o["op"] == "send").unwrap()["gbit_per_s"].as_f64().unwrap()
    };
    let ratio = gbit("s8") / gbit("s1");
    // the answer gives the ratio to its printed digits (2.7x, 0.98x): within half the last
    let printed = answer.split("s8 Gbit/s is ").nth(1).and_then(|r| r.split('x').next()).unwrap();
    let digits = printed.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let half = 0.5 * 10f64.powi(-digits) + 1e-9;
    assert!((said - ratio).abs() <= half, "the answer says {said}x, the workloads {ratio:.3}x: {answer}");
    assert_eq!(show["answer"]["passed"], ratio >= 0.8, "{answer}");
    for (name, streams) in [("s1", 1), ("s8", 8)] {
        let w = show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap();
        assert_eq!(w["workers"], streams);
        let send = w["ops"].as_array().unwrap().iter().find(|o| o["op"] == "send").unwrap();
        assert!(send["gbit_per_s"].as_f64().unwrap() > 0.0, "{name}");
        // no link speed unless one is given: loopback is no 10gbit link
        assert!(w["profile"]["link_bps"].is_null(), "{name}: {}", w["profile"]);
    }
}

#[test]
fn checkpoint_tuning() {
    // max_wal_size small, so that a shortened step still sees checkpoints (forced by WAL),
    // two a side even when a busy machine slows a side to a third of its rate
    let s = Scratch::new("builtin-checkpoint-tuning");
    let show = run_builtin_in(&s, "checkpoint-tuning", Some(SCALE), &["warehouses=1", "clients=2", "max_wal=32MB"]);
    each_side_measured_alone(&s, &show, ["tight", "spread"], "tpcc_");
    // the answer gives each side's NOPM and both halves of the question: the stalls, then
    // the verdict on p99
    let answer = show["answer"]["answer"].as_str().unwrap();
    assert!(answer.starts_with("tight ") && answer.contains(" NOPM, spread "), "{answer}");
    // the sweep's rows are new-order's rate and p99, never the five types summed
    let rows = show["analysis"]["sweep"]["rows"].as_array().unwrap();
    let new_order =
        |name: &str| crate::common::ops(&show, name).iter().find(|o| o["op"] == "new-order").unwrap().clone();
    for (row, name) in rows.iter().zip(["tight", "spread"]) {
        let op = new_order(name);
        assert!((row["iops"].as_f64().unwrap() - op["tps"].as_f64().unwrap()).abs() < 1e-6, "{row} {op}");
        assert_eq!(row["p99_us"], op["latency"]["p99_us"], "{row}");
    }
    let stalls = answer.split("; ").nth(1).unwrap_or_default();
    assert!(stalls.starts_with("checkpoints stalled new-order transactions in tight "), "{answer}");
    assert!(stalls.contains(", in spread "), "{answer}");
    assert_eq!(labels(&show), vec!["tight", "spread"]);
    // each cluster's checkpoints are events of its own workload, judged against its NOPM
    let events = show["events"].as_array().unwrap();
    let judged = show["analysis"]["checkpoints"].as_array().unwrap();
    for name in ["tight", "spread"] {
        let theirs = events.iter().filter(|e| e["kind"] == "checkpoint" && e["label"] == name).count();
        assert!(theirs >= 2, "{name}: {theirs} checkpoints: {events:?}");
        let c = judged.iter().find(|c| c["workload"] == name).unwrap_or_else(|| panic!("{name}: {judged:?}"));
        assert_eq!(c["unit"], "NOPM");
        assert!(!c["effects"].as_array().unwrap().is_empty(), "{c}");
        assert!(c["variation"][0][1].as_f64().unwrap() >= 0.0, "{c}");
        // every stall found is a fall of at least a second more than 20% below the rate
        // before (the checkpoint's mean may still be above it: a dip, then a catch-up)
        for e in c["effects"].as_array().unwrap() {
            if let Some(pct) = e["stall"]["drop_percent"].as_f64() {
                assert!(pct > 20.0 && e["stall"]["seconds"].as_u64() >= Some(1), "{e}");
            }
        }
    }
    // the verdict is new-order's p99 of each side (the expectation's in ns), compared
    let p99 = |name: &str| {
        let op = crate::common::ops(&show, name).iter().find(|o| o["op"] == "new-order").unwrap();
        op["latency"]["p99_us"].as_f64().unwrap() * 1000.0
    };
    let e = &show["expectations"][0];
    assert_eq!(e["text"], "spread.new-order.p99 < 1 x tight.new-order.p99", "{e}");
    let (spread, tight) = (p99("spread"), p99("tight"));
    let near = |x: f64, y: f64| (x - y).abs() <= 1e-6 * y.abs().max(1.0);
    assert!(near(e["measured"].as_f64().unwrap(), spread) && near(e["reference"].as_f64().unwrap(), tight), "{e}");
    assert_eq!(e["passed"], spread < tight, "{e}");
}

/// log-disk, shortened: PostgreSQL's WAL lives in the log's directory while the run goes
/// (its segments there, the data's `pg_wal` a link to them), both are removed after it,
/// and the answer says what the log's disk saw in the figures its device observer
/// stored. Here both directories are on the scratch's disk, so the answer says they share
/// it. A log directory with a `dsn`, or the data's own, is refused at its key.
#[test]
fn log_disk_puts_the_wal_on_its_own_directory_and_answers_with_its_disks_writes() {
    let s = Scratch::new("builtin-log-disk");
    let (data, log) = (s.dir.join("data"), s.dir.join("log"));
    let (tables, indexes) = (s.dir.join("tables"), s.dir.join("indexes"));
    for dir in [&data, &log, &tables, &indexes] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let set_log = format!("log={}", log.display());
    let set_tables = format!("tables=[{}, {}]", tables.display(), indexes.display());
    let args = ["run", "log-disk", "-q", "--time-scale", "0.1", "--set", "scale=1", "--set", &set_log, "--set"];
    let args = [&args[..], &[&set_tables, "--target"]].concat();
    let mut child = crate::interrupt::spawn_job(&s, &[&args[..], &[data.to_str().unwrap()]].concat());
    let wal = log.join("fathom-postgres-log-run1-0/pg_wal");
    crate::interrupt::wait_for(&s, &mut child, "WAL in the log's directory", || {
        wal.join("000000010000000000000001").is_file()
    });
    let linked = std::fs::read_link(data.join("fathom-postgres-run1-0/data/pg_wal")).unwrap();
    assert_eq!(linked, wal);
    // pgbench's tables in the first table directory's tablespace, its indexes in the second's
    for dir in [&tables, &indexes] {
        assert!(dir.join("fathom-postgres-tables-run1-0").is_dir(), "no tablespace in {}", dir.display());
    }
    let (out, _) = crate::interrupt::wait_exit(&s, child, std::time::Duration::from_secs(120));
    assert!(matches!(out.status.code(), Some(0 | 3)), "{}", text(&out));
    for dir in [&data, &log, &tables, &indexes] {
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "{} left", dir.display());
    }
    let show = s.show_json();
    let answer = show["answer"]["answer"].as_str().unwrap();
    let device = show["run"]["environment"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == log.to_str().unwrap())
        .and_then(|t| t["device"].as_str())
        .unwrap_or_else(|| panic!("the log's directory is no target: {}", show["run"]["environment"]));
    let device = device.rsplit('/').next().unwrap();
    let mean = |name: &str| {
        let source = format!("device:{device}");
        let o = show["observed"].as_array().unwrap().iter().find(|o| o["source"] == source && o["name"] == name);
        o.unwrap_or_else(|| panic!("no {source} {name}")).get("mean").and_then(|m| m.as_f64()).unwrap()
    };
    let (per_s, size, queue) = (mean("w_s"), mean("wkB_s") / mean("w_s"), mean("aqu_sz"));
    let rate = format!("{}", per_s.round() as u64)
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join(",");
    let said = format!(
        "oltp's log, data and tables share {device}: {rate} writes/s of {size:.1} kB at queue depth {queue:.2}"
    );
    assert!(answer.contains(&said), "{said}\n{answer}");
    // where the log cannot be apart: the server's given, or the log's directory is the data's
    let at_data = format!("log={}", data.display());
    for (set, says) in [
        ("dsn=host=/nonexistent dbname=x", "places the throwaway server's log; with a `dsn` the server is elsewhere"),
        (&at_data as &str, "is `target` itself"),
    ] {
        let out = s.run(&["run", "log-disk", "--set", set, "--target", data.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(String::from_utf8_lossy(&out.stderr).contains(says), "{}", text(&out));
    }
}

/// Tests that change the machine's huge page pools, which every PostgreSQL started
/// meanwhile (`huge_pages = try`, its default) would take from: they hold the machine.
mod alone {
    use super::*;

    /// The kernel's huge page pools, set for a test and put back as they were.
    struct Pools(Vec<(std::path::PathBuf, String)>);

    impl Pools {
        const TWO_MB: &str = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
        const ONE_GB: &str = "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages";

        fn reserve(two_mb: u64, one_gb: u64) -> Pools {
            let mut was = Vec::new();
            for (pool, n) in [(Self::TWO_MB, two_mb), (Self::ONE_GB, one_gb)] {
                was.push((pool.into(), std::fs::read_to_string(pool).unwrap().trim().to_string()));
                if n > 0 {
                    // a 1 GB page needs a free gigabyte in one piece
                    let _ = std::fs::write("/proc/sys/vm/compact_memory", "1");
                }
                std::fs::write(pool, n.to_string()).unwrap();
            }
            Pools(was)
        }

        /// How many pages of `pool` the kernel gave (it gives fewer when memory is fragmented).
        fn reserved(pool: &str) -> u64 {
            std::fs::read_to_string(pool).unwrap().trim().parse().unwrap()
        }
    }

    impl Drop for Pools {
        fn drop(&mut self) {
            for (pool, n) in &self.0 {
                let _ = std::fs::write(pool, n);
            }
        }
    }

    /// The field notes' study, shortened: default pages, 2 MB and 1 GB huge pages. With
    /// no pages reserved, the first side that needs them is refused (exit 2) naming its
    /// size and the pool to reserve them in; with them reserved, every side runs in its
    /// pages, as the host's series and the run's environment show, each compared with
    /// default pages.
    #[test]
    fn hugepages_runs_each_size_in_its_own_pages_or_says_which_are_missing() {
        let s = Scratch::alone("builtin-hugepages");
        let sets = ["scale=1", "shared_buffers=32MB", "clients=2"];
        let mut args = vec!["run", "hugepages", "-q", "--time-scale", "0.1"];
        sets.iter().for_each(|set| args.extend(["--set", set]));
        let none = Pools::reserve(0, 0);
        let out = s.run(&args);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let said = String::from_utf8_lossy(&out.stderr);
        let missing = "huge_2mb: PostgreSQL did not start: huge_pages = on in pages of 2 MB, and this machine has 0 of \
                       them reserved";
        assert!(said.contains(missing) && said.contains("hugepages-2048kB/nr_hugepages"), "{said}");
        drop(none);
        // 32 MB of shared_buffers and PostgreSQL's other shared memory: 25 pages of 2 MB
        let _pools = Pools::reserve(40, 1);
        if Pools::reserved(Pools::ONE_GB) == 0 {
            // this kernel found no free gigabyte in one piece: that side is refused, in its words
            let out = s.run(&args);
            assert_eq!(out.status.code(), Some(2), "{}", text(&out));
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(
                said.contains(
                    "huge_1gb: PostgreSQL did not start: huge_pages = on in pages of 1 GB, and this \
                                   machine has 0 of them reserved"
                ),
                "{said}"
            );
            return;
        }
        let show = run_builtin_in(&s, "hugepages", Some("0.1"), &sets);
        assert_eq!(labels(&show), vec!["default_pages", "huge_2mb", "huge_1gb"]);
        let compared = show["analysis"]["compared"].as_array().unwrap();
        let pairs: Vec<(&str, &str)> =
            compared.iter().map(|c| (c["workload"].as_str().unwrap(), c["baseline"].as_str().unwrap())).collect();
        assert_eq!(pairs, vec![("huge_2mb", "default_pages"), ("huge_1gb", "default_pages")]);
        let most = |name: &str| {
            let o = show["observed"].as_array().unwrap().iter().find(|o| o["source"] == "host" && o["name"] == name);
            o.unwrap_or_else(|| panic!("no {name} observed")).get("max").and_then(|m| m.as_f64()).unwrap()
        };
        assert!(most("huge_pages_used_2MB") >= 16.0, "32 MB in 2 MB pages: {}", most("huge_pages_used_2MB"));
        assert_eq!(most("huge_pages_used_1GB"), 1.0);
        let environment = &show["run"]["environment"];
        assert_eq!(environment["huge_pages"]["reserved"]["2 MB"], 40, "{environment}");
        assert_eq!(environment["huge_pages"]["reserved"]["1 GB"], 1, "{environment}");
    }
}
