//! The host's network interfaces, per second, from /proc/net/dev: bytes, packets,
//! errors and drops received and transmitted. A storage test over the network (iSCSI,
//! NFS, a distributed store, a database client) can be held back by its link, and this
//! is where a full link or dropped packets show. Stored as node_exporter names them
//! (`node_network_receive_bytes_total{device="eth0"}`), running totals read as rates
//! like a database's counters, so one dashboard reads fathom and node_exporter alike.

use super::seam::{Observer, RunClock};
use crate::error::Result;
use crate::store::ObservationRow;
use crate::store::sink::{Record, Sink};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// node_exporter's families, in the order of a /proc/net/dev line's fields this reads:
/// received bytes, packets, errs, drop (fields 1-4), transmitted the same (fields 9-12),
/// each with node_exporter's help.
const FAMILIES: [(&str, usize, &str); 8] = [
    ("node_network_receive_bytes_total", 0, "Network device statistic receive_bytes."),
    ("node_network_receive_packets_total", 1, "Network device statistic receive_packets."),
    ("node_network_receive_errs_total", 2, "Network device statistic receive_errs."),
    ("node_network_receive_drop_total", 3, "Network device statistic receive_drop."),
    ("node_network_transmit_bytes_total", 8, "Network device statistic transmit_bytes."),
    ("node_network_transmit_packets_total", 9, "Network device statistic transmit_packets."),
    ("node_network_transmit_errs_total", 10, "Network device statistic transmit_errs."),
    ("node_network_transmit_drop_total", 11, "Network device statistic transmit_drop."),
];

/// Whether `name` (its labels aside) is one of this observer's series: every one is a
/// counter.
pub fn counter(name: &str) -> bool {
    help(name.split('{').next().unwrap_or(name)).is_some()
}

/// The help of `family` (a series' name without its labels), if it is one of this
/// observer's.
pub fn help(family: &str) -> Option<&'static str> {
    FAMILIES.iter().find(|(f, _, _)| *f == family).map(|(_, _, help)| *help)
}

/// The interface a series `name` counts (`eth0` of `...{device="eth0"}`), if it is one
/// of this observer's.
pub fn device(name: &str) -> Option<&str> {
    let (family, labels) = name.split_once('{')?;
    counter(family).then_some(())?;
    labels.strip_prefix("device=\"")?.strip_suffix("\"}")
}

/// Each interface's series `family` (`node_network_receive_bytes_total`) as stored.
pub fn series(family: &str, device: &str) -> String {
    format!("{family}{{device=\"{device}\"}}")
}

/// Every interface's counters in /proc/net/dev's `text`, by name: the eight this
/// observes, named as stored.
fn parse(text: &str) -> BTreeMap<String, Vec<(String, f64)>> {
    let mut out = BTreeMap::new();
    // two header lines, then `  eth0: 315578276 23568 0 0 ...`
    for line in text.lines().skip(2) {
        let Some((name, fields)) = line.split_once(':') else { continue };
        let f: Vec<u64> = fields.split_whitespace().map(|v| v.parse().unwrap_or(0)).collect();
        if f.len() < 16 {
            continue;
        }
        let name = name.trim().to_string();
        let rows = FAMILIES.iter().map(|(family, i, _)| (series(family, &name), f[*i] as f64)).collect();
        out.insert(name, rows);
    }
    out
}

