//! The agent protocol: one JSON object per line over the agent's stdin (controller to
//! agent) and stdout (agent to controller). Versioned by [`VERSION`]; a controller and
//! an agent of different versions refuse each other at `hello`. docs/agent-protocol.md
//! is the reference.

use crate::error::Result;
use crate::metrics::{self, Op, OpStats, Sample, Verified};
use crate::store::{EventRow, ObservationRow};
use serde::{Deserialize, Serialize};

/// The protocol's version: bumped on any change to the messages below.
pub const VERSION: u32 = 6;

/// The longest line either side reads from the other: a sample of every op and block
/// size, or a scenario sent to prepare (itself bounded at 1 MiB), fits well within it;
/// a longer line is no peer's, and is never held whole.
pub const MAX_LINE: usize = 4 << 20;

/// The most block sizes one sample may count: a `bssplit` names a few dozen at most.
pub const MAX_SIZES: usize = 1024;

/// How far ahead of the controller's clock an agent's second may be: clocks are
/// measured apart by milliseconds, and a second is sent once it has closed.
pub const AHEAD_S: u32 = 10;

/// Lines of at most [`MAX_LINE`] bytes, in UTF-8, read from `inner`: a longer line or
/// one in another encoding is an error naming the bound (with a short prefix at most),
/// after which nothing more is read.
pub struct BoundedLines<R> {
    inner: R,
    broken: bool,
}

impl<R: std::io::BufRead> BoundedLines<R> {
    pub fn new(inner: R) -> BoundedLines<R> {
        BoundedLines { inner, broken: false }
    }
}

impl<R: std::io::BufRead> Iterator for BoundedLines<R> {
    type Item = std::result::Result<String, String>;

    fn next(&mut self) -> Option<Self::Item> {
        use std::io::{BufRead, Read};
        if self.broken {
            return None;
        }
        let mut buf = Vec::new();
        let read = (&mut self.inner).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut buf);
        let bad = |why: String| Some(Err(why));
        match read {
            Ok(0) => return None,
            Err(e) => return bad(e.to_string()),
            Ok(_) => {}
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        } else if buf.len() > MAX_LINE {
            self.broken = true;
            let start = String::from_utf8_lossy(&buf[..60.min(buf.len())]).into_owned();
            return bad(format!("a line longer than {} MiB (it began `{start}`)", MAX_LINE >> 20));
        }
        match String::from_utf8(buf) {
            Ok(line) => Some(Ok(line)),
            Err(e) => {
                self.broken = true;
                let start = String::from_utf8_lossy(&e.as_bytes()[..60.min(e.as_bytes().len())]).into_owned();
                bad(format!("a line that is not UTF-8 (it began `{start}`)"))
            }
        }
    }
}

/// Controller to agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Command {
    /// Answer with [`Reply::Clock`] at once: the controller measures offset and round trip.
    Clock { id: u64 },
    /// Lay out workload `idx` of the scenario (its text and `--set`s, loaded as the
    /// controller loaded it) on `targets`, without running it. `rate_iops` is its
    /// open-loop rate in all as placed (`rate_iops_per_host` times its hosts, which
    /// the agent's own load cannot know).
    Prepare {
        idx: usize,
        origin: String,
        text: String,
        sets: Vec<String>,
        workload: String,
        targets: Vec<String>,
        rate_iops: Option<f64>,
    },
    /// Start `count` workers of workload `idx` (prepared before), worker ids from
    /// `first_worker`, indices from `from` of `planned`. Times are in the agent's own
    /// clock: second 0 of the run clock is `clock_unix_ms`; the first worker begins
    /// `begin_ms` into the run clock (each next one `stagger_ms` later) and all end at
    /// second `end_t`.
    Start {
        idx: usize,
        first_worker: u32,
        from: u32,
        count: u32,
        planned: u32,
        clock_unix_ms: i64,
        begin_ms: u64,
        end_t: u64,
        stagger_ms: u64,
    },
    /// Write workload `idx`'s working set once (a timeline `prefill`), or zeros with
    /// `zero` (a `zero` step), on the files it was prepared on.
    Fill { idx: usize, zero: bool },
    /// Stop workload `idx`'s workers now.
    Stop { idx: usize },
    /// Stop everything and exit.
    Bye,
}

