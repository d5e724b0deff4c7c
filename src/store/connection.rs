//! A connection to the store and what a run's status is: what the store's other files
//! build on, kept apart from `mod.rs` so they need nothing of it.

use super::schema;
use crate::error::{Error, Result};
use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// Where a run stands. `running` is what a crashed run is left as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Running,
    Completed,
    Aborted,
    Failed,
    /// Ran to its end without one or more of its hosts, lost on the way.
    Partial,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Aborted => "aborted",
            Status::Failed => "failed",
            Status::Partial => "partial",
        }
    }
}

/// One connection to `DIR/fathom.db`. While a run measures, only its collector writes
/// through one; the read commands open theirs read-only.
pub struct Store {
    pub(super) conn: Connection,
    pub path: PathBuf,
    /// The file opened (device, inode): the path may name another one later.
    file: Option<(u64, u64)>,
}

impl Store {
    /// Opens `DIR/fathom.db` to add runs to it, creating it if needed. Refused (exit 2)
    /// before anything is written: a file that is not a fathom store, a damaged store,
    /// a read-only one, one from a newer fathom.
    pub fn open(dir: &Path) -> Result<Store> {
        crate::nofollow::create_dir(dir)
            .map_err(|e| Error::input(format!("results directory {}: {e}", dir.display())))?;
        let path = dir.join("fathom.db");
        crate::nofollow::not_a_symlink(&path)
            .map_err(|e| Error::input(format!("results store {}: {e}", path.display())))?;
        let conn = schema::open_for_writing(&path)?;
        Ok(Store { conn, file: identity(&path), path })
    }

    /// The directory for a run's files besides its rows (a driver's job files and the
    /// program's own output): `runs/RUN` next to the database. Created by its user.
    pub fn run_dir(&self, run: i64) -> PathBuf {
        self.path.with_file_name("runs").join(run.to_string())
    }

    /// Opens an existing store read-only, for the commands that only read it: they
    /// work on a read-only file or mount and on a full disk. A missing one is an input
    /// error.
    pub fn open_existing(dir: &Path) -> Result<Store> {
        let path = dir.join("fathom.db");
        if !path.exists() {
            return Err(Error::input(format!(
                "no results store at {} (run `fathom run` first, or pass --results DIR)",
                path.display()
            )));
        }
        // a read command may upgrade an older store's schema: the same rule as for runs
        crate::nofollow::not_a_symlink(&path)
            .map_err(|e| Error::input(format!("results store {}: {e}", path.display())))?;
        let conn = schema::open_for_reading(&path)?;
        Ok(Store { conn, file: identity(&path), path })
    }

    /// Whether the store's path still names the file this connection opened. A store
    /// deleted (or replaced) while a run writes to it takes what was written with it,
    /// though every write still succeeds on the unlinked file: the run must not say
    /// `completed` of seconds no one can read.
    pub fn is_where_it_was(&self) -> bool {
        self.file.is_some() && identity(&self.path) == self.file
    }
}

/// The device and inode of the file at `path`.
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}
