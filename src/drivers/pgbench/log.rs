//! pgbench's per-transaction log (`-l`) as fathom's per-second samples. Each line is one
//! transaction:
//!
//! ```text
//! client_id transaction_no time script_no time_epoch time_us [schedule_lag]
//! ```
//!
//! With `--max-tries` a last field counts the transaction's retries (after
//! serialization failures and deadlocks). `time` is the latency in µs (`failed` or
//! `skipped` when it did not complete), counted from the transaction's scheduled start
//! under `--rate`, so it is the open-loop latency;
//! `schedule_lag` (with `--rate`) is how late it began, so `time - schedule_lag` is the
//! service time. `time_epoch.time_us` is when it ended. Each transaction lands in the
//! second of the run clock in which it ended, as an IO does, counted as the op of its
//! script (`script_no`, the order of pgbench's `-f` options).
//!
//! The log is read as pgbench writes it ([`Tail`]), so its seconds reach the store, the
//! live view and the Prometheus endpoint while it runs. pgbench writes each thread's log
//! through a 4 KiB buffer: about a hundred transactions a time, so at a few hundred
//! transactions per second or more a second arrives within it, and a late part of a
//! second is added to what the store holds of it.

use crate::metrics::{Op, OpStats, Sample};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// One second of one workload's transactions besides the samples: the failures and the
/// schedule lag, which go to the store's observations.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Extra {
    pub failed: u64,
    pub lag_sum_us: u64,
    pub lag_n: u64,
}

/// What one script's transactions came to: completed, failed (after their tries), and
/// the retries they took.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Counts {
    pub done: u64,
    pub failed: u64,
    pub retries: u64,
}

/// Transactions gathered per (client, second, script).
pub struct Seconds {
    workload: usize,
    first_worker: u32,
    /// The run clock's second 0, in Unix µs.
    clock_unix_us: i64,
    /// Transactions ending at or after this second are past the workload's end.
    end_t: u32,
    open_loop: bool,
    /// The op of each script number; a script past the list is a `txn`.
    ops: Vec<Op>,
    /// Whether each line ends with its retries (pgbench's `--max-tries`).
    retries: bool,
    /// The second from which each script's latencies are also kept whole.
    profile_from: Option<u32>,
    /// Per script: the latency (ns) of every transaction that ended from
    /// `profile_from` on, for a profile of the whole window.
    pub profile: BTreeMap<usize, Histogram<u64>>,
    per_client: BTreeMap<(u32, u32, usize), OpStats>,
    pub extra: BTreeMap<u32, Extra>,
    /// Transactions completed per (second, script), kept for the whole run: what a
    /// program compares with its server's own counters.
    pub completed: BTreeMap<(u32, usize), Counts>,
    /// Lines that could not be read (counted, with the first kept for the message).
    pub unreadable: (u64, Option<String>),
}

impl Seconds {
    pub fn new(workload: usize, first_worker: u32, clock_unix_ms: i64, end_t: u32, open_loop: bool) -> Seconds {
        Seconds {
            workload,
            first_worker,
            clock_unix_us: clock_unix_ms * 1000,
            end_t,
            open_loop,
            ops: vec![Op::Txn],
            retries: false,
            profile_from: None,
            profile: BTreeMap::new(),
            per_client: BTreeMap::new(),
            extra: BTreeMap::new(),
            completed: BTreeMap::new(),
            unreadable: (0, None),
        }
    }

    /// Counts each script number's transactions as the op at its index; `retries`:
    /// each line ends with its retries.
    pub fn with_ops(mut self, ops: Vec<Op>, retries: bool) -> Seconds {
        self.ops = ops;
        self.retries = retries;
        self
    }

    /// Keeps each script's latencies whole from second `from` on (`None`: not kept).
    pub fn with_profile(mut self, from: Option<u32>) -> Seconds {
        self.profile_from = from;
        self
    }

    /// What the transactions of `script` that ended in seconds `from..to` came to.
    pub fn counts_in(&self, script: usize, from: u32, to: u32) -> Counts {
        let mut sum = Counts::default();
        for c in self.completed.iter().filter(|((t, s), _)| *s == script && (from..to).contains(t)).map(|(_, c)| c) {
            sum.done += c.done;
            sum.failed += c.failed;
            sum.retries += c.retries;
        }
        sum
    }

    /// Adds one log line.
    pub fn add(&mut self, line: &str) {
        if self.parse(line).is_none() {
            self.unreadable.0 += 1;
            self.unreadable.1.get_or_insert_with(|| line.to_string());
        }
    }

