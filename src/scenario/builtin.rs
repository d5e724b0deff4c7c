//! Scenarios compiled into the binary: `fathom scenarios` lists them and `fathom run
//! NAME` runs one, so a newcomer needs no file to get a first result.

/// (name, YAML text) of every built-in scenario.
const BUILTIN: &[(&str, &str)] = &[
    ("quickstart", include_str!("builtin/quickstart.yaml")),
    ("four-corners", include_str!("builtin/four-corners.yaml")),
    ("you-are-here", include_str!("builtin/you-are-here.yaml")),
    ("db-colocation", include_str!("builtin/db-colocation.yaml")),
    ("ilm-warmup", include_str!("builtin/ilm-warmup.yaml")),
    ("restore-ingest", include_str!("builtin/restore-ingest.yaml")),
    ("vioperf", include_str!("builtin/vioperf.yaml")),
    ("seek-sweep", include_str!("builtin/seek-sweep.yaml")),
    ("hotspot", include_str!("builtin/hotspot.yaml")),
    ("pgbench-clients", include_str!("builtin/pgbench-clients.yaml")),
    ("commit-latency", include_str!("builtin/commit-latency.yaml")),
    ("log-disk", include_str!("builtin/log-disk.yaml")),
    ("pgbench-ab", include_str!("builtin/pgbench-ab.yaml")),
    ("hugepages", include_str!("builtin/hugepages.yaml")),
    ("net-streams", include_str!("builtin/net-streams.yaml")),
    ("tpcc", include_str!("builtin/tpcc.yaml")),
    ("tpcc-clients", include_str!("builtin/tpcc-clients.yaml")),
    ("sysbench-threads", include_str!("builtin/sysbench-threads.yaml")),
    ("db-engines", include_str!("builtin/db-engines.yaml")),
    ("checkpoint-tuning", include_str!("builtin/checkpoint-tuning.yaml")),
    ("tpch", include_str!("builtin/tpch.yaml")),
    ("db-colocation-sql", include_str!("builtin/db-colocation-sql.yaml")),
];

/// The built-in scenario run by a bare `fathom run`.
pub const DEFAULT: &str = "quickstart";

/// The text of the built-in scenario `name`.
pub fn find(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, text)| *text)
}

/// ` (did you mean `NAME`?)` for the built-in scenario nearest to `name`, or nothing.
pub fn hint(name: &str) -> String {
    crate::suggest::hint(name, BUILTIN.iter().map(|(n, _)| *n))
}

/// Every built-in scenario with its one-line description.
pub fn list() -> Vec<(&'static str, String)> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            let text = super::vars::substitute(name, text, &mut Vec::new()).map(|(t, _)| t).unwrap_or_default();
            let description = super::yaml::from_str::<super::file::ScenarioFile>(name, &text)
                .ok()
                .and_then(|f| f.description)
                .unwrap_or_default();
            (*name, description)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Scenario, Source};

    #[test]
    fn every_builtin_loads_and_has_a_description() {
        for (name, description) in list() {
            let text = find(name).unwrap();
            let s = Scenario::load(&Source { origin: format!("builtin:{name}"), text }, &[]).unwrap();
            assert_eq!(s.name, name);
            assert!(!description.is_empty(), "{name} needs a description");
            // each answers its question in one line, from its expectations
            assert!(!s.expect.is_empty(), "{name} needs expectations that answer its question");
            let question = crate::scenario::yaml::from_str::<crate::scenario::file::ScenarioFile>(
                name,
                &crate::scenario::vars::substitute(name, text, &mut Vec::new()).unwrap().0,
            )
            .unwrap()
            .question;
            assert!(question.is_some_and(|q| q.ends_with('?')), "{name} needs a question");
        }
    }

    #[test]
    fn the_tpcc_builtins_run_on_mariadb_when_set() {
        use crate::scenario::program::dbms::Dbms;
        use crate::scenario::program::tpcc::{Engine, Tpcc};
        for name in ["tpcc", "tpcc-clients"] {
            let sets = ["dbms=mariadb".parse().unwrap()];
            let s = Scenario::load(&Source { origin: format!("builtin:{name}"), text: find(name).unwrap() }, &sets);
            for w in s.unwrap().workloads {
                let t = w.program().unwrap().get::<Tpcc>().unwrap();
                assert_eq!((t.dbms, t.engine), (Dbms::Mariadb, Engine::Sysbench), "{name}");
            }
        }
    }
}
