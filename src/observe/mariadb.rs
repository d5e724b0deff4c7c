//! Inside MariaDB, once a second while a run measures: the figures of `SHOW GLOBAL
//! STATUS` a DBA reads for a storage study (InnoDB's redo written and its checkpoint
//! age, dirty pages and buffer pool reads, data reads, writes and fsyncs, row lock
//! waits, commits and queries) and of `information_schema.INNODB_METRICS` (deadlocks,
//! lock timeouts, the purge backlog, doublewrite), stored as observations under
//! mysqld_exporter's metric names, so that a dashboard reads fathom's store, its export
//! or a live exporter alike.
//!
//! InnoDB checkpoints continuously, not at moments as PostgreSQL does: what stalls its
//! commits is the redo log filling, when the checkpoint age nears its maximum and the
//! page cleaners must flush furiously. Each stretch of seconds with the age at or over
//! [`PRESSURE`] of its maximum is a `checkpoint` event of the server, which the
//! checkpoint-stall finding judges against its workloads' rate as it does PostgreSQL's.

use super::seam::{Observer, RunClock};
use crate::coprocess::{LATE, SENTINEL, Session};
use crate::error::Result;
use crate::store::sink::{Record, Sink};
use crate::store::{EventRow, ObservationRow};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A MariaDB server a run's workloads use.
#[derive(Debug, Clone)]
pub struct Server {
    /// The workloads it serves, joined with `,`: its observations' source is
    /// `mariadb:NAME`.
    pub name: String,
    /// The `mariadb` client's options that reach it, in no database.
    pub client: Vec<String>,
    /// Set when fathom ended the server before the run's end: its observer stops there
    /// without an error.
    pub retired: Option<Arc<AtomicBool>>,
}

/// The status variables observed.
const STATUS: [&str; 33] = [
    "Com_commit",
    "Com_rollback",
    "Com_select",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Queries",
    "Slow_queries",
    "Threads_connected",
    "Threads_running",
    "Innodb_buffer_pool_pages_data",
    "Innodb_buffer_pool_pages_free",
    "Innodb_buffer_pool_pages_dirty",
    "Innodb_buffer_pool_pages_flushed",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_wait_free",
    "Innodb_checkpoint_age",
    "Innodb_checkpoint_max_age",
    "Innodb_os_log_written",
    "Innodb_os_log_fsyncs",
    "Innodb_log_waits",
    "Innodb_data_read",
    "Innodb_data_reads",
    "Innodb_data_written",
    "Innodb_data_writes",
    "Innodb_data_fsyncs",
    "Innodb_row_lock_waits",
    "Innodb_row_lock_time",
    "Innodb_rows_read",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
];

/// The `INNODB_METRICS` rows observed (where the server has them enabled, as the
/// exporter reads them), as (name, subsystem).
const METRICS: [(&str, &str); 10] = [
    ("lock_deadlocks", "lock"),
    ("lock_timeouts", "lock"),
    ("lock_row_lock_current_waits", "lock"),
    ("trx_rseg_history_len", "transaction"),
    ("innodb_dblwr_writes", "server"),
    ("innodb_dblwr_pages_written", "server"),
    ("buffer_LRU_batch_flush_total_pages", "buffer"),
    ("log_writes", "recovery"),
    ("log_write_requests", "recovery"),
    ("os_log_bytes_written", "os"),
];

/// The share of its maximum at which the checkpoint age puts InnoDB's flushing under
/// pressure: past 7/8 of it the page cleaners flush furiously (InnoDB's asynchronous
/// flush point), and at the maximum every commit waits for them.
pub const PRESSURE: f64 = 0.875;

/// The series that are gauges (a value now); every other is a counter (a running total
/// since the server started), read as its rise per second.
const GAUGES: [&str; 6] = [
    "mysql_global_status_threads_connected",
    "mysql_global_status_threads_running",
    "mysql_global_status_buffer_pool_pages",
    "mysql_global_status_buffer_pool_dirty_pages",
    "mysql_global_status_innodb_checkpoint_age",
    "mysql_global_status_innodb_checkpoint_max_age",
];

/// Whether the observed series `name` (its labels aside) is one of this observer's
/// counters.
pub fn counter(name: &str) -> bool {
    let base = name.split('{').next().unwrap_or(name);
    match base.strip_prefix("mysql_info_schema_innodb_metrics_") {
        Some(metric) => metric.ends_with("_total"),
        None => base.starts_with("mysql_global_status_") && !GAUGES.contains(&base),
    }
}

