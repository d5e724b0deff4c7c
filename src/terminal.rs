//! Lines for the person at the terminal while a run's live view is drawn (progress,
//! warnings): printed above its bars, so they neither break the view nor are drawn over.
//! The view (`report/status_line.rs`) attaches its bars here while it draws; code of any
//! layer that prints a line during a run says it through [`say`], which needs no more of
//! fathom than this leaf.

use indicatif::MultiProgress;
use std::io::Write;
use std::sync::Mutex;

/// The live view's bars while it draws them on a terminal.
static VIEW: Mutex<Option<MultiProgress>> = Mutex::new(None);

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
    use super::wrap;

    #[test]
    fn prose_wraps_at_words_with_its_continuation_indented() {
        assert_eq!(wrap("  one two three four", 10), "  one two\n    three\n    four\n");
        assert_eq!(wrap("short", 80), "short\n");
        // a word longer than any line is never cut
        assert_eq!(wrap("of /a/very/long/path ok", 10), "of\n  /a/very/long/path\n  ok\n");
    }
}
