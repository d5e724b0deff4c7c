//! Many hosts: where a workload's workers run. A host is reached through a transport —
//! a program users already trust that gives the controller the stdin and stdout of
//! `fathom agent` on that host (the agent [`protocol`]): `local` (spawn it here), `ssh`
//! (the OpenSSH client, with the user's own config, keys and known_hosts), `kubectl`
//! (`kubectl exec -i`). The inventory (`--hosts hosts.yaml`) names the hosts, how to
//! reach each, its target and its labels; scenarios place workloads with `hosts:`.

pub mod agent;
pub mod fleet;
mod kubectl;
pub mod protocol;
pub mod remote;

use crate::error::{Error, Result};
use indexmap::IndexMap;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How the controller reaches a host's agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    #[default]
    Ssh,
    Local,
    Kubectl,
}

/// A host as written in the inventory.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct HostFile {
    #[serde(default)]
    pub transport: TransportKind,
    /// ssh: the address or `~/.ssh/config` alias (the host's name if not given).
    pub address: Option<String>,
    pub port: Option<u16>,
    pub user: Option<String>,
    /// ssh: more options for the ssh client, e.g. `[-i, ~/.ssh/bench_key]`.
    #[serde(default)]
    pub ssh_options: Vec<String>,
    /// kubectl: the pod (of the DaemonSet) on that node, or its pods' label `selector`
    /// and the `node` (looked up at each run: pods are renamed when restarted); its
    /// namespace, container, and the kubeconfig `context` of its cluster.
    pub pod: Option<String>,
    pub selector: Option<String>,
    pub node: Option<String>,
    pub namespace: Option<String>,
    pub container: Option<String>,
    pub context: Option<String>,
    /// The fathom program on the host (`fathom` on its PATH if not given; `local`: this
    /// very binary).
    pub fathom: Option<String>,
    /// ssh: where `--push-agent` copies this fathom (`~/.cache/fathom` if not given).
    pub push_dir: Option<String>,
    /// Where workloads placed on this host do their IO (wins over the workload's own):
    /// its data disks or directories, in order (X-Ray's VMs have six), which a workload
    /// picks among by position with `host_targets`. One path is a list of one.
    #[serde(default, deserialize_with = "crate::scenario::file::one_or_many")]
    pub target: Option<Vec<String>>,
    #[serde(default)]
    pub labels: Vec<String>,
    /// How long the host's agent may stay silent before it says `alive`; the agent's
    /// own default ([`KEEPALIVE_SECS`]) when not given.
    pub keepalive: Option<Keepalive>,
}

/// Seconds an agent stays silent at most before it says `alive`, unless the inventory
/// says otherwise: well under the idle timeouts of common proxies and load balancers
/// (60 s and more), as ssh's `ServerAliveInterval` is set for the same reason.
pub const KEEPALIVE_SECS: u64 = 15;

/// An inventory's `keepalive`: whole seconds (`15s`, `1m`), 0 for never.
#[derive(Debug, Clone, Copy)]
pub struct Keepalive(pub u64);

impl<'de> Deserialize<'de> for Keepalive {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let span = crate::scenario::units::Span::deserialize(d)?;
        let secs = span.0.as_secs();
        if span.0 != std::time::Duration::from_secs(secs) {
            return Err(serde::de::Error::custom(format!("`{span}` is not whole seconds: e.g. 15s, or 0 for never")));
        }
        Ok(Keepalive(secs))
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct InventoryFile {
    hosts: IndexMap<String, HostFile>,
}

/// A host of the inventory.
#[derive(Debug, Clone)]
pub struct Host {
    pub name: String,
    pub spec: HostFile,
}

/// The hosts a run may place workloads on, in the order written (slices `0:3` count in it).
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub hosts: Vec<Host>,
}

impl Inventory {
    pub fn load(path: &Path) -> Result<Inventory> {
        let origin = path.display().to_string();
        let text = crate::nofollow::read_input(path, "hosts inventory", crate::scenario::MAX_BYTES)?;
        Inventory::parse(&origin, &text)
    }

