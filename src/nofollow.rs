//! Opening what fathom creates or writes without ever following a symbolic link.
//!
//! fathom often runs as root on storage that others can write to (a shared target
//! directory, /tmp). A symlink planted where fathom writes one of its own files would
//! make it overwrite any file on the machine, and a dangling one would make it create a
//! file anywhere. So every file fathom creates or writes is opened with `O_NOFOLLOW`
//! (and `O_CREAT|O_EXCL` when it is new), relative to a directory resolved once
//! ([`Dir`]) so that a path component swapped later cannot redirect it, and only a
//! regular file (or, for a device target, a block device) is accepted: a FIFO or a
//! directory in its place is an error, not a hang. A path the user names is theirs and
//! is followed as named; what fathom puts inside it is not.

use std::ffi::{CString, OsStr};
use std::fs::{File, Metadata};
use std::io::{self, ErrorKind, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What fathom's own file with other hard links is refused with: writing it would
/// write a file elsewhere (whoever can write in a target directory can link any file
/// of theirs there, or any file at all where `protected_hardlinks` is off).
pub fn hard_links(links: u64) -> String {
    format!("has {links} hard links: it is also a file elsewhere, and fathom writes only its own files; remove it")
}

/// What a symlink where fathom writes is refused with (callers prefix the path).
fn symlink_refused() -> io::Error {
    io::Error::other("is a symbolic link, and fathom never creates or writes a file through one")
}

/// `path`'s directory and its name in it, for a file fathom opens relative to it.
pub fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    let name =
        path.file_name().ok_or_else(|| io::Error::new(ErrorKind::InvalidInput, "does not end in a file name"))?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Ok((dir, name))
}

/// `name` for a system call.
fn cstring(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::new(ErrorKind::InvalidInput, "contains a NUL byte"))
}

/// How [`Dir::open_file`] opens a file. Reading is always allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct How {
    pub write: bool,
    /// Create it if nothing is there (`O_CREAT|O_EXCL`, then the existing file).
    pub create: bool,
    /// Empty it once it is known to be a regular file.
    pub truncate: bool,
    /// Follow a symlink: only for reading a path the user named, never with `write`.
    pub follow: bool,
    /// A block device is expected instead of a regular file.
    pub device: bool,
    /// fathom's own file: refused if another name links to it (see [`hard_links`]).
    pub own: bool,
    /// More `open` flags (`O_DIRECT`, `O_EXCL` on a device).
    pub flags: libc::c_int,
}

/// A directory resolved once: files are then found relative to its descriptor, so a
/// component of its path replaced later (by a symlink, or a rename) changes nothing.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

