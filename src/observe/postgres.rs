//! Inside PostgreSQL, once a second while a run measures: the statistics views a DBA
//! reads (pg_stat_database, the background writer and checkpointer, pg_stat_wal,
//! pg_stat_io where the server has it) and the client backends per wait event type,
//! stored as observations under postgres_exporter's metric names so that a dashboard
//! reads fathom's store, its export or a live exporter alike. Checkpoints and autovacuum
//! runs become timeline events: from the server's log on a throwaway cluster
//! ([`super::pglog`]), else from the checkpoint counters.

use super::pglog::LogTail;
use super::seam::{Observer, RunClock};
use crate::coprocess::{LATE, SENTINEL, Session};
use crate::error::Result;
use crate::store::sink::{Record, Sink};
use crate::store::{EventRow, ObservationRow};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A PostgreSQL server a run's workloads use.
#[derive(Debug, Clone)]
pub struct Server {
    /// The workloads it serves, joined with `,`: its observations' source is
    /// `postgres:NAME` and its events' label `NAME`.
    pub name: String,
    pub dsn: String,
    /// The server's log, on a throwaway cluster (whose settings,
    /// `drivers::postgres::OBSERVED`, log checkpoints and autovacuum runs with a Unix
    /// timestamp on each line).
    pub log: Option<PathBuf>,
    /// Set when fathom ended the server before the run's end (a throwaway cluster whose
    /// workloads were over): its observer stops there without an error.
    pub retired: Option<Arc<AtomicBool>>,
}

impl Server {
    pub fn source(&self) -> String {
        format!("postgres:{}", self.name)
    }
}

/// The series of the views below that are gauges (a value now); every other is a
/// counter (a running total since the server's statistics were reset).
const GAUGES: [&str; 2] = ["pg_stat_database_numbackends", "fathom_pg_stat_activity_backends"];

/// Whether the observed series `name` (its labels, `{datname="x"}`, aside) is one of
/// this observer's counters, which are read as rises per second, never averaged.
pub fn counter(name: &str) -> bool {
    let base = name.split('{').next().unwrap_or(name);
    help(base).is_some() && !GAUGES.contains(&base)
}

/// The PostgreSQL observer of one server: `psql` the client it queries through;
/// `progress` hears, once, that the server cannot be queried (the run goes on without
/// its series and, with a log, still with its events).
pub struct Postgres {
    pub server: Server,
    pub psql: PathBuf,
    pub progress: Arc<dyn Fn(&str) + Send + Sync>,
}

impl Observer for Postgres {
    fn name(&self) -> &'static str {
        "observe-postgres"
    }

    fn observe(self: Box<Self>, sink: Sink, clock: RunClock, stop: &AtomicBool) -> Result<()> {
        let (server, source) = (&self.server, self.server.source());
        let said = |e: &str| (self.progress)(&format!("observe: {source}: {e}; its pg_stat series stop here"));
        let mut psql = psql_session(&self.psql, &server.dsn).map_err(|e| said(&e)).ok();
        if let Some(p) = psql.as_mut()
            && !elsewhere(p)
        {
            // a connection lost in moving (psql ends on a failed `\c` in a script) is made
            // again where it was
            psql = psql_session(&self.psql, &server.dsn).map_err(|e| said(&e)).ok();
        }
        let version = psql.as_mut().map(|p| p.ask("SHOW server_version_num;"));
        let views = match version {
            Some(Ok(lines)) => views(lines.first().and_then(|v| v.trim().parse().ok()).unwrap_or(0)),
            Some(Err(e)) => {
                said(&e);
                psql = None;
                Vec::new()
            }
            None => Vec::new(),
        };
        let sql = query(&views);
        let mut log = server.log.as_ref().map(|p| LogTail::at_end(p));
        let mut counters = Counters::default();
        for t in clock.start.elapsed().as_secs() + 1.. {
            if !crate::clock::sleep_until(clock.start + Duration::from_secs(t), stop) {
                return Ok(());
            }
            let mut events = Vec::new();
            match psql.as_mut().map(|p| p.ask(&sql)) {
                Some(Ok(lines)) => {
                    let rows = parse(&views, &lines, t as i64, &source);
                    if log.is_none() {
                        events.extend(counters.checkpoint(&rows, t as i64, &server.name));
                    }
                    sink.send(Record::Observations(rows));
                }
                Some(Err(e)) if e != LATE => {
                    if server.retired.as_ref().is_some_and(|r| r.load(Ordering::Relaxed)) {
                        // what its log said before it ended is still the run's
                        let ended = log.as_mut().map(|tail| tail.events(clock.unix_ms, &server.name));
                        ended.into_iter().flatten().for_each(|e| sink.send(Record::Event(e)));
                        return Ok(());
                    }
                    said(&e);
                    psql = None;
                }
                _ => {}
            }
            if let Some(tail) = log.as_mut() {
                events.extend(tail.events(clock.unix_ms, &server.name));
            }
            events.into_iter().for_each(|e| sink.send(Record::Event(e)));
        }
        Ok(())
    }
}

