//! Targets: where workloads do IO. Decides the data file of each workload, refuses what
//! would destroy data by surprise, checks free space, lays files out with real
//! (incompressible, non-sparse) data before anything is measured, and opens them.
//!
//! A target is a directory (fathom creates `fathom-<file>.dat` inside it), a regular
//! file (used as is, created if its directory exists), or a block device (reads only,
//! unless `--allow-device-write`; never written while mounted).

pub use super::datafile::DataFile;
use super::kinds::backend;
use crate::error::{Error, Result};
use crate::nofollow::{self, Dir, How};
use crate::scenario::units::Size;
use crate::scenario::{IoProfile, Workload};
use crate::warnings::Warning;
use crate::workload::data::{Content, DataGen, DataSpec};
use crate::workload::{Rng, writes};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::{File, Metadata};
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

pub struct Options {
    pub allow_device_write: bool,
    /// Use a smaller working set instead of failing when space is short (quickstart).
    pub shrink_to_fit: bool,
}

/// Free space left untouched on a filesystem after laying out a working set.
const RESERVE: u64 = 256 << 20;
const LAYOUT_CHUNK: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    File,
    Device,
}

/// Where one workload's data lives, before anything is written: the directory holding
/// it, resolved once, and its name there (see `nofollow`).
struct Placement {
    path: PathBuf,
    kind: Kind,
    /// fathom's own file (inside a directory target, or a path that did not exist):
    /// free to lay out. A user's existing file is written only by write workloads.
    owned: bool,
    dir: Dir,
    name: OsString,
    /// A symlink the user named as the target: followed, for reading only.
    follow: bool,
}

impl Placement {
    /// What is at the path now (`None`: nothing yet).
    fn stat(&self) -> Result<Option<Metadata>> {
        self.dir.stat(&self.name, self.follow).map_err(|e| Error::input(format!("{}: {e}", self.path.display())))
    }

    /// Opens the data file: never through a symlink the user did not name, and
    /// fathom's own file only while no other name links to it.
    fn open(&self, how: How) -> std::io::Result<File> {
        let how = How { follow: self.follow, device: self.kind == Kind::Device, own: self.owned, ..how };
        self.dir.open_file(&self.name, &how)
    }
}

/// Refuses a target on one of the kernel's pseudo file systems (procfs, sysfs, ...),
/// before anything is laid out or written: the random bytes of a write there are a
/// command to the kernel (`/proc/sysrq-trigger`), whatever the file's type says.
fn refuse_pseudo(w: &Workload, target: &Path) -> Result<()> {
    match nofollow::pseudo_fs(target) {
        Some(fs) => Err(Error::input(format!(
            "workload {}: target {} is on {fs}, one of the kernel's pseudo file systems: its files are the kernel's \
             controls, not storage. Give a file, directory or block device of the storage to test",
            w.name,
            target.display()
        ))),
        None => Ok(()),
    }
}

/// Where a workload with one target puts its data.
fn place(w: &Workload, io: &IoProfile) -> Result<Placement> {
    let target = &io.targets[0];
    refuse_pseudo(w, target)?;
    if io.extend && w.workers > 1 && !std::fs::metadata(target).is_ok_and(|m| m.is_dir()) {
        return Err(Error::input(format!(
            "workload {}: its {} jobs each append to a file of their own, which fathom makes in a directory: \
             target {} is not one; give a directory (or `jobs: 1`)",
            w.name,
            w.workers,
            target.display()
        )));
    }
    let bad = bad_target(w, target);
    let is_link = std::fs::symlink_metadata(target).is_ok_and(|m| m.file_type().is_symlink());
    let meta = match std::fs::metadata(target) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return place_missing(w, target, is_link),
        Err(e) => return Err(bad(e)),
    };
    let ft = meta.file_type();
    if ft.is_dir() {
        return place_in_dir(w, io, target);
    }
    let kind = if ft.is_file() {
        Kind::File
    } else if ft.is_block_device() {
        Kind::Device
    } else {
        return Err(Error::input(format!(
            "workload {}: target {} is not a directory, regular file or block device",
            w.name,
            target.display()
        )));
    };
    if is_link && writes(io) {
        let real = std::fs::canonicalize(target).map_err(bad)?;
        return Err(Error::input(format!(
            "workload {} writes, and its target {} is a symbolic link: fathom writes only to a path that is not \
             one. Name {} as the target",
            w.name,
            target.display(),
            real.display()
        )));
    }
    let (parent, name) = nofollow::split(target).map_err(bad)?;
    Ok(Placement {
        path: target.clone(),
        kind,
        owned: false,
        dir: Dir::open(parent).map_err(bad)?,
        name: name.to_os_string(),
        follow: is_link,
    })
}

