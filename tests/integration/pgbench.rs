//! `driver: pgbench` against the real PostgreSQL and pgbench (Debian's `postgresql`):
//! a throwaway cluster fathom starts itself, and a server the test starts on loopback.
//! fathom's figures are checked against pgbench's own closing report and its
//! per-transaction log, read here independently.

use crate::common;

use crate::common::servers::{self, Postgres};
use crate::common::tmpfs::Tmpfs;
use crate::common::{Scratch, ops, text};
use std::path::Path;

/// (end of the transaction in Unix µs, latency µs, schedule lag µs) of every
/// transaction in a pgbench log directory.
fn log_lines(dir: &Path) -> Vec<(i64, u64, u64)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        for line in std::fs::read_to_string(entry.path()).unwrap().lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            let Ok(latency) = f[2].parse::<u64>() else { continue };
            let end = f[4].parse::<i64>().unwrap() * 1_000_000 + f[5].parse::<i64>().unwrap();
            out.push((end, latency, f.get(6).map(|l| l.parse().unwrap()).unwrap_or(0)));
        }
    }
    out
}

/// pgbench's own closing report: (number of transactions actually processed, tps).
fn pgbench_report(run_dir: &Path, workload: &str) -> (u64, f64) {
    let out = std::fs::read_to_string(run_dir.join(format!("{workload}.pgbench.out"))).unwrap();
    let after = |prefix: &str| {
        let line = out.lines().find_map(|l| l.strip_prefix(prefix)).unwrap_or_else(|| panic!("no {prefix}: {out}"));
        line.split_whitespace().next().unwrap().to_string()
    };
    (after("number of transactions actually processed: ").parse().unwrap(), after("tps = ").parse().unwrap())
}

