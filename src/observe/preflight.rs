//! What this machine says about a scenario before it runs, for lint
//! (`crate::analysis::lint::before`, which reads nothing itself): its memory, the
//! working sets already on the targets, the free space where workloads write, the files
//! their IO goes to, and where the Prometheus endpoint's address resolves.

use crate::analysis::lint::Facts;
use crate::scenario::Scenario;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;

/// The facts lint weighs a scenario against, read from this machine now.
pub fn facts(s: &Scenario) -> Facts {
    let ios = || s.workloads.iter().map(|w| w.io());
    let working_set = ios()
        .map(|io| io.and_then(|io| io.size.or_else(|| io.targets.iter().map(|t| existing_len(t, &io.file)).sum())));
    let free_bytes = ios().map(|io| io.and_then(|io| io.targets.first()).and_then(|t| crate::nofollow::free_space(t)));
    let data_files = ios().map(|io| {
        let Some(io) = io else { return Vec::new() };
        io.targets
            .iter()
            .map(|t| if t.is_dir() { t.join(format!("fathom-{}.dat", io.file)) } else { t.clone() })
            .collect()
    });
    Facts {
        memory_bytes: crate::meminfo::bytes("MemTotal"),
        working_set: working_set.collect(),
        free_bytes: free_bytes.collect(),
        data_files: data_files.collect(),
        endpoint_beyond_loopback: s.prometheus.as_deref().is_some_and(beyond_loopback),
    }
}

/// Length of the file a target resolves to, if it exists.
fn existing_len(t: &Path, file: &str) -> Option<u64> {
    let path = if t.is_dir() { t.join(format!("fathom-{file}.dat")) } else { t.to_path_buf() };
    std::fs::metadata(path).ok().map(|m| m.len()).filter(|&n| n > 0)
}

/// Whether `addr` resolves to an address other than loopback. One that does not
/// resolve is not: the run refuses it (it cannot listen there).
fn beyond_loopback(addr: &str) -> bool {
    let resolved: Vec<SocketAddr> = addr.to_socket_addrs().map(|a| a.collect()).unwrap_or_default();
    !resolved.is_empty() && !resolved.iter().all(|a| a.ip().is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_beyond_loopback_is_found() {
        for exposed in ["0.0.0.0:9464", "[::]:9464", "192.0.2.1:9464"] {
            assert!(beyond_loopback(exposed), "{exposed}");
        }
        for quiet in ["127.0.0.1:9464", "127.0.0.2:9464", "[::1]:9464", "localhost:9464", "not an address"] {
            assert!(!beyond_loopback(quiet), "{quiet}");
        }
    }
}