/// A target's IO error as bad input, naming the workload and the target.
fn bad_target<'a>(w: &'a Workload, target: &'a Path) -> impl Fn(std::io::Error) -> Error + Copy + 'a {
    move |e: std::io::Error| Error::input(format!("workload {}: target {}: {e}", w.name, target.display()))
}

/// Where a target that does not exist puts its data: a new file, in a directory that does.
/// A dangling symbolic link and a missing directory (`dir/`, fio's `directory=`) are
/// refused: fathom never creates a file through a link, nor a directory.
fn place_missing(w: &Workload, target: &Path, is_link: bool) -> Result<Placement> {
    let bad = bad_target(w, target);
    if is_link {
        return Err(Error::input(format!(
            "workload {}: target {} is a symbolic link to {}, which does not exist; fathom never creates a \
             file through a symbolic link",
            w.name,
            target.display(),
            std::fs::read_link(target).unwrap_or_default().display()
        )));
    }
    // `dir/` (fio's `directory=`) names a directory: never laid out as a file
    if target.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(Error::input(format!(
            "workload {}: target {} is not an existing directory; give one, or a file or block device",
            w.name,
            target.display()
        )));
    }
    let (parent, name) = nofollow::split(target).map_err(bad)?;
    if parent.is_dir() {
        let dir = Dir::open(parent).map_err(bad)?;
        return Ok(Placement {
            path: target.to_path_buf(),
            kind: Kind::File,
            owned: true,
            dir,
            name: name.to_os_string(),
            follow: false,
        });
    }
    Err(Error::input(format!(
        "workload {}: target {} does not exist (give an existing directory, file or block device)",
        w.name,
        target.display()
    )))
}

/// Where a target directory puts its data: fathom's own file in it.
/// What is already at that name must be a regular file with one link, since whoever
/// can write to the directory could have put a link there to any file.
fn place_in_dir(w: &Workload, io: &IoProfile, target: &Path) -> Result<Placement> {
    let name = OsString::from(format!("fathom-{}.dat", io.file));
    let p = Placement {
        path: target.join(&name),
        kind: Kind::File,
        owned: true,
        dir: Dir::open(target).map_err(bad_target(w, target))?,
        name,
        follow: false,
    };
    let refuse = |why: String| Err(Error::input(format!("workload {}: {} {why}", w.name, p.path.display())));
    match p.stat()? {
        Some(m) if m.file_type().is_symlink() => refuse(format!(
            "is a symbolic link (to {}): fathom never follows one in a target directory, where whoever can \
             write could point it at any file. Remove it, or name the file it points to as the target",
            std::fs::read_link(&p.path).unwrap_or_default().display()
        )),
        Some(m) if !m.is_file() => refuse("is not a regular file; fathom keeps its data there: remove it".into()),
        Some(m) if m.nlink() > 1 => refuse(nofollow::hard_links(m.nlink())),
        _ => Ok(p),
    }
}

/// Prepares every workload's data files (one per target), in scenario order. `warn`
/// receives what the run should record. Workloads whose back end does no IO (`engine:
/// null`) get a stand-in.
pub fn prepare(
    workloads: &[Workload],
    opts: &Options,
    stop: &AtomicBool,
    warn: &mut dyn FnMut(Warning),
) -> Result<Vec<Vec<DataFile>>> {
    let mut files = prepare_files(&singles(workloads)?, opts, stop, warn)?.into_iter();
    workloads
        .iter()
        .map(|w| match (w.io(), needs_file(w)) {
            // a program's workload has no data files of fathom's; fio's own are its targets
            (None, _) => w.outside_targets().iter().try_for_each(|t| refuse_pseudo(w, t)).map(|_| Vec::new()),
            (Some(io), false) => Ok(vec![null_file(io)?]),
            (Some(io), true) => {
                Ok((0..files_of(w, io).len()).map(|_| files.next().expect("one file per target")).collect())
            }
        })
        .collect()
}

