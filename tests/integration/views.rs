//! A built-in's view from a real run: vioperf judges each test by MB/s per core, in the
//! terminal, `show --json` and the report page alike. Each kind of sweep's view (block
//! size, working set, before and during) is tested in-process on a store fixture
//! (`cli::show`'s tests).

use crate::common::{Scratch, text};
use serde_json::Value;

/// Three significant digits, as fathom prints a figure.
fn sig3(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

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

#[test]
fn vioperf_judges_each_test_by_mb_per_s_per_core() {
    let s = Scratch::new("views-vioperf");
    // the reads' 512m file shrunk to 16m; expectations may fail on a slow disk (exit 3)
    let out = s.run(&["run", "vioperf", "-q", "--set", "duration=1s", "--set", "size=16m"]);
    assert!(matches!(out.status.code(), Some(0 | 3)), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let (_, show, html) = run(&s, &["show", "last"], 0);
    assert!(stdout.contains("MB/s per core per test, vioperf"), "{stdout}");
    // a thread per online CPU in every test, each writer appending to a file of its own
    // SAFETY: sysconf reads a value and has no preconditions.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) } as u64;
    let workers: Vec<u64> =
        show["workloads"].as_array().unwrap().iter().map(|w| w["workers"].as_u64().unwrap()).collect();
    assert_eq!(workers, [online; 4], "{show}");
    for job in 0..online {
        let file = s.dir.join(format!("fathom-data/fathom-vioperf-write.{job}.dat"));
        assert!(std::fs::metadata(&file).is_ok_and(|m| m.len() > 0), "{} is empty or missing", file.display());
    }
    let cores = online as f64;
    // each expectation judges the MB/s per core stored, and the answer says over how many
    let answer = show["answer"]["answer"].as_str().unwrap();
    for e in show["expectations"].as_array().unwrap() {
        let name = e["text"].as_str().unwrap().split('.').next().unwrap();
        let w = show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap();
        let mb_per_s: f64 = w["ops"].as_array().unwrap().iter().map(|o| o["mb_per_s"].as_f64().unwrap()).sum();
        let measured = e["measured"].as_f64().unwrap();
        assert!((measured - mb_per_s / cores).abs() < 0.01 * measured.max(1.0), "{e} against {mb_per_s} MB/s");
        assert_eq!(e["passed"], measured >= 20.0, "{e}");
        let said = format!("{name} MB/s per core {} MB/s over {online} cores (limit >= 20.0 MB/s)", sig3(measured));
        assert!(answer.contains(&said), "{said} not in {answer}");
    }
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
