//! `hostd run` with the probe simulator on a real pseudo-terminal: every
//! file correlated, zero gaps, alignment within 1 ms, energy closes; and an
//! unplug in the middle of a run is survived and recorded.

mod common;
use common::{
    assert_ok, csv_rows, disk_target, hostd, hostd_run, read_json, run_with_unplug, sim_path,
    UnplugRun,
};
use std::path::Path;
use std::process::Output;

/// `hostd run quick` on `target` with the simulated probe at `rate` Hz on all channels.
fn quick_with_sim_probe(target: &Path, run: &Path, rate: &str) -> Output {
    hostd_run("quick", [target], run)
        .args([
            "--probe",
            "sim",
            "--probe-rate",
            rate,
            "--probe-channels",
            "all",
        ])
        .output()
        .unwrap()
}

#[test]
fn run_with_the_simulated_probe_correlates_every_file() {
    let (_work, target, run) = disk_target();
    let out = quick_with_sim_probe(&target, &run, "500");
    assert_ok(&out);

    // The rate and channels asked, the conversion rate the probe chose and the
    // rate it achieved are in the manifest.
    let manifest = read_json(&run.join("manifest.json"));
    let m = &manifest["extra"]["probe"];
    assert_eq!(m["requested_rate_hz"], 500, "{m}");
    assert_eq!(m["channels"], "vbus,vshunt,current,power");
    let conversion = m["conversion_rate_hz"].as_f64().unwrap();
    assert!((conversion - 500.0).abs() < 25.0, "{m}");
    let achieved = m["final"]["achieved_rate_hz"].as_f64().unwrap();
    assert!(
        (achieved - conversion).abs() < 0.02 * conversion,
        "achieved {achieved} Hz of {conversion} Hz"
    );
    let delivered = m["final"]["delivered_rate_hz"].as_f64().unwrap();
    assert!((delivered - conversion).abs() < 0.02 * conversion, "{m}");
    assert_eq!(m["final"]["missed_slots"], 0);
    assert_eq!(m["final"]["chip_resets"].as_array().unwrap().len(), 0);

    let summary = read_json(&run.join("summary.json"));
    let probe = &summary["extra"]["probe"];
    let seq = &probe["link"]["stats"]["sequence"];
    let final_probe = &manifest["extra"]["probe"]["final"];
    assert_eq!(
        final_probe["alignment_uncertainty_ns"], probe["alignment_uncertainty_ns"],
        "manifest has the final alignment"
    );
    assert_eq!(final_probe["sequence"]["gaps"], 0);
    assert_eq!(manifest["extra"]["probe"]["source"], "sim");
    assert_eq!(seq["gaps"], 0, "{seq}");
    assert_eq!(probe["link"]["stats"]["frames"]["crc_errors"], 0);
    let uncertainty = probe["alignment_uncertainty_ns"].as_f64().unwrap();
    assert!(uncertainty <= 1e6, "alignment uncertainty {uncertainty} ns");
    let balance = &probe["energy_balance"];
    assert!(
        balance["relative_error"].as_f64().unwrap() < 1e-3,
        "{balance}"
    );
    assert!(balance["accumulator_j"].as_f64().unwrap() > 0.0);

    // Every file has its energy; probe.csv holds every received sample.
    let table = csv_rows(&run.join("files.csv"));
    let (header, rows) = (&table[0], &table[1..]);
    let energy = header
        .iter()
        .position(|h| h == "energy_j")
        .expect("energy_j column");
    let jpg = header.iter().position(|h| h == "j_per_gb").unwrap();
    assert_eq!(rows.len(), 24);
    for row in rows {
        let e: f64 = row[energy]
            .parse()
            .unwrap_or_else(|_| panic!("no energy in {row:?}"));
        assert!(e > 0.0);
        assert!(row[jpg].parse::<f64>().unwrap() > 0.0);
    }
    let samples = &csv_rows(&run.join("probe.csv"))[1..];
    assert_eq!(samples.len() as u64, seq["received"].as_u64().unwrap());
    let agg = &csv_rows(&run.join("probe_agg.csv"))[1..];
    assert!(agg.len() > 50);
    assert!(probe["phases"].as_array().unwrap().len() == 2);
    // The summary says how the probe sampled: achieved of converted rate,
    // missed conversions, chip resets, DIAG flags.
    let text: Vec<&str> = probe["text"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        text.iter().any(|l| l.starts_with("probe sampling:")
            && l.contains("0 missed conversions, 0 chip resets, DIAG flags: none")),
        "{text:?}"
    );
}

