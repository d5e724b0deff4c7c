//! fio's periodic json+ status reports as fathom samples. Each report holds every job's
//! totals since it started (counts, bytes, and latency histogram bins); the difference
//! between consecutive reports is one interval of that job, placed in the second of the
//! run clock that holds the interval's midpoint.

use crate::error::{Error, Result};
use crate::metrics::{Op, OpStats, Sample};
use serde::Deserialize;
use std::collections::HashMap;

/// One status report (the fields fathom uses).
#[derive(Debug, Deserialize)]
pub struct Report {
    /// When fio wrote the report, in Unix milliseconds.
    pub timestamp_ms: i64,
    pub jobs: Vec<Job>,
}

#[derive(Debug, Deserialize)]
pub struct Job {
    pub jobname: String,
    /// Milliseconds the job did its IO (after its `ramp_time`).
    #[serde(default)]
    pub job_runtime: u64,
    pub read: Direction,
    pub write: Direction,
    pub sync: Option<Direction>,
}

/// One direction's totals; syncs have no bytes. (Its `total_ios` counts IOs when
/// issued; the latency count `N`, like the bytes, counts them when completed.)
#[derive(Debug, Deserialize)]
pub struct Direction {
    #[serde(default)]
    pub io_bytes: u64,
    pub lat_ns: Latency,
}

#[derive(Debug, Deserialize)]
pub struct Latency {
    #[serde(rename = "N", default)]
    pub n: u64,
    #[serde(default)]
    pub mean: f64,
    /// Histogram bins: a bin's value in ns (as text) to its count. Present with json+.
    #[serde(default)]
    pub bins: HashMap<String, u64>,
}

/// What one job had reached in one direction at the last report.
#[derive(Default)]
struct Seen {
    ios: u64,
    bytes: u64,
    latency_sum_ns: f64,
    bins: HashMap<u64, u64>,
}

/// Where a fio job's samples go.
pub struct Worker {
    pub workload: usize,
    pub worker: u32,
}

/// Turns a stream of cumulative reports into per-second samples.
pub struct Intervals {
    /// fio job name to its worker (its first, when fio runs several jobs of that name).
    workers: HashMap<String, Worker>,
    /// By job name, clone of that name, and direction.
    seen: HashMap<(String, u32, Op), Seen>,
    /// The run clock's second 0 in Unix milliseconds.
    clock_unix_ms: i64,
    /// End of the previous interval (fio's start, before the first report).
    last_ms: i64,
    /// fio starts a little before the workload's first second so that its jobs begin
    /// on it. A time-based job's IO before it is a lead-in, stored in the second it
    /// happened and left out of the window like a ramp; a bounded job's (its whole IO,
    /// when it is short) counts in this second: its IO is the measurement.
    early_into: Option<u32>,
    /// Seconds at or after this are past the workload's end and dropped.
    end_t: u32,
    /// Block size when the workload has one: then every IO's size is known.
    single_size: Option<u64>,
    open_loop: bool,
}

impl Intervals {
    pub fn new(
        workers: HashMap<String, Worker>,
        clock_unix_ms: i64,
        started_ms: i64,
        early_into: Option<u32>,
        end_t: u32,
        single_size: Option<u64>,
        open_loop: bool,
    ) -> Intervals {
        let seen = HashMap::new();
        Intervals { workers, seen, clock_unix_ms, last_ms: started_ms, early_into, end_t, single_size, open_loop }
    }

