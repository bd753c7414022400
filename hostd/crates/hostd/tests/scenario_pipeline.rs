//! Every scenario through the whole pipeline: `hostd run` with the simulated target
//! (`sim:SCENARIO*20`) and the probe simulator (`--probe sim`, same device model, same time
//! scale), then the analysis `hostd run` ends with. Onset within 2 % of the data the target
//! wrote, cause right, no event on the steady drive. Needs the probe simulator
//! (`just firmware-build`; `THROTTLESCOPE_PROBE_SIM` as the justfile exports it).

use hostd_analysis::input::read_files_csv;
use std::path::{Path, PathBuf};
use std::process::Command;

const SCALE: f64 = 20.0;

fn probe_sim() -> PathBuf {
    let path = std::env::var_os("THROTTLESCOPE_PROBE_SIM")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../build/firmware/sim/throttlescope-probe-sim")
        });
    assert!(
        path.exists(),
        "probe simulator missing at {} — run `just firmware-build`",
        path.display()
    );
    path
}

/// Runs hostd on `targets`; returns the run directory and its events.json.
fn run(targets: &[String], root: &Path) -> (PathBuf, serde_json::Value) {
    let out = root.join("run");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hostd"));
    cmd.args([
        "run",
        "--profile",
        "sustained-100GB",
        "--probe",
        "sim",
        "--seed",
        "7",
        "-q",
        "--out",
    ])
    .arg(&out);
    for t in targets {
        cmd.args(["--target", t]);
    }
    let res = cmd
        .env("THROTTLESCOPE_PROBE_SIM", probe_sim())
        .output()
        .expect("hostd runs");
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
    assert!(res.status.success(), "hostd run failed:\n{log}");
    println!("{log}");
    let events =
        std::fs::read_to_string(out.join("events.json")).expect("hostd run wrote events.json");
    assert!(
        out.join("report.html").exists(),
        "hostd run wrote report.html"
    );
    (out.clone(), serde_json::from_str(&events).unwrap())
}

fn total_bytes(run_dir: &Path, target: &str) -> f64 {
    read_files_csv(&run_dir.join("files.csv"))
        .unwrap()
        .iter()
        .filter(|f| f.target == target)
        .map(|f| f.bytes as f64)
        .sum()
}

fn events_of<'a>(events: &'a serde_json::Value, target: &str) -> Vec<&'a serde_json::Value> {
    events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["target"] == target)
        .collect()
}

/// One drop of the probed drive at a known volume with a known cause.
fn single_drop(scenario: &str, onset_gb: f64, cause: &str) {
    let root = tempfile::tempdir().unwrap();
    let target = format!("sim:{scenario}*{SCALE}");
    let (dir, ev) = run(&[format!("{target}:write")], root.path());
    let found = events_of(&ev, &target);
    assert_eq!(found.len(), 1, "{scenario}: one event expected: {found:#?}");
    let e = found[0];
    let total = total_bytes(&dir, &target);
    let err = (e["onset_bytes"].as_f64().unwrap() - onset_gb * 1e9).abs() / total;
    println!("{scenario}: onset {:.2} GB (truth {onset_gb} GB, error {:.2} % of {:.0} GB), cause {}, confidence {}", e["onset_bytes"].as_f64().unwrap() / 1e9, err * 100.0, total / 1e9, e["cause"], e["confidence"]);
    assert_eq!(e["kind"], "drop");
    assert!(
        err <= 0.02,
        "{scenario}: onset error {:.2} % > 2 %",
        err * 100.0
    );
    assert_eq!(
        e["cause"], cause,
        "{scenario}: {:#?}",
        e["evidence"]["reasons"]
    );
}

#[test]
fn x5_thermal_through_the_pipeline() {
    single_drop("x5-thermal", 23.9, "thermal");
}

#[test]
fn extreme_pro_slc_through_the_pipeline() {
    single_drop("extreme-pro-slc-30gb", 30.0, "slc_cache");
}