/// The help of `family` (a series' name without its labels), if it is one of this
/// observer's: where MariaDB keeps it, as mysqld_exporter's names say no more.
pub fn help(family: &str) -> Option<&'static str> {
    if family.starts_with("mysql_global_status_") {
        Some("A variable of MariaDB's SHOW GLOBAL STATUS, under mysqld_exporter's name.")
    } else if family.starts_with("mysql_info_schema_innodb_metrics_") {
        Some("A row of MariaDB's information_schema.INNODB_METRICS, under mysqld_exporter's name.")
    } else {
        None
    }
}

/// The name mysqld_exporter gives `INNODB_METRICS` row `name` of `subsystem` and `kind`
/// (its `info_schema.innodb_metrics` collector): `mysql_info_schema_innodb_metrics_`,
/// the subsystem and the name, `_total` for a counter (`counter`, `status_counter`);
/// the buffer pool's pages by state and its page reads and writes by type apart. None
/// for what the exporter leaves out (the pool's total pages, a negative counter).
pub fn innodb_metric_name(name: &str, subsystem: &str, kind: &str, value: f64) -> Option<String> {
    let prefix = "mysql_info_schema_innodb_metrics";
    if subsystem == "buffer_page_io" {
        let (io, kind) = name.strip_prefix("buffer_page_")?.split_once('_')?;
        return ["read", "written"]
            .contains(&io)
            .then(|| format!("{prefix}_buffer_page_{io}_total{{type=\"{kind}\"}}"));
    }
    if let Some(state) = name.strip_prefix("buffer_pool_pages_").filter(|_| subsystem == "buffer") {
        return match state {
            "total" => None,
            "dirty" => Some(format!("{prefix}_buffer_pool_dirty_pages")),
            _ => Some(format!("{prefix}_buffer_pool_pages{{state=\"{state}\"}}")),
        };
    }
    match (kind, value >= 0.0) {
        ("counter" | "status_counter", true) => Some(format!("{prefix}_{subsystem}_{name}_total")),
        _ => Some(format!("{prefix}_{subsystem}_{name}")),
    }
}

/// The name mysqld_exporter gives status variable `variable` (its `global_status`
/// collector): a family with a label for the groups it splits out (`Com_commit` is
/// `mysql_global_status_commands_total{command="commit"}`), else
/// `mysql_global_status_` and the variable's name in lower case. None for what the
/// exporter leaves out (`Innodb_buffer_pool_pages_total`).
pub fn exporter_name(variable: &str) -> Option<String> {
    let key = variable.to_ascii_lowercase();
    let groups =
        ["com", "handler", "connection_errors", "innodb_buffer_pool_pages", "innodb_rows", "performance_schema"];
    let Some((group, rest)) = groups.iter().find_map(|g| Some((*g, key.strip_prefix(g)?.strip_prefix('_')?))) else {
        return Some(format!("mysql_global_status_{key}"));
    };
    let family = |family: &str, label: &str| Some(format!("mysql_global_status_{family}{{{label}=\"{rest}\"}}"));
    match group {
        "com" => family("commands_total", "command"),
        "handler" => family("handlers_total", "handler"),
        "connection_errors" => family("connection_errors_total", "error"),
        "innodb_rows" => family("innodb_row_ops_total", "operation"),
        "performance_schema" => family("performance_schema_lost_total", "instrumentation"),
        _ => match rest {
            "data" | "free" | "misc" | "old" => family("buffer_pool_pages", "state"),
            "dirty" => Some("mysql_global_status_buffer_pool_dirty_pages".into()),
            "total" => None,
            _ => family("buffer_pool_page_changes_total", "operation"),
        },
    }
}

/// The question asked each second: the status variables, then the metrics.
fn query() -> String {
    let names: Vec<String> = STATUS.iter().map(|n| format!("'{n}'")).collect();
    let metrics: Vec<String> = METRICS.iter().map(|(n, _)| format!("'{n}'")).collect();
    format!(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ({}); SELECT name, subsystem, type, count FROM \
         information_schema.innodb_metrics WHERE enabled = 1 AND name IN ({});",
        names.join(", "),
        metrics.join(", ")
    )
}

/// A second's answer as observations under their exporter names: each
/// `Variable_name\tValue` line of the status, each `name\tsubsystem\ttype\tcount` of
/// the metrics.
fn parse(lines: &[String], t: i64, source: &str) -> Vec<ObservationRow> {
    let row = |line: &String| {
        let fields: Vec<&str> = line.split('\t').collect();
        let (name, value) = match fields[..] {
            [variable, value] => (exporter_name(variable)?, value.trim().parse().ok()?),
            [name, subsystem, kind, value] => {
                let value = value.trim().parse().ok()?;
                (innodb_metric_name(name, subsystem, kind, value)?, value)
            }
            _ => return None,
        };
        Some(ObservationRow { t, source: source.into(), name, value })
    };
    lines.iter().filter_map(row).collect()
}

