//! `driver: iperf3` with the real iperf3 (Debian's) on loopback: fathom's bytes per
//! second and retransmits are checked against iperf3's own JSON report.

use crate::common;

use crate::common::servers;
use crate::common::{Scratch, ops, text};

/// iperf3's text output read independently of fathom: per interval each stream's
/// (bytes of its transfer column, retransmits), and the senders' closing bit/s summed.
fn iperf3_text(output: &str) -> (Vec<Vec<(f64, u64)>>, f64) {
    let mut intervals: Vec<Vec<(f64, u64)>> = Vec::new();
    let mut sender = 0.0;
    for line in output.lines().filter(|l| l.starts_with('[') && !l.starts_with("[SUM]")) {
        let f: Vec<&str> = line.split(']').nth(1).unwrap().split_whitespace().collect();
        let Some((start, _)) = f[0].split_once('-') else { continue };
        let Ok(start) = start.parse::<f64>() else { continue };
        let unit = match f[3] {
            "KBytes" => 1024.0,
            "MBytes" => 1024.0 * 1024.0,
            "GBytes" => 1024.0 * 1024.0 * 1024.0,
            _ => 1.0,
        };
        match f.last() {
            Some(&"sender") => sender += f[4].parse::<f64>().unwrap() * 1000.0,
            Some(&"receiver") => {}
            _ => {
                let i = start.round() as usize;
                intervals.resize(intervals.len().max(i + 1), Vec::new());
                intervals[i].push((f[2].parse::<f64>().unwrap() * unit, f[6].parse().unwrap()));
            }
        }
    }
    (intervals, sender)
}

#[test]
fn streams_bytes_and_retransmits_match_iperf3s_report() {
    let s = Scratch::new("iperf3-streams");
    let path = s.scenario(
        "name: net\n\
         workloads:\n\
         \x20 s3:\n\
         \x20   driver: iperf3\n\
         \x20   streams: 3\n\
         \x20   link: 100gbit\n\
         \x20   bitrate: 3gbit\n\
         \x20   duration: 4s\n",
    );
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let show = s.show_json();
    let run_dir = s.dir.join(format!("results/runs/{}", show["run"]["id"]));
    let output = std::fs::read_to_string(run_dir.join("s3.iperf3.out")).unwrap();
    let (intervals, sender) = iperf3_text(&output);
    let w = show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == "s3").unwrap();
    let seconds = (w["end_t"].as_i64().unwrap() - w["measure_t"].as_i64().unwrap()) as usize;
    assert_eq!(seconds, 4);
    // the seconds fathom measured are iperf3's first four intervals, every stream's
    // bytes (its transfer column, of three digits)
    let bytes: f64 = intervals[..seconds].iter().map(|i| i.iter().map(|s| s.0).sum::<f64>()).sum();
    let send = ops(&show, "s3").iter().find(|o| o["op"] == "send").unwrap_or_else(|| panic!("{show}"));
    let stored = send["bytes"].as_u64().unwrap() as f64;
    assert!((stored / bytes - 1.0).abs() < 0.01, "fathom {stored} bytes, iperf3 {bytes}");
    // its rate agrees with iperf3's closing figure for the sender
    let ours = send["gbit_per_s"].as_f64().unwrap() * 1e9;
    assert!((ours / sender - 1.0).abs() < 0.03, "fathom {ours} bit/s, iperf3 {sender}");
    // three streams, three workers, each with bytes of its own
    let per_worker: Vec<i64> = s
        .db()
        .prepare("SELECT sum(bytes) FROM samples WHERE op = 4 GROUP BY worker")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(per_worker.len(), 3, "{per_worker:?}");
    assert!(per_worker.iter().all(|b| *b > 0));
    // retransmits per second are the intervals' sums
    let stored: Vec<(i64, f64)> = s
        .db()
        .prepare("SELECT t, value FROM observations WHERE source = 'iperf3:s3' AND name = 'retransmits' ORDER BY t")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(stored.len(), seconds, "{stored:?}");
    for (i, (_, value)) in stored.iter().enumerate() {
        let want: u64 = intervals[i].iter().map(|s| s.1).sum();
        assert_eq!(*value as u64, want);
    }
    rtt_stored(&s, seconds);
    loopback_carried(&s, &show, w, &intervals);
    // the table shows throughput against the link, and iperf3's own closing line
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.lines().any(|l| l.starts_with("net:lo") && l.contains("rxMbit/s")), "{stdout}");
    assert!(stdout.contains("network (iperf3):") && stdout.contains("of link"), "{stdout}");
    assert!(stdout.contains("iperf3 s3 ok") && stdout.contains("Gbit/s"), "{stdout}");
    // fathom's server is gone (on the port it said: other tests run servers of their own)
    let stderr = String::from_utf8_lossy(&out.stderr);
    let port = stderr.split("iperf3 server on 127.0.0.1:").nth(1).and_then(|r| r.split_whitespace().next());
    let port = port.unwrap_or_else(|| panic!("the server's port is said: {stderr}"));
    assert!(servers::running(&format!("iperf3 -s -B 127.0.0.1 -p {port}")).is_empty());
}

