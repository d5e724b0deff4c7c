//! The live view: while a run goes, on a terminal, a progress bar with the run's elapsed
//! and planned seconds, its ETA and the phase in force, and one line per workload running
//! in that phase (its workers and its last second: IOPS and MB/s, TPS, or Gbit/s, with
//! p50 and p99), each cut to the terminal's width and redrawn in place four times a
//! second by indicatif. Lines said during the run (`crate::terminal::say`: progress,
//! warnings) print above the bars. When stderr is not a terminal (CI logs, pipes) the
//! same figures are one plain line every 10 s.

use super::format::{count, latency_us, rate_in, sig3};
use super::table::text::shortened;
use crate::metrics::summary::Throughput;
use crate::metrics::totals::{State, Totals};
use crate::metrics::{Op, OpStats};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running view; `stop` ends it and clears its bars.
pub struct View {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// True when stderr is a terminal (the view can be redrawn in place).
pub fn on_terminal() -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(2) == 1 }
}

impl View {
    pub fn start(live: Arc<Totals>, clock_start: Instant, planned_s: Option<u64>) -> View {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new().name("live-view".into()).spawn(move || {
            let every = Duration::from_millis(250);
            if on_terminal() {
                let mut bars = Bars::new();
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(every);
                    let now = clock_start.elapsed().as_secs();
                    bars.draw(&live.with(|s| Lines::of(s, now, planned_s)));
                }
                bars.clear();
            } else {
                let mut last_plain = Instant::now();
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(every);
                    if last_plain.elapsed() >= Duration::from_secs(10) {
                        last_plain = Instant::now();
                        let now = clock_start.elapsed().as_secs();
                        let width = super::table::text::width(false);
                        let lines = live.with(|s| Lines::of(s, now, planned_s)).plain(width);
                        lines.iter().for_each(|l| crate::terminal::say(l));
                    }
                }
            }
        });
        // without a thread for it, the run goes on without a live view
        View { stop, thread: thread.ok() }
    }

    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread {
            let _ = t.join();
        }
    }
}

/// The view on a terminal: the run's bar and a line per running workload, drawn by
/// indicatif, which cuts each to the terminal's width (`wide_msg`) so that no redraw
/// wraps.
struct Bars {
    multi: MultiProgress,
    run: ProgressBar,
    workloads: Vec<ProgressBar>,
    line: ProgressStyle,
}

impl Bars {
    fn new() -> Bars {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(4));
        let run_style = ProgressStyle::with_template("{prefix} [{bar:16}] {wide_msg}")
            .expect("a valid template")
            .progress_chars("#>-");
        let run = multi.add(ProgressBar::new(1).with_style(run_style));
        crate::terminal::attach(multi.clone());
        Bars { multi, run, workloads: Vec::new(), line: ProgressStyle::with_template("{wide_msg}").expect("valid") }
    }

    fn draw(&mut self, lines: &Lines) {
        let now = lines.now;
        // past the plan the bar is full and says so, rather than counting beyond it; with
        // no plan it is full too
        self.run.set_length(lines.planned.unwrap_or(now).max(now).max(1));
        self.run.set_position(now);
        self.run.set_prefix(format!("{now:>4}s/{}", lines.length()));
        self.run.set_message(lines.progress());
        while self.workloads.len() < lines.workloads.len() {
            let bar = self.multi.add(ProgressBar::new(1).with_style(self.line.clone()));
            self.workloads.push(bar);
        }
        while self.workloads.len() > lines.workloads.len() {
            if let Some(bar) = self.workloads.pop() {
                bar.finish_and_clear();
                self.multi.remove(&bar);
            }
        }
        for (bar, line) in self.workloads.iter().zip(&lines.workloads) {
            bar.set_message(format!("  {line}"));
        }
    }

    fn clear(self) {
        crate::terminal::detach();
        for bar in self.workloads.iter().chain([&self.run]) {
            bar.finish_and_clear();
        }
        let _ = self.multi.clear();
    }
}

/// What the view shows at one moment.
pub struct Lines {
    pub now: u64,
    /// `None` while a workload that ends by itself makes the run's end unknown.
    pub planned: Option<u64>,
    pub phase: Option<String>,
    /// One per workload running in the phase in force, in the scenario's order.
    pub workloads: Vec<String>,
    /// Each workload's rate in its last seconds, where it has one.
    rates: Vec<Option<(f64, Throughput)>>,
}

/// How many workloads a plain progress line names when they do not fit one line.
const PLAIN_ROWS: usize = 3;

