//! The build identity of sources outside git (a tarball, `cargo install` from a
//! registry): the build script, compiled on its own, names a fingerprint of the sources,
//! never `unknown`, so that an agent built from other sources is refused.

#[path = "../../build/fingerprint.rs"]
mod fingerprint;

use crate::common::Scratch;
use std::path::Path;
use std::process::Command;

/// Copies what the binary is built from (`fingerprint::SOURCES`) from `from` to `to`.
fn copy_sources(from: &Path, to: &Path) {
    fn copy(from: &Path, to: &Path) {
        if from.is_dir() {
            std::fs::create_dir_all(to).unwrap();
            for entry in std::fs::read_dir(from).unwrap() {
                let entry = entry.unwrap();
                copy(&entry.path(), &to.join(entry.file_name()));
            }
        } else {
            std::fs::copy(from, to).unwrap();
        }
    }
    for name in fingerprint::SOURCES {
        copy(&from.join(name), &to.join(name));
    }
}

/// The identity the build script gives a package at `dir`, with no repository above it:
/// the script compiled alone with rustc (it uses no crate) and run as cargo runs it.
fn identity_of(s: &Scratch, dir: &Path) -> String {
    let script = s.dir.join("build-script");
    if !script.exists() {
        let out = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
            .args(["--edition", "2024", "-o"])
            .arg(&script)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("build/build.rs"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let out = Command::new(&script)
        .current_dir(dir)
        .env("CARGO_MANIFEST_DIR", dir)
        .env("CARGO_PKG_VERSION", "0.1.0")
        .env("GIT_CEILING_DIRECTORIES", &s.dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = said.lines().find_map(|l| l.strip_prefix("cargo:rustc-env=BUILD_IDENTITY="));
    line.unwrap_or_else(|| panic!("no identity in {said}")).to_string()
}

/// A copy of these sources outside git is named by their fingerprint, the same wherever
/// it is unpacked; one edit to a source gives another identity, one to the docs does not.
#[test]
fn sources_outside_git_are_named_by_their_fingerprint() {
    let s = Scratch::new("build-identity");
    let (a, b) = (s.dir.join("a/fathom-0.1.0"), s.dir.join("elsewhere/b"));
    copy_sources(Path::new(env!("CARGO_MANIFEST_DIR")), &a);
    copy_sources(&a, &b);
    let ours = identity_of(&s, &a);
    let fingerprint = fingerprint::of_sources(&a, &fingerprint::SOURCES).unwrap();
    assert_eq!(ours, format!("0.1.0 (sources {fingerprint})"));
    assert_eq!(identity_of(&s, &b), ours, "the same sources elsewhere");
    std::fs::write(b.join("README.md"), "not a source\n").unwrap();
    assert_eq!(identity_of(&s, &b), ours, "a file that is not built from");
    let main = b.join("src/main.rs");
    let mut text = std::fs::read_to_string(&main).unwrap();
    text.push_str("// one more line\n");
    std::fs::write(&main, text).unwrap();
    let edited = identity_of(&s, &b);
    assert!(edited.starts_with("0.1.0 (sources ") && edited != ours, "{edited} after an edit, {ours} before");
}

/// The fingerprint counts each file's path and its bytes: the same bytes split
/// differently between two files, or a file renamed, are other sources.
#[test]
fn a_fingerprint_tells_files_apart_by_name_and_boundary() {
    let s = Scratch::new("build-fingerprint");
    let tree = |name: &str, files: &[(&str, &str)]| {
        let root = s.dir.join(name);
        for (path, text) in files {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        fingerprint::of_sources(&root, &fingerprint::SOURCES).unwrap()
    };
    let one = tree("one", &[("src/a.rs", "fn a() {}"), ("src/b.rs", "fn b() {}"), ("Cargo.toml", "[package]")]);
    let same = tree("same", &[("src/b.rs", "fn b() {}"), ("Cargo.toml", "[package]"), ("src/a.rs", "fn a() {}")]);
    let split = tree("split", &[("src/a.rs", "fn a() {}fn"), ("src/b.rs", " b() {}"), ("Cargo.toml", "[package]")]);
    let renamed = tree("renamed", &[("src/a.rs", "fn a() {}"), ("src/c.rs", "fn b() {}"), ("Cargo.toml", "[package]")]);
    assert_eq!(one, same);
    assert_eq!(one.len(), 8, "{one}");
    assert!(split != one && renamed != one && split != renamed, "{one} {split} {renamed}");
}