    fn parse(&mut self, line: &str) -> Option<()> {
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        if f.len() < 6 {
            return None;
        }
        let client: u32 = f[0].parse().ok()?;
        let script: usize = f[3].parse().ok()?;
        let ended_us = f[4].parse::<i64>().ok()? * 1_000_000 + f[5].parse::<i64>().ok()?;
        let since = ended_us - self.clock_unix_us;
        if since < 0 {
            return Some(());
        }
        let t = (since / 1_000_000) as u32;
        if t >= self.end_t {
            return Some(());
        }
        let retries: u64 = match self.retries {
            true => f.last()?.parse().ok()?,
            false => 0,
        };
        let counts = self.completed.entry((t, script)).or_default();
        counts.retries += retries;
        let latency_us: u64 = match f[2] {
            "failed" | "serialization" | "deadlock" | "other" => {
                counts.failed += 1;
                self.extra.entry(t).or_default().failed += 1;
                return Some(());
            }
            // --latency-limit's skipped transactions never ran
            "skipped" => return Some(()),
            n => n.parse().ok()?,
        };
        let lag_us: u64 = match (self.open_loop, f.get(6)) {
            (true, Some(lag)) => lag.parse().ok()?,
            _ => 0,
        };
        counts.done += 1;
        if self.profile_from.is_some_and(|from| t >= from) {
            let whole = self.profile.entry(script).or_insert_with(crate::metrics::new_histogram);
            whole.saturating_record(latency_us.max(1) * 1000);
        }
        let stats = self.per_client.entry((client, t, script)).or_insert_with(|| OpStats::new(self.open_loop));
        stats.ops += 1;
        let ns = latency_us.max(1) * 1000;
        stats.latency_sum_ns += ns;
        stats.latency.saturating_record(ns);
        if let Some(service) = &mut stats.service {
            service.saturating_record(latency_us.saturating_sub(lag_us).max(1) * 1000);
        }
        if self.open_loop {
            let e = self.extra.entry(t).or_default();
            e.lag_sum_us += lag_us;
            e.lag_n += 1;
        }
        Some(())
    }

    /// Every (client, second)'s sample of the lines added since the last call, in order
    /// of second: the store adds a second's later part to what it has of it.
    pub fn take(&mut self) -> Vec<Sample> {
        let mut out: Vec<Sample> = std::mem::take(&mut self.per_client)
            .into_iter()
            .map(|((client, t, script), stats)| Sample {
                workload: self.workload,
                worker: self.first_worker + client,
                t,
                op: self.ops.get(script).copied().unwrap_or(Op::Txn),
                stats,
            })
            .collect();
        out.sort_by_key(|s| (s.t, s.worker));
        out
    }
}

/// The complete lines added to the log files of one pgbench run (one per thread, named
/// by pgbench after its process id) since the last read.
pub struct Tail {
    dir: PathBuf,
    /// Per file: how far it has been read, and a last line not yet ended.
    read: BTreeMap<PathBuf, (u64, String)>,
}

impl Tail {
    pub fn new(dir: &Path) -> Tail {
        Tail { dir: dir.to_path_buf(), read: BTreeMap::new() }
    }

    /// Hands `line` every complete line written since the last read, file by file.
    pub fn read(&mut self, mut line: impl FnMut(&str)) -> std::io::Result<()> {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&self.dir)?.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let (offset, partial) = self.read.entry(path.clone()).or_default();
            let mut file = std::fs::File::open(&path)?;
            file.seek(SeekFrom::Start(*offset))?;
            let mut bytes = Vec::new();
            *offset += file.read_to_end(&mut bytes)? as u64;
            partial.push_str(&String::from_utf8_lossy(&bytes));
            if let Some(end) = partial.rfind('\n') {
                partial[..end].lines().for_each(&mut line);
                partial.drain(..=end);
            }
        }
        Ok(())
    }
}

/// pgbench's own figures from its closing report (stdout).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Closing {
    /// `tps = N (without initial connection time)`.
    pub tps: Option<f64>,
    pub processed: Option<u64>,
    pub failed: Option<u64>,
}