    /// Each host's number of targets, in order (0: it has none, the workload's own is
    /// used): what an X-Ray scenario's data disks are mapped onto.
    pub fn target_counts(&self) -> Vec<usize> {
        self.hosts.iter().map(|h| h.spec.target.as_ref().map_or(0, Vec::len)).collect()
    }

    pub fn parse(origin: &str, text: &str) -> Result<Inventory> {
        let (file, lines): (InventoryFile, _) = crate::scenario::yaml::read(origin, text)?;
        let err = |path: &[&str], msg: String| {
            let line = lines.line_of(path).map(|l| format!(":{l}")).unwrap_or_default();
            Error::input(format!("{origin}{line}: {}: {msg}", path.join(".")))
        };
        if file.hosts.is_empty() {
            return Err(err(&["hosts"], "lists no host".into()));
        }
        for (name, h) in &file.hosts {
            let needs = |key: &str, present: bool, what: &str| {
                if present { Ok(()) } else { Err(err(&["hosts", name], format!("missing `{key}`: {what}"))) }
            };
            match h.transport {
                TransportKind::Kubectl if h.pod.is_some() && (h.selector.is_some() || h.node.is_some()) => {
                    return Err(err(&["hosts", name, "pod"], "a pod, or its `selector` and `node`: not both".into()));
                }
                TransportKind::Kubectl => needs(
                    "pod",
                    h.pod.is_some() || h.selector.is_some() && h.node.is_some(),
                    "the fathom pod on that node, or its pods' `selector` and the `node`",
                )?,
                TransportKind::Local if h.address.is_some() || h.port.is_some() || h.user.is_some() => {
                    return Err(err(&["hosts", name, "transport"], "a local host has no address, port or user".into()));
                }
                _ => {}
            }
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(err(&["hosts", name], "a host name is one word".into()));
            }
            for (key, value) in h.command_words(name) {
                if value.contains('\0') {
                    return Err(err(&["hosts", name, key], "contains a NUL byte".into()));
                }
                let option_like = !matches!(key, "fathom" | "push_dir");
                if option_like && value.starts_with('-') {
                    return Err(err(
                        &["hosts", name, key],
                        format!("`{value}` starts with `-`: ssh and kubectl would read it as an option"),
                    ));
                }
            }
            // ssh puts the destination and user into `%h` and `%r` of the user's own
            // config (ProxyCommand, Match exec) as they are: only an address's characters
            if h.transport == TransportKind::Ssh {
                let destination = h.address.as_deref().map(|a| ("address", a)).unwrap_or(("name", name));
                let user = h.user.as_deref().map(|u| ("user", u, "._-@"));
                for (key, value, allowed) in std::iter::once((destination.0, destination.1, "._-:@%[]")).chain(user) {
                    if let Some(c) = value.chars().find(|c| !c.is_ascii_alphanumeric() && !allowed.contains(*c)) {
                        return Err(err(
                            &["hosts", name, key],
                            format!("`{value}` has {c:?}: ssh takes letters, digits and `{allowed}` here"),
                        ));
                    }
                }
            }
            let targets = h.target.as_deref().unwrap_or_default();
            if h.target.is_some() && targets.is_empty() {
                return Err(err(&["hosts", name, "target"], "lists no target".into()));
            }
            if let Some(t) = targets.iter().find(|t| !crate::scenario::plain_text(t)) {
                let msg = format!("{t:?} is not a path: {}", crate::scenario::PLAIN_TEXT);
                return Err(err(&["hosts", name, "target"], msg));
            }
            if let Some((_, dup)) = targets.iter().enumerate().find(|(i, t)| targets[..*i].contains(t)) {
                return Err(err(&["hosts", name, "target"], format!("`{dup}` is listed twice")));
            }
        }
        Ok(Inventory { hosts: file.hosts.into_iter().map(|(name, spec)| Host { name, spec }).collect() })
    }

    /// The hosts `selector` names: `all`, a host, a label, a slice `A:B` of the
    /// inventory's order (X-Ray's `nodes: 0:3`), or a list of those. In inventory order,
    /// each once. Errors are bad input, for the caller to locate in the scenario.
    pub fn select(&self, selector: &[String]) -> Result<Vec<&Host>> {
        let mut chosen = vec![false; self.hosts.len()];
        for s in selector {
            let s = s.trim();
            let mut hit = false;
            if s == "all" {
                chosen.iter_mut().for_each(|c| *c = true);
                continue;
            }
            if let Some((a, b)) = s.split_once(':') {
                let parse = |x: &str, default: usize| -> Result<usize> {
                    if x.is_empty() {
                        Ok(default)
                    } else {
                        x.parse().map_err(|_| Error::input(format!("`{s}` is not a slice A:B")))
                    }
                };
                let (a, b) = (parse(a, 0)?, parse(b, self.hosts.len())?);
                if a >= b || b > self.hosts.len() {
                    let msg = format!("slice `{s}` is outside the inventory's {} hosts", self.hosts.len());
                    return Err(Error::input(msg));
                }
                chosen[a..b].iter_mut().for_each(|c| *c = true);
                continue;
            }
            for (i, h) in self.hosts.iter().enumerate() {
                if h.name == s || h.spec.labels.iter().any(|l| l == s) {
                    chosen[i] = true;
                    hit = true;
                }
            }
            if !hit {
                let names: Vec<&str> = self.hosts.iter().map(|h| h.name.as_str()).collect();
                return Err(Error::input(format!("`{s}` is neither a host ({}) nor a label of one", names.join(", "))));
            }
        }
        Ok(self.hosts.iter().zip(chosen).filter(|(_, c)| *c).map(|(h, _)| h).collect())
    }
}