#[test]
fn p50_slc_through_the_pipeline() {
    single_drop("p50-slc-13gb", 13.0, "slc_cache");
}

#[test]
fn steady_drive_through_the_pipeline_gives_no_event() {
    let root = tempfile::tempdir().unwrap();
    let (_, ev) = run(&[format!("sim:steady*{SCALE}:write")], root.path());
    assert_eq!(
        ev["events"].as_array().unwrap().len(),
        0,
        "{:#?}",
        ev["events"]
    );
}

#[test]
fn hub_contention_through_the_pipeline() {
    let root = tempfile::tempdir().unwrap();
    let name = |t: &str| format!("sim:hub-www-contention@{t}*{SCALE}");
    let targets: Vec<String> = ["C", "A", "B"]
        .iter()
        .map(|t| format!("{}:write", name(t)))
        .collect();
    let (dir, ev) = run(&targets, root.path());
    let files = read_files_csv(&dir.join("files.csv")).unwrap();
    let c_end = files
        .iter()
        .filter(|f| f.target == name("C"))
        .map(|f| f.end_ns)
        .max()
        .unwrap();
    assert!(
        events_of(&ev, &name("C")).is_empty(),
        "C holds its rate: {:#?}",
        events_of(&ev, &name("C"))
    );
    for (t, lag_s) in [("A", 9.0), ("B", 8.5)] {
        // Truth: the target's bytes at C's end + the scenario's lag (scaled to host time).
        let at = c_end + (lag_s / SCALE * 1e9) as i64;
        let mine: Vec<_> = files.iter().filter(|f| f.target == name(t)).collect();
        let truth: f64 = mine
            .iter()
            .map(|f| {
                if f.end_ns <= at {
                    f.bytes as f64
                } else if f.start_ns >= at {
                    0.0
                } else {
                    f.bytes as f64 * (at - f.start_ns) as f64 / (f.end_ns - f.start_ns) as f64
                }
            })
            .sum();
        let total: f64 = mine.iter().map(|f| f.bytes as f64).sum();
        let found = events_of(&ev, &name(t));
        assert_eq!(found.len(), 1, "{t}: one recovery expected: {found:#?}");
        let e = found[0];
        let err = (e["onset_bytes"].as_f64().unwrap() - truth).abs() / total;
        println!("hub {t}: recovery at {:.2} GB (truth {:.2} GB, error {:.2} %), cause {}, confidence {}", e["onset_bytes"].as_f64().unwrap() / 1e9, truth / 1e9, err * 100.0, e["cause"], e["confidence"]);
        assert_eq!(e["kind"], "recovery");
        assert!(err <= 0.02, "{t}: onset error {:.2} % > 2 %", err * 100.0);
        assert_eq!(
            e["cause"], "contention",
            "{t}: {:#?}",
            e["evidence"]["reasons"]
        );
    }
    assert!(ev["overlap"]["window"].is_object(), "overlap window found");
    assert_eq!(
        ev["overlap"]["lags"].as_array().unwrap().len(),
        2,
        "{:#?}",
        ev["overlap"]["lags"]
    );
}

#[test]
fn with_two_targets_the_probe_evidence_goes_to_the_probed_one() {
    let root = tempfile::tempdir().unwrap();
    let x5 = format!("sim:x5-thermal*{SCALE}");
    let steady = format!("sim:steady*{SCALE}");
    // The probe sits on the first --target (the default of --probe-on).
    let (dir, ev) = run(
        &[format!("{x5}:write"), format!("{steady}:write")],
        root.path(),
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["extra"]["probe"]["target"], x5.as_str());
    let found = events_of(&ev, &x5);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        found[0]["cause"], "thermal",
        "{:#?}",
        found[0]["evidence"]["reasons"]
    );
    assert!(events_of(&ev, &steady).is_empty(), "{:#?}", ev["events"]);
}
