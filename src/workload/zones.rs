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
}