impl Dir {
    /// Opens directory `path` as named (a symlink the user named is followed, once).
    pub fn open(path: &Path) -> io::Result<Dir> {
        // O_PATH: a handle to find files by, needing no permission to list it
        let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_PATH).open(path)?;
        Ok(Dir { fd: file.into(), path: path.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn openat(&self, name: &OsStr, flags: libc::c_int) -> io::Result<File> {
        let c = cstring(name)?;
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        let fd =
            unsafe { libc::openat(self.fd.as_raw_fd(), c.as_ptr(), flags | libc::O_CLOEXEC, 0o644 as libc::c_uint) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: openat returned a new descriptor that nothing else owns.
        Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// What `name` is in this directory (the link itself if it is a symlink, unless
    /// `follow`), or `None` if nothing is there. Never blocks, whatever it is.
    pub fn stat(&self, name: &OsStr, follow: bool) -> io::Result<Option<Metadata>> {
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        match self.openat(name, libc::O_PATH | nofollow) {
            Ok(f) => f.metadata().map(Some),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Opens (or creates) `name` in this directory as `how` says. A symlink there is
    /// refused unless `how.follow`; anything but a regular file (or block device) too.
    pub fn open_file(&self, name: &OsStr, how: &How) -> io::Result<File> {
        let access = if how.write { libc::O_RDWR } else { libc::O_RDONLY };
        let nofollow = if how.follow && !how.write { 0 } else { libc::O_NOFOLLOW };
        // O_NONBLOCK: a FIFO planted here must not hang the open (cleared below)
        let flags = access | nofollow | libc::O_NONBLOCK | how.flags;
        let created = if how.create {
            match self.openat(name, flags | libc::O_CREAT | libc::O_EXCL) {
                Ok(f) => Some(f),
                // something is there (perhaps a symlink): open it as it is, below
                Err(e) if e.kind() == ErrorKind::AlreadyExists => None,
                Err(e) => return Err(e),
            }
        } else {
            None
        };
        let file = match created {
            Some(f) => f,
            None => self.openat(name, flags).map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP) => symlink_refused(),
                _ => e,
            })?,
        };
        let meta = file.metadata()?;
        let kind = meta.file_type();
        if !(kind.is_file() || how.device && kind.is_block_device()) {
            let expected = if how.device { "a block device" } else { "a regular file" };
            return Err(io::Error::other(format!("is not {expected}")));
        }
        if how.own && meta.nlink() > 1 {
            return Err(io::Error::other(hard_links(meta.nlink())));
        }
        if how.truncate {
            file.set_len(0)?;
        }
        // SAFETY: F_GETFL/F_SETFL on a descriptor we own.
        unsafe {
            let fl = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
            if fl < 0 || libc::fcntl(file.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(file)
    }

    /// Renames `from` to `to` in this directory (what is at `to`, even a symlink, is
    /// replaced, never followed).
    fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let (from, to) = (cstring(from)?, cstring(to)?);
        let fd = self.fd.as_raw_fd();
        // SAFETY: a valid directory descriptor and NUL-terminated names.
        if unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Removes file `name` from this directory, if it can: what a failed write leaves.
    fn unlink(&self, name: &OsStr) {
        if let Ok(c) = cstring(name) {
            // SAFETY: a valid directory descriptor and a NUL-terminated name.
            unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) };
        }
    }

    /// Directory `name` in this one, created if it is not there; a symlink there is
    /// refused, never followed. What fathom keeps in a run's directory is made here.
    pub fn dir(&self, name: &OsStr) -> io::Result<Dir> {
        self.subdir(name, false, || "is".to_string())
    }

    /// Directory `name` in this one, which must not exist yet: for a directory fathom
    /// hands to another user (a throwaway cluster's), so nothing planted there is used.
    pub fn new_dir(&self, name: &OsStr) -> io::Result<Dir> {
        self.subdir(name, true, || "is".to_string())
    }

    /// Directory `name` in this one, created if it is not there (`new`: it must not
    /// be); a symlink there is refused (`what` names it in the error), never followed.
    fn subdir(&self, name: &OsStr, new: bool, what: impl Fn() -> String) -> io::Result<Dir> {
        let c = cstring(name)?;
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        if unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), 0o755) } != 0 {
            let e = io::Error::last_os_error();
            if new && e.kind() == ErrorKind::AlreadyExists {
                return Err(io::Error::new(e.kind(), "already exists; fathom creates this directory itself"));
            }
            if e.kind() != ErrorKind::AlreadyExists {
                return Err(e);
            }
        }
        let opened = self.openat(name, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW);
        let file = opened.map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => io::Error::other(format!(
                "{} a symbolic link, and fathom never creates or writes a file through one",
                what()
            )),
            Some(libc::ENOTDIR)
                if self.stat(name, false).ok().flatten().is_some_and(|m| m.file_type().is_symlink()) =>
            {
                io::Error::other(format!(
                    "{} a symbolic link, and fathom never creates or writes a file through one",
                    what()
                ))
            }
            Some(libc::ENOTDIR) => io::Error::other(format!("{} not a directory", what())),
            _ => e,
        })?;
        Ok(Dir { fd: file.into(), path: self.path.join(name) })
    }

    /// (free bytes for unprivileged users, total bytes) of the filesystem it is on.
    pub fn space(&self) -> io::Result<(u64, u64)> {
        // SAFETY: fstatvfs fills the struct it is given.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: an open descriptor, and a struct of the type fstatvfs fills.
        if unsafe { libc::fstatvfs(self.fd.as_raw_fd(), &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((st.f_bavail as u64 * st.f_frsize as u64, st.f_blocks as u64 * st.f_frsize as u64))
    }
}

/// Removes directory `path` and all it holds, as `rm -rf` would, never following a
/// symbolic link (one inside is removed, not what it names): each directory is opened
/// relative to its parent's descriptor. The files go on several threads at once. On a
/// busy disk each unlink waits for the filesystem's journal, and unlinks that wait
/// together share one wait: a throwaway cluster's thousand files go in a tenth of the
/// time, and an interrupted run stops within its promise however busy the disk is.
pub fn remove_tree(path: &Path) -> io::Result<()> {
    let (parent, name) = split(path)?;
    let parent = Dir::open(parent)?;
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    list_tree(Arc::new(subdir_at(&parent.fd, name)?), &mut files, &mut dirs)?;
    let each = files.len().div_ceil(REMOVERS).max(1);
    std::thread::scope(|scope| {
        let removers: Vec<_> = files.chunks(each).map(|chunk| scope.spawn(move || unlink_all(chunk, 0))).collect();
        removers.into_iter().try_for_each(|r| r.join().unwrap_or_else(|_| Err(io::Error::other("a remover panicked"))))
    })?;
    // deepest first: `list_tree` lists a directory after what it holds
    unlink_all(&dirs, libc::AT_REMOVEDIR)?;
    unlink_all(&[(Arc::new(parent.fd), name.to_os_string())], libc::AT_REMOVEDIR)
}

/// How many threads unlink a tree's files at once.
const REMOVERS: usize = 32;

/// An entry of a directory, by the directory's descriptor and its name there.
type Entry = (Arc<OwnedFd>, std::ffi::OsString);

/// Lists what directory `dir` holds: its files (and symlinks) in `files`, its
/// directories in `dirs`, each after what it holds in turn.
fn list_tree(dir: Arc<OwnedFd>, files: &mut Vec<Entry>, dirs: &mut Vec<Entry>) -> io::Result<()> {
    // the descriptor's own entry in /proc lists the directory it holds, wherever that is now
    for entry in std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd()))? {
        let entry = entry?;
        let name = entry.file_name();
        if entry.file_type()?.is_dir() {
            list_tree(Arc::new(subdir_at(&dir, &name)?), files, dirs)?;
            dirs.push((dir.clone(), name));
        } else {
            files.push((dir.clone(), name));
        }
    }
    Ok(())
}

