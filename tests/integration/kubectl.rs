//! `transport: kubectl`, end to end with a stand-in `kubectl` first on the PATH (no
//! cluster here): a bash script that refuses any call but the ones fathom should make,
//! logs each, answers `get pods` as the API server would for a DaemonSet's pods, and for
//! `exec -i POD -- WORDS` runs the words here, as the pod's container would.

use crate::common::{Scratch, text};

/// The stand-in: every call is `--context bench -n fathom`, then `get pods` with the
/// label and node's field selector, or `exec -i` a pod that `get` would name.
const KUBECTL: &str = r#"#!/bin/bash
echo "$*" >> "$KUBECTL_LOG"
[ "$1" = --context ] && [ "$2" = bench ] && [ "$3" = -n ] && [ "$4" = fathom ] || { echo "refused: $*" >&2; exit 9; }
shift 4
case "$1" in
  get)
    [ "$2 $3 $4 $5" = "pods -l app=fathom-agent --field-selector" ] || { echo "refused: $*" >&2; exit 9; }
    case "$6" in
      spec.nodeName=worker-1,status.phase=Running) printf 'fathom-agent-x7k2p' ;;
      spec.nodeName=worker-2,status.phase=Running) printf 'fathom-agent-q9z4m' ;;
      spec.nodeName=twins,status.phase=Running) printf 'fathom-agent-a fathom-agent-b' ;;
      *) ;;
    esac ;;
  exec)
    [ "$2" = -i ] && [ "$4" = -- ] || { echo "refused: $*" >&2; exit 9; }
    case "$3" in fathom-agent-x7k2p|fathom-agent-q9z4m) ;; *) echo "no pod $3" >&2; exit 1 ;; esac
    shift 4
    # the real kubectl hands the words to the container's runtime as they are: no shell,
    # no `~` expanded (env execs them as given, as bash's exec would not)
    [ -n "$KUBECTL_IDLE" ] || exec env -- "$@"
    # a stream that closes when nothing crossed it for $KUBECTL_IDLE s, as a proxy's does
    env -- "$@" | {
      while true; do IFS= read -r -t "$KUBECTL_IDLE" line; rc=$?; [ $rc = 0 ] || break; printf '%s\n' "$line"; done
      if [ $rc -gt 128 ]; then echo "idle for ${KUBECTL_IDLE}s: stream closed" >&2; kill -9 0; fi
    } ;;
  *) echo "refused: $*" >&2; exit 9 ;;
esac
"#;

/// The stand-in's directory (for the PATH) and its log.
fn stand_in(s: &Scratch) -> (String, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let bin = s.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join("kubectl");
    std::fs::write(&path, KUBECTL).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path_var = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    (path_var, s.dir.join("kubectl.log"))
}

