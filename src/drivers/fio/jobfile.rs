//! A workload profile as a fio job file: one job section per fathom worker (per IO slot
//! with psync), so fio's per-job reports map back to fathom's workers. Knobs fio cannot
//! express exactly are listed by [`inexact`], which the run turns into warnings.

use crate::scenario::{Arrival, IoProfile, Queue, Rw};
use crate::workload::Rng;
use crate::workload::access::Distribution;
use crate::workload::data::Content;
use std::fmt::Write as _;
use std::path::PathBuf;

/// fio's IO back end for the workload: io_uring like fathom's own engine, or psync with
/// one fio job per outstanding IO so `iodepth` keeps its meaning (as fathom's psync).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoEngine {
    IoUring,
    Psync,
}

/// One target as fio sees it.
pub struct FileSpec {
    pub path: PathBuf,
    /// Working set in bytes from the workload's offset.
    pub size: u64,
    pub direct: bool,
}

/// A knob fio runs differently from fathom; the run raises it as a warning.
#[derive(Debug, Clone, PartialEq)]
pub struct Inexact {
    pub knob: &'static str,
    pub why: String,
}

/// A translated workload.
pub struct JobFile {
    pub text: String,
    /// Each fio job's name and the index of the fathom worker it belongs to.
    pub jobs: Vec<(String, u32)>,
}

/// Translates workload `w` on `files`, running for `runtime_s` seconds.
/// `workload` names the fio jobs and seeds them; `job_count` is the workload's jobs.
pub fn translate(
    workload: &str,
    job_count: u32,
    w: &IoProfile,
    files: &[FileSpec],
    engine: IoEngine,
    runtime_s: u64,
) -> JobFile {
    let mut g = String::new();
    let _ = writeln!(g, "# fathom workload `{}`, translated for fio (engine: fio)", workload);
    let _ = writeln!(g, "# fathom stops fio at the workload's end; runtime leaves time to spare\n[global]");
    write_pattern(&mut g, w, files, engine);
    write_timing(&mut g, w, engine, runtime_s);
    write_content(&mut g, w);
    let workers = match w.queue {
        Queue::Shared => job_count,
        Queue::PerTarget => job_count * files.len() as u32,
    };
    let slots = if engine == IoEngine::IoUring { 1 } else { w.iodepth };
    write_pace(&mut g, w, workers * slots);
    let jobs = write_jobs(&mut g, workload, job_count, w, files, workers, slots);
    JobFile { text: g, jobs }
}

/// One `key=value` line of a job file.
fn line(g: &mut String, key: &str, value: &dyn std::fmt::Display) {
    let _ = writeln!(g, "{key}={value}");
}

/// The global lines of what the IO is: engine, direct, mix, block sizes, randomness.
fn write_pattern(g: &mut String, w: &IoProfile, files: &[FileSpec], engine: IoEngine) {
    line(g, "ioengine", &if engine == IoEngine::IoUring { "io_uring" } else { "psync" });
    line(g, "direct", &u8::from(files.iter().all(|f| f.direct)));
    line(g, "rw", &w.rw.name());
    if matches!(w.rw, Rw::Randrw | Rw::ReadWrite) {
        line(g, "rwmixread", &w.rwmixread);
    }
    if w.bs.is_single() {
        line(g, "bs", &w.bs.min());
    } else if let Some((min, max)) = w.bs.range() {
        line(g, "bsrange", &format!("{min}-{max}"));
    } else {
        let split: Vec<String> = w.bs.sizes().map(|(s, p)| format!("{s}/{p}")).collect();
        line(g, "bssplit", &split.join(":"));
    }
    if w.rw.is_random() {
        // fathom draws with replacement unless `randommap` asks for fio's default: a
        // map that does not repeat a block until the pass has touched them all
        if !w.randommap {
            line(g, "norandommap", &1);
        }
        if w.random_percent < 100 {
            line(g, "percentage_random", &w.random_percent);
        }
        if w.distribution != Distribution::Uniform {
            line(g, "random_distribution", &w.distribution);
        }
    }
    if let Some(z) = w.zones {
        // fio asks for the mode since 3.10: without it, `zonesize` is refused
        line(g, "zonemode", &"strided");
        line(g, "zonesize", &z.size);
        line(g, "zonerange", &z.range);
        line(g, "zoneskip", &z.skip);
    }
}

