//! fio's strided zones (`zonesize`, `zonerange`, `zoneskip`) on fathom's engine: the
//! blocks fathom writes for a zoned job file are the ones fio's `write_iolog` names for
//! the same job, and the X-Ray scenario whose DSS files stride zones loads on its hosts.

use crate::common::{Scratch, text};
use std::collections::BTreeSet;
use std::process::Command;

/// 16 MiB in zones of 512 KiB every 1.25 MiB (13 fit before the walk wraps), 256 KiB
/// of 64 KiB zeroed writes in each; 4 MiB in all visits 16 zones, wrapping once.
const JOB: &str = "[z]\nzonemode=strided\nfilesize=16m\nsize=4m\nzonesize=256k\nzonerange=512k\n\
                   zoneskip=768k\nbs=64k\nzero_buffers\nioengine=psync\nnorandommap\n";

const BLOCK: u64 = 64 << 10;

/// The 64 KiB blocks fio writes for `job`, read from the iolog it writes of every IO
/// (`TIME FILE ACTION OFFSET LENGTH`), in the order it writes them.
fn fio_blocks(s: &Scratch, job: &str) -> Vec<u64> {
    let log = s.dir.join("fio.iolog");
    let file = format!("{job}filename={}\nwrite_iolog={}\n", s.dir.join("fio.dat").display(), log.display());
    std::fs::write(s.dir.join("fio.fio"), file).unwrap();
    let out = Command::new("fio").arg(s.dir.join("fio.fio")).output().expect("fio is installed");
    assert!(out.status.success(), "fio: {}", text(&out));
    let ios = std::fs::read_to_string(&log).unwrap();
    ios.lines()
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [_, _, "write", offset, len] => {
                assert_eq!(len, BLOCK.to_string());
                Some(offset.parse::<u64>().unwrap() / BLOCK)
            }
            _ => None,
        })
        .collect()
}

