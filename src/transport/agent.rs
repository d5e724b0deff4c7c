//! `fathom agent`: runs workers on this host for a controller elsewhere, speaking the
//! [`protocol`](super::protocol) over stdin and stdout. It has no state of its own
//! beyond the run: it lays out what it is told, starts and stops workers, and sends each
//! worker's seconds as they close and what it observes of its host each second. When its stdin closes (the controller, or the ssh
//! connection, is gone) it stops every worker within 2 s and exits: no orphans.

use super::protocol::{BoundedLines, Command, Reply, VERSION, WireSample};
use crate::drivers::{LaunchContext, Ready};
use crate::engine::{self, WorkerThread, target};
use crate::error::{Error, Result};
use crate::metrics::Sample;
use crate::observe::{Observers, RunClock, diskstats, host, network};
use crate::scenario::{Kind, Override, Scenario, Source};
use crate::store::sink::{Record, Sink};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Writes replies, one line each, from any thread, and when it last did.
#[derive(Clone)]
struct Out(Arc<Mutex<(std::io::Stdout, Instant)>>);

impl Out {
    fn new() -> Out {
        Out(Arc::new(Mutex::new((std::io::stdout(), Instant::now()))))
    }

    fn send(&self, reply: &Reply) {
        let line = serde_json::to_string(reply).expect("replies serialize");
        let mut out = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // a controller that is gone shows as stdin closing; nothing to do here
        let _ = writeln!(out.0, "{line}");
        let _ = out.0.flush();
        out.1 = Instant::now();
    }

    /// How long nothing was said.
    fn quiet_for(&self) -> Duration {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).1.elapsed()
    }

    /// Says `alive` whenever nothing else was said for `every` (zero: never). A silent
    /// stretch (a long layout, a `wait` before the first start) would otherwise send
    /// nothing, and a stream that closes when idle (a proxy, a load balancer, the
    /// kubelet's `kubectl exec` streams) would cut the run. The thread lives as long as
    /// the agent.
    fn keep_alive(&self, every: Duration) {
        if every.is_zero() {
            return;
        }
        let out = self.clone();
        let beat = move || loop {
            let quiet = out.quiet_for();
            if quiet >= every {
                out.send(&Reply::Alive);
            } else {
                std::thread::sleep(every - quiet);
            }
        };
        // without the thread, the agent serves as before: only idle streams are at risk
        let _ = std::thread::Builder::new().name("keepalive".into()).spawn(beat);
    }
}

/// A workload laid out on this host: its files, ready for the controller's starts; or
/// a program's, its server readied by its driver.
struct LaidOut {
    workload: Arc<crate::scenario::Workload>,
    files: Vec<Arc<target::DataFile>>,
    stop: Arc<AtomicBool>,
    program: Option<Program>,
}

/// A program's workload readied here: what its driver started (a throwaway server,
/// stopped when the agent finishes) and the directory for its program's files.
struct Program {
    ready: Box<dyn Ready>,
    dir: PathBuf,
}

