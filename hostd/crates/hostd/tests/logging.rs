//! Logging that reaches the user: a warning a part logs during `hostd run` (the
//! probe link losing its port when the probe is unplugged) is printed on stderr and kept
//! in the run directory's `hostd.log`.

mod common;
use common::{run_with_unplug, sim_path, UnplugRun};

#[test]
fn a_part_warning_reaches_stderr_and_the_run_log() {
    // `_work` keeps the scratch directory (and the run in it) until the end.
    let UnplugRun {
        run,
        stderr,
        work: _work,
    } = run_with_unplug("hostd-logging", |cmd| {
        cmd.env("THROTTLESCOPE_PROBE_SIM", sim_path())
            .env_remove("RUST_LOG");
    });
    let lost = |text: &str| {
        text.lines()
            .any(|l| l.contains("WARN") && l.contains("probe port") && l.contains("lost"))
    };
    assert!(
        lost(&stderr),
        "no 'probe port … lost' warning on stderr:\n{stderr}"
    );
    let log = std::fs::read_to_string(run.join("hostd.log")).expect("RUN_DIR/hostd.log");
    assert!(
        lost(&log),
        "no 'probe port … lost' warning in hostd.log:\n{log}"
    );
    // The default level is warn: no info lines in the log.
    assert!(!log.contains(" INFO "), "{log}");
}

#[test]
fn verbose_flag_and_rust_log_raise_the_level() {
    let UnplugRun {
        run, work: _work, ..
    } = run_with_unplug("hostd-logging-v", |cmd| {
        cmd.env("THROTTLESCOPE_PROBE_SIM", sim_path())
            .env("RUST_LOG", "hostd_probe=info");
    });
    let log = std::fs::read_to_string(run.join("hostd.log")).expect("RUN_DIR/hostd.log");
    // The link's info line on reconnecting shows only at info level.
    assert!(
        log.lines()
            .any(|l| l.contains(" INFO ") && l.contains("probe link resumed")),
        "RUST_LOG=hostd_probe=info gave:\n{log}"
    );
}
