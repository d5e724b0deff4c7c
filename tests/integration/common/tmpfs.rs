//! A small tmpfs of the test's own, for what only a real file system shows: a full
//! disk, a read-only mount. The tests run as root, as CI does; without the right to
//! mount they fail, saying so.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of a given size mounted on a directory, unmounted when dropped.
pub struct Tmpfs {
    pub dir: PathBuf,
}

impl Tmpfs {
    pub fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(dir).output();
        match out {
            Ok(o) if o.status.success() => Tmpfs { dir: dir.to_path_buf() },
            Ok(o) => panic!(
                "this test needs to mount a tmpfs (run the tests as root): mount: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ),
            Err(e) => panic!("this test needs to mount a tmpfs (run the tests as root): mount: {e}"),
        }
    }

    pub fn remount(&self, opts: &str) {
        let out = Command::new("mount").args(["-o", &format!("remount,{opts}")]).arg(&self.dir).output().unwrap();
        assert!(out.status.success(), "remount {opts}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Writes a file until the filesystem has no room left.
    pub fn fill(&self, name: &str) {
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(self.dir.join(name)).unwrap();
        let chunk = vec![0x5au8; 4096];
        loop {
            match f.write_all(&chunk) {
                Ok(()) => continue,
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("filling {}: {e}", self.dir.display()),
            }
        }
        // what is left is less than a block: a byte at a time
        while f.write_all(&[0]).is_ok() {}
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}
