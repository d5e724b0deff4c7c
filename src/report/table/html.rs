//! A [`Table`] as a section of the report's page: its title, its note, and every
//! column (a page scrolls sideways; nothing is dropped). A figure's cell carries what it
//! is (`data-workload`, `data-op`, `data-metric`, `data-value`) for tests and scripts.

use super::model::{Align, Mark, Table};
use crate::report::chart::esc;
use std::fmt::Write;

/// The table under an `<h3>`, or nothing when it has no rows.
pub fn render(t: &Table, h: &mut String) {
    if t.is_empty() {
        return;
    }
    let _ = write!(h, "<h3 id=\"{}\">{}</h3>", t.id, esc(&capitalised(&t.title)));
    if let Some(note) = &t.note {
        let _ = write!(h, "<p class=\"note\">{}.</p>", esc(&capitalised(note.trim_end_matches('.'))));
    }
    table(t, h);
    for l in &t.after {
        let _ = write!(h, "<p class=\"note\">{}</p>", esc(l.trim()));
    }
}

/// Only the `<table>` element, for a section that heads it itself.
pub fn table(t: &Table, h: &mut String) {
    let columns = t.shown();
    h.push_str("<table><thead><tr>");
    for &i in &columns {
        let _ = write!(h, "<th{}>{}</th>", left(t, i), esc(&t.columns[i].header));
    }
    h.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        let class = match r.mark {
            Mark::Plain => "",
            Mark::Flag => " class=\"flag\"",
            Mark::Fail => " class=\"fail\"",
        };
        let _ = write!(h, "<tr{class}>");
        for &i in &columns {
            let cell = &r.cells[i];
            let mut attrs = String::new();
            // a cell with nothing measured (`-`) is no figure of its metric
            let measured = !matches!(cell.text.as_str(), "" | "-");
            if let Some(metric) = t.columns[i].metric.as_ref().filter(|_| measured) {
                for (k, v) in &r.keys {
                    let _ = write!(attrs, " data-{k}=\"{}\"", esc(v));
                }
                let _ = write!(attrs, " data-metric=\"{}\"", esc(metric));
                if let Some(b) = cell.before {
                    let _ = write!(attrs, " data-before=\"{b}\"");
                }
                if let Some(v) = cell.value {
                    let _ = write!(attrs, " data-value=\"{v}\"");
                }
            }
            let _ = write!(h, "<td{}{attrs}>{}</td>", left(t, i), esc(&cell.text.replace(" -> ", " → ")));
        }
        h.push_str("</tr>");
    }
    h.push_str("</tbody></table>");
}

fn left(t: &Table, i: usize) -> &'static str {
    if t.columns[i].align == Align::Left { " class=\"l\"" } else { " class=\"r\"" }
}

pub fn capitalised(text: &str) -> String {
    let mut c = text.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}