pub fn closing(stdout: &str) -> Closing {
    let number = |after: &str| -> Option<f64> {
        let line = stdout.lines().find_map(|l| l.trim().strip_prefix(after))?;
        line.split_whitespace().next()?.trim_end_matches(',').parse().ok()
    };
    let processed = stdout.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("number of transactions actually processed:")?;
        rest.split_whitespace().next()?.split('/').next()?.parse().ok()
    });
    Closing { tps: number("tps ="), processed, failed: number("number of failed transactions:").map(|f| f as u64) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::summary::Throughput;

    #[test]
    fn lines_land_in_the_second_they_ended() {
        // run clock second 0 = Unix 1000.000 s; the workload ends at second 2
        let mut s = Seconds::new(1, 10, 1_000_000, 2, false);
        s.add("0 0 1500 0 1000 250000"); // 1.5 ms, ended at 0.25 s
        s.add("0 1 2500 0 1000 999999");
        s.add("1 0 800 0 1001 100"); // client 1, second 1
        s.add("1 1 failed 0 1001 200");
        s.add("0 2 700 0 1002 5"); // second 2: past the end
        s.add("0 3 700 0 999 5"); // before the clock
        s.add("garbage");
        assert_eq!(s.unreadable.0, 1);
        assert_eq!(s.extra[&1].failed, 1);
        let samples = s.take();
        assert_eq!(samples.len(), 2);
        assert_eq!((samples[0].worker, samples[0].t, samples[0].op), (10, 0, Op::Txn));
        assert_eq!(samples[0].stats.ops, 2);
        assert_eq!(samples[0].stats.latency_sum_ns, 4_000_000);
        assert_eq!(samples[0].stats.latency.max(), samples[0].stats.latency.highest_equivalent(2_500_000));
        assert_eq!((samples[1].worker, samples[1].t, samples[1].stats.ops), (11, 1, 1));
        assert!(samples[0].stats.service.is_none());
    }

    #[test]
    fn each_script_is_its_op() {
        let (a, b) = (Op::named("log-test-a", Throughput::Tps), Op::named("log-test-b", Throughput::Tps));
        let mut s = Seconds::new(0, 0, 1_000_000, 10, false).with_ops(vec![a, b], true).with_profile(Some(1));
        s.add("0 0 1500 0 1000 10 0");
        s.add("0 1 1500 1 1000 20 2"); // retried twice
        s.add("0 2 1500 1 1001 20 0");
        s.add("0 3 failed 1 1001 25 9");
        s.add("0 4 1500 2 1001 30 0"); // a script past the list
        let got: Vec<(u32, Op, u64)> = s.take().iter().map(|x| (x.t, x.op, x.stats.ops)).collect();
        assert_eq!(got, vec![(0, a, 1), (0, b, 1), (1, b, 1), (1, Op::Txn, 1)]);
        assert_eq!(s.counts_in(1, 0, 2), Counts { done: 2, failed: 1, retries: 11 });
        assert_eq!((s.counts_in(1, 1, 2).done, s.counts_in(0, 0, 10).done), (1, 1));
        // from second 1 on: one of script 1 and one of script 2 (failed ones have no latency)
        assert_eq!((s.profile.len(), s.profile[&1].len(), s.profile[&2].len()), (2, 1, 1));
    }

    #[test]
    fn under_a_rate_the_lag_is_split_from_the_service_time() {
        let mut s = Seconds::new(0, 0, 1_000_000, 10, true);
        s.add("0 0 5000 0 1000 10 4000"); // 5 ms from schedule, 4 ms late: 1 ms of service
        let e = s.extra[&0].clone();
        assert_eq!((e.lag_sum_us, e.lag_n), (4000, 1));
        let samples = s.take();
        let service = samples[0].stats.service.as_ref().unwrap();
        assert_eq!(service.max(), service.highest_equivalent(1_000_000));
        assert_eq!(samples[0].stats.latency.max(), samples[0].stats.latency.highest_equivalent(5_000_000));
    }

    #[test]
    fn the_log_is_read_as_it_is_written() {
        let dir = std::env::temp_dir().join(format!("fathom-pgbench-tail-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (one, two) = (dir.join("txn.7"), dir.join("txn.7.1"));
        let mut tail = Tail::new(&dir);
        let mut s = Seconds::new(0, 0, 1_000_000, 10, false);
        // a buffer flushed mid-line: the line is read once it is whole
        std::fs::write(&one, "0 0 1500 0 1000 250000\n0 1 25").unwrap();
        tail.read(|l| s.add(l)).unwrap();
        let first = s.take();
        assert_eq!((first.len(), first[0].stats.ops), (1, 1));
        assert!(s.take().is_empty(), "what was taken is not taken again");
        std::fs::write(&one, "0 0 1500 0 1000 250000\n0 1 2500 0 1001 5\n").unwrap();
        std::fs::write(&two, "1 0 800 0 1001 100\n").unwrap();
        tail.read(|l| s.add(l)).unwrap();
        let got: Vec<(u32, u32, u64)> = s.take().iter().map(|x| (x.worker, x.t, x.stats.ops)).collect();
        assert_eq!(got, vec![(0, 1, 1), (1, 1, 1)]);
        assert_eq!(s.unreadable.0, 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn closing_report() {
        let out = "transaction type: <builtin: select only>\n\
                   number of transactions actually processed: 12345\n\
                   number of failed transactions: 0 (0.000%)\n\
                   latency average = 0.162 ms\n\
                   tps = 6172.512345 (without initial connection time)\n";
        let c = closing(out);
        assert_eq!(c.tps, Some(6172.512345));
        assert_eq!(c.processed, Some(12345));
        assert_eq!(c.failed, Some(0));
    }
}
