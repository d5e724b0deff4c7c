//! The scenario a command names: a scenario file, an input an importer reads (a fio job
//! file, an X-Ray scenario directory), a built-in, or the quickstart, with the command
//! line's `--target`, `--engine` and `--set` applied. `fathom run`, `sweep`, `lint` and
//! `convert` open theirs here, so they read a name the same way.

use super::fio_job;
use super::list::IMPORTERS;
use super::seam::{Given, Imported, Importer, read_text};
use crate::error::{Error, Result};
use crate::scenario::{EngineKind, Kind, Override, Scenario, Source, applied_sets, builtin};
use std::path::{Path, PathBuf};

/// Reads and checks the scenario named on the command line (a file, a built-in, or the
/// quickstart) with `--target`, `--engine` and `--set` applied; `on_hosts` when an
/// inventory is given (`--hosts`: [`Scenario::load_on_hosts`]; an X-Ray scenario is
/// placed on its hosts, whose numbers of targets `hosts` gives in order). Several
/// `--target`s are for a fio job file only: its own targets, in order. Also says whether
/// it is a built-in.
pub fn load_scenario(
    scenario: Option<&str>,
    targets: &[PathBuf],
    engine: Option<&str>,
    sets: &[Override],
    hosts: Option<&[usize]>,
) -> Result<(Scenario, bool)> {
    let name = scenario.unwrap_or(builtin::DEFAULT);
    if engine == Some("fio")
        && let Some(scenario) = run_by_fio(name, targets, sets)?
    {
        return Ok((scenario, false));
    }
    let (origin, text, is_builtin, imported, several) = read_scenario(name, targets, sets, hosts)?;
    let target = match targets {
        [] => None,
        [one] => Some(one.as_path()),
        // an importer that takes several replaced the file's own in its text
        _ if several => None,
        _ => {
            return Err(Error::input(format!(
                "{name}: several --target are for a fio job file, whose files they replace in order; a scenario takes one (or `target: [A, B]` in the file)"
            )));
        }
    };
    let sets = applied_sets(sets, target, engine)?;
    let source = Source { origin, text: &text };
    // the files a scenario names are read beside it; a built-in's (given by `--set`), in
    // the current directory
    let file = match Path::new(name).is_file() && !is_builtin {
        true => Path::new(name),
        false => Path::new("scenario"),
    };
    let mut scenario = Scenario::load_file(&source, file, &sets, hosts.is_some())?;
    scenario.imported = imported;
    Ok((scenario, is_builtin))
}

/// A fio job file run by fio itself (`--engine fio`): one workload per section, each
/// the section as written with its targets and `--set`s rewritten
/// ([`fio_job::verbatim`]), timed by the mapping's timeline. Its stored text is the
/// file's own. `None` when `name` is not a job file.
fn run_by_fio(name: &str, targets: &[PathBuf], sets: &[Override]) -> Result<Option<Scenario>> {
    let path = Path::new(name);
    if !path.is_file() {
        return Ok(None);
    }
    let text = read_text(path)?;
    if !fio_job::is_job_file(path, &text) {
        return Ok(None);
    }
    let verbatim = fio_job::verbatim::rewrite(path, &text, targets, sets)?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "job".into());
    let yaml = fio_job::verbatim::skeleton_yaml(&stem, &verbatim);
    let source = Source { origin: format!("{name} (its sections run by fio)"), text: &yaml };
    let mut scenario = Scenario::load(&source, &[])?;
    scenario.imported = Some("fio job file");
    for (w, section) in scenario.workloads.iter_mut().zip(verbatim.sections) {
        w.engine = Some(EngineKind::Fio);
        w.workers = section.numjobs;
        w.kind = Kind::FioSection(section.job);
    }
    scenario.text = text;
    Ok(Some(scenario))
}

/// The importer that reads `name`, and the scenario it maps it to; `None` when no
/// importer recognises it (a scenario file, or a built-in's name).
pub fn import(name: &str, given: &Given) -> Result<Option<(&'static dyn Importer, Imported)>> {
    let path = Path::new(name);
    for importer in IMPORTERS {
        if importer.recognises(path)? {
            return Ok(Some((*importer, importer.import(path, given)?)));
        }
    }
    Ok(None)
}

/// Refuses the scenario an importer mapped `name` to (`yaml`) when the loader would
/// refuse it, in the words `run` would use, so `fathom convert` never prints a scenario
/// that does not run. `on_hosts`: as [`load_scenario`]'s `hosts`.
pub fn check_converted(name: &str, importer: &dyn Importer, yaml: &str, on_hosts: bool) -> Result<()> {
    let source = Source { origin: format!("{name}{}", importer.origin()), text: yaml };
    match on_hosts {
        true => Scenario::load_on_hosts(&source, &[]).map(drop),
        false => Scenario::load(&source, &[]).map(drop),
    }
}

/// Reads a scenario file, an imported input as the scenario its importer maps it to (on
/// `targets`, with `sets`, on hosts of `hosts` targets each), or a built-in by name.
/// Returns (origin, text, is_builtin, the kind of file it was imported from, whether
/// several `targets` were taken).
fn read_scenario(
    name: &str,
    targets: &[PathBuf],
    sets: &[Override],
    hosts: Option<&[usize]>,
) -> Result<(String, String, bool, Option<&'static str>, bool)> {
    let given = Given { targets, sets, hosts, target_in_text: false };
    if let Some((importer, imported)) = import(name, &given)? {
        let origin = format!("{name}{}", importer.origin());
        return Ok((origin, imported.yaml, false, Some(importer.kind()), importer.takes_several_targets()));
    }
    if Path::new(name).exists() {
        return Ok((name.to_string(), read_text(Path::new(name))?, false, None, false));
    }
    match builtin::find(name) {
        Some(text) => Ok((format!("builtin:{name}"), text.to_string(), true, None, false)),
        None => Err(Error::input(format!(
            "{name}: no such scenario file, and no built-in scenario of that name{} (see `fathom scenarios`)",
            builtin::hint(name)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_name_says_where_to_look() {
        let err = load_scenario(Some("no-such-scenario-here"), &[], None, &[], None).expect_err("refused");
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("no built-in scenario of that name (see `fathom scenarios`)"), "{err}");
    }
}