/// psql on `dsn`, as the observer's [`Session`].
fn psql_session(psql: &Path, dsn: &str) -> std::result::Result<Session, String> {
    let mut cmd = Command::new(psql);
    cmd.args(["-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", dsn])
        .env("PGCONNECT_TIMEOUT", "5")
        .env("PGAPPNAME", "fathom-observe");
    Session::start(&mut cmd, "psql", |n| format!("\\echo {SENTINEL} {n}"))
}

/// Moves the session to the `postgres` database when it may connect there, and says
/// whether the session is still alive. Each of the observer's statements is a commit
/// of the database it is connected to: in the measured one they would be counted in
/// its commits, and so in a TPM read from them. The statistics views are the whole
/// server's from any database.
fn elsewhere(psql: &mut Session) -> bool {
    let may = "SELECT current_database() <> 'postgres' AND EXISTS (SELECT 1 FROM pg_database \
               WHERE datname = 'postgres' AND has_database_privilege(oid, 'CONNECT'));";
    match psql.ask(may).as_deref() {
        Ok([yes]) if yes.trim() == "t" => psql.ask("\\connect postgres").is_ok(),
        Ok(_) => true,
        Err(_) => false,
    }
}

/// One view's figures: `SELECT 'tag', labels..., columns... FROM from`, each column
/// stored as `prefix` + its metric name (with `{name="value",...}` when the view has
/// labels), each with the help its family is served with.
#[derive(Debug, Clone, Copy)]
struct View {
    tag: &'static str,
    prefix: &'static str,
    /// (label name, column or expression), in the order the name lists them.
    labels: &'static [(&'static str, &'static str)],
    from: &'static str,
    /// (column or expression, metric name, help).
    columns: &'static [(&'static str, &'static str, &'static str)],
}

/// postgres_exporter's `pg_stat_database` family, with its labels (`datid`, `datname`).
const DATABASE: View = View {
    tag: "db",
    prefix: "pg_stat_database_",
    labels: &[("datname", "datname"), ("datid", "datid")],
    from: "pg_stat_database WHERE datname IS NOT NULL AND datname NOT IN ('template0', 'template1')",
    columns: &[
        ("numbackends", "numbackends", "Backends connected to the database."),
        ("xact_commit", "xact_commit", "Transactions committed in the database."),
        ("xact_rollback", "xact_rollback", "Transactions rolled back in the database."),
        ("blks_read", "blks_read", "Blocks read from the kernel in the database."),
        ("blks_hit", "blks_hit", "Blocks found in shared buffers in the database."),
        ("temp_files", "temp_files", "Temporary files the database's queries made."),
        ("temp_bytes", "temp_bytes", "Bytes the database's queries wrote to temporary files."),
        ("deadlocks", "deadlocks", "Deadlocks detected in the database."),
        ("blk_read_time", "blk_read_time", "Milliseconds backends spent reading the database's blocks."),
        ("blk_write_time", "blk_write_time", "Milliseconds backends spent writing the database's blocks."),
    ],
};

/// Before PostgreSQL 17 the checkpointer's counters are in pg_stat_bgwriter.
const BGWRITER: View = View {
    tag: "bgw",
    prefix: "pg_stat_bgwriter_",
    labels: &[],
    from: "pg_stat_bgwriter",
    columns: &[
        ("checkpoints_timed", "checkpoints_timed_total", "Checkpoints begun by checkpoint_timeout."),
        ("checkpoints_req", "checkpoints_req_total", "Checkpoints asked for (WAL past max_wal_size, CHECKPOINT)."),
        ("checkpoint_write_time", "checkpoint_write_time_total", "Milliseconds checkpoints spent writing files."),
        ("checkpoint_sync_time", "checkpoint_sync_time_total", "Milliseconds checkpoints spent syncing files."),
        ("buffers_checkpoint", "buffers_checkpoint_total", "Buffers the checkpointer wrote."),
        ("buffers_clean", "buffers_clean_total", "Buffers the background writer wrote."),
        ("maxwritten_clean", "maxwritten_clean_total", "Times the background writer stopped at its limit."),
        ("buffers_backend", "buffers_backend_total", "Buffers backends had to write themselves."),
        ("buffers_alloc", "buffers_alloc_total", "Buffers allocated."),
    ],
};

