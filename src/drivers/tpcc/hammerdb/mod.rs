//! `engine: hammerdb` for `driver: tpcc`: the same workload run by HammerDB's own
//! TPROC-C, through its CLI (`hammerdbcli`) and a Tcl script fathom writes of HammerDB's
//! documented commands (`dbset`, `diset`, `buildschema`, `loadscript`, `vuset`,
//! `vucreate`, `vurun`, `jobs`), on a throwaway PostgreSQL cluster or MariaDB server of
//! fathom's ([`place`]). None of HammerDB's code is in fathom: it is found on this machine
//! ([`find`]) and run.
//!
//! Before the run clock starts its schema is built (`buildschema`): on PostgreSQL once
//! per cluster and number of warehouses, as a template each workload copies; on MariaDB,
//! which has no templates, for each workload. While it runs fathom reads the calls of
//! HammerDB's five procedures every second (`pg_stat_user_functions`, MariaDB's
//! performance schema), the per-second samples of the five ops. After it, HammerDB's own result line and
//! time profile are stored beside fathom's readings of the database, as the workload's
//! `tpcc` event and observations, the same as pgbench's runs store.

mod place;

use super::figures::{Profile, Reading};
use crate::clock::sleep_until;
use crate::drivers::driver::{DbServer, Driver, LaunchContext, Ready, RunDir, bad_input_unless, spawn_program};
use crate::drivers::postgres;
use crate::drivers::throwaway::Servers;
use crate::engine::WorkerThread;
use crate::engine::target::DataFile;
use crate::error::{Error, Result};
use crate::metrics::summary::Throughput;
use crate::metrics::{Op, OpStats, Sample};
use crate::scenario::program::dbms::Dbms;
use crate::scenario::program::seam::Spec;
use crate::scenario::program::tpcc::{Engine, Home, OPS, Tpcc, hammerdb_minutes};
use crate::scenario::{EngineKind, Scenario, Workload};
use place::Place;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// HammerDB's procedure of each transaction type, in the order of [`OPS`], as its time
/// profile names them (MariaDB's are in capitals).
const PROCS: [&str; 5] = ["neword", "payment", "delivery", "ostat", "slev"];

/// What the scripts print around `jobs ID timing`, HammerDB's time profile as JSON.
const TIMING_BEGIN: &str = "FATHOM-TIMING-BEGIN";
const TIMING_END: &str = "FATHOM-TIMING-END";

pub struct HammerdbDriver;

/// The TPC-C settings of workload `w`, if HammerDB runs it.
fn spec(w: &Workload) -> Option<&Tpcc> {
    w.program()?.get::<Tpcc>().filter(|p| p.engine == Engine::Hammerdb)
}

/// The directory `scripts/install-deps.sh test` builds HammerDB's CLI into.
fn built_dir() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("fathom/hammerdb"))
}

/// HammerDB's directory (the one holding `hammerdbcli`, which runs from it): `dir` (the
/// workload's `hammerdb_dir`), else `$FATHOM_HAMMERDB`, else where `hammerdbcli` on the
/// PATH is, else where `scripts/install-deps.sh test` builds it. A place named but
/// without it is refused, not passed over.
pub fn find(dir: Option<&Path>) -> Result<PathBuf> {
    let named = dir
        .map(|d| (d.to_path_buf(), "`hammerdb_dir`"))
        .or_else(|| std::env::var_os("FATHOM_HAMMERDB").map(|d| (PathBuf::from(d), "FATHOM_HAMMERDB")));
    let found = named.or_else(|| {
        let on_path = std::env::var_os("PATH")
            .and_then(|paths| std::env::split_paths(&paths).find(|p| p.join("hammerdbcli").is_file()));
        on_path.map(|d| (d, "the PATH")).or_else(|| built_dir().map(|d| (d, "the build directory")))
    });
    let how = "build it with `scripts/install-deps.sh test` from HammerDB 4.12's sources and Pgtcl-ng's \
               (FATHOM_HAMMERDB_SRC: the directory holding hammerdb-4.12/ and pgtclng/), or give the \
               directory holding hammerdbcli as `hammerdb_dir` or FATHOM_HAMMERDB";
    match found {
        // it runs from its own directory: where a link to it leads
        Some((d, _)) if d.join("hammerdbcli").is_file() => {
            let cli =
                d.join("hammerdbcli").canonicalize().map_err(|e| Error::input(format!("{}: {e}", d.display())))?;
            Ok(cli.parent().map_or(d, Path::to_path_buf))
        }
        Some((d, from)) => Err(Error::input(format!(
            "`engine: hammerdb` runs HammerDB's CLI, which is not in {} ({from}): {how}",
            d.display()
        ))),
        None => Err(Error::input(format!("`engine: hammerdb` runs HammerDB's CLI, which was not found: {how}"))),
    }
}

