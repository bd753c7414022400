//! A scenario's simulated run, written as `scenario-gen` writes it (probe and byte counters)
//! and analysed: one run of a comparison, for the tests that hold the outputs to one value.

use hostd_analysis::Options;
use hostd_report::compare::CompareRun;
use hostd_scenario::write::{write_run, ProbeOptions};

/// Scenario `scenario` simulated, written under `root` and analysed.
pub fn run_of(scenario: &str, root: &std::path::Path) -> CompareRun {
    let sc = hostd_scenario::load(scenario).unwrap();
    let trace = hostd_scenario::simulate(&sc);
    let dir = root.join(scenario);
    write_run(&dir, &sc, &trace, Some(ProbeOptions::default())).unwrap();
    let (run, analysis) = hostd_analysis::analyze_run_dir(&dir, &Options::default()).unwrap();
    CompareRun {
        dir: dir.display().to_string(),
        group: None,
        run,
        analysis,
        manifest: hostd_records::manifest::read(&dir).ok(),
    }
}
