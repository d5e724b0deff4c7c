//! `fathom man [--dir DIR]`: the manual pages, generated from the same clap definition
//! that parses the command line (clap_mangen), so they cannot fall out of date.
//! `make install` installs them; without `--dir` the page of `fathom` itself goes to
//! standard output (`fathom man | man -l -`). Each page ends with what clap does not
//! know: EXIT STATUS (from the constants the code returns), ENVIRONMENT, FILES and,
//! for the commands that have them, EXAMPLES.

use crate::error::{Error, Result, exit};
use roff::{Roff, bold, italic, roman};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Write fathom.1 and a page per subcommand (fathom-run.1, ...) into this directory
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Every environment variable fathom reads, and what for. A unit test finds each
/// `env::var` of the sources here.
const ENVIRONMENT: [(&str, &str); 13] = [
    ("FATHOM_RESULTS", "The directory of the results store, as --results gives it (default fathom-results)."),
    ("COLUMNS", "The width tables fit when not printing to a terminal (otherwise 100 columns)."),
    (
        "FATHOM_DISABLE_IO_URING",
        "Set to 1: io_uring is taken as unavailable, and its workloads run with psync (the run warns).",
    ),
    ("FATHOM_HAMMERDB", "The directory holding hammerdbcli, for `driver: tpcc` with `engine: hammerdb`."),
    ("XDG_CACHE_HOME", "Where HammerDB's build is looked for: $XDG_CACHE_HOME/fathom/hammerdb."),
    ("HOME", "$HOME/.cache stands for XDG_CACHE_HOME when that is unset."),
    (
        "PATH",
        "Where the programs fathom starts are found: fio, pgbench, psql, initdb, iperf3, sysbench, mariadbd, ssh, kubectl.",
    ),
    ("TMPDIR", "Where an `exec` step's script is written while it runs."),
    ("PGHOST", "With PGPORT, the server a `dsn` that names none reaches, as libpq's clients read them."),
    ("PGPORT", "See PGHOST."),
    ("PGCONNECT_TIMEOUT", "Handed to PostgreSQL's clients as set; fathom sets its own when it is not."),
    ("PGAPPNAME", "Handed to PostgreSQL's clients as set; fathom names them when it is not."),
    (
        "any, by name",
        "A password named by `password_env` or a token by `bearer_token_env`, and ${VAR} in a fio job file, \
         are read from the variable the scenario names; their values are never stored or printed.",
    ),
];

/// The files fathom reads and writes besides the ones named on its command line.
const FILES: [(&str, &str); 6] = [
    (
        "fathom-results/fathom.db",
        "The results store (SQLite, with its -wal and -shm files while in use); --results DIR or FATHOM_RESULTS \
         moves it. Every command that reads runs reads it.",
    ),
    ("fathom-results/runs/N/", "What run N keeps besides the store: programs' logs, throwaway servers by default."),
    (
        "TARGET/fathom-FILE.dat",
        "A workload's data file in a `target` directory (`file:` names it), laid out as needed; fathom leaves it.",
    ),
    (
        "fathom-postgres-runN-K/, fathom-mariadb-runN-K/",
        "Throwaway database servers, in their workloads' `target` (else the run's directory), removed at the \
         run's end; the next run removes those a killed fathom left.",
    ),
    (
        "~/.cache/fathom/fathom-BUILD",
        "On a remote host, the copy --push-agent makes of this fathom (an inventory's `push_dir` moves it).",
    ),
    (
        "SCENARIO, --hosts FILE, --hooks FILE",
        "fathom has no configuration file of its own: the scenario, the inventory of hosts and the hooks are the \
         files named on the command line.",
    ),
];

/// Each page's examples: the page's command and (what it does, the command line).
const EXAMPLES: [(&str, &[(&str, &str)]); 3] = [
    (
        "fathom",
        &[
            ("Run the quickstart (IOPS and latency as depth grows) in the current directory:", "fathom run"),
            (
                "Run a built-in on a disk's file system, then read it again:",
                "fathom run four-corners --target /mnt/disk",
            ),
            ("Compare the last two runs:", "fathom compare 1 2"),
        ],
    ),
    (
        "fathom-run",
        &[
            (
                "A scenario file, its JSON on stdout and the summary on stderr:",
                "fathom run bench.yaml --json - > run.json",
            ),
            ("A fio job file, as fio would run it:", "fathom run job.fio"),
            ("TPC-C on a throwaway PostgreSQL with 4 warehouses:", "fathom run tpcc --set warehouses=4"),
        ],
    ),
    ("fathom-report", &[("One run as an HTML page with its charts:", "fathom report 3 -o run3.html")]),
];

