//! The scenario's `results:` views (a per-second series of some workloads, its figures,
//! bands judged as expectations) through the real binary: `run`'s verdict and exit
//! status, `show` and `show --json`, the report's chart; and `description_html`
//! sanitised on the page as Chromium renders it.

use crate::common::{Scratch, text};
use std::path::Path;
use std::process::Command;

/// Two open-loop workloads of fathom's null engine, 200 and 300 IOPS, summed by a view
/// whose band is `band`.
fn scenario(s: &Scratch, band: &str, extra: &str) -> std::path::PathBuf {
    s.scenario(&format!(
        "name: views\ndefaults: {{engine: null, rw: randread, bs: 4k, duration: 8s}}\nworkloads:\n  \
         data1: {{rate_iops: 200}}\n  data2: {{rate_iops: 300}}\n\
         results:\n  - name: OLTP IOPS\n    workloads: [data1, data2]\n    metric: iops\n    aggregate: sum\n    \
         hint: Consistently achieve 500 IOPS.\n    expected: 500\n    bands:\n      - {band}\n  \
         - name: OLTP latency\n    workloads: [data1, data2]\n    metric: latency\n  \
         - name: Cluster Network Received\n    not_measured: \"fathom has no network observer\"\n  \
         - name: Cluster CPU Usage\n    observed: cpu\n{extra}"
    ))
}

