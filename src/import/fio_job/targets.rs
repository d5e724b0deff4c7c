//! `--target` on a job file: one target replaces every job's files (as `--set target=`
//! does for a scenario); several map the file's own targets to them in order, so an
//! X-Ray file naming `/dev/sdb` and `/dev/sdc` runs on the devices given.

use super::mapping::Mapping;
use super::values::list;
use crate::error::{Error, Result};
use std::path::PathBuf;

/// The file's targets, each once, in the order its jobs name them.
fn places(mapping: &Mapping) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in mapping.workloads.iter().flat_map(|w| &w.targets) {
        if !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

/// Replaces the file's targets with `given` (`--target`, in order); none or one leaves
/// them to the scenario loader's `--target`, which replaces them all.
pub fn retarget(mapping: &mut Mapping, file: &str, given: &[PathBuf]) -> Result<()> {
    if given.len() < 2 {
        return Ok(());
    }
    let places = places(mapping);
    if places.len() != given.len() {
        return Err(Error::input(format!(
            "{file}: {} --target given, but its jobs name {} ({}): give one --target for all, or one for each in that order",
            given.len(),
            crate::metrics::format::counted(places.len() as u64, "target"),
            places.join(", ")
        )));
    }
    for w in &mut mapping.workloads {
        let new: Vec<String> = w
            .targets
            .iter()
            .map(|t| given[places.iter().position(|p| p == t).expect("a place of its own")].display().to_string())
            .collect();
        let shown = list(&new);
        for key in w.keys.iter_mut().filter(|(k, _)| *k == "target") {
            key.1 = shown.clone();
        }
        w.became.push(("--target".into(), format!("target: {shown} (in place of {})", w.targets.join(", "))));
        w.targets = new;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::fio_job::{mapping::map, reader::read};
    use std::path::Path;

    const TWO: &str = "[global]\nruntime=1\ntime_based\n[a]\nfilename=/dev/sdb\n[b]\nfilename=/dev/sdc:/dev/sdb\n";

    #[test]
    fn several_targets_replace_the_files_in_order() {
        let mut m = map(&read(Path::new("t.fio"), TWO).unwrap()).unwrap();
        retarget(&mut m, "t.fio", &[PathBuf::from("/x/one"), PathBuf::from("/x/two")]).unwrap();
        assert_eq!(m.workloads[0].targets, ["/x/one"]);
        assert_eq!(m.workloads[1].targets, ["/x/two", "/x/one"]);
        assert!(m.yaml("t").contains(r#"target: ["/x/two", "/x/one"]"#), "{}", m.yaml("t"));
        let err =
            retarget(&mut m, "t.fio", &[PathBuf::from("/a"), PathBuf::from("/b"), PathBuf::from("/c")]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("3 --target given, but its jobs name 2 targets (/x/one, /x/two)"), "{err}");
    }
}
