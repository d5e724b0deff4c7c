//! A terminal for tests of what a person sees: a tmux server of the test's own.

use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of the test's own (its own socket), killed when dropped.
pub struct Tmux(String);

impl Tmux {
    pub fn new(tag: &str) -> Tmux {
        Tmux(format!("fathom-test-{tag}-{}", std::process::id()))
    }

    /// Runs one tmux command on this server; its stdout.
    pub fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").arg("-L").arg(&self.0).args(args).output().expect("tmux is installed");
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// Runs `command` in a pane `columns` wide and returns every line it printed, each
    /// joined back whole where the terminal wrapped it.
    pub fn printed(&self, command: &str, columns: u16) -> Vec<String> {
        let shell = format!("{command}; echo FATHOM-EXIT $?; sleep 600");
        let columns = columns.to_string();
        self.cmd(&["new-session", "-d", "-x", &columns, "-y", "50", "-s", "w", &shell]);
        let started = Instant::now();
        loop {
            let rows: Vec<String> =
                self.cmd(&["capture-pane", "-p", "-J", "-S", "-", "-t", "w"]).lines().map(str::to_string).collect();
            if rows.iter().any(|l| l.starts_with("FATHOM-EXIT")) {
                self.cmd(&["kill-session", "-t", "w"]);
                return rows.into_iter().map(|l| l.trim_end().to_string()).collect();
            }
            assert!(started.elapsed() < Duration::from_secs(60), "show did not end: {rows:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Tmux {
    /// The rows of pane `pane`: the visible screen, or with `history` everything it showed.
    pub fn rows(&self, pane: &str, history: bool) -> Vec<String> {
        let mut args = vec!["capture-pane", "-p", "-t", pane];
        if history {
            args.extend(["-S", "-"]);
        }
        self.cmd(&args).lines().map(|l| l.trim_end().to_string()).collect()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.cmd(&["kill-server"]);
    }
}
