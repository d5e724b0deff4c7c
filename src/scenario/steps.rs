//! The timeline: what happens when. A step as written has one action key (`start`,
//! `stop`, `wait`, `wait_for`, `ramp`, `prefill`, `zero`, `exec`, `hook`, `wait_until`,
//! `mark`) and the options that go with it; [`resolve`] checks it and turns it into an
//! [`Action`] that names workloads by index.

use super::auth::{AuthFile, BasicAuthFile, TlsFile};
use super::limits::{MAX_RUN, MAX_WORKERS};
use super::units::Span;
use super::yaml::Value;
use crate::suggest;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One timeline step as written.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepFile {
    /// Run the step at this offset from the start of the run (after the previous step
    /// otherwise).
    pub at: Option<Span>,
    /// Name the phase this step opens (default: the running workloads).
    pub phase: Option<String>,
    pub start: Option<String>,
    pub stop: Option<String>,
    pub wait: Option<Span>,
    pub wait_for: Option<String>,
    pub ramp: Option<String>,
    pub prefill: Option<String>,
    pub zero: Option<String>,
    pub exec: Option<String>,
    /// Run the command the hooks file (`--hooks`) gives this name.
    pub hook: Option<String>,
    pub wait_until: Option<ProbeFile>,
    pub mark: Option<String>,
    // options
    pub duration: Option<Span>,
    pub stagger: Option<Span>,
    #[serde(rename = "async")]
    pub asynchronous: Option<bool>,
    pub add: Option<u32>,
    /// A ramp that adds whole hosts of a workload placed with `hosts:` (nodes joining).
    pub add_host: Option<u32>,
    pub every: Option<Span>,
    pub until: Option<u32>,
    pub timeout: Option<Span>,
    /// How many times a periodic `exec` or `hook` (`every`) runs.
    pub times: Option<u32>,
    /// A hook's arguments, handed to its command as `FATHOM_ARG_<KEY>`.
    pub args: Option<IndexMap<String, Value>>,
    /// The hosts of the inventory a hook acts on (`FATHOM_HOSTS`): as a workload's `hosts:`.
    #[serde(default, deserialize_with = "super::file::one_or_many")]
    pub hosts: Option<Vec<String>>,
}

/// `wait_until:` as written: one probe and how long to keep trying; an `http` probe's
/// credentials and trust as `observe: prometheus:` takes them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeFile {
    pub command: Option<String>,
    pub tcp: Option<String>,
    pub http: Option<String>,
    pub timeout: Option<Span>,
    pub interval: Option<Span>,
    pub bearer_token_file: Option<String>,
    pub bearer_token_env: Option<String>,
    /// Written only to be refused: a token would be stored with the scenario.
    pub bearer_token: Option<String>,
    pub basic_auth: Option<BasicAuthFile>,
    pub tls_config: Option<TlsFile>,
}

impl ProbeFile {
    /// Its credentials' and trust's keys, taken out to be checked (`auth::check`).
    fn take_auth(&mut self) -> AuthFile {
        AuthFile {
            bearer_token_file: self.bearer_token_file.take(),
            bearer_token_env: self.bearer_token_env.take(),
            bearer_token: self.bearer_token.take(),
            basic_auth: self.basic_auth.take(),
            tls_config: self.tls_config.take(),
        }
    }
}

/// A resolved step.
#[derive(Debug, Clone)]
pub struct Step {
    pub at: Option<Duration>,
    /// Label of the phase the step opens, when given.
    pub phase: Option<String>,
    pub action: Action,
}