/// The global lines of how the IO runs: depth, how long, latency percentiles, syncs.
fn write_timing(g: &mut String, w: &IoProfile, engine: IoEngine, runtime_s: u64) {
    let depth = if engine == IoEngine::IoUring { w.iodepth } else { 1 };
    line(g, "iodepth", &depth);
    // a bounded workload ends after its IO (fio's default); runtime caps it as fathom's
    // duration does
    if w.bound.is_none() {
        line(g, "time_based", &1);
    }
    line(g, "runtime", &runtime_s);
    // percentiles and histogram bins of latency from submission, not only completion
    line(g, "lat_percentiles", &1);
    if w.fsync_every > 0 {
        line(g, if w.fdatasync { "fdatasync" } else { "fsync" }, &w.fsync_every);
    }
}

/// The global lines of what the written bytes hold, as fathom's data content.
fn write_content(g: &mut String, w: &IoProfile) {
    match w.data.content {
        Content::Random => line(g, "refill_buffers", &1),
        Content::Compressible(p) => {
            line(g, "refill_buffers", &1);
            line(g, "buffer_compress_percentage", &p);
            line(g, "buffer_compress_chunk", &4096);
            // the repeating part non-zero, as fathom's: zeros are suppressed, not compressed
            line(g, "buffer_pattern", &"\"fathom\"");
        }
        Content::Zero => line(g, "zero_buffers", &1),
    }
    if w.data.dedupe_percent > 0 {
        line(g, "dedupe_percentage", &w.data.dedupe_percent);
    }
}

/// The global lines of the workload's pace, its rate shared among `fio_jobs` jobs.
fn write_pace(g: &mut String, w: &IoProfile, fio_jobs: u32) {
    if let Some(rate) = w.rate_iops {
        // fio paces each direction on its own: a mixed workload gets a rate for each
        let per_job = |total: f64| {
            let read = w.rw.read_percent(w.rwmixread) as f64 / 100.0;
            let value = |share: f64| ((total * share / fio_jobs as f64).round() as u64).max(u64::from(share > 0.0));
            if read == 0.0 || read == 1.0 {
                value(1.0).to_string()
            } else {
                format!("{},{}", value(read), value(1.0 - read))
            }
        };
        match w.rate_mbps {
            // a byte rate is what fio paces natively
            Some(mbps) => line(g, "rate", &per_job(mbps * 1e6)),
            None => line(g, "rate_iops", &per_job(rate)),
        }
        if w.arrival == Arrival::Poisson {
            line(g, "rate_process", &"poisson");
        }
    }
    if !w.think_time.is_zero() {
        line(g, "thinktime", &w.think_time.as_micros());
    }
}

/// One fio job per fathom worker and IO slot, each with its files, range and seed.
/// Returns each job's name with the worker it belongs to.
fn write_jobs(
    g: &mut String,
    workload: &str,
    job_count: u32,
    w: &IoProfile,
    files: &[FileSpec],
    workers: u32,
    slots: u32,
) -> Vec<(String, u32)> {
    let mut jobs = Vec::new();
    let span = files.iter().map(|f| f.size).min().unwrap_or(0);
    let align = w.bs.min();
    for index in 0..workers {
        let (mine, index_in, of): (Vec<&FileSpec>, u32, u32) = match w.queue {
            Queue::Shared => (files.iter().collect(), index, job_count),
            Queue::PerTarget => (vec![&files[(index / job_count) as usize]], index % job_count, job_count),
        };
        // sequential workers take a slice each, as fathom's start evenly spaced; bounded
        // ones each pass over the whole working set, as fathom's and fio's jobs do, and
        // zoned ones each walk the zones of all of it
        let (offset, size) = if w.rw.is_random() || of == 1 || w.bound.is_some() || w.zones.is_some() {
            (w.offset, span)
        } else {
            let slice = span / align / of as u64 * align;
            (w.offset + slice * index_in as u64, slice.max(align))
        };
        for slot in 0..slots {
            let name =
                if slots == 1 { format!("{}.{index}", workload) } else { format!("{}.{index}.{slot}", workload) };
            let names: Vec<String> = mine.iter().map(|f| f.path.display().to_string().replace(':', "\\:")).collect();
            let _ = writeln!(g, "\n[{name}]");
            line(g, "filename", &names.join(":"));
            line(g, "offset", &offset);
            // fio's size is the job's total over its files
            line(g, "size", &(size * mine.len() as u64));
            line(g, "randseed", &(Rng::seed_from(workload, index as u64, slot as u64) >> 1));
            if let Some(b) = w.bound {
                // a worker's amount, shared by its psync slots (one fio job each)
                if let Some(bytes) = b.bytes(size * mine.len() as u64) {
                    line(g, "io_size", &(bytes / slots as u64 / align * align).max(align));
                }
                if let Some(n) = b.number_ios {
                    line(g, "number_ios", &(n / slots as u64).max(1));
                }
            }
            jobs.push((name, index));
        }
    }
    jobs
}