/// Refuses, before anything is written, what laying out `workloads` would refuse: a
/// target that cannot be placed (a directory that does not exist), a device write not
/// allowed, a working set larger than the free space. `fathom lint` checks this, and a
/// run's layout starts with the same check.
pub fn check(workloads: &[Workload], opts: &Options) -> Result<()> {
    plan(&singles(workloads)?, opts, &mut |_| {}).map(|_| ())
}

/// Each target of the workloads whose IO goes to a file, as if it were the workload's
/// only one.
fn singles(workloads: &[Workload]) -> Result<Vec<(&Workload, IoProfile)>> {
    workloads
        .iter()
        .filter(|w| needs_file(w))
        .filter_map(|w| Some((w, w.io()?)))
        .flat_map(|(w, io)| files_of(w, io).into_iter().map(move |io| (w, io)))
        .map(|(w, io)| Ok((w, share_of_target(w, io)?)))
        .collect()
}

/// A workload's data files, each as the profile of a workload with that one file: one
/// per target, or, appending with several jobs, one per job in its directory target
/// (`fathom-FILE.JOB.dat`), each job growing a file of its own as vioperf's threads do:
/// appenders sharing one end would serialise on it.
fn files_of(w: &Workload, io: &IoProfile) -> Vec<IoProfile> {
    if io.extend && w.workers > 1 {
        let each = |job: u32| IoProfile { file: format!("{}.{job}", io.file), ..io.clone() };
        return (0..w.workers).map(each).collect();
    }
    io.targets.iter().map(|t| IoProfile { targets: vec![t.clone()], ..io.clone() }).collect()
}

/// Whether a workload's IO goes to a file: not when its back end does no IO (`null`).
/// Workloads of another program (fio) have their files laid out like the engine's.
fn needs_file(w: &Workload) -> bool {
    w.engine.and_then(backend).is_none_or(|b| b.needs_file())
}

/// The stand-in of a null workload: no data, a working set of `size` (1 GiB if not
/// given) for the generator to draw offsets from.
fn null_file(io: &IoProfile) -> Result<DataFile> {
    let file = File::open("/dev/null").map_err(|e| Error::failed(format!("/dev/null: {e}")))?;
    let size = io.size.unwrap_or(1 << 30);
    Ok(DataFile {
        path: PathBuf::from("null"),
        file,
        size: size - size % io.bs.min(),
        direct: false,
        full_at_ms: AtomicU64::new(0),
    })
}

/// The file each target is, and the size of each file: found before anything is written,
/// with every refusal of laying out (see [`check`]).
type Plan = (Vec<Placement>, BTreeMap<PathBuf, u64>);

/// The workloads' targets placed and each file's size, checked against what is there:
/// room on the file system for what is laid out, or data enough in what is read as is.
/// A size shrunk to fit (`shrink_to_fit`) is said through `warn`.
fn plan(workloads: &[(&Workload, IoProfile)], opts: &Options, warn: &mut dyn FnMut(Warning)) -> Result<Plan> {
    let placements: Vec<Placement> = workloads.iter().map(|(w, io)| place(w, io)).collect::<Result<_>>()?;
    // Workloads naming the same file share it: one size (the largest), one layout.
    let mut sizes: BTreeMap<PathBuf, u64> = BTreeMap::new();
    for ((w, io), p) in workloads.iter().zip(&placements) {
        let size = match p.kind {
            Kind::Device => device_size(w, io, p)?,
            Kind::File => file_size(w, io, p)?,
        };
        let e = sizes.entry(p.path.clone()).or_insert(0);
        *e = (*e).max(size);
    }
    for ((w, io), p) in workloads.iter().zip(&placements) {
        if p.kind == Kind::Device && writes(io) {
            check_device_writable(w, p, opts.allow_device_write)?;
        }
    }
    for (path, size) in sizes.iter_mut() {
        let (laid_out, prefilled, first) = sharing(workloads, &placements, path);
        match first {
            Some(first) if laid_out => *size = room(first, *size, opts, warn)?,
            Some(first) if !prefilled => check_readable_as_is(first, *size)?,
            _ => {}
        }
    }
    Ok((placements, sizes))
}