#[derive(Debug, Clone)]
pub enum Action {
    /// Start a workload's workers (`stagger` apart) and, unless `wait` is false
    /// (`async: true`), wait until it ends.
    Start {
        workload: usize,
        stagger: Duration,
        wait: bool,
    },
    Stop {
        workload: usize,
    },
    Wait(Duration),
    /// Wait until the workload has ended, or `timeout` has passed (then go on while it
    /// runs: X-Ray's `workload.Wait` with `timeout_secs`).
    WaitFor {
        workload: usize,
        timeout: Option<Duration>,
    },
    /// Start `add` workers now and `add` more every `every` until `until` run; each
    /// addition opens a phase. The workload ends `every` after the last addition.
    Ramp {
        workload: usize,
        add: u32,
        every: Duration,
        until: u32,
        wait: bool,
        /// `add_host`: `add` and `until` count hosts (each `per_host` workers) until the
        /// scenario is resolved, then workers.
        by_host: bool,
    },
    /// Write the workload's working set with its data content (`zero`: with zeros).
    Fill {
        workload: usize,
        zero: bool,
    },
    /// Run a command (`exec`, `hook`); see [`CommandStep`].
    Command(CommandStep),
    WaitUntil {
        probe: Probe,
        timeout: Duration,
        interval: Duration,
    },
    Mark(String),
}

/// A command the timeline runs, `timeout` at most each time: in the timeline (which
/// waits for it), or with `repeat` on a thread of its own while the timeline goes on.
#[derive(Debug, Clone)]
pub struct CommandStep {
    pub command: Command,
    pub timeout: Duration,
    pub repeat: Option<Repeat>,
}

/// A command that runs in the background: `times` runs, `every` apart, the first at
/// once (`async: true`: one run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Repeat {
    pub every: Duration,
    pub times: u32,
}

/// What a command step runs.
#[derive(Debug, Clone)]
pub enum Command {
    /// The command as written in the scenario.
    Exec(String),
    /// The command the hooks file gives `name`, told its arguments and hosts in its
    /// environment: the scenario names what to do, the user's site says how.
    Hook {
        name: String,
        /// (key, value as text) in the order written.
        args: Vec<(String, String)>,
        /// The inventory's hosts it acts on (None: all of them).
        hosts: Option<Vec<String>>,
    },
}

impl std::fmt::Display for Command {
    /// How a run names it (its event's label, progress lines): a hook by its name and
    /// arguments, never the command the hooks file gives it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::Exec(c) => write!(f, "exec `{c}`"),
            Command::Hook { name, args, .. } => {
                write!(f, "hook {name}")?;
                // an argument under a secret-like key is shown masked, whatever its form
                let shown =
                    |k: &str, v: &str| if crate::secrets::secret_key(k) { "***".to_string() } else { v.to_string() };
                let args: Vec<String> = args.iter().map(|(k, v)| format!("{k}={}", shown(k, v))).collect();
                if !args.is_empty() {
                    write!(f, " ({})", args.join(", "))?;
                }
                Ok(())
            }
        }
    }
}

/// What `wait_until` polls until it succeeds.
#[derive(Debug, Clone)]
pub enum Probe {
    /// A shell command that exits 0.
    Command(String),
    /// A TCP connection to HOST:PORT that is accepted.
    Tcp(String),
    /// An HTTP GET of a URL that answers 2xx, with its credentials and trust.
    Http { url: String, auth: crate::http::Auth },
}

impl std::fmt::Display for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Probe::Command(c) => write!(f, "command `{c}`"),
            Probe::Tcp(a) => write!(f, "tcp {a}"),
            Probe::Http { url, .. } => write!(f, "http {url}"),
        }
    }
}

/// Default time an `exec` may take, and `wait_until` may keep trying.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// An error at a key of step `i`: (key, message).
pub type StepError = (String, String);

