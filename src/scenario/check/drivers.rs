//! Checks of `driver:` workloads (see [`crate::scenario::driver`]): their driver's keys
//! checked, the IO keys refused, and the driver keys refused in IO workloads.

use super::checker::{Checker, Layers, pick};
use crate::error::{Error, Result};
use crate::scenario::driver::{BUILTIN_SCRIPTS, Driver, DriverName, Iperf3, Pgbench, Script, parse_bits};
use crate::scenario::file::Profile;
use crate::scenario::limits;
use crate::scenario::model::{EngineKind, Kind, Workload};
use crate::scenario::units::Span;
use crate::scenario::yaml::{self, Value};
use indexmap::IndexMap;
use std::path::PathBuf;
use std::time::Duration;

/// Keys every driver workload may set besides its driver's own.
const COMMON: [&str; 4] = ["driver", "duration", "ramp", "group"];
const PGBENCH_KEYS: [&str; 10] =
    ["target", "dsn", "scale", "reuse", "clients", "threads", "script", "sql", "rate", "settings"];
const IPERF3_KEYS: [&str; 4] = ["server", "streams", "reverse", "link"];

/// The keys `profile` sets (non-null), in the order of its fields.
fn keys_set(profile: &Profile) -> Vec<String> {
    let keys = yaml::to_string(profile).and_then(|text| yaml::from_written::<IndexMap<String, Value>>(&text));
    keys.map(|m| m.into_iter().filter(|(_, v)| *v != Value::Null).map(|(k, _)| k).collect()).unwrap_or_default()
}