/// Of the workloads sharing the file at `path`: whether it is laid out, whether one
/// prefills it, and its placement. A prefill writes the working set itself (and only
/// it); a user's existing file is laid out only for workloads that write anyway.
fn sharing<'p>(
    workloads: &[(&Workload, IoProfile)],
    placements: &'p [Placement],
    path: &Path,
) -> (bool, bool, Option<&'p Placement>) {
    let sharing: Vec<(&IoProfile, &Placement)> = workloads
        .iter()
        .map(|(_, io)| io)
        .zip(placements)
        .filter(|(_, p)| p.path == path && p.kind == Kind::File)
        .collect();
    let laid_out = sharing.iter().any(|(io, p)| p.owned || (writes(io) && !io.prefill));
    let prefilled = sharing.iter().any(|(io, _)| io.prefill);
    (laid_out, prefilled, sharing.first().map(|(_, p)| *p))
}

fn prepare_files(
    workloads: &[(&Workload, IoProfile)],
    opts: &Options,
    stop: &AtomicBool,
    warn: &mut dyn FnMut(Warning),
) -> Result<Vec<DataFile>> {
    let (placements, sizes) = plan(workloads, opts, warn)?;
    // An appending workload starts from an empty file each run, unless told to keep it.
    for ((w, io), p) in workloads.iter().zip(&placements) {
        if io.extend && !io.keep && p.kind == Kind::File {
            p.open(How { write: true, create: true, truncate: true, ..How::default() })
                .map_err(|e| Error::input(format!("workload {}: emptying {}: {e}", w.name, p.path.display())))?;
        }
    }
    for (path, size) in &sizes {
        if let (true, _, Some(first)) = sharing(workloads, &placements, path) {
            lay_out(first, *size, stop)?;
        }
    }
    let mut memory_warned = Vec::new();
    workloads
        .iter()
        .zip(&placements)
        .map(|((w, io), p)| {
            let span = sizes[&p.path].saturating_sub(io.offset).min(io.size.unwrap_or(u64::MAX));
            let span = span - span % io.bs.min();
            if io.extend {
                check_room_to_grow(w, io, p)?;
            } else if span < io.bs.max() {
                return Err(Error::input(format!(
                    "workload {}: {} leaves no room for a {} block after offset {}",
                    w.name,
                    p.path.display(),
                    Size(io.bs.max()),
                    Size(io.offset)
                )));
            }
            let data = open(w, io, p, span, warn)?;
            let memory = if p.kind == Kind::File { memory_fs(&data.file) } else { None };
            if let Some(fstype) = memory.filter(|_| !memory_warned.contains(&p.path)) {
                memory_warned.push(p.path.clone());
                warn(Warning::MemoryBackedTarget { path: p.path.clone(), fstype });
            }
            if io.prefill {
                fill(&w.name, io, &data, false, stop)?;
            }
            Ok(data)
        })
        .collect()
}

/// How much of a file target a workload needs: its offset plus the working set as
/// asked, or the existing file's length.
fn file_size(w: &Workload, io: &IoProfile, p: &Placement) -> Result<u64> {
    let len = p.stat()?.map(|m| m.len());
    // an appender's file is emptied before the run, unless it keeps it
    if io.extend {
        return Ok(if io.keep { len.unwrap_or(0) } else { 0 });
    }
    if let Some(size) = io.size {
        return Ok(io.offset + size);
    }
    match len {
        Some(len) if len >= io.offset + io.bs.max() => Ok(len),
        _ => Err(Error::input(format!(
            "workload {}: no `size` given and {} has no data to take it from; set `size`, e.g. 1g",
            w.name,
            p.path.display()
        ))),
    }
}

/// `size_percent` as `size`: that share of what the target (one of the workload's)
/// holds past `offset`, in whole blocks, as fio takes `size=N%`. A file that does not
/// exist yet holds nothing to take a share of: fio, too, asks for a size then.
fn share_of_target(w: &Workload, mut io: IoProfile) -> Result<IoProfile> {
    let Some(pct) = io.size_percent else { return Ok(io) };
    let p = place(w, &io)?;
    let len = match p.kind {
        Kind::Device => device_bytes(w, &p)?,
        Kind::File => p.stat()?.map_or(0, |m| m.len()),
    };
    let share = len.saturating_sub(io.offset) * u64::from(pct) / 100;
    let size = share - share % io.bs.min();
    if size < io.bs.max() {
        return Err(Error::input(format!(
            "workload {}: size_percent: {pct}% of {} ({} past offset {}) is less than one block: it holds no data to \
             take a share of yet; give `size` in bytes",
            w.name,
            p.path.display(),
            Size(len.saturating_sub(io.offset)).human(),
            Size(io.offset)
        )));
    }
    io.size = Some(size);
    Ok(io)
}

