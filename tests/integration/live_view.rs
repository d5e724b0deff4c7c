//! The live view in a real terminal: fathom runs inside tmux at 80 columns, and what
//! the pane shows is read back (`capture-pane`) while it runs and after it ends.

use crate::common::Scratch;
use crate::common::tmux::Tmux;
use std::time::{Duration, Instant};

#[test]
fn the_live_view_fits_an_80_column_terminal_and_redraws_in_place() {
    let s = Scratch::new("live-view");
    let path = s.scenario(
        "name: live-view\n\
         defaults: {target: TARGET, size: 8m, duration: 5s}\n\
         workloads:\n\
         \x20 a_rather_long_workload_name_one: {rw: randread, iodepth: 4, duration: 8s}\n\
         \x20 a_rather_long_workload_name_two: {rw: randread, iodepth: 1, duration: 4s}\n\
         timeline:\n\
         \x20 - start: a_rather_long_workload_name_one\n\
         \x20   async: true\n\
         \x20 - wait: 2s\n\
         \x20 - prefill: a_rather_long_workload_name_two\n\
         \x20 - mark: both\n\
         \x20 - start: a_rather_long_workload_name_two\n",
    );
    let command = format!(
        "env -u FATHOM_RESULTS -u FATHOM_DISABLE_IO_URING {} run {} --results {}; echo FATHOM-EXIT $?; sleep 600",
        env!("CARGO_BIN_EXE_fathom"),
        path.display(),
        s.dir.join("results").display()
    );
    let tmux = Tmux::new("live");
    tmux.cmd(&["new-session", "-d", "-x", "80", "-y", "24", "-s", "live", &command]);
    let started = Instant::now();
    let mut screens = Vec::new();
    loop {
        let screen = tmux.rows("live", false);
        let done = screen.iter().any(|l| l.starts_with("FATHOM-EXIT"));
        screens.push(screen);
        if done {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "fathom did not end: {:?}", screens.last());
        std::thread::sleep(Duration::from_millis(200));
    }
    let history = tmux.rows("live", true);
    let all = history.join("\n");
    assert!(history.iter().any(|l| l == "FATHOM-EXIT 0"), "{all}");

    // the view: the run's bar, then a row per running workload, at the bottom
    let is_bar = |l: &str| l.contains("s/") && (l.contains("ETA") || l.contains("finishing"));
    let is_workload = |l: &str| l.starts_with("  a_rather_long_workload_name_");
    // each of its lines fits the terminal: no row of the view continues on the next
    // (a line wider than 80 columns wraps, and each redraw leaves its first rows behind)
    for screen in &screens {
        let Some(bar) = screen.iter().position(|l| is_bar(l)) else { continue };
        for row in screen[bar + 1..].iter().filter(|r| !r.is_empty()) {
            assert!(is_workload(row), "a row of the view wrapped into `{row}`:\n{}", screen.join("\n"));
        }
    }
    // while both ran, the screen showed the run's bar and a line for each
    let both = screens.iter().any(|screen| {
        screen.iter().any(|l| is_bar(l))
            && screen.iter().any(|l| l.starts_with("  a_rather_long_workload_name_one x1: "))
            && screen.iter().any(|l| l.starts_with("  a_rather_long_workload_name_two x1: "))
    });
    assert!(both, "no screen showed both workloads' lines: {screens:#?}");
    // redrawn in place: no redraw is left behind in what scrolled by
    let left = history.iter().filter(|l| is_bar(l) || is_workload(l)).count();
    assert!(left <= 3, "{left} rows of the live view left behind:\n{all}");
    // lines said during the run print above the view (wrapped at its width, a path on
    // a line of its own)
    for said in ["prefilling 8 MiB of", "mark: both"] {
        assert!(history.iter().any(|l| l.contains(said) && !is_bar(l)), "`{said}` not on a row of its own:\n{all}");
    }
}