/// The 64 KiB blocks fathom wrote running `job` (`fathom run JOB.fio --target DIR`):
/// it lays its file out with random data, and the job writes zeros.
fn fathom_blocks(s: &Scratch, job: &str) -> BTreeSet<u64> {
    let path = s.dir.join("fathom.fio");
    std::fs::write(&path, job).unwrap();
    let out = s.run(&["run", path.to_str().unwrap(), "--target", s.data().to_str().unwrap(), "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    let data = std::fs::read(s.data().join("fathom-z.dat")).unwrap();
    assert_eq!(data.len(), 16 << 20);
    let zero = vec![0u8; BLOCK as usize];
    data.chunks(BLOCK as usize).enumerate().filter(|(_, b)| *b == zero).map(|(i, _)| i as u64).collect()
}

/// The zone a block lies in, or `None` in the gap between zones.
fn zone(block: u64) -> Option<u64> {
    let (step, range) = (1280 << 10, 512 << 10);
    (block * BLOCK % step < range).then_some(block * BLOCK / step)
}

#[test]
fn sequential_zones_write_the_blocks_fio_writes() {
    let s = Scratch::new("zones-seq");
    let job = format!("{JOB}rw=write\n");
    let fio = fio_blocks(&s, &job);
    // 4 blocks at the start of each zone, zone after zone, the 14th back at the first
    assert_eq!(fio.len(), 64);
    assert_eq!(&fio[..8], &[0, 1, 2, 3, 20, 21, 22, 23]);
    assert_eq!(&fio[52..56], &[0, 1, 2, 3]);
    assert_eq!(fathom_blocks(&s, &job), fio.into_iter().collect());
}

#[test]
fn random_zones_write_only_inside_the_zones_fio_visits() {
    let s = Scratch::new("zones-rand");
    let job = format!("{JOB}rw=randwrite\n");
    let fio = fio_blocks(&s, &job);
    let fathom = fathom_blocks(&s, &job);
    let zones = |blocks: &mut dyn Iterator<Item = &u64>| -> BTreeSet<u64> {
        blocks.map(|&b| zone(b).unwrap_or_else(|| panic!("block {b} lies between zones"))).collect()
    };
    // fio's draws and fathom's differ; the zones they land in are the same 13
    let visited = zones(&mut fio.iter());
    assert_eq!(visited, (0..13).collect());
    assert_eq!(zones(&mut fathom.iter()), visited);
    // with replacement (norandommap), a zone's 4 writes cover 1 to 4 of its 8 blocks,
    // the zones visited twice up to 8
    assert!((13..=64).contains(&fathom.len()), "{fathom:?}");
}

#[test]
fn a_zone_option_without_zonesize_is_refused_at_its_line() {
    let s = Scratch::new("zones-no-size");
    let path = s.dir.join("bad.fio");
    std::fs::write(&path, "[z]\nzonemode=strided\nsize=1m\nrw=read\n").unwrap();
    let out = s.run(&["lint", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.fio:2") && err.contains("zonemode") && err.contains("zonesize"), "{err}");
    let scenario = s.scenario(
        "name: z\nworkloads:\n  w: {target: TARGET, size: 1m, rw: read, duration: 1s,\n      zoneskip: 1m}\n",
    );
    let out = s.run(&["lint", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("scenario.yaml:4") && err.contains("zoneskip") && err.contains("set `zonesize` too"), "{err}");
}

/// An X-Ray scenario whose DSS reads strided zones as X-Ray's files write them
/// (`zonesize` with no `zonemode`, as fio before 3.10 read it), placed as written: OLTP
/// on node 0, a DSS on each of nodes 1 and 2, each DSS walking its zones.
#[test]
fn an_x_ray_dss_of_strided_zones_runs_on_the_nodes_the_scenario_gives() {
    let s = Scratch::new("zones-xray");
    let hosts = s.local_inventory(&["n0", "n1", "n2"]);
    let dir = format!("{}/tests/data/xray/zoned", env!("CARGO_MANIFEST_DIR"));
    let out = s.run(&["lint", &dir, "--hosts", &hosts]);
    assert!(out.status.success(), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    for (dss, host) in [("DSS 0:scan", "n1"), ("DSS 1:scan", "n2")] {
        assert!(shown.contains(&format!("{dss} on {host}:")), "{shown}");
        assert!(!shown.contains(&format!("{dss} on n0:")), "{shown}");
    }
    assert!(shown.contains("OLTP:data on n0:") && !shown.contains("OLTP:data on n1:"), "{shown}");
    // the DSS joins other work: its phase is named for it, not counted as nodes
    assert!(shown.contains("phase: \"with DSS 0\""), "{shown}");
    let converted = s.run(&["convert", &dir, "--hosts", &hosts]);
    let yaml = String::from_utf8_lossy(&converted.stdout);
    assert!(yaml.contains("zonesize: 1048576") && yaml.contains("zoneskip: 3145728"), "{yaml}");
}

#[test]
fn a_hosts_workers_walk_the_zones_the_scenario_gives() {
    let s = Scratch::new("zones-on-a-host");
    let hosts = s.local_inventory(&["n0", "n1"]);
    // n1's agent loads the scenario the controller sends and runs its zoned writes
    let scenario = s.scenario(
        "name: z\nworkloads:\n  z: {hosts: n1, size: 16m, rw: write, bs: 64k, zero: true, duration: 2s,\n      \
         zonesize: 256k, zonerange: 512k, zoneskip: 768k, rate_iops: 20}\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap(), "--hosts", &hosts, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    let data = std::fs::read(s.dir.join("host-n1/fathom-z.dat")).unwrap();
    let zero = vec![0u8; BLOCK as usize];
    let written: Vec<u64> =
        data.chunks(BLOCK as usize).enumerate().filter(|(_, b)| *b == zero).map(|(i, _)| i as u64).collect();
    // each zone's 256 KiB is its first 4 blocks, from the first zone on
    assert!(written.len() >= 8, "{written:?}");
    assert!(written.iter().all(|&b| zone(b).is_some() && b % 20 < 4), "{written:?}");
    assert_eq!(&written[..8], &[0, 1, 2, 3, 20, 21, 22, 23]);
    assert!(std::fs::read_dir(s.dir.join("host-n0")).unwrap().next().is_none(), "n0 runs nothing");
}
