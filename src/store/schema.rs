//! The store's tables, and what opening a store checks before anything is written to
//! it. `user_version` records the schema version so later versions of fathom can
//! migrate old stores instead of refusing them; `application_id` marks the file as
//! fathom's, so a foreign SQLite file that happens to be called `fathom.db` is never
//! touched.

use crate::error::{Error, Result};
use rusqlite::{Connection, ErrorCode, TransactionBehavior};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// 2 added `io_sizes` and `verify`, 3 `phases`, `events` and `expectations`, 4
/// `observations`, 5 `processes`, 6 `phase_workloads`, 7 `host_histograms` and
/// `expectations.reference`, 8 `runs.time_scale`, 9 `runs.resolved_text` and `runs.vars`,
/// 10 `ops`, 11 `expectations.noise` and `expectations.beyond_noise`, 12 `leftovers`,
/// 13 `runs.repeat_group`; an older store gains the tables and columns when opened.
const VERSION: i64 = 13;

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
    error              TEXT,
    time_scale         REAL,              -- --time-scale: the timeline's durations were multiplied by it
    resolved_text      TEXT,              -- the scenario as read after its variables and --set: what the read side reads
    vars               TEXT,              -- JSON: the variables' values the run used
    repeat_group       INTEGER            -- `run --repeat`: the id of the group's first run
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
-- The ops a run named beyond the six every store shares (0 read, 1 write, 2 sync, 3 txn,
-- 4 send, 5 recv): a program's own, such as its transaction types. Their codes in
-- samples, histograms, host_histograms and io_sizes mean these names in this run only.
CREATE TABLE IF NOT EXISTS ops (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    op     INTEGER NOT NULL,
    name   TEXT NOT NULL,
    unit   TEXT NOT NULL,                 -- iops | tps | gbit_per_s
    PRIMARY KEY (run_id, op)
);
CREATE TABLE IF NOT EXISTS histograms (
    run_id       INTEGER NOT NULL,
    workload_idx INTEGER NOT NULL,
    t            INTEGER NOT NULL,
    op           INTEGER NOT NULL,
    kind         INTEGER NOT NULL,
    hist         BLOB NOT NULL,
    PRIMARY KEY (run_id, workload_idx, t, op, kind)
) WITHOUT ROWID;
-- The latency histograms of a workload placed on other hosts, per host as well: a
-- host's own percentiles (those of `histograms` are every host's merged). Same encoding.
CREATE TABLE IF NOT EXISTS host_histograms (
    run_id       INTEGER NOT NULL,
    workload_idx INTEGER NOT NULL,
    host         TEXT NOT NULL,
    t            INTEGER NOT NULL,
    op           INTEGER NOT NULL,
    hist         BLOB NOT NULL,
    PRIMARY KEY (run_id, workload_idx, host, t, op)
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
-- What ran in each phase: its workloads and how many of their workers (a ramp's
-- phases differ in workers), as the timeline saw them when it opened the phase.
CREATE TABLE IF NOT EXISTS phase_workloads (
    run_id       INTEGER NOT NULL,
    phase_idx    INTEGER NOT NULL,
    workload_idx INTEGER NOT NULL,
    workers      INTEGER NOT NULL,
    PRIMARY KEY (run_id, phase_idx, workload_idx)
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
    reference REAL,                    -- a relative expectation's figure to compare with
    passed    INTEGER NOT NULL,
    noise     REAL,                    -- `beyond noise`: the difference to exceed, in the metric's unit
    beyond_noise INTEGER,              -- `beyond noise`: whether the difference exceeded it
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
-- The directories a run makes and removes at its end (a throwaway cluster's), while
-- they exist: those of a run whose fathom is gone are removed by the next `fathom run`.
CREATE TABLE IF NOT EXISTS leftovers (
    run_id INTEGER NOT NULL,
    path   TEXT NOT NULL,
    PRIMARY KEY (run_id, path)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS warnings (
    id      INTEGER PRIMARY KEY,
    run_id  INTEGER NOT NULL,
    code    TEXT NOT NULL,
    message TEXT NOT NULL
);
";

/// Columns added to a table after it first existed: `CREATE TABLE IF NOT EXISTS` leaves
/// an older store's table as it was, so these are added to it on opening.
const ADDED_COLUMNS: [(&str, &str, &str); 7] = [
    ("expectations", "reference", "REAL"),
    ("expectations", "noise", "REAL"),
    ("expectations", "beyond_noise", "INTEGER"),
    ("runs", "time_scale", "REAL"),
    ("runs", "resolved_text", "TEXT"),
    ("runs", "vars", "TEXT"),
    ("runs", "repeat_group", "INTEGER"),
];

/// fathom's mark on its stores, SQLite's `PRAGMA application_id`: "fath" in ASCII.
const APPLICATION_ID: i64 = 0x6661_7468;

/// The last schema written without [`APPLICATION_ID`]: a store with fathom's `runs`
/// table and a `user_version` from 1 to this is fathom's too, and gets stamped.
const LAST_UNSTAMPED: i64 = 4;

/// How long a connection waits for another one's lock (runs sharing a store, a
/// report reading it) before it gives up with "database is locked".
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// What a file named `fathom.db` turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// Empty: a store about to be created.
    New,
    /// fathom's, at this schema version (stamped or not).
    Store { version: i64, stamped: bool },
}

/// Says what `path` is without writing to it; anything but an empty file or a fathom
/// store of a version this fathom knows is refused (exit 2).
fn identify(conn: &Connection, path: &Path) -> Result<Found> {
    let not_ours = |why: String| {
        Error::input(format!(
            "{}: not a fathom results store ({why}): fathom writes nothing to it; move it away or pass --results DIR",
            path.display()
        ))
    };
    let header = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => not_ours("not an SQLite database".into()),
        Some(ErrorCode::DatabaseCorrupt) => damaged(path, &e.to_string()),
        _ => Error::failed(format!("results store {}: {e}", path.display())),
    };
    // one snapshot: a run creating the store meanwhile is seen before or after, whole
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Deferred)?;
    let app: i64 = tx.pragma_query_value(None, "application_id", |r| r.get(0)).map_err(header)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(header)?;
    let tables: i64 = tx.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0)).map_err(header)?;
    let has_runs: bool = tx
        .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'", [], |r| r.get(0))
        .map_err(header)?;
    tx.finish()?;
    let found = match app {
        APPLICATION_ID => Found::Store { version, stamped: true },
        0 if tables == 0 && version == 0 => Found::New,
        0 if has_runs && (1..=LAST_UNSTAMPED).contains(&version) => Found::Store { version, stamped: false },
        _ => return Err(not_ours(format!("application_id {app:#x}, user_version {version}, {tables} schema objects"))),
    };
    if let Found::Store { version, .. } = found
        && version > VERSION
    {
        return Err(Error::input(format!(
            "{}: the results store was written by a newer fathom (schema {version}, this one knows {VERSION})",
            path.display()
        )));
    }
    Ok(found)
}

