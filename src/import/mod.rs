//! Formats other tools write, run as their users wrote them: each an [`seam::Importer`]
//! in a file of its own (`fio.rs`, `xray.rs`), listed once (`list.rs`), and [`open`],
//! which finds what a command names: a scenario file, an imported format or a built-in.

pub mod fio;
pub mod list;
pub mod open;
pub mod seam;
pub mod xray;
