//! Files that other files name (a fio `include`, an X-Ray `config_file`) are read only
//! from the directory the user gave, and what they expand to is bounded: each refusal
//! is exit 2 naming the file and line, never another file's content, never a crash.

use crate::common::{Bound, Scratch, bounded, text, within};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// How much work refusing an input that multiplies may take: the bounds are there to make
/// it prompt, so ten CPU seconds would be a bound that does not hold.
const PROMPT: Bound = Bound { cpu: Duration::from_secs(10), clock: Duration::from_secs(60) };

/// What a file outside the user's directory holds: it must never reach an error.
const SECRET: &str = "root:x:0:0:SECRET-CONTENT:/root:/bin/bash\n";

fn refused(out: &Output, says: &str) {
    let all = text(out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains(says), "expected `{says}` in: {all}");
    assert!(!all.contains("panicked") && !all.contains("SECRET"), "{all}");
}

/// A scratch with `secret.txt` beside the directory `jobs/` the user's files are in.
fn scratch(s: Scratch) -> (Scratch, PathBuf) {
    std::fs::write(s.dir.join("secret.txt"), SECRET).unwrap();
    let jobs = s.dir.join("jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    (s, jobs)
}

fn lint(s: &Scratch, path: &Path) -> Output {
    bounded(s, &["lint", path.to_str().unwrap()])
}

/// An X-Ray directory `dir` whose one workload runs `config_file`.
fn xray(dir: &Path, config_file: &str) {
    let test = format!(
        "name: x\nvms:\n  - G:\n      nodes: 0\nworkloads:\n  - Load:\n      vm_group: G\n      config_file: {config_file}\n\
         run:\n  - workload.Start:\n      workload_name: Load\n      runtime_secs: 10\n"
    );
    std::fs::write(dir.join("test.yml"), test).unwrap();
}

#[test]
fn an_include_outside_the_job_files_directory_is_refused_never_echoed() {
    let (s, jobs) = scratch(Scratch::new("imports-include-outside"));
    let secret = s.dir.join("secret.txt");
    std::os::unix::fs::symlink(&secret, jobs.join("link.fio")).unwrap();
    let job = jobs.join("job.fio");
    for name in ["../secret.txt", secret.to_str().unwrap(), "link.fio", "/etc/passwd"] {
        std::fs::write(&job, format!("[a]\ninclude {name}\nrw=read\n")).unwrap();
        let out = lint(&s, &job);
        refused(&out, &format!("job.fio:2: include {name}: is outside"));
        assert!(!text(&out).contains("root:x"), "{}", text(&out));
    }
    // a file beside it, or below it, is read
    std::fs::create_dir_all(jobs.join("sub")).unwrap();
    std::fs::write(jobs.join("sub/inc.fio"), "bs=zz\n").unwrap();
    std::fs::write(&job, format!("[a]\nfilename={}\ninclude sub/inc.fio\n", s.data().join("f").display())).unwrap();
    refused(&lint(&s, &job), "inc.fio:1 (included at");
}

#[test]
fn an_x_ray_config_file_outside_its_directory_is_refused_never_echoed() {
    let (s, jobs) = scratch(Scratch::new("imports-config-outside"));
    let hosts = s.local_inventory(&["a"]);
    let secret = s.dir.join("secret.txt");
    std::os::unix::fs::symlink(&secret, jobs.join("link.fio")).unwrap();
    for name in ["../secret.txt", secret.to_str().unwrap(), "link.fio"] {
        xray(&jobs, name);
        let out = bounded(&s, &["lint", jobs.to_str().unwrap(), "--hosts", &hosts]);
        refused(&out, "workloads.0.Load.config_file: ");
        refused(&out, "is outside");
    }
}

#[test]
fn an_error_in_an_included_file_names_the_including_line_too() {
    let (s, jobs) = scratch(Scratch::new("imports-via"));
    std::fs::write(jobs.join("inner.fio"), "\nbs=zz\n").unwrap();
    std::fs::write(jobs.join("outer.fio"), "rw=read\ninclude inner.fio\n").unwrap();
    let job = jobs.join("job.fio");
    std::fs::write(&job, format!("[a]\nfilename={}\ninclude outer.fio\n", s.data().join("f").display())).unwrap();
    let out = lint(&s, &job);
    let inner = jobs.join("inner.fio").display().to_string();
    let outer = jobs.join("outer.fio").display().to_string();
    let says = format!("{inner}:2 (included at {outer}:2 (included at {}:3)): bs: ", job.display());
    refused(&out, &says);
}

#[test]
fn includes_that_multiply_are_bounded_in_depth_and_lines() {
    let (s, jobs) = scratch(Scratch::new("imports-bomb"));
    // ten files, each including the next ten times: 10^9 lines were it expanded
    for i in 0..10 {
        let body = if i == 9 { "rw=read\n".to_string() } else { format!("include f{}.fio\n", i + 1).repeat(10) };
        std::fs::write(jobs.join(format!("f{i}.fio")), body).unwrap();
    }
    let job = jobs.join("job.fio");
    std::fs::write(&job, "[a]\ninclude f0.fio\n").unwrap();
    // bounded in the work it does (CPU seconds, whatever else the machine runs)
    let out = within(&s, s.fathom(&["lint", job.to_str().unwrap()]), PROMPT).unwrap_or_else(|e| panic!("{e}"));
    refused(&out, "passes 100000 lines");
    // a file that includes itself nests until the depth bound
    std::fs::write(&job, "[a]\ninclude job.fio\n").unwrap();
    refused(&lint(&s, &job), "includes nest deeper than 16");
}

#[test]
fn deep_parentheses_are_refused_not_a_stack_overflow() {
    let (s, jobs) = scratch(Scratch::new("imports-parens"));
    let deep = format!("{}4k{}", "(".repeat(50_000), ")".repeat(50_000));
    let fio = format!("[load]\nfilename={}\nrw=read\nbs={deep}\nsize=1m\n", s.data().join("f").display());
    let job = jobs.join("load.fio");
    std::fs::write(&job, &fio).unwrap();
    refused(&lint(&s, &job), "load.fio:4: bs: expression nests deeper than 64");
    let hosts = s.local_inventory(&["a"]);
    xray(&jobs, "load.fio");
    let out = bounded(&s, &["lint", jobs.to_str().unwrap(), "--hosts", &hosts]);
    refused(&out, "load.fio:4: bs: expression nests deeper than 64");
    // unary minus and powers nest too
    for value in ["-".repeat(50_000) + "4k", "2^".repeat(50_000) + "2"] {
        std::fs::write(&job, fio.replace(&deep, &value)).unwrap();
        refused(&lint(&s, &job), "load.fio:4: bs: expression nests deeper than 64");
    }
}

#[test]
fn a_template_that_renders_without_end_is_refused() {
    let (s, jobs) = scratch(Scratch::new("imports-jinja"));
    let hosts = s.local_inventory(&["a"]);
    std::fs::write(jobs.join("load.fio"), "[load]\nrw=read\nbs=4k\n").unwrap();
    xray(&jobs, "load.fio");
    let valid = std::fs::read_to_string(jobs.join("test.yml")).unwrap();
    let grows = "{% for i in range(100000) %}{% for j in range(100000) %}# padding padding\n{% endfor %}{% endfor %}";
    let spins = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
    for (loop_, says) in [(grows, "rendered text passes 1 MiB"), (spins, "runs past")] {
        std::fs::write(jobs.join("test.yml"), format!("{valid}{loop_}\n")).unwrap();
        let lint = s.fathom(&["lint", jobs.to_str().unwrap(), "--hosts", &hosts]);
        let out = within(&s, lint, PROMPT).unwrap_or_else(|e| panic!("{e}"));
        refused(&out, "test.yml");
        refused(&out, says);
    }
}
