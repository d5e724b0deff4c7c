//! `driver: iperf3`: network streams between this host and an `iperf3 -s` (fathom's own
//! on loopback when no `server` is given), measured per second as Gbit/s.
//! `crate::drivers::iperf3` runs it.

use super::seam::{Keys, Measures, Program, ProgramSpec, Risk, Spec};
use crate::error::{Error, Result};
use crate::metrics::Op;
use crate::metrics::summary::Throughput;
use serde::Serialize;
use std::any::Any;
use std::time::Duration;

pub struct Iperf3Program;

/// `driver: iperf3`'s settings, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Iperf3 {
    /// `host[:port]` of a running `iperf3 -s`; `None`: fathom starts one on loopback.
    pub server: Option<String>,
    /// Parallel streams (`-P`).
    pub streams: u32,
    /// The server sends and the client receives (`-R`).
    pub reverse: bool,
    /// The link's speed in bits per second, to show throughput as a share of it.
    pub link_bps: Option<f64>,
    /// The streams' bitrate together in bits per second (`-b`, split evenly over the
    /// streams, as iperf3 paces each stream on its own): a load of a chosen size, whose
    /// RTT and retransmits say what the network does at that load, not only when full.
    pub bitrate_bps: Option<f64>,
}

impl Program for Iperf3Program {
    fn name(&self) -> &'static str {
        "iperf3"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["server", "streams", "reverse", "link", "bitrate"]
    }

    fn concurrency(&self) -> &'static [&'static str] {
        &["streams"]
    }

    fn settles(&self) -> &'static str {
        "TCP settles in seconds, but a link shared with other traffic varies over minutes"
    }

    fn check(&self, keys: &Keys) -> Result<ProgramSpec> {
        // empty (a built-in's default): fathom's own server on loopback
        let (server, _) = keys.line("server")?;
        let server = server.filter(|s| !s.trim().is_empty());
        let (streams, _) = keys.count("streams", 1, 128)?;
        let (reverse, _) = keys.get::<bool>("reverse")?;
        // empty (a built-in's default): no link speed, so no share of one
        let link_bps = bits(keys, "link")?;
        let bitrate_bps = bits(keys, "bitrate")?;
        Ok(ProgramSpec::new(Iperf3 { server, streams, reverse: reverse.unwrap_or(false), link_bps, bitrate_bps }))
    }
}

/// A key in bits per second (`link`, `bitrate`); empty (a built-in's default) is none.
fn bits(keys: &Keys, key: &str) -> Result<Option<f64>> {
    let (text, at) = keys.line(key)?;
    match text.filter(|t| !t.trim().is_empty()) {
        Some(text) => Ok(Some(parse_bits(&text).map_err(|e| keys.fail(&at, &e.to_string()))?)),
        None => Ok(None),
    }
}

impl Spec for Iperf3 {
    fn program(&self) -> &'static dyn Program {
        &Iperf3Program
    }

    fn workers(&self) -> u32 {
        self.streams
    }

    fn stored(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        v["driver"] = "iperf3".into();
        v
    }

    /// Bytes sent (or received, reversed) per second, with no per-op latency.
    fn measures(&self) -> Measures {
        let op = if self.reverse { Op::Recv } else { Op::Send };
        Measures { unit: Throughput::Gbits, ops: vec![op], latency: false, mb_per_s: false, rate: false }
    }

    /// Over loopback iperf3 measures this host's kernel and memory, not a link.
    fn risks(&self, _memory_bytes: Option<u64>, _ramp: Duration) -> Vec<Risk> {
        if self.server.is_some() {
            return Vec::new();
        }
        let message = "without a `server`, iperf3 runs over loopback: it measures this host's kernel and memory, \
                       not a network link. Give `server: HOST` (an `iperf3 -s` on another host) to measure the link";
        vec![Risk { rule: "iperf3-loopback", warning: false, message: message.to_string() }]
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A speed in bits per second such as `25gbit`, `10G`, `100mbit`, `1e9`.
pub fn parse_bits(text: &str) -> Result<f64> {
    let t = text.trim().to_ascii_lowercase();
    let t = t.strip_suffix("/s").unwrap_or(&t);
    let t = t.strip_suffix("bps").or_else(|| t.strip_suffix("bit")).or_else(|| t.strip_suffix('b')).unwrap_or(t);
    let (number, scale) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1e3),
        Some('m') => (&t[..t.len() - 1], 1e6),
        Some('g') => (&t[..t.len() - 1], 1e9),
        Some('t') => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(n) if n > 0.0 && n.is_finite() => Ok(n * scale),
        _ => Err(Error::input(format!("`{text}` is not a speed in bits per second (e.g. 10gbit, 25G, 100mbit)"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_speeds() {
        assert_eq!(parse_bits("25gbit").unwrap(), 25e9);
        assert_eq!(parse_bits("10G").unwrap(), 10e9);
        assert_eq!(parse_bits("100mbit/s").unwrap(), 100e6);
        assert_eq!(parse_bits("1e9").unwrap(), 1e9);
        assert!(parse_bits("fast").is_err());
    }
}
