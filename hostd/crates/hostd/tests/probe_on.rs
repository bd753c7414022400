//! One probe on one of several targets (`--probe-on`): only that target gets
//! probe figures, in files.csv, the summary, summary.json and the report; the
//! others say "no probe". Runs `hostd run --probe sim` with the simulator
//! found by hostd itself (next to hostd, in the build tree or on PATH).

use std::process::Command;

fn csv(path: &std::path::Path) -> Vec<Vec<String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let mut rows = vec![head];
    rows.extend(
        r.records()
            .map(|x| x.unwrap().iter().map(str::to_string).collect()),
    );
    rows
}

#[test]
fn only_the_probed_target_gets_probe_figures() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("run");
    let o = Command::new(env!("CARGO_BIN_EXE_hostd"))
        .env_remove("THROTTLESCOPE_PROBE_SIM")
        .args(["run", "-q", "--profile", "quick", "--seed", "3"])
        .args(["--probe", "sim", "--probe-on", "1"])
        .args(["--target", "sim:x5-thermal*20:write"])
        .args(["--target", "sim:steady*20:write", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");

    let rows = csv(&out.join("files.csv"));
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
    assert!(text.contains("probe sim:x5-thermal*20 write:"), "{text}");
    assert!(!text.contains("probe sim:steady*20 write:"), "{text}");
    assert!(text.contains("probe sim:steady*20: no probe"), "{text}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let phases = summary["extra"]["probe"]["phases"].as_array().unwrap();
    assert!(
        phases.iter().all(|p| p["target"] == "sim:x5-thermal*20"),
        "{phases:?}"
    );
    // The report's table of targets.
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("on this target") && report.contains("no probe"));
}
