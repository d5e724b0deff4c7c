//! The seam an importer plugs into: a format other tools write (a fio job file, an
//! X-Ray scenario directory) that fathom runs as the user wrote it, by mapping it to a
//! scenario's YAML for the one scenario loader. `run`, `lint` and `convert` reach every
//! importer through this trait and the list in `list.rs`.

use crate::error::Result;
use crate::scenario::Override;
use std::path::{Path, PathBuf};

/// A format fathom imports.
pub trait Importer: Sync {
    /// What its inputs are, for messages: `fio job file`.
    fn kind(&self) -> &'static str;

    /// How `lint` introduces what each input became: `run on fathom's engine as`.
    fn runs_as(&self) -> &'static str;

    /// What its scenario's origin says after the path, so an error the loader finds in
    /// the mapped YAML is told apart from one in the file itself.
    fn origin(&self) -> &'static str;

    /// Whether several `--target`s replace its input's own targets in order (one always
    /// replaces them all).
    fn takes_several_targets(&self) -> bool {
        false
    }

    /// Whether `path` is one of its inputs (a file or directory of its format).
    fn recognises(&self, path: &Path) -> Result<bool>;

    /// The scenario `path` maps to, with what the command line gives.
    fn import(&self, path: &Path, given: &Given) -> Result<Imported>;
}

/// What the command line gives an importer.
pub struct Given<'a> {
    /// `--target`: one replaces every workload's target; several, the file's own in order.
    pub targets: &'a [PathBuf],
    /// `--set`: those naming the format's own variables shape the mapping.
    pub sets: &'a [Override],
    /// `--hosts`: the number of targets of each host of the inventory, in order.
    pub hosts: Option<&'a [usize]>,
    /// Write one `--target` into the scenario's text (`convert`: the printed scenario
    /// runs without the command line that gave it), rather than leave it to `--target`.
    pub target_in_text: bool,
}

/// A scenario an importer mapped an input to.
pub struct Imported {
    /// The scenario's name.
    pub name: String,
    /// The scenario, as YAML the scenario loader reads.
    pub yaml: String,
    /// What each part of the input became, one line each (`lint` shows it).
    pub described: String,
}

/// The text of a scenario or fio job file (which one is known only once it is read),
/// bounded as every input is ([`crate::nofollow::read_input`]).
pub fn read_text(path: &Path) -> Result<String> {
    crate::nofollow::read_input(path, "scenario or fio job file", crate::scenario::MAX_BYTES)
}
