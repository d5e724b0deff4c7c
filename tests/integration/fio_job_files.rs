//! fio job files run on fathom's engine (`fathom run job.fio`): the project's own job
//! files under tests/data/fio/, run by the real binary, their settings read back from
//! the store. What the mapping asked is asserted, never the speed it ran at.

use crate::common;

use crate::common::{Scratch, text};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn job(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/fio").join(name).display().to_string()
}

fn workload<'a>(show: &'a Value, name: &str) -> &'a Value {
    show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap()
}

#[test]
fn globals_includes_variables_and_rates_by_direction_become_the_asked_profile() {
    let s = Scratch::new("fio-mixed");
    let data = s.data().display().to_string();
    let out =
        s.fathom(&["run", &job("mixed.fio"), "--target", &data, "-q"]).env("FATHOM_FIO_BS", "8k").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let mixed = workload(&show, "mixed");
    // rate_iops=500,500 on randrw: 1,000 IOs/s asked, half of them reads
    assert_eq!(mixed["fidelity"]["iops"]["asked"], 1000.0, "{mixed}");
    assert_eq!(mixed["fidelity"]["read_percent"]["asked"], 50.0, "{mixed}");
    let p = &mixed["profile"];
    assert_eq!(p["bs"], "8k", "${{FATHOM_FIO_BS}} from the environment: {p}");
    assert_eq!((p["engine"].as_str(), p["direct"].as_bool()), (Some("psync"), Some(false)), "from [global]: {p}");
    assert_eq!(p["iodepth"], 1, "the [global] after it does not reach it: {p}");
    // numjobs=4 with rate_iops=100: fio's rate is per job, so 400 asked in all
    let four = workload(&show, "four");
    assert_eq!(four["fidelity"]["iops"]["asked"], 400.0, "{four}");
    assert_eq!(four["workers"], 4);
    let p = &four["profile"];
    assert_eq!((p["engine"].as_str(), p["iodepth"].as_i64()), (Some("io_uring"), Some(2)), "its own engine wins: {p}");
    assert_eq!(p["size"], 8 << 20, "{p}");
}

#[test]
fn set_changes_a_job_file_as_it_does_a_scenario() {
    let s = Scratch::new("fio-set");
    let data = s.data().display().to_string();
    let args = ["lint", &job("mixed.fio"), "--target", &data, "--set", "size=4m", "--set", "four.iodepth=3"];
    let out = s.fathom(&args).env("FATHOM_FIO_BS", "4k").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = s
        .fathom(&["run", &job("mixed.fio"), "--target", &data, "--set", "size=4m", "--set", "four.iodepth=3", "-q"])
        .env("FATHOM_FIO_BS", "4k")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    assert_eq!(workload(&show, "four")["profile"]["iodepth"], 3);
    assert_eq!(workload(&show, "mixed")["profile"]["size"], 4 << 20);
    assert_eq!(workload(&show, "four")["profile"]["size"], 4 << 20);
}

#[test]
fn lint_shows_what_each_option_became_and_the_ignored_once() {
    let s = Scratch::new("fio-lint");
    let data = s.data().display().to_string();
    let out = s.fathom(&["lint", &job("mixed.fio"), "--target", &data]).env("FATHOM_FIO_BS", "8k").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("workload mixed:") && stdout.contains("workload four:"), "{stdout}");
    assert!(stdout.contains("rate_iops=500,500  ->  rate_iops: 1000, rwmixread: 50"), "{stdout}");
    assert!(stdout.contains("rate_iops=100      ->  rate_iops: 400 (per job in fio, times numjobs)"), "{stdout}");
    assert!(stdout.contains("bs=8k              ->  bs: 8192"), "{stdout}");
    assert_eq!(stdout.matches("group_reporting").count(), 1, "listed once: {stdout}");
    assert!(stdout.contains("ignored (they change no measurement): group_reporting, disk_util"), "{stdout}");
}

