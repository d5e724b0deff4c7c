//! Every file fathom reads is bounded: a regular file of at most its limit, or exit 2
//! naming it. A device never fills memory, a FIFO never hangs, a long file is refused
//! rather than read past its limit or cut.

use crate::common::{Scratch, bounded, text};
use std::process::Output;

const NULL_RUN: &str = "name: n\nworkloads:\n  n:\n    engine: null\n    rw: randread\n    duration: 1s\n";

fn refused(out: &Output, says: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", text(out));
    assert!(text(out).contains(says), "expected `{says}` in: {}", text(out));
    assert!(!text(out).contains("panicked"), "{}", text(out));
}

#[test]
fn devices_and_fifos_are_refused_as_inputs() {
    let s = Scratch::new("input-devices");
    let scenario = s.scenario(NULL_RUN);
    let scenario = scenario.to_str().unwrap();
    let hosts = s.local_inventory(&["a"]);
    let zero = "/dev/zero: is a character device, not a regular file";
    refused(&bounded(&s, &["lint", scenario, "--hosts", "/dev/zero"]), zero);
    refused(&bounded(&s, &["lint", scenario, "--hosts", &hosts, "--hooks", "/dev/zero"]), zero);
    refused(&bounded(&s, &["fit", "/dev/zero"]), zero);
    let fifo = s.dir.join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let out = bounded(&s, &["lint", scenario, "--hosts", fifo.to_str().unwrap()]);
    refused(&out, "fifo: is a named pipe (FIFO), not a regular file: expected a hosts inventory");
}

#[test]
fn long_inputs_are_refused_not_read_or_cut() {
    let s = Scratch::new("input-long");
    let padding = "# padding\n".repeat(110_000);
    let scenario = s.scenario(NULL_RUN);
    let hosts = s.local_inventory(&["a"]);
    let long_hosts = s.dir.join("long-hosts.yaml");
    std::fs::write(&long_hosts, format!("{}{padding}", std::fs::read_to_string(&hosts).unwrap())).unwrap();
    let out = bounded(&s, &["lint", scenario.to_str().unwrap(), "--hosts", long_hosts.to_str().unwrap()]);
    refused(&out, "long-hosts.yaml: goes on past 1 MiB (1048576 bytes): expected a hosts inventory of at most 1 MiB");

    let xray = s.dir.join("xray");
    std::fs::create_dir(&xray).unwrap();
    std::fs::write(xray.join("test.yml"), format!("name: x\n{padding}")).unwrap();
    let out = bounded(&s, &["lint", xray.to_str().unwrap(), "--hosts", &hosts]);
    refused(&out, "test.yml: goes on past 1 MiB (1048576 bytes): expected a scenario (an X-Ray test.yml)");

    // the job after the first MiB is not silently dropped
    let job = s.dir.join("long.fio");
    let data = s.data().join("f");
    let fio = format!("[one]\nfilename={}\nrw=read\nsize=1m\n{padding}[two]\nrw=write\n", data.display());
    std::fs::write(&job, fio).unwrap();
    let out = bounded(&s, &["lint", job.to_str().unwrap()]);
    refused(&out, "long.fio: goes on past 1 MiB (1048576 bytes): expected a scenario or fio job file");
    // nor in a file it includes, nor does an included FIFO hang
    let including = s.dir.join("including.fio");
    for (name, says) in [("long.fio", "long.fio: goes on past 1 MiB"), ("fifo", "fifo: is a named pipe (FIFO)")] {
        let fifo = s.dir.join("fifo");
        if name == "fifo" && !fifo.exists() {
            assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        }
        std::fs::write(&including, format!("include {name}\n[three]\nfilename={}\nrw=read\n", data.display())).unwrap();
        refused(&bounded(&s, &["lint", including.to_str().unwrap()]), says);
    }
}
