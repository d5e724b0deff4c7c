//! `--engine fio` on a job file: the user's own sections run by fio as written, not
//! mapped. Each section becomes one fio job file of its own (its `[global]` options
//! included, `include`s and `${VAR}`s read as fio reads them) with only what fathom must
//! change rewritten: the targets (`--target`, by the mapping's rules), the `--set`s,
//! the job order (fathom's timeline runs `stonewall`, `wait_for` and `startdelay`, as
//! for the mapped file), and what fio reports (per job, with latency bins). Options the
//! mapping refuses stay: that is the point. docs/fio-job-files.md says what is rewritten.

use super::job_order::timeline;
use super::mapping::block_sizes_of;
use super::reader::{Job, Opt, read};
use super::semantics::{back_end, beyond, direct, rw};
use super::values::{Unit, number, quote, split_paths};
use crate::error::{Error, Result};
use crate::scenario::Override;
use crate::scenario::fio_section::{FioJob, IoLabels};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Options fathom takes out of each section: the targets (replaced), the job order
/// (fathom's timeline runs it), and what would merge or rename the jobs fio reports.
const TAKEN_OUT: &[&str] = &[
    "filename",
    "directory",
    "opendir",
    "stonewall",
    "wait_for",
    "startdelay",
    "new_group",
    "group_reporting",
    "name",
];

/// A job file's sections as fio will run them, and the timeline that orders them.
#[derive(Debug)]
pub struct Verbatim {
    pub sections: Vec<Section>,
    /// Timeline steps in YAML flow form, as the mapping writes them.
    pub timeline: Vec<String>,
}

/// One section: the job fio runs, its fio jobs (`numjobs`), how long it runs when that
/// is known (`runtime`, or `--set duration`) and how long fio ramps before it
/// (`ramp_time`), in whole seconds.
#[derive(Debug)]
pub struct Section {
    pub job: FioJob,
    pub numjobs: u32,
    pub seconds: Option<u64>,
    pub ramp_seconds: Option<u64>,
}

/// The sections of the job file at `path` (text `text`) on the `--target`s `given`,
/// with `--set`s applied to fio's options (`duration` is fio's `runtime`).
pub fn rewrite(path: &Path, text: &str, given: &[PathBuf], sets: &[Override]) -> Result<Verbatim> {
    let file = path.display().to_string();
    let mut jobs = read(path, text)?;
    apply_sets(&mut jobs, &file, sets)?;
    let targets = retarget(&jobs, &file, given)?;
    let mut sections = Vec::new();
    for (job, targets) in jobs.iter().zip(targets) {
        sections.push(section(job, &targets)?);
    }
    Ok(Verbatim { sections, timeline: timeline(&jobs)? })
}

/// `--set KEY=VALUE` sets fio's option KEY in every section, `--set JOB.KEY=VALUE` in
/// section JOB; `duration` is fio's `runtime` and `ramp` its `ramp_time`.
fn apply_sets(jobs: &mut [Job], file: &str, sets: &[Override]) -> Result<()> {
    for set in sets {
        let (only, key) = match set.path.as_slice() {
            [key] => (None, key.as_str()),
            [job, key] => (Some(job.as_str()), key.as_str()),
            _ => return Err(Error::input(format!("--set {set}: expected KEY=VALUE or JOB.KEY=VALUE"))),
        };
        if let Some(name) = only
            && !jobs.iter().any(|j| j.name == name)
        {
            return Err(Error::input(format!("--set {set}: {file} has no job [{name}]")));
        }
        // fathom's names for fio's run length and ramp, so one `--set` serves both engines
        let name = match key {
            "duration" => "runtime",
            "ramp" => "ramp_time",
            _ => key,
        };
        for job in jobs.iter_mut().filter(|j| only.is_none_or(|n| n == j.name)) {
            let at = super::reader::Where::at(format!("--set {set}"), 0);
            let opt = Opt { name: name.to_string(), written: name.to_string(), value: Some(set.value.clone()), at };
            match job.options.iter_mut().find(|o| o.name == name) {
                Some(old) => *old = opt,
                None => job.options.push(opt),
            }
        }
    }
    Ok(())
}

