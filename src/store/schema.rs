//! The store's tables. `user_version` records the schema version so later versions of
//! fathom can migrate old stores instead of refusing them.

use crate::error::{Error, Result};
use rusqlite::Connection;

/// 2 added `io_sizes` and `verify`, 3 `phases`, `events` and `expectations`, 4
/// `observations`, 5 `processes`; an older store gains the tables when opened.
const VERSION: i64 = 5;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id                 INTEGER PRIMARY KEY,
    scenario           TEXT NOT NULL,
    scenario_text      TEXT NOT NULL,
    command            TEXT NOT NULL,
    started_unix_ms    INTEGER NOT NULL,
    clock_start_unix_ms INTEGER,          -- wall-clock instant of second 0 of the run clock
    ended_unix_ms      INTEGER,
    status             TEXT NOT NULL,     -- running | completed | aborted | failed
    environment        TEXT NOT NULL,     -- JSON: version, kernel, CPU, memory, targets
    error              TEXT
);
CREATE TABLE IF NOT EXISTS workloads (
    run_id     INTEGER NOT NULL REFERENCES runs(id),
    idx        INTEGER NOT NULL,          -- position in the scenario
    name       TEXT NOT NULL,
    phase      TEXT NOT NULL,
    profile    TEXT NOT NULL,             -- JSON: the resolved settings
    data_path  TEXT NOT NULL,
    engine     TEXT NOT NULL,             -- the engine actually used
    workers    INTEGER NOT NULL,
    start_t    INTEGER NOT NULL,          -- seconds on the run clock
    measure_t  INTEGER NOT NULL,          -- start_t + ramp
    end_t      INTEGER NOT NULL,
    stopped_at REAL,
    rate_iops  REAL,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE IF NOT EXISTS workers (
    run_id       INTEGER NOT NULL,
    id           INTEGER NOT NULL,
    workload_idx INTEGER NOT NULL,
    idx          INTEGER NOT NULL,        -- position within its workload
    host         TEXT NOT NULL,
    PRIMARY KEY (run_id, id)
);
-- One row per worker, op and second: counters only (histograms are per workload).
CREATE TABLE IF NOT EXISTS samples (
    run_id         INTEGER NOT NULL,
    worker         INTEGER NOT NULL,
    t              INTEGER NOT NULL,
    op             INTEGER NOT NULL,      -- 0 read, 1 write, 2 sync, 3 txn, 4 send, 5 recv
    workload_idx   INTEGER NOT NULL,
    ops            INTEGER NOT NULL,
    bytes          INTEGER NOT NULL,
    latency_sum_ns INTEGER NOT NULL,
    -- keyed for the common query: one workload over a window of seconds
    PRIMARY KEY (run_id, workload_idx, t, worker, op)
) WITHOUT ROWID;
-- One HDR histogram (V2 + deflate) per workload, op, second and kind (0 latency, 1 service time).
CREATE TABLE IF NOT EXISTS histograms (
    run_id       INTEGER NOT NULL,
    workload_idx INTEGER NOT NULL,
    t            INTEGER NOT NULL,
    op           INTEGER NOT NULL,
    kind         INTEGER NOT NULL,
    hist         BLOB NOT NULL,
    PRIMARY KEY (run_id, workload_idx, t, op, kind)
) WITHOUT ROWID;
-- IOs per block size, per workload, op and second; written only for workloads with
-- more than one block size (one size is bytes / ops).
CREATE TABLE IF NOT EXISTS io_sizes (
    run_id       INTEGER NOT NULL,
    workload_idx INTEGER NOT NULL,
    t            INTEGER NOT NULL,
    op           INTEGER NOT NULL,
    size         INTEGER NOT NULL,
    ops          INTEGER NOT NULL,
    PRIMARY KEY (run_id, workload_idx, t, op, size)
) WITHOUT ROWID;
-- Reads checked against their crc header, per workload and second; written only for
-- workloads with `crc`.
CREATE TABLE IF NOT EXISTS verify (
    run_id       INTEGER NOT NULL,
    workload_idx INTEGER NOT NULL,
    t            INTEGER NOT NULL,
    good         INTEGER NOT NULL,
    misplaced    INTEGER NOT NULL,
    corrupt      INTEGER NOT NULL,
    PRIMARY KEY (run_id, workload_idx, t)
) WITHOUT ROWID;
-- Stretches of the run during which the same workloads run (with the same number of
-- workers): each timeline step that changes what runs opens one. Seconds of the run
-- clock, [start_t, end_t); end_t is NULL while open or if the run was cut short.
CREATE TABLE IF NOT EXISTS phases (
    run_id   INTEGER NOT NULL,
    idx      INTEGER NOT NULL,
    label    TEXT NOT NULL,
    start_t  INTEGER NOT NULL,
    end_t    INTEGER,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
-- What the timeline did besides running workloads: exec, wait_until, prefill, zero,
-- mark. at_ms on the run clock; status: the exit status of a command, 0 for a probe
-- that succeeded, NULL for a mark; took_ms how long it lasted (a recovery time).
CREATE TABLE IF NOT EXISTS events (
    run_id   INTEGER NOT NULL,
    idx      INTEGER NOT NULL,
    at_ms    INTEGER NOT NULL,
    kind     TEXT NOT NULL,
    label    TEXT NOT NULL,
    status   INTEGER,
    took_ms  INTEGER,
    detail   TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
-- The scenario's expectations as checked at the end of the run.
CREATE TABLE IF NOT EXISTS expectations (
    run_id    INTEGER NOT NULL,
    idx       INTEGER NOT NULL,
    text      TEXT NOT NULL,
    measured  REAL,
    passed    INTEGER NOT NULL,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS observations (
    run_id  INTEGER NOT NULL,
    t       INTEGER NOT NULL,          -- second of the run clock
    source  TEXT NOT NULL,             -- host, fathom, device:NAME, prometheus
    name    TEXT NOT NULL,
    value   REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS observations_by_run ON observations (run_id, source, name, t);
-- The processes a run has running, while they run: its fathom (what = 'fathom') and
-- each program it started, leading a process group of its own. A run left `running`
-- whose fathom is gone has its leftovers stopped by the next `fathom run`.
CREATE TABLE IF NOT EXISTS processes (
    run_id   INTEGER NOT NULL,
    pid      INTEGER NOT NULL,
    pgid     INTEGER NOT NULL,         -- the process group killed as a whole
    identity TEXT NOT NULL,            -- HOST/BOOT/START: a recycled pid differs
    what     TEXT NOT NULL,            -- fathom, postgres, pgbench, iperf3, fio, exec...
    PRIMARY KEY (run_id, pid)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS warnings (
    id      INTEGER PRIMARY KEY,
    run_id  INTEGER NOT NULL,
    code    TEXT NOT NULL,
    message TEXT NOT NULL
);
";

pub fn prepare(conn: &Connection) -> Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    // WAL: the sample writer and the run's own bookkeeping write from two connections.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version > VERSION {
        return Err(Error::input(format!(
            "the results store was written by a newer fathom (schema {version}, this one knows {VERSION})"
        )));
    }
    conn.execute_batch(SCHEMA)?;
    conn.pragma_update(None, "user_version", VERSION)?;
    Ok(())
}
