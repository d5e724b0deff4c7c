//! `fathom completions SHELL`: a completion script per shell that names fathom and its
//! subcommands, one a real bash accepts, and clap's own refusal of a shell it does not know.

use crate::common::{Scratch, text};
use std::process::Command;

/// Every subcommand a user can type, as `fathom --help` lists them.
const SUBCOMMANDS: [&str; 12] =
    ["run", "runs", "show", "scenarios", "lint", "fit", "sweep", "export", "report", "compare", "agent", "completions"];

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
