//! Observers: every run records the host's CPU, fathom's own and the devices under its
//! targets per second; `observe: prometheus:` stores what another Prometheus (the real
//! one, scraping Debian's node exporter on loopback) says while the run goes.

use crate::common::servers::{free_port, https_proxy, node_exporter, prometheus, query, tls_certificates};
use crate::common::{Scratch, ops, text};

fn mean(v: &[(i64, f64)]) -> f64 {
    v.iter().map(|p| p.1).sum::<f64>() / v.len() as f64
}

#[test]
fn host_cpu_fathom_cpu_and_the_device_are_recorded_each_second() {
    let s = Scratch::new("observe-local");
    let scenario = s
        .scenario("name: seen\nworkloads:\n  r: {target: TARGET, size: 32m, rw: randread, iodepth: 8, duration: 4s}\n");
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("observed (mean over the run)") && stdout.contains("%iowait"), "{stdout}");
    let obs = s.observations();

    // the host's CPU shares of each second add up to 100 %
    let host: Vec<&str> = vec!["usr_pct", "sys_pct", "iowait_pct", "steal_pct", "idle_pct"];
    let shares: Vec<&Vec<(i64, f64)>> = host.iter().map(|n| &obs[&("host".to_string(), n.to_string())]).collect();
    assert!(shares[0].len() >= 4, "{} seconds of host CPU", shares[0].len());
    for (i, (t, _)) in shares[0].iter().enumerate() {
        let total: f64 = shares.iter().map(|s| s[i].1).sum();
        assert!((total - 100.0).abs() < 0.5, "second {t}: {total}%");
    }
    // fathom did IO all along: it used CPU, and the host was not idle
    let own = &obs[&("fathom".to_string(), "cpu_cores".to_string())];
    assert!(mean(own) > 0.01 && mean(own) < 2.5, "fathom used {} cores", mean(own));

    // the device under the target saw at least fathom's reads, of about its size (other
    // processes may add to it, never take away)
    let show = s.show_json();
    let iops = ops(&show, "r")[0]["iops"].as_f64().unwrap();
    let devices: Vec<&String> = obs.keys().map(|(src, _)| src).filter(|src| src.starts_with("device:")).collect();
    if let Some(dev) = devices.first() {
        let r_s = &obs[&(dev.to_string(), "r_s".to_string())];
        // the seconds fathom measured: the 4 s of the run, not the layout before
        let busy: Vec<(i64, f64)> = r_s.iter().copied().filter(|p| p.1 > 0.0).collect();
        let best = busy.iter().map(|p| p.1).fold(0.0, f64::max);
        assert!(best >= 0.9 * iops, "{dev}: at most {best} r/s for fathom's {iops} IOPS");
        let size = mean(&obs[&(dev.to_string(), "areq_sz_kB".to_string())]);
        assert!((3.5..64.0).contains(&size), "{dev}: requests of {size} kB for 4k reads");
        let observed = show["observed"].as_array().unwrap();
        assert!(observed.iter().any(|o| o["source"] == dev.as_str() && o["name"] == "util_pct"));
    } else {
        // a target on a filesystem without a block device: nothing to say of devices
        let fs = show["run"]["environment"]["targets"][0]["filesystem"].as_str().unwrap_or("");
        assert!(["tmpfs", "overlay", "zfs", "btrfs"].contains(&fs), "no device found under a {fs} target");
    }
}

