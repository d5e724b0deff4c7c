//! An agent that breaks the protocol's bounds cannot exhaust or stall the controller: a
//! stand-in agent (first in the inventory's `fathom:`) relays the real agent, then, once
//! the real one has sent its first sample, sends what no agent would: samples of
//! seconds ever further ahead, a sample of 200,000 block sizes, a 50 MB line. The
//! controller drops the host, naming it and the bound, within a bound of time and memory,
//! and the run ends, never left `running`. And `fathom agent` itself, sent such a line,
//! says so and exits non-zero.

use crate::common::{Bound, Scratch, text, within};
use std::os::unix::process::CommandExt;

/// The stand-in: the real agent (`$REAL_FATHOM agent ...`) relayed both ways, and after
/// its first sample what `$HOSTILE` names.
const STAND_IN: &str = r#"#!/usr/bin/env python3
import json, os, subprocess, sys, threading
real = subprocess.Popen([os.environ["REAL_FATHOM"], *sys.argv[1:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def feed():
    for line in sys.stdin.buffer:
        real.stdin.write(line)
        real.stdin.flush()
    real.stdin.close()
threading.Thread(target=feed, daemon=True).start()
out, mode, done = sys.stdout.buffer, os.environ["HOSTILE"], False
for line in real.stdout:
    out.write(line)
    out.flush()
    if done or b'"type":"sample"' not in line:
        continue
    done = True
    sample = json.loads(line)
    if mode == "seconds":
        for t in range(100, 200100):
            sample["t"] = t
            out.write(json.dumps(sample, separators=(",", ":")).encode() + b"\n")
    elif mode == "sizes":
        sample["sizes"] = [[512 * (i + 1), 1] for i in range(200000)]
        out.write(json.dumps(sample, separators=(",", ":")).encode() + b"\n")
    else:
        out.write(b"x" * (50 << 20) + b"\n")
    out.flush()
"#;

/// A run of a 6 s workload on host `h`, whose agent is the stand-in sending `hostile`,
/// under a 4 GiB address space: its output, within a bound of CPU and time.
fn run_with(s: &Scratch, hostile: &str) -> std::process::Output {
    use std::os::unix::fs::PermissionsExt;
    let stand_in = s.dir.join("stand-in-agent");
    std::fs::write(&stand_in, STAND_IN).unwrap();
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    let hosts = s.dir.join("hosts.yaml");
    let inventory =
        format!("hosts:\n  h: {{transport: local, fathom: {}, target: {}}}\n", stand_in.display(), s.data().display());
    std::fs::write(&hosts, inventory).unwrap();
    let path = s.scenario("name: far\nworkloads:\n  w: {hosts: [h], engine: null, rw: randread, duration: 6s}\n");
    let mut cmd = s.fathom(&["run", path.to_str().unwrap(), "--hosts", hosts.to_str().unwrap()]);
    cmd.env("REAL_FATHOM", env!("CARGO_BIN_EXE_fathom")).env("HOSTILE", hostile);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 4 << 30, rlim_max: 4 << 30 };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let bound = Bound { cpu: std::time::Duration::from_secs(40), clock: std::time::Duration::from_secs(90) };
    within(s, cmd, bound).unwrap_or_else(|e| panic!("{hostile}: {e}"))
}

#[test]
fn an_agent_past_the_protocols_bounds_is_dropped_and_the_run_ends() {
    let s = Scratch::new("hostile-agents");
    let cases = [
        ("seconds", "more than 10 s ahead; the host is dropped"),
        ("sizes", "200000 block sizes, more than the 1024 a sample may count; the host is dropped"),
        ("line", "a line longer than 4 MiB (it began `xxxxx"),
    ];
    for (hostile, says) in cases {
        let out = run_with(&s, hostile);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("host h (local): ") && err.contains(says), "{hostile}: {}", text(&out));
        // never a 50 MB line echoed whole
        assert!(err.len() < 1 << 20, "{hostile}: {} bytes on stderr", err.len());
        // the run ended, partial: its host lost, the seconds it sent before kept
        let runs = s.runs();
        let (status, _) = runs.last().unwrap();
        assert!(["partial", "completed", "failed"].contains(&status.as_str()), "{hostile}: left {status}");
        let show = s.show_json();
        let lost = show["events"].as_array().unwrap().iter().any(|e| e["kind"] == "host-lost" && e["label"] == "h");
        assert!(lost, "{hostile}: no host-lost event: {}", show["events"]);
    }
}

#[test]
fn the_agent_refuses_a_line_past_its_bounds_and_says_so() {
    let s = Scratch::new("hostile-controller");
    for (line, says) in [
        (b"x".repeat(5 << 20), "a line longer than 4 MiB (it began `xxxx"),
        (b"{\"bye\":\xff\xfe}".to_vec(), "a line that is not UTF-8"),
    ] {
        let mut agent = std::process::Command::new(env!("CARGO_BIN_EXE_fathom"));
        agent.args(["agent", "--name", "h"]).current_dir(&s.dir);
        agent.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::null());
        agent.stderr(std::process::Stdio::piped());
        let mut child = agent.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        let mut bytes = line.clone();
        bytes.push(b'\n');
        let _ = std::io::Write::write_all(&mut input, &bytes);
        drop(input);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(says) && err.len() < 4096, "{err}");
    }
}