impl HostFile {
    /// The inventory values that end up on a transport's command line, by key (`name`:
    /// the host's own, the default address and the agent's `--name`). The parser refuses
    /// a NUL in any and a leading `-` in those a transport reads as a word of its own.
    fn command_words<'a>(&'a self, name: &'a str) -> Vec<(&'static str, &'a str)> {
        let keys = [
            ("address", &self.address),
            ("user", &self.user),
            ("pod", &self.pod),
            ("selector", &self.selector),
            ("node", &self.node),
            ("namespace", &self.namespace),
            ("container", &self.container),
            ("context", &self.context),
            ("fathom", &self.fathom),
            ("push_dir", &self.push_dir),
        ];
        let given = keys.into_iter().filter_map(|(k, v)| Some((k, v.as_deref()?)));
        std::iter::once(("name", name)).chain(given).collect()
    }
}

/// The file name `--push-agent` gives a build on a host: `fathom-` and the build's
/// identity in letters, digits, dots and dashes (`0.1.0 (7ab8b6a, modified 0c1d2e3f)`
/// is `fathom-0.1.0-7ab8b6a-modified-0c1d2e3f`), a plain word for any shell.
fn pushed_name(build: &str) -> String {
    let words: Vec<&str> =
        build.split(|c: char| !c.is_ascii_alphanumeric() && c != '.').filter(|w| !w.is_empty()).collect();
    format!("fathom-{}", words.join("-"))
}

/// `words` as one command line for the host's shell (ssh hands its remote command to
/// the user's login shell there): each word quoted, so a space, `;` or `$(...)` in an
/// inventory value is that value, never more shell. A leading `~/` stays unquoted, so a
/// path in the home directory (`~/.cache/fathom`) still expands there. A word it cannot
/// quote (a NUL, which the inventory's parser refuses first) is bad input.
fn remote_command(words: &[&str]) -> Result<String> {
    let quoted: std::result::Result<Vec<String>, _> = words
        .iter()
        .map(|w| match w.strip_prefix("~/") {
            _ if *w == "~" => Ok("~".to_string()),
            Some("") => Ok("~/".to_string()),
            Some(rest) => shlex::try_quote(rest).map(|q| format!("~/{q}")),
            None => shlex::try_quote(w).map(|q| q.into_owned()),
        })
        .collect();
    quoted.map(|q| q.join(" ")).map_err(|e| Error::input(format!("{words:?}: {e}")))
}