#[test]
fn a_remote_prometheus_is_queried_while_the_run_goes() {
    let s = Scratch::new("observe-remote");
    let (node_port, prom_port) = (free_port(), free_port());
    let _node = node_exporter(node_port);
    let _prom = prometheus(&s.dir, prom_port, "node", &[format!("127.0.0.1:{node_port}")]);
    // wait for the first scrape, so the run's queries have data
    let started = std::time::Instant::now();
    while query(prom_port, "up").as_array().unwrap().is_empty() {
        assert!(started.elapsed().as_secs() < 30, "prometheus never scraped the node exporter");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let scenario = s.scenario(&format!(
        "name: remote\nobserve:\n  prometheus:\n    url: http://127.0.0.1:{prom_port}\n    interval: 1s\n    queries:\n      \
         cpus: count(node_cpu_seconds_total{{mode=\"idle\"}})\n      up: up\n      \
         reads: sum(rate(node_disk_reads_completed_total[5s]))\n\
         workloads:\n  r: {{target: TARGET, size: 16m, rw: randread, iodepth: 2, duration: 4s}}\n"
    ));
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let obs = s.observations();
    let get = |name: &str| obs.get(&("prometheus".to_string(), name.to_string())).cloned().unwrap_or_default();
    // node exporter counts the CPUs of this machine, as /proc/stat does
    let cpus = get("cpus");
    assert!(cpus.len() >= 3, "queried every second: {cpus:?}");
    let here = std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("cpu") && !l.starts_with("cpu "))
        .count();
    assert!(cpus.iter().all(|p| p.1 == here as f64), "{cpus:?} vs {here} CPUs");
    // a vector's series keep their labels in the stored name
    let up = obs.keys().find(|(src, n)| src == "prometheus" && n.starts_with("up{")).expect("the up series");
    assert!(up.1.contains(&format!("instance=\"127.0.0.1:{node_port}\"")), "{up:?}");
    assert!(!get("reads").is_empty());
}

/// A site's Prometheus behind HTTPS with a token: queried with the token from its file
/// and the site's CA, or with basic auth's password from the environment; refused, and
/// said so, without the CA or with a wrong token. No credential reaches the store or
/// the terminal.
#[test]
fn an_https_prometheus_is_queried_with_a_token_or_a_password_and_its_ca() {
    let s = Scratch::new("observe-https");
    let (prom_port, proxy_port) = (free_port(), free_port());
    let _prom = prometheus(&s.dir, prom_port, "self", &[format!("127.0.0.1:{prom_port}")]);
    tls_certificates(&s.dir);
    let basic = "Basic YmVuY2g6cHctU2VrcjF0"; // bench:pw-Sekr1t
    let _proxy = https_proxy(&s.dir, proxy_port, prom_port, &["Bearer t0ken-Sekr1t", basic]);
    let token = s.dir.join("token");
    std::fs::write(&token, "t0ken-Sekr1t\n").unwrap();
    let wrong = s.dir.join("wrong");
    std::fs::write(&wrong, "not-it\n").unwrap();
    let ca = s.dir.join("ca.pem").display().to_string();
    let run = |auth: &str| {
        let scenario = s.scenario(&format!(
            "name: https\nobserve:\n  prometheus:\n    url: https://127.0.0.1:{proxy_port}\n    interval: 1s\n{auth}    \
             queries:\n      one: vector(1)\nworkloads:\n  r: {{engine: null, rw: randread, rate_iops: 1000, duration: 3s}}\n"
        ));
        let out = s.fathom(&["run", scenario.to_str().unwrap()]).env("PROM_PASSWORD", "pw-Sekr1t").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let said = text(&out);
        assert!(!said.contains("Sekr1t"), "{said}");
        let run = s.show_json()["run"]["id"].as_i64().unwrap();
        let stored: i64 = s
            .db()
            .query_row("SELECT count(*) FROM observations WHERE run_id = ?1 AND source = 'prometheus'", [run], |r| {
                r.get(0)
            })
            .unwrap();
        (stored, said)
    };
    let with_token = format!("    bearer_token_file: {}\n    tls_config: {{ca_file: {ca}}}\n", token.display());
    let (stored, said) = run(&with_token);
    assert!(stored >= 2, "{stored} values stored: {said}");
    let with_password = format!(
        "    basic_auth: {{username: bench, password_env: PROM_PASSWORD}}\n    tls_config: {{ca_file: {ca}}}\n"
    );
    let (stored, said) = run(&with_password);
    assert!(stored >= 2, "{stored} values stored: {said}");
    // the site's CA is not among Mozilla's: without it, nothing is trusted, and the run says how to fix it
    let (stored, said) = run(&format!("    bearer_token_file: {}\n", token.display()));
    assert_eq!(stored, 0, "{said}");
    assert!(said.contains("ca_file"), "{said}");
    let (stored, said) =
        run(&format!("    bearer_token_file: {}\n    tls_config: {{ca_file: {ca}}}\n", wrong.display()));
    assert_eq!(stored, 0, "{said}");
    assert!(said.contains("HTTP 401: the server refused fathom's credentials"), "{said}");
    let db = std::fs::read(s.dir.join("results/fathom.db")).unwrap();
    assert!(!String::from_utf8_lossy(&db).contains("Sekr1t"), "a credential in the store");

    // `wait_until: {http: ...}` reads with the same client and keys: Prometheus ready over
    // plain HTTP; the proxy's certificate, of no authority a probe trusts, never ready
    // without its CA; with it and a token from the environment, ready (a probe that is to
    // be ready, or must see the server's answer, may take what a busy machine takes; one
    // that never is and needs no answer gives up in 5 s)
    let probe = |url: &str, keys: &str, timeout: &str| {
        let scenario = s.scenario(&format!(
            "name: probe\nworkloads:\n  r: {{engine: null, rw: read, duration: 1s}}\n\
             timeline:\n  - wait_until: {{http: '{url}', timeout: {timeout}, interval: 200ms{keys}}}\n  - start: r\n"
        ));
        s.fathom(&["run", scenario.to_str().unwrap()]).env("PROBE_TOKEN", "t0ken-Sekr1t").output().unwrap()
    };
    let (ready, never, answered) = ("60s", "5s", "10s");
    let out = probe(&format!("http://127.0.0.1:{prom_port}/-/ready"), "", ready);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let https = format!("https://127.0.0.1:{proxy_port}/-/ready");
    let out = probe(&https, "", never);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("tls_config: {ca_file: PATH}"), "{}", text(&out));
    let out = probe(&https, &format!(", bearer_token_env: PROBE_TOKEN, tls_config: {{ca_file: {ca}}}"), ready);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!text(&out).contains("Sekr1t"), "{}", text(&out));
    let wrong_token = format!(", bearer_token_file: {}, tls_config: {{ca_file: {ca}}}", wrong.display());
    // (the probe says the last answer it had, though its last attempt, cut short by its
    // timeout, had none)
    let out = probe(&https, &wrong_token, answered);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("HTTP 401"), "{}", text(&out));
    let db = std::fs::read(s.dir.join("results/fathom.db")).unwrap();
    assert!(!String::from_utf8_lossy(&db).contains("Sekr1t"), "a credential in the store");
}