/// The interfaces to observe, from sysfs under `class_net` (`/sys/class/net`): every one
/// that is up (IFF_UP in its `flags`), the loopback only when `loopback` (the run's
/// traffic goes over it: otherwise it carries only what other programs of the machine
/// say to each other).
pub fn interfaces(class_net: &Path, loopback: bool) -> Vec<String> {
    const IFF_UP: u32 = 0x1;
    const IFF_LOOPBACK: u32 = 0x8;
    let mut names: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(class_net).into_iter().flatten().flatten() {
        let flags = std::fs::read_to_string(entry.path().join("flags")).unwrap_or_default();
        let Ok(flags) = u32::from_str_radix(flags.trim().trim_start_matches("0x"), 16) else { continue };
        if flags & IFF_UP != 0 && (loopback || flags & IFF_LOOPBACK == 0) {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    names
}

/// The network observer: the counters of `interfaces` as it starts and at each whole
/// second `t` of the run after, stored at `t` (a counter's rise from `t-1` is its rate
/// over that second).
pub struct Network {
    pub interfaces: Vec<String>,
}

impl Network {
    /// Observes the interfaces that are up on this host, the loopback too when
    /// `loopback`.
    pub fn here(loopback: bool) -> Network {
        Network { interfaces: interfaces(Path::new("/sys/class/net"), loopback) }
    }
}

impl Observer for Network {
    fn name(&self) -> &'static str {
        "observe-network"
    }

    fn observe(self: Box<Self>, sink: Sink, clock: RunClock, stop: &AtomicBool) -> Result<()> {
        if self.interfaces.is_empty() {
            return Ok(());
        }
        let read = |t: u64| {
            let all = parse(&std::fs::read_to_string("/proc/net/dev").unwrap_or_default());
            let observed = self.interfaces.iter().filter_map(|i| all.get(i)).flatten();
            let rows = observed.map(|(name, value)| ObservationRow {
                t: t as i64,
                source: "host".into(),
                name: name.clone(),
                value: *value,
            });
            sink.send(Record::Observations(rows.collect()));
        };
        // a reading as the run starts, so that its first second has a rise too
        let first = clock.start.elapsed().as_secs();
        read(first);
        for t in first + 1.. {
            if !crate::clock::sleep_until(clock.start + Duration::from_secs(t), stop) {
                return Ok(());
            }
            read(t);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEV: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1260240517040 53683028    0    0    0     0          0         0 1260240517040 53683028    0    0    0     0       0          0
  eth0: 315578276   23568    3    4    0     0          0         0  1586827   19829    5    6    0     0       0          0
 broken: 1 2 3
";

    #[test]
    fn each_interface_counts_bytes_packets_errors_and_drops_each_way() {
        let all = parse(DEV);
        assert_eq!(all.keys().collect::<Vec<_>>(), ["eth0", "lo"]);
        let eth0: BTreeMap<&str, f64> = all["eth0"].iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let at = |family: &str| eth0[series(family, "eth0").as_str()];
        assert_eq!(at("node_network_receive_bytes_total"), 315_578_276.0);
        assert_eq!(at("node_network_receive_packets_total"), 23_568.0);
        assert_eq!(at("node_network_receive_errs_total"), 3.0);
        assert_eq!(at("node_network_receive_drop_total"), 4.0);
        assert_eq!(at("node_network_transmit_bytes_total"), 1_586_827.0);
        assert_eq!(at("node_network_transmit_packets_total"), 19_829.0);
        assert_eq!(at("node_network_transmit_errs_total"), 5.0);
        assert_eq!(at("node_network_transmit_drop_total"), 6.0);
        assert!(eth0.keys().all(|n| counter(n) && device(n) == Some("eth0")));
        assert!(!counter("usr_pct") && device("node_network_receive_bytes_total").is_none());
    }

    /// Up interfaces only, the loopback only when asked.
    #[test]
    fn interfaces_that_are_up_and_the_loopback_when_asked() {
        let root = std::env::temp_dir().join(format!("fathom-class-net-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (name, flags) in [("eth0", "0x1003"), ("ifb0", "0x82"), ("lo", "0x9"), ("eth1", "0x1002")] {
            std::fs::create_dir_all(root.join(name)).unwrap();
            std::fs::write(root.join(name).join("flags"), format!("{flags}\n")).unwrap();
        }
        let (without, with) = (interfaces(&root, false), interfaces(&root, true));
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(without, ["eth0"]);
        assert_eq!(with, ["eth0", "lo"]);
    }
}