#[test]
fn a_stonewall_starts_a_job_when_the_ones_before_it_end() {
    let s = Scratch::new("fio-stonewall");
    let data = s.data().display().to_string();
    let out = s.run(&["run", &job("stonewall.fio"), "--target", &data, "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let labels: Vec<&str> = show["phases"].as_array().unwrap().iter().map(|p| p["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["first", "second"], "{show}");
    let (first, second) = (workload(&show, "first"), workload(&show, "second"));
    assert!(second["start_t"].as_i64() >= first["end_t"].as_i64(), "{first} {second}");
}

#[test]
fn filename_a_colon_b_is_two_targets_in_one_queue() {
    let s = Scratch::new("fio-two");
    let out = s.run(&["run", &job("two-targets.fio"), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let p = &workload(&show, "both")["profile"];
    assert_eq!(p["targets"], serde_json::json!(["data/a", "data/b"]), "{p}");
    assert_eq!(p["queue"], "shared", "{p}");
    for f in ["a", "b"] {
        let len = std::fs::metadata(s.data().join(f)).unwrap().len();
        assert_eq!(len, 4 << 20, "data/{f} laid out and written");
    }
}

#[test]
fn an_engine_fathom_lacks_is_refused_at_its_line() {
    let s = Scratch::new("fio-rbd");
    let out = s.run(&["run", &job("rbd.fio")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{}:7: ioengine: ", job("rbd.fio"))), "{stderr}");
    assert!(
        stderr.contains("`rbd` is an engine of fio's only") && stderr.contains("fio can, under fathom"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("`fathom run {} --engine fio`", job("rbd.fio"))), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!s.dir.join("results/fathom.db").exists(), "nothing ran");
}

#[test]
fn trim_is_refused_at_its_line() {
    let s = Scratch::new("fio-trim");
    let out = s.run(&["lint", &job("trim.fio")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{}:5: readwrite: fathom does not trim", job("trim.fio"))), "{stderr}");
}

#[test]
fn fio_reads_the_same_files() {
    // fio itself accepts every job file these tests run (and refuses none fathom runs)
    for file in [
        "mixed.fio",
        "stonewall.fio",
        "two-targets.fio",
        "trim.fio",
        "one-pass.fio",
        "devices.fio",
        "think.fio",
        "bsrange.fio",
    ] {
        let out = Command::new("fio").args(["--parse-only", &job(file)]).env("FATHOM_FIO_BS", "8k").output().unwrap();
        assert!(out.status.success(), "fio --parse-only {file}: {}", text(&out));
    }
}

#[test]
fn without_time_based_each_job_makes_one_pass_over_size() {
    let s = Scratch::new("fio-one-pass");
    let data = s.data().display().to_string();
    let out = s.run(&["run", &job("one-pass.fio"), "--target", &data, "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // per worker (numjobs=2: each its own pass, as fio's jobs do), as fio reports it
    let per_worker: Vec<(i64, i64)> = s
        .db()
        .prepare("SELECT SUM(ops), SUM(bytes) FROM samples WHERE op = 1 GROUP BY worker ORDER BY worker")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(per_worker, [(64, 4 << 20), (64, 4 << 20)], "exactly 4 MiB each, in 64 KiB writes");
    let fio = Command::new("fio")
        .args(["--output-format=json", "--directory", &data, &job("one-pass.fio")])
        .current_dir(&s.dir)
        .output()
        .unwrap();
    assert!(fio.status.success(), "{}", text(&fio));
    let report: Value = serde_json::from_slice(&fio.stdout).unwrap();
    let written: Vec<i64> =
        report["jobs"].as_array().unwrap().iter().map(|j| j["write"]["io_bytes"].as_i64().unwrap()).collect();
    assert_eq!(written, [4 << 20, 4 << 20], "fio writes the same");
}

#[test]
fn several_targets_replace_the_files_a_job_file_names_in_order() {
    let s = Scratch::new("fio-devices");
    let (x, y) = (s.data().join("x").display().to_string(), s.data().join("y").display().to_string());
    let out = s.run(&["run", &job("devices.fio"), "--target", &x, "--target", &y, "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    assert_eq!(workload(&show, "disk0")["profile"]["targets"], serde_json::json!([x]));
    assert_eq!(workload(&show, "disk1")["profile"]["targets"], serde_json::json!([y]));
    let out = s.run(&["lint", &job("devices.fio"), "--target", &x, "--target", &y, "--target", &x]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("3 --target given, but its jobs name 2 targets (/dev/sdb, /dev/sdc)"),
        "{}",
        text(&out)
    );
    let scenario = s.scenario("name: y\nworkloads:\n  w: {rw: read, size: 1m, duration: 1s}\n");
    let out = s.run(&["lint", scenario.to_str().unwrap(), "--target", &x, "--target", &y]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("several --target are for a fio job file"), "{}", text(&out));
}

/// `fathom convert` prints the scenario a job file runs as: running the printed scenario
/// stores the same workloads, settings and phases as running the job file.
#[test]
fn convert_prints_a_scenario_that_runs_as_the_job_file() {
    let s = Scratch::new("fio-convert");
    let data = s.data().display().to_string();
    let out = s.run(&["convert", &job("stonewall.fio"), "--target", &data]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let yaml = s.dir.join("stonewall.yaml");
    std::fs::write(&yaml, &out.stdout).unwrap();
    let ran = |args: &[&str]| {
        let out = s.run(args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let show = s.show_json();
        let workloads: Vec<(Value, Value)> =
            show["workloads"].as_array().unwrap().iter().map(|w| (w["name"].clone(), w["profile"].clone())).collect();
        let phases: Vec<Value> = show["phases"].as_array().unwrap().iter().map(|p| p["label"].clone()).collect();
        (show["run"]["scenario"].clone(), workloads, phases)
    };
    let from_job = ran(&["run", &job("stonewall.fio"), "--target", &data, "-q"]);
    let from_yaml = ran(&["run", yaml.to_str().unwrap(), "-q"]);
    assert_eq!(from_job, from_yaml, "the job file and its conversion ran differently");
    assert_eq!(from_job.2, vec!["first", "second"], "{from_job:?}");
    // a scenario is not a job file
    let out = s.run(&["convert", yaml.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("not a fio job file"), "{}", text(&out));
}

/// fio's JSON report of `file` run in `dir` (also `${FATHOM_FIO_DIR}`), where its files go.
fn fio_report(file: &str, dir: &str) -> Value {
    // a wall-clock limit: fio 3.33 once hung asleep past its runtime under a loaded machine
    let fio = Command::new("timeout")
        .args(["120", "fio", "--output-format=json", file])
        .current_dir(dir)
        .env("FATHOM_FIO_DIR", dir)
        .output()
        .unwrap();
    assert!(fio.status.success(), "{}", text(&fio));
    serde_json::from_slice(&fio.stdout).unwrap()
}

#[test]
fn thinktime_paces_one_io_at_a_time_as_fio_does() {
    let s = Scratch::new("fio-think");
    let data = s.data().display().to_string();
    let out = s.run(&["run", &job("think.fio"), "--target", &data, "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let fathom = common::ops(&show, "think")[0]["iops"].as_f64().unwrap();
    let fio = fio_report(&job("think.fio"), &data)["jobs"][0]["read"]["iops"].as_f64().unwrap();
    // 10 ms of pause after each IO: at most 100 a second; a busy machine only slows both
    for (who, iops) in [("fathom", fathom), ("fio", fio)] {
        assert!((30.0..=101.0).contains(&iops), "{who}: {iops} IOPS with a 10 ms pause after each IO");
    }
}

#[test]
fn filesize_sizes_each_file_and_size_beside_it_bounds_the_bytes_as_fio_does() {
    let s = Scratch::new("fio-filesize");
    let data = s.data().display().to_string();
    // the file's own directory: one --target would put the job's files in one
    let out = s.fathom(&["run", &job("filesize.fio"), "-q"]).env("FATHOM_FIO_DIR", &data).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for file in ["files.0.0", "files.0.1"] {
        assert_eq!(std::fs::metadata(s.data().join(file)).unwrap().len(), 1 << 20, "{file}: filesize");
    }
    let bytes: i64 = s.db().query_row("SELECT SUM(bytes) FROM samples WHERE op = 1", [], |r| r.get(0)).unwrap();
    let fio = fio_report(&job("filesize.fio"), &data)["jobs"][0]["write"]["io_bytes"].as_i64().unwrap();
    assert_eq!((bytes, fio), (1536 << 10, 1536 << 10), "fathom and fio write `size`, over files of `filesize`");
}

#[test]
fn bsrange_draws_the_multiples_of_its_minimum_as_fio_does() {
    let s = Scratch::new("fio-bsrange");
    let data = s.data().display().to_string();
    let out = s.run(&["run", &job("bsrange.fio"), "--target", &data, "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let db = s.db();
    let (ops, bytes): (i64, i64) = db
        .query_row("SELECT SUM(ops), SUM(bytes) FROM samples WHERE op = 0", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    let sizes: Vec<i64> = db
        .prepare("SELECT DISTINCT size FROM io_sizes WHERE op = 0")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(ops, 3000);
    assert!(sizes.len() > 8 && sizes.iter().all(|s| s % 4096 == 0 && (4096..=65536).contains(s)), "{sizes:?}");
    let read = &fio_report(&job("bsrange.fio"), &data)["jobs"][0]["read"];
    let fio = read["io_bytes"].as_f64().unwrap() / read["total_ios"].as_f64().unwrap();
    // 4 to 64 KiB each as likely: 34 KiB on average (the bs=8k is overridden)
    for (who, mean) in [("fathom", bytes as f64 / ops as f64), ("fio", fio)] {
        assert!((30_000.0..40_000.0).contains(&mean), "{who}: a mean IO of {mean} bytes");
    }
}

#[test]
fn size_as_a_share_is_of_the_target_as_it_is_as_fio_takes_it() {
    let s = Scratch::new("fio-share");
    let data = s.data().display().to_string();
    let run = || s.fathom(&["run", &job("share.fio"), "-q"]).env("FATHOM_FIO_DIR", &data).output().unwrap();
    // a file that is not there yet has no size to take a share of (fio: "you need to specify size=")
    let out = run();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("size_percent: 30% of"), "{}", text(&out));
    assert!(text(&out).contains("give `size` in bytes"), "{}", text(&out));
    std::fs::write(s.data().join("share.dat"), vec![7u8; 8 << 20]).unwrap();
    let out = run();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let bytes: i64 = s.db().query_row("SELECT SUM(bytes) FROM samples WHERE op = 0", [], |r| r.get(0)).unwrap();
    let fio = fio_report(&job("share.fio"), &data)["jobs"][0]["read"]["io_bytes"].as_i64().unwrap();
    // 30% of 8 MiB, in whole 4 KiB blocks
    assert_eq!((bytes, fio), (614 * 4096, 614 * 4096), "fathom and fio read 30% of the file");
    assert_eq!(std::fs::metadata(s.data().join("share.dat")).unwrap().len(), 8 << 20, "the file is left as it was");
}

/// fio's `directory=` names a directory: one that does not exist is refused, by the
/// mapping and by `--engine fio`, and never laid out as a file of that name.
#[test]
fn a_directory_that_does_not_exist_is_refused_not_laid_out_as_a_file() {
    let s = Scratch::new("fio-no-directory");
    let missing = s.data().join("nosuch");
    let file = s.dir.join("d.fio");
    std::fs::write(&file, format!("[w]\ndirectory={}\nrw=write\nbs=4k\nsize=64k\n", missing.display())).unwrap();
    for engine in [&[][..], &["--engine", "fio"][..]] {
        let mut args = vec!["run", file.to_str().unwrap(), "-q"];
        args.extend(engine);
        let out = s.run(&args);
        assert_eq!(out.status.code(), Some(2), "{engine:?}: {}", text(&out));
        assert!(text(&out).contains("is not an existing directory"), "{engine:?}: {}", text(&out));
        assert!(!missing.exists(), "{engine:?}: {} was created", missing.display());
    }
    // an existing one gets the job's file inside it, as before
    std::fs::create_dir(&missing).unwrap();
    let out = s.run(&["run", file.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(missing.is_dir() && std::fs::read_dir(&missing).unwrap().count() == 1);
}

/// `convert` prints only what `run` would take: a job file whose mapping the scenario
/// loader refuses (a rate past fathom's bound) is refused by both, with the same words.
#[test]
fn convert_refuses_what_run_refuses() {
    let s = Scratch::new("fio-convert-refused");
    let file = s.dir.join("r.fio");
    let dir = s.data().display().to_string();
    std::fs::write(&file, format!("[r]\ndirectory={dir}\nrw=randread\nbs=4k\nsize=64k\nrate_iops=100000000\n"))
        .unwrap();
    let run = s.run(&["run", file.to_str().unwrap(), "-q"]);
    let convert = s.run(&["convert", file.to_str().unwrap()]);
    for out in [&run, &convert] {
        assert_eq!(out.status.code(), Some(2), "{}", text(out));
        assert!(text(out).contains("rate_iops: 100000000 IOs per second: at most"), "{}", text(out));
    }
    assert!(convert.stdout.is_empty(), "printed a scenario run refuses: {}", text(&convert));
}
