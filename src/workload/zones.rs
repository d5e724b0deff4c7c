//! fio's strided zones in the generator: a worker does a zone's bytes of IO inside it,
//! then moves on to the next zone, as fio's `setup_strided_zone_mode` does.

use crate::scenario::model::Zones;

/// Where a zoned worker is: the zone it is in and the bytes it has done there.
#[derive(Debug, Clone)]
pub struct ZoneWalk {
    /// Bytes of IO each zone gets (counted in bytes issued, as fio counts them).
    size: u64,
    range: u64,
    /// From one zone's start to the next one's (`zonerange + zoneskip`).
    step: u64,
    /// The working set the zones lie in.
    span: u64,
    /// The current zone's start, relative to the working set's.
    start: u64,
    done: u64,
}

impl ZoneWalk {
    /// A walk that starts in the first zone, at the working set's start (each of fio's
    /// `numjobs` starts there too).
    pub fn new(z: &Zones, span: u64) -> ZoneWalk {
        ZoneWalk { size: z.size, range: z.range, step: z.range + z.skip, span, start: 0, done: 0 }
    }

    /// The current zone as `(start, end)` relative to the working set. A zone that would
    /// pass the end of the working set ends there, as fio's IO ends at the file's end.
    pub fn zone(&self) -> (u64, u64) {
        (self.start, (self.start + self.range).min(self.span))
    }

