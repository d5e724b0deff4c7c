//! Every importer, in the order a path is offered to them: the one list a new format
//! joins.

use super::seam::Importer;

pub const IMPORTERS: &[&dyn Importer] = &[&super::xray_dir::XrayDir, &super::fio_job_file::FioJobFile];
