//! The options of a job that map one to one to a scenario key (or to nothing), and
//! fio's `random_distribution` in fathom's words.

use super::mapping::JobMap;
use super::reader::Opt;
use super::semantics::refuse;
use super::values::{pair, quote, zones};
use crate::error::Result;

impl<'a> JobMap<'a> {
    /// The options that map one to one (or to nothing), in the order the job has them.
    pub(super) fn simple(&mut self, o: &'a Opt) -> Result<()> {
        let v = o.value.as_deref().map(str::trim);
        match o.name.as_str() {
            "offset" => {
                let text = o.text()?;
                if text.trim().ends_with('%') {
                    return Err(refuse(o, "an offset as a share of the target is not in fathom's model"));
                }
                let s = self.key("offset", self.size(o, text)?.to_string());
                self.said(o, s);
            }
            "direct" | "buffered" => {
                let s = format!("direct: {}", self.direct()?);
                self.said(o, s);
            }
            "numjobs" => {
                let s = self.key("jobs", self.count(o)?.max(1).to_string());
                self.said(o, s);
            }
            "rate_process" if self.opt("rate_iops").or(self.opt("rate")).is_none() => {
                self.said(o, "nothing: the job asks no rate");
            }
            "rate_process" => {
                let arrival = match v {
                    Some("poisson") => "poisson",
                    Some("linear") => "uniform",
                    _ => return Err(o.err("expected linear or poisson")),
                };
                let s = self.key("arrival", arrival);
                self.said(o, s);
            }
            "random_distribution" => {
                let d = self.distribution(o)?;
                let s = self.key("distribution", quote(&d));
                self.said(o, s);
            }
            "percentage_random" => {
                let pct = self.percent(o)?;
                if self.rw.is_random() {
                    let s = self.key("random_percent", pct.to_string());
                    self.said(o, s);
                } else {
                    self.said(o, "nothing: the job is sequential");
                }
            }
            "zonemode" | "zonesize" | "zonerange" | "zoneskip" => self.zone(o)?,
            _ => self.data_and_sync(o)?,
        }
        Ok(())
    }

    /// fio's strided zones. fio strides in a job of one file only: with several it
    /// ignores the zone options, and so does the mapping.
    fn zone(&mut self, o: &'a Opt) -> Result<()> {
        let strided = match self.opt("zonemode") {
            Some(m) => match m.text()?.trim() {
                "strided" => true,
                "none" => false,
                "zbd" => return Err(refuse(m, "zoned block devices (zonemode=zbd) are not in fathom's model")),
                v => return Err(m.err(format!("`{v}`: expected none, strided or zbd"))),
            },
            // the mode older fio ran whenever `zonesize` was given (fio 3.10 and later
            // ask for `zonemode=strided`)
            None => true,
        };
        let size = self.opt("zonesize").is_some();
        match (o.name.as_str(), strided) {
            ("zonemode", false) if size => {
                return Err(refuse(o, "zonemode=none turns zones off: fio refuses `zonesize` beside it"));
            }
            (_, false) => self.said(o, "nothing: zonemode=none turns zones off"),
            ("zonemode", true) if !size => {
                return Err(o.err("strided zones need `zonesize` (the bytes of IO each zone gets)"));
            }
            (_, true) if self.targets.len() > 1 => self.said(o, "nothing: fio strides zones in a job of one file only"),
            ("zonemode", true) => self.said(o, "strided zones, as zonesize says"),
            (name, true) => {
                let key = match name {
                    "zonesize" => "zonesize",
                    "zonerange" => "zonerange",
                    _ => "zoneskip",
                };
                let s = self.key(key, self.size(o, o.text()?)?.to_string());
                self.said(o, s);
            }
        }
        Ok(())
    }