/// Runs the agent until `bye` or the end of stdin. `name` is how the controller's
/// inventory calls this host; `keepalive`, how long it may stay silent.
pub fn run(name: &str, keepalive: Duration) -> i32 {
    let out = Out::new();
    say_hello(&out, name);
    out.keep_alive(keepalive);
    let abort = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel::<Sample>();
    // a start's end is said after every sample its workers sent: they were in the
    // channel before their threads were joined
    let (ended_tx, ended_rx) = std::sync::mpsc::channel::<Reply>();
    let forward = forward_samples(&out, rx, ended_rx);
    let (sink, records) = forward_records(&out);
    let mut agent = Agent {
        out: out.clone(),
        abort: abort.clone(),
        tx,
        ended_tx,
        sink,
        records,
        laid_out: HashMap::new(),
        joiners: Vec::new(),
        observing: None,
    };
    let broken = Arc::new(AtomicBool::new(false));
    for command in commands(&out, abort.clone(), broken.clone()) {
        match command {
            Command::Clock { id } => out.send(&Reply::Clock { id, unix_ns: crate::clock::unix_ns() }),
            Command::Prepare { idx, origin, text, sets, workload, targets, rate_iops } => {
                match lay_out(&origin, &text, &sets, &workload, &targets, rate_iops, &abort) {
                    Ok(w) => {
                        let files = w.files.iter().map(|f| (f.path.display().to_string(), f.size)).collect();
                        let direct = Some(w.files.iter().all(|f| f.direct));
                        agent.laid_out.insert(idx, w);
                        out.send(&Reply::Prepared { idx, files, direct });
                    }
                    Err(e) => out.send(&Reply::Error { idx: Some(idx), message: e.to_string() }),
                }
            }
            start @ Command::Start { .. } => agent.start(start),
            Command::Fill { idx, zero } => agent.fill(idx, zero),
            Command::Stop { idx } => {
                if let Some(p) = agent.laid_out.get(&idx) {
                    p.stop.store(true, Ordering::Relaxed);
                }
            }
            Command::Bye => break,
        }
    }
    agent.finish(forward);
    // a controller's line that broke the protocol's bounds ends the agent, not quietly
    use crate::error::exit;
    if broken.load(Ordering::Relaxed) { exit::BAD_INPUT } else { exit::SUCCESS }
}

/// Says hello: the protocol, this build, and what the controller should know of the host.
fn say_hello(out: &Out, name: &str) {
    let memory_bytes = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let kb = m.lines().find_map(|l| l.strip_prefix("MemTotal:"))?.trim().trim_end_matches(" kB").parse::<u64>();
        kb.ok().map(|kb| kb * 1024)
    });
    out.send(&Reply::Hello {
        protocol: VERSION,
        version: env!("BUILD_IDENTITY").to_string(),
        host: name.to_string(),
        cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        memory_bytes,
        machine: Some(crate::observe::environment::machine()),
        cpu_topology: crate::observe::environment::cpu_topology(),
    });
}

/// Sends the workers' samples to the controller as they come, on a thread of its own.
/// A start's end is said only after the samples already in the channel, so the
/// controller has them all when it hears of it. The thread ends when the workers'
/// channel closes.
fn forward_samples(
    out: &Out,
    rx: std::sync::mpsc::Receiver<Sample>,
    ended_rx: std::sync::mpsc::Receiver<Reply>,
) -> std::thread::JoinHandle<()> {
    let out = out.clone();
    std::thread::spawn(move || {
        let sample = |s: Sample| out.send(&Reply::Sample(WireSample::from_sample(&s, crate::clock::unix_ms())));
        loop {
            let disconnected = match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(s) => {
                    sample(s);
                    false
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => false,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => true,
            };
            while let Ok(ended) = ended_rx.try_recv() {
                while let Ok(s) = rx.try_recv() {
                    sample(s);
                }
                out.send(&ended);
            }
            if disconnected {
                return;
            }
        }
    })
}

/// What the agent holds while it serves a controller: the workloads laid out here and
/// the threads it started.
struct Agent {
    out: Out,
    abort: Arc<AtomicBool>,
    tx: Sender<Sample>,
    ended_tx: Sender<Reply>,
    /// Where programs record their events and figures, sent on to the controller.
    sink: Sink,
    records: std::thread::JoinHandle<()>,
    laid_out: HashMap<usize, LaidOut>,
    joiners: Vec<std::thread::JoinHandle<()>>,
    observing: Option<Observing>,
}

