//! `fathom show RUN [--json]`: one run's results per workload and op.

use crate::error::Result;
use crate::metrics::summary::Throughput;
use crate::report::format::seconds;
use crate::report::summary::RunSummary;
use crate::report::table::text::wrap;
use crate::store::Store;
use std::path::Path;

#[derive(clap::Args)]
pub struct Args {
    /// Run id, or `last`
    #[arg(default_value = "last")]
    run: String,
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, store_dir: &Path, width: usize) -> Result<i32> {
    let store = Store::open_existing(store_dir)?;
    let summary = RunSummary::load(&store, &args.run)?;
    if args.json {
        crate::terminal::print(format!("{}\n", serde_json::to_string_pretty(&summary).expect("summary serializes")));
    } else {
        print(&summary, &|_| false, width);
    }
    Ok(0)
}

/// The human-readable view, also printed at the end of `fathom run`, which leaves out
/// the warnings `said` already printed (by their code). Tables fit `width`; sentences
/// wrap at it on a terminal, and stay one line each when piped, for grep.
pub fn print(s: &RunSummary, said: &dyn Fn(&str) -> bool, width: usize) {
    crate::terminal::print(text(s, said, width, prose(width)));
}

/// How wide sentences wrap: at `width` on a terminal or when `COLUMNS` says, else never
/// (one line each, for grep).
pub fn prose(width: usize) -> usize {
    if crate::terminal::columns().is_some() { width } else { usize::MAX }
}

/// What [`print`] prints, its sentences wrapped at `prose`: a value, so that tests read
/// what a person reads.
pub fn text(s: &RunSummary, said: &dyn Fn(&str) -> bool, width: usize, prose: usize) -> String {
    let mut out = String::new();
    let say = |out: &mut String, line: &str| out.push_str(&wrap(line, prose));
    let r = &s.run;
    // the study's answer before anything else
    if let Some(a) = &s.answer {
        say(&mut out, &a.line());
    } else if let Some(q) = crate::report::analysis::question(&s.run) {
        // nothing judged: a declared figure (a pass's time) still answers the question
        if let Some(h) = s.headline.as_ref().filter(|h| h.declared) {
            say(&mut out, &format!("{q} {}", h.text));
        }
    }
    let duration = r.duration_s.map(seconds).unwrap_or_else(|| "still running".into());
    let scale = r.time_scale.map(|f| format!(" · {}", crate::scenario::time_scale::describe(f))).unwrap_or_default();
    let group = r.repeat_group.map(|g| format!(" · repeat group:{g}")).unwrap_or_default();
    say(
        &mut out,
        &format!("run {} · {} · {} · {} · {}{scale}{group}", r.id, r.scenario, r.started_at, duration, r.status),
    );
    if let Some(err) = &r.error {
        say(&mut out, &format!("error: {err}"));
    }
    out.push('\n');
    out.push_str(&crate::report::sections::terminal(s, width));
    if !s.expectations.is_empty() {
        out.push('\n');
        crate::report::expect::describe(&s.expectations).lines().skip(1).for_each(|l| say(&mut out, l));
    }
    if s.workloads.iter().any(|w| w.ops.iter().any(|o| o.unit == Throughput::Iops)) {
        out.push('\n');
        say(
            &mut out,
            "IOPS x mean = Little's law: the average number of IOs in flight. In a closed-loop workload its ops \
             together should match depth; when lower, time is lost outside the device (the generator, or queueing \
             above it). Open-loop workloads hold only as many as the rate needs.",
        );
    }
    for w in s.warnings.iter().filter(|w| !said(&w.code)) {
        say(&mut out, &format!("warning: {}", w.message));
    }
    out
}

/// Each kind of sweep gets the view that answers it, read from runs of a store fixture:
/// phases that vary what is done (block size, working set, distribution, op) a table and
/// charts of that setting against IOPS, MB/s and latency with their figure of merit;
/// phases that workloads join a before-vs-during table. In the terminal, `show --json`
/// and the report page alike.
#[cfg(test)]
pub(crate) mod tests {
    use crate::report::html::Report;
    use crate::report::summary::RunSummary;
    use crate::report::table::text::PIPED_WIDTH;
    use crate::store::fixture::{At, Fixture, Second};
    use serde_json::Value;

