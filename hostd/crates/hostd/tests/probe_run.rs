//! `hostd run` with the probe simulator on a real pseudo-terminal: every
//! file correlated, zero gaps, alignment within 1 ms, energy closes; an
//! unplug in the middle of a run is survived and recorded; and a probed run
//! killed with SIGKILL keeps its finished files for `hostd analyze`.

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

    // files.csv has the workload's columns, streamed; every file has its energy in
    // files-probe.csv, written once at the end; probe.csv holds every received sample.
    assert!(!csv_rows(&run.join("files.csv"))[0].contains(&"energy_j".to_string()));
    assert_eq!(
        csv_rows(&run.join("files.csv")).len(),
        csv_rows(&run.join("files-probe.csv")).len()
    );
    let table = csv_rows(&run.join("files-probe.csv"));
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
    let samples = common::probe_samples(&run);
    assert_eq!(samples.len() as u64, seq["received"].as_u64().unwrap());
    assert!(common::agg_rows(&run) > 50);
    assert!(probe["phases"].as_array().unwrap().len() == 2);
    // Every 10 ms bin's hand-over to the feeds was timed from the bin's end: at least the
    // probe's USB batching later, and not seconds (a second would be a warning).
    let lag = &probe["delivery_lag"];
    assert_eq!(lag["count"], probe["agg_rows"], "{lag}");
    let p50 = lag["p50_ns"].as_u64().unwrap();
    assert!((1_000_000..1_000_000_000).contains(&p50), "{lag}");
    assert!(p50 <= lag["max_ns"].as_u64().unwrap(), "{lag}");
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

/// `|a - b|` within `rel` of the larger, or both tiny.
fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-9)
}