/// Each job's targets after `--target`: none given, its own (`directory` joined to each
/// `filename`); one, that one for every job; several, the file's own targets replaced
/// in the order its jobs name them (as the mapping's `targets::retarget`).
fn retarget(jobs: &[Job], file: &str, given: &[PathBuf]) -> Result<Vec<Vec<PathBuf>>> {
    let own: Vec<Vec<String>> = jobs.iter().map(own_targets).collect();
    if let Some((job, _)) = jobs.iter().zip(&own).find(|(_, t)| t.is_empty() && given.is_empty()) {
        return Err(Error::input(format!(
            "{}: [{}] names no filename or directory: give --target DIR for the files fio lays out",
            job.at, job.name
        )));
    }
    let given: Vec<PathBuf> = given.iter().map(|t| std::path::absolute(t).unwrap_or_else(|_| t.clone())).collect();
    match given.as_slice() {
        // fio runs in the run's directory: the file's own relative paths are fathom's
        [] => Ok(own
            .into_iter()
            .map(|t| t.into_iter().map(|p| std::path::absolute(&p).unwrap_or_else(|_| PathBuf::from(p))).collect())
            .collect()),
        [one] => Ok(jobs.iter().map(|_| vec![one.clone()]).collect()),
        several => {
            let mut places: Vec<&String> = Vec::new();
            for t in own.iter().flatten() {
                if !places.contains(&t) {
                    places.push(t);
                }
            }
            if places.len() != several.len() {
                let names: Vec<&str> = places.iter().map(|p| p.as_str()).collect();
                return Err(Error::input(format!(
                    "{file}: {} --target given, but its jobs name {} ({}): give one --target for all, or one for each in that order",
                    several.len(),
                    crate::metrics::format::counted(places.len() as u64, "target"),
                    names.join(", ")
                )));
            }
            let new = |t: &String| several[places.iter().position(|p| *p == t).expect("a place of its own")].clone();
            Ok(own.iter().map(|ts| ts.iter().map(new).collect()).collect())
        }
    }
}

/// A job's own targets: each `filename` in its `directory` (each of `a:b`), or the
/// directory alone.
fn own_targets(job: &Job) -> Vec<String> {
    let dirs = job.get("directory").and_then(|o| o.value.as_deref()).map(split_paths).unwrap_or_default();
    match job.get("filename").and_then(|o| o.value.as_deref()) {
        Some(names) => split_paths(names)
            .iter()
            .flat_map(|n| match dirs.first() {
                Some(d) if !n.starts_with('/') => vec![format!("{}/{n}", d.trim_end_matches('/'))],
                _ => vec![n.clone()],
            })
            .collect(),
        // a trailing `/` keeps it a directory, which must exist
        None => dirs.iter().map(|d| format!("{}/", d.trim_end_matches('/'))).collect(),
    }
}

/// The lines fathom adds to a section: latency histogram bins from submission, which
/// fathom's samples are made of; and the zone mode older fio ran `zonesize` in, which
/// fio 3.10 and later refuse `zonesize` without.
fn added_lines(text: &mut String, job: &Job) {
    text.push_str("lat_percentiles=1  ; fathom: latency bins for its samples\n");
    if job.get("zonesize").is_some() && job.get("zonemode").is_none() {
        text.push_str("zonemode=strided  ; fathom: the mode zonesize had before fio 3.10\n");
    }
}