/// Checks step `raw`, resolving workload names among `names` (in the scenario's order).
pub fn resolve(raw: &StepFile, names: &[&str]) -> Result<Step, StepError> {
    let action = the_action(raw)?;
    let workload = |key: &str, name: &Option<String>| -> Result<usize, StepError> {
        let name = name.as_deref().unwrap_or_default();
        names.iter().position(|n| *n == name).ok_or_else(|| (key.to_string(), suggest::no_workload(name, names)))
    };
    options_apply(raw, action)?;
    let wait = !raw.asynchronous.unwrap_or(false);
    let action = match action {
        "start" => Action::Start {
            workload: workload("start", &raw.start)?,
            stagger: raw.stagger.map(|s| s.0).unwrap_or_default(),
            wait,
        },
        "stop" => Action::Stop { workload: workload("stop", &raw.stop)? },
        "wait" => Action::Wait(raw.wait.map(|s| s.0).unwrap_or_default()),
        "wait_for" => {
            Action::WaitFor { workload: workload("wait_for", &raw.wait_for)?, timeout: raw.timeout.map(|t| t.0) }
        }
        "ramp" => ramp(raw, workload("ramp", &raw.ramp)?, wait)?,
        "prefill" => Action::Fill { workload: workload("prefill", &raw.prefill)?, zero: false },
        "zero" => Action::Fill { workload: workload("zero", &raw.zero)?, zero: true },
        "exec" | "hook" => command(raw, action, wait)?,
        "wait_until" => wait_until(raw)?,
        _ => Action::Mark(raw.mark.clone().unwrap_or_default()),
    };
    Ok(Step { at: raw.at.map(|a| a.0), phase: raw.phase.clone(), action })
}

/// The one action key step `raw` sets.
/// A step with none or several is refused, at the second one it sets.
fn the_action(raw: &StepFile) -> Result<&'static str, StepError> {
    let actions: Vec<&str> = [
        ("start", raw.start.is_some()),
        ("stop", raw.stop.is_some()),
        ("wait", raw.wait.is_some()),
        ("wait_for", raw.wait_for.is_some()),
        ("ramp", raw.ramp.is_some()),
        ("prefill", raw.prefill.is_some()),
        ("zero", raw.zero.is_some()),
        ("exec", raw.exec.is_some()),
        ("hook", raw.hook.is_some()),
        ("wait_until", raw.wait_until.is_some()),
        ("mark", raw.mark.is_some()),
    ]
    .into_iter()
    .filter(|a| a.1)
    .map(|a| a.0)
    .collect();
    match actions.as_slice() {
        [one] => Ok(*one),
        [] => Err((
            String::new(),
            "a step needs one action: start, stop, wait, wait_for, ramp, prefill, zero, exec, hook, wait_until or mark"
                .into(),
        )),
        [first, second, ..] => {
            Err((second.to_string(), format!("one action per step: this step already has `{first}`")))
        }
    }
}

/// Refuses an option that `action` does not take.
/// Options that only some actions take would otherwise be ignored without a word.
fn options_apply(raw: &StepFile, action: &str) -> Result<(), StepError> {
    let allowed: &[&str] = match action {
        "start" => &["duration", "stagger", "async"],
        "ramp" => &["add", "every", "until", "async"],
        "exec" => &["timeout", "every", "times", "async"],
        "hook" => &["args", "hosts", "timeout", "every", "times", "async"],
        "wait_for" => &["timeout"],
        _ => &[],
    };
    let given = [
        ("duration", raw.duration.is_some()),
        ("stagger", raw.stagger.is_some()),
        ("async", raw.asynchronous.is_some()),
        ("add", raw.add.is_some()),
        ("every", raw.every.is_some()),
        ("until", raw.until.is_some()),
        ("timeout", raw.timeout.is_some()),
        ("times", raw.times.is_some()),
        ("args", raw.args.is_some()),
        ("hosts", raw.hosts.is_some()),
    ];
    if let Some((key, _)) = given.iter().find(|(k, set)| *set && !allowed.contains(k)) {
        let hint = if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") };
        return Err((key.to_string(), format!("does not apply to `{action}` (its options: {hint})")));
    }
    Ok(())
}

