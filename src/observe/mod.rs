//! What fathom observes besides its own IOs: the environment of a run, and, per second
//! while it runs, the host's CPU, fathom's own CPU, the devices under the targets and
//! remote Prometheus queries. Observers run on threads of their own and send what they
//! see to the run sink as they go, so an interrupted run keeps it.

pub mod diskstats;
pub mod environment;
pub mod host;
pub mod preflight;
pub mod promql;

use crate::error::{Error, Result};
use crate::scenario::RemoteQueries;
use crate::store::ObservationRow;
use crate::store::sink::{Record, Sink};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The observer threads of a run; `stop` ends and joins them.
pub struct Observers {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Result<()>>>,
}

impl Observers {
    /// Starts sampling the host, fathom, the programs it runs (`programs`: those
    /// running now, as kill(2) targets) and `devices` every second of the run clock
    /// (each second's values are stored as it closes), and `remote`'s queries every
    /// `remote.interval`, sending them to `sink`.
    pub fn start(
        sink: &Sink,
        clock_start: Instant,
        devices: Vec<String>,
        programs: fn() -> Vec<i32>,
        remote: Option<RemoteQueries>,
        progress: Arc<dyn Fn(&str) + Send + Sync>,
    ) -> Result<Observers> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        let local = {
            let (sink, stop) = (sink.clone(), stop.clone());
            spawn("observe-host", move || local(sink, clock_start, &devices, programs, &stop))?
        };
        threads.push(local);
        if let Some(remote) = remote {
            let (sink, stop) = (sink.clone(), stop.clone());
            threads.push(spawn("observe-remote", move || remote_loop(sink, clock_start, &remote, &stop, &*progress))?);
        }
        Ok(Observers { stop, threads })
    }

    /// Ends the observers after their last full second and waits for them.
    pub fn stop(self) -> Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().unwrap_or_else(|_| Err(Error::failed("an observer panicked")))?;
        }
        Ok(())
    }
}

fn spawn(name: &str, f: impl FnOnce() -> Result<()> + Send + 'static) -> Result<JoinHandle<Result<()>>> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map_err(|e| Error::failed(format!("starting the {name} thread: {e}")))
}

/// Host CPU, fathom's CPU, its programs' (source `programs`, in the seconds any ran:
/// fio, pgbench and PostgreSQL, iperf3 do the work of a driver's workload, not fathom)
/// and device figures for each second `[t, t+1)` of the run.
fn local(
    sink: Sink,
    clock_start: Instant,
    devices: &[String],
    programs: fn() -> Vec<i32>,
    stop: &AtomicBool,
) -> Result<()> {
    let disks = || {
        let all = diskstats::read_all();
        devices.iter().filter_map(|d| all.get(d).map(|s| (d.clone(), *s))).collect::<Vec<_>>()
    };
    let (mut cpu, mut own, mut disk, mut at) =
        (host::CpuTimes::read(), host::process_cpu_seconds(), disks(), Instant::now());
    let mut theirs = host::programs_cpu_ticks(&programs());
    let first = clock_start.elapsed().as_secs() + 1;
    for t in first.. {
        if !crate::clock::sleep_until(clock_start + Duration::from_secs(t), stop) {
            return Ok(());
        }
        let (cpu_now, own_now, disk_now, now) =
            (host::CpuTimes::read(), host::process_cpu_seconds(), disks(), Instant::now());
        let running = programs();
        let theirs_now = host::programs_cpu_ticks(&running);
        let secs = now.duration_since(at).as_secs_f64();
        let row = |source: &str, name: &str, value: f64| ObservationRow {
            t: t as i64 - 1,
            source: source.to_string(),
            name: name.to_string(),
            value,
        };
        let mut rows = vec![row("fathom", "cpu_cores", (own_now - own) / secs)];
        if !running.is_empty() || !theirs.is_empty() {
            rows.push(row("programs", "cpu_cores", host::programs_cpu_seconds(&theirs, &theirs_now) / secs));
        }
        if let (Some(a), Some(b)) = (&cpu, &cpu_now) {
            rows.extend(host::percent(a, b).into_iter().map(|(n, v)| row("host", n, v)));
        }
        for ((name, a), (_, b)) in disk.iter().zip(&disk_now) {
            let source = format!("device:{name}");
            rows.extend(diskstats::iostat(a, b, secs).into_iter().map(|(n, v)| row(&source, n, v)));
        }
        sink.send(Record::Observations(rows));
        (cpu, own, disk, at, theirs) = (cpu_now, own_now, disk_now, now, theirs_now);
    }
    Ok(())
}

/// The remote queries every interval; each value is stored at the second it was taken.
/// Failures are said once per query, not every interval, and do not stop the run.
fn remote_loop(
    sink: Sink,
    clock_start: Instant,
    remote: &RemoteQueries,
    stop: &AtomicBool,
    progress: &dyn Fn(&str),
) -> Result<()> {
    let client = promql::client(remote)?;
    let mut said: Vec<String> = Vec::new();
    let mut next = Instant::now();
    loop {
        if !crate::clock::sleep_until(next, stop) {
            return Ok(());
        }
        let t = clock_start.elapsed().as_secs() as i64;
        let mut rows = Vec::new();
        for result in promql::query_all(&client, remote) {
            match result {
                Ok(points) => rows.extend(points.into_iter().map(|(name, value)| ObservationRow {
                    t,
                    source: "prometheus".into(),
                    name,
                    value,
                })),
                Err(e) if !said.contains(&e) => {
                    progress(&format!("observe: {}: {e}", remote.url));
                    said.push(e);
                }
                Err(_) => {}
            }
        }
        sink.send(Record::Observations(rows));
        next += remote.interval;
    }
}
