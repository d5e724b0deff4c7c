//! Checks of `driver:` workloads: the program a workload names (see
//! [`crate::scenario::program`]) checks its own keys; here, the keys no program and no
//! IO workload has are refused, each at its line.

use super::checker::{Checker, Layers, pick};
use crate::error::{Error, Result};
use crate::scenario::file::Profile;
use crate::scenario::model::{Kind, Workload};
use crate::scenario::program::{self, Keys, Program};
use crate::scenario::units::Span;
use crate::scenario::yaml::{self, Value};
use indexmap::IndexMap;
use std::time::Duration;

/// Keys every program's workload may set besides its program's own.
const COMMON: [&str; 4] = ["driver", "duration", "ramp", "group"];

/// The keys `profile` sets (non-null), in the order of its fields.
fn keys_set(profile: &Profile) -> Vec<String> {
    let keys = yaml::to_string(profile).and_then(|text| yaml::from_written::<IndexMap<String, Value>>(&text));
    keys.map(|m| m.into_iter().filter(|(_, v)| *v != Value::Null).map(|(k, _)| k).collect()).unwrap_or_default()
}

impl Checker<'_> {
    /// Refuses a key of a profile (`at`: `defaults` or `workloads.NAME`) that neither
    /// fathom's engine nor, where `owner_ok`, any program has; in an IO workload's own
    /// profile, a program's key is refused naming its program.
    pub(super) fn known_keys(&self, at: &[&str], p: &Profile, programs_allowed: bool) -> Result<()> {
        for key in p.program.keys() {
            let owner = program::all().find(|prog| prog.keys().contains(&key.as_str()));
            let path = [at, &[key.as_str()]].concat();
            match owner {
                Some(_) if programs_allowed => {}
                Some(owner) => {
                    let msg = format!(
                        "only applies to `driver: {}` workloads (this one runs fathom's IO engine)",
                        owner.name()
                    );
                    return Err(self.err(&path, msg));
                }
                None => {
                    let keys = Profile::io_keys();
                    let known: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
                    let hint = crate::suggest::hint(key, keys.iter().map(String::as_str));
                    let msg = format!("unknown key `{key}`{hint}: expected one of {}", known.join(", "));
                    return Err(Error::input(format!("{}: {msg}", self.at_line_of(&path, at))));
                }
            }
        }
        Ok(())
    }

    /// Refuses a `--set KEY=VALUE` that reached only `defaults`, where no workload takes
    /// KEY (`--set dbms=mariadb` on a scenario of pgbench, which runs PostgreSQL only): a
    /// default applies to the workloads it means something to, so it would change
    /// nothing, and the run would not be the one asked for. `target` is let be: `--target`
    /// names the storage for whatever uses storage, and a study of the network uses none.
    pub(super) fn sets_reach_a_workload(&self, workloads: &[Workload]) -> Result<()> {
        for (set, paths) in &self.touched {
            let [path] = paths.as_slice() else { continue };
            let Some(key) = path.strip_prefix("defaults.").filter(|k| !k.contains('.') && *k != "target") else {
                continue;
            };
            let takes = |w: &Workload| match w.program() {
                Some(spec) => COMMON.contains(&key) || spec.program().keys().contains(&key),
                None => Profile::io_keys().iter().any(|k| k == key),
            };
            if !workloads.iter().any(takes) {
                let runs: Vec<String> = workloads.iter().map(|w| format!("{} ({})", w.name, w.runner())).collect();
                return Err(Error::input(format!(
                    "--set {set}: no workload takes `{key}` ({}), so it would change nothing",
                    runs.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// A `driver:` workload: its program's keys checked by its program, the IO keys
    /// refused.
    pub(super) fn program_workload(
        &self,
        name: &str,
        program_name: &str,
        p: &Profile,
        d: &Profile,
        run_for: Option<Duration>,
    ) -> Result<Workload> {
        let l = Layers { name, own: p, defaults: d };
        let (_, driver_at) = pick!(l, driver);
        let Some(prog) = program::find(program_name) else {
            let msg = format!("`{program_name}` is no program fathom runs (one of: {})", program::names().join(", "));
            return Err(self.fail(&driver_at, msg));
        };
        for key in keys_set(p) {
            if !COMMON.contains(&key.as_str()) && !prog.keys().contains(&key.as_str()) {
                let allowed: Vec<&str> = COMMON.iter().chain(prog.keys()).copied().collect();
                let msg = format!("does not apply to `driver: {program_name}` (its keys: {})", allowed.join(", "));
                return Err(self.err(&["workloads", name, &key], msg));
            }
        }
        if p.group.is_some() {
            let msg =
                format!("a `driver: {program_name}` workload sets its own workers ({})", prog.concurrency().join(", "));
            return Err(self.err(&["workloads", name, "group"], msg));
        }
        let (duration, ramp) = self.program_timing(&l, run_for)?;
        let spec = self.program_spec(prog, name, p, d)?;
        if let Err((key, why)) = spec.timing(duration, ramp) {
            let at = if key == "ramp" { pick!(l, ramp).1 } else { pick!(l, duration).1 };
            return Err(self.fail(&at, why));
        }
        // its ops are named as it says what it measures: expectations name them next
        spec.measures();
        // with an inventory, a program that can runs on every host, each its own server
        let placement = (self.on_hosts && spec.on_host(None).is_some()).then(|| Self::every_host(spec.workers()));
        Ok(Workload {
            name: name.to_string(),
            workers: spec.workers(),
            group: None,
            engine: None,
            duration,
            ramp,
            placement,
            kind: Kind::Program(spec),
        })
    }

    /// The program's own keys, the workload's over the defaults', with `target` and
    /// `engine` (keys fathom's engine has too) among them, checked by the program.
    fn program_spec(&self, prog: &dyn Program, name: &str, p: &Profile, d: &Profile) -> Result<program::ProgramSpec> {
        let with_target = |p: &Profile| {
            let mut keys = p.program.clone();
            if let Some(target) = &p.target {
                keys.insert("target".into(), Value::Sequence(target.iter().cloned().map(Value::String).collect()));
            }
            if let Some(engine) = &p.engine {
                keys.insert("engine".into(), Value::String(engine.clone()));
            }
            keys
        };
        let (own, defaults) = (with_target(p), with_target(d));
        let fail = |path: &[String], msg: &str| self.fail(path, msg);
        prog.check(&Keys { own: &own, defaults: &defaults, name, file: self.file, fail: &fail })
    }

    /// How long a program's workload runs and ramps: whole seconds, since programs
    /// report whole seconds.
    fn program_timing(&self, l: &Layers, run_for: Option<Duration>) -> Result<(Duration, Duration)> {
        let whole = |span: Span, path: &Vec<String>| -> Result<Duration> {
            if span.0.subsec_nanos() != 0 || span.0.is_zero() {
                return Err(self.fail(path, format!("{span} must be a whole number of seconds, at least 1s")));
            }
            Ok(span.0)
        };
        let (duration, dur_at) = pick!(l, duration);
        let duration = match (run_for, duration) {
            (Some(d), _) => d,
            (None, Some(d)) => whole(d, &dur_at)?,
            (None, None) => {
                return Err(self.err(
                    &["workloads", l.name],
                    "missing `duration`: how long to measure, e.g. 30s (set it here or in `defaults`)",
                ));
            }
        };
        let (ramp, ramp_at) = pick!(l, ramp);
        let ramp = match ramp {
            Some(r) if r.0.is_zero() => Duration::ZERO,
            Some(r) => whole(r, &ramp_at)?,
            None => Duration::ZERO,
        };
        Ok((duration, ramp))
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::program::iperf3::Iperf3;
    use crate::scenario::program::pgbench::{Pgbench, Script};
    use crate::scenario::{EngineKind, Scenario, Source};
    use std::path::PathBuf;

    fn load(text: &str, sets: &[&str]) -> crate::error::Result<Scenario> {
        let sets: Vec<_> = sets.iter().map(|s| s.parse().unwrap()).collect();
        Scenario::load(&Source { origin: "t".into(), text }, &sets)
    }

    const MIXED: &str = "\
name: t
defaults:
  target: /tmp
  rw: randread
  clients: 4
  duration: 5s
workloads:
  io: {iodepth: 8}
  db:
    driver: pgbench
    script: select-only
    settings: {shared_buffers: 1GB, synchronous_commit: off}
  net: {driver: iperf3, streams: 2, link: 25gbit}
";

    #[test]
    fn driver_workloads_take_their_own_keys_and_ignore_the_io_defaults() {
        let s = load(MIXED, &[]).unwrap();
        let [io, db, net] = &s.workloads[..] else { panic!() };
        assert_eq!((io.engine, io.program().is_none(), io.io().unwrap().iodepth), (Some(EngineKind::IoUring), true, 8));
        assert_eq!((db.runner().as_str(), db.workers), ("pgbench", 4));
        let Some(p) = db.program().and_then(|p| p.get::<Pgbench>()) else { panic!() };
        assert_eq!(p.script, Script::Builtin("select-only".into()));
        assert_eq!(
            p.settings,
            vec![("shared_buffers".into(), "1GB".into()), ("synchronous_commit".into(), "off".into())]
        );
        assert_eq!(p.shared_buffers(), Some(1 << 30));
        // `target` in defaults is the IO workloads' place, and the cluster's
        assert_eq!(p.target, Some(PathBuf::from("/tmp")));
        assert_eq!((net.runner().as_str(), net.workers), ("iperf3", 2));
        let Some(i) = net.program().and_then(|p| p.get::<Iperf3>()) else { panic!() };
        assert_eq!((i.link_bps, i.bitrate_bps), (Some(25e9), None));
        let s = load(MIXED, &["net.bitrate=2gbit"]).unwrap();
        let Some(i) = s.workloads[2].program().and_then(|p| p.get::<Iperf3>()) else { panic!() };
        assert_eq!(i.bitrate_bps, Some(2e9));
        let err = load(MIXED, &["net.bitrate=fast"]).unwrap_err().to_string();
        assert!(err.contains("workloads.net.bitrate") && err.contains("not a speed in bits per second"), "{err}");
    }

    #[test]
    fn keys_of_the_other_kind_are_refused_at_their_line() {
        let err = load(MIXED, &["db.iodepth=4"]).unwrap_err().to_string();
        assert!(err.contains("workloads.db.iodepth: does not apply to `driver: pgbench`"), "{err}");
        let err = load(MIXED, &["io.clients=4"]).unwrap_err().to_string();
        assert!(err.contains("workloads.io.clients: only applies to `driver: pgbench`"), "{err}");
        let err = load(MIXED, &["net.scale=10"]).unwrap_err().to_string();
        assert!(err.contains("does not apply to `driver: iperf3`"), "{err}");
        let err = load(MIXED, &["db.threads=8"]).unwrap_err().to_string();
        assert!(err.contains("8 threads for 4 clients"), "{err}");
        let err = load(MIXED, &["db.script=nonsense"]).unwrap_err().to_string();
        assert!(err.contains("neither one of pgbench's scripts"), "{err}");
        let err = load(MIXED, &["db.dsn=host=db"]).unwrap_err().to_string();
        assert!(err.contains("a server given by `dsn` keeps its own"), "{err}");
        let err = load(MIXED, &["compare=[db]"]).unwrap_err().to_string();
        assert!(err.contains("compare: names one workload"), "{err}");
        let err = load(MIXED, &["compare=[db, nope]"]).unwrap_err().to_string();
        assert!(err.contains("no workload named `nope`"), "{err}");
        assert!(load(MIXED, &["compare=[db, io]"]).is_ok());
    }

    #[test]
    fn a_dsn_with_a_secret_is_refused_without_quoting_it() {
        for (dsn, says) in [
            ("host=db password = 'hunter2'", "holds a password: give it in PGPASSWORD"),
            ("postgres://h/db?%70assword=hunter2", "holds a password"),
            ("host=db sslpassword=hunter2", "holds an sslpassword"),
            ("host=db password='hunter2", "not a connection string libpq can read"),
            ("host=db dbname='password=hunter2'", "looks like a password"),
            ("host=db PASSWORD=hunter2", "looks like a password"),
        ] {
            let set = format!("db.dsn={}", serde_json::to_string(dsn).unwrap());
            let err = load(MIXED, &[&set, "db.settings={}"]).unwrap_err().to_string();
            assert!(err.contains(says), "{dsn}: {err}");
            // the message's own words; `--set ...` quotes what was given (masked when printed)
            let own = err.rsplit("workloads.db.dsn: ").next().unwrap();
            assert!(!own.contains("hunter2"), "{dsn}: {err}");
        }
        assert!(load(MIXED, &["db.dsn=host=db user=passwordless", "db.settings={}"]).is_ok());
    }
}