    /// Counts an IO of `len` bytes; true when the zone has had its bytes and the walk
    /// moved to the next one.
    pub fn count(&mut self, len: u64) -> bool {
        self.done += len;
        if self.done < self.size {
            return false;
        }
        self.done = 0;
        self.start += self.step;
        // fio wraps once the next zone would start at or past the end of the file
        if self.start >= self.span {
            self.start = 0;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Kind, Scenario, Source};
    use crate::workload::IoGen;
    use std::path::Path;

    #[test]
    fn a_walk_strides_by_range_and_skip_and_wraps_at_the_span() {
        let z = Zones { size: 8, range: 4, skip: 6 };
        let mut w = ZoneWalk::new(&z, 25);
        let mut starts = vec![w.zone()];
        for _ in 0..4 {
            // two IOs of 4 bytes fill a zone's 8
            assert!(!w.count(4));
            assert!(w.count(4));
            starts.push(w.zone());
        }
        assert_eq!(starts, vec![(0, 4), (10, 14), (20, 24), (0, 4), (10, 14)]);
        // a zone that passes the working set's end ends there
        assert_eq!(ZoneWalk::new(&Zones { size: 8, range: 40, skip: 0 }, 25).zone(), (0, 25));
    }

    /// The job the comparisons run: 16 MiB, so 13 zones of 512 KiB every 1.25 MiB fit
    /// before the walk wraps, and 6 MiB of IO wraps it.
    const JOB: &str = "[z]\nzonemode=strided\nfilesize=16m\nio_size=6m\nzonesize=128k\nzonerange=512k\n\
                       zoneskip=768k\nioengine=psync\nnorandommap\n";

    /// The offsets fio issues for `job` (on a file of its own), read from the iolog
    /// fio writes of every IO (`write_iolog`: `TIME FILE ACTION OFFSET LENGTH`).
    fn fio_offsets(job: &str, name: &str) -> Vec<(u64, u64)> {
        let dir = std::env::temp_dir().join(format!("fathom-zones-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("iolog");
        let text = format!("{job}filename={}\nwrite_iolog={}\n", dir.join("f").display(), log.display());
        std::fs::write(dir.join("job.fio"), text).unwrap();
        let out = std::process::Command::new("fio").arg(dir.join("job.fio")).output().expect("fio is installed");
        assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
        let ios = std::fs::read_to_string(&log).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        ios.lines()
            .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
                [_, _, "read" | "write", offset, len] => Some((offset.parse().unwrap(), len.parse().unwrap())),
                _ => None,
            })
            .collect()
    }

    /// The offsets fathom's generator issues for the same job, mapped as `fathom run
    /// JOB.fio` maps it, until its bound ends it.
    fn fathom_offsets(job: &str) -> Vec<(u64, u64)> {
        let text = format!("{job}filename=f\n");
        let mapping = crate::import::fio_job::map_file(Path::new("z.fio"), &text, &[]).unwrap();
        let yaml = mapping.yaml("z");
        let s = Scenario::load(&Source { origin: "z.fio".into(), text: &yaml }, &[]).unwrap();
        let Kind::Io(io) = &s.workloads[0].kind else { panic!("an IO workload") };
        assert_eq!(io.zones, Some(Zones { size: 128 << 10, range: 512 << 10, skip: 768 << 10 }));
        let mut g = IoGen::new("z", io, io.size.unwrap(), 0, 1, 1);
        std::iter::from_fn(|| g.next()).map(|io| (io.offset, io.len)).collect()
    }

    /// Each IO's zone (its offset over the 1.25 MiB stride), checking it starts inside
    /// the zone's 512 KiB, and with `whole` ends inside it too; consecutive IOs of one
    /// zone counted as one visit, with their bytes. fio draws a random offset for the
    /// smallest block, so its larger blocks may pass a zone's end; fathom's stay inside.
    fn visits(ios: &[(u64, u64)], whole: bool) -> Vec<(u64, u64)> {
        let (step, range) = (1280 << 10, 512 << 10);
        let mut out: Vec<(u64, u64)> = Vec::new();
        for &(offset, len) in ios {
            let zone = offset / step;
            let end = if whole { offset % step + len } else { offset % step + 1 };
            assert!(end <= range, "{offset}+{len} is outside zone {zone}");
            match out.last_mut() {
                Some((z, bytes)) if *z == zone => *bytes += len,
                _ => out.push((zone, len)),
            }
        }
        out
    }

    #[test]
    fn sequential_zones_issue_fios_offsets_exactly() {
        let job = format!("{JOB}rw=read\nbs=32k\n");
        let fio = fio_offsets(&job, "seq");
        assert_eq!(fio.len(), 192, "6 MiB of 32 KiB IOs");
        assert_eq!(fathom_offsets(&job), fio);
    }

    #[test]
    fn random_zones_visit_fios_zones_in_order_with_its_bytes_each() {
        let job = format!("{JOB}rw=randread\nbs=32k\n");
        let (fio, fathom) = (visits(&fio_offsets(&job, "rand"), true), visits(&fathom_offsets(&job), true));
        // 13 zones fit in 16 MiB; 48 visits of 128 KiB wrap the walk three times over
        let zones: Vec<u64> = (0..48).map(|i| i % 13).collect();
        assert_eq!(fio.iter().map(|v| v.0).collect::<Vec<_>>(), zones);
        assert_eq!(fathom, fio);
    }

    #[test]
    fn random_zones_with_a_split_share_the_bytes_as_fio_does() {
        let job = format!("{JOB}rw=randread\nbssplit=4k/50:64k/50\n");
        let (fio, fathom) = (visits(&fio_offsets(&job, "split"), false), visits(&fathom_offsets(&job), true));
        // each zone's last IO passes its 128 KiB by a different amount, so the 6 MiB
        // may end one zone apart: the same walk, one a prefix of the other
        let n = fathom.len().min(fio.len());
        assert!(fathom.len().abs_diff(fio.len()) <= 1, "{} against {} visits", fathom.len(), fio.len());
        let zones = |v: &[(u64, u64)]| v[..n].iter().map(|v| v.0).collect::<Vec<_>>();
        assert_eq!(zones(&fathom), zones(&fio));
        // a zone ends once it has had 128 KiB, its last IO passing that by less than a
        // 64 KiB block (the walk's last visit is cut short by the end of the IO)
        for (a, b) in fathom[..n - 1].iter().zip(&fio[..n - 1]) {
            assert!((128 << 10..192 << 10).contains(&a.1), "{a:?}");
            assert!((128 << 10..192 << 10).contains(&b.1), "{b:?}");
        }
    }
}