/// Two nodes named by the DaemonSet's label and their node, in the `bench` context;
/// `fathom:` as given for each host (this build, or one to be pushed).
fn inventory(s: &Scratch, fathom: &str, nodes: &[(&str, &str)], extra: &str) -> String {
    let mut text = String::from("hosts:\n");
    for (name, node) in nodes {
        let dir = s.dir.join(format!("host-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        text.push_str(&format!(
            "  {name}: {{transport: kubectl, context: bench, namespace: fathom, selector: app=fathom-agent, \
             node: {node}, fathom: {fathom}, push_dir: {}, target: {}{extra}}}\n",
            s.dir.join("pushed").display(),
            dir.display()
        ));
    }
    let path = s.dir.join("hosts.yaml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

const SCENARIO: &str =
    "name: k8s\nworkloads:\n  r: {hosts: all, per_host: 2, rw: randread, bs: 4k, size: 8m, duration: 2s}\n";

#[test]
fn pods_found_by_label_and_node_run_one_scenario_over_kubectl_exec() {
    let s = Scratch::new("kubectl");
    let (path, log) = stand_in(&s);
    let scenario = s.scenario(SCENARIO);
    let hosts = inventory(&s, env!("CARGO_BIN_EXE_fathom"), &[("n1", "worker-1"), ("n2", "worker-2")], "");
    let out = s
        .fathom(&["run", scenario.to_str().unwrap(), "--hosts", &hosts])
        .env("PATH", &path)
        .env("KUBECTL_LOG", &log)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let hosts: Vec<(&str, i64)> = show["workloads"][0]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["host"].as_str().unwrap(), h["workers"].as_i64().unwrap()))
        .collect();
    assert_eq!(hosts, [("n1", 2), ("n2", 2)], "{show}");
    // each pod looked up by its node, then the agent started in it with no shell between
    let calls = std::fs::read_to_string(&log).unwrap();
    let fathom = env!("CARGO_BIN_EXE_fathom");
    for (name, node, pod) in [("n1", "worker-1", "fathom-agent-x7k2p"), ("n2", "worker-2", "fathom-agent-q9z4m")] {
        let get = format!(
            "--context bench -n fathom get pods -l app=fathom-agent --field-selector spec.nodeName={node},status.phase=Running"
        );
        assert!(calls.contains(&get), "{calls}");
        assert!(
            calls.contains(&format!("--context bench -n fathom exec -i {pod} -- {fathom} agent --name {name}")),
            "{calls}"
        );
    }
    // each host's files were laid out in its own target
    assert!(s.dir.join("host-n1").read_dir().unwrap().next().is_some());
}

/// A node with no running pod of the label, or with two, is refused before anything
/// runs, naming what was asked; --push-agent copies fathom into a pod through
/// `kubectl exec` and the container's shell.
#[test]
fn a_node_without_its_one_pod_is_refused_and_push_agent_copies_over_exec() {
    let s = Scratch::new("kubectl-push");
    let (path, log) = stand_in(&s);
    let scenario = s.scenario(SCENARIO);
    let run = |hosts: &str, push: bool| {
        let mut args = vec!["run", scenario.to_str().unwrap(), "--hosts", hosts];
        if push {
            args.push("--push-agent");
        }
        s.fathom(&args).env("PATH", &path).env("KUBECTL_LOG", &log).output().unwrap()
    };
    let fathom = env!("CARGO_BIN_EXE_fathom");
    for (node, said) in [("nowhere", "none is running"), ("twins", "2 are running (fathom-agent-a, fathom-agent-b)")] {
        let out = run(&inventory(&s, fathom, &[("n1", node)], ""), false);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("host n1 (kubectl): pods app=fathom-agent on node {node}: {said}")), "{err}");
    }
    let out = run(&inventory(&s, "/nonexistent/fathom", &[("n1", "worker-1")], ""), true);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let pushed: Vec<_> = s.dir.join("pushed").read_dir().unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(pushed.len(), 1, "{pushed:?}");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(calls.contains("exec -i fathom-agent-x7k2p -- sh -c mkdir -p --"), "{calls}");
    assert!(
        calls.contains(&format!("exec -i fathom-agent-x7k2p -- {} agent --name n1", pushed[0].display())),
        "{calls}"
    );
}

