//! What the scenario tests share: a built-in scenario generated to a run directory and
//! analysed offline, as `scenario-gen` and `hostd analyze` do.

use hostd_analysis::{analyze_run_dir, Options};
use hostd_records::events::Analysis;
use hostd_scenario::{load, simulate, write::write_run, write::ProbeOptions, Scenario, Trace};

/// Scenario `name` with its seed moved by `seed_offset`, simulated, written with a probe and
/// analysed: the scenario, its trace (with the truth) and the analysis.
pub fn generated(name: &str, seed_offset: u64) -> (Scenario, Trace, Analysis) {
    let (sc, trace, dir) = written(name, seed_offset, ProbeOptions::default());
    let (_, a) = analyze_run_dir(dir.path(), &Options::default()).unwrap();
    (sc, trace, a)
}

/// Scenario `name` with its seed moved by `seed_offset`, simulated and written with a probe
/// as `probe` says: the scenario, its trace and the run directory.
#[allow(dead_code)] // not every test file uses it
pub fn written(
    name: &str,
    seed_offset: u64,
    probe: ProbeOptions,
) -> (Scenario, Trace, tempfile::TempDir) {
    let mut sc = load(name).unwrap();
    sc.seed += seed_offset;
    let trace = simulate(&sc);
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), &sc, &trace, Some(probe)).unwrap();
    (sc, trace, dir)
}