/// The knobs of `w` that fio runs differently from fathom's own engine.
pub fn inexact(w: &IoProfile, engine: IoEngine) -> Vec<Inexact> {
    let mut notes = Vec::new();
    let mut note = |knob, why: &str| notes.push(Inexact { knob, why: why.to_string() });
    match w.distribution {
        Distribution::Uniform => {}
        Distribution::Pareto(_) => note(
            "distribution",
            "fio reads pareto:H as a power, not as fathom's hot share (0.8 = 80% of IOs on 20%), \
             and scatters the hot blocks over the working set",
        ),
        _ => note("distribution", "fio scatters the hot blocks over the working set; fathom keeps them at its start"),
    }
    if w.rate_iops.is_some() {
        if w.rate_mbps.is_none() && !w.bs.is_single() {
            note("rate_iops", "with several block sizes fio paces bytes, not IOs, and delivers fewer IOPS than asked");
        }
        note(
            "rate",
            "fio times each IO from its submission: a stall that delays IOs is missing from its latency \
             (coordinated omission), and its service time is the same figure",
        );
    }
    if w.fsync_every > 0 && engine == IoEngine::IoUring && w.iodepth > 1 {
        note(
            "fsync_every",
            "with several IOs in flight fio syncs whenever it finds its write count at a multiple of N, \
             several times per N writes (a sync per 9.5 writes for N = 32 at depth 4, fio 3.33)",
        );
    }
    if !w.think_time.is_zero() && engine == IoEngine::IoUring && w.iodepth > 1 {
        note("think_time", "fio pauses the whole job after each IO; fathom pauses each IO slot");
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::blocksize::BlockSizes;

    fn file(path: &str, size: u64) -> FileSpec {
        FileSpec { path: path.into(), size, direct: true }
    }

    fn value<'a>(text: &'a str, section: &str, key: &str) -> Option<&'a str> {
        let mut current = "";
        for l in text.lines() {
            if let Some(s) = l.strip_prefix('[') {
                current = s.trim_end_matches(']');
            } else if let Some((k, v)) = l.split_once('=')
                && current == section
                && k == key
            {
                return Some(v);
            }
        }
        None
    }

    #[test]
    fn a_mixed_profile_keeps_every_knob() {
        let mut w = crate::workload::tests::profile(Rw::Randrw);
        w.rwmixread = 70;
        w.bs = BlockSizes::parse_split("8k/90:32k/10").unwrap();
        w.distribution = "zoned:60/10:40/90".parse().unwrap();
        w.random_percent = 90;
        w.fsync_every = 16;
        w.fdatasync = true;
        w.data.content = Content::Compressible(50);
        w.zones = Some(crate::scenario::model::Zones { size: 1 << 20, range: 2 << 20, skip: 30 << 20 });
        let jobs = 2;
        let j = translate("w", jobs, &w, &[file("/d/a", 1 << 30)], IoEngine::IoUring, 17);
        let t = &j.text;
        assert_eq!(value(t, "global", "rw"), Some("randrw"));
        assert_eq!(value(t, "global", "rwmixread"), Some("70"));
        assert_eq!(value(t, "global", "bssplit"), Some("8192/90:32768/10"));
        assert_eq!(value(t, "global", "random_distribution"), Some("zoned:60/10:40/90"));
        assert_eq!(value(t, "global", "percentage_random"), Some("90"));
        assert_eq!(value(t, "global", "fdatasync"), Some("16"));
        assert_eq!(value(t, "global", "buffer_compress_percentage"), Some("50"));
        assert_eq!(value(t, "global", "runtime"), Some("17"));
        let zones: Vec<Option<&str>> =
            ["zonemode", "zonesize", "zonerange", "zoneskip"].iter().map(|k| value(t, "global", k)).collect();
        assert_eq!(zones, [Some("strided"), Some("1048576"), Some("2097152"), Some("31457280")]);
        assert_eq!(j.jobs.iter().map(|(_, i)| *i).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(value(t, &j.jobs[1].0, "filename"), Some("/d/a"));
        assert_ne!(value(t, &j.jobs[0].0, "randseed"), value(t, &j.jobs[1].0, "randseed"));
        let notes = inexact(&w, IoEngine::IoUring);
        assert_eq!(notes.iter().map(|n| n.knob).collect::<Vec<_>>(), vec!["distribution"]);
        w.iodepth = 4;
        let notes = inexact(&w, IoEngine::IoUring);
        assert_eq!(notes.iter().map(|n| n.knob).collect::<Vec<_>>(), vec!["distribution", "fsync_every"]);
        assert_eq!(inexact(&w, IoEngine::Psync).len(), 1, "psync runs a job per slot, each syncing every 16 writes");
    }

    #[test]
    fn rate_with_a_split_and_queues_per_target() {
        let mut w = crate::workload::tests::profile(Rw::Randread);
        w.bs = BlockSizes::parse_split("4k/50:64k/50").unwrap();
        w.rate_iops = Some(1000.0);
        w.queue = Queue::PerTarget;
        let mut jobs = 2;
        let j = translate("w", jobs, &w, &[file("/d/a", 1 << 20), file("/d/b:c", 1 << 20)], IoEngine::IoUring, 5);
        // 4 workers share 1000 IOPS; fio paces bytes with several sizes
        assert_eq!(value(&j.text, "global", "rate_iops"), Some("250"));
        // fio paces reads and writes apart: 1000 IOPS at 70% reads is 700 + 300
        w.rw = Rw::Randrw;
        w.rwmixread = 70;
        w.queue = Queue::Shared;
        jobs = 1;
        let mixed = translate("w", jobs, &w, &[file("/d/a", 1 << 20)], IoEngine::IoUring, 5);
        assert_eq!(value(&mixed.text, "global", "rate_iops"), Some("700,300"));
        let notes = inexact(&w, IoEngine::IoUring);
        assert_eq!(notes.iter().map(|n| n.knob).collect::<Vec<_>>(), vec!["rate_iops", "rate"]);
        assert_eq!(value(&j.text, &j.jobs[3].0, "filename"), Some("/d/b\\:c"));
    }

    #[test]
    fn a_bounded_workload_passes_its_amount_and_is_not_time_based() {
        let mut w = crate::workload::tests::profile(Rw::Read);
        w.bound =
            Some(crate::scenario::model::Bound { io_size: None, passes: Some(2), number_ios: None, capped: false });
        let j = translate("w", 2, &w, &[file("/d/a", 8 << 20)], IoEngine::IoUring, 99);
        assert_eq!(value(&j.text, "global", "time_based"), None);
        assert_eq!(value(&j.text, "global", "runtime"), Some("99"));
        // each job passes twice over the whole 8 MiB from the start, as fio's numjobs do
        for (name, _) in &j.jobs {
            assert_eq!(value(&j.text, name, "size"), Some("8388608"));
            assert_eq!(value(&j.text, name, "offset"), Some("0"));
            assert_eq!(value(&j.text, name, "io_size"), Some("16777216"));
        }
        w.bound =
            Some(crate::scenario::model::Bound { io_size: None, passes: None, number_ios: Some(1000), capped: true });
        w.iodepth = 4;
        let j = translate("w", 1, &w, &[file("/d/a", 8 << 20)], IoEngine::Psync, 9);
        // psync: four fio jobs share the worker's 1000 IOs
        assert_eq!(value(&j.text, &j.jobs[0].0, "number_ios"), Some("250"));
        assert_eq!(value(&j.text, &j.jobs[0].0, "io_size"), None);
    }

    #[test]
    fn psync_runs_a_job_per_slot_and_shared_queues_list_every_file() {
        let mut w = crate::workload::tests::profile(Rw::Read);
        w.iodepth = 3;
        let jobs = 2;
        let j = translate("w", jobs, &w, &[file("/d/a", 1 << 20), file("/d/b", 1 << 20)], IoEngine::Psync, 5);
        assert_eq!(j.jobs.len(), 6);
        assert_eq!(j.jobs[4].1, 1);
        assert_eq!(value(&j.text, "global", "iodepth"), Some("1"));
        assert_eq!(value(&j.text, &j.jobs[0].0, "filename"), Some("/d/a:/d/b"));
        // sequential workers take half the working set each; size counts both files
        assert_eq!(value(&j.text, &j.jobs[3].0, "offset"), Some("524288"));
        assert_eq!(value(&j.text, &j.jobs[3].0, "size"), Some("1048576"));
        // zoned workers each walk the zones of the whole working set, from its start
        w.zones = Some(crate::scenario::model::Zones { size: 4096, range: 4096, skip: 4096 });
        let j = translate("w", jobs, &w, &[file("/d/a", 1 << 20), file("/d/b", 1 << 20)], IoEngine::Psync, 5);
        assert_eq!(value(&j.text, &j.jobs[3].0, "offset"), Some("0"));
        assert_eq!(value(&j.text, &j.jobs[3].0, "size"), Some("2097152"));
    }
}
