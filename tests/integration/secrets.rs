//! Passwords never get in: a `dsn` holding one, in any form libpq reads, is refused
//! before anything runs; and whatever looks like a password in text a run keeps (a
//! hook's command line and output, an error) is masked in the store, `show`, the
//! report, stdout and stderr. Checked on the real binary, the store's bytes included.

use crate::common::servers::{self, Postgres};
use crate::common::{Scratch, text};
use std::path::Path;
use std::process::Output;

/// Every file under `dir` (the store with its WAL, the runs' directories) whose bytes
/// contain `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path)
                && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

fn said(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn a_password_in_any_form_of_dsn_is_refused_and_never_kept_or_printed() {
    let s = Scratch::new("secrets-dsn");
    // a server with trust authentication: a password given would be ignored and the run
    // would go on, keeping it
    let pg = Postgres::start(&s.dir.join("pg"), servers::free_port());
    let base = pg.dsn("postgres");
    let at = format!("127.0.0.1:{}", pg.port);
    let forms = [
        (format!("{base} password = 'Sekr1tA'"), "Sekr1tA", "PGPASSWORD"),
        (format!("{base} password='pass Sekr1tB'"), "Sekr1tB", "PGPASSWORD"),
        (format!("postgresql://tester:Sekr1tC@{at}/postgres"), "Sekr1tC", "PGPASSWORD"),
        (format!("postgres://{at}/postgres?sslmode=require&password=Sekr1tD"), "Sekr1tD", "PGPASSWORD"),
        (format!("postgres://tester@{at}/postgres?%70assword=Sekr1tE"), "Sekr1tE", "PGPASSWORD"),
        (format!("{base} sslpassword=Sekr1tF"), "Sekr1tF", "service file"),
        (format!("{base} PASSWORD=Sekr1tG"), "Sekr1tG", "looks like a password"),
    ];
    for (dsn, secret, hint) in &forms {
        // in the scenario file (YAML's single quotes double a quote inside)
        let path = s.scenario(&format!(
            "name: pg\nworkloads:\n  w:\n    driver: pgbench\n    duration: 1s\n    dsn: '{}'\n",
            dsn.replace('\'', "''")
        ));
        let out = s.run(&["run", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{dsn}: {}", text(&out));
        let all = said(&out);
        assert!(all.contains(hint) && all.contains("workloads.w.dsn"), "{dsn}: {all}");
        assert!(!all.contains(secret), "{dsn}: {all}");
        // on the command line: the message quotes the `--set`, masked
        let plain = s.scenario("name: pg\nworkloads:\n  w:\n    driver: pgbench\n    duration: 1s\n");
        let set = format!("dsn={dsn}");
        let out = s.run(&["run", plain.to_str().unwrap(), "--set", &set]);
        assert_eq!(out.status.code(), Some(2), "{dsn}: {}", text(&out));
        let all = said(&out);
        assert!(all.contains(hint) && all.contains("***"), "{dsn}: {all}");
        assert!(!all.contains(secret), "{dsn}: {all}");
    }
    // nothing ran, so nothing was recorded; and no byte of a secret is anywhere
    let results = s.dir.join("results");
    if results.join("fathom.db").exists() {
        let runs: i64 = s.db().query_row("SELECT count(*) FROM runs", [], |r| r.get(0)).unwrap();
        assert_eq!(runs, 0);
    }
    for (_, secret, _) in &forms {
        assert_eq!(files_holding(&results, secret), Vec::<String>::new(), "{secret}");
    }
}

#[test]
fn what_looks_like_a_password_is_masked_in_the_store_show_and_report() {
    let s = Scratch::new("secrets-redact");
    // hooks whose command lines and output hold secrets in several forms, the last one
    // failing so that its output becomes the run's error
    let path = s.scenario(
        "name: hooks\n\
         workloads:\n  w: {engine: null, rw: randread, size: 16m, duration: 1s}\n\
         timeline:\n\
         \x20 - exec: \"PGPASSWORD=Sekr1tA true\"\n\
         \x20 - exec: \"echo 'host=db password = Sekr1tB'\"\n\
         \x20 - start: w\n\
         \x20 - mark: \"postgresql://u:Sekr1tC@db/x\"\n\
         \x20 - exec: \"echo 'postgres://db/x?%70assword=Sekr1tD' >&2; exit 3\"\n",
    );
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let secrets = ["Sekr1tA", "Sekr1tB", "Sekr1tC", "Sekr1tD"];
    let all = said(&out);
    for secret in secrets {
        assert!(!all.contains(secret), "{secret} printed: {all}");
    }
    // masked where they were, the rest kept
    let db = s.db();
    let (scenario, error): (String, String) =
        db.query_row("SELECT scenario_text, error FROM runs", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert!(scenario.contains("PGPASSWORD=*** true") && scenario.contains("postgresql://u:***@db/x"), "{scenario}");
    assert!(error.contains("exit 3") && error.contains("?%70assword=***"), "{error}");
    let details: Vec<String> = db
        .prepare("SELECT label || ' ' || detail FROM events ORDER BY idx")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(details[1].contains("password = ***"), "{details:?}");
    drop(db);
    let show = s.run(&["show", "last"]);
    let page = s.dir.join("report.html");
    let report = s.run(&["report", "-o", page.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("***"), "the report shows the masked scenario");
    for secret in secrets {
        assert!(!said(&show).contains(secret), "{secret} in show: {}", said(&show));
        assert!(!html.contains(secret), "{secret} in the report");
        assert_eq!(files_holding(&s.dir.join("results"), secret), Vec::<String>::new(), "{secret}");
    }
}

/// Each form of issue #29's item 5, with its secret: command-line options, `KEY=`
/// forms, an `Authorization` header, and hook arguments under secret-like keys (one in
/// YAML's block form, one quoted).
const FORMS: &str = "name: forms
workloads:
  w: {engine: null, rw: randread, size: 16m, duration: 1s}
timeline:
  - exec: \"true ipmitool -H h -U admin -P Sekr1tA power status\"
  - exec: \"echo mysql -pSekr1tB --password Sekr1tC\"
  - exec: \"echo curl -u user:Sekr1tD -H 'Authorization: Bearer Sekr1tE' 'http://h/?token=Sekr1tF&secret=Sekr1tG&api_key=Sekr1tH'\"
  - hook: nodes.PowerOff
    args:
      ipmi_password: Sekr1tI
      password: \"Sekr1tJ\"
      node: 1
  - start: w
";

#[test]
fn every_secret_form_is_masked_in_the_store_show_json_and_report_yet_hooks_get_it() {
    let s = Scratch::new("secrets-forms");
    let hosts = s.local_inventory(&["h1"]);
    let hooks = s.dir.join("hooks.yaml");
    let env = s.dir.join("hook.env");
    std::fs::write(&hooks, format!("hooks:\n  nodes.PowerOff: env | grep ^FATHOM_ARG_ | sort > {}\n", env.display()))
        .unwrap();
    let path = s.scenario(FORMS);
    let out = s.run(&["run", path.to_str().unwrap(), "--hosts", &hosts, "--hooks", hooks.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    // the hook is handed its arguments as written: masking is for what is kept
    let handed = std::fs::read_to_string(&env).unwrap();
    assert!(handed.contains("FATHOM_ARG_IPMI_PASSWORD=Sekr1tI\n"), "{handed}");
    let secrets: Vec<String> = ('A'..='J').map(|c| format!("Sekr1t{c}")).collect();
    let show = s.run(&["show", "last", "--json"]);
    assert!(show.status.success(), "{}", text(&show));
    let page = s.dir.join("report.html");
    let report = s.run(&["report", "-o", page.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report));
    let html = std::fs::read_to_string(&page).unwrap();
    for secret in &secrets {
        assert!(!said(&out).contains(secret), "{secret} printed: {}", said(&out));
        assert!(!said(&show).contains(secret), "{secret} in show --json: {}", said(&show));
        assert!(!html.contains(secret), "{secret} in the report");
        assert_eq!(files_holding(&s.dir.join("results"), secret), Vec::<String>::new(), "{secret}");
    }
    // masked where they were, quotes kept, and the stored scenario reads as it was written
    let scenario: String = s.db().query_row("SELECT scenario_text FROM runs", [], |r| r.get(0)).unwrap();
    for masked in ["-P ***", "-p***", "--password ***", "user:***", "Bearer ***", "token=***", "ipmi_password: \"***\""]
    {
        assert!(scenario.contains(masked), "{masked} not in {scenario}");
    }
    assert!(scenario.contains("password: \"***\"") && scenario.contains("api_key=***'\""), "{scenario}");
    assert_eq!(
        scenario,
        stored_scenario_lints(&s, &scenario, &["--hosts", &hosts, "--hooks", hooks.to_str().unwrap()])
    );
}

/// Writes a stored scenario to a file and lints it: it must still parse. Returns it.
fn stored_scenario_lints(s: &Scratch, stored: &str, args: &[&str]) -> String {
    let again = s.dir.join("stored.yaml");
    std::fs::write(&again, stored).unwrap();
    let mut lint = vec!["lint", again.to_str().unwrap()];
    lint.extend_from_slice(args);
    let out = s.run(&lint);
    assert_eq!(out.status.code(), Some(0), "the stored scenario no longer reads: {}\n{stored}", text(&out));
    stored.to_string()
}

#[test]
fn a_scenario_a_mask_would_break_is_stored_as_read_and_still_parses() {
    let s = Scratch::new("secrets-parse");
    // a value after `password=` may come after a newline (libpq's rule): the mask falls
    // on the next line's key, which would leave the text unreadable
    let path = s.scenario(
        "name: parse\n\
         workloads:\n  w: {engine: null, rw: randread, size: 16m, duration: 1s}\n\
         timeline:\n\
         \x20 - exec: echo password=\n\
         \x20   timeout: 5s\n\
         \x20 - exec: \"PGPASSWORD=Sekr1tA true\"\n\
         \x20 - start: w\n",
    );
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let (scenario, resolved): (String, String) =
        s.db().query_row("SELECT scenario_text, resolved_text FROM runs", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    for stored in [&scenario, &resolved] {
        assert!(!stored.contains("Sekr1tA") && stored.contains("PGPASSWORD=***"), "{stored}");
        // the text as written, masked, would not parse: the guard stored the value read
        assert!(stored.starts_with("# the scenario as read") && stored.contains("timeout"), "{stored}");
        stored_scenario_lints(&s, stored, &[]);
    }
    assert_eq!(files_holding(&s.dir.join("results"), "Sekr1tA"), Vec::<String>::new());
}

#[test]
fn a_url_with_credentials_is_refused_without_echoing_them() {
    let s = Scratch::new("secrets-url");
    let workloads = "workloads:\n  w: {engine: null, rw: randread, size: 16m, duration: 1s}\n";
    let observe = format!(
        "name: u\nobserve:\n  prometheus:\n    url: http://me:Sekr1tA@127.0.0.1:9/\n    queries: {{a: up}}\n{workloads}"
    );
    let wait = format!("name: u\n{workloads}timeline:\n  - wait_until: {{http: 'http://me:Sekr1tB@127.0.0.1:9/'}}\n");
    for (body, at) in [(observe, "observe.prometheus.url"), (wait, "wait_until.http")] {
        let path = s.scenario(&body);
        for command in ["lint", "run"] {
            let out = s.run(&[command, path.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(2), "{command}: {}", text(&out));
            let all = said(&out);
            assert!(all.contains("credentials in a URL") && all.contains(at), "{command}: {all}");
            assert!(!all.contains("Sekr1t"), "{command}: {all}");
        }
    }
    assert_eq!(files_holding(&s.dir.join("results"), "Sekr1t"), Vec::<String>::new());
}
