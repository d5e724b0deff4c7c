//! The sizes fio's jobs give that take more than a line to map: `filesize`, each of a
//! job's files (beside it `size` is the bytes the job moves, not the files' size), and
//! `bsrange`, block sizes drawn in a range.

use super::mapping::JobMap;
use super::reader::Opt;
use super::semantics::refuse;
use super::values::{Unit, number, pair, quote};
use crate::error::Result;
use crate::scenario::pattern::BlockSizes;

impl JobMap<'_> {
    /// `size=N%`: that share of each target, known once the target is (fathom's
    /// `size_percent`); `None` for a size in bytes, or for 100%, all of it (the default).
    pub(super) fn size_percent(&self, o: &Opt) -> Result<Option<u32>> {
        let Some(pct) = o.text()?.trim().strip_suffix('%') else { return Ok(None) };
        let pct = number(pct, Unit::Count).map_err(|e| o.err(e))?;
        if !(1.0..=100.0).contains(&pct) || pct.fract() != 0.0 {
            return Err(o.err(format!("{pct}%: expected a whole percentage from 1 to 100")));
        }
        Ok(Some(pct as u32).filter(|&p| p < 100))
    }

    /// `bsrange=MIN-MAX` (or `MIN:MAX`; per direction as `bs`): the multiples of MIN up
    /// to MAX, each as likely, as fio draws them; fathom's `bsrange`.
    pub(super) fn bs_range(&mut self, o: &Opt) -> Result<()> {
        let Some(text) = self.one_of(o, &pair(o.text()?).map_err(|e| o.err(e))?)? else { return Ok(()) };
        let (low, high) = text
            .split_once(['-', ':'])
            .ok_or_else(|| o.err(format!("`{text}`: expected MIN-MAX, e.g. bsrange=4k-64k")))?;
        let (low, high) = (self.size(o, low)?, self.size(o, high)?);
        let sizes = BlockSizes::parse_range(&format!("{low}-{high}")).map_err(|e| o.err(e))?;
        let s = match sizes.range() {
            Some((min, max)) => self.key("bsrange", quote(&format!("{min}-{max}"))),
            None => self.key("bs", sizes.min().to_string()),
        };
        self.said(o, s);
        Ok(())
    }

    /// `filesize`: each file's size. A range (`filesize=1m-4m`: each file's size drawn in
    /// it) is refused unless its ends are equal: a workload's targets have one `size`.
    pub(super) fn file_size(&self, o: &Opt) -> Result<u64> {
        let text = o.text()?.trim();
        let (low, high) = text.split_once(['-', ':']).unwrap_or((text, text));
        let (low, high) = (self.size(o, low)?, self.size(o, high)?);
        if low != high {
            return Err(refuse(
                o,
                "files of sizes drawn in a range are not in fathom's model (a workload's targets have one size)",
            ));
        }
        if low == 0 {
            return Err(o.err("a file of 0 bytes: expected a size, e.g. filesize=1g"));
        }
        Ok(low)
    }

    /// `size` beside `filesize`: the bytes the job moves (each pass), at most its files'
    /// `total`, as fio takes it; nothing on a `time_based` job or one that gives `io_size`.
    pub(super) fn size_beside_filesize(&mut self, o: &Opt, total: u64) -> Result<()> {
        let text = o.text()?.trim();
        if text.ends_with('%') {
            return Err(refuse(o, "a share of the target beside filesize is not in fathom's model"));
        }
        let bytes = self.size(o, text)?;
        if self.opt("time_based").map(Opt::flag).transpose()?.unwrap_or(false) {
            self.said(o, "nothing: time_based runs for runtime; filesize sets each target's size");
        } else if self.opt("io_size").is_some() {
            self.said(o, "nothing: io_size sets the bytes the job moves; filesize each target's size");
        } else {
            let s = self.key("io_size", bytes.min(total).to_string());
            self.said(o, format!("{s} (beside filesize, size is the bytes the job moves, at most its files')"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::import::fio_job::mapping::tests::first_keys as keys;

    fn has(k: &[String], want: &[&str]) {
        for w in want {
            assert!(k.contains(&w.to_string()), "{w}: {k:?}");
        }
    }

    #[test]
    fn filesize_is_each_files_size_and_size_beside_it_the_bytes_moved() {
        let k = keys("[j]\ndirectory=/d\nnrfiles=2\nfilesize=1m\n").unwrap();
        has(&k, &["size: 1048576", "loops: 1"]);
        let k = keys("[j]\ndirectory=/d\nnrfiles=2\nfilesize=1m\nsize=512k\n").unwrap();
        has(&k, &["size: 1048576", "io_size: 524288"]);
        let k = keys("[j]\ndirectory=/d\nnrfiles=2\nfilesize=1m\nsize=8m\n").unwrap();
        has(&k, &["size: 1048576", "io_size: 2097152"]);
        let k = keys("[j]\nfilename=/dev/sdb\nfilesize=1g\nsize=8m\ntime_based\nruntime=5\n").unwrap();
        has(&k, &["size: 1073741824", "duration: 5s"]);
        assert!(!k.iter().any(|k| k.starts_with("io_size")), "{k:?}");
    }

    #[test]
    fn bsrange_is_the_multiples_of_its_minimum_and_wins_over_bs() {
        let k = keys("[j]\nbs=4k\nbsrange=4k-64k\n").unwrap();
        has(&k, &[r#"bsrange: "4096-65536""#]);
        assert!(!k.iter().any(|k| k.starts_with("bs:")), "{k:?}");
        has(&keys("[j]\nrw=randwrite\nbsrange=512-4k,1k:16k\n").unwrap(), &[r#"bsrange: "1024-16384""#]);
        has(&keys("[j]\nbsrange=4k-4k\n").unwrap(), &["bs: 4096"]);
        let k = keys("[j]\nbsrange=4k-64k\nbssplit=4k/50:8k/50\n").unwrap();
        assert!(!k.iter().any(|k| k.starts_with("bsrange")), "bssplit wins: {k:?}");
        let err = keys("[j]\nbsrange=64k-4k\n").unwrap_err();
        assert!(err.starts_with("t.fio:2: bsrange:"), "{err}");
    }

    #[test]
    fn size_as_a_share_is_size_percent_of_each_target() {
        has(&keys("[j]\nfilename=/dev/sdb\nsize=30%\n").unwrap(), &["size_percent: 30"]);
        let k = keys("[j]\nsize=100%\n").unwrap();
        assert!(!k.iter().any(|k| k.starts_with("size")), "all of it: {k:?}");
        let err = keys("[j]\nsize=0%\n").unwrap_err();
        assert!(err.starts_with("t.fio:2: size: 0%: expected a whole percentage from 1 to 100"), "{err}");
    }

    #[test]
    fn filesize_ranges_of_different_sizes_are_refused() {
        has(&keys("[j]\nfilesize=4k-4k\n").unwrap(), &["size: 4096"]);
        let err = keys("[j]\nnrfiles=4\nfilesize=256k-1m\n").unwrap_err();
        assert!(err.starts_with("t.fio:3: filesize: files of sizes drawn in a range"), "{err}");
        let err = keys("[j]\nfilesize=1m\nsize=30%\n").unwrap_err();
        assert!(err.starts_with("t.fio:3: size: a share of the target beside filesize"), "{err}");
    }
}