/// PostgreSQL 17's pg_stat_bgwriter: the background writer's own counters only.
const BGWRITER_17: View = View {
    tag: "bgw",
    prefix: "pg_stat_bgwriter_",
    labels: &[],
    from: "pg_stat_bgwriter",
    columns: &[
        ("buffers_clean", "buffers_clean_total", "Buffers the background writer wrote."),
        ("maxwritten_clean", "maxwritten_clean_total", "Times the background writer stopped at its limit."),
        ("buffers_alloc", "buffers_alloc_total", "Buffers allocated."),
    ],
};

const CHECKPOINTER: View = View {
    tag: "ckp",
    prefix: "pg_stat_checkpointer_",
    labels: &[],
    from: "pg_stat_checkpointer",
    columns: &[
        ("num_timed", "num_timed_total", "Checkpoints begun by checkpoint_timeout."),
        ("num_requested", "num_requested_total", "Checkpoints asked for (WAL past max_wal_size, CHECKPOINT)."),
        ("write_time", "write_time_total", "Milliseconds checkpoints spent writing files."),
        ("sync_time", "sync_time_total", "Milliseconds checkpoints spent syncing files."),
        ("buffers_written", "buffers_written_total", "Buffers the checkpointer wrote."),
    ],
};

/// PostgreSQL 14 to 17 (18 moved the write and sync figures to pg_stat_io).
/// postgres_exporter has no collector for the view: the names are fathom's.
const WAL: View = View {
    tag: "wal",
    prefix: "fathom_pg_stat_wal_",
    labels: &[],
    from: "pg_stat_wal",
    columns: &[
        ("wal_records", "records_total", "WAL records generated."),
        ("wal_fpi", "fpi_total", "WAL full-page images generated."),
        ("wal_bytes", "bytes_total", "Bytes of WAL generated."),
        ("wal_buffers_full", "buffers_full_total", "WAL writes forced by full WAL buffers."),
        ("wal_write", "write_total", "Times WAL buffers were written out."),
        ("wal_sync", "sync_total", "Times WAL files were synced."),
        ("wal_write_time", "write_time_total", "Milliseconds spent writing WAL (track_wal_io_timing)."),
        ("wal_sync_time", "sync_time_total", "Milliseconds spent syncing WAL (track_wal_io_timing)."),
    ],
};

/// PostgreSQL 18's pg_stat_wal: its first four columns, the others gone to pg_stat_io.
const WAL_18: View = View { columns: WAL.columns.split_at(4).0, ..WAL };

/// PostgreSQL 16 and later: IO per backend type, summed over objects and contexts.
/// postgres_exporter has no collector for the view: the names are fathom's.
const IO: View = View {
    tag: "io",
    prefix: "fathom_pg_stat_io_",
    labels: &[("backend_type", "backend_type")],
    from: "pg_stat_io GROUP BY backend_type",
    columns: &[
        ("sum(coalesce(reads, 0))", "reads_total", "Read operations, per backend type."),
        ("sum(coalesce(writes, 0))", "writes_total", "Write operations, per backend type."),
        ("sum(coalesce(extends, 0))", "extends_total", "Relation extend operations, per backend type."),
        ("sum(coalesce(fsyncs, 0))", "fsyncs_total", "fsync calls, per backend type."),
        ("sum(coalesce(read_time, 0))", "read_time_total", "Milliseconds spent reading, per backend type."),
        ("sum(coalesce(write_time, 0))", "write_time_total", "Milliseconds spent writing, per backend type."),
    ],
};

/// Client backends at work (active or in a transaction) per wait event type, `CPU` for
/// those waiting on none, every type counted (0 too) so that a chart's line is whole.
/// postgres_exporter counts none such: the name is fathom's.
const WAITS: View = View {
    tag: "wait",
    prefix: "fathom_pg_stat_activity_",
    labels: &[("wait_event_type", "k.t")],
    from: "(VALUES ('CPU'), ('LWLock'), ('Lock'), ('BufferPin'), ('Activity'), ('Client'), ('Extension'), \
           ('IPC'), ('Timeout'), ('IO')) AS k(t) LEFT JOIN pg_stat_activity a \
           ON coalesce(a.wait_event_type, 'CPU') = k.t AND a.backend_type = 'client backend' \
           AND a.state <> 'idle' AND a.pid <> pg_backend_pid() GROUP BY k.t",
    columns: &[("count(a.pid)", "backends", "Client backends at work, by the type of event they wait on (CPU: none).")],
};

