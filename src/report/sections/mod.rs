//! A run's sections as people read them, each a [`Table`] built once from the
//! [`RunSummary`]: the terminal prints them fitted to its width, the report's page
//! renders the same tables.

pub mod findings;
pub mod phases;
pub mod workloads;

use crate::analysis::usl::Verdict;
use crate::report::format::{rate_in, sig3};
use crate::report::summary::RunSummary;
use crate::report::table::{Table, text};

/// The run's tables and findings for the terminal, no line wider than `width` (but
/// for a row whose names cannot shorten further).
pub fn terminal(s: &RunSummary, width: usize) -> String {
    let shown = |t: Table| if t.is_empty() && t.after.is_empty() { String::new() } else { text::render(&t, width) };
    let mut out = String::new();
    for t in [
        workloads::results(s),
        workloads::network(s),
        workloads::hosts(s),
        phases::figures(s),
        findings::events(s),
        workloads::open_loop(s),
        workloads::fidelity(s),
        workloads::checked(s),
    ] {
        out.push_str(&shown(t));
    }
    for t in findings::event_tables(s) {
        out.push_str(&shown(t));
    }
    out.push_str(&crate::report::views_print::terminal(s, width));
    out.push_str(&crate::report::results_print::terminal(s, width));
    for l in s.analysis.littles_law.iter().filter(|l| l.flagged) {
        out.push('\n');
        out.push_str(&text::wrap(
            &format!(
                "Little's law: {} held {:.1} IOs in flight for {} configured ({:+.0}%): time is lost outside the \
                 device (the generator, or queueing above it), or the measurement is off",
                l.workload, l.measured, l.expected, l.gap_percent
            ),
            width,
        ));
    }
    out.push_str(&shown(phases::steadiness(s)));
    out.push_str(&shown(findings::checkpoints(s)));
    out.push_str(&shown(findings::compared(s)));
    for l in curve(s) {
        out.push_str(&text::wrap(&l, width));
    }
    out.push_str(&shown(findings::observed(s)));
    out
}

/// The curve over the phases: its knee, where a one-point test would stand, and the
/// USL fit; nothing without a curve.
pub fn curve(s: &RunSummary) -> Vec<String> {
    let Some(c) = &s.analysis.curve else { return Vec::new() };
    let label = |i: usize| s.phases.get(i).map(|p| p.phase.label.clone()).unwrap_or_default();
    let mut found = Vec::new();
    if let Some(k) = c.knee {
        found.push(format!("knee (most {} per µs of latency) at {}", c.unit.label(), label(k.max_power)));
        if let Some(d) = k.latency_doubled {
            found.push(format!("latency doubled from {} at {}", label(0), label(d)));
        }
    }
    found.push(format!(
        "you are here (the lowest concurrency, what a one-point test reports): {}",
        rate_in(c.points[c.you_are_here].1, c.unit)
    ));
    let at_top = c.highest();
    found.push(format!(
        "at the highest concurrency ({}): {}, scaling efficiency {:.2} (1 = perfect)",
        label(at_top),
        rate_in(c.points[at_top].1, c.unit),
        c.efficiency[at_top]
    ));
    let u = &c.usl;
    let fit = match (&u.fit, u.verdict) {
        (Some(f), Verdict::Good | Verdict::Poor) => format!(
            "USL fit: sigma {:.4}, kappa {:.2e}, lambda {}, R² {:.3}; {} (`fathom fit --run {}` for more)",
            f.sigma.value,
            f.kappa.value,
            sig3(f.lambda.value),
            f.r_squared,
            u.headline(),
            s.run.id
        ),
        _ => format!("USL: {}", u.headline()),
    };
    let mut lines = vec![String::new(), format!("curve over the phases (N: {}):", c.counts)];
    lines.extend(found.into_iter().map(|f| format!("  {f}")));
    lines.push(fit);
    lines
}
