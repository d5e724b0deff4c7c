//! Each kind of sweep gets the view that answers it: phases that vary what is done (block
//! size, working set, distribution, op) a table and charts of that setting against IOPS,
//! MB/s and latency with their figure of merit; phases that workloads join a
//! before-vs-during table. In the terminal, `show --json` and the report page alike.

use crate::common::{Scratch, text};
use serde_json::Value;

/// Runs `args` to exit 0 (or `code`), then returns its stdout, `show --json` and the
/// report page of the run.
fn run(s: &Scratch, args: &[&str], code: i32) -> (String, Value, String) {
    let out = s.run(args);
    assert_eq!(out.status.code(), Some(code), "{}", text(&out));
    let page = s.dir.join("r.html");
    let report = s.run(&["report", "-o", page.to_str().unwrap()]);
    assert_eq!(report.status.code(), Some(0), "{}", text(&report));
    (String::from_utf8_lossy(&out.stdout).to_string(), s.show_json(), std::fs::read_to_string(&page).unwrap())
}

/// The lines of `stdout` after the one that starts with `header`.
fn after<'a>(stdout: &'a str, header: &str) -> Vec<&'a str> {
    stdout.lines().skip_while(|l| !l.starts_with(header)).skip(1).collect()
}

/// The number in `html` right after `prefix` (up to the closing quote).
fn value(html: &str, prefix: &str) -> f64 {
    let at = html.find(prefix).unwrap_or_else(|| panic!("no {prefix}")) + prefix.len();
    html[at..].split('"').next().unwrap().parse().unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

#[test]
fn a_block_size_sweep_shows_its_table_in_the_terminal_the_json_and_the_page() {
    let s = Scratch::new("views-bs");
    let scenario = s.scenario(
        "name: sizes\ndefaults: {engine: null, rw: randread, iodepth: 2, duration: 1s}\nworkloads:\n  \
         small: {bs: 4k}\n  middle: {bs: 16k}\n  large: {bs: 64k}\ntimeline:\n  - start: small\n  - start: middle\n  \
         - start: large\n",
    );
    let (stdout, show, html) = run(&s, &["run", scenario.to_str().unwrap()], 0);
    assert!(stdout.contains("time for latency to settle per block size"), "{stdout}");
    let table = after(&stdout, "time for latency");
    assert!(
        table[0].starts_with("phase") && table[0].contains("block size") && table[0].contains("p99.9"),
        "{table:?}"
    );
    for (line, (phase, bs)) in table[1..4].iter().zip([("small", "4k"), ("middle", "16k"), ("large", "64k")]) {
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells[..2], [phase, bs], "{line}");
    }
    let sweep = &show["analysis"]["sweep"];
    assert_eq!(sweep["setting"], "block size", "{sweep}");
    assert_eq!(sweep["merit"], "settle");
    let rows = sweep["rows"].as_array().unwrap();
    let values: Vec<Vec<String>> = rows.iter().map(|r| strings(&r["values"])).collect();
    assert_eq!(values, [["4k"], ["16k"], ["64k"]]);
    for r in rows {
        assert!(r["iops"].as_f64().unwrap() > 0.0, "{r}");
        // MB/s is IOPS times the block size
        let bs = match r["phase"].as_str().unwrap() {
            "small" => 4096.0,
            "middle" => 16384.0,
            _ => 65536.0,
        };
        let mbps = r["iops"].as_f64().unwrap() * bs / 1e6;
        assert!((r["mb_per_s"].as_f64().unwrap() - mbps).abs() <= mbps * 0.01, "{r}");
        assert!(r["p99_us"].as_f64().unwrap() >= r["p50_us"].as_f64().unwrap(), "{r}");
        assert!(r["settle"]["round_s"].as_u64().unwrap() >= 1, "{r}");
    }
    assert!(show["analysis"]["interference"].as_array().unwrap().is_empty());
    assert!(html.contains("<section id=\"sweep\"><h2>Time for latency to settle per block size"), "no sweep section");
    assert!(html.contains("data-phase=\"middle\" data-metric=\"block_size\">16k</td>"), "no row for 16k");
    assert_eq!(
        value(&html, "data-phase=\"middle\" data-metric=\"iops\" data-value=\""),
        rows[1]["iops"].as_f64().unwrap()
    );
    for chart in ["sweep-iops", "sweep-mbps", "sweep-latency"] {
        assert!(html.contains(&format!("id=\"{chart}\"")), "no {chart}");
    }
}