/// Agent to controller.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// First line: who the agent is. `version` is its build identity (version,
    /// commit, changes), which the controller's must equal.
    Hello {
        protocol: u32,
        version: String,
        host: String,
        cores: usize,
        memory_bytes: Option<u64>,
        /// The machine it runs on (its boot id): hosts on one machine share its CPU.
        #[serde(default)]
        machine: Option<String>,
        /// Its CPUs' shape (sockets, cores per socket, threads per core, NUMA nodes), as
        /// the run's environment records the controller's: null where sysfs hides it.
        #[serde(default)]
        cpu_topology: serde_json::Value,
    },
    Clock {
        id: u64,
        unix_ns: i64,
    },
    Prepared {
        idx: usize,
        files: Vec<(String, u64)>,
        /// True when every file was opened with O_DIRECT (false: the file system
        /// refused it, or it was not asked); None from an agent that does not say.
        #[serde(default)]
        direct: Option<bool>,
    },
    /// One worker's second of one op.
    Sample(WireSample),
    /// What the agent observed of its host in a second of the run clock: its own CPU
    /// (`fathom`), the host's (`host`) and the devices under its targets (`device:NAME`).
    Observed {
        rows: Vec<ObservationRow>,
    },
    /// What a program run by the agent recorded as the run's event (its closing
    /// figures: pgbench's report, TPC-C's NOPM), on the run clock.
    Event {
        event: EventRow,
    },
    /// Workload `idx`'s files were filled (`error`: why not).
    Filled {
        idx: usize,
        error: Option<String>,
    },
    /// Workload `idx`'s workers on this agent ended (`error`: why one failed).
    Ended {
        idx: usize,
        error: Option<String>,
    },
    /// A command could not be carried out.
    Error {
        idx: Option<usize>,
        message: String,
    },
    /// Nothing else was said for the agent's keepalive interval: the stream stays open
    /// through proxies that close idle ones. The controller reads it and moves on.
    Alive,
}

/// A [`Sample`] on the wire: histograms in their stored encoding (HDR V2 + deflate),
/// as hex.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireSample {
    pub workload: usize,
    pub worker: u32,
    pub t: u32,
    pub op: String,
    pub ops: u64,
    pub bytes: u64,
    pub latency_sum_ns: u64,
    pub latency: String,
    pub service: Option<String>,
    /// IOs per block size, `[size, ops]` (what the asked-vs-achieved split is read from).
    pub sizes: Vec<(u64, u64)>,
    /// Reads checked against their crc header, and those that failed.
    pub verify: Verified,
    /// When the agent sent it, in its own Unix ms (for the controller's lag figure).
    pub sent_unix_ms: i64,
}

impl WireSample {
    pub fn from_sample(s: &Sample, sent_unix_ms: i64) -> WireSample {
        WireSample {
            workload: s.workload,
            worker: s.worker,
            t: s.t,
            op: s.op.as_str().to_string(),
            ops: s.stats.ops,
            bytes: s.stats.bytes,
            latency_sum_ns: s.stats.latency_sum_ns,
            latency: hex(&metrics::encode(&s.stats.latency)),
            service: s.stats.service.as_ref().map(|h| hex(&metrics::encode(h))),
            sizes: s.stats.sizes.clone(),
            verify: s.stats.verify,
            sent_unix_ms,
        }
    }

    /// The sample, or why the agent's line is not one.
    pub fn to_sample(&self) -> Result<Sample> {
        let bad = |what: &str| crate::error::Error::failed(format!("agent sample: {what}"));
        let op = Op::find(&self.op).ok_or_else(|| bad("unknown op"))?;
        if self.sizes.len() > MAX_SIZES {
            return Err(bad(&format!(
                "{} block sizes, more than the {MAX_SIZES} a sample may count",
                self.sizes.len()
            )));
        }
        let mut stats = OpStats::new(self.service.is_some());
        stats.ops = self.ops;
        stats.bytes = self.bytes;
        stats.latency_sum_ns = self.latency_sum_ns;
        stats.sizes = self.sizes.clone();
        stats.verify = self.verify;
        stats.latency = metrics::decode(&unhex(&self.latency).ok_or_else(|| bad("latency is not hex"))?)?;
        if let Some(service) = &self.service {
            stats.service = Some(metrics::decode(&unhex(service).ok_or_else(|| bad("service is not hex"))?)?);
        }
        Ok(Sample { workload: self.workload, worker: self.worker, t: self.t, op, stats })
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_crosses_the_wire_unchanged() {
        let mut stats = OpStats::new(true);
        stats.ops = 3;
        stats.bytes = 3 * 4096;
        stats.latency_sum_ns = 6000;
        stats.sizes = vec![(4096, 2), (8192, 1)];
        stats.verify = Verified { good: 2, misplaced: 1, corrupt: 0 };
        for v in [1000, 2000, 3000] {
            stats.latency.record(v).unwrap();
            stats.service.as_mut().unwrap().record(v / 2).unwrap();
        }
        let s = Sample { workload: 2, worker: 9, t: 41, op: Op::Write, stats };
        let line = serde_json::to_string(&Reply::Sample(WireSample::from_sample(&s, 5))).unwrap();
        let Reply::Sample(w) = serde_json::from_str(&line).unwrap() else { panic!("{line}") };
        let back = w.to_sample().unwrap();
        assert_eq!((back.workload, back.worker, back.t, back.op), (2, 9, 41, Op::Write));
        assert_eq!((back.stats.ops, back.stats.bytes, back.stats.latency_sum_ns), (3, 12288, 6000));
        assert_eq!(back.stats.latency, s.stats.latency);
        assert_eq!(back.stats.service, s.stats.service);
        assert_eq!((back.stats.sizes, back.stats.verify), (s.stats.sizes.clone(), s.stats.verify));
        assert!(unhex("abc").is_none() && unhex("zz").is_none());
    }
}
