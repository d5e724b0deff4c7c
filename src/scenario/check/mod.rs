//! From a scenario file as written to the checked model, by topic: [`checker`] holds
//! what every check shares (where a key was written, one value picked over the
//! defaults), the others one topic each.

mod checker;
mod io;
mod measurable;
mod programs;
mod result_views;
mod scenario;
mod timeline;

pub use checker::Checker;