/// Renders the pages of `command`, the whole command line (handed in by the dispatcher,
/// as for completions).
pub fn run(args: Args, command: clap::Command) -> Result<i32> {
    let mut command = command.disable_help_subcommand(true);
    command.build();
    match args.dir {
        None => {
            let page = render(&command, "fathom")?;
            crate::terminal::print(page);
        }
        Some(dir) => write_pages(&command, "fathom", &dir)?,
    }
    Ok(exit::SUCCESS)
}

/// One page per command, its subcommands' too, `name` its page's name (`fathom-run`);
/// files are written without following a symbolic link, as every file fathom writes.
fn write_pages(command: &clap::Command, name: &str, dir: &Path) -> Result<()> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), dir)?;
    }
    let man = clap_mangen::Man::new(command.clone());
    let path = dir.join(man.get_filename());
    crate::nofollow::write(&path, render(command, name)?).map_err(|e| Error::input(format!("{}: {e}", path.display())))
}

/// The page clap_mangen writes, then the sections it does not know.
fn render(command: &clap::Command, name: &str) -> Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut page)
        .map_err(|e| Error::failed(format!("rendering the manual page: {e}")))?;
    page.extend(sections(name).render().into_bytes());
    Ok(page)
}

/// EXIT STATUS, ENVIRONMENT, FILES and the page's EXAMPLES, in roff.
fn sections(name: &str) -> Roff {
    let mut roff = Roff::new();
    let mut listing = |title: &str, items: &mut dyn Iterator<Item = (String, &str)>| {
        roff.control("SH", [title]);
        for (term, text) in items {
            roff.control("TP", []).text([bold(term)]).text([roman(text)]);
        }
    };
    listing("EXIT STATUS", &mut exit::ALL.iter().map(|(code, text)| (code.to_string(), *text)));
    listing("ENVIRONMENT", &mut ENVIRONMENT.iter().map(|(var, text)| (var.to_string(), *text)));
    listing("FILES", &mut FILES.iter().map(|(file, text)| (file.to_string(), *text)));
    if let Some((_, examples)) = EXAMPLES.iter().find(|(page, _)| *page == name) {
        roff.control("SH", ["EXAMPLES"]);
        for (what, line) in examples.iter() {
            roff.control("PP", []).text([roman(*what)]);
            roff.control("RS", ["4"]).text([italic(*line)]).control("RE", []);
        }
    }
    roff
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variable the sources read by name (`env::var("X")`, `var_os("X")`, clap's
    /// `env = "X"`, and TMPDIR through `temp_dir()`) is on the page.
    #[test]
    fn every_variable_the_code_reads_is_in_environment() {
        fn sources(dir: &Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    sources(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    // what a file's tests read is the tests' own
                    out.push(text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default().to_string());
                }
            }
        }
        let mut texts = Vec::new();
        sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut texts);
        let mut read = std::collections::BTreeSet::new();
        for text in &texts {
            for opener in ["env::var(\"", "env::var_os(\"", "env = \""] {
                for (at, _) in text.match_indices(opener) {
                    let rest = &text[at + opener.len()..];
                    read.insert(rest[..rest.find('"').unwrap()].to_string());
                }
            }
            if text.contains("temp_dir()") {
                read.insert("TMPDIR".to_string());
            }
        }
        assert!(read.len() >= 8 && read.contains("FATHOM_RESULTS"), "the search found {read:?}");
        let listed: Vec<&str> = ENVIRONMENT.iter().map(|(v, _)| *v).collect();
        for var in &read {
            assert!(listed.contains(&var.as_str()), "{var} is read by fathom but not in ENVIRONMENT");
        }
    }

    /// The EXIT STATUS section lists the very statuses the code returns, in the order of
    /// `exit::ALL`, and the sections follow clap's.
    #[test]
    fn a_page_lists_the_exit_statuses_the_code_returns() {
        let page = String::from_utf8(render(&clap::Command::new("fathom"), "fathom").unwrap()).unwrap();
        let order: Vec<usize> =
            ["\n.SH NAME", "\n.SH \"EXIT STATUS\"", "\n.SH ENVIRONMENT", "\n.SH FILES", "\n.SH EXAMPLES"]
                .iter()
                .map(|h| page.find(h).unwrap_or_else(|| panic!("no {h} in\n{page}")))
                .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}\n{page}");
        let codes: Vec<i32> = page
            .split("\n.SH \"EXIT STATUS\"")
            .nth(1)
            .and_then(|s| s.split("\n.SH ").next())
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix("\\fB").and_then(|l| l.strip_suffix("\\fR")))
            .map(|c| c.parse().unwrap())
            .collect();
        assert_eq!(codes, [exit::SUCCESS, exit::FAILED, exit::BAD_INPUT, exit::EXPECTATION_FAILED, exit::INTERRUPTED]);
        assert_eq!(codes, [0, 1, 2, 3, 130], "a status a script relies on changed");
    }
}
