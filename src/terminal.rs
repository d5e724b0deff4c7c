//! Lines for the person at the terminal while a run's live view is drawn (progress,
//! warnings): printed above its bars, so they neither break the view nor are drawn over.
//! The view (`report/status_line.rs`) attaches its bars here while it draws; code of any
//! layer that prints a line during a run says it through [`say`], which needs no more of
//! fathom than this leaf.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The live view's bars while it draws them on a terminal.
static VIEW: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// Whether a [`Meter`] may draw a bar (not under `--quiet`).
static BARS: AtomicBool = AtomicBool::new(true);

/// How often a [`Meter`] says how far it is when it draws no bar.
const LINE_EVERY: Duration = Duration::from_secs(5);

/// Prints `line` to stderr, above the live view's bars when one is drawn, wrapped at
/// [`prose_width`].
pub fn say(line: &str) {
    let wrapped = wrap(line, prose_width());
    let wrapped = wrapped.trim_end_matches('\n');
    let view = VIEW.lock().unwrap_or_else(|e| e.into_inner());
    match view.as_ref() {
        Some(bars) if bars.println(wrapped).is_ok() => {}
        _ => eprint(format!("{wrapped}\n")),
    }
}

/// The width lines must keep to: `COLUMNS` when set (a pipe told its width), else the
/// terminal's on stdout or stderr; None when neither says.
pub fn columns() -> Option<usize> {
    let set = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()).filter(|n| *n > 0);
    set.or_else(|| terminal_columns(libc::STDOUT_FILENO)).or_else(|| terminal_columns(libc::STDERR_FILENO))
}

/// How wide sentences (answers, notes, warnings, progress) wrap: at [`columns`], else
/// never, one line each, for grep.
pub fn prose_width() -> usize {
    columns().unwrap_or(usize::MAX)
}

/// The width of the terminal on `fd`, if it is one.
fn terminal_columns(fd: libc::c_int) -> Option<usize> {
    // SAFETY: winsize is plain integers, for which all zeroes is a valid value.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes one winsize into the struct it is given.
    let ok = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0).then_some(size.ws_col as usize)
}

/// Runs `work`, and says `line` (if any) should it take longer than `after`: a wait the
/// person at the terminal would otherwise take for a hang.
pub fn said_if_slow<T>(after: std::time::Duration, line: Option<String>, work: impl FnOnce() -> T) -> T {
    std::thread::scope(|scope| {
        let (done, waiting) = std::sync::mpsc::channel::<()>();
        if let Some(line) = line {
            scope.spawn(move || {
                if waiting.recv_timeout(after) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                    say(&line);
                }
            });
        }
        let out = work();
        drop(done);
        out
    })
}

/// Writes `text` to stdout. fathom ignores SIGPIPE, because a program it feeds (psql
/// taking COPY rows, a coprocess) may end before its input does, and that must be an
/// error to handle, not fathom's death. So a reader that went away (`fathom runs |
/// head`) shows up here as a failed write, and what is left unprinted is dropped, as
/// ripgrep does.
pub fn print(text: impl AsRef<[u8]>) {
    let _ = std::io::stdout().lock().write_all(text.as_ref());
}

/// Writes `text` to stderr; a reader that went away is dropped, as in [`print`].
pub fn eprint(text: impl AsRef<[u8]>) {
    let _ = std::io::stderr().lock().write_all(text.as_ref());
}

/// The live view starts drawing `bars`: lines said from now on go above them.
pub fn attach(bars: MultiProgress) {
    *VIEW.lock().unwrap_or_else(|e| e.into_inner()) = Some(bars);
}

/// Whether [`Meter`]s draw their bars on a terminal (`--quiet` says not).
pub fn draw_meters(draw: bool) {
    BARS.store(draw, Ordering::Relaxed);
}

