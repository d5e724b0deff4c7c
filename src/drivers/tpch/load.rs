//! A TPC-H database readied: its eight tables' rows generated at the scale factor by
//! the `tpchgen` crate (the DataFusion community's generator, which reproduces dbgen's
//! rows) and piped as CSV into `COPY ... FROM STDIN`, several parts of the large tables
//! at once; then the primary keys, the foreign keys' indexes and the foreign keys,
//! `VACUUM ANALYZE` and a checkpoint. On a throwaway cluster the database is loaded once
//! per scale and kept as a template; a `dsn`'s is loaded in place, and refused if it
//! holds other tables.

use crate::drivers::client::Client;
use crate::drivers::loading;
use crate::drivers::postgres;
use crate::drivers::table_disks;
use crate::error::{Error, Result};
use crate::terminal::Meter;
use std::fmt::Display;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use tpchgen::csv::{CustomerCsv, LineItemCsv, NationCsv, OrderCsv, PartCsv, PartSuppCsv, RegionCsv, SupplierCsv};
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator, PartSuppGenerator,
    RegionGenerator, SupplierGenerator,
};

/// The tables fathom creates: TPC-H's eight, and its record of the load.
pub const TABLES: [&str; 9] =
    ["region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem", "tpch_load"];

/// The tables by their size at any scale, largest first (lineitem's 6 million rows per
/// scale unit, orders' 1.5 million, partsupp's 800,000), as
/// [`crate::drivers::table_disks`] deals them over the table disks.
const BY_SIZE: [&str; 9] =
    ["lineitem", "orders", "partsupp", "part", "customer", "supplier", "nation", "region", "tpch_load"];

const SCHEMA: &str = include_str!("sql/schema.sql");
const KEYS: &str = include_str!("sql/keys.sql");
const FOREIGN: &str = include_str!("sql/foreign.sql");

/// What a load took: its seconds and the database's bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Loaded {
    pub scale: f64,
    pub seconds: f64,
    pub bytes: f64,
    /// Whether the tables were there already (`reuse`).
    pub reused: bool,
}

/// The scale factor of a database fathom loaded, if it is one.
fn loaded_at(dsn: &str, stop: &AtomicBool) -> Option<f64> {
    let sql = "SELECT scale FROM tpch_load";
    postgres::ask(dsn, sql, "reading the record of an earlier load", stop).ok()?.parse().ok()
}

/// One COPY: part `part` of `parts` of `table`'s rows.
struct Job {
    table: &'static str,
    part: i32,
    parts: i32,
}

/// Loads scale factor `scale` into `db` (empty of other tables), its tables over its
/// tablespaces, in `sessions` parallel sessions; with `reuse`, a database loaded at
/// this scale is kept. `progress` hears each stage.
pub fn load(
    db: &postgres::Database,
    scale: f64,
    reuse: bool,
    sessions: u32,
    stop: &AtomicBool,
    progress: &dyn Fn(&str),
) -> Result<Loaded> {
    let (dsn, users) = (db.dsn, db.users);
    let started = Instant::now();
    if reuse && loaded_at(dsn, stop) == Some(scale) {
        progress(&format!("reusing the TPC-H database of scale {scale}"));
        let bytes = postgres::database_size(&mut postgres::session(dsn)?, stop)?;
        return Ok(Loaded { scale, seconds: 0.0, bytes, reused: true });
    }
    let drop: Vec<String> = TABLES.iter().map(|t| format!("DROP TABLE IF EXISTS {t} CASCADE;")).collect();
    let drop = drop.join("\n");
    let mut c = postgres::session(dsn)?;
    c.run(&drop, stop)?;
    postgres::filled_or_dropped(dsn, users, &drop, || fill(&mut c, db, scale, sessions, stop, progress))?;
    let bytes = postgres::database_size(&mut c, stop)?;
    Ok(Loaded { scale, seconds: started.elapsed().as_secs_f64(), bytes, reused: false })
}

