//! Inside MariaDB, once a second while a run measures: the figures of `SHOW GLOBAL
//! STATUS` a DBA reads for a storage study (InnoDB's redo written and its checkpoint
//! age, dirty pages and buffer pool reads, data reads, writes and fsyncs, row lock
//! waits, commits and queries), stored as observations under mysqld_exporter's metric
//! names, so that a dashboard reads fathom's store, its export or a live exporter alike.

use super::coprocess::{LATE, SENTINEL, Session};
use super::seam::{Observer, RunClock};
use crate::error::Result;
use crate::store::ObservationRow;
use crate::store::sink::{Record, Sink};
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
    base.starts_with("mysql_global_status_") && !GAUGES.contains(&base)
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

/// The question asked each second.
fn query() -> String {
    let names: Vec<String> = STATUS.iter().map(|n| format!("'{n}'")).collect();
    format!("SHOW GLOBAL STATUS WHERE Variable_name IN ({});", names.join(", "))
}

/// A second's answer as observations: each `Variable_name\tValue` line under its
/// exporter name.
fn parse(lines: &[String], t: i64, source: &str) -> Vec<ObservationRow> {
    let row = |line: &String| {
        let (variable, value) = line.split_once('\t')?;
        let value = value.trim().parse().ok()?;
        Some(ObservationRow { t, source: source.into(), name: exporter_name(variable)?, value })
    };
    lines.iter().filter_map(row).collect()
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
        for t in clock.start.elapsed().as_secs() + 1.. {
            if !crate::clock::sleep_until(clock.start + Duration::from_secs(t), stop) {
                return Ok(());
            }
            match client.as_mut().map(|c| c.ask(&sql)) {
                Some(Ok(lines)) => sink.send(Record::Observations(parse(&lines, t as i64, &source))),
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
    fn an_answer_is_one_row_per_status_line() {
        let lines = ["Com_commit\t12".to_string(), "Threads_running\t3".into(), "garbled".into()];
        let rows = parse(&lines, 7, "mariadb:w");
        let got: Vec<(&str, f64)> = rows.iter().map(|r| (r.name.as_str(), r.value)).collect();
        assert_eq!(
            got,
            [
                ("mysql_global_status_commands_total{command=\"commit\"}", 12.0),
                ("mysql_global_status_threads_running", 3.0)
            ]
        );
        assert!(rows.iter().all(|r| r.t == 7 && r.source == "mariadb:w"));
    }
}