/// A `ramp` of workload `w`: `add` workers (or `add_host` hosts) every `every` until
/// `until`. Its steps must fit in the longest run.
fn ramp(raw: &StepFile, w: usize, wait: bool) -> Result<Action, StepError> {
    if raw.add.is_some() && raw.add_host.is_some() {
        return Err(("add_host".into(), "set `add` (workers) or `add_host` (hosts), not both".into()));
    }
    let by_host = raw.add_host.is_some();
    let add = raw.add.or(raw.add_host).unwrap_or(1);
    let every = raw.every.ok_or(("ramp".to_string(), "needs `every`: how long each step runs".to_string()))?;
    let until = raw.until.ok_or(("ramp".to_string(), "needs `until`: the number of workers to reach".to_string()))?;
    if add == 0 || until < add {
        return Err(("until".into(), format!("must be at least `add` ({add}), and `add` at least 1")));
    }
    if until > MAX_WORKERS {
        let what = if by_host { "hosts" } else { "workers" };
        return Err(("until".into(), format!("{until} {what}: a workload has at most {MAX_WORKERS} workers")));
    }
    if every.0.is_zero() || every.0.subsec_nanos() != 0 {
        return Err(("every".into(), format!("{every} must be a whole number of seconds, at least 1s")));
    }
    let steps = until.div_ceil(add);
    if every.0 * steps > MAX_RUN {
        return Err((
            "every".into(),
            format!(
                "{every} x {steps} steps is {} h: a workload runs at most {} days",
                (every.0 * steps).as_secs() / 3600,
                MAX_RUN.as_secs() / 86400
            ),
        ));
    }
    Ok(Action::Ramp { workload: w, add, every: every.0, until, wait, by_host })
}

/// An `exec` or `hook` step (`action`), with its timeout and repeats.
/// An asynchronous command that sets no repeats runs once.
fn command(raw: &StepFile, action: &str, wait: bool) -> Result<Action, StepError> {
    let command = if action == "exec" {
        let command = raw.exec.clone().unwrap_or_default();
        if command.trim().is_empty() {
            return Err(("exec".into(), "an empty command".into()));
        }
        Command::Exec(command)
    } else {
        hook(raw)?
    };
    let repeat = match (raw.every, raw.times) {
        (Some(every), Some(times)) if times >= 1 => {
            if every.0.is_zero() {
                return Err(("every".into(), "must be above 0".into()));
            }
            Some(Repeat { every: every.0, times })
        }
        (Some(_), Some(_)) => return Err(("times".into(), "must be at least 1".into())),
        (Some(_), None) => return Err(("every".into(), "needs `times`: how many runs".into())),
        (None, Some(_)) => return Err(("times".into(), "needs `every`: how long between runs".into())),
        (None, None) => (!wait).then_some(Repeat { every: Duration::ZERO, times: 1 }),
    };
    Ok(Action::Command(CommandStep { command, timeout: raw.timeout.map(|t| t.0).unwrap_or(DEFAULT_TIMEOUT), repeat }))
}

/// A `hook` and its `args`, each argument as the text its command is given.
fn hook(raw: &StepFile) -> Result<Command, StepError> {
    let name = raw.hook.clone().unwrap_or_default();
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(("hook".into(), format!("{name:?} is not a hook name (e.g. nodes.PowerOff)")));
    }
    let mut args = Vec::new();
    for (key, value) in raw.args.iter().flatten() {
        let text = arg_text(value).ok_or_else(|| {
            (format!("args.{key}"), "expected a value or a list of values, not a mapping".to_string())
        })?;
        args.push((key.clone(), text));
    }
    Ok(Command::Hook { name, args, hosts: raw.hosts.clone() })
}