impl Agent {
    /// Starts workers of a laid-out workload on the controller's run clock.
    /// The host is observed from the first start on, as the controller observes its own.
    fn start(&mut self, command: Command) {
        let Command::Start { idx, first_worker, from, count, planned, clock_unix_ms, begin_ms, end_t, stagger_ms } =
            command
        else {
            unreachable!("only starts are passed here")
        };
        let out = &self.out;
        let Some(p) = self.laid_out.get(&idx) else {
            out.send(&Reply::Error { idx: Some(idx), message: "start before prepare".into() });
            return;
        };
        // the run clock's second 0 as an instant of this host's monotonic clock
        let behind = Duration::from_millis(crate::clock::unix_ms().saturating_sub(clock_unix_ms).max(0) as u64);
        let ahead = Duration::from_millis(clock_unix_ms.saturating_sub(crate::clock::unix_ms()).max(0) as u64);
        let clock_start = Instant::now().checked_sub(behind).unwrap_or_else(Instant::now) + ahead;
        // observed from the first start on, on the run clock, as the controller observes its own host
        if self.observing.is_none() {
            self.observing = Some(observe(out, clock_start, &self.laid_out));
        }
        let workers = engine::Workers {
            workload_idx: idx,
            workload: p.workload.clone(),
            files: p.files.clone(),
            engine: p.workload.engine.unwrap_or(crate::scenario::EngineKind::IoUring),
            first_worker,
            planned,
            clock_start,
            end: clock_start + Duration::from_secs(end_t),
            tx: self.tx.clone(),
            stop: p.stop.clone(),
            abort: self.abort.clone(),
            unsent: Default::default(),
        };
        let begin = clock_start + Duration::from_millis(begin_ms);
        if let Some(program) = &p.program {
            let launch = LaunchContext {
                workload_idx: idx,
                workload: p.workload.clone(),
                engine: None,
                files: Vec::new(),
                // a program numbers its workers from 0 on each host
                first_worker: first_worker + from,
                planned,
                workers: from..from + count,
                begin,
                stagger: Duration::from_millis(stagger_ms),
                clock_start,
                clock_unix_ms,
                end_t,
                uring_ok: false,
                dir: program.dir.clone(),
                sink: self.sink.clone(),
                tx: self.tx.clone(),
                stop: p.stop.clone(),
                abort: self.abort.clone(),
                io_end: Default::default(),
                unsent: Default::default(),
            };
            match program.ready.start(&launch) {
                Ok(threads) => self.joiners.push(join_later(idx, threads, self.ended_tx.clone())),
                Err(e) => out.send(&Reply::Error { idx: Some(idx), message: e.to_string() }),
            }
            return;
        }
        match workers.start(from, count, begin, Duration::from_millis(stagger_ms)) {
            Ok(threads) => self.joiners.push(join_later(idx, threads, self.ended_tx.clone())),
            Err(e) => out.send(&Reply::Error { idx: Some(idx), message: format!("starting workers: {e}") }),
        }
    }

    /// Fills a laid-out workload's files on a thread, so clock requests are answered
    /// meanwhile and bye stops it.
    fn fill(&mut self, idx: usize, zero: bool) {
        let Some(p) = self.laid_out.get(&idx) else {
            self.out.send(&Reply::Error { idx: Some(idx), message: "fill before prepare".into() });
            return;
        };
        let (w, files, out, abort) = (p.workload.clone(), p.files.clone(), self.out.clone(), self.abort.clone());
        // on a thread: clock requests are answered meanwhile, and bye stops it
        self.joiners.push(std::thread::spawn(move || {
            let io = w.io().expect("only IO workloads are laid out on hosts");
            let filled = files.iter().try_for_each(|f| target::fill(&w.name, io, f, zero, &abort));
            out.send(&Reply::Filled { idx, error: filled.err().map(|e| e.to_string()) });
        }));
    }