/// With the default `push_dir` (`~/.cache/fathom`), the copy lands in the home of the
/// pod's user, and the agent is started there by its whole path: `kubectl exec` runs
/// its words with no shell, so a `~` in them would be a file name.
#[test]
fn push_agent_to_the_default_directory_starts_the_copy_by_its_whole_path() {
    let s = Scratch::new("kubectl-push-home");
    let (path, log) = stand_in(&s);
    let scenario = s.scenario(SCENARIO);
    let home = s.dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let target = s.dir.join("host-n1");
    std::fs::create_dir_all(&target).unwrap();
    let hosts = s.dir.join("hosts.yaml");
    std::fs::write(
        &hosts,
        format!(
            "hosts:\n  n1: {{transport: kubectl, context: bench, namespace: fathom, selector: app=fathom-agent, \
             node: worker-1, fathom: /nonexistent/fathom, target: {}}}\n",
            target.display()
        ),
    )
    .unwrap();
    let args = ["run", scenario.to_str().unwrap(), "--hosts", hosts.to_str().unwrap(), "--push-agent"];
    let out = s.fathom(&args).env("PATH", &path).env("KUBECTL_LOG", &log).env("HOME", &home).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let pushed: Vec<_> = home.join(".cache/fathom").read_dir().unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(pushed.len(), 1, "{pushed:?}");
    let calls = std::fs::read_to_string(&log).unwrap();
    let started = format!("exec -i fathom-agent-x7k2p -- {} agent --name n1", pushed[0].display());
    assert!(calls.contains(&started) && !calls.contains("fathom-agent-x7k2p -- ~/"), "{calls}");
}

/// A stream that closes after 3 s with nothing on it (a proxy's idle timeout) cuts a
/// run whose agent waits 5 s in silence, unless the agent says `alive` every second.
#[test]
fn keepalives_carry_a_silent_stretch_past_an_idle_timeout() {
    let s = Scratch::new("kubectl-idle");
    let (path, log) = stand_in(&s);
    let scenario = s.scenario(
        "name: k8s-wait\nworkloads:\n  r: {hosts: all, rw: randread, bs: 4k, size: 8m, duration: 1s}\n\
         timeline:\n  - wait: 5s\n  - start: r\n",
    );
    let fathom = env!("CARGO_BIN_EXE_fathom");
    let run = |keepalive: &str| {
        let hosts = inventory(&s, fathom, &[("n1", "worker-1")], &format!(", keepalive: {keepalive}"));
        let args = ["run", scenario.to_str().unwrap(), "--hosts", &hosts];
        s.fathom(&args).env("PATH", &path).env("KUBECTL_LOG", &log).env("KUBECTL_IDLE", "3").output().unwrap()
    };
    let cut = run("0");
    assert_eq!(cut.status.code(), Some(1), "{}", text(&cut));
    assert!(text(&cut).contains("idle for 3s: stream closed"), "{}", text(&cut));
    let kept = run("1s");
    assert_eq!(kept.status.code(), Some(0), "{}", text(&kept));
    assert!(std::fs::read_to_string(&log).unwrap().contains("agent --name n1 --keepalive 1"));
    let bad = run("500ms");
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(text(&bad).contains("hosts.n1.keepalive: `500ms` is not whole seconds"), "{}", text(&bad));
}

/// The manifests of deploy/kubernetes/, each document as JSON, by file name.
fn manifests() -> Vec<(String, serde_json::Value)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let docs: Vec<serde_json::Value> =
            serde_saphyr::from_multiple(&std::fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| panic!("{e}"));
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        out.extend(docs.into_iter().map(|d| (name.clone(), d)));
    }
    out
}

