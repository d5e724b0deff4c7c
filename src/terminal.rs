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

/// Prints `line` to stderr, above the live view's bars when one is drawn.
pub fn say(line: &str) {
    let view = VIEW.lock().unwrap_or_else(|e| e.into_inner());
    match view.as_ref() {
        Some(bars) if bars.println(line).is_ok() => {}
        _ => eprint(format!("{line}\n")),
    }
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

/// The live view stopped drawing: lines go straight to stderr again.
pub fn detach() {
    *VIEW.lock().unwrap_or_else(|e| e.into_inner()) = None;
}
