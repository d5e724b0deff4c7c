//! What fathom writes, checked on disk: compressibility with gzip, duplicate blocks by
//! hashing, and crc32c headers that a read workload verifies and that catch corruption.

use crate::common::{Scratch, ops, text};
use std::collections::HashMap;
use std::io::Write;

/// Runs `body` (a scenario) and returns the bytes of the data file `name`.
fn write_and_read_back(s: &Scratch, body: &str, name: &str) -> Vec<u8> {
    let scenario = s.scenario(body);
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::read(s.data().join(format!("fathom-{name}.dat"))).unwrap()
}

#[test]
fn written_data_compresses_as_asked() {
    let s = Scratch::new("compress");
    for percent in [30u32, 60] {
        let data = write_and_read_back(
            &s,
            &format!(
                "name: c\nworkloads:\n  c{percent}:\n    target: TARGET\n    rw: write\n    bs: 64k\n    size: 8m\n    \
                 prefill: true\n    compress_percent: {percent}\n    duration: 1s\n"
            ),
            &format!("c{percent}"),
        );
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&data).unwrap();
        let saving = 100.0 * (1.0 - z.finish().unwrap().len() as f64 / data.len() as f64);
        assert!((saving - percent as f64).abs() <= 5.0, "asked {percent}%, gzip saved {saving:.1}%");
        let zeros = data.iter().filter(|&&b| b == 0).count() as f64 / data.len() as f64;
        assert!(zeros < 0.01, "compressible data is not zeros: {:.1}% zero bytes", zeros * 100.0);
    }
}

#[test]
fn written_data_repeats_blocks_as_asked() {
    let s = Scratch::new("dedupe");
    let data = write_and_read_back(
        &s,
        "name: d\nworkloads:\n  d:\n    target: TARGET\n    rw: randwrite\n    bs: 4k\n    size: 8m\n    \
         prefill: true\n    dedupe_percent: 40\n    iodepth: 4\n    duration: 1s\n",
        "d",
    );
    // the blocks whose content occurs more than once: 40% of them (the first copy of
    // each of the 64 shared contents counts too, so a small file is not judged by the
    // pool's size); 2,048 blocks put one standard deviation at 1.1 points
    let mut copies: HashMap<&[u8], usize> = HashMap::new();
    let blocks = data.len() / 4096;
    for b in data.chunks(4096) {
        *copies.entry(b).or_default() += 1;
    }
    let repeated: usize = copies.values().filter(|&&n| n > 1).sum();
    let share = repeated as f64 * 100.0 / blocks as f64;
    assert!((share - 40.0).abs() <= 5.0, "asked 40% duplicate blocks, found {share:.1}% of {blocks}");
    assert!(copies.len() < blocks, "some content repeats");
}

#[test]
fn crc_reads_verify_what_was_written_and_catch_corruption() {
    let s = Scratch::new("crc");
    let body = "name: crc\ndefaults:\n  target: TARGET\n  file: shared\n  bs: 4k\n  size: 4m\n  crc: crc32c\n  \
                iodepth: 4\n  duration: 1s\nworkloads:\n  fill:\n    rw: write\n    prefill: true\n  check:\n    \
                rw: randread\ntimeline:\n  - start: fill\n  - start: check\n";
    let scenario = s.scenario(body);
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let check = &show["workloads"][1]["ops"][0]["verify"];
    assert!(check["good"].as_u64().unwrap() > 100, "{check}");
    assert_eq!((check["corrupt"].as_u64(), check["misplaced"].as_u64()), (Some(0), Some(0)));

    // Flip one byte in every block of the first half, then read it all again.
    let path = s.data().join("fathom-shared.dat");
    let mut data = std::fs::read(&path).unwrap();
    for block in data[..2 << 20].chunks_mut(4096) {
        block[1000] ^= 0x5a;
    }
    std::fs::write(&path, &data).unwrap();
    let out = s.run(&["run", scenario.to_str().unwrap(), "--set", "fill.rw=read", "--set", "fill.prefill=false"]);
    assert_eq!(out.status.code(), Some(1), "corruption fails the run: {}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("data verification failed"), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("the storage returned wrong data"), "{}", text(&out));
    let show = s.show_json();
    assert_eq!(show["run"]["status"], "failed");
    let v = &show["workloads"][1]["ops"][0]["verify"];
    let (good, corrupt) = (v["good"].as_f64().unwrap(), v["corrupt"].as_f64().unwrap());
    let share = corrupt / (good + corrupt);
    assert!((share - 0.5).abs() < 0.1, "half the blocks are corrupt: {v}");
}

/// A random pass with `randommap` writes every block of a fresh file exactly once: its
/// writes are as many as the blocks, and a read of the file checks a crc32c header in
/// every block, which only a write of this run put there (the layout's blocks have
/// none). Drawn with replacement, as without `randommap`, about a third of the blocks
/// are never written, which the same check finds.
#[test]
fn a_random_pass_with_randommap_writes_every_block_exactly_once() {
    let s = Scratch::new("randommap");
    let blocks = 2048u64;
    let body = "name: pass\nquestion: how long does one random pass over every block take?\ndefaults:\n  \
                target: TARGET\n  bs: 4k\n  size: 8m\n  crc: crc32c\n  iodepth: 4\nworkloads:\n  pass:\n    \
                file: PASS\n    rw: randwrite\n    randommap: RANDOMMAP\n    loops: 1\n  check:\n    file: PASS\n    \
                rw: read\n    loops: 1\ntimeline:\n  - start: pass\n  - start: check\n";
    let mut good = Vec::new();
    for randommap in [true, false] {
        let body = body.replace("RANDOMMAP", &randommap.to_string()).replace("PASS", &format!("p{randommap}"));
        let scenario = s.scenario(&body);
        let out = s.run(&["run", scenario.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let show = s.show_json();
        let writes = &ops(&show, "pass")[0];
        assert_eq!((writes["op"].as_str(), writes["ops"].as_u64()), (Some("write"), Some(blocks)), "{writes}");
        let v = &ops(&show, "check")[0]["verify"];
        assert_eq!((v["corrupt"].as_u64(), v["misplaced"].as_u64()), (Some(0), Some(0)), "{v}");
        good.push(v["good"].as_u64().unwrap());
        if randommap {
            // the answer is the time the pass took, and its rate
            let shown = String::from_utf8_lossy(&s.run(&["show", "last"]).stdout).to_string();
            let first = shown.lines().next().unwrap_or_default();
            assert!(
                first.starts_with(
                    "how long does one random pass over every block take? every block once (2,048 IOs) in "
                ) && first.contains(" s, ")
                    && first.ends_with("IOPS write"),
                "{shown}"
            );
        }
    }
    assert_eq!(good[0], blocks, "with randommap every block was written");
    assert!(good[1] < blocks * 3 / 4, "drawn with replacement, blocks were missed: {good:?}");
}