    /// The samples of the interval that `report` closes. An error names what was
    /// missing or inconsistent (fio's output is not fathom's to trust blindly).
    pub fn take(&mut self, report: &Report) -> Result<Vec<Sample>> {
        let mid_ms = (self.last_ms + report.timestamp_ms) / 2 - self.clock_unix_ms;
        self.last_ms = report.timestamp_ms.max(self.last_ms);
        let t = (mid_ms.max(0) / 1000) as u32;
        let t = self.early_into.map_or(t, |first| t.max(first));
        let mut samples = Vec::new();
        // a job section's `numjobs` clones share its name, in the same order each report
        let mut clones: HashMap<&str, u32> = HashMap::new();
        for job in &report.jobs {
            let Some(worker) = self.workers.get(&job.jobname) else {
                return Err(Error::failed(format!("fio reported a job `{}` that fathom did not write", job.jobname)));
            };
            let clone = clones.entry(&job.jobname).or_default();
            let (id, nth) = (worker.worker + *clone, *clone);
            *clone += 1;
            let dirs = [(Op::Read, Some(&job.read)), (Op::Write, Some(&job.write)), (Op::Sync, job.sync.as_ref())];
            for (op, dir) in dirs {
                let Some(dir) = dir else { continue };
                let seen = self.seen.entry((job.jobname.clone(), nth, op)).or_default();
                let Some(stats) = delta(seen, dir, op, self.single_size, self.open_loop)? else { continue };
                if t < self.end_t {
                    samples.push(Sample { workload: worker.workload, worker: id, t, op, stats });
                }
            }
        }
        Ok(samples)
    }
}

/// When a bounded job's IO ended, in seconds of the run clock, from fio's final
/// `report`: at `measure_t` (the workload's first measured second) plus the longest of
/// its jobs' own runtimes, since IO fio did in its lead-in counts in that second; or at
/// the report, if that is later (fio began late). fio counts whole milliseconds: a job
/// quicker than one took one, so that its window is not empty.
pub fn io_end(report: &Report, clock_unix_ms: i64, measure_t: f64) -> f64 {
    let runtime_ms = report.jobs.iter().map(|j| j.job_runtime).max().unwrap_or(0).max(1);
    let reported = (report.timestamp_ms - clock_unix_ms) as f64 / 1000.0;
    (measure_t + runtime_ms as f64 / 1000.0).max(reported)
}

