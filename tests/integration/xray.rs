//! Nutanix X-Ray scenarios run as they are (`fathom run DIR --hosts hosts.yaml`): the
//! project's own scenario directories under tests/data/xray/, run by the real binary on
//! local-transport hosts of an inventory the test writes.

use crate::common::{Scratch, text};

fn dir(name: &str) -> String {
    format!("{}/tests/data/xray/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// An inventory of `n` local hosts `h0`, `h1`, ... each with a target of its own.
fn inventory(s: &Scratch, n: usize) -> String {
    inventory_of_disks(s, n, 0)
}

/// An inventory of `n` local hosts, each with `disks` directory targets
/// `host-hI/dK` (or, with 0, the one directory `host-hI`).
fn inventory_of_disks(s: &Scratch, n: usize, disks: usize) -> String {
    let mut text = String::from("hosts:\n");
    for i in 0..n {
        let host = s.dir.join(format!("host-h{i}"));
        let targets: Vec<String> = match disks {
            0 => vec![host.display().to_string()],
            _ => (0..disks).map(|k| host.join(format!("d{k}")).display().to_string()).collect(),
        };
        targets.iter().for_each(|t| std::fs::create_dir_all(t).unwrap());
        text.push_str(&format!("  h{i}: {{transport: local, target: [{}]}}\n", targets.join(", ")));
    }
    let path = s.dir.join("hosts.yaml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// The run's workloads (in order), each with the hosts its workers ran on.
fn placed(s: &Scratch, run: i64) -> Vec<(String, String)> {
    let db = s.db();
    let mut q = db
        .prepare(
            "SELECT w.name, group_concat(DISTINCT k.host) FROM workloads w JOIN workers k \
             ON k.run_id = w.run_id AND k.workload_idx = w.idx WHERE w.run_id = ?1 GROUP BY w.idx ORDER BY w.idx",
        )
        .unwrap();
    q.query_map([run], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

fn labels(s: &Scratch, run: i64, sql: &str) -> Vec<String> {
    let db = s.db();
    let mut q = db.prepare(sql).unwrap();
    q.query_map([run], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

#[test]
fn a_scenario_runs_placed_on_node_slices_and_converts_to_the_same_run() {
    let s = Scratch::new("xray-colocation");
    let hosts = inventory(&s, 3);
    let colocation = dir("colocation");
    // the Jinja loop over DSS nodes runs once: `dss_nodes` is a var, set here
    let args = ["--hosts", &hosts, "--set", "dss_nodes=1", "--set", "size=1m"];
    let lint = s.run(&[&["lint", &colocation][..], &args].concat());
    assert!(lint.status.success(), "{}", text(&lint));
    let shown = String::from_utf8_lossy(&lint.stdout);
    assert!(shown.contains("VM group DSS 0: hosts [\"1:2\"]"), "{shown}");
    assert!(
        shown
            .contains("no-ops (VMs are not built here): cluster.CleanUp, vm_group.CloneFromTemplate, vm_group.PowerOn"),
        "{shown}"
    );

    let out = s.run(&[&["run", &colocation][..], &args].concat());
    assert!(out.status.success(), "{}", text(&out));
    let expected = [
        ("OLTP:data", "h0"),
        ("OLTP:log", "h0"),
        ("OLTP Warmup:data", "h0"),
        ("OLTP Warmup:log", "h0"),
        ("DSS 0:scan", "h1"),
    ];
    let ran = placed(&s, 1);
    let want: Vec<(String, String)> = expected.iter().map(|(w, h)| (w.to_string(), h.to_string())).collect();
    assert_eq!(ran, want);
    // setup's warm-up is measured, in phases labelled `setup`; the run's are not
    let phases = labels(&s, 1, "SELECT label FROM phases WHERE run_id = ?1 ORDER BY idx");
    assert_eq!(phases.first().map(String::as_str), Some("setup"), "{phases:?}");
    assert!(phases.iter().skip_while(|p| *p == "setup").all(|p| p != "setup"), "{phases:?}");
    assert!(phases.len() >= 3, "{phases:?}");
    // prefill of OLTP's jobs, and the annotated start as a mark
    let events = labels(&s, 1, "SELECT kind || ' ' || label FROM events WHERE run_id = ?1 ORDER BY idx");
    assert!(events.iter().any(|e| e.starts_with("prefill") && e.contains("OLTP:data")), "{events:?}");
    assert!(events.iter().any(|e| e == "mark workload.Start DSS 0"), "{events:?}");
    // a scan joining the OLTP load is interference, read before -> during, not a curve
    let show = s.show_json();
    let interference = show["analysis"]["interference"].as_array().unwrap();
    assert!(
        interference.iter().any(|r| r["workload"] == "OLTP:data" && r["during"] != r["before"]),
        "{interference:?}"
    );
    assert!(show["analysis"]["curve"].is_null(), "{}", show["analysis"]["curve"]);

    // `fathom convert` prints the scenario that runs the same workloads and phases
    let convert = s.run(&[&["convert", &colocation][..], &args[..4]].concat());
    assert!(convert.status.success(), "{}", text(&convert));
    let yaml = s.dir.join("converted.yaml");
    std::fs::write(&yaml, &convert.stdout).unwrap();
    let again = s.run(&["run", yaml.to_str().unwrap(), "--hosts", &hosts, "--set", "size=1m"]);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(placed(&s, 2), want);
    assert_eq!(labels(&s, 2, "SELECT label FROM phases WHERE run_id = ?1 ORDER BY idx"), phases);
}

#[test]
fn a_var_outside_its_bounds_is_refused_naming_it() {
    let s = Scratch::new("xray-bounds");
    let hosts = inventory(&s, 3);
    let out = s.run(&["lint", &dir("colocation"), "--hosts", &hosts, "--set", "oltp_iops=1"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--set oltp_iops=1: var `oltp_iops` is 1: below its min 10"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn without_an_inventory_the_scenario_is_refused_saying_how_to_give_one() {
    let s = Scratch::new("xray-no-hosts");
    let out = s.run(&["run", &dir("colocation")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give --hosts hosts.yaml"), "{}", text(&out));
}

#[test]
fn an_infrastructure_step_is_refused_without_hooks_and_runs_with_them() {
    let s = Scratch::new("xray-hooks");
    let hosts = inventory(&s, 2);
    let power = dir("power-loss");
    let out = s.run(&["run", &power, "--hosts", &hosts]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    // the hooks feature's one message, listing each missing hook once
    assert!(err.contains("needs hooks for: nodes.PowerOff, nodes.PowerOn; give them with --hooks FILE"), "{err}");
    assert!(!s.dir.join("results/fathom.db").exists(), "refused before anything ran");
    // lint shows what each step became before refusing
    let lint = s.run(&["lint", &power, "--hosts", &hosts]);
    assert_eq!(lint.status.code(), Some(2), "{}", text(&lint));
    let shown = String::from_utf8_lossy(&lint.stdout);
    assert!(shown.contains(r#"{hook: "nodes.PowerOff", args: {nodes: "0,1"}, hosts: ["0:2"]}"#), "{shown}");
    assert!(shown.contains("VM group Group: hosts [\"0:2\"] (count_per_node 2), 2 per host"), "{shown}");

    // with a hooks file, each hook runs told its step's name, arguments and hosts
    let hooks = s.dir.join("hooks.yaml");
    let env = s.dir.join("hook-env");
    std::fs::write(
        &hooks,
        format!(
            "hooks:\n  nodes.PowerOff: 'env | grep ^FATHOM_ | sort > {0}/off.env'\n  nodes.PowerOn: 'env | grep ^FATHOM_ | sort > {0}/on.env'\n",
            env.display()
        ),
    )
    .unwrap();
    std::fs::create_dir_all(&env).unwrap();
    let args = ["run", &power, "--hosts", &hosts, "--hooks", hooks.to_str().unwrap(), "--set", "size=1m"];
    let out = s.run(&args);
    assert!(out.status.success(), "{}", text(&out));
    for (file, hook) in [("off.env", "nodes.PowerOff"), ("on.env", "nodes.PowerOn")] {
        let said = std::fs::read_to_string(env.join(file)).unwrap();
        assert!(said.contains(&format!("FATHOM_HOOK={hook}\n")), "{said}");
        assert!(said.contains("FATHOM_HOSTS=h0 h1\n"), "{said}");
        assert!(said.contains("FATHOM_ARG_NODES=0,1\n"), "{said}");
    }
    let events = labels(&s, 1, "SELECT kind || ' ' || label FROM events WHERE run_id = ?1 ORDER BY idx");
    assert!(events.iter().any(|e| e.contains("hook nodes.PowerOff")), "{events:?}");
}

#[test]
fn a_mistake_in_the_scenario_is_located_in_its_rendered_text() {
    let s = Scratch::new("xray-located");
    let hosts = inventory(&s, 2);
    let scenario = s.dir.join("bad");
    std::fs::create_dir_all(&scenario).unwrap();
    let template = "name: bad\nvms:\n{% for i in range(2) %}\n  - G{{ i }}:\n      nodes: {{ i }}\n      cpus: 2\n{% endfor %}\n\
                workloads: []\nsetup: []\nrun: []\n";
    std::fs::write(scenario.join("test.yml"), template).unwrap();
    let out = s.run(&["lint", scenario.to_str().unwrap(), "--hosts", &hosts]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    // line 6 of the rendered text: the loop's first VM group
    assert!(err.contains("test.yml (rendered):6: vms[0].G0: unknown key `cpus`"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_group_on_a_node_slice_writes_its_vms_data_disks_as_each_hosts_targets() {
    let s = Scratch::new("xray-disks");
    let hosts = inventory_of_disks(&s, 3, 6);
    let disks = dir("disks");
    let out = s.run(&["run", &disks, "--hosts", &hosts, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    // /dev/sdb, /dev/sdd and /dev/sdg are each host's targets 0, 2 and 5, on nodes 1 and 2
    for host in 0..3 {
        for disk in 0..6 {
            let file = s.dir.join(format!("host-h{host}/d{disk}/fathom-Disks.dat"));
            let written = host > 0 && [0, 2, 5].contains(&disk);
            assert_eq!(file.exists(), written, "{}", file.display());
        }
    }
    let ran = placed(&s, 1);
    assert!(ran.iter().all(|(_, h)| h == "h1,h2"), "{ran:?}");
    // the result's band, per VM in X-Ray (floor 1), is the group's sum: 2 VMs
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Disk IOPS in 50% band [2, 2,000,000,000] IOPS for "), "{stdout}");
    assert!(stdout.contains(">= 50%: PASS"), "{stdout}");
    // the view is of the run's workload, not setup's warm-up; the CPU counter is the hosts'
    let show = s.show_json();
    let views = show["results"].as_array().unwrap();
    assert_eq!(
        views[0]["measure"]["workloads"]["names"],
        serde_json::json!(["Load:first", "Load:third", "Load:sixth"])
    );
    assert_eq!(views[1]["name"], "Cluster CPU Usage (host CPU busy %)");
    // and the network counter the hosts' interfaces, received bytes per second as KiB
    let net = &views[2];
    assert_eq!(
        (&net["measure"]["observed"], &net["unit"]),
        (&serde_json::json!("net_received"), &"KiB/s".into()),
        "{net}"
    );
    assert!(net["series"].as_array().unwrap().iter().all(|p| p["value"].as_f64().unwrap() >= 0.0), "{net}");

    // a floor no second reaches fails the band, its share printed
    let out = s.run(&["run", &disks, "--hosts", &hosts, "-q", "--set", "floor=100000000"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Disk IOPS in 50% band [200,000,000, 2,000,000,000] IOPS for 0.0% of "), "{stdout}");
    assert!(stdout.contains(" s >= 50%: FAIL"), "{stdout}");
}

#[test]
fn more_data_disks_than_the_hosts_have_targets_is_refused_naming_the_disk() {
    let s = Scratch::new("xray-few-disks");
    let hosts = inventory_of_disks(&s, 3, 3);
    let out = s.run(&["lint", &dir("disks"), "--hosts", &hosts]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("uses /dev/sdg, the VMs' data disk 6 (from /dev/sdb), but a host of the group has 3 targets"),
        "{err}"
    );
    // one directory per host: the disks are files in it
    let one = inventory(&s, 3);
    let out = s.run(&["lint", &dir("disks"), "--hosts", &one]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("/dev/sdg -> files in the host's target"), "{}", text(&out));
}

#[test]
fn a_time_scale_shortens_an_x_ray_study_and_is_recorded() {
    let s = Scratch::new("xray-time-scale");
    let hosts = inventory(&s, 1);
    let started = std::time::Instant::now();
    let out = s.run(&["run", &dir("long"), "--hosts", &hosts, "--time-scale", "0.005"]);
    assert!(out.status.success(), "{}", text(&out));
    // 600 s at 0.005 is 3 s (generous: a loaded machine)
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "took {:?}", started.elapsed());
    let show = s.show_json();
    assert_eq!(show["run"]["time_scale"], 0.005);
    let w = &show["workloads"][0];
    assert_eq!(w["end_t"].as_i64().unwrap() - w["start_t"].as_i64().unwrap(), 3, "{w}");
}

#[test]
fn a_playbook_scenario_runs_its_hook_alone_never_told_the_password() {
    let s = Scratch::new("xray-playbook");
    let hosts = inventory(&s, 2);
    let hooks = s.dir.join("hooks.yaml");
    let env = s.dir.join("playbook.env");
    std::fs::write(&hooks, format!("hooks:\n  playbook.Run: 'env | grep ^FATHOM_ | sort > {}'\n", env.display()))
        .unwrap();
    let out = s.run(&["run", &dir("playbook"), "--hosts", &hosts, "--hooks", hooks.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let said = std::fs::read_to_string(&env).unwrap();
    assert!(said.contains("FATHOM_HOOK=playbook.Run\n") && said.contains("FATHOM_ARG_FILENAME=load.yml\n"), "{said}");
    assert!(said.contains("FATHOM_ARG_REMOTE_USER=tester\n"), "{said}");
    assert!(!said.contains("s3cret-pass"), "{said}");
    // nor stored: not in the run's scenario text or events
    let db = s.db();
    let text: String = db.query_row("SELECT scenario_text FROM runs WHERE id = 1", [], |r| r.get(0)).unwrap();
    assert!(!text.contains("s3cret") && text.contains("playbook.Run"), "{text}");
    let events = labels(&s, 1, "SELECT kind || ' ' || label FROM events WHERE run_id = ?1 ORDER BY idx");
    assert!(events.iter().all(|e| !e.contains("s3cret")), "{events:?}");
}
