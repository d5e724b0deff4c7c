//! A [`Table`] for the terminal: columns padded two spaces apart, fitted to the
//! terminal's width. A row never wraps: the least important columns are dropped first
//! (and named under the table), then long names are shortened with `…`.

use super::model::{Align, Keep, Table, from_rows};
pub use crate::terminal::wrap;

/// Names are not shortened below this many characters: shorter, they stop telling
/// rows apart.
const SHORTEST_NAME: usize = 8;

/// Width for output that is not a terminal, when `COLUMNS` does not say.
pub const PIPED_WIDTH: usize = 100;

/// How wide tables may be: the terminal's width, `COLUMNS` when set, else
/// [`PIPED_WIDTH`]; `wide` lifts the limit.
pub fn width(wide: bool) -> usize {
    if wide {
        return usize::MAX;
    }
    crate::terminal::columns().unwrap_or(PIPED_WIDTH)
}

/// The table as lines no wider than `width` (its heading and notes wrapped at words).
pub fn render(t: &Table, width: usize) -> String {
    let mut out = String::new();
    // the note beside the title when the line holds both, else under the table
    let mut note_after = None;
    if !t.title.is_empty() {
        let heading = match &t.note {
            Some(note) if t.title.chars().count() + note.chars().count() + 4 <= width => {
                format!("{} ({note}):", t.title)
            }
            Some(note) => {
                note_after = Some(note);
                format!("{}:", t.title)
            }
            None => format!("{}:", t.title),
        };
        out.push('\n');
        out.push_str(&wrap(&heading, width));
    }
    let mut columns = t.shown();
    let mut widths: Vec<usize> = columns.iter().map(|&i| natural_width(t, i)).collect();
    let dropped = drop_columns(t, &mut columns, &mut widths, width);
    shorten_names(t, &columns, &mut widths, width);
    // a table of no rows says only its lines after: a header over nothing says nothing
    let header: Vec<&str> = columns.iter().map(|&i| t.columns[i].header.as_str()).collect();
    if !t.rows.is_empty() {
        out.push_str(&line(t, &columns, &widths, &header));
    }
    for r in &t.rows {
        let cells: Vec<&str> = columns.iter().map(|&i| r.cells[i].text.as_str()).collect();
        out.push_str(&line(t, &columns, &widths, &cells));
    }
    if !dropped.is_empty() {
        let names: Vec<&str> = dropped.iter().map(|&i| t.columns[i].header.as_str()).collect();
        out.push_str(&wrap(
            &format!("({} left out to fit {width} columns: --wide shows them)", names.join(", ")),
            width,
        ));
    }
    for l in &t.after {
        out.push_str(&wrap(l, width));
    }
    if let Some(note) = note_after {
        out.push_str(&wrap(&super::html::capitalised(&format!("{}.", note.trim_end_matches('.'))), width));
    }
    out
}

fn natural_width(t: &Table, i: usize) -> usize {
    t.rows
        .iter()
        .map(|r| r.cells[i].text.chars().count())
        .chain([t.columns[i].header.chars().count()])
        .max()
        .unwrap_or(0)
}

fn total(widths: &[usize]) -> usize {
    widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1)
}

/// Drops the least important columns until the rest fit; returns the dropped, in
/// the table's order.
fn drop_columns(t: &Table, columns: &mut Vec<usize>, widths: &mut Vec<usize>, width: usize) -> Vec<usize> {
    let mut dropped = Vec::new();
    while total(widths) > width {
        let least = (0..columns.len())
            .filter(|&k| t.columns[columns[k]].keep != Keep::Always)
            .max_by_key(|&k| (t.columns[columns[k]].keep, k));
        let Some(k) = least else { break };
        dropped.push(columns.remove(k));
        widths.remove(k);
    }
    dropped.sort_unstable();
    dropped
}

