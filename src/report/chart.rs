//! Charts as self-contained SVG: an XY chart with lines or dots, linear or log
//! axes with readable ticks in the axis's unit (1k, 10k; µs, ms; 30 s, 2 min), a legend,
//! shaded bands (the timeline's phases) and vertical marks. One drawing routine for
//! every chart fathom makes: the report's, and `fathom fit --svg`.

use super::format::sig3;
use std::fmt::Write;

/// What an axis's values are, for its tick labels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unit {
    /// Counts and rates: 500, 1k, 1.5M.
    Count,
    /// Latency given in microseconds: 100 µs, 1 ms, 2 s.
    Micros,
    /// Seconds of the run clock: 30 s, 2 min, 1 h.
    Seconds,
    /// Percent: 50%.
    Percent,
}

impl Unit {
    pub fn label(self, v: f64) -> String {
        match self {
            Unit::Count => count_tick(v),
            Unit::Micros => match v {
                v if v >= 1e6 => format!("{} s", trim(v / 1e6)),
                v if v >= 1e3 => format!("{} ms", trim(v / 1e3)),
                v if v >= 1.0 || v == 0.0 => format!("{} µs", trim(v)),
                v => format!("{} ns", trim(v * 1e3)),
            },
            Unit::Seconds => match v {
                v if v >= 7200.0 => format!("{} h", trim(v / 3600.0)),
                v if v >= 120.0 => format!("{} min", trim(v / 60.0)),
                v => format!("{} s", trim(v)),
            },
            // a log axis of shares goes below 0.01%: keep its digits
            Unit::Percent if v > 0.0 && v < 0.01 => format!("{}%", (v * 1e6).round() / 1e6),
            Unit::Percent => format!("{}%", trim(v)),
        }
    }
}

/// 1k, 10k, 1.5M.
fn count_tick(v: f64) -> String {
    match v.abs() {
        a if a >= 1e9 => format!("{}G", trim(v / 1e9)),
        a if a >= 1e6 => format!("{}M", trim(v / 1e6)),
        a if a >= 1e3 => format!("{}k", trim(v / 1e3)),
        _ => trim(v),
    }
}

