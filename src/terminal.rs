//! Lines for the person at the terminal while a run's live view is drawn (progress,
//! warnings): printed above its bars, so they neither break the view nor are drawn over.
//! The view (`report/status_line.rs`) attaches its bars here while it draws; code of any
//! layer that prints a line during a run says it through [`say`], which needs no more of
//! fathom than this leaf.

use indicatif::MultiProgress;
use std::sync::Mutex;

/// The live view's bars while it draws them on a terminal.
static VIEW: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// Prints `line` to stderr, above the live view's bars when one is drawn.
pub fn say(line: &str) {
    let view = VIEW.lock().unwrap_or_else(|e| e.into_inner());
    match view.as_ref() {
        Some(bars) if bars.println(line).is_ok() => {}
        _ => eprintln!("{line}"),
    }
}

/// The live view starts drawing `bars`: lines said from now on go above them.
pub fn attach(bars: MultiProgress) {
    *VIEW.lock().unwrap_or_else(|e| e.into_inner()) = Some(bars);
}

/// The live view stopped drawing: lines go straight to stderr again.
pub fn detach() {
    *VIEW.lock().unwrap_or_else(|e| e.into_inner()) = None;
}
