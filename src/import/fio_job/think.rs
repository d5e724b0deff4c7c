//! fio's `thinktime`: the job stalls that long after an IO completes before it issues
//! the next (after every `thinktime_blocks` IOs; a bare number is microseconds). With
//! one IO at a time and a pause after each, that is fathom's `think_time`, a slot's
//! pause after its IO. The other shapes are refused: after every N IOs fathom has no
//! pause, and at a depth above 1 fio drains the whole queue before it pauses while
//! fathom pauses each slot alone, so the two would not run the same load.

use super::mapping::JobMap;
use super::semantics::refuse;
use super::values::{Unit, number, trim_float};
use crate::error::Result;

impl JobMap<'_> {
    /// `thinktime`, `thinktime_blocks` and `thinktime_spin` (after the depth is mapped).
    pub(super) fn think(&mut self) -> Result<()> {
        let extras = ["thinktime_blocks", "thinktime_spin"];
        let pause = match self.opt("thinktime") {
            Some(o) => number(o.text()?, Unit::Micros).map_err(|e| o.err(e))?,
            None => 0.0,
        };
        if pause == 0.0 {
            if let Some(o) = self.opt("thinktime") {
                self.said(o, "nothing: no pause");
            }
            let job = self.job;
            for o in extras.iter().filter_map(|name| job.get(name)) {
                self.said(o, "nothing: the job has no thinktime");
            }
            return Ok(());
        }
        let o = self.opt("thinktime").expect("a pause was given");
        if let Some(b) = self.opt("thinktime_blocks") {
            match self.count(b)? {
                0 | 1 => self.said(b, "nothing: a pause after each IO, as think_time"),
                _ => {
                    return Err(refuse(
                        b,
                        "a pause after every N IOs is not in fathom's model (think_time pauses after each)",
                    ));
                }
            }
        }
        let depth = self.keys.iter().rev().find(|(k, _)| *k == "iodepth").map_or("1", |(_, v)| v.as_str());
        if depth != "1" {
            return Err(refuse(
                o,
                "at iodepth above 1 fio drains the queue and pauses the whole job, fathom's think_time pauses each IO slot",
            ));
        }
        let s = self.key("think_time", format!("{}ms", trim_float(pause / 1e3)));
        self.said(o, s);
        if let Some(spin) = self.opt("thinktime_spin") {
            self.said(spin, "nothing: fio spins the CPU for part of the same pause, fathom sleeps through it");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::import::fio_job::mapping::tests::first_keys as keys;

    #[test]
    fn thinktime_at_depth_one_is_think_time_in_microseconds() {
        let k = keys("[a]\nthinktime=2000\nthinktime_spin=500\nthinktime_blocks=1\n").unwrap();
        assert!(k.contains(&"think_time: 2ms".to_string()), "{k:?}");
        let k = keys("[a]\nioengine=libaio\ndirect=1\nthinktime=10ms\n").unwrap();
        assert!(k.contains(&"think_time: 10ms".to_string()), "depth 1 by default: {k:?}");
        let k = keys("[a]\nthinktime=0\nthinktime_blocks=8\n").unwrap();
        assert!(!k.iter().any(|k| k.starts_with("think_time")), "{k:?}");
    }

    #[test]
    fn thinktime_fathom_cannot_pause_alike_is_refused() {
        let err = keys("[a]\nthinktime=2000\nthinktime_blocks=4\n").unwrap_err();
        assert!(err.starts_with("t.fio:3: thinktime_blocks: a pause after every N IOs"), "{err}");
        let err = keys("[a]\nioengine=io_uring\niodepth=8\nthinktime=2000\n").unwrap_err();
        assert!(err.starts_with("t.fio:4: thinktime: at iodepth above 1 fio drains the queue"), "{err}");
        let err = keys("[a]\nthinktime=2q\n").unwrap_err();
        assert!(err.starts_with("t.fio:2: thinktime:"), "{err}");
    }
}