/// The bytes a block device holds.
fn device_bytes(w: &Workload, p: &Placement) -> Result<u64> {
    let path = &p.path;
    let file =
        p.open(How::default()).map_err(|e| Error::input(format!("workload {}: {}: {e}", w.name, path.display())))?;
    let mut bytes: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64, &mut bytes) };
    if rc != 0 {
        return Err(Error::input(format!(
            "workload {}: size of {}: {}",
            w.name,
            path.display(),
            std::io::Error::last_os_error()
        )));
    }
    Ok(bytes)
}

fn device_size(w: &Workload, io: &IoProfile, p: &Placement) -> Result<u64> {
    let path = &p.path;
    let bytes = device_bytes(w, p)?;
    let end = io.offset + io.size.unwrap_or(0);
    if end > bytes || io.offset >= bytes {
        return Err(Error::input(format!(
            "workload {}: offset {} + size {} is beyond the end of device {} ({})",
            w.name,
            Size(io.offset).human(),
            Size(io.size.unwrap_or(0)).human(),
            path.display(),
            Size(bytes).human()
        )));
    }
    Ok(if io.size.is_some() { end } else { bytes })
}

/// `_IOR(0x12, 114, size_t)`
// ioctl's request is an unsigned long in glibc and an int in musl (the static build):
// the same 32 bits either way.
const BLKGETSIZE64: libc::Ioctl = 0x8008_1272_u32 as libc::Ioctl;

fn check_device_writable(w: &Workload, p: &Placement, allowed: bool) -> Result<()> {
    let path = &p.path;
    if !allowed {
        return Err(Error::input(format!(
            "workload {} would write to block device {}, destroying its contents; pass --allow-device-write if that is what you want",
            w.name,
            path.display()
        )));
    }
    // The kernel refuses an exclusive open of a device that is mounted or held (by LVM,
    // RAID, swap...): the one check that cannot miss a mount we do not know about.
    match p.open(How { flags: libc::O_EXCL, ..How::default() }) {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Err(Error::input(format!(
            "refusing to write to {}: it is mounted or in use (by a filesystem, LVM, RAID or swap)",
            path.display()
        ))),
        Err(e) => Err(Error::input(format!("{}: {e}", path.display()))),
    }
}

/// A user's existing file that only read workloads use is never written: it must
/// already hold the working set, and hold it for real (holes are read without IO).
fn check_readable_as_is(p: &Placement, size: u64) -> Result<()> {
    let path = &p.path;
    let meta = p.stat()?.ok_or_else(|| Error::input(format!("{}: it is gone", path.display())))?;
    if meta.len() < size {
        return Err(Error::input(format!(
            "{} holds {} but the working set is {}; fathom does not overwrite an existing file for a read \
             workload: lower `size`, or use a directory target",
            path.display(),
            Size(meta.len()).human(),
            Size(size).human()
        )));
    }
    if meta.blocks() * 512 < size {
        return Err(Error::input(format!(
            "{} is sparse: reads of its holes never reach storage. Fill it first, or use a directory target \
             (fathom lays out its own files with random data)",
            path.display()
        )));
    }
    Ok(())
}

/// The size `p` can be laid out at: `size` when it is written already or the file system
/// has room for the rest (keeping some spare), else less when `shrink_to_fit` allows
/// (said through `warn`); refused otherwise.
fn room(p: &Placement, size: u64, opts: &Options, warn: &mut dyn FnMut(Warning)) -> Result<u64> {
    let path = &p.path;
    let allocated = match p.stat()? {
        Some(m) if m.len() >= size && m.blocks() * 512 >= size => return Ok(size),
        Some(m) => m.blocks() * 512,
        None => 0,
    };
    let (free, total) = space(&p.dir)?;
    // Keep some room for others, but not more than a twentieth of a small filesystem.
    // A filesystem that reports no size at all (ramfs) has no limit to check.
    let reserve = RESERVE.min(total / 20);
    let needed = size.saturating_sub(allocated);
    if total == 0 || needed + reserve <= free {
        return Ok(size);
    }
    let room = (free.saturating_sub(reserve) + allocated) / 10 * 9;
    let shrunk = room - room % (1 << 20);
    if opts.shrink_to_fit && shrunk >= 16 << 20 {
        warn(Warning::WorkingSetShrunk { path: path.to_path_buf(), wanted: size, used: shrunk });
        return Ok(shrunk);
    }
    Err(Error::input(format!(
        "not enough free space for {}: the working set needs {} more, {} is free (keeping {} spare)",
        path.display(),
        Size(needed).human(),
        Size(free).human(),
        Size(reserve).human()
    )))
}

