//! The fio job file reader and the X-Ray directory importer under mutation: job files
//! with includes and arithmetic, and X-Ray directories (a Jinja `test.yml` and its fio
//! file), with lines deleted or duplicated, characters swapped, hostile values, deep
//! nesting and multiplying includes put in, each fed to the real `fathom lint`.
//! Whatever the text, lint ends with 0, 2 or 3 within a bound per case and under a cap
//! on its memory; exit 2 names the file; no panic, no abort, no other file's content.
//! 64 cases of each keep it to seconds in a debug build; set PROPTEST_CASES for more.

use crate::common::{Bound, Scratch, within};
use proptest::prelude::*;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

/// How far one `fathom lint` may go: each bound it meets ends it in well under this.
const PER_CASE: Bound = Bound { cpu: Duration::from_secs(10), clock: Duration::from_secs(120) };

/// The address space one `fathom lint` may take: past it an allocation fails, the
/// process aborts, and the case fails on its exit status.
const MEMORY: u64 = 4 << 30;

/// What the file beside the user's directory holds: it must never reach an error.
const SECRET: &str = "root:x:0:0:SECRET-CONTENT\n";

/// Realistic job files: `job.fio` is run, `inc.fio` is beside it (both may include).
const FIO_SEEDS: &[(&str, &str)] = &[
    (
        "[global]\nioengine=psync\nbs=((2+2)*1k)\nsize=1m\nrw=randrw\nrwmixread=70\ninclude inc.fio\n\n[a]\nfilename=TARGET/a\nnumjobs=2\n\n[b]\nfilename=TARGET/b\nbs=8k\nrate_iops=100,50\nstonewall\n",
        "; shared\niodepth=4\nruntime=2\nnumjobs=$ncpus\ntime_based\n",
    ),
    (
        "[seq]\nfilename=TARGET/s\nrw=write\nbs=1m\nsize=4m/2\n[rand]\ninclude inc.fio\n",
        "filename=TARGET/r\nrw=randread\nbs=4k\nsize=2m\nthinktime=10ms\nramp_time=1\n",
    ),
];

/// An X-Ray `test.yml` with Jinja, and the fio file its workload runs.
const XRAY_SEED: (&str, &str) = (
    "name: x\nvars:\n  n:\n    default: 2\n    min: 1\n    max: 4\n\nvms:\n{% for i in range(n) %}  - G{{ i }}:\n      nodes: 0\n{% endfor %}\
     workloads:\n  - Load:\n      vm_group: G0\n      config_file: load.fio\n\
     run:\n  - workload.Start:\n      workload_name: Load\n      runtime_secs: {{ 10 * n }}\n",
    "[load]\nrw=randread\nbs=4k*2\nsize=1m\niodepth=((4))\nrate_iops=20\n",
);

/// Values a careless or hostile author writes where a value goes.
const HOSTILE: &[&str] = &[
    "((((",
    "))",
    "$nope",
    "${FATHOM_FUZZ_NOT_SET}",
    "${",
    "-1",
    "1e400",
    "18446744073709551616",
    "4k,4k,4k,4k",
    "1/0",
    "2^99999",
    "nan",
    "\u{feff}",
    "/etc/passwd",
    "{{ nope }}",
    "{{",
    "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
    "{{ 'a' * 100000000 }}",
    "{% raw %}",
];

/// Lines put in whole: includes that leave the directory, include themselves or
/// multiply, sections, and Jinja that loops.
const LINES: &[&str] = &[
    "include ../secret.txt",
    "include /etc/passwd",
    "include job.fio",
    "include inc.fio",
    "include load.fio",
    "include nothing.fio",
    "[global]",
    "[a]",
    "[",
    "{% for i in range(100000) %}",
    "{% endfor %}",
    "{% if %}",
];