impl Host {
    /// The command that gives `fathom agent`'s stdio on this host. Nothing goes through
    /// a local shell; over ssh, the remote command is quoted word by word.
    pub fn command(&self, program: &str) -> Result<Command> {
        let h = &self.spec;
        // `--keepalive` only when the inventory sets it: an agent of another build then
        // still says hello, and is refused as such with the way to mend it
        let keepalive = h.keepalive.map(|k| k.0.to_string());
        let mut agent = vec!["agent", "--name", &self.name];
        if let Some(secs) = &keepalive {
            agent.extend(["--keepalive", secs]);
        }
        match h.transport {
            TransportKind::Local => {
                let exe = h
                    .fathom
                    .clone()
                    .map(PathBuf::from)
                    .unwrap_or_else(|| std::env::current_exe().unwrap_or_else(|_| PathBuf::from("fathom")));
                let mut c = Command::new(exe);
                c.args(&agent);
                Ok(c)
            }
            TransportKind::Ssh => {
                let mut c = self.ssh();
                c.arg(remote_command(&[&[program][..], &agent].concat())?);
                Ok(c)
            }
            TransportKind::Kubectl => {
                let at = self.cluster();
                let pod = kubectl::pod(&self.name, &at)?;
                Ok(kubectl::exec(&at, &pod, &[&[program][..], &agent].concat()))
            }
        }
    }

    /// `ssh [options] -- HOST`, ready for the remote command (one word, quoted by
    /// [`remote_command`]). `--` before the host: whatever the host is called, ssh reads
    /// no option after it.
    fn ssh(&self) -> Command {
        let h = &self.spec;
        let mut c = Command::new("ssh");
        // never ask: no password prompt, and an unknown or changed host key is refused
        // (the user's known_hosts decides; nothing is auto-accepted)
        c.args(["-T", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"]);
        if let Some(port) = h.port {
            c.arg("-p").arg(port.to_string());
        }
        if let Some(user) = &h.user {
            c.arg("-l").arg(user);
        }
        c.args(&h.ssh_options);
        c.arg("--").arg(h.address.as_deref().unwrap_or(&self.name));
        c
    }

    /// `--push-agent`: copies this very binary to the host over ssh or kubectl (to
    /// `push_dir`, named by its build, replaced atomically) and returns the path to run
    /// there. Named by the build, a copy of another build is never taken for this one.
    /// Errors are bad input, like every failure to reach a host before the run starts.
    pub fn push_agent(&self) -> Result<String> {
        let who = format!("host {} ({})", self.name, self.transport_name());
        let exe = std::env::current_exe().map_err(|e| Error::input(format!("finding this fathom: {e}")))?;
        let exe = static_build(&exe).unwrap_or(exe);
        let binary = std::fs::File::open(&exe).map_err(|e| Error::input(format!("{}: {e}", exe.display())))?;
        let dir = self.spec.push_dir.clone().unwrap_or_else(|| "~/.cache/fathom".into());
        let name = pushed_name(env!("BUILD_IDENTITY"));
        let path = format!("{dir}/{name}");
        let part = format!("{path}.part");
        // the shell that copies also says where `push_dir` is (`~` expanded, links
        // resolved): the agent is then started by its whole path, which `kubectl exec`,
        // running its words with no shell, needs
        let script = [
            remote_command(&["mkdir", "-p", "--", &dir])?,
            format!("cat > {}", remote_command(&[&part])?),
            remote_command(&["chmod", "+x", "--", &part])?,
            remote_command(&["mv", "--", &part, &path])?,
            remote_command(&["cd", "--", &dir])?,
            "pwd -P".to_string(),
        ]
        .join(" && ");
        let mut shell = match self.spec.transport {
            TransportKind::Ssh => {
                let mut c = self.ssh();
                c.arg(script);
                c
            }
            // the container's own shell: `kubectl exec` runs no shell of its own
            TransportKind::Kubectl => {
                let at = self.cluster();
                kubectl::exec(&at, &kubectl::pod(&self.name, &at)?, &["sh", "-c", &script])
            }
            TransportKind::Local => {
                return Err(Error::input(format!("{who}: --push-agent copies over ssh or kubectl only")));
            }
        };
        let out = shell
            .stdin(binary)
            .output()
            .map_err(|e| Error::input(format!("{who}: cannot start {}: {e}", self.transport_name())))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(Error::input(format!("{who}: copying fathom to {path} failed: {}", err.trim())));
        }
        let said = String::from_utf8_lossy(&out.stdout);
        match said.lines().last().map(str::trim).filter(|d| d.starts_with('/')) {
            Some(whole) => Ok(format!("{whole}/{name}")),
            None => {
                Err(Error::input(format!("{who}: copied fathom to {path}, but the host did not say where that is")))
            }
        }
    }

    /// Where the host's pod is, for `transport: kubectl`.
    fn cluster(&self) -> kubectl::Where<'_> {
        let h = &self.spec;
        kubectl::Where {
            context: h.context.as_deref(),
            namespace: h.namespace.as_deref(),
            container: h.container.as_deref(),
            pod: h.pod.as_deref(),
            selector: h.selector.as_deref(),
            node: h.node.as_deref(),
        }
    }