/// Makes sure `path` holds `size` bytes of written (not sparse) data, writing random
/// data where it does not; [`room`] has found the space for it.
fn lay_out(p: &Placement, size: u64, stop: &AtomicBool) -> Result<()> {
    let path = &p.path;
    if p.stat()?.is_some_and(|m| m.len() >= size && m.blocks() * 512 >= size) {
        return Ok(());
    }
    let file = p
        .open(How { write: true, create: true, ..How::default() })
        .map_err(|e| Error::input(format!("cannot create {}: {e}", path.display())))?;
    let started = Instant::now();
    if size >= 64 << 20 {
        crate::terminal::say(&format!("laying out {} ({} of random data)...", path.display(), Size(size).human()));
    }
    let mut rng = Rng::new(Rng::seed_from(&path.to_string_lossy(), size, 0));
    let mut chunk = vec![0u8; LAYOUT_CHUNK];
    let mut offset = 0u64;
    while offset < size {
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        let n = (size - offset).min(LAYOUT_CHUNK as u64) as usize;
        rng.fill(&mut chunk[..n]);
        std::os::unix::fs::FileExt::write_all_at(&file, &chunk[..n], offset).map_err(|e| {
            let msg = format!("laying out {}: {e}", path.display());
            if e.raw_os_error() == Some(libc::ENOSPC) { Error::input(msg) } else { Error::failed(msg) }
        })?;
        offset += n as u64;
    }
    file.sync_data().map_err(|e| Error::failed(format!("laying out {}: {e}", path.display())))?;
    if size >= 64 << 20 {
        crate::terminal::say(&format!("laid out in {:.1} s", started.elapsed().as_secs_f64()));
    }
    Ok(())
}

/// An appending workload needs room to grow beyond the space fathom keeps free: at
/// least what its rate writes in its ramp and duration when it has a rate, and at
/// least one block otherwise. Running out later stops the workload cleanly.
fn check_room_to_grow(w: &Workload, io: &IoProfile, p: &Placement) -> Result<()> {
    let path = &p.path;
    let (free, total) = space(&p.dir)?;
    let reserve = RESERVE.min(total / 20);
    let seconds = (w.ramp + w.duration).as_secs_f64();
    let growth = io.rate_iops.map(|r| (r * io.bs.mean() * seconds) as u64).unwrap_or(io.bs.max());
    // a bounded appender writes its `io_size` (x `loops`) at most
    let growth = growth.min(io.bound.and_then(|b| b.bytes(0)).unwrap_or(u64::MAX));
    if total > 0 && growth + reserve > free {
        return Err(Error::input(format!(
            "workload {}: appending to {} needs {} of free space (keeping {} spare), {} is free",
            w.name,
            path.display(),
            Size(growth).human(),
            Size(reserve).human(),
            Size(free).human()
        )));
    }
    Ok(())
}

/// Writes the workload's whole working set once, sequentially in 1 MiB writes through
/// its own file handle (O_DIRECT if in effect), so reads measure written data and
/// thin storage has allocated it. The data is the workload's own content, block by
/// block of its smallest block size (so `crc` reads of that size verify), or zeros
/// with `zero` (a timeline `zero` step: freeing space on thin storage).
pub fn fill(name: &str, io: &IoProfile, data: &DataFile, zero: bool, stop: &AtomicBool) -> Result<()> {
    let started = Instant::now();
    let what = if zero { "zeroing" } else { "prefilling" };
    // a timeline step's, said above the live view
    crate::terminal::say(&format!(
        "{what} {} of {} from offset {}...",
        Size(data.size).human(),
        data.path.display(),
        Size(io.offset)
    ));
    let block = io.bs.min() as usize;
    let chunk = LAYOUT_CHUNK / block.min(LAYOUT_CHUNK) * block;
    let mut buf = super::buffer::AlignedBuf::new(chunk)?;
    let spec = if zero { DataSpec { content: Content::Zero, dedupe_percent: 0, crc: false } } else { io.data };
    let mut content = DataGen::new(&spec, Rng::seed_from(name, data.size, 3));
    let (start, end) = (io.offset, io.offset + data.size);
    let mut offset = start;
    while offset < end {
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        let n = (end - offset).min(chunk as u64) as usize;
        for (i, b) in buf.as_mut_slice()[..n].chunks_mut(block).enumerate() {
            content.fill(b, offset + (i * block) as u64);
        }
        std::os::unix::fs::FileExt::write_all_at(&data.file, &buf.as_mut_slice()[..n], offset).map_err(|e| {
            let msg = format!("{what} {} at offset {offset}: {e}", data.path.display());
            if e.raw_os_error() == Some(libc::ENOSPC) { Error::input(msg) } else { Error::failed(msg) }
        })?;
        offset += n as u64;
    }
    data.file.sync_data().map_err(|e| Error::failed(format!("{what} {}: {e}", data.path.display())))?;
    crate::terminal::say(&format!("{what} took {:.1} s", started.elapsed().as_secs_f64()));
    Ok(())
}