/// Every view this observer may read, of any server version.
const ALL: [View; 7] = [DATABASE, WAITS, BGWRITER, BGWRITER_17, CHECKPOINTER, WAL, IO];

/// The help of `family` (a series' name without its labels), if it is one of this
/// observer's.
pub fn help(family: &str) -> Option<&'static str> {
    ALL.iter().find_map(|v| {
        let metric = family.strip_prefix(v.prefix)?;
        v.columns.iter().find(|c| c.1 == metric).map(|c| c.2)
    })
}

/// The views a server of `version` (`server_version_num`) has.
fn views(version: u32) -> Vec<View> {
    let mut v = vec![DATABASE, WAITS];
    v.push(if version >= 170_000 { BGWRITER_17 } else { BGWRITER });
    if version >= 170_000 {
        v.push(CHECKPOINTER);
    }
    if version >= 140_000 {
        v.push(if version >= 180_000 { WAL_18 } else { WAL });
    }
    if version >= 160_000 {
        v.push(IO);
    }
    v
}

/// One second's queries.
fn query(views: &[View]) -> String {
    let mut sql = String::new();
    for v in views {
        let cells: Vec<&str> = v.labels.iter().map(|l| l.1).chain(v.columns.iter().map(|c| c.0)).collect();
        sql.push_str(&format!("SELECT '{}', {} FROM {};\n", v.tag, cells.join(", "), v.from));
    }
    sql
}

/// An answer's lines as observations of second `t`.
fn parse(views: &[View], lines: &[String], t: i64, source: &str) -> Vec<ObservationRow> {
    let mut rows = Vec::new();
    for line in lines {
        let mut cells = line.split('\t');
        let Some(v) = cells.next().and_then(|tag| views.iter().find(|v| v.tag == tag)) else { continue };
        let pairs: Vec<String> = v
            .labels
            .iter()
            .zip(cells.by_ref())
            .map(|((name, _), value)| format!("{name}=\"{}\"", value.replace('"', "'")))
            .collect();
        if pairs.len() < v.labels.len() {
            continue;
        }
        let labels = if pairs.is_empty() { String::new() } else { format!("{{{}}}", pairs.join(",")) };
        for ((_, metric, _), cell) in v.columns.iter().zip(cells) {
            if let Ok(value) = cell.trim().parse::<f64>() {
                let name = format!("{}{metric}{labels}", v.prefix);
                rows.push(ObservationRow { t, source: source.to_string(), name, value });
            }
        }
    }
    rows
}

/// The checkpoint counters of the last second, for a server whose log fathom cannot
/// read (a `dsn`): a checkpoint shows as its counters rising.
#[derive(Debug, Default)]
struct Counters {
    last: Option<[f64; 4]>,
}

impl Counters {
    /// The checkpoint that ended by second `t` (the counters are reported as it
    /// ends), as an event beginning its write and sync time earlier.
    fn checkpoint(&mut self, rows: &[ObservationRow], t: i64, server: &str) -> Option<EventRow> {
        let get = |names: [&str; 2]| rows.iter().filter(|r| names.contains(&r.name.as_str())).map(|r| r.value).sum();
        let now = [
            get(["pg_stat_bgwriter_checkpoints_timed_total", "pg_stat_checkpointer_num_timed_total"])
                + get(["pg_stat_bgwriter_checkpoints_req_total", "pg_stat_checkpointer_num_requested_total"]),
            get(["pg_stat_bgwriter_buffers_checkpoint_total", "pg_stat_checkpointer_buffers_written_total"]),
            get(["pg_stat_bgwriter_checkpoint_write_time_total", "pg_stat_checkpointer_write_time_total"]),
            get(["pg_stat_bgwriter_checkpoint_sync_time_total", "pg_stat_checkpointer_sync_time_total"]),
        ];
        let last = self.last.replace(now)?;
        if now[0] <= last[0] {
            return None;
        }
        let [_, buffers, write, sync] = [0, 1, 2, 3].map(|i| now[i] - last[i]);
        let took = (write + sync).round() as i64;
        Some(EventRow {
            at_ms: t * 1000 - took,
            kind: "checkpoint".into(),
            label: server.to_string(),
            status: None,
            took_ms: Some(took),
            detail: format!(
                "from the counters: wrote {buffers:.0} buffers; write={:.3} s, sync={:.3} s",
                write / 1e3,
                sync / 1e3
            ),
        })
    }
}

