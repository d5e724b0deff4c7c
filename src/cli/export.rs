//! `fathom export RUN [--format NAME] [--samples] [-o FILE]`: a run's figures for
//! notebooks, spreadsheets and Prometheus, in one of `export::FORMATS`.

use crate::error::{Error, Result};
use crate::export::{FORMATS, Format, Source, named};
use crate::report::summary::RunSummary;
use crate::store::Store;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Run id, or `last`
    #[arg(default_value = "last")]
    run: String,
    #[arg(long, default_value = FORMATS[0].name(), value_parser = formats())]
    format: &'static dyn Format,
    /// One row per second, workload and op instead of one per workload and op
    #[arg(long)]
    samples: bool,
    /// Write here instead of standard output
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// `--format` takes the name of one of [`FORMATS`], listed with its line of help.
fn formats() -> impl TypedValueParser<Value = &'static dyn Format> {
    PossibleValuesParser::new(FORMATS.map(|f| PossibleValue::new(f.name()).help(f.about())))
        .map(|name| named(&name).expect("clap accepts only the names of FORMATS"))
}

pub fn run(args: Args, store_dir: &Path) -> Result<i32> {
    let store = Store::open_existing(store_dir)?;
    let summary = RunSummary::load(&store, &args.run)?;
    let text = args.format.render(&Source { store: &store, summary: &summary, samples: args.samples })?;
    write(&args, &text)
}

/// Writes `text` to `-o FILE` or standard output.
fn write(args: &Args, text: &str) -> Result<i32> {
    match &args.output {
        Some(path) => {
            crate::nofollow::write(path, text).map_err(|e| Error::input(format!("{}: {e}", path.display())))?
        }
        None => crate::terminal::print(text),
    }
    Ok(0)
}

/// `export` of runs of a store fixture, run in-process as the command runs: what a run
/// stores is given, so each figure is known before it is read.
#[cfg(test)]
mod tests {
    use super::Args;
    use crate::store::fixture::{Fixture, Second};
    use clap::{Args as _, Command, FromArgMatches};

    /// What `fathom export ARGS -o FILE` writes, or its exit status when it fails.
    fn export(fx: &Fixture, args: &[&str]) -> Result<String, i32> {
        let file = fx.dir.join("export.out");
        let args = args.iter().map(|a| a.to_string()).chain(["-o".into(), file.display().to_string()]);
        let matches = Args::augment_args(Command::new("export")).no_binary_name(true).get_matches_from(args);
        let code = super::run(Args::from_arg_matches(&matches).unwrap(), &fx.dir).map_err(|e| e.exit_code())?;
        assert_eq!(code, 0);
        Ok(std::fs::read_to_string(&file).unwrap())
    }

    #[test]
    fn summaries_and_seconds_export_and_agree() {
        let fx = Fixture::new("export");
        let scenario =
            "name: ex\nworkloads:\n  mix: {target: /srv/fathom, size: 16m, rw: randrw, iodepth: 2, duration: 3s}\n";
        fx.run(scenario)
            .phase("mix", &[("mix", 1)], 3, |at| {
                Second::new(9_000 + 100 * u64::from(at.t), 200_000).tail(90, 2_000_000)
            })
            .finish();

        let csv = export(&fx, &[]).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "run,workload,phase,t,measured,seconds,rw,bs,depth,jobs,op,unit,ops,bytes,iops,tps,mb_per_s,gbit_per_s,\
             mean_us,p50_us,p99_us,p99_9_us,max_us,source,series,value"
        );
        assert_eq!(lines.len(), 3, "read and write: {csv}");
        let ops = |line: &str| line.split(',').nth(12).unwrap().parse::<u64>().unwrap();
        let summary_ops: u64 = lines[1..].iter().map(|l| ops(l)).sum();

        let rows: serde_json::Value =
            serde_json::from_str(&export(&fx, &["last", "--samples", "--format", "json"]).unwrap()).unwrap();
        let rows = rows.as_array().unwrap();
        assert_eq!(rows.len(), 6, "3 seconds x 2 ops");
        assert!(rows.iter().all(|r| r["phase"] == "mix" && r["seconds"] == 1.0 && r["p99_us"].as_f64().unwrap() > 0.0));
        let second_ops: u64 = rows.iter().map(|r| r["ops"].as_u64().unwrap()).sum();
        assert_eq!(second_ops, summary_ops);
        assert_eq!(summary_ops, 9_000 + 9_100 + 9_200 + 3 * 90, "every IO given, and no other");