/// (free bytes for unprivileged users, total bytes) of the filesystem holding `dir`.
fn space(dir: &Dir) -> Result<(u64, u64)> {
    dir.space().map_err(|e| Error::input(format!("{}: {e}", dir.path().display())))
}

/// `TMPFS_MAGIC` and `RAMFS_MAGIC` from linux/magic.h (libc exports the first only), as
/// the unsigned bits `f_type` holds: glibc's field is signed and musl's unsigned.
const TMPFS_MAGIC: u64 = 0x0102_1994;
const RAMFS_MAGIC: u64 = 0x8584_58f6;

/// The filesystem type if `file` lives in memory.
fn memory_fs(file: &File) -> Option<String> {
    // SAFETY: fstatfs fills the struct it is given.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: an open descriptor, and a struct of the type fstatfs fills.
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    match st.f_type as u64 {
        TMPFS_MAGIC => Some("tmpfs".into()),
        RAMFS_MAGIC => Some("ramfs".into()),
        _ => None,
    }
}

fn open(w: &Workload, io: &IoProfile, p: &Placement, size: u64, warn: &mut dyn FnMut(Warning)) -> Result<DataFile> {
    let path = &p.path;
    let attempt = |direct: bool| {
        p.open(How {
            write: writes(io),
            create: io.extend,
            flags: if direct { libc::O_DIRECT } else { 0 },
            ..How::default()
        })
    };
    let (file, direct) = match attempt(io.direct) {
        Ok(f) => (f, io.direct),
        Err(e) if io.direct && e.raw_os_error() == Some(libc::EINVAL) => {
            warn(Warning::DirectUnsupported { path: path.to_path_buf() });
            let f =
                attempt(false).map_err(|e| Error::input(format!("workload {}: {}: {e}", w.name, path.display())))?;
            (f, false)
        }
        Err(e) => {
            return Err(Error::input(format!("workload {}: cannot open {}: {e}", w.name, path.display())));
        }
    };
    Ok(DataFile { path: path.to_path_buf(), file, size, direct, full_at_ms: AtomicU64::new(0) })
}

#[cfg(test)]
mod tests {
    use super::{Options, check, files_of};
    use crate::scenario::{Scenario, Source};

    fn appender(target: &std::path::Path) -> Scenario {
        let text = format!(
            "name: a\nworkloads:\n  log: {{target: {}, rw: write, bs: 1m, extend: true, jobs: 3, duration: 1s}}\n",
            target.display()
        );
        Scenario::load(&Source { origin: "t".into(), text: &text }, &[]).unwrap()
    }

    /// Appenders of several jobs each grow a file of their own in a directory target
    /// (one shared end would serialise them); a file target, which holds one, is refused.
    #[test]
    fn appenders_of_several_jobs_each_get_a_file_in_a_directory() {
        let dir = std::env::temp_dir().join(format!("fathom-appenders-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let s = appender(&dir);
        let w = &s.workloads[0];
        let files: Vec<String> = files_of(w, w.io().unwrap()).into_iter().map(|io| io.file).collect();
        assert_eq!(files, ["log.0", "log.1", "log.2"]);
        let opts = Options { allow_device_write: false, shrink_to_fit: false };
        check(&s.workloads, &opts).unwrap();
        let err = check(&appender(&dir.join("one.dat")).workloads, &opts).unwrap_err().to_string();
        assert!(err.contains("its 3 jobs each append to a file of their own") && err.contains("one.dat"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