fn damaged(path: &Path, what: &str) -> Error {
    Error::input(format!(
        "{}: the results store is damaged ({what}): fathom will not add runs to it. {}",
        path.display(),
        recover(path)
    ))
}

/// SQLite's reason a store at `path` could not be opened, with the system's when it is
/// the directory that refuses the file (read-only, immutable, not ours): SQLite says only
/// "unable to open database file".
fn why(path: &Path, e: &rusqlite::Error) -> String {
    let Some(dir) = path.parent().filter(|_| e.sqlite_error_code() == Some(rusqlite::ErrorCode::CannotOpen)) else {
        return e.to_string();
    };
    let probe = dir.join(format!(".fathom-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            e.to_string()
        }
        Err(os) => format!("{e}: its directory {} refuses new files ({os})", dir.display()),
    }
}

/// What to do with the damaged store at `path`.
pub fn recover(path: &Path) -> String {
    format!("Read what it can with `sqlite3 {} .recover`, and pass --results DIR for a new store", path.display())
}

/// Stores that passed `PRAGMA quick_check` in this process: a run opens its store
/// several times (the collector, observers, drivers), and the check reads the whole
/// file, so it is done once.
static CHECKED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// Refuses a store whose pages do not hold together (garbage written into it).
fn check_health(conn: &Connection, path: &Path) -> Result<()> {
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if CHECKED.lock().unwrap_or_else(|e| e.into_inner()).contains(&key) {
        return Ok(());
    }
    let problems: Vec<String> = conn
        .prepare("PRAGMA quick_check(3)")
        .and_then(|mut stmt| stmt.query_map([], |r| r.get(0))?.collect())
        .map_err(|e| damaged(path, &e.to_string()))?;
    if problems != ["ok"] {
        return Err(damaged(path, &problems.join("; ")));
    }
    CHECKED.lock().unwrap_or_else(|e| e.into_inner()).insert(key);
    Ok(())
}