impl Checker<'_> {
    /// Refuses a driver's keys in an IO workload's own profile (from `defaults` they are
    /// meant for the driver workloads).
    pub(super) fn no_driver_keys(&self, name: &str, p: &Profile) -> Result<()> {
        // `target` is an IO key too: there, where the IO goes
        for key in keys_set(p).into_iter().filter(|k| k != "target") {
            let owner = if PGBENCH_KEYS.contains(&key.as_str()) {
                "pgbench"
            } else if IPERF3_KEYS.contains(&key.as_str()) {
                "iperf3"
            } else {
                continue;
            };
            return Err(self.err(
                &["workloads", name, &key],
                format!("only applies to `driver: {owner}` workloads (this one runs fathom's IO engine)"),
            ));
        }
        Ok(())
    }

    /// A `driver:` workload: its driver's keys checked, the IO keys refused.
    pub(super) fn driver_workload(
        &self,
        name: &str,
        kind: DriverName,
        p: &Profile,
        d: &Profile,
        run_for: Option<Duration>,
    ) -> Result<Workload> {
        let own: &[&str] = match kind {
            DriverName::Pgbench => &PGBENCH_KEYS,
            DriverName::Iperf3 => &IPERF3_KEYS,
        };
        let driver_name = yaml::to_string(&kind)?.trim().to_string();
        for key in keys_set(p) {
            if !COMMON.contains(&key.as_str()) && !own.contains(&key.as_str()) {
                let mut allowed: Vec<&str> = COMMON.to_vec();
                allowed.extend(own);
                return Err(self.err(
                    &["workloads", name, &key],
                    format!("does not apply to `driver: {driver_name}` (its keys: {})", allowed.join(", ")),
                ));
            }
        }
        if p.group.is_some() {
            return Err(self.err(
                &["workloads", name, "group"],
                format!("a `driver: {driver_name}` workload sets its own workers (clients or streams)"),
            ));
        }
        let l = Layers { name, own: p, defaults: d };
        let count = |value: Option<u32>, path: &Vec<String>, default: u32, max: u32| -> Result<u32> {
            let n = value.unwrap_or(default);
            if !(1..=max).contains(&n) {
                return Err(self.fail(path, format!("{n} must be between 1 and {max}")));
            }
            Ok(n)
        };

        let (duration, dur_at) = pick!(l, duration);
        let whole = |span: Span, path: &Vec<String>| -> Result<Duration> {
            if span.0.subsec_nanos() != 0 || span.0.is_zero() {
                return Err(self.fail(path, format!("{span} must be a whole number of seconds, at least 1s")));
            }
            Ok(span.0)
        };
        let duration = match (run_for, duration) {
            (Some(d), _) => d,
            (None, Some(d)) => whole(d, &dur_at)?,
            (None, None) => {
                return Err(self.err(
                    &["workloads", name],
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

        let (driver, workers) = match kind {
            DriverName::Pgbench => {
                let (dsn, dsn_at) = pick!(l, dsn);
                if let Some(dsn) = &dsn {
                    no_secret(dsn).map_err(|why| self.fail(&dsn_at, why))?;
                }
                let (scale, scale_at) = pick!(l, scale);
                let scale = count(scale, &scale_at, 1, 1_000_000)?;
                let (clients, clients_at) = pick!(l, clients);
                let clients = count(clients, &clients_at, 1, 1024)?;
                let (threads, threads_at) = pick!(l, threads);
                let threads = count(threads, &threads_at, 1, 1024)?;
                if threads > clients {
                    return Err(
                        self.fail(&threads_at, format!("{threads} threads for {clients} clients: at most one each"))
                    );
                }
                let (script, script_at) = pick!(l, script);
                let (sql, sql_at) = pick!(l, sql);
                let script = match (script, sql) {
                    (Some(_), Some(_)) if p.script.is_some() == p.sql.is_some() => {
                        return Err(self.fail(&sql_at, "set `script` or `sql`, not both"));
                    }
                    (Some(_), Some(sql)) if p.sql.is_some() => Script::Sql(sql),
                    (Some(s), _) if BUILTIN_SCRIPTS.contains(&s.as_str()) => Script::Builtin(s),
                    (Some(s), _) if s.contains('/') || s.ends_with(".sql") => Script::File(PathBuf::from(s)),
                    (Some(s), _) => {
                        return Err(self.fail(
                            &script_at,
                            format!(
                                "`{s}` is neither one of pgbench's scripts ({}) nor a file (a path, or NAME.sql)",
                                BUILTIN_SCRIPTS.join(", ")
                            ),
                        ));
                    }
                    (None, Some(sql)) if sql.trim().is_empty() => {
                        return Err(self.fail(&sql_at, "is empty: give the SQL of one transaction"));
                    }
                    (None, Some(sql)) => Script::Sql(sql),
                    (None, None) => Script::Builtin("tpcb-like".into()),
                };
                let (rate, rate_at) = pick!(l, rate);
                if let Some(r) = rate
                    && !(r > 0.0 && r <= limits::MAX_RATE)
                {
                    return Err(self.fail(
                        &rate_at,
                        format!(
                            "{r} must be a positive number of transactions per second, at most {}",
                            limits::MAX_RATE
                        ),
                    ));
                }
                let (settings, settings_at) = pick!(l, settings);
                let mut pairs = Vec::new();
                for (key, value) in settings.unwrap_or_default() {
                    let text = match value {
                        Value::Bool(b) => Some(if b { "on" } else { "off" }.to_string()),
                        other => other.as_text(),
                    };
                    let Some(text) = text else {
                        return Err(self.fail(&settings_at, format!("`{key}`: give a value such as 1GB, 0.9 or on")));
                    };
                    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                        return Err(self.fail(&settings_at, format!("`{key}` is not a PostgreSQL setting name")));
                    }
                    pairs.push((key, text));
                }
                if !pairs.is_empty() && dsn.is_some() {
                    return Err(self.fail(
                        &settings_at,
                        "configures the throwaway cluster fathom starts; a server given by `dsn` keeps its own",
                    ));
                }
                let (target, target_at) = pick!(l, target);
                let target = match target.as_deref() {
                    Some([one]) if dsn.is_none() => Some(PathBuf::from(one)),
                    Some([_]) if p.target.is_some() => {
                        return Err(
                            self.fail(&target_at, "places the throwaway cluster; with a `dsn` the server is elsewhere")
                        );
                    }
                    Some([_]) | None => None,
                    Some(_) => return Err(self.fail(&target_at, "give one directory for the throwaway cluster")),
                };
                let (reuse, _) = pick!(l, reuse);
                let spec = Pgbench {
                    dsn,
                    scale,
                    reuse: reuse.unwrap_or(false),
                    clients,
                    threads,
                    script,
                    rate,
                    settings: pairs,
                    target,
                };
                (Driver::Pgbench(spec), clients)
            }
            DriverName::Iperf3 => {
                let (server, _) = pick!(l, server);
                // empty (a built-in's default): fathom's own server on loopback
                let server = server.filter(|s| !s.trim().is_empty());
                let (streams, streams_at) = pick!(l, streams);
                let streams = count(streams, &streams_at, 1, 128)?;
                let (reverse, _) = pick!(l, reverse);
                let (link, link_at) = pick!(l, link);
                // empty (a built-in's default): no link speed, so no share of one
                let link_bps = match link.filter(|t| !t.trim().is_empty()) {
                    Some(text) => Some(parse_bits(&text).map_err(|e| self.fail(&link_at, e))?),
                    None => None,
                };
                let spec = Iperf3 { server, streams, reverse: reverse.unwrap_or(false), link_bps };
                (Driver::Iperf3(spec), streams)
            }
        };
        let engine = match driver {
            Driver::Pgbench(_) => EngineKind::Pgbench,
            Driver::Iperf3(_) => EngineKind::Iperf3,
            Driver::FioJob(_) => EngineKind::Fio,
        };
        Ok(Workload {
            name: name.to_string(),
            jobs: workers,
            group: None,
            engine,
            duration,
            ramp,
            placement: None,
            kind: Kind::Program(driver),
        })
    }
}

/// Refuses a connection string that holds a secret, in any form libpq reads one, or
/// anything the store would mask (the stored scenario must be the one that ran). The
/// message never quotes the string.
fn no_secret(dsn: &str) -> Result<()> {
    const STORED: &str = "fathom stores the scenario with the run";
    match crate::secrets::dsn_secret(dsn) {
        Err(why) => Err(Error::input(format!("is not a connection string libpq can read: {why}"))),
        Ok(Some("sslpassword")) => Err(Error::input(format!(
            "holds an sslpassword: give it in a service file (`service=NAME`, ~/.pg_service.conf) ({STORED})"
        ))),
        Ok(Some(_)) => Err(Error::input(format!("holds a password: give it in PGPASSWORD or ~/.pgpass ({STORED})"))),
        Ok(None) if crate::secrets::redact(dsn) != dsn => Err(Error::input(format!(
            "holds what looks like a password, which the store would mask ({STORED}): leave it out"
        ))),
        Ok(None) => Ok(()),
    }
}