    /// The options about the data written and how it is synced, which map one to one (or
    /// to nothing).
    fn data_and_sync(&mut self, o: &'a Opt) -> Result<()> {
        let v = o.value.as_deref().map(str::trim);
        match o.name.as_str() {
            "norandommap" => self.said(o, "nothing: fathom draws random offsets with replacement unless `randommap`"),
            "randrepeat" | "randseed" => self.said(o, "nothing: fathom's offsets come from its own seeded generator"),
            "refill_buffers" => self.said(o, "nothing: fathom writes fresh random data by default"),
            "buffer_compress_percentage" => {
                let s = self.key("compress_percent", self.percent(o)?.min(99).to_string());
                self.said(o, s);
            }
            "dedupe_percentage" => {
                let s = self.key("dedupe_percent", self.percent(o)?.to_string());
                self.said(o, s);
            }
            "zero_buffers" if o.flag()? => {
                let s = self.key("zero", "true");
                self.said(o, s);
            }
            "fsync" if self.opt("fdatasync").is_some() => {
                return Err(refuse(o, "fathom syncs one way per workload: give `fsync` or `fdatasync`, not both"));
            }
            "fsync" | "fdatasync" => {
                let n = self.count(o)?;
                if n > 0 {
                    let s = self.key("fsync_every", n.to_string());
                    let s = if o.name == "fdatasync" { format!("{s}, {}", self.key("fdatasync", "true")) } else { s };
                    self.said(o, s);
                }
            }
            "verify" => match v {
                Some("0" | "none") => self.said(o, "nothing"),
                Some("crc32c" | "crc32c-intel") => {
                    let s = self.key("crc", "crc32c");
                    self.said(o, s);
                }
                _ => return Err(refuse(o, "fathom verifies with crc32c only")),
            },
            "stonewall" | "wait_for" | "startdelay" => self.said(o, "the timeline (see below)"),
            "new_group" => self.said(o, "nothing: a reporting group; phases follow stonewall"),
            _ => {}
        }
        Ok(())
    }

    /// fio's `random_distribution` in fathom's words (per direction as `bs`).
    fn distribution(&self, o: &Opt) -> Result<String> {
        let both = pair(o.text()?).map_err(|e| o.err(e))?;
        let Some(text) = self.one_of(o, &both)? else { return Ok("uniform".into()) };
        let text = text.trim();
        let (kind, arg) = text.split_once(':').unwrap_or((text, ""));
        match kind {
            "random" => Ok("uniform".into()),
            "zipf" | "pareto" | "normal" if arg.contains(':') || arg.contains(',') => {
                Err(refuse(o, "a distribution's center (`:CENTER`) is not in fathom's model"))
            }
            "zipf" | "pareto" => Ok(text.to_string()),
            "normal" => Ok(format!("normal:{arg}%")),
            "zoned" => Ok(format!("zoned:{}", zones(arg).map_err(|e| o.err(e))?)),
            _ => Err(refuse(o, "fathom has random (uniform), zipf, pareto, normal and zoned distributions")),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::import::fio_job::mapping::tests::first_keys as keys;

    const ZONED: &str = "[j]\nfilename=/dev/sdd\nfilesize=512g\nsize=32g\nzonesize=2g\nzoneskip=30g\nrw=read\n";

    #[test]
    fn zonesize_alone_strides_as_older_fio_did_and_zonemode_strided_too() {
        for text in [ZONED.to_string(), format!("{ZONED}zonemode=strided\nzonerange=4g\n")] {
            let k = keys(&text).unwrap();
            assert!(k.contains(&"zonesize: 2147483648".to_string()), "{k:?}");
            assert!(k.contains(&"zoneskip: 32212254720".to_string()), "{k:?}");
        }
        let k = keys(&format!("{ZONED}zonerange=4g\n")).unwrap();
        assert!(k.contains(&"zonerange: 4294967296".to_string()), "{k:?}");
    }

    #[test]
    fn zones_fio_would_not_stride_are_left_out_or_refused() {
        // fio strides one file only
        let k = keys("[j]\nfilename=/d/a:/d/b\nsize=8m\nzonesize=1m\nzoneskip=1m\n").unwrap();
        assert!(!k.iter().any(|k| k.starts_with("zone")), "{k:?}");
        let k = keys("[j]\nfilename=/d/a\nsize=8m\nzonemode=none\nzoneskip=1m\n").unwrap();
        assert!(!k.iter().any(|k| k.starts_with("zone")), "{k:?}");
        let refused = [
            ("zonemode=none\nzonesize=1m\n", "fio refuses `zonesize` beside it"),
            ("zonemode=strided\n", "strided zones need `zonesize`"),
            ("zonemode=zbd\nzonesize=1m\n", "zonemode=zbd"),
            ("zonemode=stride\nzonesize=1m\n", "`stride`: expected none, strided or zbd"),
        ];
        for (options, why) in refused {
            let err = keys(&format!("[j]\nfilename=/d/a\nsize=8m\n{options}")).unwrap_err();
            assert!(err.contains(":4:") && err.contains(why), "{options}: {err}");
        }
    }
}
