//! The names of the variables a command step (`exec`, `hook`) is handed, and the check
//! that a command asks only for servers the scenario has. The names are made here, for
//! the runner that sets them and for the check at load that reads them in commands, so
//! the two cannot drift apart.

use super::model::{Kind, Workload};

/// How a command reaches the first database workload's server.
pub const DSN: &str = "FATHOM_DSN";

/// `KEY` as part of an environment variable's name: upper case, anything but letters and
/// digits as `_`.
pub fn env_name(key: &str) -> String {
    key.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect()
}

/// The variable that reaches database workload `workload`'s server.
pub fn dsn_of(workload: &str) -> String {
    format!("{DSN}_{}", env_name(workload))
}

/// The workloads whose server a command can reach (a program that runs a database).
pub fn databases(workloads: &[Workload]) -> Vec<&str> {
    let serves = |w: &&Workload| matches!(&w.kind, Kind::Program(p) if p.serves_database());
    workloads.iter().filter(serves).map(|w| w.name.as_str()).collect()
}

/// The first `$FATHOM_DSN...` variable `command` uses that no workload of `databases`
/// provides, with why: such a command would run with the variable unset and act on
/// whatever server libpq reaches by default, or fail mid-run.
pub fn unprovided(command: &str, databases: &[&str]) -> Option<String> {
    let provided: Vec<String> = databases.iter().map(|w| dsn_of(w)).collect();
    let used = dsn_variables(command);
    // `$FATHOM_DSN` is the first database's, there when any is
    let missing = used.into_iter().find(|v| (v != DSN || databases.is_empty()) && !provided.contains(v))?;
    Some(match databases.is_empty() {
        true => format!(
            "uses `${missing}`, which reaches a database workload's server, and this scenario has no \
             database workload (pgbench, tpcc or tpch)"
        ),
        false => format!(
            "uses `${missing}`, which names no database workload of this scenario (it has {})",
            provided.iter().map(|p| format!("`${p}`")).collect::<Vec<_>>().join(", ")
        ),
    })
}

/// The `FATHOM_DSN` variables `command` expands, as `$NAME` or `${NAME}`.
fn dsn_variables(command: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in command.match_indices('$') {
        let rest = command[at + 1..].strip_prefix('{').unwrap_or(&command[at + 1..]);
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if name == DSN || name.starts_with(&format!("{DSN}_")) {
            found.push(name);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_upper_case_with_underscores() {
        assert_eq!(env_name("vm-group.name"), "VM_GROUP_NAME");
        assert_eq!(dsn_of("db-1"), "FATHOM_DSN_DB_1");
    }

    #[test]
    fn variables_are_found_in_both_forms_and_judged_against_the_databases() {
        assert_eq!(
            dsn_variables("psql -d \"$FATHOM_DSN\" && x ${FATHOM_DSN_TIGHT}-$HOME"),
            ["FATHOM_DSN", "FATHOM_DSN_TIGHT"]
        );
        assert!(dsn_variables("echo $FATHOM_DSNX $PATH FATHOM_DSN").is_empty());
        let none = unprovided("psql -d $FATHOM_DSN", &[]).unwrap();
        assert!(none.contains("`$FATHOM_DSN`") && none.contains("no database workload"), "{none}");
        assert_eq!(unprovided("psql -d $FATHOM_DSN -c 'x'", &["db-1"]), None);
        assert_eq!(unprovided("psql -d ${FATHOM_DSN_DB_1}", &["db-1"]), None);
        let other = unprovided("psql -d $FATHOM_DSN_SPREAD", &["tight"]).unwrap();
        assert!(other.contains("`$FATHOM_DSN_SPREAD`") && other.contains("`$FATHOM_DSN_TIGHT`"), "{other}");
        assert_eq!(unprovided("echo no server", &[]), None);
    }
}
