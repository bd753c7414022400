//! One probe on one of several targets (`--probe-on`): only that target gets
//! probe figures, in files-probe.csv, the summary, summary.json and the report; the
//! others say "no probe". Runs `hostd run --probe sim` with the simulator
//! found by hostd itself (next to hostd, in the build tree or on PATH).

mod common;
use common::{csv_rows, hostd_run, read_json, text};

#[test]
fn only_the_probed_target_gets_probe_figures() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("run");
    let targets = ["sim:x5-thermal*20:write", "sim:steady*20:write"];
    let o = hostd_run("quick", targets, &out)
        .env_remove("THROTTLESCOPE_PROBE_SIM")
        .args(["--seed", "3", "--probe", "sim", "--probe-on", "1"])
        .output()
        .unwrap();
    let text = text(&o);
    assert!(o.status.success(), "{text}");

    let rows = csv_rows(&out.join("files-probe.csv"));
    assert_eq!(rows.len(), csv_rows(&out.join("files.csv")).len());
    let col = |n: &str| rows[0].iter().position(|h| h == n).unwrap();
    let (target, probe, energy) = (col("target"), col("probe"), col("energy_j"));
    let (mut probed, mut other) = (0, 0);
    for r in &rows[1..] {
        if r[target] == "sim:x5-thermal*20" {
            probed += 1;
            assert_ne!(r[probe], "no probe", "{r:?}");
            assert!(r[energy].parse::<f64>().unwrap() > 0.0, "{r:?}");
        } else {
            other += 1;
            assert_eq!(r[probe], "no probe", "{r:?}");
            assert!(r[energy].is_empty(), "{r:?}");
        }
    }
    assert!(probed > 0 && other > 0);

    // The summary: probe figures for the probed target only, "no probe" for the other.
    // Its energy and power are the analysis' headline line of the phase.
    assert!(text.contains("sim:x5-thermal*20 write energy "), "{text}");
    assert!(!text.contains("sim:steady*20 write energy "), "{text}");
    assert!(text.contains("probe sim:steady*20: no probe"), "{text}");
    let summary = read_json(&out.join("summary.json"));
    let phases = summary["extra"]["probe"]["phases"].as_array().unwrap();
    assert!(
        phases.iter().all(|p| p["target"] == "sim:x5-thermal*20"),
        "{phases:?}"
    );
    // The report's table of targets.
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("on this target") && report.contains("no probe"));
}
