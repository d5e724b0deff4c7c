//! `fathom report`: a page rendered from a real short run, opened in headless Chromium
//! (Debian's `chromium`, installed by `scripts/install-deps.sh test`): its script runs
//! to the end without errors, every chart is there with data, and the headline figures
//! are those of `fathom show --json`.

use crate::common::{Scratch, chromium, text};

/// The value of `data-value` on the element with these data attributes.
fn figure(dom: &str, attrs: &str) -> f64 {
    let at = dom.find(attrs).unwrap_or_else(|| panic!("no element with {attrs}"));
    let rest = &dom[at + attrs.len()..];
    let v = rest.strip_prefix(" data-value=\"").unwrap_or_else(|| panic!("{attrs}: no data-value"));
    v[..v.find('"').unwrap()].parse().unwrap()
}

#[test]
fn a_report_renders_in_chromium_with_every_chart_and_the_figures_of_show() {
    let s = Scratch::new("report");
    let scenario = s.scenario(
        "name: coloc\ndefaults: {target: TARGET, size: 16m}\nworkloads:\n  \
         oltp: {rw: randrw, bs: 8k, iodepth: 2, rate_iops: 400, duration: 6s}\n  \
         dss: {rw: read, bs: 128k, iodepth: 2, duration: 3s}\n\
         timeline:\n  - start: oltp\n    async: true\n    phase: alone\n  - wait: 2s\n  - mark: dss starts\n  \
         - start: dss\n    phase: with dss\n  - wait_for: oltp\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let page = s.dir.join("report.html");
    let charts = s.dir.join("charts");
    let out = s.run(&["report", "-o", page.to_str().unwrap(), "--svg", charts.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let dom = chromium(&page, &["--dump-dom"]);
    assert!(dom.status.success(), "{}", text(&dom));
    let html = String::from_utf8_lossy(&dom.stdout);
    let log = String::from_utf8_lossy(&dom.stderr);
    // the inline script ran to its last line, allowed by the page's policy (which names
    // it by its hash), and the console saw no error and no refusal of the policy
    assert!(html.contains("data-ready=\"1\""), "the report's script did not finish");
    assert!(!log.contains("Uncaught") && !log.contains(":CONSOLE"), "{log}");
    assert!(!log.contains("Content Security Policy"), "{log}");
    let policy = std::fs::read_to_string(&page).unwrap();
    assert!(policy.contains("content=\"default-src 'none';") && policy.contains("script-src 'sha256-"), "no policy");

    // every chart is on the page with data in each series
    for id in ["ts-iops", "ts-mbps", "ts-latency", "obs-cpu", "hist-0", "hist-1"] {
        let at = html.find(&format!("<svg id=\"{id}\"")).unwrap_or_else(|| panic!("no chart {id}"));
        let chart = &html[at..at + html[at..].find("</svg>").unwrap()];
        assert!(chart.contains("class=\"title\""), "{id} has no title");
        assert!(!chart.contains("data-points=\"0\""), "{id} has an empty series");
        assert!(chart.matches("class=\"series\"").count() >= 1, "{id} has no series");
        assert!(charts.join(format!("{id}.svg")).exists(), "{id}.svg not written");
    }
    // the latency legend names every series, p99 dashed as its line is, p50 solid;
    // p99.9 has a chart of its own
    let at = html.find("<svg id=\"ts-latency\"").unwrap();
    let lat = &html[at..at + html[at..].find("</svg>").unwrap()];
    for name in ["oltp read", "oltp write", "dss"] {
        assert!(lat.contains(&format!("data-name=\"{name} p50\" data-style=\"line\"")), "{name} p50: {lat}");
        assert!(lat.contains(&format!("data-name=\"{name} p99\" data-style=\"dashed\"")), "{name} p99");
    }
    assert!(html.contains("<svg id=\"ts-p99-9\""), "no p99.9 over time");
    // histograms: a log share axis, so the tail shows (ticks a decade apart)
    let at = html.find("<svg id=\"hist-0\"").unwrap();
    let hist = &html[at..at + html[at..].find("</svg>").unwrap()];
    assert!(hist.contains(">100%</text>") && hist.contains(">10%</text>"), "{hist}");
    // the phases are shaded and the mark drawn on the time series
    let ts = &html[html.find("<svg id=\"ts-iops\"").unwrap()..];
    assert!(ts.contains("class=\"band\"") && ts.contains("dss starts"));

    // the headline and results figures are show --json's
    let show = s.show_json();
    for w in show["workloads"].as_array().unwrap() {
        let name = w["name"].as_str().unwrap();
        let ops = w["ops"].as_array().unwrap();
        let iops: f64 = ops.iter().map(|o| o["iops"].as_f64().unwrap()).sum();
        let head = figure(&html, &format!("data-workload=\"{name}\" data-metric=\"iops\""));
        assert!((head - iops).abs() <= 1e-9 * iops.max(1.0), "{name}: page {head}, show {iops}");
        for o in ops {
            let op = o["op"].as_str().unwrap();
            for (metric, value) in [("iops", &o["iops"]), ("p99_us", &o["latency"]["p99_us"])] {
                let shown =
                    figure(&html, &format!("data-workload=\"{name}\" data-op=\"{op}\" data-metric=\"{metric}\""));
                let v = value.as_f64().unwrap();
                assert!((shown - v).abs() <= 1e-9 * v.max(1.0), "{name} {op} {metric}: page {shown}, show {v}");
            }
        }
    }

    // a screenshot of the whole page has something on it
    let png = s.dir.join("report.png");
    let shot = chromium(&page, &["--window-size=1150,4000", &format!("--screenshot={}", png.display())]);
    assert!(shot.status.success(), "{}", text(&shot));
    assert!(std::fs::metadata(&png).unwrap().len() > 50_000, "the screenshot is nearly empty");
}

/// The compare page's script runs in a browser without errors, its runs' series
/// overlaid. What the page and `compare` say of two runs is tested in-process on a
/// store fixture (`cli::compare`'s tests).
#[test]
fn a_compare_page_renders_in_chromium() {
    let s = Scratch::new("compare");
    let body = "name: ab\nworkloads:\n  r: {engine: null, rw: randread, bs: BS, rate_iops: 200, duration: 1s}\n";
    for bs in ["4k", "64k"] {
        let scenario = s.scenario(&body.replace("BS", bs));
        assert_eq!(s.run(&["run", scenario.to_str().unwrap(), "-q"]).status.code(), Some(0));
    }
    let page = s.dir.join("compare.html");
    let out = s.run(&["compare", "1", "2", "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dom = chromium(&page, &["--dump-dom"]);
    let html = String::from_utf8_lossy(&dom.stdout);
    let log = String::from_utf8_lossy(&dom.stderr);
    assert!(!log.contains(":CONSOLE"), "{log}");
    let ts = &html[html.find("<svg id=\"cmp-0-iops\"").expect("overlaid IOPS")..];
    assert!(ts.contains("data-name=\"run 1: r\"") && ts.contains("data-name=\"run 2: r\""));
}

/// The page's expectations table says each figure as the run's summary does, in its
/// unit (`4.11 ms`, `502`), never a raw number (`4112383.0000` nanoseconds).
#[test]
fn the_pages_expectations_read_as_the_runs() {
    let s = Scratch::new("report-expect");
    let scenario = s.scenario(
        "name: ex\nworkloads:\n  w: {engine: null, rw: randread, rate_iops: 200, duration: 2s}\n\
         expect:\n  - w.read.p99 < 10s\n  - w.iops > 1\n  - w.read.mean <= 2 x w.read.mean\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    let page = s.dir.join("report.html");
    let out = s.run(&["report", "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let table = &html[html.find("<h3>Expectations</h3>").expect("an expectations table")..];
    let table = &table[..table.find("</table>").unwrap()];
    let rows: Vec<&str> = table.split("<tr class=").skip(1).collect();
    assert_eq!(rows.len(), 3, "{table}");
    for row in rows {
        let cells: Vec<&str> = row.split("<td>").skip(1).map(|c| c.split("</td>").next().unwrap()).collect();
        let line = format!("pass {}: {}", cells[1].replace("&lt;", "<").replace("&gt;", ">"), cells[2]);
        assert!(said.contains(&line), "page: {line}\nrun said:\n{said}");
    }
}