/// Narrows the widest name columns (but [`Column::whole`] ones), no further than
/// [`SHORTEST_NAME`], until the row fits or nothing more can give.
fn shorten_names(t: &Table, columns: &[usize], widths: &mut [usize], width: usize) {
    while total(widths) > width {
        let widest = (0..columns.len())
            .filter(|&k| {
                let c = &t.columns[columns[k]];
                c.align == Align::Left && !c.whole && widths[k] > SHORTEST_NAME
            })
            .max_by_key(|&k| widths[k]);
        let Some(k) = widest else { break };
        let over = total(widths) - width;
        widths[k] = widths[k].saturating_sub(over).max(SHORTEST_NAME);
    }
}

/// One row, each cell padded (or shortened) to its column's width.
fn line(t: &Table, columns: &[usize], widths: &[usize], cells: &[&str]) -> String {
    let padded: Vec<String> = cells
        .iter()
        .zip(columns.iter().zip(widths))
        .map(|(c, (&i, &w))| {
            let c = shortened(c, w);
            let pad = " ".repeat(w - c.chars().count());
            match t.columns[i].align {
                Align::Left => format!("{c}{pad}"),
                Align::Right => format!("{pad}{c}"),
            }
        })
        .collect();
    let mut l = padded.join("  ").trim_end().to_string();
    l.push('\n');
    l
}

/// `text` in at most `width` characters, its end replaced by `…` when cut.
pub fn shortened(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut s: String = text.chars().take(width.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// A table narrow by construction (a fit's few figures), printed as is.
pub fn plain(header: &[&str], rows: &[Vec<String>], left: usize) -> String {
    render(&from_rows(header, rows.to_vec(), left), usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::super::model::{Cell, Column, Row};
    use super::*;

    fn table() -> Table {
        let mut t = Table::new(
            "t",
            "ops",
            vec![
                Column::name("workload"),
                Column::figure("IOPS"),
                Column::figure("p99"),
                Column::figure("p99.9").drop_at(1),
                Column::figure("max").drop_at(2),
                Column::figure("empty").drop_at(0),
            ],
        );
        for name in ["a-rather-long-workload-name", "b"] {
            let cells = [name, "12,345", "1.20 ms", "3.40 ms", "9.99 ms", ""].map(Cell::from).to_vec();
            t.push(Row::new(cells));
        }
        t
    }

    /// A section with nothing in its table says its lines after, under its title alone:
    /// no header over no rows.
    #[test]
    fn a_table_of_no_rows_prints_no_header() {
        let mut t =
            Table::new("t", "the rate second to second", vec![Column::name("workload"), Column::figure("took")]);
        t.after.push("oltp: NOPM varies 53%".into());
        assert_eq!(render(&t, 80), "\nthe rate second to second:\noltp: NOPM varies 53%\n");
    }

    #[test]
    fn a_narrow_terminal_drops_the_least_important_column_first_and_says_so() {
        let wide = render(&table(), 200);
        assert!(wide.contains("max") && wide.contains("p99.9") && !wide.contains("empty"), "{wide}");
        let narrow = render(&table(), 60);
        assert!(!narrow.lines().next().unwrap().contains("max") && narrow.contains("p99.9"), "{narrow}");
        assert!(narrow.contains("(max left out to fit 60 columns"), "{narrow}");
        assert!(narrow.lines().all(|l| l.chars().count() <= 60), "{narrow}");
    }

    #[test]
    fn no_line_is_wider_than_the_terminal_and_names_are_shortened_last() {
        // the narrowest a row can be: names at their shortest, figures whole
        let narrowest = SHORTEST_NAME + 2 + 6 + 2 + 7;
        for width in [0, 5, 20, 40, 48, 80] {
            let out = render(&table(), width);
            assert_eq!(out.lines().filter(|l| l.contains("12,345")).count(), 2, "{out}");
            assert!(out.lines().all(|l| l.chars().count() <= width.max(narrowest)), "{width}: {out}");
        }
        assert!(render(&table(), 25).contains("a-rathe…  12,345"), "{}", render(&table(), 25));
    }
}
