//! `fathom completions SHELL`: a completion script per shell that names fathom and its
//! subcommands, one a real bash accepts, and clap's own refusal of a shell it does not know.
//! `fathom man`: manual pages the real `man` reads.

use crate::common::{Scratch, text};
use std::process::Command;

/// Every subcommand a user can type, as `fathom --help` lists them.
const SUBCOMMANDS: [&str; 13] = [
    "run",
    "runs",
    "show",
    "scenarios",
    "lint",
    "fit",
    "sweep",
    "export",
    "report",
    "compare",
    "agent",
    "completions",
    "man",
];

#[test]
fn each_shell_gets_a_script_naming_fathom_and_its_subcommands() {
    let s = Scratch::new("completions-shells");
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = s.run(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out));
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains("fathom"), "{shell}: {script}");
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{shell}: no `{sub}` in\n{script}");
        }
        // options come along too, the global one included (fish writes them `-l target`)
        assert!(script.contains("results") && script.contains("target"), "{shell}: {script}");
    }
}

#[test]
fn the_bash_script_loads_in_bash_and_completes_subcommands() {
    let s = Scratch::new("completions-bash");
    let out = s.run(&["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let path = s.dir.join("fathom.bash");
    std::fs::write(&path, &out.stdout).unwrap();
    // load it, then ask the completion function what `fathom sh<TAB>` becomes
    let probe = format!(
        "source '{}' && complete -p fathom && COMP_WORDS=(fathom sh) COMP_CWORD=1 COMP_LINE='fathom sh' \
         COMP_POINT=9 && _fathom fathom sh fathom && printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display()
    );
    let out = Command::new("bash").args(["--norc", "--noprofile", "-c", &probe]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.lines().next().is_some_and(|l| l.ends_with("-F _fathom fathom")), "{}", text(&out));
    let offered: Vec<&str> = said.lines().skip(1).collect();
    assert_eq!(offered, ["show"], "{}", text(&out));
}

#[test]
fn an_unknown_shell_is_refused_by_clap_with_exit_2() {
    let s = Scratch::new("completions-unknown");
    let out = s.run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid value 'tcsh'"), "{}", text(&out));
    assert!(err.contains("possible values: bash, elvish, fish, powershell, zsh"), "{}", text(&out));
    assert!(out.stdout.is_empty() && !err.contains("panicked"), "{}", text(&out));
}

/// The pages `make install` puts under `share/man/man1`, as `man fathom` and
/// `man fathom-run` find them there: each subcommand's options, `run --json` among them.
#[test]
fn man_finds_the_page_of_fathom_and_of_each_subcommand() {
    let s = Scratch::new("man-pages");
    let dir = s.dir.join("share/man/man1");
    std::fs::create_dir_all(&dir).unwrap();
    let out = s.run(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let man = |page: &str| {
        let out = Command::new("man")
            .env("MANPATH", s.dir.join("share/man"))
            .env("MANWIDTH", "80")
            .args(["-P", "cat", page])
            .output()
            .unwrap();
        assert!(out.status.success(), "man {page}: {}", text(&out));
        // a terminal's bold and underline are overstrikes: `X\bX`, `_\bX`; keep the X
        let mut plain = String::new();
        for c in String::from_utf8_lossy(&out.stdout).chars() {
            if c == '\u{8}' {
                plain.pop();
            } else {
                plain.push(c);
            }
        }
        plain
    };
    let fathom = man("fathom");
    for sub in SUBCOMMANDS {
        assert!(fathom.contains(&format!("fathom-{sub}(1)")), "fathom(1) lists {sub}:\n{fathom}");
    }
    let run = man("fathom-run");
    assert!(run.contains("--json") && run.contains("--time-scale"), "{run}");
    // what clap does not know, as `man` shows it: exit statuses, variables, files, examples
    for (page, text) in [("fathom", &fathom), ("fathom-run", &run)] {
        for section in ["EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES"] {
            assert!(text.contains(&format!("\n{section}\n")), "{page}(1) has no {section}:\n{text}");
        }
        assert!(text.contains("FATHOM_RESULTS") && text.contains("fathom-results/fathom.db"), "{text}");
    }
    let statuses = run.split("\nEXIT STATUS\n").nth(1).unwrap().split("\nENVIRONMENT\n").next().unwrap();
    let codes: Vec<&str> =
        statuses.lines().filter_map(|l| l.split_whitespace().next()).filter(|w| w.parse::<u32>().is_ok()).collect();
    assert_eq!(codes, ["0", "1", "2", "3", "130"], "{statuses}");
    assert!(run.contains("fathom run bench.yaml --json - > run.json"), "{run}");
    // without --dir, fathom's own page on stdout; a directory it may not write is refused
    let out = s.run(&["man"]);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(".ie"), "{}", text(&out));
    let out = s.run(&["man", "--dir", s.dir.join("missing").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}