fn quantile(sorted: &[u64], q: f64) -> f64 {
    sorted[((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1] as f64
}

#[test]
fn a_dsn_is_initialised_once_and_reused() {
    let s = Scratch::new("pgbench-dsn");
    let pg = Postgres::start(&s.dir.join("pg"), servers::free_port());
    let path = s.scenario(
        "name: pg\n\
         workloads:\n\
         \x20 tpcb:\n\
         \x20   driver: pgbench\n\
         \x20   scale: 2\n\
         \x20   reuse: true\n\
         \x20   clients: 2\n\
         \x20   rate: 200\n\
         \x20   duration: 3s\n",
    );
    let dsn = format!("dsn={}", pg.dsn("postgres"));
    let first = s.run(&["run", path.to_str().unwrap(), "--set", &dsn]);
    assert!(first.status.success(), "{}", text(&first));
    assert!(String::from_utf8_lossy(&first.stderr).contains("initialising pgbench at scale 2"), "{}", text(&first));
    let show = s.show_json();
    let txn = ops(&show, "tpcb").iter().find(|o| o["op"] == "txn").unwrap();
    assert!(txn["ops"].as_u64().unwrap() > 0);
    // pgbench wrote the scale the run asked for into the test's server
    let branches = std::process::Command::new("psql")
        .args(["-X", "-A", "-t", "-d", &pg.dsn("postgres"), "-c", "SELECT count(*) FROM pgbench_branches"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&branches.stdout).trim(), "2");
    let second = s.run(&["run", path.to_str().unwrap(), "--set", &dsn]);
    assert!(second.status.success(), "{}", text(&second));
    assert!(String::from_utf8_lossy(&second.stderr).contains("reusing the pgbench database at scale 2"));
    // the DSN is stored with the run as given; a password never is (it is refused)
    let secret = s.run(&["run", path.to_str().unwrap(), "--set", "dsn=host=127.0.0.1 password=hunter2"]);
    assert_eq!(secret.status.code(), Some(2), "{}", text(&secret));
    assert!(String::from_utf8_lossy(&secret.stderr).contains("PGPASSWORD"), "{}", text(&secret));
}

#[test]
fn bad_connections_and_settings_fail_with_postgresql_messages() {
    let s = Scratch::new("pgbench-bad");
    let pg = Postgres::start(&s.dir.join("pg"), servers::free_port());
    let path = s.scenario(
        "name: pg\n\
         workloads:\n\
         \x20 w:\n\
         \x20   driver: pgbench\n\
         \x20   duration: 2s\n",
    );
    let path = path.to_str().unwrap();
    // a database that does not exist: the server's own words
    let out = s.run(&["run", path, "--set", &format!("dsn={}", pg.dsn("nope"))]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("database \"nope\" does not exist"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // nobody listening: libpq's words
    let port = servers::free_port();
    let out = s.run(&["run", path, "--set", &format!("dsn=host=127.0.0.1 port={port} user=x")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Connection refused"), "{}", text(&out));
    // a setting the server rejects: PostgreSQL's message, and no server left behind
    let out = s.run(&["run", path, "--set", "w.settings.shared_buffers=lots"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid value for parameter \"shared_buffers\": \"lots\""), "{err}");
    assert!(servers::running(&s.dir.join("results").display().to_string()).is_empty());
    // a server that cannot be reached is bad input, recorded nowhere; a throwaway cluster
    // that does not start is a run, recorded failed with the reason (its log is in the
    // run's directory)
    let runs = s.runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].0, "failed");
    assert!(runs[0].1.as_deref().unwrap_or("").contains("invalid value for parameter"), "{runs:?}");
}

#[test]
fn a_dsn_that_cannot_connect_exits_2_before_anything_is_laid_out_or_recorded() {
    let s = Scratch::new("pgbench-closed");
    let port = servers::free_port();
    let path = s.scenario(&format!(
        "name: pg\n\
         workloads:\n\
         \x20 io: {{target: TARGET, rw: randread, size: 16m, duration: 1s}}\n\
         \x20 db: {{driver: pgbench, duration: 1s, dsn: 'host=127.0.0.1 port={port} user=x'}}\n"
    ));
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("db: cannot connect to") && err.contains("Connection refused"), "{err}");
    assert!(!err.contains("laying out"), "{err}");
    // nothing laid out, no run recorded
    assert_eq!(std::fs::read_dir(s.data()).unwrap().count(), 0);
    if s.dir.join("results/fathom.db").exists() {
        let runs: i64 = s.db().query_row("SELECT count(*) FROM runs", [], |r| r.get(0)).unwrap();
        assert_eq!(runs, 0);
    }
}

#[test]
fn lint_says_a_small_database_measures_memory() {
    let s = Scratch::new("pgbench-lint");
    let path = s.scenario(
        "name: pg\n\
         workloads:\n\
         \x20 w:\n\
         \x20   driver: pgbench\n\
         \x20   scale: 5\n\
         \x20   script: select-only\n\
         \x20   duration: 60s\n",
    );
    let out = s.run(&["lint", path.to_str().unwrap()]);
    let said = text(&out);
    assert!(said.contains("pgbench-in-memory") && said.contains("fits in shared_buffers (128 MiB)"), "{said}");
    // past shared_buffers but inside RAM: still memory
    let out = s.run(&["lint", path.to_str().unwrap(), "--set", "scale=50"]);
    assert!(text(&out).contains("RAM: after warm-up"), "{}", text(&out));
    // IO keys are refused on a driver workload, at their line
    let out = s.run(&["lint", path.to_str().unwrap(), "--set", "w.iodepth=4"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("iodepth: does not apply to `driver: pgbench`"), "{}", text(&out));
}

/// pgbench's seconds reach the Prometheus endpoint and the store while it runs, not when
/// it ends: scrapes and the store show transactions growing before pgbench's closing
/// event is written.
#[test]
fn transactions_are_live_while_pgbench_runs() {
    use common::live::{scraped, stored, watch};
    let s = Scratch::new("pgbench-live");
    let port = servers::free_port();
    let path = s.scenario(&format!(
        "name: pg-live\nprometheus: 127.0.0.1:{port}\nworkloads:\n  \
         oltp: {{driver: pgbench, script: select-only, clients: 2, rate: 300, duration: 8s}}\n"
    ));
    let mut child =
        s.fathom(&["run", path.to_str().unwrap(), "-q"]).stdout(std::process::Stdio::null()).spawn().unwrap();
    let results = s.dir.join("results");
    // (transactions scraped, transactions stored), while pgbench has not ended
    let (seen, status) = watch(&mut child, || {
        let ended = stored(&results, "SELECT count(*) FROM events WHERE kind = 'pgbench'");
        let metrics = servers::get(port, "/metrics").unwrap_or_default();
        let txn = scraped(&metrics, "fathom_ops_total", "op=\"txn\"");
        let rows = stored(&results, "SELECT coalesce(sum(ops), 0) FROM samples WHERE op = 3");
        (ended == Some(0)).then_some((txn, rows.unwrap_or(0)))
    });
    assert!(status.success());
    let running: Vec<(f64, i64)> = seen.into_iter().flatten().filter(|(txn, _)| *txn > 0.0).collect();
    assert!(running.len() >= 3, "transactions were scraped only {} times before pgbench ended", running.len());
    let (first, last) = (running[0], running[running.len() - 1]);
    assert!(last.0 > first.0, "the scraped count grows while pgbench runs: {running:?}");
    assert!(last.1 > 0, "the store holds transactions before pgbench ends: {running:?}");
}

/// Transactions are shown as what they are everywhere a run is read: TPS (and TPM in
/// `--json`), with no MB/s, since pgbench's transactions move no bytes fathom counts.
#[test]
fn transactions_are_tps_everywhere_and_have_no_mb_per_s() {
    let s = Scratch::new("pgbench-units");
    let path = s.scenario(
        "name: pg\n\
         workloads:\n\
         \x20 oltp:\n\
         \x20   driver: pgbench\n\
         \x20   script: select-only\n\
         \x20   clients: 2\n\
         \x20   rate: 200\n\
         \x20   duration: 3s\n",
    );
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let summary = String::from_utf8_lossy(&out.stdout).to_string();
    let results = summary.lines().find(|l| l.starts_with("workload  op")).unwrap_or_else(|| panic!("{summary}"));
    assert!(results.contains("TPS") && !results.contains("IOPS"), "{summary}");
    assert!(!summary.contains("IOPS is transactions"), "{summary}");
    // pgbench's and PostgreSQL's CPU is counted, apart from fathom's own
    assert!(summary.lines().any(|l| l.starts_with("programs") && l.contains("cpu (cores)")), "{summary}");
    // asked vs achieved: the rate asked in TPS, no bytes, no block sizes
    let asked = &summary[summary.find("asked -> achieved").unwrap_or_else(|| panic!("{summary}"))..];
    let header = asked.lines().nth(1).unwrap();
    assert!(header.contains("TPS") && !header.contains("IOPS"), "{summary}");
    let fidelity = asked.lines().find(|l| l.starts_with("oltp ")).unwrap_or("");
    assert!(fidelity.contains("200 -> ") && !fidelity.contains("4k"), "{summary}");

    let show = s.show_json();
    let txn = ops(&show, "oltp").iter().find(|o| o["op"] == "txn").unwrap();
    let tps = txn["tps"].as_f64().unwrap();
    assert!(tps > 0.0, "{txn}");
    assert!((txn["tpm"].as_f64().unwrap() - tps * 60.0).abs() < 1e-6, "{txn}");
    assert_eq!(txn["unit"], "tps");
    for absent in ["iops", "mb_per_s", "bytes", "target_iops"] {
        assert!(txn.get(absent).is_none(), "{absent} in {txn}");
    }
    assert_eq!(txn["target_tps"].as_f64(), Some(200.0));
    let w = show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == "oltp").unwrap();
    let f = &w["fidelity"];
    assert_eq!(f["tps"]["asked"].as_f64(), Some(200.0), "{f}");
    for absent in ["iops", "mb_per_s", "read_percent"] {
        assert!(f.get(absent).is_none(), "{absent} in {f}");
    }
    assert_eq!(f["block_sizes"], serde_json::json!([]), "{f}");

    let runs = s.run(&["runs"]);
    let runs = String::from_utf8_lossy(&runs.stdout).to_string();
    assert!(runs.contains(" TPS txn (oltp)") && !runs.contains("IOPS"), "{runs}");
    let listed: serde_json::Value = serde_json::from_slice(&s.run(&["runs", "--json"]).stdout).unwrap();
    let head = &listed[0]["headline"];
    assert!(head["tps"].as_f64().unwrap() > 0.0 && head.get("iops").is_none() && head.get("mb_per_s").is_none());

    let csv = String::from_utf8(s.run(&["export"]).stdout).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let row = reader.records().next().unwrap().unwrap();
    let cell = |name: &str| row[header.iter().position(|h| h == name).unwrap()].to_string();
    assert!(cell("tps").parse::<f64>().unwrap() > 0.0, "{csv}");
    assert_eq!((cell("iops"), cell("mb_per_s"), cell("bytes")), (String::new(), String::new(), String::new()), "{csv}");

    let page = s.dir.join("report.html");
    let out = s.run(&["report", "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let card = &html[html.find("<div class=\"card\">").unwrap()..];
    let card = &card[..card.find("</div></div>").unwrap()];
    assert!(card.contains("data-metric=\"tps\"") && card.contains(" TPS") && !card.contains("MB/s"), "{card}");
    assert!(!html.contains("data-metric=\"mb_per_s\""), "a transaction's MB/s is shown");
    // the CPU chart draws the programs' CPU next to fathom's own
    let cpu = &html[html.find("id=\"obs-cpu\"").unwrap_or_else(|| panic!("no CPU chart"))..];
    let cpu = &cpu[..cpu.find("</svg>").unwrap()];
    assert!(cpu.contains(">programs<"), "{cpu}");
}

/// A full disk while pgbench initialises is a run that failed (exit 1), not bad input:
/// the scenario was right, the storage ran out.
#[test]
fn a_full_disk_during_pgbench_initialisation_fails_the_run() {
    let s = Scratch::new("pgbench-full");
    let disk = Tmpfs::mount(&s.dir.join("small"), "80m");
    let scenario = s.scenario(&format!(
        "name: pg\nworkloads:\n  tx: {{driver: pgbench, target: {}, scale: 10, duration: 2s}}\n",
        disk.dir.display()
    ));
    let out = s.run(&["run", scenario.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    // PostgreSQL's words for a full disk: a write refused, or one cut short
    let full = ["No space left on device", "Check free disk space"].iter().any(|w| text(&out).contains(w));
    assert!(text(&out).contains("pgbench -i failed") && full, "{}", text(&out));
    let status: String = s.db().query_row("SELECT status FROM runs WHERE id = 1", [], |r| r.get(0)).unwrap();
    assert_eq!(status, "failed");
}

/// Workload `name`'s figures in `show` are its pgbench log's: the transactions that
/// ended in its measured window (the run clock's second 0 at `clock_us`), their rate
/// and latency percentiles, and pgbench's own count and rate over the whole log.
fn agrees_with_its_log(show: &serde_json::Value, run_dir: &std::path::Path, clock_us: i64, name: &str) {
    let txn = ops(show, name).iter().find(|o| o["op"] == "txn").unwrap_or_else(|| panic!("{show}"));
    let w = show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap();
    // exactly the log's transactions that ended in the measured window
    let (from, to) = (w["measure_t"].as_i64().unwrap(), w["end_t"].as_i64().unwrap());
    let lines = log_lines(&run_dir.join(format!("{name}.pgbench-log")));
    let inside: Vec<&(i64, u64, u64)> = lines
        .iter()
        .filter(|(end, _, _)| {
            let t = (end - clock_us).div_euclid(1_000_000);
            t >= from && t < to
        })
        .collect();
    assert_eq!(txn["ops"].as_u64().unwrap(), inside.len() as u64, "{name}");
    // and fathom's TPS is the log's rate over those seconds
    let ours = txn["tps"].as_f64().unwrap();
    let log_tps = inside.len() as f64 / (to - from) as f64;
    assert!((ours / log_tps - 1.0).abs() < 1e-9, "{name}: fathom {ours} TPS, the log's {log_tps} over {from}..{to} s");
    // pgbench counted what it logged
    let (processed, theirs) = pgbench_report(run_dir, name);
    assert_eq!(processed, lines.len() as u64, "{name}");
    // pgbench's TPS is over its whole run, connections and the first, slower second
    // included, which load on the machine stretches: so it is not fathom's over the
    // measured seconds. It is the same transactions over a window that holds them
    // all: from before the first began to after the last ended, give or take the
    // report's rounding and the few ms pgbench spends outside transactions
    let first_start = lines.iter().map(|(end, latency, _)| end - *latency as i64).min().unwrap();
    let last_end = lines.iter().map(|(end, _, _)| *end).max().unwrap();
    let span_s = (last_end - first_start) as f64 / 1e6;
    let pgbench_s = processed as f64 / theirs;
    assert!(
        pgbench_s > span_s - 0.01 && pgbench_s < span_s + 1.0,
        "{name}: pgbench's {theirs} TPS is {processed} transactions over {pgbench_s} s; the log spans {span_s} s"
    );
    // percentiles within the histograms' 1%
    let mut latency: Vec<u64> = inside.iter().map(|l| l.1).collect();
    latency.sort_unstable();
    for (key, q) in [("p50_us", 0.5), ("p99_us", 0.99)] {
        let got = txn["latency"][key].as_f64().unwrap();
        let want = quantile(&latency, q);
        assert!((got / want - 1.0).abs() <= 0.011, "{name} {key}: fathom {got} µs, the log's {want} µs");
    }
    // workers are the clients
    assert_eq!(w["workers"], 2);
}

/// A throwaway cluster's `settings` are written into its postgresql.conf: a value that
/// would end its line there (PostgreSQL reads `\'` as a quote, so doubling quotes alone
/// does not hold it) is refused at its key, and a value with a quote and a backslash
/// reaches the server exactly as written, read back with `SHOW` while it runs.
#[test]
fn a_setting_is_one_value_read_back_exactly_never_more_lines() {
    let s = Scratch::new("pgbench-settings");
    let shown = s.dir.join("shown.txt");
    let scenario = |settings: &str| {
        format!(
            "name: pg\n\
             workloads:\n\
             \x20 w:\n\
             \x20   driver: pgbench\n\
             \x20   clients: 1\n\
             \x20   duration: 3s\n\
             \x20   settings:\n\
             \x20     {settings}\n\
             timeline:\n\
             \x20 - start: w\n\
             \x20   async: true\n\
             \x20 - exec: psql -X -At -d \"$FATHOM_DSN_W\" -c 'SHOW cluster_name' -c 'SHOW fsync' > {}\n\
             \x20   at: 1s\n\
             \x20 - wait_for: w\n",
            shown.display()
        )
    };
    // a value is refused at its key, a name that is no setting's at `settings`
    let value = "scenario.yaml:8: workloads.w.settings.cluster_name: expected one line of text";
    let name = "scenario.yaml:7: workloads.w.settings: \"fsync = off\\nx\" is not a PostgreSQL setting name";
    let cases = [
        ("cluster_name: \"x\\\\'\\nfsync = off\\n#\"", value),
        ("cluster_name: \"a\\rb\"", value),
        ("\"fsync = off\\nx\": 1", name),
    ];
    for (hostile, says) in cases {
        let path = s.scenario(&scenario(hostile));
        for cmd in ["lint", "run"] {
            let out = s.run(&[cmd, path.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(2), "{cmd} {hostile}: {}", text(&out));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(says), "{cmd} {hostile}: {err}");
        }
    }
    assert!(!shown.exists() && !s.dir.join("results/fathom.db").exists(), "nothing ran");
    let path = s.scenario(&scenario("cluster_name: \"it's a\\\\b \\\\' c\""));
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let read = std::fs::read_to_string(&shown).unwrap();
    assert_eq!(read, "it's a\\b \\' c\non\n", "what the server holds");
}

/// A pgbench `script` file is read from the scenario file's directory or below it
/// (symbolic links resolved) through the one bounded reader, and pgbench runs fathom's
/// copy: a script elsewhere, a link out, a device or a FIFO is refused at its line, and
/// no error, stored run or report shows a line of a file outside.
#[test]
fn a_script_outside_the_scenarios_directory_is_refused_never_echoed() {
    let s = Scratch::new("pgbench-script");
    let dir = s.dir.join("study");
    std::fs::create_dir_all(dir.join("sql")).unwrap();
    std::fs::write(s.dir.join("secret.sql"), "SECRET-LINE-42\n").unwrap();
    std::os::unix::fs::symlink(s.dir.join("secret.sql"), dir.join("link.sql")).unwrap();
    let fifo = std::ffi::CString::new(dir.join("fifo.sql").to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path that outlives the call
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::fs::write(dir.join("sql/mine.sql"), "SELECT 1;\n").unwrap();
    let path = dir.join("scenario.yaml");
    let scenario = |script: &str| {
        let text = format!("name: pg\nworkloads:\n  w:\n    driver: pgbench\n    script: {script}\n    duration: 2s\n");
        std::fs::write(&path, text).unwrap();
    };
    let outside = "is outside";
    let absolute = s.dir.join("secret.sql").display().to_string();
    let cases = [
        ("../secret.sql", outside),
        (absolute.as_str(), outside),
        ("link.sql", outside),
        ("/dev/zero", outside),
        ("fifo.sql", "is a named pipe (FIFO), not a regular file: expected a pgbench script"),
    ];
    for (script, says) in cases {
        scenario(script);
        for cmd in ["lint", "run"] {
            let out = s.run(&[cmd, path.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(2), "{cmd} {script}: {}", text(&out));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("scenario.yaml:5: workloads.w.script: ") && err.contains(says),
                "{cmd} {script}: {err}"
            );
            assert!(!text(&out).contains("SECRET"), "{cmd} {script}: {}", text(&out));
        }
    }
    assert!(!s.dir.join("results/fathom.db").exists(), "nothing ran");
    // inside the directory it runs, as fathom's copy
    scenario("sql/mine.sql");
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let show = s.show_json();
    assert_eq!(show["workloads"][0]["profile"]["script"]["file"]["path"], "sql/mine.sql", "{show}");
    let runs = std::fs::read_dir(s.dir.join("results/runs")).unwrap().next().unwrap().unwrap().path();
    assert_eq!(std::fs::read_to_string(runs.join("w.sql")).unwrap(), "SELECT 1;\n", "pgbench ran fathom's copy");
}

/// The server stops answering mid-run (its processes stopped, connections held open):
/// pgbench's -T cannot end it, so fathom stops it a while after its planned end and
/// fails the run, saying so, with the seconds measured before the stall kept.
#[test]
fn a_server_that_stalls_mid_run_fails_the_run_in_bounded_time() {
    let s = Scratch::new("pgbench-stall");
    let pg = Postgres::start(&s.dir.join("pg"), servers::free_port());
    let path = s.scenario(
        "name: pg\nworkloads:\n  w:\n    driver: pgbench\n    script: select-only\n    clients: 2\n    duration: 8s\n",
    );
    let dsn = format!("dsn={}", pg.dsn("postgres"));
    let mut fathom = s.fathom(&["run", path.to_str().unwrap(), "--set", &dsn]);
    let mut child = fathom.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let samples = || crate::common::live::stored(&s.dir.join("results"), "SELECT count(*) FROM samples");
    let started = std::time::Instant::now();
    while samples().unwrap_or(0) < 2 {
        assert!(child.try_wait().unwrap().is_none(), "fathom ended before measuring");
        assert!(started.elapsed() < std::time::Duration::from_secs(120), "nothing measured after 120 s");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    pg.pause(true);
    let stalled = std::time::Instant::now();
    // its 8 s, the bound past its end, and a busy debug build's slack
    let bound = std::time::Duration::from_secs(90);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if stalled.elapsed() > bound {
            let _ = child.kill();
            pg.pause(false);
            panic!("fathom still waiting {bound:?} after the server stalled");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    pg.pause(false);
    assert_eq!(status.code(), Some(1), "the run failed");
    let (ended, error): (String, Option<String>) =
        s.db().query_row("SELECT status, error FROM runs", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert_eq!(ended, "failed");
    let error = error.unwrap_or_default();
    assert!(error.contains("pgbench did not end within 10 s of the workload's end"), "{error}");
    assert!(samples().unwrap_or(0) >= 2, "the seconds before the stall are kept");
}

/// The tests that judge a rate or a time, and so hold the machine alone: `make test` runs
/// them last, one at a time (see `Scratch::alone`).
mod alone {
    use super::*;

    #[test]
    fn throwaway_cluster_tps_and_latency_agree_with_pgbench() {
        // alone: a rate is judged, and the log's whole service time against fathom's seconds
        // of it, which differ when a busy machine slows some seconds more than others
        let s = Scratch::alone("pgbench-throwaway");
        let path = s.scenario(
            "name: pg\n\
         workloads:\n\
         \x20 closed:\n\
         \x20   driver: pgbench\n\
         \x20   script: select-only\n\
         \x20   clients: 2\n\
         \x20   threads: 2\n\
         \x20   duration: 3s\n\
         \x20 paced:\n\
         \x20   driver: pgbench\n\
         \x20   script: select-only\n\
         \x20   clients: 2\n\
         \x20   rate: 400\n\
         \x20   duration: 4s\n\
         timeline:\n\
         \x20 - start: closed\n\
         \x20 - start: paced\n",
        );
        let out = s.run(&["run", path.to_str().unwrap(), "-q"]);
        assert!(out.status.success(), "{}", text(&out));
        let show = s.show_json();
        let run_dir = s.dir.join(format!("results/runs/{}", show["run"]["id"]));
        // the cluster is gone, and nothing of it runs
        let entries: Vec<String> = std::fs::read_dir(&run_dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        assert!(!entries.iter().any(|e| e.starts_with("postgres-")), "{entries:?}");
        assert!(servers::running(&run_dir.display().to_string()).is_empty());

        let clock_us: i64 =
            s.db().query_row("SELECT clock_start_unix_ms FROM runs", [], |r| r.get::<_, i64>(0)).unwrap() * 1000;
        for name in ["closed", "paced"] {
            agrees_with_its_log(&show, &run_dir, clock_us, name);
        }
        // under a rate: the target is met over pgbench's own run. fathom's seconds are the
        // timeline's, and pgbench starting late on a loaded machine (its process, its
        // connections) leaves the first of them short and runs past the last, so fathom's
        // TPS may fall short of the target, never exceed it. The service time (latency less
        // the schedule lag) is what the log says
        let paced = ops(&show, "paced").iter().find(|o| o["op"] == "txn").unwrap();
        assert_eq!(paced["target_tps"].as_f64(), Some(400.0));
        // pgbench was paced: each line of its log has the schedule lag only `--rate` adds,
        // and its own TPS stays under the rate (a Poisson schedule of 1,600 transactions
        // varies by about 2.5%, so 10% is four of its deviations: a bound a paced
        // run never passes by chance). How close to the rate it comes is the machine's
        // business.
        let (_, theirs) = pgbench_report(&run_dir, "paced");
        assert!(theirs < 400.0 * 1.1, "pgbench's own {theirs} TPS under a rate of 400");
        assert!(paced["tps"].as_f64().unwrap() < 400.0 * 1.1, "{paced}");
        let lines = log_lines(&run_dir.join("paced.pgbench-log"));
        let log = std::fs::read_dir(run_dir.join("paced.pgbench-log")).unwrap().flatten();
        let fields: Vec<usize> = log
            .flat_map(|e| {
                std::fs::read_to_string(e.path())
                    .unwrap()
                    .lines()
                    .map(|l| l.split_whitespace().count())
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(!fields.is_empty() && fields.iter().all(|n| *n == 7), "{fields:?}");
        let mut service: Vec<u64> = lines.iter().map(|(_, lat, lag)| lat - lag).collect();
        service.sort_unstable();
        let p50 = paced["service_time"]["p50_us"].as_f64().unwrap();
        let want = quantile(&service, 0.5);
        assert!((p50 / want - 1.0).abs() < 0.05, "service p50 {p50} vs the log's {want}");
        // failures are recorded every second, and the closing line is an event
        let failed: i64 = s
            .db()
            .query_row(
                "SELECT count(*) FROM observations WHERE source = 'pgbench:closed' AND name = 'failed'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(failed, 3, "one a second of the closed loop's 3");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("pgbench closed ok") && stdout.contains("tps = "), "{stdout}");
    }
}