    /// Stops every worker and waits for them, then closes the workers' channels so the
    /// forwarding thread sends what is left and ends, and waits for it.
    fn finish(self, forward: std::thread::JoinHandle<()>) {
        // bye, or stdin closed: stop every worker (they look at the flag between IOs and
        // at least every 100 ms while waiting) and wait for them
        self.abort.store(true, Ordering::Relaxed);
        for p in self.laid_out.values() {
            p.stop.store(true, Ordering::Relaxed);
        }
        for j in self.joiners {
            let _ = j.join();
        }
        // the programs' servers, and their files, go once their clients have ended
        for (idx, p) in self.laid_out {
            let Some(program) = p.program else { continue };
            if let Err(e) = program.ready.stop() {
                self.out.send(&Reply::Error { idx: Some(idx), message: e.to_string() });
            }
            let _ = std::fs::remove_dir_all(&program.dir);
        }
        drop(self.sink);
        let _ = self.records.join();
        if let Some(o) = self.observing {
            if let Some(observers) = o.observers {
                let _ = observers.stop();
            }
            let _ = o.forward.join();
        }
        drop(self.tx);
        drop(self.ended_tx);
        let _ = forward.join();
    }
}

/// The controller's commands, read on a thread of their own so that its leaving (bye,
/// or stdin closing) sets `abort` at once, stopping a layout under way. A line over
/// the protocol's bound or not in UTF-8 is said on stderr (its start at most), sets
/// `broken`, and ends the agent as its leaving does.
fn commands(out: &Out, abort: Arc<AtomicBool>, broken: Arc<AtomicBool>) -> std::sync::mpsc::Receiver<Command> {
    let (tx, rx) = std::sync::mpsc::channel();
    let out = out.clone();
    std::thread::spawn(move || {
        for line in BoundedLines::new(std::io::stdin().lock()) {
            let line = match line {
                Ok(line) => line,
                Err(why) => {
                    crate::terminal::eprint(format!("fathom agent: {why}: not a command of protocol {VERSION}\n"));
                    broken.store(true, Ordering::Relaxed);
                    break;
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Command>(&line) {
                Ok(Command::Bye) => break,
                Ok(c) => {
                    if tx.send(c).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    out.send(&Reply::Error { idx: None, message: format!("not a command of protocol {VERSION}: {e}") })
                }
            }
        }
        abort.store(true, Ordering::Relaxed);
    });
    rx
}

/// Loads the scenario as the controller did and lays out workload `name` on `targets`, open loop at `rate_iops` in all (as the controller placed it)
/// if given; a program's workload is readied by its driver instead.
fn lay_out(
    origin: &str,
    text: &str,
    sets: &[String],
    name: &str,
    targets: &[String],
    rate_iops: Option<f64>,
    abort: &AtomicBool,
) -> Result<LaidOut> {
    let sets: Vec<Override> = sets.iter().map(|s| s.parse()).collect::<Result<_>>()?;
    let scenario = Scenario::load_on_hosts(&Source { origin: origin.to_string(), text }, &sets)?;
    let mut w = scenario
        .workloads
        .into_iter()
        .find(|w| w.name == name)
        .ok_or_else(|| Error::input(format!("no workload `{name}`")))?;
    if w.program().is_some() {
        return ready_program(Scenario { workloads: vec![w], ..scenario }, targets, abort);
    }
    if let Some(io) = w.io_mut() {
        if !targets.is_empty() {
            io.targets = targets.iter().map(Into::into).collect();
        }
        io.rate_iops = rate_iops;
    }
    // `queue: per_target`: each target of this host gets its own `per_host` workers;
    // appenders: each of this host's `per_host` workers a file of its own
    if let Some(p) = &w.placement
        && w.io().is_some_and(|io| io.queue == crate::scenario::Queue::PerTarget || io.extend)
    {
        w.workers = p.per_host;
    }
    // as on the controller: io_uring falls back to psync where the kernel refuses it
    if w.engine == Some(crate::scenario::EngineKind::IoUring) && engine::probe_io_uring().is_err() {
        w.engine = Some(crate::scenario::EngineKind::Psync);
    }
    let opts = target::Options { allow_device_write: false, shrink_to_fit: false };
    let mut warnings = Vec::new();
    let files = target::prepare(std::slice::from_ref(&w), &opts, abort, &mut |w| warnings.push(w))?;
    let files = files.into_iter().next().unwrap_or_default().into_iter().map(Arc::new).collect();
    Ok(LaidOut { workload: Arc::new(w), files, stop: Arc::new(AtomicBool::new(false)), program: None })
}

/// Readies the one program workload of `scenario` on this host as its driver does on
/// the controller: its program checked, its server started in the first of `targets`
/// (this host's storage under test) and its database loaded. `abort` (the controller
/// gone, or Ctrl-C there) stops it and removes what it started.
fn ready_program(mut scenario: Scenario, targets: &[String], abort: &AtomicBool) -> Result<LaidOut> {
    let w = &mut scenario.workloads[0];
    // here it runs as a workload of this host alone
    w.placement = None;
    let spec = w.program().expect("a program's workload");
    let placed = spec.on_host(targets.first().map(Path::new));
    w.kind = Kind::Program(placed.ok_or_else(|| Error::input(format!("{}: runs on the controller only", w.name)))?);
    let dir = std::env::temp_dir().join(format!("fathom-agent-{}-{}", std::process::id(), w.name));
    let driver = crate::drivers::of(w, None);
    driver.check(&scenario, abort)?;
    let ready = driver.prepare(&scenario, &dir, abort, &|_: &str| {})?;
    let program = Some(Program { ready, dir });
    let workload = Arc::new(scenario.workloads.remove(0));
    Ok(LaidOut { workload, files: Vec::new(), stop: Arc::new(AtomicBool::new(false)), program })
}

/// The agent's observers (its own CPU, the host's, the devices under its targets, its
/// network interfaces) and the thread that sends what they see to the controller.
struct Observing {
    /// None when they could not start: the run goes on unobserved here.
    observers: Option<Observers>,
    forward: std::thread::JoinHandle<()>,
}

/// Starts observing this host every second of the run clock starting at `clock_start`:
/// the devices are those under the files `laid_out`.
fn observe(out: &Out, clock_start: Instant, laid_out: &HashMap<usize, LaidOut>) -> Observing {
    let paths: Vec<PathBuf> = laid_out.values().flat_map(|l| l.files.iter().map(|f| f.path.clone())).collect();
    let (sink, forward) = forward_records(out);
    let host = host::Local { devices: diskstats::devices_of(&paths), programs: Vec::new };
    let clock =
        RunClock { start: clock_start, unix_ms: crate::clock::unix_ms() - clock_start.elapsed().as_millis() as i64 };
    // what the agent runs talks to other hosts, not over its loopback
    let network = network::Network::here(false);
    let observers = Observers::start(&sink, clock, vec![Box::new(host), Box::new(network)]);
    Observing { observers: observers.ok(), forward }
}

/// A sink whose observations and events go to the controller as they come, on a
/// thread that ends once every clone of the sink is dropped.
fn forward_records(out: &Out) -> (Sink, std::thread::JoinHandle<()>) {
    let (sink, records) = Sink::new();
    let out = out.clone();
    let forward = std::thread::spawn(move || {
        for record in records {
            match record {
                Record::Observations(rows) => out.send(&Reply::Observed { rows }),
                Record::Event(event) => out.send(&Reply::Event { event }),
                _ => {}
            }
        }
    });
    (sink, forward)
}

/// Waits for a start's threads, then says the workload ended (with the first error).
fn join_later(idx: usize, threads: Vec<(WorkerThread, String)>, ended: Sender<Reply>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut error = None;
        for (handle, who) in threads {
            if let Err(e) =
                handle.join().unwrap_or_else(|_| Err(crate::error::Error::failed(format!("{who} panicked"))))
            {
                error.get_or_insert(e.to_string());
            }
        }
        let _ = ended.send(Reply::Ended { idx, error });
    })
}