impl Lines {
    /// The view of `s` at second `now` of a run planned for `planned` seconds (or as
    /// the timeline last replanned it): the workloads of the phase in force, each with
    /// its last second since it runs as it does.
    pub fn of(s: &State, now: u64, planned: Option<u64>) -> Lines {
        let planned = s.planned.unwrap_or(planned);
        let (workloads, rates) =
            s.running.iter().map(|&(i, workers, since)| workload(s, i, workers, since, now)).unzip();
        Lines { now, planned, phase: s.phase.clone(), workloads, rates }
    }

    /// `34%, ETA 45s · phase`: what is left of the plan, that the run is past it, or
    /// that its end is not known (a workload runs until its IO is done).
    fn progress(&self) -> String {
        let Some(planned) = self.planned else {
            let phase = self.phase.as_ref().map(|p| format!(" · {p}")).unwrap_or_default();
            return format!("ETA unknown{phase}");
        };
        let left = match planned.checked_sub(self.now).filter(|left| *left > 0) {
            Some(left) => format!("{:>3}%, ETA {left}s", self.now * 100 / planned),
            None => "finishing".into(),
        };
        let phase = self.phase.as_ref().map(|p| format!(" · {p}")).unwrap_or_default();
        format!("{left}{phase}")
    }

    /// The lines printed every 10 s when stderr is no terminal, within `width`: one,
    /// `[23s/68s 34%, ETA 45s · qd4] qd4 x4: 84,012 IOPS 344 MB/s p50 40.1 µs p99 73.2 µs`,
    /// when every workload fits on it; else the count and their total, the busiest few
    /// a line each, and how many more.
    pub fn plain(&self, width: usize) -> Vec<String> {
        let head = format!("[{}s/{} {}]", self.now, self.length(), self.progress());
        let body = if self.workloads.is_empty() { "starting".to_string() } else { self.workloads.join(" | ") };
        let one = format!("{head} {body}");
        if self.workloads.len() <= 1 || one.chars().count() <= width {
            return vec![one];
        }
        let mut out = vec![format!("{head} {} workloads{}", self.workloads.len(), self.total())];
        let mut busiest: Vec<usize> = (0..self.workloads.len()).collect();
        busiest.sort_by(|&a, &b| rate_of(&self.rates[b]).total_cmp(&rate_of(&self.rates[a])));
        busiest.truncate(PLAIN_ROWS);
        busiest.sort_unstable();
        out.extend(busiest.iter().map(|&i| shortened(&format!("  {}", self.workloads[i]), width)));
        if self.workloads.len() > PLAIN_ROWS {
            out.push(format!("  +{} more", self.workloads.len() - PLAIN_ROWS));
        }
        out
    }

    /// `, 8,000 IOPS in all` when every workload has a rate in one unit.
    fn total(&self) -> String {
        let Some(Some((_, unit))) = self.rates.first() else { return String::new() };
        let all: Option<Vec<f64>> = self.rates.iter().map(|r| r.filter(|(_, u)| u == unit).map(|(v, _)| v)).collect();
        all.map(|v| format!(", {} in all", rate_in(v.iter().sum(), *unit))).unwrap_or_default()
    }

    /// The planned length, `48s`, or `?` when it is not known.
    fn length(&self) -> String {
        self.planned.map_or("?".into(), |p| format!("{p}s"))
    }
}