/// A stretch of seconds in which the checkpoint age stood at or over [`PRESSURE`] of
/// its maximum, followed second by second.
#[derive(Debug, Default)]
struct Pressure {
    /// Its first second and the highest share of the maximum reached, while it lasts.
    open: Option<(i64, f64)>,
}

impl Pressure {
    /// Follows second `t`'s observations; the stretch that ended before it, if one did.
    fn follow(&mut self, rows: &[ObservationRow], t: i64, server: &str) -> Option<EventRow> {
        let get = |name: &str| rows.iter().find(|r| r.name.ends_with(name)).map(|r| r.value);
        let share = match (get("_innodb_checkpoint_age"), get("_innodb_checkpoint_max_age")) {
            (Some(age), Some(max)) if max > 0.0 => age / max,
            _ => return None,
        };
        match (self.open, share >= PRESSURE) {
            (None, true) => self.open = Some((t, share)),
            (Some((from, most)), true) => self.open = Some((from, most.max(share))),
            (Some(_), false) => return self.close(t, server),
            (None, false) => {}
        }
        None
    }

    /// The stretch still open, ended at second `t`, as a `checkpoint` event.
    fn close(&mut self, t: i64, server: &str) -> Option<EventRow> {
        let (from, most) = self.open.take()?;
        Some(EventRow {
            at_ms: from * 1000,
            kind: "checkpoint".into(),
            label: server.to_string(),
            status: None,
            took_ms: Some((t - from) * 1000),
            detail: format!(
                "InnoDB flushed under redo pressure: the checkpoint age reached {:.0}% of its maximum (at or over \
                 {:.1}% for {} s): a larger innodb_log_file_size gives the page cleaners room",
                100.0 * most,
                100.0 * PRESSURE,
                t - from
            ),
        })
    }
}

/// The MariaDB observer of one server; `progress` hears, once, that it cannot be queried
/// (the run goes on without its series).
pub struct Mariadb {
    pub server: Server,
    pub progress: Arc<dyn Fn(&str) + Send + Sync>,
}