/// Directory `name` in directory `dir`, opened to be listed; a symlink there is an error.
fn subdir_at(dir: &OwnedFd, name: &OsStr) -> io::Result<OwnedFd> {
    let c = cstring(name)?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: a valid directory descriptor and a NUL-terminated name.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: openat returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// unlinkat(2) of each entry, with `flags`; one already gone is not an error.
fn unlink_all(entries: &[Entry], flags: libc::c_int) -> io::Result<()> {
    for (dir, name) in entries {
        let c = cstring(name)?;
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), flags) } != 0 {
            let e = io::Error::last_os_error();
            if e.kind() != ErrorKind::NotFound {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Makes sure directory `path` exists (creating it and missing parents) and is a
/// directory, not a symlink to one: fathom writes into it.
pub fn create_dir(path: &Path) -> io::Result<()> {
    let path = &without_trailing_slash(path);
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::create_dir(path) {
        Ok(()) => return Ok(()),
        // mkdir never follows a symlink: what is there is checked below
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = path.symlink_metadata()?;
    if meta.file_type().is_symlink() {
        Err(symlink_refused())
    } else if meta.is_dir() {
        Ok(())
    } else {
        Err(io::Error::new(ErrorKind::AlreadyExists, "exists and is not a directory"))
    }
}

/// Makes sure directory `path` exists and is a directory, where its last `own`
/// components are fathom's own (a run's `runs/RUN` under the results directory the user
/// named): those are created or walked one by one relative to their parent's
/// descriptor, never through a symlink, so that a link planted at any of them cannot
/// send fathom's files elsewhere. The rest is the user's and is followed as named.
/// The directory, opened: what fathom makes in it is made relative to it.
pub fn create_dir_below(path: &Path, own: usize) -> io::Result<Dir> {
    let path = without_trailing_slash(path);
    let parts: Vec<&OsStr> = path.iter().collect();
    let (users, ours) = parts.split_at(parts.len().saturating_sub(own));
    let base: PathBuf = if users.is_empty() { PathBuf::from(".") } else { users.iter().collect() };
    std::fs::create_dir_all(&base)?;
    let mut dir = Dir::open(&base)?;
    for (i, name) in ours.iter().enumerate() {
        let what = || match i + 1 == ours.len() {
            true => "is".to_string(),
            false => format!("its directory {} is", dir.path.join(name).display()),
        };
        dir = dir.subdir(name, false, what)?;
    }
    Ok(dir)
}

/// `link/` names what the link points to (lstat follows it): checks need `link`.
fn without_trailing_slash(path: &Path) -> PathBuf {
    path.components().collect()
}

/// Creates directory `path`, which must not exist yet (its parents as needed): for a
/// directory at a guessable path (in /tmp, or a shared target) that fathom then hands
/// to another user, so that nothing planted there beforehand is used.
pub fn create_new_dir(path: &Path) -> io::Result<Dir> {
    let (parent, name) = split(path)?;
    std::fs::create_dir_all(parent)?;
    Dir::open(parent)?.new_dir(name)
}

/// Writes `bytes` as the whole of file `path`: into a new file beside it, then renamed
/// into place, so that nothing already there is written into. A second hard link to
/// the old file (a name elsewhere that someone linked to it) keeps its own content, and
/// a reader never sees a half-written file. A symlink or anything but a regular file at
/// `path` is refused, as [`create_file`] does.
pub fn write(path: &Path, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    let (dir, name) = split(path)?;
    Dir::open(dir)?.write(name, bytes)
}

impl Dir {
    /// Creates file `name` here, or empties the regular file already there (a
    /// program's output): never through a symlink.
    pub fn create_file(&self, name: &OsStr) -> io::Result<File> {
        self.open_file(name, &How { write: true, create: true, truncate: true, ..How::default() })
    }

    /// Writes `bytes` as the whole of file `name` here, as [`write`] does.
    pub fn write(&self, name: &OsStr, bytes: impl AsRef<[u8]>) -> io::Result<()> {
        match self.stat(name, false)? {
            Some(m) if m.file_type().is_symlink() => return Err(symlink_refused()),
            Some(m) if !m.is_file() => return Err(io::Error::other("is not a regular file")),
            _ => {}
        }
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temp = std::ffi::OsString::from(format!(".fathom-{}-{n}.tmp", std::process::id()));
        let written = self
            .openat(&temp, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW)
            .and_then(|mut f| f.write_all(bytes.as_ref()))
            .and_then(|()| self.rename(&temp, name));
        if written.is_err() {
            self.unlink(&temp);
        }
        written
    }
}

/// The file `name`, written in the input file at `from`, resolved as named (relative
/// to `from`'s directory) with every symbolic link followed, if it is inside `root`
/// (resolved already; `what` names it in the refusal). One input file naming another
/// (a fio `include`, an X-Ray `config_file`) must not read any file on the machine:
/// fathom often runs as root, and the first line of the file it reads could reach an
/// error. The refusal names the file as written, never its content.
pub fn confined(root: &Path, from: &Path, name: &str, what: &str) -> Result<PathBuf, String> {
    let dir = from.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let real = dir.join(name).canonicalize().map_err(|e| e.to_string())?;
    if !real.starts_with(root) {
        return Err(format!(
            "is outside {} ({what}, symbolic links resolved): fathom reads the files it names only from there; copy it in",
            root.display()
        ));
    }
    Ok(real)
}

/// [`confined`] to the directory of the input file `from` (a fio file an X-Ray
/// scenario names, a pgbench script a scenario names): the directory the user handed
/// fathom, or below it.
pub fn beside(from: &Path, name: &str, what: &str) -> Result<PathBuf, String> {
    let dir = from.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let root = dir.canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?;
    confined(&root, from, name, what)
}

/// Reads the text of an input file the user names (a scenario, a fio job file or one it
/// includes, an X-Ray `test.yml`, a hosts inventory, a hooks file, a table to fit),
/// followed as named. Every input is bounded the same way: a regular file of at most
/// `max` bytes, UTF-8. A device (`/dev/zero`) would otherwise fill memory and a FIFO
/// hang the read, and a file cut silently at a limit would lose what comes after.
/// Anything else is refused with exit 2, naming the file, what it is and what `what`
/// (e.g. "hosts inventory") was expected to be.
pub fn read_input(path: &Path, what: &str, max: usize) -> crate::error::Result<String> {
    use crate::error::Error;
    use std::io::Read;
    let name = path.display();
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused just below)
    let opened = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path);
    let file = opened.map_err(|e| Error::input(format!("{name}: {e}")))?;
    let kind = file.metadata().map_err(|e| Error::input(format!("{name}: {e}")))?.file_type();
    if !kind.is_file() {
        return Err(Error::input(format!(
            "{name}: is {}, not a regular file: expected a {what} (a file of at most {})",
            kind_of(kind),
            size_text(max)
        )));
    }
    let mut bytes = Vec::new();
    file.take(max as u64 + 1).read_to_end(&mut bytes).map_err(|e| Error::input(format!("{name}: {e}")))?;
    if bytes.len() > max {
        let limit = size_text(max);
        return Err(Error::input(format!(
            "{name}: goes on past {limit} ({max} bytes): expected a {what} of at most {limit}"
        )));
    }
    // an editor's byte-order mark is no part of the text: fio's reader would take it
    // for the first line's first character
    let text = bytes.strip_prefix(b"\xef\xbb\xbf").map(<[u8]>::to_vec).unwrap_or(bytes);
    String::from_utf8(text).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        Error::input(format!("{name}:{line}: not UTF-8 text: expected a {what} saved as UTF-8"))
    })
}