/// One section as fio will run it on `targets`.
fn section(job: &Job, targets: &[PathBuf]) -> Result<Section> {
    // fio's default is `read`; every other `rw` writes or trims
    let writes =
        job.get("rw").and_then(|o| o.value.as_deref()).is_some_and(|rw| !["read", "randread"].contains(&rw.trim()));
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    for t in targets {
        check_target(job, t, writes)?;
        if t.is_dir() { dirs.push(t) } else { files.push(t) }
    }
    if !dirs.is_empty() && !files.is_empty() {
        return Err(Error::input(format!(
            "{}: [{}]: its targets mix directories and files; fio takes one or the other per job",
            job.at, job.name
        )));
    }
    let escaped = |ts: &[&PathBuf]| -> String {
        ts.iter().map(|t| t.display().to_string().replace(':', "\\:")).collect::<Vec<_>>().join(":")
    };
    let mut text =
        format!("# [{}] of {}, run by fio as written (fathom rewrote the lines marked)\n", job.name, job.at.file);
    let _ = writeln!(text, "[{}]", job.name);
    for o in job.options.iter().filter(|o| !TAKEN_OUT.contains(&o.name.as_str())) {
        beyond(o)?;
        match &o.value {
            Some(v) => writeln!(text, "{}={v}", o.written),
            None => writeln!(text, "{}", o.written),
        }
        .expect("writing to a String");
    }
    match dirs.is_empty() {
        false => writeln!(text, "directory={}  ; fathom: the target", escaped(&dirs)),
        true => writeln!(text, "filename={}  ; fathom: the target", escaped(&files)),
    }
    .expect("writing to a String");
    added_lines(&mut text, job);
    let flag = |name: &str| job.get(name).map(|o| o.flag()).transpose().map(|f| f.unwrap_or(false));
    let whole_seconds = |name: &str| -> Result<Option<u64>> {
        match job.get(name) {
            Some(o) => Ok(Some((number(o.text()?, Unit::Time).map_err(|e| o.err(e))? / 1e6).ceil() as u64)),
            None => Ok(None),
        }
    };
    let seconds = whole_seconds("runtime")?.map(|s| s.max(1));
    // fio runs `ramp_time` before its `runtime` and leaves it out of its figures
    let ramp_seconds = whole_seconds("ramp_time")?.filter(|&s| s > 0);
    let ends_by_itself = !flag("time_based")?;
    if !ends_by_itself && seconds.is_none() {
        return Err(Error::input(format!(
            "{}: [{}] is time_based without a runtime: fio would run it until stopped; give --set duration=",
            job.at, job.name
        )));
    }
    // a count fio reads as at least 1, and 1 when not given
    let count = |name: &str| -> Result<u32> {
        match job.get(name) {
            Some(o) => Ok(number(o.text()?, Unit::Count).map_err(|e| o.err(e))?.max(1.0) as u32),
            None => Ok(1),
        }
    };
    let numjobs = count("numjobs")?;
    let iodepth = count("iodepth")?;
    let engine = job.get("ioengine").and_then(|o| o.value.as_deref()).map(str::trim);
    let direct = direct(job)?;
    let iodepth = match back_end(engine, direct) {
        Some((_, Some(_one_at_a_time))) => 1,
        _ => iodepth,
    };
    let labels = IoLabels { iodepth, rw: rw(job).ok().map(|rw| rw.name()), direct, bs: block_sizes_of(job) };
    let job = FioJob {
        section: job.name.clone(),
        text,
        ends_by_itself,
        capped: seconds.is_some(),
        labels,
        targets: targets.to_vec(),
    };
    Ok(Section { job, numjobs, seconds, ramp_seconds })
}

/// A target fio is given: never a symbolic link (fathom never follows one), and a
/// block device only for reading (fathom's device rules for writes need the layout
/// it does not do here).
fn check_target(job: &Job, t: &Path, writes: bool) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let refuse = |why: &str| Err(Error::input(format!("{}: [{}]: target {}: {why}", job.at, job.name, t.display())));
    match std::fs::symlink_metadata(t) {
        Ok(m) if m.file_type().is_symlink() => {
            refuse("is a symbolic link: fathom never follows one; name the file or directory it points to")
        }
        Ok(m) if m.file_type().is_block_device() && writes => refuse(
            "is a block device and the job writes: with --engine fio on a job file fathom gives fio devices to read only",
        ),
        Ok(m) if m.is_dir() => {
            // fio names its files in a directory `JOB.N.M`: none may be a link it would follow
            let prefix = format!("{}.", job.name);
            let entries = std::fs::read_dir(t).map_err(|e| Error::input(format!("{}: {e}", t.display())))?;
            match entries.flatten().find(|e| {
                e.file_name().to_string_lossy().starts_with(&prefix) && e.file_type().is_ok_and(|f| f.is_symlink())
            }) {
                Some(link) => refuse(&format!(
                    "holds {}, a symbolic link where fio lays out its files: fathom never writes through one; remove it",
                    link.file_name().to_string_lossy()
                )),
                None => Ok(()),
            }
        }
        Ok(_) => Ok(()),
        Err(_) if t.as_os_str().as_encoded_bytes().ends_with(b"/") => {
            refuse("is not an existing directory (`directory=` names one, where fio lays out its files)")
        }
        Err(_) if t.parent().is_some_and(Path::is_dir) => Ok(()),
        Err(e) => refuse(&format!("{e}: give an existing directory, file or block device")),
    }
}