/// `qd4 x4: 84,012 IOPS of 90,000 344 MB/s p50 40.1 µs p99 73.2 µs`: workload `i` with
/// its `workers`, and its latest second since it runs with them (`since`) if it is
/// recent (else how long none has come: a workload that stopped or stalls).
/// Transactions are TPS, network streams Gbit/s (no latency is measured per stream); a
/// figure not measured is left out.
fn workload(s: &State, i: usize, workers: u32, since: u32, now: u64) -> (String, Option<(f64, Throughput)>) {
    let Some(w) = s.workloads.get(i) else { return (String::new(), None) };
    let head = format!("{} x{workers}", w.name);
    let of_phase = s.latest.iter().filter(|((wi, op), (t, _))| *wi == i && *op != Op::Sync && *t >= since);
    let Some(last) = of_phase.clone().map(|(_, (t, _))| u64::from(*t)).max() else {
        // its warm-up is not measured: say so, rather than `starting` for all of it
        let warm_until = u64::from(since) + u64::from(w.ramp_s);
        return match now < warm_until {
            true => (format!("{head}: ramp, {}s left", warm_until - now), None),
            false => (format!("{head}: starting"), None),
        };
    };
    if last + 3 < now {
        return (format!("{head}: no second for {}s", now - last - 1), None);
    }
    let recent: Vec<(Op, &OpStats)> =
        of_phase.filter(|(_, (t, _))| u64::from(*t) + 3 >= now).map(|((_, op), (_, stats))| (*op, stats)).collect();
    // one workload's ops share a unit: IOPS, TPS or Gbit/s
    let unit = recent[0].0.unit();
    let mb_per_s = recent.iter().map(|(_, st)| st.bytes).sum::<u64>() as f64 / 1e6;
    if !unit.has_latency() {
        let rate = unit.rate(0.0, mb_per_s);
        return (format!("{head}: {}", rate_in(rate, unit)), Some((rate, unit)));
    }
    let timed: Vec<&OpStats> = recent.iter().map(|(_, st)| *st).collect();
    let ops: u64 = timed.iter().map(|st| st.ops).sum();
    let mut merged = timed[0].latency.clone();
    for st in &timed[1..] {
        let _ = merged.add(&st.latency);
    }
    let target = w.target_iops.map(|t| format!(" of {}", count(t))).unwrap_or_default();
    let bytes = if unit.counts_bytes() { format!(" {} MB/s", sig3(mb_per_s)) } else { String::new() };
    let rate = format!("{}{target}{bytes}", rate_in(ops as f64, unit));
    // counted but not timed (HammerDB's calls, read from the server)
    if merged.is_empty() {
        return (format!("{head}: {rate}"), Some((ops as f64, unit)));
    }
    let p = |q: f64| latency_us(merged.value_at_quantile(q) as f64 / 1000.0);
    (format!("{head}: {rate} p50 {} p99 {}", p(0.5), p(0.99)), Some((ops as f64, unit)))
}