/// A number with at most 3 significant digits and no trailing zeros: 2.5, 10, 0.05.
fn trim(v: f64) -> String {
    let s = sig3(v);
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

#[derive(Debug, Clone)]
pub struct Axis {
    pub label: String,
    pub unit: Unit,
    pub log: bool,
    /// Force the axis to include zero (linear axes of counts: the eye reads heights).
    pub from_zero: bool,
    /// Named values at 0, 1, 2...: a setting swept (`4k`, `64k`; `uniform`, `zipf:1.2`)
    /// whose values are not a scale. Empty for a numeric axis.
    pub categories: Vec<String>,
}

impl Axis {
    pub fn new(label: &str, unit: Unit) -> Axis {
        Axis { label: label.to_string(), unit, log: false, from_zero: true, categories: Vec::new() }
    }

    pub fn log(label: &str, unit: Unit) -> Axis {
        Axis { label: label.to_string(), unit, log: true, from_zero: false, categories: Vec::new() }
    }

    /// An axis of named values, each at its index, ticked with its name.
    pub fn categories(label: &str, names: Vec<String>) -> Axis {
        Axis { label: label.to_string(), unit: Unit::Count, log: false, from_zero: false, categories: names }
    }

    /// The label of the tick at `v`: its category, or `v` in the axis's unit.
    fn tick(&self, v: f64) -> String {
        match self.categories.get(v.round().max(0.0) as usize) {
            Some(name) if !self.categories.is_empty() => name.clone(),
            _ => self.unit.label(v),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Style {
    Line,
    Dots,
    LineDots,
    /// A dashed line (a model, a fit, a p99 beside its p50).
    Dashed,
}

impl Style {
    /// Its name in the page (`data-style` of a legend entry).
    pub fn name(self) -> &'static str {
        match self {
            Style::Line => "line",
            Style::Dots => "dots",
            Style::LineDots => "line-dots",
            Style::Dashed => "dashed",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub style: Style,
    /// Index into the palette: series of one thing (a workload's p50 and p99) share it.
    pub colour: usize,
}

/// A shaded stretch of x with a label (a phase of the timeline).
#[derive(Debug, Clone)]
pub struct Band {
    pub from: f64,
    pub to: f64,
    pub label: String,
}

/// A shaded stretch of y with a label (a value band a series should stay in).
#[derive(Debug, Clone)]
pub struct Level {
    pub from: f64,
    pub to: f64,
    pub label: String,
}

/// A vertical line at x with a label (a mark, the knee, N*), and for what lasted (a
/// checkpoint) a light span to `until`, so its length reads against the series.
#[derive(Debug, Clone)]
pub struct Mark {
    pub x: f64,
    pub label: String,
    pub until: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct Chart {
    /// The SVG element's id, for tests and links.
    pub id: String,
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    pub levels: Vec<Level>,
    pub marks: Vec<Mark>,
    /// A line of text under the title (a fit's parameters).
    pub note: Option<String>,
    /// For time series, the bin width: a line breaks where its points are further
    /// apart (seconds nothing was measured in), instead of bridging them.
    pub step: Option<f64>,
}

/// Colours that stay apart for colour-blind readers and in print (Tableau 10).
const PALETTE: [&str; 10] =
    ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

/// The page's width (the report's body, less its padding): a chart is drawn at the
/// size it is read at, and scales down with the window.
const W: f64 = 1040.0;
/// Rows a chart's mark labels stack in before they share the last.
const MARK_ROWS: usize = 4;
/// The plot area's height; the chart grows above it with the rows of its legend.
const PLOT_H: f64 = 260.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 20.0;
const BOTTOM: f64 = 48.0;
/// A legend row's height, and the space a swatch takes before its name.
const LEGEND_ROW: f64 = 16.0;
/// A row of the note under the title.
const NOTE_ROW: f64 = 14.0;
const SWATCH: f64 = 26.0;

impl Chart {
    pub fn new(id: &str, title: &str, x: Axis, y: Axis) -> Chart {
        Chart {
            id: id.to_string(),
            title: title.to_string(),
            x,
            y,
            series: Vec::new(),
            bands: Vec::new(),
            levels: Vec::new(),
            marks: Vec::new(),
            note: None,
            step: None,
        }
    }

    /// Adds a series in the next colour.
    pub fn add(&mut self, name: &str, style: Style, points: Vec<(f64, f64)>) {
        let colour = self.series.len();
        self.add_coloured(name, style, points, colour);
    }

    /// Adds a series in colour `colour` of the palette.
    pub fn add_coloured(&mut self, name: &str, style: Style, points: Vec<(f64, f64)>, colour: usize) {
        self.series.push(Series { name: name.to_string(), points, style, colour });
    }

    /// True when no series has a point to draw.
    pub fn is_empty(&self) -> bool {
        self.series.iter().all(|s| s.points.is_empty())
    }

    /// The chart as an `<svg>` element.
    pub fn svg(&self) -> String {
        let f = self.frame();
        let mut s = String::new();
        self.write_head(&mut s, &f);
        self.write_bands(&mut s, &f);
        self.write_levels(&mut s, &f);
        self.write_axes(&mut s, &f);
        // the data, clipped to the plot area
        let _ = writeln!(
            s,
            "<clipPath id=\"{0}-plot\"><rect x=\"{LEFT}\" y=\"{1}\" width=\"{2}\" height=\"{3}\"/></clipPath>\n\
             <g clip-path=\"url(#{0}-plot)\">",
            esc(&self.id),
            f.top,
            f.pw,
            f.ph
        );
        for series in &self.series {
            self.write_series(&mut s, &f, series);
        }
        self.write_marks(&mut s, &f);
        s.push_str("</g>\n");
        self.write_legend(&mut s, &f);
        s.push_str("</svg>\n");
        s
    }
}

/// Where things go on a chart, worked out once before any of it is drawn.
struct Frame {
    xr: Range,
    yr: Range,
    /// The note under the title, wrapped to the plot's width.
    note: Vec<String>,
    legend_top: f64,
    /// The plot area's top edge, below the legend's rows.
    top: f64,
    pw: f64,
    ph: f64,
    /// The whole chart's height.
    h: f64,
}

impl Frame {
    /// A value on the x axis as a position on the page.
    fn px(&self, v: f64) -> f64 {
        LEFT + self.pw * self.xr.frac(v)
    }

    /// A value on the y axis as a position on the page.
    fn py(&self, v: f64) -> f64 {
        self.top + self.ph * (1.0 - self.yr.frac(v))
    }
}

/// True when an axis can place the value: finite, and above zero on a log scale.
fn usable(axis: &Axis, v: f64) -> bool {
    v.is_finite() && (!axis.log || v > 0.0)
}

impl Chart {
    /// The axes' ranges and the layout, from everything the chart will draw.
    /// The ranges take in bands, levels and marks too, so none falls off the plot.
    fn frame(&self) -> Frame {
        let xs: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .chain(self.bands.iter().flat_map(|b| [b.from, b.to]))
            .chain(self.marks.iter().map(|m| m.x))
            .filter(|&v| usable(&self.x, v))
            .collect();
        let ys: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .chain(self.levels.iter().flat_map(|l| [l.from, l.to]))
            .filter(|&v| usable(&self.y, v))
            .collect();
        let xr = Range::of(&self.x, &xs);
        let yr = Range::of(&self.y, &ys);
        // title, note, then the legend's rows, then the plot
        let note = self.note.as_deref().map(|n| wrap(n, ((W - LEFT - RIGHT) / 6.2) as usize)).unwrap_or_default();
        let legend_top = 36.0 + NOTE_ROW * note.len() as f64;
        let (_, rows) = self.legend_layout();
        let top = (legend_top + rows as f64 * LEGEND_ROW + 4.0).max(48.0);
        let (pw, ph) = (W - LEFT - RIGHT, PLOT_H);
        let h = top + ph + BOTTOM;
        Frame { xr, yr, note, legend_top, top, pw, ph, h }
    }

    /// The `<svg>` tag, the white background, the title and the note under it.
    fn write_head(&self, s: &mut String, f: &Frame) {
        let h = f.h;
        let _ = write!(
            s,
            "<svg id=\"{}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" \
             height=\"{h}\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\" aria-label=\"{}\">\n\
             <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
             <text class=\"title\" x=\"{LEFT}\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
            esc(&self.id),
            esc(&self.title),
            esc(&self.title)
        );
        for (i, line) in f.note.iter().enumerate() {
            let y = 34.0 + NOTE_ROW * i as f64;
            let _ = writeln!(s, "<text class=\"note\" x=\"{LEFT}\" y=\"{y}\" fill=\"#555\">{}</text>", esc(line));
        }
    }

    /// The phases, drawn first so they sit behind everything.
    /// They are shaded alternately so neighbours stay apart, and labelled at the top.
    fn write_bands(&self, s: &mut String, f: &Frame) {
        let (top, ph) = (f.top, f.ph);
        for (i, b) in self.bands.iter().enumerate() {
            let (x0, x1) = (f.px(b.from).max(LEFT), f.px(b.to).min(W - RIGHT));
            if x1 <= x0 {
                continue;
            }
            let fill = if i % 2 == 0 { "#f1f3f6" } else { "#e4e8ee" };
            let _ = writeln!(
                s,
                "<rect class=\"band\" x=\"{x0:.1}\" y=\"{top}\" width=\"{:.1}\" height=\"{ph}\" fill=\"{fill}\"/>\n\
                 <text x=\"{:.1}\" y=\"{:.1}\" fill=\"#666\" font-size=\"10\">{}</text>",
                x1 - x0,
                x0 + 3.0,
                top + 11.0,
                esc(&clip(&b.label, ((x1 - x0) / 6.0) as usize))
            );
        }
    }

    /// The value bands across the plot, labelled at their top right.
    fn write_levels(&self, s: &mut String, f: &Frame) {
        let (top, pw, ph) = (f.top, f.pw, f.ph);
        for l in &self.levels {
            let (y0, y1) = (f.py(l.to).max(top), f.py(l.from).min(top + ph));
            if y1 <= y0 {
                continue;
            }
            let _ = writeln!(
                s,
                "<rect class=\"level\" data-from=\"{}\" data-to=\"{}\" x=\"{LEFT}\" y=\"{y0:.1}\" width=\"{pw}\" \
                 height=\"{:.1}\" fill=\"#59a14f\" fill-opacity=\"0.15\"/>\n\
                 <text x=\"{:.1}\" y=\"{:.1}\" fill=\"#2e7d32\" font-size=\"10\" text-anchor=\"end\">{}</text>",
                l.from,
                l.to,
                y1 - y0,
                W - RIGHT - 3.0,
                y0 + 11.0,
                esc(&l.label)
            );
        }
    }

    /// The grid, the ticks, the two axis lines and their labels.
    fn write_axes(&self, s: &mut String, f: &Frame) {
        let (top, pw, ph, h) = (f.top, f.pw, f.ph, f.h);
        for v in f.yr.ticks() {
            let y = f.py(v);
            let _ = writeln!(
                s,
                "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\n\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                W - RIGHT,
                LEFT - 6.0,
                y + 4.0,
                self.y.tick(v)
            );
        }
        for v in f.xr.ticks() {
            let x = f.px(v);
            let label = self.x.tick(v);
            let _ = writeln!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#999\"/>\n\
                 <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                top + ph,
                top + ph + 4.0,
                top + ph + 16.0,
                esc(&label)
            );
        }
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{0:.1}\" x2=\"{1:.1}\" y2=\"{0:.1}\" stroke=\"#333\"/>\n\
             <line x1=\"{LEFT}\" y1=\"{top}\" x2=\"{LEFT}\" y2=\"{0:.1}\" stroke=\"#333\"/>\n\
             <text x=\"{2:.1}\" y=\"{3:.1}\" text-anchor=\"middle\">{4}</text>\n\
             <text x=\"14\" y=\"{5:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {5:.1})\">{6}</text>",
            top + ph,
            W - RIGHT,
            LEFT + pw / 2.0,
            h - 10.0,
            esc(&self.x.label),
            top + ph / 2.0,
            esc(&self.y.label)
        );
    }

    /// One series, as a group of lines or dots in its colour.
    /// Points an axis cannot place are left out, and a lone point is drawn as a dot.
    fn write_series(&self, s: &mut String, f: &Frame, series: &Series) {
        let colour = PALETTE[series.colour % PALETTE.len()];
        let pts: Vec<(f64, f64)> =
            series.points.iter().copied().filter(|&(x, y)| usable(&self.x, x) && usable(&self.y, y)).collect();
        // where it starts on x, for readers (and tests) of the page
        let from = pts.first().map(|p| p.0).unwrap_or(f64::NAN);
        let _ = write!(
            s,
            "<g class=\"series\" data-name=\"{}\" data-points=\"{}\" data-from=\"{from}\">",
            esc(&series.name),
            pts.len()
        );
        let style = series.style;
        if matches!(style, Style::Line | Style::LineDots | Style::Dashed) && pts.len() > 1 {
            let dash = if style == Style::Dashed { " stroke-dasharray=\"6 4\"" } else { "" };
            for run in self.segments(&pts) {
                let path: Vec<String> = run.iter().map(|&(x, y)| format!("{:.1},{:.1}", f.px(x), f.py(y))).collect();
                let _ = write!(
                    s,
                    "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.6\"{dash} points=\"{}\"/>",
                    path.join(" ")
                );
            }
        }
        if matches!(style, Style::Dots | Style::LineDots) || pts.len() == 1 {
            for &(x, y) in &pts {
                let _ = write!(s, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{colour}\"/>", f.px(x), f.py(y));
            }
        }
        s.push_str("</g>\n");
    }

    /// The marks, as dashed vertical lines with their labels. A label that would run
    /// into one drawn before it goes a row lower, so marks close together stay legible.
    fn write_marks(&self, s: &mut String, f: &Frame) {
        let (top, ph) = (f.top, f.ph);
        let mut taken: Vec<(f64, f64, usize)> = Vec::new();
        for m in &self.marks {
            let x = f.px(m.x);
            // its label on the side with room for it (about 5.5 px a character)
            let width = 5.5 * m.label.chars().count() as f64;
            let right_of = x + 3.0 + width <= W - RIGHT;
            let (from, to) = if right_of { (x + 3.0, x + 3.0 + width) } else { (x - 3.0 - width, x - 3.0) };
            let row = (0..MARK_ROWS)
                .find(|r| !taken.iter().any(|&(a, b, tr)| tr == *r && a < to && from < b))
                .unwrap_or(MARK_ROWS - 1);
            taken.push((from, to, row));
            if let Some(end) = m.until.map(|u| f.px(u).min(W - RIGHT)).filter(|end| *end >= x + 1.0) {
                let _ = writeln!(
                    s,
                    "<rect class=\"mark-span\" x=\"{x:.1}\" y=\"{top}\" width=\"{:.1}\" height=\"{ph:.1}\" \
                     fill=\"#555\" fill-opacity=\"0.1\"/>",
                    end - x
                );
            }
            let _ = writeln!(
                s,
                "<line class=\"mark\" x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#555\" stroke-dasharray=\"3 3\"/>\n\
                 <text x=\"{:.1}\" y=\"{:.1}\" fill=\"#333\" font-size=\"10\"{}>{}</text>",
                top + ph,
                if right_of { x + 3.0 } else { x - 3.0 },
                top + 24.0 + 12.0 * row as f64,
                if right_of { "" } else { " text-anchor=\"end\"" },
                esc(&m.label)
            );
        }
    }

    /// The legend, in rows above the plot, each swatch drawn as its series is.
    fn write_legend(&self, s: &mut String, f: &Frame) {
        let (legend, _) = self.legend_layout();
        for (x, row, series) in legend {
            let y = f.legend_top + row as f64 * LEGEND_ROW;
            let _ = writeln!(
                s,
                "<g class=\"legend\" data-name=\"{}\" data-style=\"{}\">{}<text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
                esc(&series.name),
                series.style.name(),
                swatch(series, x, y - 4.0),
                x + SWATCH,
                y,
                esc(&clip(&series.name, ((W - RIGHT - x - SWATCH) / 6.5) as usize))
            );
        }
    }
}

impl Chart {
    /// A line's points in runs that are drawn joined: all of them, or for a time
    /// series split where a step is missing.
    fn segments<'a>(&self, pts: &'a [(f64, f64)]) -> Vec<&'a [(f64, f64)]> {
        let Some(step) = self.step else {
            return vec![pts];
        };
        let mut out = Vec::new();
        let mut start = 0;
        for i in 1..pts.len() {
            if pts[i].0 - pts[i - 1].0 > step * 1.5 {
                out.push(&pts[start..i]);
                start = i;
            }
        }
        out.push(&pts[start..]);
        out
    }

    /// Where each legend entry goes: (x, row, series), rows wrapping at the chart's
    /// width, and how many rows. No legend for a single series (the title names it).
    fn legend_layout(&self) -> (Vec<(f64, usize, &Series)>, usize) {
        if self.series.len() < 2 {
            return (Vec::new(), 0);
        }
        let (mut x, mut row) = (LEFT, 0);
        let mut out = Vec::new();
        for series in &self.series {
            let width = SWATCH + 6.5 * series.name.chars().count() as f64 + 14.0;
            if x > LEFT && x + width > W - RIGHT {
                (x, row) = (LEFT, row + 1);
            }
            out.push((x, row, series));
            x += width;
        }
        (out, row + 1)
    }
}

/// A legend's swatch for a series at (x, y): a line as the series is drawn (solid,
/// dashed), a dot for dots, so p50 (solid) and p99 (dashed) of one colour differ here too.
fn swatch(series: &Series, x: f64, y: f64) -> String {
    let colour = PALETTE[series.colour % PALETTE.len()];
    let line = |dash: &str| {
        format!(
            "<line x1=\"{x:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{colour}\" stroke-width=\"2.5\"{dash}/>",
            x + SWATCH - 6.0
        )
    };
    let dot = format!("<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"{colour}\"/>", x + (SWATCH - 6.0) / 2.0);
    match series.style {
        Style::Line => line(""),
        Style::Dashed => line(" stroke-dasharray=\"6 4\""),
        Style::Dots => dot,
        Style::LineDots => line("") + &dot,
    }
}

/// An axis's extent and how to place and tick it.
struct Range {
    lo: f64,
    hi: f64,
    log: bool,
    /// Ticks at every whole step from the first above `lo` (a category axis); None: nice
    /// steps from `lo`.
    step: Option<f64>,
}

impl Range {
    fn of(axis: &Axis, values: &[f64]) -> Range {
        let (mut lo, mut hi) =
            values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        if !axis.categories.is_empty() {
            // each name on a tick, half a step of room at both ends
            return Range { lo: -0.5, hi: axis.categories.len() as f64 - 0.5, log: false, step: Some(1.0) };
        }
        if !lo.is_finite() {
            (lo, hi) = if axis.log { (1.0, 10.0) } else { (0.0, 1.0) };
        }
        if axis.log {
            // whole decades around the data
            let lo = 10f64.powf(lo.log10().floor());
            let hi = 10f64.powf(hi.log10().ceil()).max(lo * 10.0);
            return Range { lo, hi, log: true, step: None };
        }
        if axis.from_zero {
            lo = lo.min(0.0);
        }
        if hi <= lo {
            hi = lo + 1.0;
        }
        let step = nice_step((hi - lo) / 5.0);
        // time ends where the run did; other axes end on a tick
        let hi = if axis.unit == Unit::Seconds { hi } else { (hi / step).ceil() * step };
        Range { lo: (lo / step).floor() * step, hi, log: false, step: None }
    }

    fn frac(&self, v: f64) -> f64 {
        if self.log {
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let decades = (self.hi / self.lo).log10().round() as i32;
            let per: &[f64] = if decades <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
            let mut out = Vec::new();
            let mut d = self.lo;
            while d <= self.hi * 1.0001 {
                out.extend(per.iter().map(|m| m * d).filter(|&v| v <= self.hi * 1.0001));
                d *= 10.0;
            }
            return out;
        }
        if let Some(step) = self.step {
            let first = (self.lo / step).ceil() * step;
            return (0..).map(|i| first + step * i as f64).take_while(|&v| v <= self.hi).collect();
        }
        let step = nice_step((self.hi - self.lo) / 5.0);
        let n = ((self.hi - self.lo) / step + 1e-9).floor() as usize;
        (0..=n).map(|i| self.lo + step * i as f64).collect()
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * p).find(|&s| s >= raw * 0.999).unwrap_or(10.0 * p)
}

/// Text in lines of at most `chars` characters, broken between words.
fn wrap(text: &str, chars: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= chars => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

fn clip(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        text.to_string()
    } else {
        text.chars().take(chars.saturating_sub(1)).collect::<String>() + "…"
    }
}

/// Escapes text for XML and HTML.
pub fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_read_like_a_person_writes_them() {
        assert_eq!(Unit::Count.label(10_000.0), "10k");
        assert_eq!(Unit::Count.label(1_500_000.0), "1.5M");
        assert_eq!(Unit::Count.label(250.0), "250");
        assert_eq!(Unit::Micros.label(100.0), "100 µs");
        assert_eq!(Unit::Micros.label(2500.0), "2.5 ms");
        assert_eq!(Unit::Micros.label(1e6), "1 s");
        assert_eq!(Unit::Micros.label(10.0), "10 µs");
        assert_eq!(Unit::Seconds.label(30.0), "30 s");
        assert_eq!(Unit::Seconds.label(600.0), "10 min");
        assert_eq!(Unit::Percent.label(12.5), "12.5%");
        assert_eq!(Unit::Percent.label(10f64.powi(-3)), "0.001%");
    }

    #[test]
    fn axes_get_round_ticks_that_cover_the_data() {
        let r = Range::of(&Axis::new("IOPS", Unit::Count), &[1234.0, 48_213.0]);
        assert_eq!((r.lo, r.hi), (0.0, 50_000.0));
        assert_eq!(r.ticks(), vec![0.0, 10_000.0, 20_000.0, 30_000.0, 40_000.0, 50_000.0]);
        let l = Range::of(&Axis::log("latency", Unit::Micros), &[42.0, 3100.0]);
        assert_eq!((l.lo, l.hi), (10.0, 10_000.0));
        assert_eq!(l.ticks(), vec![10.0, 100.0, 1000.0, 10_000.0]);
        assert!((l.frac(100.0) - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn a_category_axis_ticks_each_name_once() {
        let mut c = Chart::new(
            "sweep",
            "IOPS by block size",
            Axis::categories("block size", vec!["4k".into(), "64k".into(), "1m".into()]),
            Axis::new("IOPS", Unit::Count),
        );
        c.add("IOPS", Style::LineDots, vec![(0.0, 900.0), (1.0, 400.0), (2.0, 30.0)]);
        let r = Range::of(&c.x, &[0.0, 2.0]);
        assert_eq!(r.ticks(), vec![0.0, 1.0, 2.0]);
        let svg = c.svg();
        for name in [">4k<", ">64k<", ">1m<"] {
            assert_eq!(svg.matches(name).count(), 1, "{name} in {svg}");
        }
    }

    #[test]
    fn a_chart_draws_every_series_and_escapes_text() {
        let mut c =
            Chart::new("iops", "IOPS <per second>", Axis::new("time", Unit::Seconds), Axis::new("IOPS", Unit::Count));
        c.add("a&b", Style::Line, vec![(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]);
        c.add("b", Style::Dots, vec![(0.0, 2.0)]);
        c.bands.push(Band { from: 0.0, to: 1.0, label: "before".into() });
        let svg = c.svg();
        assert!(svg.contains("IOPS &lt;per second&gt;") && svg.contains("data-name=\"a&amp;b\" data-points=\"3\""));
        assert!(svg.contains("data-name=\"b\" data-points=\"1\"") && svg.contains("class=\"band\""));
        assert!(!c.is_empty());
    }

    #[test]
    fn legends_wrap_and_draw_each_series_as_it_is_drawn() {
        let mut c = Chart::new("lat", "Latency", Axis::new("time", Unit::Seconds), Axis::log("latency", Unit::Micros));
        let names: Vec<String> = (0..8).map(|i| format!("oltp-data-{i} write")).collect();
        for (i, name) in names.iter().enumerate() {
            c.add_coloured(&format!("{name} p50"), Style::Line, vec![(0.0, 100.0), (1.0, 120.0)], i);
            c.add_coloured(&format!("{name} p99"), Style::Dashed, vec![(0.0, 900.0), (1.0, 990.0)], i);
        }
        let (layout, rows) = c.legend_layout();
        assert!(rows > 1, "16 entries do not fit one row");
        assert_eq!(layout.len(), 16);
        for (x, _, s) in &layout {
            let width = SWATCH + 6.5 * s.name.chars().count() as f64;
            assert!(x + width <= W - RIGHT, "{} runs off the chart", s.name);
        }
        let svg = c.svg();
        for name in &names {
            assert!(svg.contains(&format!("class=\"legend\" data-name=\"{name} p50\" data-style=\"line\"")), "{name}");
            let p99 = format!("class=\"legend\" data-name=\"{name} p99\" data-style=\"dashed\"><line");
            let at = svg.find(&p99).unwrap_or_else(|| panic!("{name} p99"));
            let entry = svg[at..].split("</g>").next().unwrap();
            assert!(entry.contains("stroke-dasharray"), "p99's swatch is dashed: {entry}");
        }
        // the plot starts below the legend's last row
        let top = 36.0 + rows as f64 * LEGEND_ROW + 4.0;
        assert!(svg.contains(&format!("<rect x=\"{LEFT}\" y=\"{top}\"")), "plot not below the legend");
    }

    #[test]
    fn long_notes_wrap_and_mark_labels_stay_inside() {
        let mut c = Chart::new("usl", "USL", Axis::new("N", Unit::Count), Axis::new("IOPS", Unit::Count));
        c.add("measured", Style::Dots, vec![(1.0, 10.0), (16.0, 850.0)]);
        c.note = Some("no meaningful fit: sigma and kappa are both 0, at their bound: ".repeat(4));
        c.marks.push(Mark { x: 16.0, label: "knee (max IOPS/latency) at 855 IOPS".into(), until: None });
        c.marks.push(Mark { x: 1.0, label: "you are here".into(), until: None });
        let svg = c.svg();
        assert_eq!(svg.matches("class=\"note\"").count(), 2, "a 250-character note in two lines");
        assert!(wrap(c.note.as_deref().unwrap(), 158).iter().all(|l| l.chars().count() <= 158));
        // a mark at the right edge is labelled to its left, one at the left to its right
        assert!(svg.contains("text-anchor=\"end\">knee (max IOPS/latency)"), "{svg}");
        assert!(!svg.contains("text-anchor=\"end\">you are here"));
    }

    #[test]
    fn a_time_series_breaks_where_seconds_are_missing() {
        let mut c = Chart::new("cpu", "CPU", Axis::new("time", Unit::Seconds), Axis::new("CPU", Unit::Percent));
        c.add("usr", Style::Line, vec![(0.5, 70.0), (1.5, 71.0), (3.5, 72.0), (4.5, 70.0)]);
        assert_eq!(c.svg().matches("<polyline").count(), 1, "not a time series: joined");
        c.step = Some(1.0);
        assert_eq!(c.svg().matches("<polyline").count(), 2, "second 2 is missing: two lines");
    }

    #[test]
    fn a_mark_that_lasted_spans_its_seconds() {
        let mut c = Chart::new("t", "T", Axis::new("time", Unit::Seconds), Axis::new("TPS", Unit::Count));
        c.add("tps", Style::Line, vec![(0.0, 10.0), (100.0, 12.0)]);
        c.marks.push(Mark { x: 20.0, label: "checkpoint".into(), until: Some(45.0) });
        c.marks.push(Mark { x: 60.0, label: "mark".into(), until: None });
        let svg = c.svg();
        assert_eq!(svg.matches("class=\"mark-span\"").count(), 1, "{svg}");
        let span = svg.split("class=\"mark-span\"").nth(1).unwrap();
        let width: f64 = span.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        // 25 of the axis's 100 s (the plot may pad its range: a quarter or a little less)
        let plot = W - RIGHT - LEFT;
        assert!(width > 0.2 * plot && width <= 0.25 * plot + 1.0, "{width} of {plot}");
    }
}
