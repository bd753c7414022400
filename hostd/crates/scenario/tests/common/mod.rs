//! What the scenario tests share: a built-in scenario generated to a run directory and
//! analysed offline, as `scenario-gen` and `hostd analyze` do.

use hostd_analysis::{analyze_run_dir, Options};
use hostd_records::events::Analysis;
use hostd_scenario::{load, simulate, write::write_run, write::ProbeOptions, Scenario, Trace};

/// Scenario `name` with its seed moved by `seed_offset`, simulated, written with a probe and
/// analysed: the scenario, its trace (with the truth) and the analysis.
pub fn generated(name: &str, seed_offset: u64) -> (Scenario, Trace, Analysis) {
    let mut sc = load(name).unwrap();
    sc.seed += seed_offset;
    let trace = simulate(&sc);
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), &sc, &trace, Some(ProbeOptions::default())).unwrap();
    let (_, a) = analyze_run_dir(dir.path(), &Options::default()).unwrap();
    (sc, trace, a)
}