/// A `wait_until` step: exactly one probe, tried every `interval` until `timeout`.
/// A URL holds no credentials: an `http` probe's are kept where its keys say, and only
/// an `http` probe takes those keys.
fn wait_until(raw: &StepFile) -> Result<Action, StepError> {
    let mut p = raw.wait_until.clone().unwrap_or_default();
    let auth = crate::scenario::auth::check(p.take_auth()).map_err(|(key, msg)| (format!("wait_until.{key}"), msg))?;
    if auth != crate::http::Auth::default() && p.http.is_none() {
        return Err(("wait_until".into(), "credentials and `tls_config` apply to an `http` probe only".into()));
    }
    let probe = match (p.command, p.tcp, p.http) {
        (Some(c), None, None) => Probe::Command(c),
        (None, Some(a), None) => {
            if !a.contains(':') {
                return Err(("wait_until.tcp".into(), format!("`{a}` is not HOST:PORT")));
            }
            Probe::Tcp(a)
        }
        (None, None, Some(u)) => {
            if !u.starts_with("http://") && !u.starts_with("https://") {
                return Err(("wait_until.http".into(), format!("`{u}`: expected an http:// or https:// URL")));
            }
            if crate::secrets::url_has_credentials(&u) {
                return Err(("wait_until.http".into(), crate::secrets::URL_CREDENTIALS.into()));
            }
            Probe::Http { url: u, auth }
        }
        _ => return Err(("wait_until".into(), "needs exactly one of `command`, `tcp` or `http`".into())),
    };
    let interval = p.interval.map(|i| i.0).unwrap_or(Duration::from_secs(1));
    if interval.is_zero() {
        return Err(("wait_until.interval".into(), "must be above 0".into()));
    }
    Ok(Action::WaitUntil { probe, timeout: p.timeout.map(|t| t.0).unwrap_or(DEFAULT_TIMEOUT), interval })
}

