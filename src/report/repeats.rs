//! Repeated runs read together: each timed event (a `wait_until`'s recovery, an
//! `exec`, a prefill, a checkpoint) with its duration in every run and how far those
//! spread, so "three separate runs" of a recovery read as one figure and its spread.

use super::format::latency_us;
use super::summary::RunSummary;
use super::table::{Table, from_rows};
use crate::analysis::spread::Spread;
use serde::Serialize;

/// One timed event found in every run compared, with its duration's spread.
#[derive(Debug, Clone, Serialize)]
pub struct EventSpread {
    pub kind: String,
    pub label: String,
    /// Which of the run's events of this kind and label it is (0 for the first): a
    /// run's second checkpoint is matched with another's second.
    pub occurrence: usize,
    /// Per run, in the order compared, in ms.
    pub took_ms: Vec<i64>,
    pub spread: Spread,
}

/// The timed events every run has, in the first run's order, each with its spread;
/// events some run lacks (it failed first, or its server checkpointed less) are left out.
pub fn event_spreads(runs: &[&RunSummary]) -> Vec<EventSpread> {
    let Some(first) = runs.first() else { return Vec::new() };
    let mut out = Vec::new();
    for (i, e) in first.events.iter().enumerate() {
        if e.took_ms.is_none() {
            continue;
        }
        let same = |o: &&crate::store::EventRow| o.kind == e.kind && o.label == e.label && o.took_ms.is_some();
        let occurrence = first.events[..i].iter().filter(same).count();
        let took: Option<Vec<i64>> =
            runs.iter().map(|r| r.events.iter().filter(same).nth(occurrence).and_then(|o| o.took_ms)).collect();
        let Some(took_ms) = took else { continue };
        let ms: Vec<f64> = took_ms.iter().map(|&t| t as f64).collect();
        let Some(spread) = Spread::of(&ms) else { continue };
        out.push(EventSpread { kind: e.kind.clone(), label: e.label.clone(), occurrence, took_ms, spread });
    }
    out
}

/// The events' table: per event its duration in each run, then min, median, max and
/// the spread in percent of the median; no rows when there is none.
pub fn table(events: &[EventSpread], ids: &[i64]) -> Table {
    let mut header: Vec<String> = vec!["event".into()];
    header.extend(ids.iter().map(|id| format!("run {id}")));
    header.extend(["min", "median", "max", "spread"].map(String::from));
    let ms = |v: f64| latency_us(v * 1000.0);
    let rows = events
        .iter()
        .map(|e| {
            let mut name = format!("{} {}", e.kind, e.label).trim().to_string();
            if e.occurrence > 0 {
                name.push_str(&format!(" #{}", e.occurrence + 1));
            }
            let mut cells = vec![name];
            cells.extend(e.took_ms.iter().map(|&t| ms(t as f64)));
            let s = &e.spread;
            cells.extend([ms(s.min), ms(s.median), ms(s.max)]);
            cells.push(s.relative.map_or("-".into(), |r| format!("{:.1}%", r * 100.0)));
            cells
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = from_rows(&header, rows, 1);
    t.id = "events";
    t.title = format!("timed events over {} runs (spread: max - min over the median)", ids.len());
    t
}