/// A database HammerDB built, copied for one workload, and where its CLI is.
#[derive(Clone)]
struct Built {
    home: PathBuf,
    place: Place,
    build_s: f64,
    bytes_per_warehouse: f64,
    /// Whether the template was built for an earlier workload, whose time `build_s` is.
    reused: bool,
}

/// Each workload's database, built, and the servers fathom started for them.
#[derive(Default)]
struct Databases {
    ready: HashMap<usize, Built>,
    servers: Servers,
}

/// The settings of `p`'s throwaway server: its own, and the count of procedure calls the
/// per-second samples read (PostgreSQL's `track_functions`, MariaDB's performance
/// schema).
fn server_settings(p: &Tpcc) -> Vec<(String, String)> {
    let (key, value) = match p.dbms {
        Dbms::Postgresql => ("track_functions", "pl"),
        Dbms::Mariadb => ("performance_schema", "ON"),
    };
    let mut settings = p.settings.clone();
    if !settings.iter().any(|(k, _)| k == key) {
        settings.push((key.into(), value.into()));
    }
    settings
}

/// Runs `script` with HammerDB's CLI in `home`, its state (HammerDB keeps its settings
/// and jobs in SQLite files under TMP) in directory `state` of the run's directory;
/// what it printed, also kept in its file `log`.
fn hammerdbcli(
    home: &Path,
    script: &Path,
    run: &RunDir,
    (state, log): (&str, &str),
    stop: &AtomicBool,
) -> Result<Option<String>> {
    let state = run.dir(state)?;
    let state = state.path();
    // it runs in its own directory: the paths it is given are absolute
    let absolute = |p: &Path| std::path::absolute(p).map_err(|e| Error::failed(format!("{}: {e}", p.display())));
    let (script, state) = (absolute(script)?, absolute(state)?);
    let mut cmd = Command::new(home.join("hammerdbcli"));
    cmd.arg("auto").arg(&script).current_dir(home).env("TMP", &state).env("TCLLIBPATH", home.join("lib"));
    postgres::connect_bounded(&mut cmd).stdin(std::process::Stdio::null());
    let out = crate::children::output(&mut cmd, "hammerdbcli", stop)
        .map_err(|e| Error::failed(format!("starting {}: {e}", home.join("hammerdbcli").display())))?;
    let Some(out) = out else { return Ok(None) };
    let mut text = String::from_utf8_lossy(&out.stdout).to_string();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    let log = run.write(log, &text)?;
    if !out.status.success() {
        return Err(Error::failed(format!("hammerdbcli exited with {} (its output: {})", out.status, log.display())));
    }
    Ok(Some(text))
}

