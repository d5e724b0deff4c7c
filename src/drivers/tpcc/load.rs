//! A TPC-C database readied: its nine tables created and populated in parallel
//! sessions by SQL the server runs (no data crosses from the client), keyed, vacuumed,
//! analysed and checkpointed, with the transactions' functions. On a throwaway cluster
//! the loaded database is a template each workload copies, so each starts from the same
//! state; a `dsn`'s database is loaded in place, and refused if it holds other tables.

use crate::drivers::client::Client;
use crate::drivers::loading;
use crate::drivers::postgres;
use crate::drivers::table_disks;
use crate::error::Result;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// The tables fathom creates: TPC-C's nine, and its record of the load.
pub const TABLES: [&str; 10] =
    ["warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock", "tpcc_load"];

/// The tables by their expected size per warehouse, largest first (stock's 100,000 rows
/// of about 300 bytes, then customer's 30,000 of 650 and order_line's 300,000 of 55),
/// as [`crate::drivers::table_disks`] deals them over the table disks.
pub const BY_SIZE: [&str; 10] =
    ["stock", "customer", "order_line", "item", "history", "orders", "new_order", "district", "warehouse", "tpcc_load"];

/// The schema, the functions the load calls, and the transactions', in order.
const SCHEMA: &str = include_str!("sql/schema.sql");
const RANDOM: &str = include_str!("sql/random.sql");
const LOAD: &str = include_str!("sql/load.sql");
const KEYS: &str = include_str!("sql/keys.sql");
const TRANSACTIONS: [&str; 6] = [
    include_str!("sql/customer.sql"),
    include_str!("sql/new_order.sql"),
    include_str!("sql/payment.sql"),
    include_str!("sql/order_status.sql"),
    include_str!("sql/delivery.sql"),
    include_str!("sql/stock_level.sql"),
];

/// What a load took: its seconds and the database's bytes per warehouse.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Loaded {
    pub warehouses: u32,
    pub seconds: f64,
    pub bytes_per_warehouse: f64,
    /// The NURand constant the customers' last names were drawn with (clause 2.1.6).
    pub c_last: u32,
    /// Whether the tables were there already (`reuse`).
    pub reused: bool,
}

/// The load's statements (`call` runs each of the server's load routines: `SELECT`,
/// `CALL`), each with the rows it inserts (clause 4.3.3.1), which meter the load: the
/// items, then each warehouse's stock and its districts, customers, history and orders.
pub fn jobs(warehouses: u32, c_last: u32, call: &str) -> Vec<(String, u64)> {
    // a warehouse's: 10 districts, 30,000 customers and history rows, 30,000 orders with
    // 10 lines on average, 9,000 new orders
    const ITEMS: u64 = 100_000;
    const STOCK: u64 = 100_000;
    const WAREHOUSE: u64 = 10 + 30_000 * 2 + 30_000 * 11 + 9_000;
    let mut jobs = vec![(format!("{call} tpcc_load_items()"), ITEMS)];
    for w in 1..=warehouses {
        jobs.push((format!("{call} tpcc_load_stock({w})"), STOCK));
        jobs.push((format!("{call} tpcc_load_warehouse({w}, {c_last})"), WAREHOUSE));
    }
    jobs
}

/// The warehouses and last-name constant of a database fathom loaded, if it is one.
fn loaded_at(dsn: &str, stop: &AtomicBool) -> Option<(u32, u32)> {
    let sql = "SELECT warehouses || ' ' || c_last FROM tpcc_load";
    let row = postgres::ask(dsn, sql, "reading the record of an earlier load", stop).ok()?;
    let mut f = row.split_whitespace().map(|v| v.parse().ok());
    Some((f.next()??, f.next()??))
}