/// Creates TPC-H's tables through `c` (on `db`, over its tablespaces) and fills them at
/// `scale` in `sessions` parallel sessions; keys, vacuums, analyses and checkpoints them.
fn fill(
    c: &mut Client,
    db: &postgres::Database,
    scale: f64,
    sessions: u32,
    stop: &AtomicBool,
    progress: &dyn Fn(&str),
) -> Result<()> {
    let (dsn, spaces) = (db.dsn, &db.tablespaces);
    c.run(&table_disks::postgres(SCHEMA, &BY_SIZE, spaces), stop)?;
    progress(&format!("generating and loading TPC-H's tables at scale {scale} in {sessions} sessions"));
    text_pool(stop)?;
    // the large tables in parts, largest first, so that the sessions end together
    let parts = sessions.max(1) as i32;
    let mut jobs = Vec::new();
    for (table, parts) in [("lineitem", parts), ("orders", parts), ("partsupp", parts), ("part", parts)] {
        jobs.extend((1..=parts).map(|part| Job { table, part, parts }));
    }
    for table in ["customer", "supplier", "nation", "region"] {
        jobs.push(Job { table, part: 1, parts: 1 });
    }
    let meter = Meter::new("loading", TABLE_ROWS.iter().map(|(_, rows)| rows_at(*rows, scale)).sum());
    // each COPY streams its rows into a psql of its own (`copy_in`): its input is the rows
    loading::parallel(
        &jobs,
        sessions,
        stop,
        &|| meter.tick(progress),
        || Ok(()),
        |(), job| {
            let sql = format!("COPY {} FROM STDIN WITH (FORMAT csv)", job.table);
            postgres::copy_in(dsn, &sql, stop, |out| generate(job, scale, out, &meter, stop))
                .map_err(|e| Error::failed(format!("loading {}: {e}", job.table)))
        },
    )?;
    drop(meter);
    progress("adding the keys and indexes, then VACUUM ANALYZE and CHECKPOINT");
    for stage in [table_disks::postgres(KEYS, &BY_SIZE, spaces), FOREIGN.to_string()] {
        let jobs = loading::lines_of(&stage);
        loading::metered("indexing", &jobs, sessions, stop, progress, || postgres::session(dsn))?;
    }
    c.run(&format!("INSERT INTO tpch_load VALUES ({scale})"), stop)?;
    c.run("VACUUM ANALYZE", stop)?;
    postgres::checkpoint(c, stop, progress)
}

/// Builds tpchgen's text pool (300 MB of text every comment column draws from, built once
/// on first use): seconds of CPU no `stop` reaches inside the crate, so it is built on a
/// thread of its own, and a stop meanwhile ends the load at once, leaving it behind.
fn text_pool(stop: &AtomicBool) -> Result<()> {
    let (built, done) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        tpchgen::text::TextPool::get_or_init_default();
        let _ = built.send(());
    });
    loop {
        match done.recv_timeout(std::time::Duration::from_millis(50)) {
            Ok(()) => return Ok(()),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if !stop.load(Ordering::Relaxed) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                return Err(Error::failed(crate::drivers::client::INTERRUPTED));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Error::failed("generating TPC-H's text pool failed"));
            }
        }
    }
}

/// Each table's rows at scale 1 (the specification's clause 4.2.5: lineitem's about),
/// which meter the load; nation's and region's do not scale.
const TABLE_ROWS: [(&str, f64); 8] = [
    ("lineitem", 6_000_000.0),
    ("orders", 1_500_000.0),
    ("partsupp", 800_000.0),
    ("part", 200_000.0),
    ("customer", 150_000.0),
    ("supplier", 10_000.0),
    ("nation", -25.0),
    ("region", -5.0),
];

/// A table's rows at `scale`, from [`TABLE_ROWS`] (negative: as many at any scale).
fn rows_at(rows: f64, scale: f64) -> u64 {
    if rows < 0.0 { -rows as u64 } else { (rows * scale) as u64 }
}

/// Writes `job`'s rows as CSV to `out`, counted on `meter`, checking `stop` every few
/// thousand rows.
fn generate(job: &Job, scale: f64, out: &mut dyn Write, meter: &Meter, stop: &AtomicBool) -> Result<()> {
    let mut to = Rows { out, meter, stop };
    let (sf, part, parts) = (scale, job.part, job.parts);
    match job.table {
        "lineitem" => to.write(LineItemGenerator::new(sf, part, parts).iter().map(LineItemCsv::new)),
        "orders" => to.write(OrderGenerator::new(sf, part, parts).iter().map(OrderCsv::new)),
        "partsupp" => to.write(PartSuppGenerator::new(sf, part, parts).iter().map(PartSuppCsv::new)),
        "part" => to.write(PartGenerator::new(sf, part, parts).iter().map(PartCsv::new)),
        "customer" => to.write(CustomerGenerator::new(sf, part, parts).iter().map(CustomerCsv::new)),
        "supplier" => to.write(SupplierGenerator::new(sf, part, parts).iter().map(SupplierCsv::new)),
        "nation" => to.write(NationGenerator::new(sf, part, parts).iter().map(NationCsv::new)),
        "region" => to.write(RegionGenerator::new(sf, part, parts).iter().map(RegionCsv::new)),
        other => Err(Error::failed(format!("no generator for table {other}"))),
    }
}

/// Where a table's rows go: a COPY's input, counted on the load's meter, until `stop`.
struct Rows<'a> {
    out: &'a mut dyn Write,
    meter: &'a Meter,
    stop: &'a AtomicBool,
}

impl Rows<'_> {
    /// Writes each row on a line of its own.
    fn write(&mut self, rows: impl Iterator<Item = impl Display>) -> Result<()> {
        const BATCH: usize = 4096;
        let mut unmetered = 0;
        for row in rows {
            if unmetered == BATCH {
                if self.stop.load(Ordering::Relaxed) {
                    return Err(Error::failed(crate::drivers::client::INTERRUPTED));
                }
                self.meter.add(BATCH as u64);
                unmetered = 0;
            }
            writeln!(self.out, "{row}").map_err(|e| Error::failed(format!("writing to psql: {e}")))?;
            unmetered += 1;
        }
        self.meter.add(unmetered as u64);
        Ok(())
    }
}