/// Builds HammerDB's schema of `p`'s warehouses in `place`'s database (HammerDB creates
/// it): the seconds it took and its size per warehouse.
fn build(place: &Place, home: &Path, p: &Tpcc, dir: &Path, stop: &AtomicBool) -> Result<(f64, f64)> {
    let vus = p.warehouses.min(crate::drivers::loading::sessions());
    let run = RunDir::open(dir)?;
    let at = match place {
        Place::Postgres { port, database, .. } => format!("{port}-{database}"),
        Place::Mariadb { conn } => conn.database.clone(),
    };
    let name = format!("hammerdb-build-{at}");
    let prefix = place.prefix();
    let text = format!(
        "{}diset tpcc {prefix}_count_ware {}\ndiset tpcc {prefix}_num_vu {vus}\nbuildschema\n",
        place.connection(),
        p.warehouses
    );
    let script = run.write(&format!("{name}.tcl"), text)?;
    let log = run.path().join(format!("{name}.log"));
    let started = Instant::now();
    let out = hammerdbcli(home, &script, &run, ("hammerdb-state", &format!("{name}.log")), stop)?
        .ok_or(Error::Interrupted)?;
    if !out.contains(" SCHEMA COMPLETE") {
        return Err(Error::failed(format!("HammerDB's buildschema did not complete (its output: {})", log.display())));
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok((seconds, place.size(stop)? / p.warehouses as f64))
}

/// Builds a database for every HammerDB workload: on PostgreSQL a template per cluster
/// and number of warehouses, copied for each workload; on MariaDB each workload's own.
fn prepare(scenario: &Scenario, dir: &Path, stop: &AtomicBool, progress: &dyn Fn(&str)) -> Result<Databases> {
    let mut dbs = Databases::default();
    // each template built once: what it took, and its size per warehouse
    let mut built: crate::drivers::loading::Loads<(f64, f64)> = Default::default();
    for (idx, w) in scenario.workloads.iter().enumerate() {
        let Some(p) = spec(w) else { continue };
        let named = |e: Error| Error::failed(format!("{}: {e}", w.name));
        let home = find(p.hammerdb_dir.as_deref()).map_err(named)?;
        let (template, place) = dbs.place((idx, &w.name), p, dir, stop, progress)?;
        let reused = built.holds(&template.key());
        let (build_s, per_wh) = built.once(
            &template.key(),
            |_| true,
            || {
                progress(&format!("{}: HammerDB builds {} warehouse(s) (buildschema)", w.name, p.warehouses));
                let (s, per) = build(&template, &home, p, dir, stop).map_err(|e| bad_input_unless(stop, named(e)))?;
                progress(&format!("{}: HammerDB built it in {s:.1} s, {:.0} MB per warehouse", w.name, per / 1e6));
                Ok((s, per))
            },
        )?;
        if let (Place::Postgres { database: from, .. }, Place::Postgres { database, .. }) = (&template, &place) {
            // the cluster `place` started for this workload, its template now built
            let cluster =
                dbs.servers.postgres.serving(idx).ok_or_else(|| named(Error::failed("its cluster is gone")))?;
            cluster.create_database(database, Some(from), stop).map_err(named)?;
        }
        dbs.ready.insert(idx, Built { home, place, build_s, bytes_per_warehouse: per_wh, reused });
    }
    dbs.servers.settle(stop)?;
    Ok(dbs)
}

impl Databases {
    /// Where HammerDB builds workload `(idx, name)`'s schema, and where it runs: on
    /// PostgreSQL the cluster's template of its warehouses and the copy made of it, on
    /// MariaDB one database for both.
    fn place(
        &mut self,
        (idx, name): (usize, &str),
        p: &Tpcc,
        dir: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<(Place, Place)> {
        let settings = server_settings(p);
        Ok(match p.dbms {
            Dbms::Postgresql => {
                let cluster =
                    self.servers.postgres.get((idx, name), &p.server_dirs(), &settings, dir, stop, progress)?;
                let at = |database: String| Place::Postgres {
                    host: cluster.socket().to_path_buf(),
                    port: cluster.port,
                    dsn: cluster.dsn(&database),
                    database,
                };
                (at(format!("hammerdb_w{}", p.warehouses)), at(format!("hammerdb_{idx}")))
            }
            Dbms::Mariadb => {
                let server = self.servers.mariadb.get((idx, name), &p.server_dirs(), &settings, dir, stop, progress)?;
                let place = Place::Mariadb { conn: server.conn(&format!("hammerdb_{idx}")) };
                (place.clone(), place)
            }
        })
    }
}

impl Driver for HammerdbDriver {
    fn name(&self) -> &'static str {
        "hammerdb"
    }

    fn runs(&self, w: &Workload, _: Option<EngineKind>) -> bool {
        spec(w).is_some()
    }

    /// hammerdbcli reads its settings and creates its virtual users before the first
    /// transaction.
    fn startup(&self) -> Duration {
        Duration::from_secs(2)
    }

    fn check(&self, scenario: &Scenario, _stop: &AtomicBool) -> Result<()> {
        for w in &scenario.workloads {
            let Some(p) = spec(w) else { continue };
            find(p.hammerdb_dir.as_deref()).map_err(|e| Error::input(format!("{}: {e}", w.name)))?;
        }
        Ok(())
    }

    fn prepare(
        &self,
        scenario: &Scenario,
        dir: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<Box<dyn Ready>> {
        Ok(Box::new(prepare(scenario, dir, stop, progress)?))
    }

    fn describe(&self, w: &Workload, _: &[Arc<DataFile>], _: u32, _: Option<EngineKind>) -> String {
        let Some(p) = spec(w) else { return w.runner() };
        let home = match p.home {
            Home::Random => "a random warehouse per virtual user",
            Home::PerClient | Home::All => "all warehouses",
        };
        format!(
            "tpcc by HammerDB's TPROC-C, {}, {}, {home}, on a throwaway {}",
            crate::metrics::format::counted(p.warehouses, "warehouse"),
            crate::metrics::format::counted(p.clients, "virtual user"),
            p.dbms.label()
        )
    }
}

impl Ready for Databases {
    fn start(&self, cx: &LaunchContext) -> Result<Vec<(WorkerThread, String)>> {
        let Some(built) = self.ready.get(&cx.workload_idx).cloned() else {
            return Err(Error::failed(format!("{}: its HammerDB database was not built", cx.workload.name)));
        };
        spawn_program(cx, "hammerdb", move |l| run(l, &built))
    }

    /// Stops every throwaway server; the first error, if any.
    fn stop(mut self: Box<Self>) -> Result<()> {
        self.servers.stop()
    }

    fn servers(&self) -> Vec<DbServer> {
        let pg = self.ready.iter().filter_map(|(workload, b)| match &b.place {
            Place::Postgres { dsn, .. } => Some((*workload, dsn.as_str())),
            Place::Mariadb { .. } => None,
        });
        let mariadb = self.ready.iter().filter_map(|(workload, b)| match &b.place {
            Place::Mariadb { conn } => Some((*workload, conn)),
            Place::Postgres { .. } => None,
        });
        self.servers.servers(pg, mariadb)
    }

    fn retire(&self, over: &[usize]) -> Vec<String> {
        self.servers.retire(over)
    }
}

/// Seconds the CLI waits for its virtual users past their rampup and duration, as its
/// own keepalive does.
const KEEPALIVE_MARGIN: u64 = 10;

/// The timed run's script: HammerDB's own driver for `l`'s settings, with its time
/// profile, printed between markers. `vurun` keeps the CLI alive only for whole minutes
/// and returns at once otherwise, so the script waits with the CLI's own timer
/// (`_runtimer`, which returns as soon as the virtual users are done, at once when they
/// are).
fn run_script(l: &LaunchContext, p: &Tpcc, b: &Built) -> String {
    let w = &l.workload;
    // its "use all warehouses", which `per-client` is too with a warehouse or fewer per
    // virtual user (the check refuses it otherwise)
    let all = p.home != Home::Random;
    let x = b.place.prefix();
    format!(
        "{}{}diset tpcc {x}_driver timed\ndiset tpcc {x}_total_iterations 10000000\ndiset tpcc {x}_rampup {}\n\
         diset tpcc {x}_duration {}\ndiset tpcc {x}_keyandthink false\ndiset tpcc {x}_allwarehouse {all}\n\
         diset tpcc {x}_timeprofile true\ndiset tpcc {x}_raiseerror false\n\
         loadscript\nvuset vu {}\nvucreate\nset jobid [ vurun ]\n_runtimer {}\nvudestroy\n\
         regexp {{jobid=([0-9A-Fa-f]+)}} $jobid -> jid\nputs \"{TIMING_BEGIN}\"\njobs $jid timing\n\
         puts \"{TIMING_END}\"\n",
        b.place.connection(),
        b.place.no_maintenance(),
        minutes(w.ramp),
        minutes(w.duration),
        p.clients,
        (w.ramp + w.duration).as_secs() + KEEPALIVE_MARGIN
    )
}

/// `d` as HammerDB takes it; the scenario's check refused what it cannot time.
fn minutes(d: Duration) -> String {
    hammerdb_minutes(d).unwrap_or_else(|| format!("{}", d.as_secs() / 60))
}

/// Samples the procedures' calls every second of the run clock until `done`, each
/// second's as the ops of that second; the last reading, once the sessions have gone,
/// into the last second. The calls per op in the window from second `from` on.
fn sample(l: &LaunchContext, place: &Place, from: u32, done: &AtomicBool) -> Result<[u64; 5]> {
    let mut t = l.begin_t() as u32;
    let db = place.database();
    let mut c = place.session()?;
    let mut last = place.calls(&mut c, &PROCS, &l.stop)?;
    let mut window = [0u64; 5];
    let end = (l.end_t as u32).max(t + 1);
    loop {
        sleep_until(l.clock_start + Duration::from_secs(t as u64 + 1), &l.stop);
        let finished = done.load(Ordering::Relaxed) || l.stop.load(Ordering::Relaxed);
        if finished {
            db.settle(&l.stop);
        }
        let now = place.calls(&mut c, &PROCS, &l.stop)?;
        let at = t.min(end - 1);
        for (i, (n, before)) in now.iter().zip(last).enumerate() {
            let mut stats = OpStats::new(false);
            stats.ops = n.saturating_sub(before);
            if at >= from {
                window[i] += stats.ops;
            }
            let op = Op::named(OPS[i], Throughput::Tps);
            let _ = l.tx.send(Sample { workload: l.workload_idx, worker: l.first_worker, t: at, op, stats });
        }
        last = now;
        t += 1;
        if finished {
            return Ok(window);
        }
    }
}

/// HammerDB's result line: its NOPM and TPM.
fn result_line(out: &str) -> Option<(f64, f64)> {
    let line = out.lines().find_map(|l| l.split_once("TEST RESULT : System achieved ").map(|(_, r)| r))?;
    let f: Vec<&str> = line.split_whitespace().collect();
    match f[..] {
        [nopm, "NOPM", "from", tpm, ..] => Some((nopm.parse().ok()?, tpm.parse().ok()?)),
        _ => None,
    }
}

/// HammerDB's time profile (`jobs ID timing`: per procedure, over its virtual users),
/// in the order of [`OPS`]. It has no p25 or p75 (NaN), and gives the standard
/// deviation in microseconds.
fn time_profile(out: &str) -> Vec<Profile> {
    let Some((_, rest)) = out.split_once(TIMING_BEGIN) else { return Vec::new() };
    let json = rest.split_once(TIMING_END).map_or(rest, |(j, _)| j);
    let Ok(serde_json::Value::Object(procs)) = serde_json::from_str::<serde_json::Value>(json.trim()) else {
        return Vec::new();
    };
    let mut profile = Vec::new();
    for (i, name) in PROCS.iter().enumerate() {
        let Some(p) = procs.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v) else { continue };
        let v = |k: &str| p[k].as_str().and_then(|s| s.parse::<f64>().ok()).unwrap_or(f64::NAN);
        profile.push(Profile {
            name: OPS[i],
            calls: v("calls") as u64,
            ms: [
                v("min_ms"),
                v("avg_ms"),
                v("max_ms"),
                f64::NAN,
                v("p50_ms"),
                f64::NAN,
                v("p95_ms"),
                v("p99_ms"),
                v("sd") / 1000.0,
            ],
            total_ms: v("total_ms"),
        });
    }
    profile
}

/// Runs workload `l` with HammerDB on its database, sampling it, then reads HammerDB's
/// figures and fathom's, and checks the database.
fn run(l: &LaunchContext, b: &Built) -> Result<()> {
    let w = &l.workload;
    let Some(p) = spec(w) else { return Err(Error::failed(format!("{}: not a HammerDB workload", w.name))) };
    let named = |e: Error| Error::failed(format!("{}: {e}", w.name));
    let run = l.run_dir()?;
    let script = run.write(&l.file_name("hammerdb.tcl")?, run_script(l, p, b))?;
    let (state, log) = (l.file_name("hammerdb-state")?, l.file_name("hammerdb.log")?);
    let from = (l.begin_t() + w.ramp.as_secs()) as u32;
    let db = b.place.database();
    let first = match w.ramp.is_zero() {
        true => Some(db.read(&l.stop).map_err(named)?),
        false => None,
    };
    let done = AtomicBool::new(false);
    let (before, window, out) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| match first {
            Some(r) => Ok(r),
            None => {
                sleep_until(l.begin + w.ramp, &l.stop);
                db.read(&l.stop)
            }
        });
        let sampler = scope.spawn(|| sample(l, &b.place, from, &done));
        let out = hammerdbcli(&b.home, &script, &run, (&state, &log), &l.stop);
        done.store(true, Ordering::Relaxed);
        (reader.join(), sampler.join(), out)
    });
    let Some(out) = out.map_err(named)? else { return Ok(()) };
    if l.stop.load(Ordering::Relaxed) || l.abort.load(Ordering::Relaxed) {
        return Ok(());
    }
    let joined = |what: &str| named(Error::failed(format!("{what} failed")));
    let before = before.map_err(|_| joined("reading the counters"))?.map_err(named)?;
    let window = window.map_err(|_| joined("sampling the procedures' calls"))?.map_err(named)?;
    let Some((nopm, tpm)) = result_line(&out) else {
        return Err(named(Error::failed(format!(
            "HammerDB printed no TEST RESULT line (its output: {})",
            run.path().join(&log).display()
        ))));
    };
    let after = db.read(&l.stop).map_err(named)?;
    let violations = db.violations(&l.stop).map_err(named)?;
    let version = out.lines().find_map(|l| l.strip_prefix("HammerDB CLI ")).unwrap_or("of unknown version");
    let minutes = w.duration.as_secs_f64() / 60.0;
    let version = version.trim().to_string();
    let (profile, dbms) = (time_profile(&out), db.label());
    let f = Figures { nopm, tpm, before, after, window, profile, minutes, version, dbms };
    record(l, from, &f, b, &violations);
    match violations.is_empty() {
        true => Ok(()),
        false => Err(named(Error::failed(format!(
            "TPC-C consistency {} after HammerDB's run: its figures are invalid",
            violations.join("; ")
        )))),
    }
}

