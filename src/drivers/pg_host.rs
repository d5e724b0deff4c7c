//! What a throwaway PostgreSQL needs of this host, apart from PostgreSQL itself: the
//! user its programs run as and whether it can reach a directory, fathom's own user
//! (whom the cluster admits), a port number, the files of its data directory written
//! without following links, and what its log says when it will not start.

use crate::error::{Error, Result};
use crate::meminfo::{HUGE_PAGES, huge_pages, size_words};
use crate::scenario::program::dbms::Dbms;
use std::path::{Path, PathBuf};

/// The user the cluster's programs run as: ourselves, or `postgres` when we are root.
#[derive(Clone, Copy)]
pub struct RunAs {
    pub uid: u32,
    pub gid: u32,
}

/// The server's user when fathom is root (PostgreSQL will not run as root); None otherwise.
pub fn run_as() -> Result<Option<RunAs>> {
    run_as_user(
        c"postgres",
        "PostgreSQL does not run as root and there is no `postgres` user to run it as \
         (Debian's postgresql package creates one), or give a `dsn`",
    )
}

/// OS user `name` when fathom is root, for a server that does not run as root (`missing`
/// says what to do when there is no such user); None otherwise: the server runs as
/// fathom's own user.
pub fn run_as_user(name: &std::ffi::CStr, missing: &str) -> Result<Option<RunAs>> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    // SAFETY: getpwnam returns a pointer into static storage or null; read at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        return Err(Error::failed(missing));
    }
    // SAFETY: pw is non-null and points at a valid passwd entry.
    let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
    Ok(Some(RunAs { uid, gid }))
}

/// The first ancestor of `dir` (and its mode) that `u` cannot search, if any.
pub fn unreachable_by(dir: &Path, u: RunAs) -> Option<(PathBuf, u32)> {
    use std::os::unix::fs::MetadataExt;
    dir.ancestors().skip(1).find_map(|a| {
        let m = std::fs::metadata(a).ok()?;
        let mode = m.mode();
        let searchable =
            (m.uid() == u.uid && mode & 0o100 != 0) || (m.gid() == u.gid && mode & 0o010 != 0) || mode & 0o001 != 0;
        (!searchable).then(|| (a.to_path_buf(), mode & 0o7777))
    })
}

/// Why a server with `settings` would not start, from its log `text`: PostgreSQL's own
/// errors, each without the log line's time and pid, led by the setting they are
/// about. An error that names no setting (`huge_pages = on` on a machine with no huge
/// pages reserved fails to map its shared memory) is led by the setting known to cause
/// it, else by every setting given. None when the log says nothing of it.
pub fn refused(settings: &[(String, String)], text: &str) -> Option<String> {
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("FATAL") || l.contains("LOG:  invalid") || l.contains("ERROR"))
        .map(|l| ["FATAL:", "ERROR:", "LOG:"].iter().find_map(|k| l.find(k).map(|at| &l[at..])).unwrap_or(l))
        .collect();
    if errors.is_empty() {
        return None;
    }
    let said = errors.join(" / ");
    let set = |k: &str| settings.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    if settings.is_empty() || settings.iter().any(|(k, _)| said.contains(&format!("\"{k}\""))) {
        return Some(said);
    }
    if said.contains("shared memory") && set("huge_pages") == Some("on") {
        return Some(format!("{}: {said}", too_few_huge_pages(set("huge_page_size"), Path::new(HUGE_PAGES))));
    }
    let all: Vec<String> = settings.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    Some(format!("with the settings {}: {said}", all.join(", ")))
}

/// Why a server with `huge_pages = on` and `huge_page_size` (None or 0: the kernel's
/// default size; a number is kB) found too few huge pages, from the pools under `pools`:
/// the size asked, how many of it are reserved, and how to reserve more.
fn too_few_huge_pages(huge_page_size: Option<&str>, pools: &Path) -> String {
    let sizes = huge_pages(pools);
    let asked_kb = match huge_page_size.map(str::trim) {
        None | Some("0") => crate::meminfo::bytes("Hugepagesize").map(|b| b / 1024),
        Some(t) if t.bytes().all(|b| b.is_ascii_digit()) => t.parse().ok(),
        Some(t) => Dbms::Postgresql.size(t).map(|b| b / 1024),
    };
    let Some(kb) = asked_kb else { return "huge_pages = on, in a huge page size fathom cannot read".into() };
    let size = size_words(kb);
    let pool = pools.join(format!("hugepages-{kb}kB"));
    match sizes.iter().find(|h| h.size_kb == kb) {
        None => format!("huge_pages = on in pages of {size}, which this machine's kernel does not offer"),
        Some(h) => format!(
            "huge_pages = on in pages of {size}, and this machine has {} of them reserved, {} free (reserve \
             enough for shared_buffers and a tenth more: echo N > {}/nr_hugepages, or at boot)",
            h.reserved,
            h.free,
            pool.display()
        ),
    }
}