#[test]
fn a_run_that_workloads_join_shows_before_and_during_per_workload() {
    let s = Scratch::new("views-interference");
    let scenario = s.scenario(
        "name: joined\ndefaults: {engine: null, rw: randread, bs: 4k, iodepth: 1}\nworkloads:\n  \
         steady: {rate_iops: 200, duration: 4s}\n  joiner: {rate_iops: 100, duration: 2s}\ntimeline:\n  \
         - start: steady\n    async: true\n    phase: before\n  - wait: 1s\n  - start: joiner\n    phase: during\n  \
         - wait_for: steady\n",
    );
    let (stdout, show, html) = run(&s, &["run", scenario.to_str().unwrap()], 0);
    assert!(show["analysis"]["sweep"].is_null(), "{}", show["analysis"]);
    let rows = show["analysis"]["interference"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "only `steady` ran in both: {rows:?}");
    let r = &rows[0];
    assert_eq!(
        (r["workload"].as_str(), r["before"].as_str(), r["during"].as_str()),
        (Some("steady"), Some("before"), Some("during"))
    );
    assert_eq!(strings(&r["with"]), ["joiner"]);
    for figure in ["iops", "p50_us", "p99_us"] {
        let (b, d) = (r["before_figures"][figure].as_f64().unwrap(), r["during_figures"][figure].as_f64().unwrap());
        assert!(b > 0.0 && d > 0.0, "{r}");
        let ratio = r["ratio"][figure.trim_end_matches("_us")].as_f64().unwrap();
        assert!((ratio - d / b).abs() < 1e-9, "{r}");
        let percent = r["change"][format!("{}_percent", figure.trim_end_matches("_us"))].as_f64().unwrap();
        assert!((percent - (d - b) / b * 100.0).abs() < 1e-6, "{r}");
    }
    assert!(
        r["before_figures"]["attainment"].as_f64().unwrap() > 0.5,
        "an open-loop workload has an achieved rate: {r}"
    );
    assert!(stdout.contains("before -> during: each workload"), "{stdout}");
    let line = after(&stdout, "before -> during").into_iter().find(|l| l.starts_with("steady ")).unwrap();
    assert!(line.contains("before -> during") && line.contains("%, x"), "{line}");
    assert!(html.contains("<section id=\"interference\"><h2>Before and during</h2>"), "no before/during section");
    let p99 = format!(
        "data-workload=\"steady\" data-view=\"before-during\" data-metric=\"p99\" data-before=\"{}\"",
        r["before_figures"]["p99_us"]
    );
    assert!(html.contains(&p99), "no p99 cell: {p99}");
}

#[test]
fn vioperf_judges_each_test_by_mb_per_s_per_core() {
    let s = Scratch::new("views-vioperf");
    // the reads' 512m file shrunk to 16m; expectations may fail on a slow disk (exit 3)
    let out = s.run(&["run", "vioperf", "-q", "--set", "duration=1s", "--set", "size=16m"]);
    assert!(matches!(out.status.code(), Some(0 | 3)), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let (_, show, html) = run(&s, &["show", "last"], 0);
    assert!(stdout.contains("MB/s per core per test, vioperf"), "{stdout}");
    let cores = show["run"]["environment"]["cpus"].as_f64().unwrap();
    let sweep = &show["analysis"]["sweep"];
    assert_eq!(sweep["merit"], "per_core", "{sweep}");
    let rows = sweep["rows"].as_array().unwrap();
    let phases: Vec<&str> = rows.iter().map(|r| r["phase"].as_str().unwrap()).collect();
    assert_eq!(phases, ["write", "rewrite", "read", "skip-read"]);
    for r in rows {
        let p = &r["per_core"];
        let per_core = p["mb_per_s_per_core"].as_f64().unwrap();
        assert!((per_core - r["mb_per_s"].as_f64().unwrap() / cores).abs() < 1e-6, "{r}");
        let verdict = if per_core >= 40.0 {
            "recommended"
        } else if per_core >= 20.0 {
            "minimum"
        } else {
            "below_minimum"
        };
        assert_eq!(p["verdict"], verdict, "{r}");
        let said = if per_core >= 40.0 {
            "pass: >= 40 recommended"
        } else if per_core >= 20.0 {
            "pass: >= 20 minimum"
        } else {
            "FAIL: < 20 minimum"
        };
        let table = after(&stdout, "MB/s per core per test");
        let line = table.iter().find(|l| l.starts_with(&format!("{} ", r["phase"].as_str().unwrap()))).unwrap();
        assert!(line.ends_with(said), "{line}");
    }
    assert!(html.contains("id=\"sweep-per-core\""), "no MB/s per core chart");
    assert!(html.contains("data-metric=\"verdict\""), "no verdict in the page");
}

#[test]
fn a_working_set_sweep_is_response_time_against_the_set_smallest_first() {
    let s = Scratch::new("views-sets");
    // seek-sweep's order: the largest set first
    let scenario = s.scenario(
        "name: sets\ndefaults: {engine: null, rw: randread, bs: 8k, iodepth: 1, duration: 1s}\nworkloads:\n  \
         set-1g: {size: 1g}\n  set-16m: {size: 16m}\n  set-64m: {size: 64m}\ntimeline:\n  - start: set-1g\n  \
         - start: set-16m\n  - start: set-64m\n",
    );
    let (stdout, show, html) = run(&s, &["run", scenario.to_str().unwrap()], 0);
    let sweep = &show["analysis"]["sweep"];
    assert_eq!((sweep["setting"].as_str(), sweep["merit"].as_str()), (Some("working set"), Some("response_time")));
    let phases: Vec<&str> = sweep["rows"].as_array().unwrap().iter().map(|r| r["phase"].as_str().unwrap()).collect();
    assert_eq!(phases, ["set-16m", "set-64m", "set-1g"]);
    let table = after(&stdout, "response time against working set");
    assert!(table[0].contains("working set") && table[0].contains("response time"), "{table:?}");
    let order: Vec<&str> = table[1..4].iter().map(|l| l.split_whitespace().nth(1).unwrap()).collect();
    assert_eq!(order, ["16m", "64m", "1g"]);
    assert!(html.contains("<h2>Response time against working set"), "no sweep section");
    assert!(show["analysis"]["curve"].is_null(), "no curve over working sets");
}