/// HammerDB's figures of one run and fathom's beside them.
struct Figures {
    /// HammerDB's result line.
    nopm: f64,
    tpm: f64,
    /// fathom's readings of the workload's database when the ramp ended and after the run.
    before: Reading,
    after: Reading,
    /// The procedures' calls fathom counted in the measured seconds, per op.
    window: [u64; 5],
    /// HammerDB's time profile.
    profile: Vec<Profile>,
    minutes: f64,
    /// HammerDB's version, as its CLI prints it (`v4.12`).
    version: String,
    /// The DBMS as HammerDB's line names it.
    dbms: &'static str,
}

impl Figures {
    /// New orders per minute as fathom counted the new-order calls.
    fn counted_nopm(&self) -> f64 {
        self.window[0] as f64 / self.minutes
    }

    /// The workload database's rollbacks over its new-order calls, in percent.
    fn rollback_pct(&self) -> f64 {
        let rolled = self.after.rollbacks.saturating_sub(self.before.rollbacks) as f64;
        if self.window[0] == 0 { 0.0 } else { 100.0 * rolled / self.window[0] as f64 }
    }

    /// The figures as a person reads them, HammerDB's line first.
    fn describe(&self) -> String {
        let db_nopm = self.after.next_o_id.saturating_sub(self.before.next_o_id) as f64 / self.minutes;
        let db_tpm = self.after.xacts.saturating_sub(self.before.xacts) as f64 / self.minutes;
        let all: u64 = self.window.iter().sum();
        let asked = [10.0, 10.0, 1.0, 1.0, 1.0].map(|w| 100.0 * w / 23.0);
        let mix: Vec<String> = OPS
            .iter()
            .zip(self.window)
            .zip(asked)
            .map(|((n, c), a)| {
                format!("{n} {:.1}% ({a:.1}%)", if all == 0 { 0.0 } else { 100.0 * c as f64 / all as f64 })
            })
            .collect();
        let mut out = format!(
            "System achieved {:.0} NOPM from {:.0} {} TPM (HammerDB {}'s line); fathom's readings: the \
             database {db_nopm:.0} NOPM from {db_tpm:.0} TPM (the workload's database), the new-order calls \
             counted per second {:.0} NOPM; mix achieved (asked): {}; rollbacks {:.2}% of new-orders",
            self.nopm,
            self.tpm,
            self.dbms,
            self.version,
            self.counted_nopm(),
            mix.join(", "),
            self.rollback_pct()
        );
        let types: Vec<String> = self
            .profile
            .iter()
            .map(|p| {
                let [min, avg, max, _, p50, _, p95, p99, sd] = p.ms.map(|v| format!("{v:.2}"));
                format!("{} {}, {min}/{avg}/{max}, {p50}/{p95}/{p99}, {sd}", p.name, p.calls)
            })
            .collect();
        if !types.is_empty() {
            out.push_str(&format!(
                "; HammerDB's time profile in ms (calls, min/avg/max, p50/p95/p99, sd): {}",
                types.join("; ")
            ));
        }
        out
    }
}

