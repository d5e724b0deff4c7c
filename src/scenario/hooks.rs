//! The hooks file (`--hooks FILE`): the user's command for each hook name a scenario's
//! `hook:` steps name. A scenario says what happens (`nodes.PowerOff`); how it is done
//! at one site (ipmitool, a cloud CLI, a script) is the site's, so it lives outside the
//! scenario. The commands are the user's own and may hold credentials: the run records
//! a hook's name, arguments and exit status, never the file or its commands.

use super::Scenario;
use super::steps::{Action, Command};
use super::yaml;
use crate::error::{Error, Result};
use indexmap::IndexMap;
use serde::Deserialize;
use std::path::Path;

/// Where a scenario's hooks are explained, for the message that asks for them.
const DOCS: &str = "docs/scenarios.md#hooks";

/// The hooks file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HooksFile {
    hooks: IndexMap<String, String>,
}

/// Each hook name's command, as the hooks file gives it.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    commands: IndexMap<String, String>,
}

impl Hooks {
    /// Reads the hooks file at `path`; errors are located (`FILE:LINE: key: message`).
    pub fn load(path: &Path) -> Result<Hooks> {
        let origin = path.display().to_string();
        let text = crate::nofollow::read_input(path, "hooks file", super::MAX_BYTES)?;
        Hooks::parse(&origin, &text)
    }

    pub fn parse(origin: &str, text: &str) -> Result<Hooks> {
        let (file, lines): (HooksFile, _) = yaml::read(origin, text)?;
        for (name, command) in &file.hooks {
            let at = || lines.line_of(&["hooks", name]).map(|l| format!(":{l}")).unwrap_or_default();
            if command.trim().is_empty() {
                return Err(Error::input(format!("{origin}{}: hooks.{name}: an empty command", at())));
            }
            // no program can be given one: the shell would see the command cut at it
            if command.contains('\0') {
                return Err(Error::input(format!("{origin}{}: hooks.{name}: holds a NUL character", at())));
            }
        }
        Ok(Hooks { commands: file.hooks })
    }

    /// The command for hook `name`.
    pub fn command(&self, name: &str) -> Option<&str> {
        self.commands.get(name).map(String::as_str)
    }
}

/// Refuses (bad input) a scenario whose `hook:` steps name hooks `hooks` has no command
/// for, naming each missing one once, before anything runs.
pub fn check(scenario: &Scenario, hooks: Option<&Hooks>) -> Result<()> {
    let mut missing: Vec<&str> = Vec::new();
    for step in &scenario.steps {
        if let Action::Command(c) = &step.action
            && let Command::Hook { name, .. } = &c.command
            && hooks.and_then(|h| h.command(name)).is_none()
            && !missing.contains(&name.as_str())
        {
            missing.push(name);
        }
    }
    if missing.is_empty() {
        return reach_databases(scenario, hooks);
    }
    let how = match hooks {
        None => "give them with --hooks FILE",
        Some(_) => "add them to the --hooks file",
    };
    Err(Error::input(format!("{}: needs hooks for: {}; {how} (see {DOCS})", scenario.origin, missing.join(", "))))
}

/// Refuses a hook whose command uses a `$FATHOM_DSN` variable no database workload of
/// `scenario` provides, naming the hook but not its command (which may hold credentials).
fn reach_databases(scenario: &Scenario, hooks: Option<&Hooks>) -> Result<()> {
    let databases = super::step_env::databases(&scenario.workloads);
    for step in &scenario.steps {
        if let Action::Command(c) = &step.action
            && let Command::Hook { name, .. } = &c.command
            && let Some(why) =
                hooks.and_then(|h| h.command(name)).and_then(|c| super::step_env::unprovided(c, &databases))
        {
            return Err(Error::input(format!("{}: hook {name}: its command {why}", scenario.origin)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Source;

    #[test]
    fn a_scenario_is_refused_with_every_missing_hook_named_once() {
        let text = "name: h\nworkloads:\n  a: {target: /tmp, rw: read, duration: 1s}\ntimeline:\n  \
                    - hook: nodes.PowerOff\n  - start: a\n  - hook: nodes.PowerOn\n  - hook: nodes.PowerOff\n";
        let s = Scenario::load(&Source { origin: "s.yaml".into(), text }, &[]).unwrap();
        let err = check(&s, None).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(
            err.to_string().contains("needs hooks for: nodes.PowerOff, nodes.PowerOn; give them with --hooks FILE"),
            "{err}"
        );
        let hooks = Hooks::parse("h.yaml", "hooks:\n  nodes.PowerOff: 'true'\n").unwrap();
        let err = check(&s, Some(&hooks)).unwrap_err().to_string();
        assert!(err.contains("needs hooks for: nodes.PowerOn;"), "{err}");
        let hooks = Hooks::parse("h.yaml", "hooks:\n  nodes.PowerOff: 'true'\n  nodes.PowerOn: ./on.sh\n").unwrap();
        assert!(check(&s, Some(&hooks)).is_ok());
        let hooks = Hooks::parse("h.yaml", "hooks:\n  nodes.PowerOff: psql -d \"$FATHOM_DSN\"\n  nodes.PowerOn: x\n");
        let err = check(&s, Some(&hooks.unwrap())).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let err = err.to_string();
        assert!(err.starts_with("s.yaml: hook nodes.PowerOff: its command uses `$FATHOM_DSN`"), "{err}");
        assert!(!err.contains("psql"), "the command is not quoted: {err}");
    }

    #[test]
    fn hooks_file_mistakes_are_located() {
        let err = Hooks::parse("h.yaml", "hooks:\n  a: 'true'\n  b: ''\n").unwrap_err().to_string();
        assert_eq!(err, "h.yaml:3: hooks.b: an empty command");
        let err = Hooks::parse("h.yaml", "hook:\n  a: x\n").unwrap_err().to_string();
        assert!(err.starts_with("h.yaml:1"), "{err}");
        let err = Hooks::parse("h.yaml", "hooks:\n  a: [x]\n").unwrap_err().to_string();
        assert!(err.starts_with("h.yaml:2: hooks.a"), "{err}");
        let err = Hooks::parse("h.yaml", "hooks:\n  a: 'true'\n  b: \"echo a\\u0000b\"\n").unwrap_err().to_string();
        assert_eq!(err, "h.yaml:3: hooks.b: holds a NUL character");
    }
}