/// One change to one of a case's two files (positions are taken modulo its length).
#[derive(Debug, Clone)]
enum Mutation {
    DeleteLine(bool, usize),
    DuplicateLine(bool, usize),
    SwapChars(bool, usize),
    /// Replaces the value after a line's first `=` or `:` with a hostile one.
    Value(bool, usize, usize),
    /// Inserts a whole line, repeated.
    Line(bool, usize, usize, usize),
    /// Deep nesting (`(`, `[`, `-`, Jinja's `(` and `{% if %}`) or a long string at a
    /// line's value.
    Long(bool, usize, usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<bool>(), any::<usize>()).prop_map(|(f, l)| Mutation::DeleteLine(f, l)),
        (any::<bool>(), any::<usize>()).prop_map(|(f, l)| Mutation::DuplicateLine(f, l)),
        (any::<bool>(), any::<usize>()).prop_map(|(f, l)| Mutation::SwapChars(f, l)),
        (any::<bool>(), any::<usize>(), 0..HOSTILE.len()).prop_map(|(f, l, v)| Mutation::Value(f, l, v)),
        (any::<bool>(), any::<usize>(), 0..LINES.len(), 1usize..20).prop_map(|(f, l, v, n)| Mutation::Line(f, l, v, n)),
        (any::<bool>(), any::<usize>(), 0usize..6, 1usize..100_000).prop_map(|(f, l, k, n)| Mutation::Long(f, l, k, n)),
    ]
}

/// The file of a case that `m` changes: the first (true) or the second.
fn first(m: &Mutation) -> bool {
    match *m {
        Mutation::DeleteLine(f, _)
        | Mutation::DuplicateLine(f, _)
        | Mutation::SwapChars(f, _)
        | Mutation::Value(f, ..)
        | Mutation::Line(f, ..)
        | Mutation::Long(f, ..) => f,
    }
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    let set_value = |line: &mut String, value: &str| {
        *line = match line.find(['=', ':']) {
            Some(at) => format!("{}{value}", &line[..=at]),
            None => format!("{line}{value}"),
        }
    };
    match *m {
        Mutation::DeleteLine(_, i) => {
            lines.remove(i % n);
        }
        Mutation::DuplicateLine(_, i) => {
            let line = lines[i % n].clone();
            lines.insert(i % n, line);
        }
        Mutation::SwapChars(_, i) => {
            let mut chars: Vec<char> = lines.join("\n").chars().collect();
            let at = i % chars.len().saturating_sub(1).max(1);
            if at + 1 < chars.len() {
                chars.swap(at, at + 1);
            }
            return chars.into_iter().collect::<String>() + "\n";
        }
        Mutation::Value(_, i, v) => set_value(&mut lines[i % n], HOSTILE[v]),
        Mutation::Line(_, i, v, times) => {
            for _ in 0..times {
                lines.insert(i % n, LINES[v].to_string());
            }
        }
        Mutation::Long(_, i, kind, len) => {
            let value = match kind {
                4 => format!("{{{{ {}1{} }}}}", "(".repeat(len), ")".repeat(len)),
                5 => format!("{}1{}", "{% if 1 %}".repeat(len), "{% endif %}".repeat(len)),
                _ => ["(", "[", "-", "x"][kind].repeat(len) + "4k",
            };
            set_value(&mut lines[i % n], &value);
        }
    }
    lines.join("\n") + "\n"
}

/// Runs `fathom lint` with `args` under [`MEMORY`]: its exit status and stderr, or an
/// error if it went past [`PER_CASE`] (then it is killed) or ended by a signal.
fn lint(s: &Scratch, args: &[&str]) -> Result<(i32, String), String> {
    let mut cmd = s.fathom(&[&["lint"], args].concat());
    // SAFETY: setrlimit is async-signal-safe and touches only the child's own limits.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: MEMORY, rlim_max: MEMORY };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let out = within(s, cmd, PER_CASE)?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    out.status.code().map(|c| (c, stderr.clone())).ok_or_else(|| format!("{}: {stderr}", out.status))
}

/// Writes the two files of a case into `dir` (their targets in the scratch's data).
fn write(s: &Scratch, dir: &Path, names: (&str, &str), texts: (&str, &str)) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(s.dir.join("secret.txt"), SECRET).unwrap();
    let target = s.data().display().to_string();
    std::fs::write(dir.join(names.0), texts.0.replace("TARGET", &target)).unwrap();
    std::fs::write(dir.join(names.1), texts.1.replace("TARGET", &target)).unwrap();
}