/// The change since `seen`, which it then advances; `None` when nothing completed and
/// no bytes came in late.
fn delta(
    seen: &mut Seen,
    dir: &Direction,
    op: Op,
    single_size: Option<u64>,
    open_loop: bool,
) -> Result<Option<OpStats>> {
    let ios = dir.lat_ns.n.checked_sub(seen.ios).ok_or(Error::failed("fio's IO count went backwards"))?;
    if ios == 0 {
        // the bytes of IOs an earlier report counted (fio's byte count lags): with several
        // block sizes only this report says them
        let late = dir.io_bytes.saturating_sub(seen.bytes);
        if late == 0 || single_size.is_some() || op == Op::Sync {
            return Ok(None);
        }
        let mut stats = OpStats::new(false);
        stats.bytes = late;
        seen.bytes = dir.io_bytes;
        return Ok(Some(stats));
    }
    let mut stats = OpStats::new(false);
    stats.ops = ios;
    // fio's byte count lags its IO count by a few IOs in a report; with one block size
    // the bytes follow exactly from the IOs
    stats.bytes = match single_size {
        Some(size) if op != Op::Sync => ios * size,
        _ => dir.io_bytes.saturating_sub(seen.bytes),
    };
    let sum = dir.lat_ns.mean * dir.lat_ns.n as f64;
    stats.latency_sum_ns = (sum - seen.latency_sum_ns).max(0.0).round() as u64;
    let mut binned = 0;
    for (value, &count) in &dir.lat_ns.bins {
        let ns: u64 = value.parse().map_err(|_| Error::failed(format!("fio latency bin `{value}` is not a number")))?;
        let before = seen.bins.insert(ns, count).unwrap_or(0);
        if count > before {
            stats.latency.saturating_record_n(ns.max(1), count - before);
            binned += count - before;
        }
    }
    if dir.lat_ns.bins.is_empty() {
        return Err(Error::failed("fio's report has no latency bins: is it fio 3 with --output-format=json+?"));
    }
    if binned == 0 {
        // fio's bins lag its IO count in a report written while IOs complete (a busy
        // machine): these IOs are counted with their latencies in the next report
        return Ok(None);
    }
    if open_loop {
        // fio has no intended start: its latency is all there is to say
        stats.service = Some(stats.latency.clone());
    }
    if op != Op::Sync
        && let Some(size) = single_size
    {
        stats.sizes.push((size, ios));
    }
    seen.ios = dir.lat_ns.n;
    seen.bytes = dir.io_bytes;
    seen.latency_sum_ns = sum;
    Ok(Some(stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(ts: i64, reads: u64, bins: &[(u64, u64)]) -> Report {
        let bins: serde_json::Map<String, serde_json::Value> =
            bins.iter().map(|(v, c)| (v.to_string(), (*c).into())).collect();
        let mean = if reads == 0 {
            0.0
        } else {
            bins.iter().map(|(v, c)| v.parse::<f64>().unwrap() * c.as_f64().unwrap()).sum::<f64>() / reads as f64
        };
        serde_json::from_value(serde_json::json!({
            "timestamp_ms": ts,
            "jobs": [{
                "jobname": "w.0",
                "read": {"io_bytes": reads * 4096, "lat_ns": {"N": reads, "mean": mean, "bins": bins}},
                "write": {"io_bytes": 0, "lat_ns": {"N": 0, "mean": 0.0}},
            }]
        }))
        .unwrap()
    }

    #[test]
    fn a_bounded_jobs_io_ends_at_its_runtime_past_the_first_second_or_at_its_report() {
        let ended = |ts: i64, runtimes: &[u64]| {
            let mut r = report(ts, 0, &[]);
            r.jobs = runtimes
                .iter()
                .map(|&ms| {
                    let mut j = report(ts, 0, &[]).jobs.remove(0);
                    j.job_runtime = ms;
                    j
                })
                .collect();
            io_end(&r, 10_000, 1.0)
        };
        // done in fio's lead-in (its report at 0.9 s): the longest job's 180 ms from second 1
        assert_eq!(ended(10_900, &[120, 180, 90]), 1.18);
        // begun late: its report, at 2.5 s, is later than 1 s + 180 ms
        assert_eq!(ended(12_500, &[180]), 2.5);
        // quicker than fio's millisecond: one, so that the window holds its IO
        assert_eq!(ended(10_900, &[0]), 1.001);
    }

    fn intervals(end_t: u32) -> Intervals {
        let workers = HashMap::from([("w.0".to_string(), Worker { workload: 3, worker: 7 })]);
        Intervals::new(workers, 10_000, 10_100, None, end_t, Some(4096), false)
    }

    #[test]
    fn consecutive_reports_become_intervals() {
        let mut iv = intervals(60);
        // 100 reads of 1 µs by 10.35 s, then 50 more of 2 µs by 11.6 s
        let a = iv.take(&report(10_350, 100, &[(1000, 100)])).unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].workload, a[0].worker, a[0].t, a[0].op), (3, 7, 0, Op::Read));
        assert_eq!(a[0].stats.ops, 100);
        assert_eq!(a[0].stats.latency_sum_ns, 100_000);
        let b = iv.take(&report(11_600, 150, &[(1000, 100), (2000, 50)])).unwrap();
        // interval 10.35..11.6 s of Unix time is 0.35..1.6 s of the run: midpoint in second 0
        assert_eq!(b[0].t, 0);
        assert_eq!(b[0].stats.ops, 50);
        assert_eq!(b[0].stats.bytes, 50 * 4096);
        assert_eq!(b[0].stats.latency.len(), 50);
        assert_eq!(b[0].stats.latency.min(), 2000);
        assert_eq!(b[0].stats.sizes, vec![(4096, 50)]);
        assert_eq!(b[0].stats.latency_sum_ns, 100_000);
        // nothing new: no sample
        assert!(iv.take(&report(11_850, 150, &[(1000, 100), (2000, 50)])).unwrap().is_empty());
    }

    #[test]
    fn past_the_end_is_dropped_and_strangers_are_errors() {
        let mut iv = intervals(1);
        // 10.1..12.4 s: midpoint in second 1, the end
        assert!(iv.take(&report(12_400, 10, &[(1000, 10)])).unwrap().is_empty());
        let mut stranger = report(12_500, 11, &[(1000, 11)]);
        stranger.jobs[0].jobname = "x".into();
        assert!(iv.take(&stranger).unwrap_err().to_string().contains("`x`"));
        let mut no_bins = report(12_600, 20, &[]);
        no_bins.jobs[0].jobname = "w.0".into();
        assert!(iv.take(&no_bins).unwrap_err().to_string().contains("json+"));
    }

    #[test]
    fn a_bounded_job_done_before_its_workloads_first_second_counts_in_it() {
        // fio started 0.3 s before the workload's second 2 and ended its bounded job at
        // once: its only report's midpoint is in second 1
        let workers = || HashMap::from([("w.0".to_string(), Worker { workload: 3, worker: 7 })]);
        let mut iv = Intervals::new(workers(), 10_000, 11_700, Some(2), 60, Some(4096), false);
        let a = iv.take(&report(11_900, 100, &[(1000, 100)])).unwrap();
        assert_eq!((a[0].t, a[0].stats.ops), (2, 100));
        // a time-based job's lead-in stays in the second it happened
        let mut iv = Intervals::new(workers(), 10_000, 11_700, None, 60, Some(4096), false);
        assert_eq!(iv.take(&report(11_900, 100, &[(1000, 100)])).unwrap()[0].t, 1);
    }

    #[test]
    fn ios_a_report_counts_before_their_bins_wait_for_them_and_no_bins_is_an_error() {
        let mut iv = intervals(60);
        iv.take(&report(10_350, 100, &[(1000, 100)])).unwrap();
        // 50 more counted, their bins not yet in this report: nothing yet, no error
        let mut ahead = report(10_600, 150, &[(1000, 100)]);
        ahead.jobs[0].read.lat_ns.mean = 1000.0;
        assert!(iv.take(&ahead).unwrap().is_empty());
        let caught_up = iv.take(&report(10_850, 150, &[(1000, 100), (2000, 50)])).unwrap();
        assert_eq!((caught_up[0].stats.ops, caught_up[0].stats.latency.len()), (50, 50));
        // a report without bins at all is no json+ report
        let err = intervals(60).take(&report(10_350, 100, &[])).unwrap_err().to_string();
        assert!(err.contains("no latency bins"), "{err}");
    }

    #[test]
    fn bytes_a_report_gives_after_its_ios_are_counted() {
        // several block sizes: the bytes are fio's, which lag its IO count; the final
        // report brings the rest with no new IO
        let workers = HashMap::from([("w.0".to_string(), Worker { workload: 3, worker: 7 })]);
        let mut iv = Intervals::new(workers, 10_000, 10_100, None, 60, None, false);
        let mut lagging = report(10_350, 100, &[(1000, 100)]);
        lagging.jobs[0].read.io_bytes = 90 * 4096;
        let a = iv.take(&lagging).unwrap();
        assert_eq!((a[0].stats.ops, a[0].stats.bytes), (100, 90 * 4096));
        let b = iv.take(&report(10_600, 100, &[(1000, 100)])).unwrap();
        assert_eq!((b.len(), b[0].stats.ops, b[0].stats.bytes), (1, 0, 10 * 4096));
        assert!(iv.take(&report(10_850, 100, &[(1000, 100)])).unwrap().is_empty(), "nothing new");
    }

    #[test]
    fn clones_of_one_job_are_workers_in_order() {
        // numjobs=2: fio reports two jobs of one name, each with its own totals
        let mut iv = intervals(60);
        let mut two = report(10_600, 10, &[(1000, 10)]);
        let mut second = report(10_600, 30, &[(3000, 30)]).jobs.remove(0);
        second.jobname = "w.0".into();
        two.jobs.push(second);
        let samples = iv.take(&two).unwrap();
        let by_worker: Vec<(u32, u64)> = samples.iter().map(|s| (s.worker, s.stats.ops)).collect();
        assert_eq!(by_worker, [(7, 10), (8, 30)]);
    }
}
