//! A throwaway cluster's log, read as it grows: each checkpoint (from "checkpoint
//! starting" to "checkpoint complete", with what it wrote and how long its write and
//! sync took) and each autovacuum or autoanalyze run is a timeline event. The cluster
//! logs with `log_line_prefix = '%n [%p] '`, a Unix timestamp in ms on every line, so
//! that an event is placed on the run clock to the millisecond whatever the time zone.

use crate::store::EventRow;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The log from where it ended when observing began.
pub struct LogTail {
    path: PathBuf,
    offset: u64,
    /// A line not yet ended.
    partial: String,
    parser: Parser,
}

impl LogTail {
    pub fn at_end(path: &Path) -> LogTail {
        let offset = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        LogTail { path: path.to_path_buf(), offset, partial: String::new(), parser: Parser::default() }
    }

    /// The events of what was logged since the last call, `at_ms` on the run clock that
    /// began at Unix ms `clock_unix_ms`, labelled `server`.
    pub fn events(&mut self, clock_unix_ms: i64, server: &str) -> Vec<EventRow> {
        let Ok(mut f) = std::fs::File::open(&self.path) else { return Vec::new() };
        let mut bytes = Vec::new();
        if f.seek(SeekFrom::Start(self.offset)).is_err() || f.read_to_end(&mut bytes).is_err() {
            return Vec::new();
        }
        self.offset += bytes.len() as u64;
        self.partial.push_str(&String::from_utf8_lossy(&bytes));
        let Some(end) = self.partial.rfind('\n') else { return Vec::new() };
        let done: String = self.partial.drain(..=end).collect();
        let mut events: Vec<EventRow> = done.lines().filter_map(|l| self.parser.line(l)).collect();
        for e in &mut events {
            e.at_ms -= clock_unix_ms;
            e.label = server.to_string();
        }
        events
    }
}

/// What the log's lines say, line by line; events come out in Unix ms, unlabelled.
#[derive(Debug, Default)]
struct Parser {
    /// The checkpoint begun: when, and why ("time", "immediate force wait", "wal").
    checkpoint: Option<(i64, String)>,
    /// An autovacuum message whose lines are being read: when it was logged (as the
    /// run ended), and what it did.
    vacuum: Option<(i64, String)>,
}

impl Parser {
    fn line(&mut self, line: &str) -> Option<EventRow> {
        if let Some(rest) = line.strip_prefix('\t') {
            return self.continued(rest);
        }
        let (ms, text) = stamped(line)?;
        let text = text.trim_start_matches(|c: char| c.is_ascii_uppercase()).trim_start_matches(':').trim();
        self.vacuum = None;
        if let Some(reason) = text.strip_prefix("checkpoint starting: ") {
            self.checkpoint = Some((ms, reason.trim().to_string()));
            return None;
        }
        if let Some(done) = text.strip_prefix("checkpoint complete: ") {
            return Some(checkpoint(self.checkpoint.take(), ms, done));
        }
        for (what, short) in [("automatic vacuum of table ", "vacuum"), ("automatic analyze of table ", "analyze")] {
            if let Some(table) = text.strip_prefix(what) {
                let table = table.split(':').next().unwrap_or("").trim().trim_matches('"');
                // how long it took is on a later line
                self.vacuum = Some((ms, format!("{short} {table}")));
            }
        }
        None
    }

    /// A continuation line of an autovacuum message: its last says how long it took.
    fn continued(&mut self, text: &str) -> Option<EventRow> {
        let elapsed = text.split("elapsed: ").nth(1)?.trim().trim_end_matches(" s").parse::<f64>().ok()?;
        let (at, what) = self.vacuum.take()?;
        let took = (elapsed * 1000.0).round() as i64;
        Some(event(at - took, "autovacuum", took, what))
    }
}

/// A line's Unix time in ms and the rest of it: `1795766557.056 [4494] LOG:  ...`.
fn stamped(line: &str) -> Option<(i64, &str)> {
    let (stamp, rest) = line.split_once(' ')?;
    let secs: f64 = stamp.parse().ok()?;
    let rest = rest.trim_start();
    let rest = if rest.starts_with('[') { rest.split_once("] ")?.1 } else { rest };
    Some(((secs * 1000.0).round() as i64, rest))
}