    /// The fathom program the transport runs on the host.
    pub fn program(&self) -> String {
        self.spec.fathom.clone().unwrap_or_else(|| "fathom".into())
    }

    pub fn transport_name(&self) -> &'static str {
        match self.spec.transport {
            TransportKind::Ssh => "ssh",
            TransportKind::Local => "local",
            TransportKind::Kubectl => "kubectl",
        }
    }
}

/// The target of fathom's static build, which runs on any Linux of its architecture
/// whatever its C library.
const STATIC_TARGET: &str = "x86_64-unknown-linux-musl";

/// A statically linked build of this very fathom, which `--push-agent` copies instead
/// of `exe` so that a host with another C library runs it: `fathom-static` beside `exe`
/// (as `make install` puts it), or cargo's static build beside its own
/// (`target/STATIC_TARGET/PROFILE/fathom` for `target/PROFILE/fathom`). A candidate of
/// another build (its `--version` differs) is never taken for this one.
fn static_build(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    let beside = dir.join("fathom-static");
    let cargo = dir.parent()?.join(STATIC_TARGET).join(dir.file_name()?).join("fathom");
    let ours = format!("fathom {}", env!("BUILD_IDENTITY"));
    [beside, cargo].into_iter().filter(|c| c.is_file() && c.as_path() != exe).find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == ours)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pushed_fathom_is_named_by_its_build() {
        assert_eq!(pushed_name("0.1.0 (7ab8b6a, modified 0c1d2e3f)"), "fathom-0.1.0-7ab8b6a-modified-0c1d2e3f");
        assert_eq!(pushed_name("0.1.0 (7ab8b6a)"), "fathom-0.1.0-7ab8b6a");
        assert_eq!(pushed_name("0.1.0 (unknown)"), "fathom-0.1.0-unknown");
        assert_eq!(
            pushed_name(env!("BUILD_IDENTITY")),
            pushed_name(env!("BUILD_IDENTITY")).replace([' ', '(', ')', ','], "")
        );
    }

    const HOSTS: &str = "\
hosts:
  n1: {address: 10.0.0.1, labels: [db]}
  n2: {address: 10.0.0.2, port: 2222, user: bench, labels: [db, web]}
  n3: {transport: local, target: /tmp/x, labels: [web]}
  n4: {transport: kubectl, pod: fathom-abc, namespace: bench}
