//! A workload's headline: the figure its program is read by first (TPC-C's NOPM,
//! pgbench's TPS, TPC-H's query-set time, IO's IOPS), the figures quoted beside it, and
//! the op its tables lead with. The program declares it, the run stores it with the
//! workload, and the read side takes it from there, so no reader names a program.

use super::op::Throughput;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    pub figure: Figure,
    /// Quoted after it (`from 101,575 TPM`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub beside: Vec<Figure>,
    /// The op tables and charts lead with (`new-order`), when one leads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leading_op: Option<String>,
    /// Whether its ops' rates are figures to read. A TPC-H query runs once per stream:
    /// it has a time, and neither a rate, nor a rate's variation, nor ops in flight to
    /// weigh against Little's law.
    #[serde(default = "rated", skip_serializing_if = "is_rated")]
    pub rated: bool,
}

fn rated() -> bool {
    true
}

fn is_rated(rated: &bool) -> bool {
    *rated
}

/// One figure: how people name it, where the run has it, and which way is better.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// `NOPM`, `TPS`, `IOPS`, `Gbit/s` after a rate; `query set` before seconds.
    pub label: String,
    pub from: Source,
    pub better: Better,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// A rate.
    Higher,
    /// A time.
    Lower,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Source {
    /// The rate of the workload's ops (the leading op's, when one leads), in their unit.
    Rate,
    /// A count per second the program records as the observation `name` of the source
    /// `PROGRAM:WORKLOAD` (`tpcc:oltp`, `nopm`).
    Count { program: String, name: String },
    /// Seconds the program records the same way (`tpch:q`, `power_s`).
    Seconds { program: String, name: String },
    /// The seconds the workload's IO took, its measured window, with the IOs it did:
    /// what a pass over every block once (`randommap`) is read by.
    Pass,
}

impl Headline {
    /// The rate of the workload's ops in `unit`: what IO, pgbench and iperf3 are read by.
    pub fn rate(unit: Throughput) -> Headline {
        let figure = Figure { label: unit.label().to_string(), from: Source::Rate, better: Better::Higher };
        Headline { figure, beside: Vec::new(), leading_op: None, rated: true }
    }
}

impl Headline {
    /// A pass over every block once: its time first, its rate beside it.
    pub fn pass(unit: Throughput) -> Headline {
        let figure = Figure { label: "every block once".into(), from: Source::Pass, better: Better::Lower };
        let rate = Headline::rate(unit).figure;
        Headline { figure, beside: vec![rate], leading_op: None, rated: true }
    }
}

impl Figure {
    /// A count (per minute or second) a program records under `name`, called `label`.
    pub fn count(program: &str, name: &str, label: &str) -> Figure {
        let from = Source::Count { program: program.into(), name: name.into() };
        Figure { label: label.into(), from, better: Better::Higher }
    }

    /// Seconds a program records under `name`, called `label` (less is better).
    pub fn seconds(program: &str, name: &str, label: &str) -> Figure {
        let from = Source::Seconds { program: program.into(), name: name.into() };
        Figure { label: label.into(), from, better: Better::Lower }
    }
}