#[test]
fn unplug_in_the_middle_of_a_run_is_recorded_and_the_run_completes() {
    // `_work` keeps the scratch directory (and the run in it) until the end.
    let UnplugRun {
        run, work: _work, ..
    } = run_with_unplug("hostd-probe-run", |cmd| {
        cmd.env("THROTTLESCOPE_PROBE_SIM", sim_path());
    });

    let summary = read_json(&run.join("summary.json"));
    let probe = &summary["extra"]["probe"];
    let reconnects = probe["link"]["reconnects"].as_array().unwrap();
    assert_eq!(reconnects.len(), 1, "{reconnects:?}");
    let r = &reconnects[0];
    assert!(r["gap_ms"].as_f64().unwrap() < 500.0 + 2000.0, "{r}");
    assert!(
        r["resume_after_reopen_ms"].as_f64().unwrap() < 2000.0,
        "{r}"
    );
    // 500 ms is shorter than the probe's ring (2048 samples, ~2 s at the
    // default 1 kHz): the samples arrive late, none is lost.
    assert_eq!(r["samples_lost"].as_u64().unwrap(), 0, "{r}");
    // The gap is in the record: warnings, link events, and the sample stream resumes.
    assert!(summary["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("disconnected")));
    let events = std::fs::read_to_string(run.join("probe-link.jsonl")).unwrap();
    assert!(events.contains("\"disconnected\"") && events.contains("\"reconnected\""));
    let resumed_ns = r["resumed_ns"].as_i64().unwrap();
    let samples = &csv_rows(&run.join("probe.csv"))[1..];
    let after = samples
        .iter()
        .filter(|s| s[0].parse::<i64>().unwrap() > resumed_ns)
        .count();
    assert!(after > 1000, "only {after} samples after the reconnect");
    let files = &csv_rows(&run.join("files.csv"))[1..];
    assert!(!files.is_empty());
}

#[test]
fn monitor_refuses_durations_that_are_not_finite_positive_numbers() {
    for bad in ["-1", "nan", "inf", "0", "soon"] {
        let out = hostd()
            .args(["monitor", "--probe", "sim", &format!("--duration={bad}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--duration {bad} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("seconds") && !err.contains("panicked"),
            "--duration {bad}: {err}"
        );
    }
}

#[test]
fn a_probe_rate_above_the_i2c_ceiling_is_refused_with_the_numbers() {
    let (_work, target, run) = disk_target();
    let out = quick_with_sim_probe(&target, &run, "1200");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    // Four channels: DIAG_ALRT + 4 x 3 bytes + one 5-byte read = 1028 us at 400 kHz.
    assert!(
        err.contains("refused to start")
            && err.contains("972 Hz ceiling")
            && err.contains("1028 us"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "nothing left on the target"
    );
    // A bad channel list and a rate without a probe are refused by the CLI.
    for args in [
        &["--probe", "sim", "--probe-channels", "vbus,amps"][..],
        &["--probe-rate", "500"][..],
    ] {
        let out = hostd_run("quick", [&target], &run)
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("amps") || err.contains("need a probe"),
            "{err}"
        );
    }
}

#[test]
fn an_unreachable_probe_is_refused_before_anything_is_written() {
    let (_work, target, run) = disk_target();
    let out = hostd_run("quick", [&target], &run)
        .args(["--probe", "/dev/no-such-probe"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/dev/no-such-probe") && err.contains("does not exist"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "nothing left on the target"
    );
    assert!(!run.join("manifest.json").exists());
}