";

    fn names(hosts: Vec<&Host>) -> Vec<&str> {
        hosts.iter().map(|h| h.name.as_str()).collect()
    }

    #[test]
    fn selectors_pick_hosts_by_name_label_and_slice() {
        let inv = Inventory::parse("hosts.yaml", HOSTS).unwrap();
        assert_eq!(names(inv.select(&["all".into()]).unwrap()), vec!["n1", "n2", "n3", "n4"]);
        assert_eq!(names(inv.select(&["db".into()]).unwrap()), vec!["n1", "n2"]);
        assert_eq!(names(inv.select(&["web".into(), "n1".into()]).unwrap()), vec!["n1", "n2", "n3"]);
        assert_eq!(names(inv.select(&["1:3".into()]).unwrap()), vec!["n2", "n3"]);
        assert_eq!(names(inv.select(&[":2".into()]).unwrap()), vec!["n1", "n2"]);
        assert!(inv.select(&["nope".into()]).unwrap_err().to_string().contains("neither a host (n1, n2, n3, n4)"));
        assert!(inv.select(&["2:9".into()]).unwrap_err().to_string().contains("outside"));
    }

    #[test]
    fn transports_are_the_users_own_programs() {
        let inv = Inventory::parse("hosts.yaml", HOSTS).unwrap();
        let args = |i: usize| -> Vec<String> {
            let c = inv.hosts[i].command(&inv.hosts[i].program()).unwrap();
            std::iter::once(c.get_program()).chain(c.get_args()).map(|a| a.to_string_lossy().to_string()).collect()
        };
        let ssh = args(1).join(" ");
        assert!(ssh.starts_with("ssh -T -o BatchMode=yes -o StrictHostKeyChecking=yes -p 2222 -l bench -- 10.0.0.2 "));
        // the remote command is one word, quoted for the host's shell
        assert_eq!(args(1).last().unwrap(), "fathom agent --name n2", "{ssh}");
        assert!(args(2)[1..].join(" ").starts_with("agent --name n3"));
        assert_eq!(args(3).join(" "), "kubectl -n bench exec -i fathom-abc -- fathom agent --name n4");
    }

    #[test]
    fn remote_commands_quote_every_word() {
        let quoted = remote_command(&["/opt/my fathom/fathom", "agent", "--name", "a;b"]).unwrap();
        assert_eq!(quoted, "'/opt/my fathom/fathom' agent --name 'a;b'");
        assert_eq!(remote_command(&["$(touch x)", "`id`"]).unwrap(), "'$(touch x)' '`id`'");
        // the home directory still expands; the rest of the path does not
        assert_eq!(remote_command(&["~/.cache/fathom", "~", "~/"]).unwrap(), "~/.cache/fathom ~ ~/");
        assert_eq!(remote_command(&["~/x $(id)"]).unwrap(), "~/'x $(id)'");
        assert_eq!(remote_command(&["~root/x"]).unwrap(), "'~root/x'");
        assert!(remote_command(&["a\0b"]).unwrap_err().to_string().contains("nul"));
    }

    #[test]
    fn option_like_and_nul_values_are_refused_where_written() {
        let err = Inventory::parse("h.yaml", "hosts:\n  '-oProxyCommand=x': {}\n").unwrap_err().to_string();
        assert!(err.starts_with("h.yaml:2: hosts.-oProxyCommand=x.name: `-oProxyCommand=x` starts with `-`"), "{err}");
        for key in ["address", "user", "pod", "namespace", "container"] {
            let text = format!("hosts:\n  a:\n    transport: kubectl\n    pod: p\n    {key}: -x\n");
            let text = if key == "pod" { text.replace("    pod: p\n", "") } else { text };
            let err = Inventory::parse("h.yaml", &text).unwrap_err().to_string();
            assert!(err.contains(&format!("hosts.a.{key}: `-x` starts with `-`")), "{key}: {err}");
        }
        let err = Inventory::parse("h.yaml", "hosts:\n  a:\n    push_dir: \"x\\0y\"\n").unwrap_err().to_string();
        assert!(err.starts_with("h.yaml:3: hosts.a.push_dir: contains a NUL byte"), "{err}");
        // what ssh would pass on to a ProxyCommand of the user's config is an address
        for (entry, key) in [
            ("'a$(id)': {}", "hosts.a$(id).name: `a$(id)` has '$'"),
            ("a: {address: 'h;id'}", "hosts.a.address: `h;id` has ';'"),
            ("a: {user: 'u`id`'}", "hosts.a.user: `u`id`` has '`'"),
        ] {
            let err = Inventory::parse("h.yaml", &format!("hosts:\n  {entry}\n")).unwrap_err().to_string();
            assert!(err.starts_with(&format!("h.yaml:2: {key}")), "{err}");
        }
        let fine = "hosts:\n  n1: {address: 'bench@node-1.example.com'}\n  n2: {address: '[fe80::1%eth0]', user: a.b_c}\n  \
                    'x$': {transport: local}\n";
        assert!(Inventory::parse("h.yaml", fine).is_ok());
        // a path may start with `-`: it is quoted, and never in an option's place
        assert!(Inventory::parse("h.yaml", "hosts:\n  a: {fathom: -odd, push_dir: -dir}\n").is_ok());
    }

    #[test]
    fn bad_inventories_are_located() {
        let err = Inventory::parse("h.yaml", "hosts:\n  a: {transport: kubectl}\n").unwrap_err().to_string();
        assert!(err.starts_with("h.yaml:2: hosts.a: missing `pod`"), "{err}");
        // a label without its node could name any pod of the DaemonSet
        let err = Inventory::parse("h.yaml", "hosts:\n  a: {transport: kubectl, selector: app=f}\n").unwrap_err();
        assert!(err.to_string().contains("missing `pod`: the fathom pod on that node, or its pods' `selector`"));
        let both = "hosts:\n  a: {transport: kubectl, pod: p, selector: app=f, node: n}\n";
        let err = Inventory::parse("h.yaml", both).unwrap_err().to_string();
        assert!(err.contains("hosts.a.pod: a pod, or its `selector` and `node`: not both"), "{err}");
        assert!(Inventory::parse("h.yaml", "hosts:\n  a: {transport: kubectl, selector: app=f, node: n}\n").is_ok());
        let err = Inventory::parse("h.yaml", "hosts:\n  a: {adress: x}\n").unwrap_err().to_string();
        assert!(err.contains("h.yaml:2") && err.contains("adress"), "{err}");
    }

    #[test]
    fn blank_or_multi_line_targets_are_refused() {
        for target in ["' '", "\"/tmp/a\\nb\""] {
            let text = format!("hosts:\n  a:\n    transport: local\n    target: {target}\n");
            let err = Inventory::parse("h.yaml", &text).unwrap_err().to_string();
            assert!(err.starts_with("h.yaml:4: hosts.a.target: "), "{err}");
            assert!(err.contains("is not a path"), "{err}");
        }
    }

    #[test]
    fn a_target_may_list_a_hosts_data_disks() {
        let text =
            "hosts:\n  a: {transport: local, target: [/mnt/d1, /dev/sdc]}\n  b: {transport: local, target: /x}\n";
        let inv = Inventory::parse("h.yaml", text).unwrap();
        assert_eq!(inv.hosts[0].spec.target, Some(vec!["/mnt/d1".to_string(), "/dev/sdc".to_string()]));
        assert_eq!(inv.hosts[1].spec.target, Some(vec!["/x".to_string()]));
        for (target, said) in
            [("[]", "lists no target"), ("[/a, /b, /a]", "`/a` is listed twice"), ("[/a, ' ']", "is not a path")]
        {
            let text = format!("hosts:\n  a:\n    transport: local\n    target: {target}\n");
            let err = Inventory::parse("h.yaml", &text).unwrap_err().to_string();
            assert!(err.starts_with("h.yaml:4: hosts.a.target: ") && err.contains(said), "{err}");
        }
    }
}