/// What the PodSecurity `restricted` level refuses in a pod's spec (its checks of host
/// namespaces, privilege, volumes, users, seccomp and capabilities), one line each.
fn not_restricted(pod: &serde_json::Value) -> Vec<String> {
    let mut refused = Vec::new();
    for key in ["hostNetwork", "hostPID", "hostIPC"] {
        if pod[key] == true {
            refused.push(key.to_string());
        }
    }
    const VOLUMES: [&str; 8] =
        ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"];
    for v in pod["volumes"].as_array().into_iter().flatten() {
        let kinds: Vec<&String> = v.as_object().unwrap().keys().filter(|k| *k != "name").collect();
        if !kinds.iter().all(|k| VOLUMES.contains(&k.as_str())) {
            refused.push(format!("volume {}: {kinds:?}", v["name"]));
        }
    }
    let pod_sc = &pod["securityContext"];
    let containers = pod["containers"].as_array().into_iter().chain(pod["initContainers"].as_array()).flatten();
    for c in containers {
        let (sc, name) = (&c["securityContext"], &c["name"]);
        let non_root = if sc["runAsNonRoot"].is_null() { &pod_sc["runAsNonRoot"] } else { &sc["runAsNonRoot"] };
        let user = if sc["runAsUser"].is_null() { &pod_sc["runAsUser"] } else { &sc["runAsUser"] };
        let seccomp = if sc["seccompProfile"].is_null() { &pod_sc["seccompProfile"] } else { &sc["seccompProfile"] };
        if *non_root != true || *user == 0 {
            refused.push(format!("{name}: runAsNonRoot {non_root}, runAsUser {user}"));
        }
        if !["RuntimeDefault", "Localhost"].contains(&seccomp["type"].as_str().unwrap_or_default()) {
            refused.push(format!("{name}: seccompProfile {seccomp}"));
        }
        if sc["allowPrivilegeEscalation"] != false || sc["privileged"] == true {
            refused.push(format!("{name}: allowPrivilegeEscalation {}", sc["allowPrivilegeEscalation"]));
        }
        let caps = &sc["capabilities"];
        let drops_all = caps["drop"].as_array().is_some_and(|d| d.iter().any(|c| c == "ALL"));
        let adds = caps["add"].as_array().into_iter().flatten().filter(|c| *c != "NET_BIND_SERVICE").count();
        if !drops_all || adds > 0 {
            refused.push(format!("{name}: capabilities {caps}"));
        }
    }
    refused
}

/// The benchmark Job and the Pod that reads its results meet `restricted`, in a namespace
/// that enforces it; the Job writes its JSON to a file on a volume, where no log line
/// can mix into it. The agents' DaemonSet departs from it only where it must: the node's
/// directory (hostPath) and the root init container that gives it to fathom's user.
#[test]
fn the_job_and_its_reader_meet_podsecurity_restricted() {
    let docs = manifests();
    let kind = |file: &str, kind: &str| {
        docs.iter().find(|(f, d)| f == file && d["kind"] == kind).map(|(_, d)| d).unwrap_or_else(|| panic!("no {kind}"))
    };
    let namespace = kind("fathom-job.yaml", "Namespace");
    assert_eq!(namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"], "restricted", "{namespace}");
    let job = &kind("fathom-job.yaml", "Job")["spec"]["template"]["spec"];
    let reader = &kind("fathom-results.yaml", "Pod")["spec"];
    for (what, pod) in [("the Job", job), ("the reader", reader)] {
        assert_eq!(not_restricted(pod), Vec::<String>::new(), "{what}: {pod}");
        assert_eq!(pod["securityContext"]["runAsUser"], 10001, "the image's user");
    }
    let args: Vec<&str> =
        job["containers"][0]["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    let json = args.iter().position(|a| *a == "--json").map(|i| args[i + 1]).unwrap();
    let mounts = job["containers"][0]["volumeMounts"].as_array().unwrap();
    assert!(
        mounts.iter().any(|m| m["name"] == "results" && json.starts_with(m["mountPath"].as_str().unwrap())),
        "--json {json}: not a file on the results volume ({mounts:?})"
    );
    let agents = &kind("fathom-agent.yaml", "DaemonSet")["spec"]["template"]["spec"];
    let refused = not_restricted(agents);
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert!(refused[0].starts_with("volume \"data\"") && refused[1..].iter().all(|r| r.starts_with("\"own-data\"")));
    // the image runs as that user, by number (Kubernetes cannot check a name for runAsNonRoot)
    let dockerfile =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Dockerfile")).unwrap();
    assert!(dockerfile.lines().any(|l| l == "USER 10001:10001"), "{dockerfile}");
    // with the programs of the built-ins: pgbench is in the server's package on Debian 12
    for package in [" fio ", " iperf3 ", " postgresql-15 ", " sysbench ", " mariadb-server-core "] {
        assert!(dockerfile.contains(package), "no{package}in the image");
    }
}
