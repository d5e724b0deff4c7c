//! Watching a run while it goes: what the store and the Prometheus endpoint hold before
//! the run (or one of its programs) has ended.

use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::time::Duration;

/// Calls `look` every 300 ms while `child` runs; what it saw each time, and how the
/// child ended.
pub fn watch<T>(child: &mut Child, mut look: impl FnMut() -> T) -> (Vec<T>, ExitStatus) {
    let mut seen = Vec::new();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (seen, status);
        }
        seen.push(look());
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// One figure read from the store of a running run: None until the store exists, or
/// while its writer holds it.
pub fn stored(results: &Path, sql: &str) -> Option<i64> {
    let db = Connection::open_with_flags(results.join("fathom.db"), OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
    db.query_row(sql, [], |r| r.get(0)).ok()
}

/// The sum of a metric's series whose labels hold `label` in an endpoint's text.
pub fn scraped(text: &str, metric: &str, label: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")) && l.contains(label))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}
