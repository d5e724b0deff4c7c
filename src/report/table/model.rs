//! The table a section builds once: columns, rows, cells, what each figure is.

/// Where a column's cells sit: names to the left, figures to the right.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Align {
    Left,
    Right,
}

/// How readily a narrow terminal drops a column: [`Keep::Always`] columns stay, and
/// of the others the least important (the highest number) goes first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Keep {
    Always,
    /// Dropped before `Rank(n - 1)` and after `Rank(n + 1)`.
    Rank(u8),
}

/// A column: its header, where its cells sit, how readily it is dropped, and the
/// figure its cells are (`data-metric` on the page, which tests and scripts read).
#[derive(Clone, Debug)]
pub struct Column {
    pub header: String,
    pub align: Align,
    pub keep: Keep,
    pub metric: Option<String>,
    /// Its cells are never cut to fit (a verdict that must stay readable).
    pub whole: bool,
}

impl Column {
    /// A name column, kept at any width.
    pub fn name(header: &str) -> Column {
        Column { header: header.into(), align: Align::Left, keep: Keep::Always, metric: None, whole: false }
    }

    /// A figure, right-aligned, kept at any width.
    pub fn figure(header: &str) -> Column {
        Column { header: header.into(), align: Align::Right, keep: Keep::Always, metric: None, whole: false }
    }

    /// Its cells are never cut with `…` to fit: what they say is lost when cut.
    pub fn whole(mut self) -> Column {
        self.whole = true;
        self
    }

    /// The column is dropped at rank `n` when the terminal is too narrow.
    pub fn drop_at(mut self, n: u8) -> Column {
        self.keep = Keep::Rank(n);
        self
    }

    /// Cells of the column carry `data-metric` (and their row's keys) on the page.
    pub fn metric(mut self, name: &str) -> Column {
        self.metric = Some(name.into());
        self
    }
}

/// A cell: its text, and the exact figure behind it (and before it, for a change)
/// when it shows one.
#[derive(Clone, Debug, Default)]
pub struct Cell {
    pub text: String,
    pub value: Option<f64>,
    pub before: Option<f64>,
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Cell {
        Cell { text: text.into(), value: None, before: None }
    }

    /// `value` shown as `text`.
    pub fn figure(value: f64, text: impl Into<String>) -> Cell {
        Cell { text: text.into(), value: Some(value), before: None }
    }

    /// A change from `before` to `value`, shown as `text`.
    pub fn change(before: f64, value: f64, text: impl Into<String>) -> Cell {
        Cell { text: text.into(), value: Some(value), before: Some(before) }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell::text(text)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::text(text)
    }
}

/// How a row reads at a glance: flagged or failed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mark {
    Plain,
    Flag,
    Fail,
}

/// A row: what it is about (`workload`, `op`, `phase`, `host`: `data-` keys on the
/// page, in order), its cells, and its mark.
#[derive(Clone, Debug)]
pub struct Row {
    pub keys: Vec<(&'static str, String)>,
    pub cells: Vec<Cell>,
    pub mark: Mark,
}

impl Row {
    pub fn new(cells: Vec<Cell>) -> Row {
        Row { keys: Vec::new(), cells, mark: Mark::Plain }
    }

    pub fn key(mut self, key: &'static str, value: &str) -> Row {
        self.keys.push((key, value.to_string()));
        self
    }

    pub fn mark(mut self, mark: Mark) -> Row {
        self.mark = mark;
        self
    }
}

/// A section's table: its title and what to know to read it, its columns and rows,
/// and lines that follow it.
#[derive(Clone, Debug)]
pub struct Table {
    /// The page's anchor for the table.
    pub id: &'static str,
    /// A short title, lower case: `per host`.
    pub title: String,
    /// How to read it, in one sentence; the terminal prints it after the title.
    pub note: Option<String>,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// Lines after the table (a legend, what differs).
    pub after: Vec<String>,
}

impl Table {
    pub fn new(id: &'static str, title: &str, columns: Vec<Column>) -> Table {
        Table { id, title: title.into(), note: None, columns, rows: Vec::new(), after: Vec::new() }
    }

    pub fn note(mut self, note: impl Into<String>) -> Table {
        self.note = Some(note.into());
        self
    }

    pub fn push(&mut self, row: Row) {
        debug_assert_eq!(row.cells.len(), self.columns.len(), "{}: a row's cells match the columns", self.id);
        self.rows.push(row);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The columns with a cell that says something: a column empty in every row takes
    /// width and tells nothing.
    pub fn shown(&self) -> Vec<usize> {
        (0..self.columns.len()).filter(|&i| self.rows.iter().any(|r| !r.cells[i].text.is_empty())).collect()
    }
}

/// A plain table of text: the first `left` columns are names, the rest figures, all
/// kept at any width.
pub fn from_rows(header: &[&str], rows: Vec<Vec<String>>, left: usize) -> Table {
    let columns =
        header.iter().enumerate().map(|(i, h)| if i < left { Column::name(h) } else { Column::figure(h) }).collect();
    let mut t = Table::new("table", "", columns);
    for r in rows {
        t.push(Row::new(r.into_iter().map(Cell::from).collect()));
    }
    t
}