/// What a file that is not a regular one is, for [`read_input`]'s message.
fn kind_of(kind: std::fs::FileType) -> &'static str {
    match () {
        _ if kind.is_dir() => "a directory",
        _ if kind.is_fifo() => "a named pipe (FIFO)",
        _ if kind.is_char_device() => "a character device",
        _ if kind.is_block_device() => "a block device",
        _ if kind.is_socket() => "a socket",
        _ => "not a file",
    }
}

/// `max` bytes as a person says it (`1 MiB`).
fn size_text(max: usize) -> String {
    match max % (1 << 20) {
        0 => format!("{} MiB", max >> 20),
        _ => format!("{max} bytes"),
    }
}

/// Refuses a symlink at `path`: for a file another library opens by its name (the
/// results store), so that at least what fathom is given is not one.
pub fn not_a_symlink(path: &Path) -> io::Result<()> {
    match without_trailing_slash(path).symlink_metadata() {
        Ok(m) if m.file_type().is_symlink() => Err(symlink_refused()),
        _ => Ok(()),
    }
}

/// The kernel's pseudo file systems, by statfs(2) magic: their files are controls and
/// reports (`/proc/sysrq-trigger`, `/sys/.../power/state`), never storage to test.
/// tmpfs and devtmpfs share a magic and stay off the list: a tmpfs is storage users test,
/// and a device node under /dev is refused by its type.
const PSEUDO_FS: [(i64, &str); 14] = [
    (0x9fa0, "procfs"),
    (0x6265_6572, "sysfs"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0x7363_6673, "securityfs"),
    (0xcafe_4a11, "bpf"),
    (0x6265_6570, "configfs"),
    (0x6165_676c, "pstore"),
    (0xde5e_81e4, "efivarfs"),
    (0x1cd1, "devpts"),
    (0x1980_0202, "mqueue"),
    (0x4249_4e4d, "binfmt_misc"),
];