/// A series of every family this observer may store, its labels filled in, for tests
/// of what serves them.
#[cfg(test)]
pub fn every_series() -> Vec<String> {
    let labels = |v: &View| v.labels.iter().map(|(name, _)| format!("{name}=\"x\"")).collect::<Vec<_>>().join(",");
    let labelled = |v: &View| if v.labels.is_empty() { String::new() } else { format!("{{{}}}", labels(v)) };
    ALL.iter().flat_map(|v| v.columns.iter().map(move |c| format!("{}{}{}", v.prefix, c.1, labelled(v)))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_follow_the_server_version() {
        let tags = |v: u32| views(v).iter().map(|v| v.tag).collect::<Vec<_>>();
        assert_eq!(tags(130_000), ["db", "wait", "bgw"]);
        assert_eq!(tags(150_004), ["db", "wait", "bgw", "wal"]);
        assert_eq!(tags(160_000), ["db", "wait", "bgw", "wal", "io"]);
        assert_eq!(tags(170_002), ["db", "wait", "bgw", "ckp", "wal", "io"]);
        let cols = |v: u32| views(v).iter().find(|v| v.tag == "wal").map(|v| v.columns.len());
        assert_eq!((cols(170_000), cols(180_000)), (Some(8), Some(4)));
    }

    #[test]
    fn answers_become_exporter_named_observations() {
        let views = views(150_000);
        let lines =
            ["db\ttpcc_0\t16384\t3\t120\t1\t5\t900\t0\t0\t0\t1.5\t0", "wait\tIO\t2", "junk", "db", "bgw\t1\t2\t3"]
                .map(String::from);
        let rows = parse(&views, &lines, 7, "postgres:a");
        let get = |n: &str| rows.iter().find(|r| r.name == n).map(|r| (r.t, r.value));
        let db = "{datname=\"tpcc_0\",datid=\"16384\"}";
        assert_eq!(get(&format!("pg_stat_database_xact_commit{db}")), Some((7, 120.0)));
        assert_eq!(get(&format!("pg_stat_database_blk_read_time{db}")), Some((7, 1.5)));
        assert_eq!(get("fathom_pg_stat_activity_backends{wait_event_type=\"IO\"}"), Some((7, 2.0)));
        assert_eq!(get("pg_stat_bgwriter_checkpoints_req_total"), Some((7, 2.0)));
        assert!(rows.iter().all(|r| r.source == "postgres:a"));
        assert_eq!(rows.len(), 10 + 1 + 3);
        assert!(query(&views).contains("FROM pg_stat_wal;"));
        assert!(query(&views).contains("SELECT 'db', datname, datid, numbackends,"));
    }

    /// Counters are told from gauges by name, labels aside, and every family has help.
    #[test]
    fn every_family_has_help_and_a_kind() {
        assert!(counter("pg_stat_database_xact_commit{datname=\"x\",datid=\"1\"}"));
        assert!(counter("fathom_pg_stat_wal_bytes_total") && counter("pg_stat_checkpointer_num_timed_total"));
        assert!(!counter("pg_stat_database_numbackends{datname=\"x\",datid=\"1\"}"));
        assert!(!counter("fathom_pg_stat_activity_backends{wait_event_type=\"IO\"}"));
        assert!(!counter("usr_pct") && help("pg_stat_wal_wal_bytes").is_none());
        for v in ALL {
            for (_, metric, text) in v.columns {
                assert_eq!(help(&format!("{}{metric}", v.prefix)), Some(*text));
            }
        }
    }

    #[test]
    fn a_checkpoint_shows_as_its_counters_rising() {
        let row = |name: &str, value: f64| ObservationRow { t: 0, source: "s".into(), name: name.into(), value };
        let second = |n: f64, buffers: f64, write: f64| {
            vec![
                row("pg_stat_bgwriter_checkpoints_timed_total", n),
                row("pg_stat_bgwriter_checkpoints_req_total", 0.0),
                row("pg_stat_bgwriter_buffers_checkpoint_total", buffers),
                row("pg_stat_bgwriter_checkpoint_write_time_total", write),
                row("pg_stat_bgwriter_checkpoint_sync_time_total", 0.0),
            ]
        };
        let mut c = Counters::default();
        assert!(c.checkpoint(&second(1.0, 10.0, 100.0), 5, "a").is_none());
        assert!(c.checkpoint(&second(1.0, 10.0, 100.0), 6, "a").is_none());
        let e = c.checkpoint(&second(2.0, 510.0, 2600.0), 7, "a").unwrap();
        assert_eq!((e.at_ms, e.took_ms, e.kind.as_str(), e.label.as_str()), (4500, Some(2500), "checkpoint", "a"));
        assert!(e.detail.contains("wrote 500 buffers"), "{}", e.detail);
    }
}