        assert_eq!(export(&fx, &["99"]), Err(2));
    }

    /// A text field holding a carriage return is quoted (like one holding a line feed, a
    /// quote or a comma: see `export::csv`'s tests), so a CSV reader gets the row back
    /// whole. A scenario cannot name a workload so (names are one line), but a store can
    /// hold one (written by another tool, or edited by hand).
    #[test]
    fn csv_quotes_a_field_with_a_carriage_return() {
        let fx = Fixture::new("export-quoting");
        let scenario = "name: ex\nworkloads:\n  mix: {target: /srv/fathom, size: 16m, rw: randread, duration: 1s}\n";
        fx.run(scenario).phase("mix", &[("mix", 1)], 1, |_| Second::new(5_000, 150_000)).finish();
        let name = "mi\rx";
        let db = rusqlite::Connection::open(fx.dir.join("fathom.db")).unwrap();
        db.execute("UPDATE workloads SET name = ?1", [name]).unwrap();

        let csv = export(&fx, &[]).unwrap();
        assert!(csv.contains(",\"mi\rx\","), "{csv:?}");
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), 1, "one read row: {csv:?}");
        assert_eq!(&rows[0][1], name);
        assert_eq!(&rows[0][10], "read", "the op column");
    }

    /// Per-second rows say which seconds were the ramp's (`measured` false) and carry the
    /// settings (rw, bs or bssplit, depth, jobs) and p99.9, so a row read alone says what
    /// ran; a figure the op does not measure (TPS of an IO) is empty.
    #[test]
    fn samples_mark_the_ramp_and_carry_the_settings() {
        let fx = Fixture::new("export-ramp");
        let scenario = "name: ex\nworkloads:\n  w: {target: /srv/fathom, size: 16m, rw: randread, bssplit: 4k/75:16k/25, \
                        iodepth: 2, jobs: 2, ramp: 1s, duration: 2s}\n";
        let second = |_| Second::new(8_000, 250_000).tail(80, 3_000_000);
        fx.run(scenario).phase("w", &[("w", 2)], 3, second).finish();
        let csv = export(&fx, &["--samples"]).unwrap();
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let header = reader.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        let cell = |r: &csv::StringRecord, name: &str| r[header.iter().position(|h| h == name).unwrap()].to_string();
        let measure_t = fx.store().workloads(1).unwrap()[0].measure_t;
        let ramp: Vec<_> = rows.iter().filter(|r| cell(r, "measured") == "false").collect();
        assert!(!ramp.is_empty(), "the ramp's seconds: {csv}");
        for r in &rows {
            let t: i64 = cell(r, "t").parse().unwrap();
            assert_eq!(cell(r, "measured") == "true", t >= measure_t, "{csv}");
            assert_eq!(
                (cell(r, "rw"), cell(r, "bs"), cell(r, "depth"), cell(r, "jobs"), cell(r, "unit")),
                ("randread".into(), "4k/75:16k/25".into(), "2".into(), "2".into(), "iops".into()),
                "{csv}"
            );
            assert!(cell(r, "tps").is_empty() && cell(r, "gbit_per_s").is_empty(), "{csv}");
        }
        let p999 = |r: &&csv::StringRecord| cell(r, "p99_9_us").parse::<f64>().unwrap();
        assert!(rows.iter().filter(|r| cell(r, "ops") != "0").all(|r| p999(&r) >= cell(r, "p99_us").parse().unwrap()));
    }

    /// `fathom_workers` backfilled is the workers each phase ran, second by second: a ramp
    /// to 3 reads 1, 2, then 3, not the one it started with.
    #[test]
    fn openmetrics_workers_follow_a_ramp() {
        let fx = Fixture::new("export-om-ramp");
        let scenario = "name: ramp\nworkloads:\n  r: {engine: null, rw: randread, rate_iops: 100, duration: 3s}\n\
                        timeline:\n  - ramp: r\n    add: 1\n    every: 1s\n    until: 3\n";
        let mut run = fx.run(scenario);
        for n in 1..=3 {
            run = run.phase(&format!("r x{n}"), &[("r", n)], 1, |at| Second::new(100 * u64::from(at.workers), 2_000));
        }
        run.finish();
        let om = export(&fx, &["last", "--format", "openmetrics"]).unwrap();
        // each point: (its second, its workers)
        let mut points: Vec<(f64, u32)> = om
            .lines()
            .filter_map(|l| l.strip_prefix("fathom_workers{"))
            .map(|l| {
                let f: Vec<&str> = l.rsplit('}').next().unwrap().split_whitespace().collect();
                (f[1].parse().unwrap(), f[0].parse().unwrap())
            })
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut workers: Vec<u32> = points.iter().map(|p| p.1).collect();
        assert_eq!(workers.len(), 3, "a point each second: {om}");
        workers.dedup();
        assert_eq!(workers, [1, 2, 3], "{om}");
    }

    /// A run with observed series: the host's CPU (a gauge), a device's writes (stored as
    /// a rate already) and a PostgreSQL server's commits (a counter) and backends.
    fn observed_run(fx: &Fixture) {
        use crate::store::ObservationRow;
        use crate::store::sink::Record;
        let commits = "pg_stat_database_xact_commit{datname=\"db\",datid=\"5\"}";
        let mut rows = Vec::new();
        for (t, usr, w_s, total, backends) in
            [(0, 10.0, 100.0, 1000.0, 2.0), (1, 30.0, 300.0, 1010.0, 4.0), (2, 20.0, 200.0, 1040.0, 3.0)]
        {
            let row = |source: &str, name: &str, value: f64| ObservationRow {
                t,
                source: source.into(),
                name: name.into(),
                value,
            };
            rows.extend([
                row("host", "usr_pct", usr),
                row("device:vda", "w_s", w_s),
                row("postgres:w", commits, total),
                row("postgres:w", "pg_stat_database_numbackends{datname=\"db\",datid=\"5\"}", backends),
            ]);
        }
        let scenario = "name: ob\nworkloads:\n  w: {target: /srv/fathom, size: 16m, rw: randread, duration: 3s}\n";
        fx.run(scenario)
            .phase("w", &[("w", 1)], 3, |_| Second::new(1_000, 100_000))
            .record(Record::Observations(rows))
            .finish();
    }

    /// The observed series follow the workloads' rows in CSV and JSON, a gauge as its
    /// mean (per second: as stored) and a counter as its rise per second, as `fathom show`
    /// reads it; per second from its second sample on.
    #[test]
    fn observed_series_export_as_rows_with_counters_as_rates() {
        let fx = Fixture::new("export-observed");
        observed_run(&fx);
        let csv = export(&fx, &[]).unwrap();
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let header = reader.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        let cell = |r: &csv::StringRecord, name: &str| r[header.iter().position(|h| h == name).unwrap()].to_string();
        let observed: Vec<(String, String, String, String)> = rows
            .iter()
            .filter(|r| !cell(r, "source").is_empty())
            .map(|r| {
                (
                    cell(r, "source"),
                    cell(r, "series").split('{').next().unwrap().to_string(),
                    cell(r, "unit"),
                    cell(r, "value"),
                )
            })
            .collect();
        let want = |s: &str, n: &str, u: &str, v: &str| (s.to_string(), n.to_string(), u.to_string(), v.to_string());
        assert_eq!(
            observed,
            [
                want("device:vda", "w_s", "", "200.0"),
                want("host", "usr_pct", "", "20.0"),
                want("postgres:w", "pg_stat_database_numbackends", "", "3.0"),
                want("postgres:w", "pg_stat_database_xact_commit", "per_second", "20.0"),
            ],
            "{csv}"
        );
        assert!(rows.iter().filter(|r| !cell(r, "source").is_empty()).all(|r| cell(r, "workload").is_empty()));

        let json: serde_json::Value =
            serde_json::from_str(&export(&fx, &["--samples", "--format", "json"]).unwrap()).unwrap();
        let seconds = |source: &str, prefix: &str| -> Vec<(i64, f64)> {
            let rows = json.as_array().unwrap().iter().filter(|r| r["source"] == source);
            let rows = rows.filter(|r| r["series"].as_str().unwrap().starts_with(prefix));
            rows.map(|r| (r["t"].as_i64().unwrap(), r["value"].as_f64().unwrap())).collect()
        };
        assert_eq!(seconds("postgres:w", "pg_stat_database_xact_commit"), [(1, 10.0), (2, 30.0)]);
        assert_eq!(seconds("postgres:w", "pg_stat_database_numbackends"), [(0, 2.0), (1, 4.0), (2, 3.0)]);
        assert_eq!(seconds("host", "usr_pct"), [(0, 10.0), (1, 30.0), (2, 20.0)]);
        let commit = json.as_array().unwrap().iter().find(|r| r["source"] == "postgres:w" && r["unit"] == "per_second");
        assert_eq!(commit.map(|r| (r["phase"].clone(), r["seconds"].clone())), Some(("w".into(), 1.into())));
    }

    /// OpenMetrics carries the database servers' series as the live endpoint serves them
    /// (a counter as its running total, for `rate()`) and the others as
    /// `fathom_observed`, and Prometheus's own tool backfills it.
    #[test]
    fn observed_series_export_as_openmetrics_that_promtool_backfills() {
        let fx = Fixture::new("export-observed-om");
        observed_run(&fx);
        let om = export(&fx, &["--format", "openmetrics"]).unwrap();
        for line in [
            "# TYPE pg_stat_database_xact_commit unknown",
            "# TYPE pg_stat_database_numbackends gauge",
            "# TYPE fathom_observed gauge",
        ] {
            assert!(om.lines().any(|l| l == line), "{line}: {om}");
        }
        let values = |prefix: &str| -> Vec<f64> {
            om.lines()
                .filter(|l| l.starts_with(prefix))
                .map(|l| l.split(' ').nth(1).unwrap().parse().unwrap())
                .collect()
        };
        assert_eq!(
            values("pg_stat_database_xact_commit{job=\"fathom\",run=\"1\",server=\"w\",datname=\"db\",datid=\"5\"}"),
            [1000.0, 1010.0, 1040.0]
        );
        assert_eq!(
            values("fathom_observed{job=\"fathom\",run=\"1\",source=\"host\",series=\"usr_pct\"}"),
            [10.0, 30.0, 20.0]
        );
        let file = fx.dir.join("run.om");
        std::fs::write(&file, &om).unwrap();
        let out = std::process::Command::new("promtool")
            .args(["tsdb", "create-blocks-from", "openmetrics"])
            .arg(&file)
            .arg(fx.dir.join("blocks"))
            .output()
            .expect("promtool (Debian's prometheus, scripts/install-deps.sh test)");
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