/// The name of fathom's OS user, which peer authentication admits.
pub fn os_user() -> Result<String> {
    // SAFETY: geteuid has no preconditions; getpwuid returns a pointer into static
    // storage or null, read at once.
    let (uid, pw) = unsafe { (libc::geteuid(), libc::getpwuid(libc::geteuid())) };
    if pw.is_null() {
        return Err(Error::failed(format!(
            "a throwaway PostgreSQL admits fathom's OS user by name, and uid {uid} has none (add it to /etc/passwd)"
        )));
    }
    // SAFETY: pw is non-null and its pw_name a NUL-terminated string.
    Ok(unsafe { std::ffi::CStr::from_ptr((*pw).pw_name) }.to_string_lossy().into_owned())
}

/// A libpq keyword value: quoted when it holds a blank, a quote or a backslash.
pub fn conn_value(value: &str) -> String {
    match value.contains(|c: char| c.is_whitespace() || c == '\'' || c == '\\') {
        true => format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'")),
        false => value.to_string(),
    }
}

/// A port number no server on this machine listens on: it names the cluster's socket,
/// and tells the run's clusters apart (in their dsn, HammerDB's scripts).
pub fn free_port() -> Result<u16> {
    let l =
        std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| Error::failed(format!("finding a free port: {e}")))?;
    l.local_addr().map(|a| a.port()).map_err(|e| Error::failed(format!("finding a free port: {e}")))
}

/// Appends to a file of the server's data directory, never through a symlink (its owner
/// could have put one there for root to follow).
pub fn append(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| Error::failed(format!("{}: {e}", path.display())))?;
    f.write_all(text.as_bytes()).map_err(|e| Error::failed(format!("{}: {e}", path.display())))
}

/// lchown: a symlink swapped in by the server's user is changed itself, not followed.
pub fn chown(path: &Path, u: RunAs) -> Result<()> {
    std::os::unix::fs::lchown(path, Some(u.uid), Some(u.gid))
        .map_err(|e| Error::failed(format!("chown {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn too_few_huge_pages_names_the_size_asked_its_pool_and_how_to_reserve() {
        let pools = std::env::temp_dir().join(format!("fathom-pools-{}", std::process::id()));
        for (size, nr) in [("2048kB", "10"), ("1048576kB", "0")] {
            let d = pools.join(format!("hugepages-{size}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("nr_hugepages"), nr).unwrap();
            std::fs::write(d.join("free_hugepages"), nr).unwrap();
        }
        let said = too_few_huge_pages(Some("1GB"), &pools);
        assert!(
            said.starts_with("huge_pages = on in pages of 1 GB, and this machine has 0 of them reserved"),
            "{said}"
        );
        assert!(said.contains(&format!("{}/hugepages-1048576kB/nr_hugepages", pools.display())), "{said}");
        // a number is kB, as PostgreSQL reads it
        let said = too_few_huge_pages(Some("2048"), &pools);
        assert!(said.contains("pages of 2 MB, and this machine has 10 of them reserved, 10 free"), "{said}");
        let said = too_few_huge_pages(Some("16GB"), &pools);
        assert_eq!(said, "huge_pages = on in pages of 16 GB, which this machine's kernel does not offer");
        std::fs::remove_dir_all(&pools).unwrap();
    }

    #[test]
    fn a_refused_start_names_the_setting_with_postgresqls_words() {
        let set = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let log = "2026-11-27 08:34:02.229 UTC [26244] FATAL:  could not map anonymous shared memory: Cannot \
                   allocate memory\n2026-11-27 08:34:02.229 UTC [26244] HINT:  This error usually means ...\n";
        let said = refused(&set(&[("shared_buffers", "1GB"), ("huge_pages", "on")]), log).unwrap();
        assert!(said.starts_with("huge_pages = on in pages of "), "{said}");
        assert!(said.ends_with("): FATAL:  could not map anonymous shared memory: Cannot allocate memory"), "{said}");
        // the server names the setting itself: its words alone
        let log = "2026-11-27 08:00:00 UTC [1] LOG:  invalid value for parameter \"wal_level\": \"lots\"\n";
        let said = refused(&set(&[("wal_level", "lots")]), log).unwrap();
        assert_eq!(said, "LOG:  invalid value for parameter \"wal_level\": \"lots\"");
        // an error that names none: every setting given leads it
        let said = refused(&set(&[("max_connections", "9"), ("work_mem", "4MB")]), "x FATAL:  no").unwrap();
        assert_eq!(said, "with the settings max_connections = 9, work_mem = 4MB: FATAL:  no");
        assert_eq!(refused(&[], "LOG:  database system is shut down"), None);
    }

    #[test]
    fn a_private_parent_is_found() {
        let base = std::env::temp_dir().join(format!("fathom-reach-{}", std::process::id()));
        let inner = base.join("open/cluster");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::set_permissions(base.join("open"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        // someone who owns none of it: the ancestors must be searchable by all
        let stranger = RunAs { uid: 54_321, gid: 54_321 };
        let open = unreachable_by(&inner, stranger);
        // (a private directory further up, such as /root, would show here too)
        assert!(open.is_none() || !open.as_ref().unwrap().0.starts_with(&base), "{open:?}");
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(unreachable_by(&inner, stranger), Some((base.clone(), 0o700)));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
