//! The scenario a command names: a file (a scenario, or a fio job file read as one), an
//! X-Ray scenario directory, a built-in, or the quickstart, with the
//! command line's `--target`, `--engine` and `--set` applied. `fathom run`, `sweep` and
//! `lint` open theirs here, so the three read a name the same way.

use super::{EngineKind, Kind, Override, Scenario, Source, builtin, fio_job, xray};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Reads and checks the scenario named on the command line (a file, a built-in, or the
/// quickstart) with `--target`, `--engine` and `--set` applied; `on_hosts` when an
/// inventory is given (`--hosts`: [`Scenario::load_on_hosts`]; an X-Ray scenario is
/// placed on its hosts, whose numbers of targets `hosts` gives in order). Several `--target`s are for a fio job file only: its own
/// targets, in order. Also says whether it is a built-in.
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
    let (origin, text, is_builtin) = read_scenario(name, targets, sets, hosts)?;
    let target = match targets {
        [] => None,
        [one] => Some(one.as_path()),
        // a job file's own targets were replaced in its text
        _ if origin.ends_with(JOB_FILE) => None,
        _ => {
            return Err(Error::input(format!(
                "{name}: several --target are for a fio job file, whose files they replace in order; a scenario takes one (or `target: [A, B]` in the file)"
            )));
        }
    };
    let sets = applied_sets(sets, target, engine)?;
    let source = Source { origin, text: &text };
    let scenario =
        if hosts.is_some() { Scenario::load_on_hosts(&source, &sets)? } else { Scenario::load(&source, &sets)? };
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
    for (w, section) in scenario.workloads.iter_mut().zip(verbatim.sections) {
        w.engine = Some(EngineKind::Fio);
        w.jobs = section.numjobs;
        w.kind = Kind::FioSection(section.job);
    }
    scenario.text = text;
    Ok(Some(scenario))
}

/// How a job file's scenario names its origin: errors the loader finds are in the
/// scenario's keys, which `fathom lint FILE` relates to the options.
const JOB_FILE: &str = " (as a scenario)";

/// How an X-Ray scenario's fathom scenario names its origin (`fathom convert DIR` prints
/// the text those lines are in).
const XRAY: &str = " (X-Ray, as a scenario)";

/// Refuses the scenario a job file or an X-Ray directory `name` converts to (`yaml`)
/// when the loader would refuse it, in the words `run` would use, so `fathom convert`
/// never prints a scenario that does not run. `on_hosts`: as [`load_scenario`]'s `hosts`.
pub fn check_converted(name: &str, yaml: &str, from_xray: bool, on_hosts: bool) -> Result<()> {
    let origin = format!("{name}{}", if from_xray { XRAY } else { JOB_FILE });
    let source = Source { origin, text: yaml };
    match on_hosts {
        true => Scenario::load_on_hosts(&source, &[]).map(drop),
        false => Scenario::load(&source, &[]).map(drop),
    }
}

/// The `--set`s a scenario is loaded with: the user's, then `--target` and `--engine`
/// as the sets they stand for (agents on other hosts load it with the same).
pub fn applied_sets(sets: &[Override], target: Option<&Path>, engine: Option<&str>) -> Result<Vec<Override>> {
    let mut sets = sets.to_vec();
    if let Some(t) = target {
        sets.push(format!("target={}", t.display()).parse()?);
    }
    if let Some(e) = engine {
        sets.push(format!("engine={e}").parse()?);
    }
    Ok(sets)
}

/// Reads a scenario file (a fio job file as the scenario it maps to, on `targets`; an
/// X-Ray directory as its mapping with `sets` on hosts of `hosts` targets each), or a built-in by name.
/// Returns (origin, text, is_builtin).
fn read_scenario(
    name: &str,
    targets: &[PathBuf],
    sets: &[Override],
    hosts: Option<&[usize]>,
) -> Result<(String, String, bool)> {
    let path = std::path::Path::new(name);
    if xray::is_scenario_dir(path) {
        let yaml = xray::map_dir(path, sets, hosts)?.yaml()?;
        return Ok((format!("{name}{XRAY}"), yaml, false));
    }
    if path.exists() {
        let text = read_text(path)?;
        if !fio_job::is_job_file(path, &text) {
            return Ok((name.to_string(), text, false));
        }
        let yaml = fio_job::to_scenario_yaml(path, &text, targets)?;
        return Ok((format!("{name}{JOB_FILE}"), yaml, false));
    }
    match builtin::find(name) {
        Some(text) => Ok((format!("builtin:{name}"), text.to_string(), true)),
        None => Err(Error::input(format!(
            "{name}: no such scenario file, and no built-in scenario of that name (see `fathom scenarios`)"
        ))),
    }
}

/// The mapping of the fio job file `name` names on `targets` (`--target`), or `None`
/// when it names a scenario.
pub fn job_file(name: &str, targets: &[PathBuf]) -> Result<Option<fio_job::Mapping>> {
    let path = Path::new(name);
    if !path.is_file() {
        return Ok(None);
    }
    let text = read_text(path)?;
    match fio_job::is_job_file(path, &text) {
        true => fio_job::map_file(path, &text, targets).map(Some),
        false => Ok(None),
    }
}

/// The mapping of the X-Ray scenario directory `name` names (with `sets`, on hosts of
/// `hosts` targets each), or `None` when it names something else.
pub fn xray_dir(name: &str, sets: &[Override], hosts: Option<&[usize]>) -> Result<Option<xray::Mapping>> {
    let path = Path::new(name);
    match xray::is_scenario_dir(path) {
        true => xray::map_dir(path, sets, hosts).map(Some),
        false => Ok(None),
    }
}

/// The text of a scenario or fio job file (which one is known only once it is read),
/// bounded as every input is ([`crate::nofollow::read_input`]).
fn read_text(path: &Path) -> Result<String> {
    crate::nofollow::read_input(path, "scenario or fio job file", super::MAX_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_and_engine_follow_the_users_sets() {
        let user: Vec<Override> = vec!["iodepth=4".parse().unwrap()];
        let sets = applied_sets(&user, Some(Path::new("/tmp/t")), Some("psync")).unwrap();
        let texts: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        assert_eq!(texts, ["iodepth=4", "target=/tmp/t", "engine=psync"]);
    }

    #[test]
    fn an_unknown_name_says_where_to_look() {
        let err = load_scenario(Some("no-such-scenario-here"), &[], None, &[], None).expect_err("refused");
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("no built-in scenario of that name (see `fathom scenarios`)"), "{err}");
    }
}
