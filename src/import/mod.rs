//! Formats other tools write, run as their users wrote them: each an [`seam::Importer`]
//! in a file of its own (`fio_job_file.rs`, `xray_dir.rs`) beside the folder that reads and maps its format (`fio_job/`, `xray/`), listed once (`list.rs`), and [`open`],
//! which finds what a command names: a scenario file, an imported format or a built-in.

pub mod fio_job;
pub mod fio_job_file;
pub mod list;
pub mod open;
pub mod seam;
pub mod xray;
pub mod xray_dir;