/// What every case must show: an exit of 0, 2 or 3; for 2, the file named; never a
/// panic or a line of the file outside the directory.
fn judged(what: &str, result: Result<(i32, String), String>, names: &[&str]) -> Result<(), TestCaseError> {
    let (code, err) = result.map_err(|e| TestCaseError::fail(format!("{what}: {e}")))?;
    prop_assert!(matches!(code, 0 | 2 | 3), "{what}: exit {code}: {err}");
    prop_assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{what}: {err}");
    prop_assert!(!err.contains("SECRET") && !err.contains("root:x"), "{what}: {err}");
    if code == 2 {
        prop_assert!(names.iter().any(|n| err.contains(n)), "{what}: exit 2 names no file: {err}");
    }
    Ok(())
}

#[test]
fn every_seed_lints_cleanly_unmutated() {
    let s = Scratch::new("fuzz-imports-seeds");
    let dir = s.dir.join("in");
    for (job, inc) in FIO_SEEDS {
        write(&s, &dir, ("job.fio", "inc.fio"), (job, inc));
        let result = lint(&s, &[dir.join("job.fio").to_str().unwrap()]);
        assert!(matches!(result, Ok((0, _))), "{job}: {result:?}");
    }
    let hosts = s.local_inventory(&["a"]);
    write(&s, &dir, ("test.yml", "load.fio"), XRAY_SEED);
    let result = lint(&s, &[dir.to_str().unwrap(), "--hosts", &hosts]);
    assert!(matches!(result, Ok((0, _))), "{result:?}");
}

/// A case the fuzzing found: a bare line of 600,000 characters, an option of no known
/// name, took 24 s of CPU to be offered the nearest known one.
#[test]
fn a_huge_unknown_option_is_refused_within_the_bound() {
    let s = Scratch::new("fuzz-imports-huge");
    let dir = s.dir.join("in");
    let huge = format!("{}1{}", "{% if 1 %}".repeat(33_898), "{% endif %}".repeat(33_898));
    let job = FIO_SEEDS[0].0.replace("\n\n[a]", &format!("\n{huge}\n[a]"));
    write(&s, &dir, ("job.fio", "inc.fio"), (&job, FIO_SEEDS[0].1));
    let (code, err) = lint(&s, &[dir.join("job.fio").to_str().unwrap()]).unwrap();
    assert_eq!(code, 2, "{}", &err[..err.len().min(300)]);
    assert!(err.contains("job.fio:8"), "{}", &err[..err.len().min(300)]);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64),
        max_shrink_iters: 32,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_job_files_end_in_0_2_or_3_naming_the_file(
        which in any::<usize>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let (mut job, mut inc) = (FIO_SEEDS[which % FIO_SEEDS.len()].0.to_string(), FIO_SEEDS[which % FIO_SEEDS.len()].1.to_string());
        for m in &mutations {
            let text = if first(m) { &mut job } else { &mut inc };
            *text = apply(text, m);
        }
        let s = Scratch::new("fuzz-imports-fio");
        let dir = s.dir.join("in");
        write(&s, &dir, ("job.fio", "inc.fio"), (&job, &inc));
        let result = lint(&s, &[dir.join("job.fio").to_str().unwrap()]);
        judged(&format!("{mutations:?}"), result, &["job.fio", "inc.fio"])?;
    }

    #[test]
    fn mutated_x_ray_directories_end_in_0_2_or_3_naming_the_file(
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let (mut test, mut fio) = (XRAY_SEED.0.to_string(), XRAY_SEED.1.to_string());
        for m in &mutations {
            let text = if first(m) { &mut test } else { &mut fio };
            *text = apply(text, m);
        }
        let s = Scratch::new("fuzz-imports-xray");
        let hosts = s.local_inventory(&["a"]);
        let dir = s.dir.join("in");
        write(&s, &dir, ("test.yml", "load.fio"), (&test, &fio));
        let result = lint(&s, &[dir.to_str().unwrap(), "--hosts", &hosts]);
        // a value passed on to the scenario is checked there, named by its line in it
        let names = ["test.yml", "load.fio", "hosts.yaml", "in (X-Ray, as a scenario):"];
        judged(&format!("{mutations:?}"), result, &names)?;
    }
}