impl Observer for Mariadb {
    fn name(&self) -> &'static str {
        "observe-mariadb"
    }

    fn observe(self: Box<Self>, sink: Sink, clock: RunClock, stop: &AtomicBool) -> Result<()> {
        let source = format!("mariadb:{}", self.server.name);
        let said = |e: &str| (self.progress)(&format!("observe: {source}: {e}; its status series stop here"));
        let mut cmd = Command::new("mariadb");
        cmd.args(&self.server.client).args(["--batch", "--skip-column-names", "--unbuffered"]);
        let mut client =
            Session::start(&mut cmd, "mariadb", |n| format!("SELECT '{SENTINEL} {n}';")).map_err(|e| said(&e)).ok();
        let sql = query();
        let mut pressure = Pressure::default();
        for t in clock.start.elapsed().as_secs() + 1.. {
            if !crate::clock::sleep_until(clock.start + Duration::from_secs(t), stop) {
                if let Some(e) = pressure.close(t as i64 - 1, &self.server.name) {
                    sink.send(Record::Event(e));
                }
                return Ok(());
            }
            match client.as_mut().map(|c| c.ask(&sql)) {
                Some(Ok(lines)) => {
                    let rows = parse(&lines, t as i64, &source);
                    if let Some(e) = pressure.follow(&rows, t as i64, &self.server.name) {
                        sink.send(Record::Event(e));
                    }
                    sink.send(Record::Observations(rows));
                }
                Some(Err(e)) if e != LATE => {
                    if !self.server.retired.as_ref().is_some_and(|r| r.load(Ordering::Relaxed)) {
                        said(&e);
                    }
                    client = None;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// A series of every family this observer may store, for tests of what serves them
/// (each `INNODB_METRICS` row as a counter, as most are).
#[cfg(test)]
pub fn every_series() -> Vec<String> {
    let status = STATUS.iter().filter_map(|v| exporter_name(v));
    status.chain(METRICS.iter().filter_map(|(n, sub)| innodb_metric_name(n, sub, "counter", 0.0))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_variables_are_named_as_mysqld_exporter_names_them() {
        let name = |v: &str| exporter_name(v).unwrap_or_default();
        assert_eq!(name("Com_commit"), "mysql_global_status_commands_total{command=\"commit\"}");
        assert_eq!(name("Innodb_rows_read"), "mysql_global_status_innodb_row_ops_total{operation=\"read\"}");
        assert_eq!(name("Innodb_buffer_pool_pages_free"), "mysql_global_status_buffer_pool_pages{state=\"free\"}");
        assert_eq!(name("Innodb_buffer_pool_pages_dirty"), "mysql_global_status_buffer_pool_dirty_pages");
        assert_eq!(
            name("Innodb_buffer_pool_pages_flushed"),
            "mysql_global_status_buffer_pool_page_changes_total{operation=\"flushed\"}"
        );
        assert_eq!(exporter_name("Innodb_buffer_pool_pages_total"), None);
        assert_eq!(name("Innodb_checkpoint_age"), "mysql_global_status_innodb_checkpoint_age");
        // a name that only begins like a group is not in it
        assert_eq!(name("Compression"), "mysql_global_status_compression");
        assert!(counter("mysql_global_status_commands_total{command=\"commit\"}"));
        assert!(!counter("mysql_global_status_innodb_checkpoint_age"));
        assert!(!counter("mysql_global_status_buffer_pool_pages{state=\"free\"}"));
    }

    #[test]
    fn innodb_metrics_are_named_as_mysqld_exporter_names_them() {
        let name = |n: &str, s: &str, k: &str| innodb_metric_name(n, s, k, 1.0).unwrap_or_default();
        assert_eq!(name("lock_deadlocks", "lock", "value"), "mysql_info_schema_innodb_metrics_lock_lock_deadlocks");
        assert_eq!(
            name("log_writes", "recovery", "status_counter"),
            "mysql_info_schema_innodb_metrics_recovery_log_writes_total"
        );
        assert_eq!(
            name("buffer_pool_pages_free", "buffer", "value"),
            "mysql_info_schema_innodb_metrics_buffer_pool_pages{state=\"free\"}"
        );
        assert_eq!(
            name("buffer_pool_pages_dirty", "buffer", "value"),
            "mysql_info_schema_innodb_metrics_buffer_pool_dirty_pages"
        );
        assert_eq!(innodb_metric_name("buffer_pool_pages_total", "buffer", "value", 9.0), None);
        assert_eq!(
            name("buffer_page_read_index_leaf", "buffer_page_io", "counter"),
            "mysql_info_schema_innodb_metrics_buffer_page_read_total{type=\"index_leaf\"}"
        );
        // a counter below zero (a server's bug) is a gauge, as the exporter reads it
        assert_eq!(
            innodb_metric_name("lock_timeouts", "lock", "counter", -1.0).unwrap(),
            "mysql_info_schema_innodb_metrics_lock_lock_timeouts"
        );
        assert!(counter("mysql_info_schema_innodb_metrics_recovery_log_writes_total"));
        assert!(!counter("mysql_info_schema_innodb_metrics_transaction_trx_rseg_history_len"));
    }

    #[test]
    fn redo_pressure_is_a_checkpoint_event_of_its_stretch() {
        let second = |t: i64, age: f64| {
            let rows = [
                ("mysql_global_status_innodb_checkpoint_age", age),
                ("mysql_global_status_innodb_checkpoint_max_age", 100.0),
            ];
            rows.map(|(name, value)| ObservationRow { t, source: "mariadb:a,b".into(), name: name.into(), value })
        };
        let mut p = Pressure::default();
        let ages = [10.0, 88.0, 92.0, 90.0, 40.0, 95.0];
        let events: Vec<EventRow> =
            ages.iter().zip(1..).filter_map(|(age, t)| p.follow(&second(t, *age), t, "a,b")).collect();
        assert_eq!(events.len(), 1);
        let e = &events[0];
        assert_eq!((e.at_ms, e.took_ms, e.kind.as_str(), e.label.as_str()), (2000, Some(3000), "checkpoint", "a,b"));
        assert!(e.detail.contains("reached 92% of its maximum"), "{}", e.detail);
        // the stretch still open when the run ends is ended there
        let last = p.close(8, "a,b").unwrap();
        assert_eq!((last.at_ms, last.took_ms), (6000, Some(2000)));
        assert!(p.close(9, "a,b").is_none());
    }

    #[test]
    fn an_answer_is_one_row_per_status_line() {
        let lines = [
            "Com_commit\t12".to_string(),
            "Threads_running\t3".into(),
            "garbled".into(),
            "lock_deadlocks\tlock\tvalue\t2".into(),
        ];
        let rows = parse(&lines, 7, "mariadb:w");
        let got: Vec<(&str, f64)> = rows.iter().map(|r| (r.name.as_str(), r.value)).collect();
        assert_eq!(
            got,
            [
                ("mysql_global_status_commands_total{command=\"commit\"}", 12.0),
                ("mysql_global_status_threads_running", 3.0),
                ("mysql_info_schema_innodb_metrics_lock_lock_deadlocks", 2.0)
            ]
        );
        assert!(rows.iter().all(|r| r.t == 7 && r.source == "mariadb:w"));
    }
}
