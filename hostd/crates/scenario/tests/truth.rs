//! Every built-in scenario, generated to files.csv + probe.csv and analysed offline:
//! onset within 2 % of the data written, the cause right, and nothing on the steady drive.

use hostd_analysis::{analyze_run_dir, Options};
use hostd_scenario::{load, simulate, write::write_run, write::ProbeOptions, BUILT_IN};

struct Outcome {
    lines: Vec<String>,
    failures: Vec<String>,
}

fn check(name: &str, seed_offset: u64) -> Outcome {
    let mut sc = load(name).unwrap();
    sc.seed += seed_offset;
    let trace = simulate(&sc);
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), &sc, &trace, Some(ProbeOptions::default())).unwrap();
    let (_, a) = analyze_run_dir(dir.path(), &Options::default()).unwrap();
    let mut out = Outcome {
        lines: Vec::new(),
        failures: Vec::new(),
    };
    for t in &trace.truth {
        let found = a.events.iter().find(|e| {
            e.target == t.target
                && e.phase == t.phase
                && format!("{:?}", e.kind).to_lowercase() == t.kind
        });
        match found {
            None => out.failures.push(format!(
                "{name}: missed {} {} at {:.2} GB",
                t.target,
                t.kind,
                t.onset_bytes as f64 / 1e9
            )),
            Some(e) => {
                let err =
                    (e.onset_bytes as f64 - t.onset_bytes as f64).abs() / t.total_bytes as f64;
                out.lines.push(format!(
                    "{name} seed+{seed_offset}: {} {} truth {:.2} GB found {:.2} GB (error {:.2} % of {:.0} GB), cause {} (truth {}), confidence {:.2}",
                    t.target, t.kind, t.onset_bytes as f64 / 1e9, e.onset_bytes as f64 / 1e9, err * 100.0,
                    t.total_bytes as f64 / 1e9, e.cause.as_str(), t.cause, e.confidence
                ));
                if err > 0.02 {
                    out.failures
                        .push(format!("{name}: onset error {:.2} % > 2 %", err * 100.0));
                }
                if e.cause.as_str() != t.cause {
                    out.failures.push(format!(
                        "{name}: cause {} but truth {}: {:?}",
                        e.cause.as_str(),
                        t.cause,
                        e.evidence.reasons
                    ));
                }
            }
        }
    }
    let expected = trace.truth.len();
    if a.events.len() != expected {
        out.failures.push(format!(
            "{name}: {} events, truth has {expected}: {:?}",
            a.events.len(),
            a.events
                .iter()
                .map(|e| e.evidence.text.clone())
                .collect::<Vec<_>>()
        ));
    }
    out
}

/// Seeds per scenario.
const SEEDS: u64 = 10;

fn run(name: &str) {
    let mut failures = Vec::new();
    for seed_offset in 0..SEEDS {
        let o = check(name, seed_offset);
        for l in &o.lines {
            println!("{l}");
        }
        failures.extend(o.failures);
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn x5_thermal_throttle_is_found_and_called_thermal() {
    run("x5-thermal");
}

#[test]
fn extreme_pro_slc_drop_is_found_and_called_slc_cache() {
    run("extreme-pro-slc-30gb");
}

#[test]
fn p50_slc_drop_is_found_and_called_slc_cache() {
    run("p50-slc-13gb");
}

#[test]
fn hub_recoveries_are_found_and_called_contention() {
    run("hub-www-contention");
}

#[test]
fn steady_drive_gives_no_event() {
    run("steady");
}

#[test]
fn every_built_in_scenario_is_covered_above() {
    let names: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "x5-thermal",
            "extreme-pro-slc-30gb",
            "p50-slc-13gb",
            "hub-www-contention",
            "steady"
        ]
    );
}