#[test]
fn a_probed_runs_directory_analyses_to_the_energy_the_run_had_in_memory() {
    let (_work, target, run) = disk_target();
    assert_ok(&quick_with_sim_probe(&target, &run, "500"));
    // The run's own analysis and probe summary, made from the records in memory.
    let in_memory = read_json(&run.join("events.json"));
    let summary = read_json(&run.join("summary.json"));

    // Per file: the figures the reader joins from files-probe.csv add up, phase by
    // phase, to the energy the probe part computed in memory for summary.json.
    let files = hostd_records::RunData::read(&run).unwrap().files;
    assert_eq!(files.len(), 24);
    assert!(files.iter().all(|f| f.probe.is_some()), "{files:?}");
    let phases = summary["extra"]["probe"]["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2, "{phases:?}");
    for p in phases {
        let of_phase: Vec<_> = files.iter().filter(|f| f.phase == p["phase"]).collect();
        assert_eq!(of_phase.len(), 12);
        let energy: f64 = of_phase
            .iter()
            .map(|f| f.probe.as_ref().unwrap().energy_j.unwrap())
            .sum();
        let want = p["energy_j"].as_f64().unwrap();
        assert!(
            close(energy, want, 1e-4),
            "{energy} J from files, {want} J in {p}"
        );
    }

    // The whole run: `hostd analyze` on the directory gives the phases' energy the
    // run's in-memory analysis gave.
    let analysed = analyze_json(&run);
    let (a, m) = (
        analysed["phases"].as_array().unwrap(),
        in_memory["phases"].as_array().unwrap(),
    );
    assert_eq!(a.len(), m.len());
    for (a, m) in a.iter().zip(m) {
        assert_eq!((&a["phase"], &a["files"]), (&m["phase"], &m["files"]));
        for k in ["energy_j", "j_per_gb", "mean_power_w"] {
            let (x, y) = (a[k].as_f64().unwrap(), m[k].as_f64().unwrap());
            assert!(close(x, y, 1e-6), "{k}: analyze {x}, in memory {y}");
        }
    }
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
    let after = common::probe_samples(&run)
        .iter()
        .filter(|s| s.time_ns > resumed_ns)
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

/// Writes `dir/clips.toml`: 60 paced clips of 0.5 s, about 30 s of writes whatever the disk
/// (longer than the 10 s after which the first probe segment is closed).
/// A run killed with SIGKILL (a Unix signal; TerminateProcess is its Windows counterpart).
#[cfg(unix)]
mod killed {
    use super::*;
    use common::text;
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    fn clips_profile(dir: &Path) -> std::path::PathBuf {
        let profile = dir.join("clips.toml");
        std::fs::write(
            &profile,
            "name = \"clips\"\ndescription = \"paced clips\"\nkind = \"video\"\n[video]\nframe_size = \"256KB\"\nfps = 50.0\nseconds = 0.5\nclips = 60\n[io]\nblock_size = \"256KiB\"\nqueue_depth = 1\nphases = [\"write\"]\nverify = false\n",
        )
        .unwrap();
        profile
    }

    #[test]
    fn a_probed_runs_samples_take_at_most_16_bytes_each_on_disk() {
        // 30 s of paced writes with the default channels at 1 kHz: a few closed segments.
        let (work, target, run) = disk_target();
        let out = hostd_run(clips_profile(work.path()), [&target], &run)
            .args(["--probe", "sim", "--probe-rate", "1000"])
            .output()
            .unwrap();
        assert_ok(&out);
        let samples = common::probe_samples(&run).len() as u64;
        assert!(samples > 25_000, "{samples} samples in a 30 s run at 1 kHz");
        let bytes = hostd_records::probe_store::bytes_on_disk(&run).unwrap();
        let per_sample = bytes as f64 / samples as f64;
        eprintln!("probe/: {bytes} bytes, {samples} samples, {per_sample:.2} B/sample");
        assert!(per_sample <= 16.0, "{per_sample:.2} bytes per sample");

        // `hostd export --csv` writes the same samples as probe.csv (which has no probe
        // clock column), and the run analyses the same from probe.csv alone.
        let analysed = analyze_json(&run);
        let out = hostd()
            .args(["export", "--csv"])
            .arg(&run)
            .output()
            .unwrap();
        assert_ok(&out);
        let mut from_segments = hostd_records::probe_store::read(&run).unwrap();
        from_segments.iter_mut().for_each(|s| s.probe_time_us = 0);
        let from_csv = hostd_records::probe::read(&run).unwrap();
        assert_eq!(format!("{from_csv:?}"), format!("{from_segments:?}"));
        let again = hostd()
            .args(["export", "--csv"])
            .arg(&run)
            .output()
            .unwrap();
        assert!(
            !again.status.success(),
            "probe.csv replaced without --force"
        );
        std::fs::remove_dir_all(run.join("probe")).unwrap();
        assert_eq!(analyze_json(&run), analysed);
    }

    #[test]
    fn a_probed_run_killed_with_sigkill_keeps_its_finished_files_and_analyses() {
        let (work, target, run) = disk_target();
        let child = hostd_run(clips_profile(work.path()), [&target], &run)
            .args(["--probe", "sim"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // files.csv gets each file's row as the file completes, probe or not; probe/ its
        // samples a segment at a time (10 s each, whole files only); files-probe.csv each
        // file's figures once final, a few seconds after the file.
        let start = Instant::now();
        let rows = |name: &str| {
            std::fs::read_to_string(run.join(name))
                .map(|t| t.lines().count().saturating_sub(1))
                .unwrap_or(0)
        };
        let segments = || {
            hostd_records::probe_store::segments(&run)
                .map(|s| s.len())
                .unwrap_or(0)
        };
        while rows("files.csv") < 3 || segments() == 0 || rows("files-probe.csv") < 2 {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{} files.csv rows, {} files-probe.csv rows, {} probe segments 60 s into a probed run",
                rows("files.csv"),
                rows("files-probe.csv"),
                segments()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: kill on our own child's pid.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), None, "killed: {}", text(&o));

        let (rows, figures) = (rows("files.csv"), rows("files-probe.csv"));
        assert!((3..60).contains(&rows), "{rows} rows: killed mid-run");
        assert!(
            (2..=rows).contains(&figures),
            "{figures} of {rows} files with figures"
        );
        assert!(
            !run.join("summary.json").exists(),
            "the run did not get to its end"
        );
        let data = hostd_records::RunData::read(&run).unwrap();
        assert_eq!(data.files.len(), rows);
        assert!(
            data.files.iter().all(|f| f.status == "ok" && f.bytes > 0),
            "{:?}",
            data.files
        );
        // The files whose figures had settled keep them: the energy from the accumulator.
        let with_energy = data
            .files
            .iter()
            .filter(|f| {
                f.probe
                    .as_ref()
                    .is_some_and(|p| p.energy_j.is_some_and(|e| e > 0.0))
            })
            .count();
        assert_eq!(with_energy, figures, "{:?}", data.files);
        // Every closed segment reads (the one open at the kill was never renamed into
        // place), and the run's reader has all of their samples.
        let in_segments: usize = hostd_records::probe_store::segments(&run)
            .unwrap()
            .iter()
            .map(|p| hostd_records::probe_store::read_segment(p).unwrap().len())
            .sum();
        assert!(
            in_segments > 1000,
            "{in_segments} samples in closed segments"
        );
        assert_eq!(data.probe.map(|p| p.len()), Some(in_segments));

        let analysed = analyze_json(&run);
        let phases = analysed["phases"].as_array().unwrap();
        let counted: u64 = phases.iter().map(|p| p["files"].as_u64().unwrap()).sum();
        assert_eq!(counted, rows as u64, "every finished file analysed");
        // The probe's samples up to the last buffer written are analysed with them.
        assert!(
            phases[0]["mean_power_w"].as_f64().unwrap() > 0.0,
            "{phases:?}"
        );
    }
}

/// `hostd analyze --json` of a run directory, which must succeed.
fn analyze_json(run: &std::path::Path) -> serde_json::Value {
    let out = hostd()
        .args(["analyze", "--json", "--no-report"])
        .arg(run)
        .output()
        .unwrap();
    assert_ok(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}