/// Opens `path` to add runs to it, creating the store if the file is new or empty.
/// Nothing is written before the file is known to be a healthy fathom store; the
/// schema is created or upgraded in one `BEGIN IMMEDIATE` transaction, so runs that
/// create a store at the same time see it whole or not at all.
pub fn open_for_writing(path: &Path) -> Result<Connection> {
    // asked read-only: a connection that may write changes a file even by reading it
    // (the last one to close merges a WAL file into its database)
    let found = if path.exists() {
        let (conn, found) = read_only(path)?;
        if found != Found::New {
            check_health(&conn, path)?;
        }
        found
    } else {
        Found::New
    };
    let conn = Connection::open(path)
        .map_err(|e| Error::input(format!("results store {}: {}", path.display(), why(path, &e))))?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    if conn.is_readonly(rusqlite::MAIN_DB)? {
        return Err(Error::input(format!(
            "{}: the results store is read-only: `fathom runs`, `show`, `report` and the other read commands \
             can read it, but a run cannot be added to it; pass --results DIR for another store",
            path.display()
        )));
    }
    wal(&conn, path)?;
    // per connection: a commit waits for the disk only at checkpoints (safe in WAL mode)
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    if found != (Found::Store { version: VERSION, stamped: true }) {
        let tx = rusqlite::Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)?;
        // another run may have created or upgraded it meanwhile: these are idempotent
        tx.execute_batch(SCHEMA)?;
        for (table, column, kind) in ADDED_COLUMNS {
            let has: bool =
                tx.query_row("SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2", [table, column], |r| {
                    r.get(0)
                })?;
            if !has {
                tx.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}"))?;
            }
        }
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.pragma_update(None, "user_version", VERSION)?;
        tx.commit()?;
    }
    Ok(conn)
}

/// Puts the store in WAL mode (the sample writer and the run's own bookkeeping write
/// from two connections while readers read). Changing the mode needs the file to
/// itself and SQLite does not wait for that (no busy handler): two runs creating a
/// store together failed with "database is locked". Retried here instead.
fn wal(conn: &Connection, path: &Path) -> Result<()> {
    let started = Instant::now();
    loop {
        let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0))?;
        if mode.eq_ignore_ascii_case("wal") {
            return Ok(());
        }
        match conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0)) {
            Ok(_) => return Ok(()),
            Err(e) if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy) && started.elapsed() < BUSY_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(Error::failed(format!("results store {}: {e}", path.display()))),
        }
    }
}

/// Opens `path` read-only for the read commands: a read-only file or mount, or a full
/// disk, does not stop them. A store older than this fathom is upgraded first if it
/// can be written; if it cannot, that is said.
pub fn open_for_reading(path: &Path) -> Result<Connection> {
    match read_only(path)? {
        (_, Found::New) => Err(Error::input(format!(
            "{}: the results store is empty (run `fathom run` first, or pass --results DIR)",
            path.display()
        ))),
        (_, Found::Store { version, .. }) if version < VERSION => {
            open_for_writing(path).map_err(|e| {
                Error::input(format!(
                    "{}: the results store has schema {version} and this fathom reads schema {VERSION}: it needs an \
                     upgrade, which failed ({e}). A read-only store cannot be upgraded: make it writable once, or \
                     read it with the fathom that wrote it",
                    path.display()
                ))
            })?;
            Ok(read_only(path)?.0)
        }
        (conn, _) => Ok(conn),
    }
}

/// A read-only connection and what the file is. A store in WAL mode is read through
/// its `-shm` file, which cannot be made in a read-only directory or on a full disk:
/// there a store closed cleanly (its `-wal` empty or gone) is read as immutable.
fn read_only(path: &Path) -> Result<(Connection, Found)> {
    use rusqlite::OpenFlags;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    let open = |uri: &str| -> Result<Connection> {
        let conn = Connection::open_with_flags(uri, flags)
            .map_err(|e| Error::input(format!("results store {}: {e}", path.display())))?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        Ok(conn)
    };
    let uri = file_uri(path);
    let mut conn = open(&uri)?;
    if let Err(e) = conn.pragma_query_value(None, "schema_version", |r| r.get::<_, i64>(0))
        && matches!(e.sqlite_error_code(), Some(ErrorCode::CannotOpen | ErrorCode::SystemIoFailure))
    {
        let wal = std::fs::metadata(format!("{}-wal", path.display())).map(|m| m.len()).unwrap_or(0);
        if wal > 0 {
            return Err(Error::failed(format!(
                "results store {}: {e}; it has writes not yet merged (its -wal file) and SQLite cannot make its \
                 -shm file here (a read-only directory or a full disk): copy the directory somewhere writable",
                path.display()
            )));
        }
        conn = open(&format!("{uri}?immutable=1"))?;
    }
    let found = identify(&conn, path)?;
    Ok((conn, found))
}

/// `path` as an SQLite `file:` URI (bytes other than unreserved ones percent-encoded).
fn file_uri(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in abs.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_whose_path_has_uri_characters_opens_for_reading() {
        let dir = std::env::temp_dir().join(format!("fathom schema ?#%20 {}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("fathom.db");
        open_for_writing(&path)
            .unwrap()
            .execute_batch("INSERT INTO warnings (run_id, code, message) VALUES (1, 'c', 'm')")
            .unwrap();
        let conn = open_for_reading(&path).unwrap();
        let n: i64 = conn.query_row("SELECT count(*) FROM warnings", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 1);
        // the URI named that file, not another one made up of part of the path
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            assert!(name.starts_with("fathom.db"), "{name}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