/// The streams' round-trip time, from the kernel each second: on loopback, some µs.
fn rtt_stored(s: &Scratch, seconds: usize) {
    let rtt = |name: &str| -> Vec<f64> {
        let sql = "SELECT value FROM observations WHERE source = 'iperf3:s3' AND name = ?1 ORDER BY t";
        s.db().prepare(sql).unwrap().query_map([name], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    let (mean, max) = (rtt("rtt_ms"), rtt("rtt_max_ms"));
    assert!(mean.len() >= seconds - 1 && mean.len() == max.len(), "{mean:?} {max:?}");
    assert!(mean.iter().zip(&max).all(|(m, x)| 0.0 < *m && m <= x && *x < 1000.0), "{mean:?} {max:?}");
}

/// The loopback the streams crossed is observed: its bytes received, a counter stored
/// each second, rose by iperf3's bytes at least, less the one interval by which
/// iperf3's seconds and the observer's can be apart (other tests' traffic on the same
/// loopback only adds to it).
fn loopback_carried(s: &Scratch, show: &serde_json::Value, w: &serde_json::Value, intervals: &[Vec<(f64, u64)>]) {
    let lo = "node_network_receive_bytes_total{device=\"lo\"}";
    let samples: Vec<(i64, f64)> = s
        .db()
        .prepare("SELECT t, value FROM observations WHERE source = 'host' AND name = ?1 ORDER BY t")
        .unwrap()
        .query_map([lo], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let measure_t = w["measure_t"].as_i64().unwrap();
    let first = samples.iter().find(|x| x.0 == measure_t).unwrap_or_else(|| panic!("{samples:?}"));
    let last = samples.last().unwrap();
    assert!(last.0 >= w["end_t"].as_i64().unwrap(), "no sample at the workload's end: {samples:?}");
    let every: f64 = intervals.iter().map(|i| i.iter().map(|s| s.0).sum::<f64>()).sum();
    let one = intervals.iter().map(|i| i.iter().map(|s| s.0).sum::<f64>()).fold(0.0, f64::max);
    let rose = last.1 - first.1;
    assert!(rose >= every - one, "lo received {rose} bytes, iperf3 sent {every} (one interval {one})");
    // read back as a rate: show's mean is that rise per second of the seconds it spans
    let seen = show["observed"].as_array().unwrap().iter().find(|o| o["source"] == "host" && o["name"] == lo);
    let seen = seen.unwrap_or_else(|| panic!("{show}"));
    let span = (samples.last().unwrap().0 - samples[0].0) as f64;
    let delta = seen["delta"].as_f64().unwrap();
    assert!((seen["mean"].as_f64().unwrap() - delta / span).abs() < 1e-6 * delta, "{seen}");
}

#[test]
fn a_server_that_is_not_there_stops_the_run_before_it_starts() {
    let s = Scratch::new("iperf3-noserver");
    let path = s.scenario(
        "name: net\n\
         workloads:\n\
         \x20 w:\n\
         \x20   driver: iperf3\n\
         \x20   duration: 2s\n",
    );
    let port = servers::free_port();
    let out = s.run(&["run", path.to_str().unwrap(), "--set", &format!("server=127.0.0.1:{port}")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("iperf3 server 127.0.0.1:{port}: not accepting connections")), "{err}");
}

/// iperf3's seconds reach the store while it runs, not when it ends: the store holds
/// bytes of more and more seconds before iperf3's closing event is written.
#[test]
fn seconds_are_stored_while_iperf3_runs() {
    use common::live::{stored, watch};
    let s = Scratch::new("iperf3-live");
    // paced at 1 Gbit/s over two streams: what is judged is when its seconds are stored,
    // and that each second keeps to the bitrate asked
    let path = s.scenario(
        "name: net-live\nworkloads:\n  s: {driver: iperf3, link: 100gbit, streams: 2, bitrate: 1gbit, duration: 6s}\n",
    );
    let mut child =
        s.fathom(&["run", path.to_str().unwrap(), "-q"]).stdout(std::process::Stdio::null()).spawn().unwrap();
    let results = s.dir.join("results");
    // seconds of bytes stored while iperf3 has not ended
    let (seen, status) = watch(&mut child, || {
        let ended = stored(&results, "SELECT count(*) FROM events WHERE kind = 'iperf3'");
        let seconds = stored(&results, "SELECT count(DISTINCT t) FROM samples WHERE op = 4 AND bytes > 0");
        (ended == Some(0)).then_some(seconds.unwrap_or(0))
    });
    assert!(status.success());
    let running: Vec<i64> = seen.into_iter().flatten().collect();
    let most = running.iter().max().copied().unwrap_or(0);
    assert!(most >= 3, "only {most} seconds stored before iperf3 ended: {running:?}");
    let gbit: Vec<f64> = s
        .db()
        .prepare("SELECT sum(bytes) * 8 / 1e9 FROM samples WHERE op = 4 GROUP BY t ORDER BY t")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // (each stream paced at half of it: paced at the whole, two streams would carry 2)
    assert!(gbit.len() >= 5 && gbit.iter().all(|g| *g > 0.0 && *g < 1.1), "{gbit:?} Gbit/s, paced at 1");
}

/// A stream is Gbit/s: no op count, no latency, and no share of a link nobody named.
#[test]
fn a_stream_is_gbit_per_s_with_no_latency_and_no_link_unless_given() {
    let s = Scratch::new("iperf3-units");
    let path = s.scenario(
        "name: net\n\
         workloads:\n\
         \x20 one:\n\
         \x20   driver: iperf3\n\
         \x20   bitrate: 1gbit\n\
         \x20   duration: 2s\n",
    );
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("network (iperf3):") && !stdout.contains("of link"), "{stdout}");
    // the CPU is iperf3's, not fathom's: the programs' is counted (loopback streams
    // take a core's worth of it), not shown as fathom's 0.00
    assert!(stdout.lines().any(|l| l.starts_with("programs") && l.contains("cpu (cores)")), "{stdout}");
    let cpu: f64 = s
        .db()
        .query_row("SELECT sum(value) FROM observations WHERE source = 'programs' AND name = 'cpu_cores'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(cpu > 0.0, "{cpu}");
    let show = s.show_json();
    let send = ops(&show, "one").iter().find(|o| o["op"] == "send").unwrap();
    assert!(send["gbit_per_s"].as_f64().unwrap() > 0.0, "{send}");
    assert_eq!(send["unit"], "gbits");
    for absent in ["iops", "ops", "latency", "littles_n", "mb_per_s"] {
        assert!(send.get(absent).is_none(), "{absent} in {send}");
    }
    let runs = String::from_utf8(s.run(&["runs"]).stdout).unwrap();
    assert!(runs.contains(" Gbit/s send (one)") && !runs.contains("p99"), "{runs}");
    let csv = String::from_utf8(s.run(&["export"]).stdout).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let row = reader.records().next().unwrap().unwrap();
    let cell = |name: &str| row[header.iter().position(|h| h == name).unwrap()].to_string();
    assert!(cell("gbit_per_s").parse::<f64>().unwrap() > 0.0, "{csv}");
    assert_eq!((cell("iops"), cell("p99_us")), (String::new(), String::new()), "{csv}");
}