/// The scenario YAML that times the sections: one workload each (the fio driver runs
/// it), with its length when known, ending by itself when fio ends it.
pub fn skeleton_yaml(name: &str, v: &Verbatim) -> String {
    let mut out = format!("name: {}\nworkloads:\n", quote(name));
    for s in &v.sections {
        let _ = writeln!(out, "  {}:\n    engine: null\n    rw: read", quote(&s.job.section));
        if let Some(secs) = s.seconds {
            let _ = writeln!(out, "    duration: {secs}s");
        }
        if let Some(secs) = s.ramp_seconds {
            let _ = writeln!(out, "    ramp: {secs}s");
        }
        if s.job.ends_by_itself {
            // stands for fio's own bound: the workload ends when fio does
            let _ = writeln!(out, "    io_size: 4k");
        }
    }
    if !v.timeline.is_empty() {
        out.push_str("timeline:\n");
        for step in &v.timeline {
            let _ = writeln!(out, "  - {step}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "[global]\nrw=randread\nbs=4k\nthinktime=10\ngroup_reporting\nruntime=2\ntime_based\n\
                        [a]\nfilename=/nowhere/x\nnumjobs=2\n[b]\nstonewall\nrw=write\nsize=8m\nfilename=/nowhere/y\n";

    #[test]
    fn sections_keep_their_options_and_lose_only_what_fathom_rewrites() {
        let dir = std::env::temp_dir();
        let sets: Vec<Override> =
            ["duration=3s", "ramp=1s", "b.time_based=0"].iter().map(|s| s.parse().unwrap()).collect();
        let v = rewrite(Path::new("t.fio"), FILE, std::slice::from_ref(&dir), &sets).unwrap();
        let a = &v.sections[0];
        assert!(a.job.text.contains("\nthinktime=10\n") && a.job.text.contains("\nruntime=3s\n"), "{}", a.job.text);
        assert!(a.job.text.contains("\nramp_time=1s\n") && !a.job.text.contains("\nramp="), "{}", a.job.text);
        assert!(!a.job.text.contains("group_reporting") && !a.job.text.contains("/nowhere"), "{}", a.job.text);
        assert!(a.job.text.contains(&format!("directory={}", dir.display())), "{}", a.job.text);
        assert_eq!((a.numjobs, a.seconds, a.job.ends_by_itself), (2, Some(3), false));
        let b = &v.sections[1];
        assert!(!b.job.text.contains("stonewall") && b.job.text.contains("\ntime_based=0\n"), "{}", b.job.text);
        assert!(b.job.ends_by_itself && b.job.capped);
        assert_eq!(v.timeline, [r#"{start: "a", async: true}"#, r#"{wait_for: "a"}"#, r#"{start: "b", async: true}"#]);
        let err = rewrite(Path::new("t.fio"), FILE, &[dir.clone(), dir.clone(), dir], &[]).unwrap_err();
        assert!(err.to_string().contains("3 --target given, but its jobs name 2 targets"), "{err}");
    }

    #[test]
    fn zonesize_without_zonemode_runs_strided_as_it_did_before_fio_3_10() {
        let text = "[a]\nfilename=/nowhere/x\nsize=8m\nzonesize=1m\nzoneskip=1m\n[b]\nfilename=/nowhere/x\n\
                    zonemode=strided\nzonesize=1m\n";
        let v = rewrite(Path::new("t.fio"), text, &[std::env::temp_dir()], &[]).unwrap();
        let strided = |i: usize| v.sections[i].job.text.matches("zonemode=strided").count();
        assert_eq!((strided(0), strided(1)), (1, 1), "{}", v.sections[0].job.text);
        assert!(v.sections[0].job.text.contains("zonemode=strided  ; fathom:"), "{}", v.sections[0].job.text);
    }

    #[test]
    fn a_section_is_labelled_with_the_depth_and_rw_fio_runs_it_at() {
        let text = "[global]\nioengine=libaio\ndirect=1\niodepth=16\nruntime=1\ntime_based\nfilename=/nowhere/x\n\
                    [a]\nrw=randwrite\n[b]\ndirect=0\n[c]\nioengine=psync\n[d]\nrw=trim\n";
        let v = rewrite(Path::new("t.fio"), text, &[std::env::temp_dir()], &[]).unwrap();
        let got: Vec<(u32, Option<&str>, bool)> =
            v.sections.iter().map(|s| (s.job.labels.iodepth, s.job.labels.rw, s.job.labels.direct)).collect();
        // libaio without direct=1, and psync, do one IO at a time in fio
        let want = [(16, Some("randwrite"), true), (1, Some("read"), false), (1, Some("read"), true)];
        assert_eq!(got[..3], want);
        assert_eq!(got[3], (16, None, true), "a trim has no name in fathom");
    }

    #[test]
    fn a_section_is_labelled_with_the_block_sizes_fio_runs_it_with() {
        let text = "[global]\nruntime=1\ntime_based\nfilename=/nowhere/x\nbs=1m\n[a]\n[b]\nbssplit=4k/50:64k/50\n\
                    [c]\nbsrange=4k-8k\n[d]\nbs=4k,64k\nrw=write\n[e]\nbs=4k,64k\nrw=randrw\n";
        let v = rewrite(Path::new("t.fio"), text, &[std::env::temp_dir()], &[]).unwrap();
        let got: Vec<Option<String>> =
            v.sections.iter().map(|s| s.job.labels.bs.as_ref().map(|b| b.to_string())).collect();
        let want = ["1m", "4k/50:64k/50", "4k-8k", "64k"].map(|s| Some(s.to_string()));
        assert_eq!(got[..4], want, "bs, bssplit, bsrange, and the write size of a writing job");
        assert_eq!(got[4], None, "reads and writes of different sizes: no one label");
    }

    #[test]
    fn a_link_where_fio_lays_out_its_files_is_refused() {
        let dir = std::env::temp_dir().join(format!("fathom-verbatim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", dir.join("a.0.0")).unwrap();
        let err = rewrite(Path::new("t.fio"), "[a]\nrw=write\nsize=1m\n", std::slice::from_ref(&dir), &[]);
        let _ = std::fs::remove_dir_all(&dir);
        let err = err.unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("holds a.0.0, a symbolic link"), "{err}");
    }

    #[test]
    fn what_would_act_beyond_the_targets_and_the_runs_directory_is_refused() {
        let refused = [
            "exec_prerun=touch /tmp/x",
            "exec_postrun=rm -rf /",
            "ioengine=exec\nprogram=/bin/sh",
            "ioengine=external:/tmp/e.so",
            "ioengine=/tmp/e.so",
            "cgroup=x",
            "cgroup_weight=100",
            "ioscheduler=none",
            "read_iolog=trace",
            "replay_redirect=/dev/sda",
            "profile=tiobench",
            "trigger-file=/tmp/t",
            "write_iolog=/tmp/io",
            "write_bw_log=../bw",
            "write_lat_log=/tmp/lat",
            "write_iops_log=sub/iops",
            "write_hist_log=/tmp/hist",
            "merge_blktrace_file=/tmp/m",
            "filename_format=../f",
            "mem=mmaphuge:/hugepages/f",
            "iomem=mmapshared:/dev/shm/f",
        ];
        for option in refused {
            let text = format!("[global]\nsize=1m\n[a]\n{option}\n");
            let err = rewrite(Path::new("t.fio"), &text, &[std::env::temp_dir()], &[]).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{option}");
            let name = option.split('=').next().unwrap();
            assert!(err.to_string().starts_with(&format!("t.fio:4: {name}: ")), "{option}: {err}");
            assert!(err.to_string().contains("only on the targets and in the run's directory"), "{option}: {err}");
        }
        // bare names land in the run's directory, where fio runs
        let text = "[a]\nsize=1m\nwrite_lat_log=lat\nwrite_iolog=io\nmem=mmap:buf\nioengine=libaio\n";
        assert!(rewrite(Path::new("t.fio"), text, &[std::env::temp_dir()], &[]).is_ok());
        let set: Override = "a.exec_prerun=id".parse().unwrap();
        let err = rewrite(Path::new("t.fio"), "[a]\nsize=1m\n", &[std::env::temp_dir()], &[set]).unwrap_err();
        assert!(err.to_string().starts_with("--set a.exec_prerun=id: exec_prerun: runs a command"), "{err}");
    }

    #[test]
    fn a_job_without_a_target_needs_one_given() {
        let err = rewrite(Path::new("t.fio"), "[a]\nsize=1m\n", &[], &[]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("t.fio:1: [a] names no filename or directory"), "{err}");
    }
}
