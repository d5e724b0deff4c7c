//! The data file a worker does its IO on, as laid out and opened by `target.rs`.

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;

/// An opened data file for one workload.
#[derive(Debug)]
pub struct DataFile {
    pub path: PathBuf,
    pub file: File,
    /// Working set in bytes: IOs land in `[offset, offset + size)` for the workload's
    /// `offset`.
    pub size: u64,
    /// O_DIRECT actually in effect.
    pub direct: bool,
    /// When an appending worker ran out of space (ms on the run clock, plus one; 0:
    /// never): the workload stopped there.
    pub full_at_ms: AtomicU64,
}