/// Stores the figures as the workload's `tpcc` event and observations at second `t`,
/// where the window began, under the names pgbench's runs store them ([`super::store`]).
fn record(l: &LaunchContext, t: u32, f: &Figures, b: &Built, violations: &[String]) {
    let build = match b.reused {
        true => "the database HammerDB built copied".to_string(),
        false => format!("built by HammerDB in {:.1} s", b.build_s),
    };
    let figures = [f.nopm, f.tpm, f.counted_nopm(), f.rollback_pct(), b.build_s, b.bytes_per_warehouse];
    super::store(l, t, &f.describe(), &build, violations, figures);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hammerdbs_result_line_and_time_profile_are_read() {
        let out = "Vuser 1:TEST RESULT : System achieved 14952 NOPM from 33903 PostgreSQL TPM\n\
                   FATHOM-TIMING-BEGIN\n{\n  \"NEWORD\": {\"elapsed_ms\": \"59629.0\", \"calls\": \"30170\", \
                   \"min_ms\": \"0.667\", \"avg_ms\": \"3.728\", \"max_ms\": \"93.211\", \"total_ms\": \"112474.895\", \
                   \"p99_ms\": \"15.739\", \"p95_ms\": \"9.576\", \"p50_ms\": \"2.741\", \"sd\": \"3324.149\"},\n  \
                   \"SLEV\": {\"calls\": \"2962\", \"avg_ms\": \"2.346\"}\n}\nFATHOM-TIMING-END\n";
        assert_eq!(result_line(out), Some((14952.0, 33903.0)));
        assert_eq!(result_line("Vuser 1:FINISHED FAILED"), None);
        let p = time_profile(out);
        assert_eq!(
            p.iter().map(|p| (p.name, p.calls)).collect::<Vec<_>>(),
            [("new-order", 30170), ("stock-level", 2962)]
        );
        assert_eq!((p[0].ms[1], p[0].ms[7], p[0].ms[8]), (3.728, 15.739, 3.324149));
        assert!(p[0].ms[3].is_nan() && p[1].ms[0].is_nan());
        assert!(time_profile("no profile").is_empty());
        // HammerDB's line first, then fathom's readings of the same minute
        let before = Reading { next_o_id: 30_010, xacts: 100, rollbacks: 0 };
        let after = Reading { next_o_id: 37_010, xacts: 16_100, rollbacks: 70 };
        let window = [7000, 7000, 700, 700, 700];
        let version = "v4.12".to_string();
        let dbms = "PostgreSQL";
        let f = Figures { nopm: 6900.0, tpm: 16_200.0, before, after, window, profile: p, minutes: 1.0, version, dbms };
        let said = f.describe();
        assert!(said.starts_with("System achieved 6900 NOPM from 16200 PostgreSQL TPM (HammerDB v4.12's line)"));
        assert!(
            said.contains("the database 7000 NOPM from 16000 TPM") && said.contains("per second 7000 NOPM"),
            "{said}"
        );
        assert!(said.contains("new-order 43.5% (43.5%)") && said.contains("rollbacks 1.00% of new-orders"), "{said}");
        assert!(said.contains("(calls, min/avg/max, p50/p95/p99, sd): new-order 30170, 0.67/3.73/93.21"), "{said}");
    }
}