/// A hook argument as the text its command is given: a value as written, a list's
/// values joined by commas; `None` for a mapping.
fn arg_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => Some(String::new()),
        Value::Sequence(items) => items.iter().map(Value::as_text).collect::<Option<Vec<_>>>().map(|v| v.join(",")),
        other => other.as_text(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(yaml: &str) -> Result<Step, StepError> {
        resolve(&crate::scenario::yaml::from_str("s.yaml", yaml).unwrap(), &["oltp", "dss"])
    }

    #[test]
    fn steps_resolve_to_actions() {
        let s = step("{start: dss, async: true, stagger: 2s, at: 30s, phase: during}").unwrap();
        assert!(
            matches!(s.action, Action::Start { workload: 1, wait: false, stagger, .. } if stagger == Duration::from_secs(2))
        );
        assert_eq!(s.at, Some(Duration::from_secs(30)));
        assert_eq!(s.phase.as_deref(), Some("during"));
        let s = step("{ramp: oltp, add: 1, every: 5s, until: 4}").unwrap();
        assert!(matches!(s.action, Action::Ramp { workload: 0, add: 1, until: 4, wait: true, .. }));
        let s = step("{wait_until: {tcp: '127.0.0.1:5432', timeout: 1m}}").unwrap();
        assert!(
            matches!(s.action, Action::WaitUntil { probe: Probe::Tcp(_), timeout, .. } if timeout == Duration::from_secs(60))
        );
        assert!(matches!(step("{zero: dss}").unwrap().action, Action::Fill { workload: 1, zero: true }));
    }

    /// An `http` probe takes the keys of an HTTPS request's credentials and trust, each
    /// refused at its own key; another probe takes none.
    #[test]
    fn an_http_probe_takes_a_ca_file_and_a_token_and_no_other_probe_does() {
        let s = step("{wait_until: {http: 'https://db:8443/ready', bearer_token_env: PATH, tls_config: {}}}").unwrap();
        let Action::WaitUntil { probe: Probe::Http { auth, .. }, .. } = s.action else { panic!("an http probe") };
        assert_eq!(auth.bearer_token, Some(crate::http::Secret::Env("PATH".into())));
        let e = step("{wait_until: {http: 'https://db/', tls_config: {ca_file: /dev/null}}}").err().unwrap();
        assert_eq!(e.0, "wait_until.tls_config.ca_file", "{e:?}");
        assert!(e.1.contains("no PEM certificate"), "{e:?}");
        let e = step("{wait_until: {http: 'https://db/', bearer_token: abc}}").err().unwrap();
        assert!(e.0 == "wait_until.bearer_token" && !e.1.contains("abc"), "{e:?}");
        let e = step("{wait_until: {tcp: 'db:5432', bearer_token_env: PATH}}").err().unwrap();
        assert_eq!(e, ("wait_until".into(), "credentials and `tls_config` apply to an `http` probe only".into()));
    }

    #[test]
    fn hooks_and_periodic_commands_resolve() {
        let s = step("{hook: nodes.PowerOff, args: {node: 1, vms: [a, b]}, hosts: '0:2', timeout: 5s}").unwrap();
        let Action::Command(c) = s.action else { panic!("a command") };
        assert_eq!(c.timeout, Duration::from_secs(5));
        assert_eq!(c.repeat, None, "in the timeline");
        let Command::Hook { name, args, hosts } = c.command else { panic!("a hook") };
        assert_eq!(name, "nodes.PowerOff");
        assert_eq!(args, vec![("node".to_string(), "1".to_string()), ("vms".to_string(), "a,b".to_string())]);
        assert_eq!(hosts, Some(vec!["0:2".to_string()]));
        let s = step("{exec: 'date', every: 60s, times: 3}").unwrap();
        let Action::Command(c) = s.action else { panic!("a command") };
        assert_eq!(c.repeat, Some(Repeat { every: Duration::from_secs(60), times: 3 }));
        let s = step("{hook: snap, async: true}").unwrap();
        let Action::Command(c) = s.action else { panic!("a command") };
        assert_eq!(c.repeat, Some(Repeat { every: Duration::ZERO, times: 1 }), "once, in the background");
        // ramp keeps its `every`
        assert!(matches!(step("{ramp: oltp, every: 5s, until: 2}").unwrap().action, Action::Ramp { .. }));
        assert_eq!(step("{exec: date, every: 5s}").unwrap_err().0, "every");
        assert_eq!(step("{exec: date, times: 2}").unwrap_err().0, "times");
        assert_eq!(step("{exec: date, every: 5s, times: 0}").unwrap_err().0, "times");
        assert_eq!(step("{exec: date, args: {a: 1}}").unwrap_err().0, "args");
        assert_eq!(step("{hook: 'a b'}").unwrap_err().0, "hook");
        assert_eq!(step("{hook: x, args: {a: {b: 1}}}").unwrap_err().0, "args.a");
        assert_eq!(step("{start: oltp, hosts: all}").unwrap_err().0, "hosts");
    }

    #[test]
    fn mistakes_name_the_key() {
        assert_eq!(step("{start: nope}").unwrap_err().0, "start");
        assert_eq!(step("{start: oltp, stop: dss}").unwrap_err().0, "stop");
        assert_eq!(step("{stop: oltp, duration: 3s}").unwrap_err().0, "duration");
        assert_eq!(step("{ramp: oltp, every: 5s}").unwrap_err().0, "ramp");
        assert_eq!(step("{ramp: oltp, add: 2, every: 5s, until: 1}").unwrap_err().0, "until");
        assert_eq!(step("{wait_until: {tcp: nohost}}").unwrap_err().0, "wait_until.tcp");
        assert_eq!(step("{wait_until: {timeout: 3s}}").unwrap_err().0, "wait_until");
        assert!(step("{at: 3s}").unwrap_err().1.contains("needs one action"));
        // bounded: a ramp's workers and how long it takes
        assert_eq!(step("{ramp: oltp, every: 1s, until: 4294967295}").unwrap_err().0, "until");
        assert!(step("{ramp: oltp, every: 1s, until: 4096}").is_ok());
        assert_eq!(step("{ramp: oltp, every: 1000h, until: 4000}").unwrap_err().0, "every");
    }
}