/// A completed checkpoint, begun at `begun` (when its start was logged since the tail
/// began), ended at `end`: `done` is the rest of PostgreSQL's line, "wrote N buffers
/// (x%); ...; write=X s, sync=Y s, total=Z s; ...".
fn checkpoint(begun: Option<(i64, String)>, end: i64, done: &str) -> EventRow {
    let figure = |key: &str| -> Option<f64> {
        let at = done.find(key)? + key.len();
        done[at..].split(" s").next()?.trim().parse().ok()
    };
    let total_ms = figure("total=").map(|s| (s * 1000.0).round() as i64);
    let (start, reason) = match begun {
        Some((ms, reason)) => (ms, reason),
        None => (end - total_ms.unwrap_or(0), "begun before observing".into()),
    };
    let wrote = done.split(';').next().unwrap_or("").trim();
    let seconds = |key: &str| figure(key).map_or("?".to_string(), |s| format!("{s:.3}"));
    let detail = format!(
        "{reason}: {wrote}; write={} s, sync={} s, total={} s",
        seconds("write="),
        seconds("sync="),
        seconds("total=")
    );
    event(start, "checkpoint", end - start, detail)
}

fn event(at_ms: i64, kind: &str, took_ms: i64, detail: String) -> EventRow {
    EventRow { at_ms, kind: kind.into(), label: String::new(), status: None, took_ms: Some(took_ms), detail }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
1795766551.889 [4493] LOG:  database system is ready to accept connections
1795766557.056 [4494] LOG:  checkpoint starting: immediate force wait
1795766557.171 [4494] LOG:  checkpoint complete: wrote 468 buffers (2.9%); 0 WAL file(s) added, 0 removed, 0 recycled; write=0.022 s, sync=0.051 s, total=0.105 s; sync files=21, longest=0.007 s, average=0.003 s; distance=6356 kB, estimate=6356 kB
1795766611.979 [7159] LOG:  automatic vacuum of table \"postgres.public.t\": index scans: 0
\tpages: 0 removed, 443 remain, 443 scanned (100.00% of total)
\tsystem usage: CPU: user: 0.00 s, system: 0.00 s, elapsed: 0.02 s
1795766612.007 [7159] LOG:  automatic analyze of table \"postgres.public.t\"
\tbuffer usage: 520 hits, 20 misses, 3 dirtied
\tsystem usage: CPU: user: 0.00 s, system: 0.00 s, elapsed: 0.25 s
";

    #[test]
    fn checkpoints_and_autovacuum_runs_are_events_on_the_run_clock() {
        let path = std::env::temp_dir().join(format!("fathom-pglog-{}", std::process::id()));
        std::fs::write(&path, "1795766500.000 [1] LOG:  checkpoint starting: time\n").unwrap();
        let mut tail = LogTail::at_end(&path);
        // a line half written is read once it ends
        let head = &LOG[..300];
        std::fs::write(&path, format!("1795766500.000 [1] LOG:  checkpoint starting: time\n{head}")).unwrap();
        let mut events = tail.events(1_795_766_550_000, "a");
        std::fs::write(&path, format!("1795766500.000 [1] LOG:  checkpoint starting: time\n{LOG}")).unwrap();
        events.extend(tail.events(1_795_766_550_000, "a"));
        let _ = std::fs::remove_file(&path);
        let got: Vec<_> = events.iter().map(|e| (e.kind.as_str(), e.label.as_str(), e.at_ms, e.took_ms)).collect();
        assert_eq!(
            got,
            [
                ("checkpoint", "a", 7056, Some(115)),
                ("autovacuum", "a", 61_959, Some(20)),
                ("autovacuum", "a", 61_757, Some(250))
            ]
        );
        assert_eq!(
            events[0].detail,
            "immediate force wait: wrote 468 buffers (2.9%); write=0.022 s, sync=0.051 s, total=0.105 s"
        );
        assert_eq!(
            (events[1].detail.as_str(), events[2].detail.as_str()),
            ("vacuum postgres.public.t", "analyze postgres.public.t")
        );
    }

    #[test]
    fn a_checkpoint_begun_before_the_tail_is_placed_by_its_total() {
        let mut p = Parser::default();
        let e = p.line("2000.500 [9] LOG:  checkpoint complete: wrote 10 buffers (0.1%); write=1.0 s, sync=0.5 s, total=1.600 s").unwrap();
        assert_eq!((e.at_ms, e.took_ms), (2_000_500 - 1600, Some(1600)));
        assert!(e.detail.starts_with("begun before observing: wrote 10 buffers"), "{}", e.detail);
        assert!(p.line("not a stamped line").is_none() && p.line("\tno vacuum pending, elapsed: 1 s").is_none());
    }
}