/// The pseudo file system `path` is on (or, when it does not exist yet, the directory
/// it would be created in), if it is on one.
pub fn pseudo_fs(path: &Path) -> Option<&'static str> {
    let on = if path.exists() {
        path
    } else {
        path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
    };
    let c = CString::new(on.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs fills the struct it is given.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path, and a struct of the type statfs fills.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    PSEUDO_FS.iter().find(|(magic, _)| *magic == st.f_type as i64).map(|(_, name)| *name)
}

/// Free bytes (for unprivileged users) where `path` is, or where it would be created:
/// what lint compares a workload's appends with before anything is written.
pub fn free_space(path: &Path) -> Option<u64> {
    let dir = if path.is_dir() {
        path
    } else {
        path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
    };
    Dir::open(dir).ok()?.space().ok().map(|(free, _)| free)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("fathom-nofollow-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_tree_is_removed_whole_and_what_its_symlinks_name_is_kept() {
        let dir = scratch("tree");
        let outside = dir.join("outside");
        std::fs::create_dir_all(outside.join("kept")).unwrap();
        std::fs::write(outside.join("file"), "theirs").unwrap();
        let tree = dir.join("tree");
        for d in 0..3 {
            let sub = tree.join(format!("base/{d}"));
            std::fs::create_dir_all(&sub).unwrap();
            (0..40).for_each(|f| std::fs::write(sub.join(f.to_string()), "x").unwrap());
        }
        std::os::unix::fs::symlink(&outside, tree.join("base/link-to-dir")).unwrap();
        std::os::unix::fs::symlink(outside.join("file"), tree.join("base/0/link-to-file")).unwrap();
        remove_tree(&tree).unwrap();
        assert!(!tree.exists());
        assert_eq!(std::fs::read_to_string(outside.join("file")).unwrap(), "theirs");
        assert!(outside.join("kept").is_dir());
        // a symlink named as the tree itself is refused, not followed
        std::os::unix::fs::symlink(&outside, dir.join("link")).unwrap();
        assert_eq!(remove_tree(&dir.join("link")).unwrap_err().raw_os_error(), Some(libc::ENOTDIR));
        assert!(outside.join("file").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symlink_is_never_written_through() {
        let dir = scratch("write");
        let outside = dir.join("outside");
        std::fs::write(&outside, b"precious").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("link")).unwrap();
        let err = write(&dir.join("link"), b"x").unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read(&outside).unwrap(), b"precious");
        // dangling: nothing is created where it points
        std::os::unix::fs::symlink(dir.join("new"), dir.join("dangling")).unwrap();
        assert!(write(&dir.join("dangling"), b"x").is_err());
        assert!(!dir.join("new").exists());
        // a plain file is created, then replaced
        write(&dir.join("plain"), b"first, longer").unwrap();
        write(&dir.join("plain"), b"second").unwrap();
        assert_eq!(std::fs::read(dir.join("plain")).unwrap(), b"second");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_fifo_is_refused_without_hanging() {
        let dir = scratch("fifo");
        let fifo = CString::new(dir.join("fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let err = Dir::open(&dir).unwrap().open_file(OsStr::new("fifo"), &How::default()).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn directories_fathom_writes_in_are_not_symlinks() {
        let dir = scratch("dirs");
        std::fs::create_dir(dir.join("real")).unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        create_dir(&dir.join("real")).unwrap();
        create_dir(&dir.join("a/b")).unwrap();
        assert!(dir.join("a/b").is_dir());
        for link in [dir.join("link"), dir.join("link/")] {
            let err = create_dir(&link).unwrap_err();
            assert!(err.to_string().contains("symbolic link"), "{err}");
        }
        assert!(create_new_dir(&dir.join("real")).is_err());
        assert!(create_new_dir(&dir.join("link")).is_err());
        create_new_dir(&dir.join("fresh/one")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_written_file_replaces_a_hard_link_instead_of_writing_into_it() {
        let dir = scratch("hardlink");
        let other = dir.join("other-name");
        std::fs::write(&other, b"precious").unwrap();
        std::fs::hard_link(&other, dir.join("out.html")).unwrap();
        write(&dir.join("out.html"), b"report").unwrap();
        assert_eq!(std::fs::read(&other).unwrap(), b"precious");
        assert_eq!(std::fs::read(dir.join("out.html")).unwrap(), b"report");
        // nothing is left beside it, and a directory in its place is refused
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        std::fs::create_dir(dir.join("d")).unwrap();
        assert!(write(&dir.join("d"), b"x").unwrap_err().to_string().contains("not a regular file"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn fathoms_own_directories_below_the_users_are_never_symlinks() {
        let dir = scratch("below");
        let elsewhere = dir.join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::create_dir(dir.join("results")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.join("results/runs")).unwrap();
        let err = create_dir_below(&dir.join("results/runs/1"), 2).unwrap_err().to_string();
        assert!(err.contains("its directory") && err.contains("runs is a symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        // the user's part may be a link; fathom's part is created below it
        std::os::unix::fs::symlink(dir.join("results"), dir.join("mine")).unwrap();
        std::fs::remove_file(dir.join("results/runs")).unwrap();
        create_dir_below(&dir.join("mine/runs/2"), 2).unwrap();
        assert!(dir.join("results/runs/2").is_dir());
        std::os::unix::fs::symlink(&elsewhere, dir.join("results/runs/3")).unwrap();
        let err = create_dir_below(&dir.join("results/runs/3"), 2).unwrap_err().to_string();
        assert!(err.starts_with("is a symbolic link"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_input_is_a_regular_file_read_whole_within_its_limit() {
        let dir = scratch("input");
        std::fs::write(dir.join("ok"), "hosts: {}\n").unwrap();
        assert_eq!(read_input(&dir.join("ok"), "hosts inventory", 64).unwrap(), "hosts: {}\n");
        // one byte past the limit is refused, not cut
        std::fs::write(dir.join("long"), "x".repeat(65)).unwrap();
        let err = read_input(&dir.join("long"), "hosts inventory", 64).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(
            err.to_string()
                .ends_with("long: goes on past 64 bytes (64 bytes): expected a hosts inventory of at most 64 bytes"),
            "{err}"
        );
        // a device never fills memory, a FIFO never hangs
        let err = read_input(Path::new("/dev/zero"), "hooks file", 1 << 20).unwrap_err().to_string();
        assert_eq!(
            err,
            "/dev/zero: is a character device, not a regular file: expected a hooks file (a file of at most 1 MiB)"
        );
        let fifo = CString::new(dir.join("fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let err = read_input(&dir.join("fifo"), "hosts inventory", 64).unwrap_err().to_string();
        assert!(err.contains("fifo: is a named pipe (FIFO), not a regular file"), "{err}");
        assert!(read_input(&dir, "scenario", 64).unwrap_err().to_string().contains("is a directory"));
        std::fs::write(dir.join("latin1"), b"a\nb\xe9\n").unwrap();
        let err = read_input(&dir.join("latin1"), "scenario", 64).unwrap_err().to_string();
        assert!(err.ends_with("latin1:2: not UTF-8 text: expected a scenario saved as UTF-8"), "{err}");
        // an editor's byte-order mark is not read as text
        std::fs::write(dir.join("bom"), b"\xef\xbb\xbf[w]\nrw=read\n").unwrap();
        assert_eq!(read_input(&dir.join("bom"), "fio job file", 64).unwrap(), "[w]\nrw=read\n");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
