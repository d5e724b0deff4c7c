//! A fingerprint of the sources themselves, for a build with no git to name its commit
//! (a source tarball, `cargo install` from a registry). It reads only what the files hold
//! and their paths under the package, so one set of sources has one fingerprint on every
//! machine, wherever it is unpacked, and two sets that differ have two.

use std::path::Path;

/// What the binary is made of: a change elsewhere (docs, tests) builds the same program.
pub const SOURCES: [&str; 4] = ["src", "build", "Cargo.toml", "Cargo.lock"];

/// FNV-1a's start: the offset basis.
pub const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a: a fingerprint that is the same on every machine and compiler.
pub fn fnv(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

/// A hash as 8 hex digits, its halves folded together.
pub fn hex(hash: u64) -> String {
    format!("{:08x}", (hash >> 32) ^ (hash & 0xffff_ffff))
}

/// The fingerprint of `names` (files, or folders taken whole) under `root`, as 8 hex
/// digits. Each file counts by its path under `root` and its bytes, length first, so
/// that moving bytes from one file to the next changes it. Folders are walked in name
/// order, as a directory's listing order differs between filesystems. A name that does
/// not exist counts as absent; a file that cannot be read fails the build.
pub fn of_sources(root: &Path, names: &[&str]) -> std::io::Result<String> {
    let mut files = Vec::new();
    for name in names {
        let path = root.join(name);
        if path.exists() {
            collect(&path, &mut files)?;
        }
    }
    files.sort();
    let mut hash = FNV_START;
    for file in files {
        let under = file.strip_prefix(root).unwrap_or(&file);
        let name: Vec<String> = under.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let bytes = std::fs::read(&file)?;
        hash = fnv(hash, name.join("/").as_bytes());
        hash = fnv(hash, &(bytes.len() as u64).to_le_bytes());
        hash = fnv(hash, &bytes);
    }
    Ok(hex(hash))
}

/// Every file at or under `path`.
fn collect(path: &Path, files: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
    if !path.is_dir() {
        files.push(path.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(path)? {
        collect(&entry?.path(), files)?;
    }
    Ok(())
}