/// A workload's rate for ranking: none ranks last.
fn rate_of(rate: &Option<(f64, Throughput)>) -> f64 {
    rate.map_or(-1.0, |(v, _)| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::totals::WorkloadInfo;

    fn info(name: &str, target_iops: Option<f64>) -> WorkloadInfo {
        WorkloadInfo { name: name.into(), group: String::new(), target_iops, placed: false, ramp_s: 0 }
    }

    fn second(ops: u64, bytes: u64, latency_ns: u64) -> OpStats {
        let mut st = OpStats::new(false);
        for _ in 0..ops {
            st.record(bytes, latency_ns, 0);
        }
        st
    }

    #[test]
    fn the_view_shows_the_last_second_of_the_phases_workloads() {
        let live = Totals::new(1, "s", vec![info("qd1", None), info("qd4", Some(2000.0))]);
        live.set_phase("qd1", 0, &[(0, 1)]);
        live.add_one(0, 0, 9, Op::Read, second(1000, 4096, 50_000));
        // qd4 began at second 10: qd1 is no longer shown, and qd4 is starting until its
        // first second is stored
        live.set_phase("qd4", 10, &[(1, 4)]);
        let lines = live.with(|s| Lines::of(s, 10, Some(40)));
        assert_eq!(lines.workloads, vec!["qd4 x4: starting"]);
        live.add_one(1, 1, 10, Op::Read, second(1000, 4096, 50_000));
        let lines = live.with(|s| Lines::of(s, 11, Some(40)));
        assert!(
            lines.workloads[0].starts_with("qd4 x4: 1,000 IOPS of 2,000 4.10 MB/s p50 50"),
            "{:?}",
            lines.workloads
        );
        assert!(
            lines.plain(usize::MAX)[0].starts_with("[11s/40s  27%, ETA 29s · qd4] qd4 x4: 1,000 IOPS"),
            "{:?}",
            lines.plain(usize::MAX)
        );
        // long after its last second a workload says so (stopped, or stalled)
        assert_eq!(live.with(|s| Lines::of(s, 30, Some(40))).workloads, vec!["qd4 x4: no second for 19s"]);
        // a workload going on as it ran keeps its seconds in the next phase; one whose
        // workers changed starts anew
        live.set_phase("qd4+qd1", 11, &[(0, 1), (1, 4)]);
        live.add_one(0, 0, 11, Op::Read, second(10, 4096, 50_000));
        let lines = live.with(|s| Lines::of(s, 12, Some(40))).workloads;
        assert!(lines[0].starts_with("qd1 x1: 10 IOPS") && lines[1].starts_with("qd4 x4: 1,000 IOPS"), "{lines:?}");
        live.set_phase("qd4 x8", 12, &[(1, 8)]);
        assert_eq!(live.with(|s| Lines::of(s, 12, Some(40))).workloads, vec!["qd4 x8: starting"]);
        // a workload warming up (`ramp:`, not measured) says so until its warm-up ends
        let warm = Totals::new(1, "s", vec![WorkloadInfo { ramp_s: 5, ..info("w", None) }]);
        warm.set_phase("w", 2, &[(0, 1)]);
        assert_eq!(warm.with(|s| Lines::of(s, 3, None)).workloads, vec!["w x1: ramp, 4s left"]);
        assert_eq!(warm.with(|s| Lines::of(s, 7, None)).workloads, vec!["w x1: starting"]);
        // past the plan the view says it is finishing, not `70s/68s`
        assert!(
            live.with(|s| Lines::of(s, 45, Some(40))).plain(usize::MAX)[0].starts_with("[45s/40s finishing · qd4 x8]")
        );
        // the timeline's replanned end wins over the first plan
        live.set_planned(Some(48));
        assert!(
            live.with(|s| Lines::of(s, 45, Some(40))).plain(usize::MAX)[0]
                .starts_with("[45s/48s  93%, ETA 3s · qd4 x8]")
        );
        // a workload that ends by itself makes the end unknown: no ETA rather than a wrong one
        live.set_planned(None);
        assert!(
            live.with(|s| Lines::of(s, 45, Some(40))).plain(usize::MAX)[0].starts_with("[45s/? ETA unknown · qd4 x8]")
        );
    }

    #[test]
    fn many_workloads_print_their_total_and_the_busiest_within_the_width() {
        let names: Vec<String> = (0..16).map(|i| format!("vm-group-{i:02}-database-data-disk")).collect();
        let live = Totals::new(1, "s", names.iter().map(|n| info(n, None)).collect());
        let running: Vec<(usize, u32)> = (0..16).map(|i| (i, 1)).collect();
        live.set_phase("all", 0, &running);
        for i in 0..16 {
            live.add_one(i, 0, 3, Op::Read, second(100 + i as u64 * 10, 4096, 50_000));
        }
        let lines = live.with(|s| Lines::of(s, 4, Some(10))).plain(80);
        assert!(lines.iter().all(|l| l.chars().count() <= 80), "{lines:#?}");
        // 16 x 100 plus 10 x (0 + ... + 15) IOPS
        assert!(lines[0].ends_with("] 16 workloads, 2,800 IOPS in all"), "{lines:#?}");
        // the three busiest, in the scenario's order, then the rest counted
        assert!(lines[1].starts_with("  vm-group-13-database-data-disk x1: 230 IOPS"), "{lines:#?}");
        assert!(lines[3].starts_with("  vm-group-15-database-data-disk x1: 250 IOPS"), "{lines:#?}");
        assert_eq!(lines[4], "  +13 more");
        assert_eq!(lines.len(), 5);
        // told no width, one line as before
        assert_eq!(live.with(|s| Lines::of(s, 4, Some(10))).plain(usize::MAX).len(), 1);
    }

    #[test]
    fn transactions_are_tps_and_streams_gbit_per_second() {
        let live = Totals::new(1, "s", vec![info("oltp", None), info("net", None)]);
        live.set_phase("both", 0, &[(0, 2), (1, 1)]);
        live.add_one(0, 0, 3, Op::Txn, second(1870, 0, 1_000_000));
        let mut sent = OpStats::new(false);
        sent.bytes = 1_250_000_000;
        live.add_one(1, 2, 3, Op::Send, sent);
        let lines = live.with(|s| Lines::of(s, 4, Some(10))).workloads;
        assert!(lines[0].starts_with("oltp x2: 1,870 TPS p50 "), "{lines:?}");
        assert!(!lines[0].contains("MB/s") && !lines[0].contains("IOPS"), "{lines:?}");
        assert_eq!(lines[1], "net x1: 10.00 Gbit/s");
    }

    /// HammerDB's transactions are counted each second from the server, not timed: no
    /// latency is shown for them, never a p50 of 0 ns.
    #[test]
    fn transactions_counted_but_not_timed_show_no_latency() {
        let live = Totals::new(1, "s", vec![info("oltp", None)]);
        live.set_phase("run", 0, &[(0, 2)]);
        let mut counted = OpStats::new(false);
        counted.ops = 734;
        live.add_one(0, 0, 3, Op::Txn, counted);
        let lines = live.with(|s| Lines::of(s, 4, Some(10))).workloads;
        assert_eq!(lines[0], "oltp x2: 734 TPS", "{lines:?}");
    }
}