/// Loads `warehouses` into `db` (empty of other tables), its tables over its
/// tablespaces, in `sessions` parallel sessions; with `reuse`, a database loaded at as
/// many warehouses is kept. `progress` hears each stage.
pub fn load(
    db: &postgres::Database,
    warehouses: u32,
    reuse: bool,
    sessions: u32,
    stop: &AtomicBool,
    progress: &dyn Fn(&str),
) -> Result<Loaded> {
    let (dsn, users) = (db.dsn, db.users);
    let started = Instant::now();
    if let Some((at, c_last)) = loaded_at(dsn, stop).filter(|(at, _)| reuse && *at == warehouses) {
        progress(&format!("reusing the TPC-C database of {}", crate::metrics::format::counted(at, "warehouse")));
        let bytes = postgres::database_size(&mut postgres::session(dsn)?, stop)?;
        let per = bytes / at as f64;
        return Ok(Loaded { warehouses, seconds: 0.0, bytes_per_warehouse: per, c_last, reused: true });
    }
    let mut c = postgres::session(dsn)?;
    c.run(&drop_ours(), stop)?;
    // the load's constant for C_LAST; the run's differs from it as clause 2.1.6.1 asks
    let c_last = (std::process::id() ^ started.elapsed().subsec_nanos()) % 256;
    let fill = || fill(&mut c, db, (warehouses, c_last), sessions, stop, progress);
    postgres::filled_or_dropped(dsn, users, &drop_ours(), fill)?;
    let per = postgres::database_size(&mut c, stop)? / warehouses as f64;
    Ok(Loaded { warehouses, seconds: started.elapsed().as_secs_f64(), bytes_per_warehouse: per, c_last, reused: false })
}

/// What drops fathom's tables and functions from a database, if there.
fn drop_ours() -> String {
    let tables: Vec<String> = TABLES.iter().map(|t| format!("DROP TABLE IF EXISTS {t};")).collect();
    let functions = "DROP FUNCTION IF EXISTS tpcc_nurand, tpcc_last_name, tpcc_hex13, tpcc_hex52, tpcc_astring, \
         tpcc_nstring, tpcc_original, tpcc_other, tpcc_load_items, tpcc_load_stock, tpcc_load_warehouse, tpcc_customer, tpcc_new_order, \
         tpcc_payment, tpcc_order_status, tpcc_delivery, tpcc_stock_level;";
    format!("{}\n{functions}", tables.join("\n"))
}

/// Creates and fills the tables of `warehouses` through `c` (on `db`, over its
/// tablespaces) and `sessions` parallel sessions, the customers' last names drawn with
/// constant `c_last`; keys, vacuums, analyses and checkpoints them.
fn fill(
    c: &mut Client,
    db: &postgres::Database,
    (warehouses, c_last): (u32, u32),
    sessions: u32,
    stop: &AtomicBool,
    progress: &dyn Fn(&str),
) -> Result<()> {
    let (dsn, spaces) = (db.dsn, &db.tablespaces);
    c.run(&[&table_disks::postgres(SCHEMA, &BY_SIZE, spaces), RANDOM, LOAD].concat(), stop)?;
    c.run(&TRANSACTIONS.concat(), stop)?;
    progress(&format!(
        "loading {} in {}",
        crate::metrics::format::counted(warehouses, "TPC-C warehouse"),
        crate::metrics::format::counted(sessions as u64, "session")
    ));
    let jobs = jobs(warehouses, c_last, "SELECT");
    loading::metered("loading", &jobs, sessions, stop, progress, || postgres::session(dsn))?;
    progress("adding the keys and indexes, then VACUUM ANALYZE and CHECKPOINT");
    let keys = table_disks::postgres(KEYS, &BY_SIZE, spaces);
    loading::metered("indexing", &loading::lines_of(&keys), sessions, stop, progress, || postgres::session(dsn))?;
    c.run(&format!("INSERT INTO tpcc_load VALUES ({warehouses}, {c_last})"), stop)?;
    // each table's in parallel, largest first, as its load was: the visibility map and hint
    // bits set now, and the statistics taken, spare the workloads' first transactions
    let vacuums: Vec<(String, u64)> = BY_SIZE.iter().map(|t| (format!("VACUUM ANALYZE {t}"), 1)).collect();
    loading::metered("vacuuming", &vacuums, sessions, stop, progress, || postgres::session(dsn))?;
    postgres::checkpoint(c, stop, progress)?;
    Ok(())
}
