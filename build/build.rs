//! Gives the binary its build identity, `BUILD_IDENTITY`: the package version, the commit
//! it was built from, and whether its sources differed from that commit. A controller
//! and its agents compare it, so that a fathom of another build is never used by
//! mistake. Two builds of one commit with different edits differ too: a modified tree
//! carries a fingerprint of its changes. Without git (a tarball, `cargo install` from a
//! registry), the sources themselves are fingerprinted (`fingerprint.rs`): two builds of
//! different sources outside git differ as well. Not named `FATHOM_...`: cargo also sets it in the environment of what
//! `cargo run` and `cargo test` start, where it would pass for one of fathom's own
//! variables (a hook sees every `FATHOM_` one).

mod fingerprint;

use fingerprint::{FNV_START, SOURCES, fnv, hex};
use std::path::Path;
use std::process::Command;

/// Git's answer in this package's directory, or None when git is absent or fails. No
/// optional locks: `git status` would otherwise rewrite the index a build watches.
fn git(args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git").arg("--no-optional-locks").args(args).output().ok()?;
    out.status.success().then_some(out.stdout)
}

fn git_text(args: &[&str]) -> Option<String> {
    git(args).map(|b| String::from_utf8_lossy(&b).trim().to_string())
}

/// The changes to the sources against HEAD, tracked and new files alike, as 8 hex
/// digits; None for an unmodified tree.
fn changes() -> Option<String> {
    let paths = |args: &[&'static str]| [args, &["--"], &SOURCES[..]].concat();
    let status = git(&paths(&["status", "--porcelain", "--untracked-files=all"]))?;
    if status.is_empty() {
        return None;
    }
    let mut hash = fnv(FNV_START, &git(&paths(&["diff", "HEAD", "--binary"])).unwrap_or_default());
    let untracked = git_text(&paths(&["ls-files", "--others", "--exclude-standard"])).unwrap_or_default();
    for file in untracked.lines() {
        hash = fnv(fnv(hash, file.as_bytes()), &std::fs::read(file).unwrap_or_default());
    }
    Some(hex(hash))
}

/// The commit of the repository this package is the top of; None outside one (a
/// tarball unpacked inside another project's checkout is not that project's commit).
fn commit() -> Option<String> {
    let top = git_text(&["rev-parse", "--show-toplevel"])?;
    let here = std::env::var("CARGO_MANIFEST_DIR").ok()?;
    if Path::new(&top).canonicalize().ok()? != Path::new(&here).canonicalize().ok()? {
        return None;
    }
    // a fixed length: git's own abbreviation grows with the repository, clone by clone
    git_text(&["rev-parse", "HEAD"]).map(|h| h.chars().take(7).collect())
}

/// Asks cargo to run this again when HEAD moves (a commit, a checkout), wherever git
/// keeps it (a worktree's HEAD is outside the tree). The branch's folder of refs is
/// watched rather than its file, which a commit creates when the ref was packed. Only
/// paths that exist: cargo would run this at every build for one that does not.
fn watch_head() {
    let mut refs = vec!["HEAD".to_string(), "packed-refs".to_string()];
    let branch = git_text(&["symbolic-ref", "-q", "HEAD"]);
    refs.extend(branch.as_deref().and_then(|b| Some(Path::new(b).parent()?.display().to_string())));
    for r in refs {
        if let Some(path) = git_text(&["rev-parse", "--git-path", &r]).filter(|p| Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

fn main() {
    for s in SOURCES {
        println!("cargo:rerun-if-changed={s}");
    }
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let build = match commit() {
        None => {
            let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
            match fingerprint::of_sources(Path::new(&root), &SOURCES) {
                Ok(fingerprint) => format!("{version} (sources {fingerprint})"),
                Err(e) => panic!("fingerprinting the sources in {root}: {e}"),
            }
        }
        Some(commit) => {
            watch_head();
            match changes() {
                None => format!("{version} ({commit})"),
                Some(fingerprint) => format!("{version} ({commit}, modified {fingerprint})"),
            }
        }
    };
    println!("cargo:rustc-env=BUILD_IDENTITY={build}");
}