/// How far a long step is (a database's load), told as it goes, as pgbench `-i` and
/// HammerDB tell theirs: a bar within the terminal's width when stderr is a terminal,
/// else a line every few seconds through the caller's `say` (a log, an agent's
/// controller). Its work is counted from any thread ([`Meter::add`]); the thread that
/// waits on the work calls [`Meter::tick`], so `say` needs no more than that thread.
pub struct Meter {
    what: String,
    total: u64,
    done: AtomicU64,
    bar: Option<ProgressBar>,
    started: Instant,
    said: Mutex<Instant>,
}

impl Meter {
    /// A meter of `total` units of work (rows, say), `what` naming the step.
    pub fn new(what: &str, total: u64) -> Meter {
        let draws = BARS.load(Ordering::Relaxed) && std::io::stderr().is_terminal();
        let bar = draws.then(|| {
            let width = columns().unwrap_or(80).saturating_sub(what.chars().count() + 16).clamp(10, 40);
            let style = format!("{{prefix}} [{{bar:{width}}}] {{percent:>3}}% {{elapsed:>4}}");
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(4));
            bar.set_style(ProgressStyle::with_template(&style).unwrap_or_else(|_| ProgressStyle::default_bar()));
            bar.set_prefix(what.to_string());
            bar
        });
        let now = Instant::now();
        Meter {
            what: what.to_string(),
            total: total.max(1),
            done: AtomicU64::new(0),
            bar,
            started: now,
            said: Mutex::new(now),
        }
    }

    /// `n` more units done.
    pub fn add(&self, n: u64) {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        if let Some(bar) = &self.bar {
            bar.set_position(done.min(self.total));
        }
    }

    /// Says how far the work is through `say` when no bar shows it and a few seconds
    /// have passed since it last said.
    pub fn tick(&self, say: &dyn Fn(&str)) {
        let mut said = self.said.lock().unwrap_or_else(|e| e.into_inner());
        if self.bar.is_none() && said.elapsed() >= LINE_EVERY {
            *said = Instant::now();
            say(&self.line());
        }
    }

    /// Where the work is, in words: `what: 45%, 12 s`.
    fn line(&self) -> String {
        let percent = (self.done.load(Ordering::Relaxed) * 100 / self.total).min(100);
        format!("{}: {percent}%, {:.0} s", self.what, self.started.elapsed().as_secs_f64())
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Prose wrapped at spaces to `width`, later lines indented two spaces more than the
/// first; each line ends with a newline. A word longer than a line (a path) is left
/// whole, on a line of its own.
pub fn wrap(text: &str, width: usize) -> String {
    let indent = text.len() - text.trim_start().len();
    let more = " ".repeat(indent + 2);
    let mut out = String::new();
    let mut current = text[..indent].to_string();
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let fits = current.chars().count() + usize::from(!empty) + word.chars().count() <= width;
        if !empty && !fits {
            out.push_str(&current);
            out.push('\n');
            current = more.clone();
            empty = true;
        }
        if !empty {
            current.push(' ');
        }
        current.push_str(word);
        empty = false;
    }
    out.push_str(&current);
    out.push('\n');
    out
}

/// The live view stopped drawing: lines go straight to stderr again.
pub fn detach() {
    *VIEW.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_meter_without_a_bar_says_how_far_it_is_at_most_every_few_seconds() {
        draw_meters(false);
        let meter = Meter::new("loading", 400);
        let said = Mutex::new(Vec::new());
        let say = |l: &str| said.lock().unwrap().push(l.to_string());
        meter.add(100);
        meter.tick(&say);
        assert!(said.lock().unwrap().is_empty(), "said before its first few seconds");
        *meter.said.lock().unwrap() -= LINE_EVERY;
        meter.add(50);
        meter.tick(&say);
        meter.tick(&say);
        let said = said.into_inner().unwrap();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("loading: 37%, "), "{said:?}");
    }

    #[test]
    fn prose_wraps_at_words_with_its_continuation_indented() {
        assert_eq!(wrap("  one two three four", 10), "  one two\n    three\n    four\n");
        assert_eq!(wrap("short", 80), "short\n");
        // a word longer than any line is never cut
        assert_eq!(wrap("of /a/very/long/path ok", 10), "of\n  /a/very/long/path\n  ok\n");
    }
}