    /// What `fathom show` prints of `run` when piped (what `fathom run` prints at its
    /// end), its `--json`, and the page `fathom report` writes.
    pub(crate) fn read(fx: &Fixture, run: i64) -> (String, Value, String) {
        let store = fx.store();
        let summary = RunSummary::load(&store, &run.to_string()).unwrap();
        let text = super::text(&summary, &|_| false, PIPED_WIDTH, usize::MAX);
        let html = Report::build(&store, &run.to_string()).unwrap().html();
        (text, serde_json::to_value(&summary).unwrap(), html)
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

    /// Three workloads of `scenario` run one after the other for a second each, as
    /// `start` steps run them, each second of each given by `second`.
    fn one_by_one(fx: &Fixture, scenario: &str, names: [&str; 3], second: impl Fn(&str) -> Second) -> i64 {
        let mut run = fx.run(scenario);
        for (i, name) in names.into_iter().enumerate() {
            let s = second(name);
            run = if i == 0 { run } else { run.gap(1) }.phase(name, &[(name, 1)], 1, move |_: At| s);
        }
        run.finish()
    }

    #[test]
    fn a_block_size_sweep_shows_its_table_in_the_terminal_the_json_and_the_page() {
        let fx = Fixture::new("views-bs");
        let scenario = "name: sizes\ndefaults: {engine: null, rw: randread, iodepth: 2, duration: 1s}\nworkloads:\n  \
                        small: {bs: 4k}\n  middle: {bs: 16k}\n  large: {bs: 64k}\ntimeline:\n  - start: small\n  \
                        - start: middle\n  - start: large\n";
        let second = |name: &str| match name {
            "small" => Second::new(40_000, 50_000).tail(800, 200_000),
            "middle" => Second::new(20_000, 100_000).tail(400, 400_000),
            _ => Second::new(8_000, 250_000).tail(160, 1_000_000),
        };
        let (stdout, show, html) = read(&fx, one_by_one(&fx, scenario, ["small", "middle", "large"], second));
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
            assert!((r["mb_per_s"].as_f64().unwrap() - mbps).abs() <= mbps * 1e-9, "{r}");
            assert!(r["p99_us"].as_f64().unwrap() > r["p50_us"].as_f64().unwrap(), "{r}");
            assert!(r["settle"]["round_s"].as_u64().unwrap() >= 1, "{r}");
        }
        assert!(show["analysis"]["interference"].as_array().unwrap().is_empty());
        assert!(
            html.contains("<section id=\"sweep\"><h2>Time for latency to settle per block size"),
            "no sweep section"
        );
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
        let fx = Fixture::new("views-interference");
        let scenario = "name: joined\ndefaults: {engine: null, rw: randread, bs: 4k, iodepth: 1}\nworkloads:\n  \
                        steady: {rate_iops: 200, duration: 4s}\n  joiner: {rate_iops: 100, duration: 2s}\ntimeline:\n  \
                        - start: steady\n    async: true\n    phase: before\n  - wait: 1s\n  - start: joiner\n    \
                        phase: during\n  - wait_for: steady\n";
        let (alone, joined) =
            (|_: At| Second::new(198, 2_000).tail(2, 20_000), |_: At| Second::new(97, 5_000).tail(3, 80_000));
        let run = fx
            .run(scenario)
            .phase("before", &[("steady", 1)], 1, alone)
            .phase("during", &[("steady", 1), ("joiner", 1)], 2, joined)
            .phase("steady", &[("steady", 1)], 1, alone)
            .finish();
        let (stdout, show, html) = read(&fx, run);
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
        assert_eq!(r["before_figures"]["attainment"].as_f64(), Some(1.0), "200 IOPS of 200 asked: {r}");
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
    fn a_working_set_sweep_is_response_time_against_the_set_smallest_first() {
        let fx = Fixture::new("views-sets");
        // seek-sweep's order: the largest set first
        let scenario = "name: sets\ndefaults: {engine: null, rw: randread, bs: 8k, iodepth: 1, duration: 1s}\n\
                        workloads:\n  set-1g: {size: 1g}\n  set-16m: {size: 16m}\n  set-64m: {size: 64m}\n\
                        timeline:\n  - start: set-1g\n  - start: set-16m\n  - start: set-64m\n";
        let second = |name: &str| match name {
            "set-16m" => Second::new(10_000, 100_000),
            "set-64m" => Second::new(8_000, 125_000),
            _ => Second::new(5_000, 200_000),
        };
        let (stdout, show, html) = read(&fx, one_by_one(&fx, scenario, ["set-1g", "set-16m", "set-64m"], second));
        let sweep = &show["analysis"]["sweep"];
        assert_eq!((sweep["setting"].as_str(), sweep["merit"].as_str()), (Some("working set"), Some("response_time")));
        let phases: Vec<&str> =
            sweep["rows"].as_array().unwrap().iter().map(|r| r["phase"].as_str().unwrap()).collect();
        assert_eq!(phases, ["set-16m", "set-64m", "set-1g"]);
        let table = after(&stdout, "response time against working set");
        assert!(table[0].contains("working set") && table[0].contains("response time"), "{table:?}");
        let order: Vec<&str> = table[1..4].iter().map(|l| l.split_whitespace().nth(1).unwrap()).collect();
        assert_eq!(order, ["16m", "64m", "1g"]);
        assert!(html.contains("<h2>Response time against working set"), "no sweep section");
        assert!(show["analysis"]["curve"].is_null(), "no curve over working sets");
    }
}
