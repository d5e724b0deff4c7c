//! Room kept for a run's results on the store's filesystem. A store on a full disk
//! cannot record that its run failed: the run was left `running` with no error. So a
//! run refuses to start when its expected rows do not fit, and holds a reserve file
//! beside the store while it runs; when a write to the store fails (the disk filled,
//! by the run's own target or by anyone), the reserve is deleted and the room it frees
//! takes the last seconds and the run's final status.

use crate::error::{Error, Result};
use crate::nofollow::Dir;
use crate::scenario::units::Size;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the reserve holds: the final bookkeeping (status, warnings, phases, events)
/// and a few seconds of samples, written through SQLite's WAL (which grows a page of
/// 4 KiB at a time per table touched).
const RESERVE: u64 = 8 << 20;

/// Stored bytes per worker, op and second (a counters row: ~28 B measured), and per
/// workload, op and second (its histograms: 0.2-1.3 KB each measured, two in open
/// loop); docs/metrics.md, "Resolution and storage". Rounded up, so a run that starts
/// has room.
const ROW_BYTES: u64 = 64;
const HISTOGRAM_BYTES: u64 = 2048;
/// Ops a workload records per second (reads and writes; syncs are rare).
const OPS: u64 = 2;

/// The reserve file of one run, held until the run has recorded its end.
pub struct Reserve {
    /// The file while it is held (locked, so other runs see it is in use).
    file: Mutex<Option<(PathBuf, File)>>,
}

impl Reserve {
    /// Checks that `dir`'s filesystem has room for `seconds` of a run whose workloads
    /// have `workers` workers each, plus the reserve, then writes the reserve file.
    /// Too little room is an input error (exit 2) with the numbers. Reserve files of
    /// runs that died (not locked) are removed first.
    pub fn take(dir: &Path, seconds: u64, workers: &[u32]) -> Result<Reserve> {
        remove_stale(dir);
        let per_second: u64 = workers.iter().map(|&w| OPS * (w as u64 * ROW_BYTES + HISTOGRAM_BYTES)).sum();
        let expected = per_second.saturating_mul(seconds.max(1));
        // the store's directory exists: `Store::open` made it
        if let Some((free, _)) = Dir::open(dir).and_then(|d| d.space()).ok()
            && free < expected.saturating_add(RESERVE)
        {
            return Err(Error::input(format!(
                "results store {}: not enough free space for this run's results: about {} for {seconds} s \
                 plus {} kept in reserve, {} free. Free some space, or pass --results DIR on another filesystem",
                dir.display(),
                Size(expected).human(),
                Size(RESERVE).human(),
                Size(free).human()
            )));
        }
        let path = dir.join(format!("fathom.db-reserve-{}", std::process::id()));
        let created = File::create(&path).and_then(|file| {
            lock(&file)?;
            // SAFETY: plain fallocate(2) on a file we own; allocates real blocks (not a hole).
            match unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, RESERVE as libc::off_t) } {
                0 => Ok(file),
                e => Err(std::io::Error::from_raw_os_error(e)),
            }
        });
        match created {
            Ok(file) => Ok(Reserve { file: Mutex::new(Some((path, file))) }),
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                Err(Error::input(format!(
                    "results store {}: cannot keep {} in reserve for the run's results ({}): {e}",
                    dir.display(),
                    Size(RESERVE).human(),
                    path.display()
                )))
            }
        }
    }

    /// Frees the reserve for the store's last writes. Once; later calls do nothing.
    pub fn release(&self) {
        if let Some((path, _file)) = self.file.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for Reserve {
    fn drop(&mut self) {
        self.release();
    }
}

/// An exclusive lock held while the reserve is in use; it goes with the process.
fn lock(file: &File) -> std::io::Result<()> {
    // SAFETY: flock(2) on an open descriptor.
    match unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Removes reserve files no live run holds (their runs were killed).
fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("fathom.db-reserve-") {
            continue;
        }
        if let Ok(file) = File::open(entry.path())
            && lock(&file).is_ok()
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reserve_is_real_space_and_a_dead_runs_reserve_is_removed() {
        let dir = std::env::temp_dir().join(format!("fathom-reserve-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // left by a run that was killed: nobody holds it
        let stale = dir.join("fathom.db-reserve-1");
        std::fs::write(&stale, b"x").unwrap();
        let reserve = Reserve::take(&dir, 10, &[4]).unwrap();
        assert!(!stale.exists(), "a dead run's reserve is removed");
        let path = dir.join(format!("fathom.db-reserve-{}", std::process::id()));
        let meta = std::fs::metadata(&path).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert!(meta.blocks() * 512 >= RESERVE, "allocated, not a hole: {} bytes", meta.blocks() * 512);
        // a live run's reserve is left alone
        remove_stale(&dir);
        assert!(path.exists());
        reserve.release();
        assert!(!path.exists());
        reserve.release();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
