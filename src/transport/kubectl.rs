//! `transport: kubectl`: a host is a pod, and `kubectl exec -i POD -- fathom agent` gives
//! the agent's stdio. A DaemonSet's pods are renamed at every restart, so a host is best
//! named by what stays: the pods' label `selector` and the `node` they run on, looked up
//! when the run connects. `context` picks the cluster of the user's kubeconfig.

use crate::error::{Error, Result};
use std::process::Command;

/// Where a host's agent runs on a cluster, as the inventory says it.
pub struct Where<'a> {
    pub context: Option<&'a str>,
    pub namespace: Option<&'a str>,
    pub container: Option<&'a str>,
    pub pod: Option<&'a str>,
    pub selector: Option<&'a str>,
    pub node: Option<&'a str>,
}

/// `kubectl [--context C] [-n NS]`: every call for this host starts so.
fn kubectl(h: &Where) -> Command {
    let mut c = Command::new("kubectl");
    if let Some(context) = h.context {
        c.arg("--context").arg(context);
    }
    if let Some(ns) = h.namespace {
        c.arg("-n").arg(ns);
    }
    c
}

/// The host's pod: `pod` as written, or the one running pod that `selector` matches on
/// `node`. None or several is bad input naming what was asked, as a host the run cannot
/// reach is before anything starts.
pub fn pod(name: &str, h: &Where) -> Result<String> {
    if let Some(pod) = h.pod {
        return Ok(pod.to_string());
    }
    let (selector, node) = (h.selector.unwrap_or_default(), h.node.unwrap_or_default());
    let who = format!("host {name} (kubectl): pods {selector} on node {node}");
    let out = kubectl(h)
        .args(["get", "pods", "-l", selector, "--field-selector"])
        .arg(format!("spec.nodeName={node},status.phase=Running"))
        .args(["-o", "jsonpath={.items[*].metadata.name}"])
        .output()
        .map_err(|e| Error::input(format!("{who}: cannot start kubectl: {e}")))?;
    if !out.status.success() {
        return Err(Error::input(format!("{who}: {}", String::from_utf8_lossy(&out.stderr).trim())));
    }
    let names = String::from_utf8_lossy(&out.stdout).into_owned();
    match names.split_whitespace().collect::<Vec<_>>()[..] {
        [one] => Ok(one.to_string()),
        [] => Err(Error::input(format!("{who}: none is running"))),
        ref many => {
            Err(Error::input(format!("{who}: {} are running ({}): name one with `pod`", many.len(), many.join(", "))))
        }
    }
}

/// `kubectl exec -i [-c CONTAINER] POD -- WORDS...`: no shell between, the words are
/// the container's program and its arguments.
pub fn exec(h: &Where, pod: &str, words: &[&str]) -> Command {
    let mut c = kubectl(h);
    c.arg("exec").arg("-i");
    if let Some(container) = h.container {
        c.arg("-c").arg(container);
    }
    c.arg(pod).arg("--").args(words);
    c
}