#[test]
fn a_band_the_series_stays_in_passes_and_the_view_shows_its_series() {
    let s = Scratch::new("results-pass");
    let path = scenario(&s, "{name: wide, lower: 400, upper: 600, share: 80%}", "");
    let out = s.run(&["run", path.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // the one-line answer carries the band's deciding figures
    assert!(stdout.contains("OLTP IOPS in wide band [400, 600] IOPS for "), "{stdout}");
    assert!(stdout.contains(">= 80%: PASS"), "{stdout}");
    // the terminal's table: one row per view, the one fathom cannot measure says why
    assert!(stdout.contains("results (the scenario's views, per second):"), "{stdout}");
    assert!(stdout.contains("Consistently achieve 500 IOPS."), "{stdout}");
    assert!(stdout.contains("not measured: fathom has no network observer"), "{stdout}");

    let show = s.show_json();
    // each view's bands once, with their verdicts (no key twice in an object)
    let raw = s.run(&["show", "last", "--json"]);
    assert_eq!(String::from_utf8_lossy(&raw.stdout).matches("\"bands\":").count(), 4);
    let results = show["results"].as_array().expect("results in show --json");
    assert_eq!(results.len(), 4);
    let iops = &results[0];
    assert_eq!((iops["name"].as_str(), iops["unit"].as_str()), (Some("OLTP IOPS"), Some("IOPS")));
    let mean = iops["mean"].as_f64().unwrap();
    assert!((350.0..=650.0).contains(&mean), "the view's mean {mean}, expected near 500");
    let series = iops["series"].as_array().unwrap();
    assert!(series.len() >= 6, "{series:?}");
    assert!(series.iter().all(|p| p["t"].is_i64() && p["value"].is_f64()));
    let band = &iops["bands"][0];
    assert_eq!(band["passed"], true, "{band}");
    assert!(band["inside"].as_f64().unwrap() >= 0.8, "{band}");
    // latency per second with its percentiles, and over the window of the IOs
    let latency = &results[1];
    assert_eq!(latency["aggregate"], "mean");
    assert!(latency["series"].as_array().unwrap().iter().all(|p| p["p50"].is_f64() && p["p99"].is_f64()));
    assert!(latency["p99"].as_f64().unwrap() >= latency["p50"].as_f64().unwrap());
    assert!(results[2]["series"].as_array().unwrap().is_empty());
    // the host's CPU, busy percent per second, from the observer every run has
    let cpu = &results[3];
    assert_eq!(cpu["unit"], "% busy");
    let busy = cpu["series"].as_array().unwrap();
    assert!(!busy.is_empty() && busy.iter().all(|p| (0.0..=100.0).contains(&p["value"].as_f64().unwrap())), "{cpu}");
    // the band joined the run's expectations
    let rows: i64 = s.db().query_row("SELECT count(*) FROM expectations WHERE passed = 1", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 1);
}

#[test]
fn a_band_the_series_cannot_meet_fails_the_run_with_its_share() {
    let s = Scratch::new("results-fail");
    let path = scenario(&s, "{name: 95%, lower: 2000, upper: 3000}", "");
    let out = s.run(&["run", path.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // no second inside: 0.0% of the seconds judged, against the 95% its name says
    assert!(stdout.contains("OLTP IOPS in 95% band [2,000, 3,000] IOPS for 0.0% of "), "{stdout}");
    assert!(stdout.contains(" s >= 95%: FAIL"), "{stdout}");
    let runs = s.run(&["runs"]);
    assert!(String::from_utf8_lossy(&runs.stdout).contains("expectations FAILED"), "{}", text(&runs));
}

#[test]
fn the_report_charts_each_view_with_its_band_and_shows_a_safe_description() {
    let s = Scratch::new("results-report");
    // a 1x1 PNG
    let png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let description = format!(
        "description_html: '<p>Mixed <b>OLTP</b><script>document.title=\"owned\"</script>\
         <img src=\"http://example.invalid/x.png\"><img src=\"x\" onerror=\"document.title=1\">\
         <a href=\"https://example.invalid/\">docs</a><img alt=\"diagram\" src=\"{png}\"></p>'\n"
    );
    let path = scenario(&s, "{name: 95%, lower: 400, upper: 600, share: 50%}", &description);
    let out = s.run(&["run", path.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let page = s.dir.join("report.html");
    let out = s.run(&["report", "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dom = chromium_dom(&page);
    // the view's chart: its series, the expected line, the band shaded, the hint under it
    let at = dom.find("<svg id=\"result-0\"").expect("the view's chart");
    let chart = &dom[at..at + dom[at..].find("</svg>").unwrap()];
    assert!(chart.contains("data-name=\"IOPS\"") && !chart.contains("data-points=\"0\""), "{chart}");
    assert!(chart.contains("data-name=\"expected 500 IOPS\""), "{chart}");
    assert!(chart.contains("class=\"level\" data-from=\"400\" data-to=\"600\""), "{chart}");
    assert!(dom[at..].contains("<figcaption class=\"note\">Consistently achieve 500 IOPS.</figcaption>"));
    assert!(dom.contains("<svg id=\"result-1\""), "the latency view's chart");
    assert_eq!(dom.matches("id=\"result-views\"").count(), 1, "one section of views");
    // the description: rendered, with nothing that runs or fetches, the data image kept
    let from = dom.find("id=\"description\"").expect("the description in the header");
    let header = &dom[from..from + dom[from..].find("</header>").unwrap()];
    assert!(header.contains("<b>OLTP</b>") && header.contains(png), "{header}");
    for banned in ["<script", "onerror", "http://example.invalid", "https://example.invalid", "owned"] {
        assert!(!header.contains(banned), "{banned} in {header}");
    }
    assert!(!dom.contains("<title>owned") && !dom.contains("<title>1<"), "a script of the description ran");
}

/// The page as headless Chromium renders it (its DOM after scripts ran).
fn chromium_dom(page: &Path) -> String {
    let out = Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium is installed by scripts/install-deps.sh test");
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_view_naming_an_unknown_workload_or_phase_is_refused_where_it_is_written() {
    let s = Scratch::new("results-errors");
    for (view, says) in [
        (
            "  - name: v\n    workloads: [data1, nosuch]\n    metric: iops\n",
            "scenario.yaml:7: results.0.workloads.1: no workload named `nosuch` (workloads: data1)",
        ),
        (
            "  - name: v\n    workloads: [data1]\n    metric: iops\n    phases: [peak]\n",
            "scenario.yaml:9: results.0.phases.0: no phase is labelled `peak` (phases: none)",
        ),
        ("  - name: v\n    workloads: [data1]\n    metric: iops\n  - name: v\n    observed: cpu\n", "another result"),
        ("  - name: v\n    workloads: [data1]\n    metric: throughput\n", "results"),
    ] {
        let path = s.scenario(&format!(
            "name: bad\ndefaults: {{engine: null, duration: 1s}}\nworkloads:\n  data1: {{rw: read}}\nresults:\n{view}"
        ));
        let out = s.run(&["run", path.to_str().unwrap(), "-q"]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{view}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn show_and_report_judge_a_band_by_the_values_the_run_used() {
    let s = Scratch::new("results-set");
    let path = scenario(&s, "{name: wide, lower: '${lo}', upper: 1e18}", "vars:\n  lo: 1\n");
    let out = s.run(&["run", path.to_str().unwrap(), "-q", "--set", "lo=1e15"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    // the band as run: its floor is --set's, and it failed; `show` says the same
    let shown = s.run(&["show", "last"]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("wide [1,000,000,000,000,000, 1,000,000,000,000,000,000] IOPS 0.0% >= 95% FAIL"), "{shown}");
    assert!(!shown.contains("95% pass"), "{shown}");
    let show = s.show_json();
    assert_eq!(show["results"][0]["bands"][0]["passed"], false, "{}", show["results"][0]);
    assert_eq!(show["run"]["vars"]["lo"], "1e15", "{}", show["run"]);
    let page = s.dir.join("report.html");
    assert!(s.run(&["report", "-o", page.to_str().unwrap()]).status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("data-from=\"1000000000000000\""), "the report's band is the run's");
}