/// Credentials are given where they are kept, never in the scenario, which is stored.
#[test]
fn a_token_or_password_in_the_scenario_is_refused_naming_its_key() {
    let s = Scratch::new("observe-inline-secret");
    for (auth, key) in [
        ("    bearer_token: abc\n", "observe.prometheus.bearer_token: a token would be stored"),
        ("    basic_auth: {username: u, password: abc}\n", "observe.prometheus.basic_auth.password: a password"),
        ("    basic_auth: {username: u, password_env: FATHOM_NO_SUCH_VAR}\n", "$FATHOM_NO_SUCH_VAR is not set"),
        (
            "    tls_config: {ca_file: /dev/null}\n",
            "observe.prometheus.tls_config.ca_file: /dev/null: no PEM certificate",
        ),
        ("    bearer_token_file: /nonexistent/token\n", "observe.prometheus.bearer_token_file: `/nonexistent/token`"),
        (
            "    bearer_token_env: FATHOM_NO_SUCH_VAR\n",
            "observe.prometheus.bearer_token_env: $FATHOM_NO_SUCH_VAR is not set",
        ),
    ] {
        let scenario = s.scenario(&format!(
            "name: bad\nobserve:\n  prometheus:\n    url: https://127.0.0.1:9\n{auth}    queries: {{a: up}}\n\
             workloads:\n  r: {{engine: null, rw: read, duration: 1s}}\n"
        ));
        let out = s.run(&["run", scenario.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(key), "{err}");
        assert!(!err.contains("abc"), "{err}");
    }
}

#[test]
fn a_bad_observe_section_names_the_key() {
    let s = Scratch::new("observe-bad");
    let scenario = s.scenario(
        "name: bad\nobserve:\n  prometheus:\n    url: ftp://example.com\n    queries: {a: up}\n\
         workloads:\n  r: {target: TARGET, size: 16m, rw: read, duration: 1s}\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "scenario.yaml:4: observe.prometheus.url: `ftp://example.com`: expected an http:// or https:// URL"
        ),
        "{err}"
    );
}
