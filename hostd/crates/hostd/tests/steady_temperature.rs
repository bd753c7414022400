//! `[steady_state]`'s `temp_slope` criterion against the probe simulator's thermal model.
//! `sim:x5-thermal*2 --probe sim` plays the X5 at twice real time (its records, and the
//! times below, are the modelled drive's): after the simulator's settle at idle (about
//! 42 °C), it writes at a constant rate for about 10 s while the enclosure warms (an RC with
//! a 20 s time constant toward 74 °C), then throttles and holds
//! the enclosure at the temperature reached (about 55 °C). `bw:50%` alone is met about 3 s
//! into the step, while the enclosure is still warming fast; with `temp_slope` the step
//! ends only once the plateau has lasted a window, and a step too short for that runs its
//! full time. A temperature criterion with no temperature to read is refused before
//! anything is written.

mod common;
use common::{hostd_run, read_json, sim_path, text};
use serde_json::Value;
use std::path::Path;

/// Slope limit of the tests, °C/min (the simulator's sensor noise is far below it over 3 s).
const LIMIT: f64 = 10.0;

fn profile(dir: &Path, step_time: &str, criteria: &str) -> std::path::PathBuf {
    let path = dir.join("ps.toml");
    std::fs::write(
        &path,
        format!("name = \"ps\"\nkind = \"paced-sweep\"\n[paced_sweep]\nchunk = \"1GiB\"\nstep_time = \"{step_time}\"\npercents = [50]\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 8\nphases = [\"write\"]\n[steady_state]\ncriteria = [{criteria}]\nwindow = \"3s\"\n"),
    )
    .unwrap();
    path
}

/// Runs the sweep on the simulated X5 with the probe on; the run directory, the unpaced
/// step's record and the log.
fn unpaced(dir: &Path, step_time: &str) -> (std::path::PathBuf, Value, String) {
    let out = dir.join("run");
    let o = hostd_run(
        profile(
            dir,
            step_time,
            &format!("\"bw:50%\", \"temp_slope:{LIMIT}\""),
        ),
        ["sim:x5-thermal*2:write"],
        &out,
    )
    .args(["--probe", "sim", "--seed", "1"])
    .env("THROTTLESCOPE_PROBE_SIM", sim_path())
    .output()
    .unwrap();
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    let summary = read_json(&out.join("summary.json"));
    let sweep = summary["programs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "paced-sweep")
        .unwrap_or_else(|| panic!("no paced-sweep: {}", summary["programs"]))["result"]
        .clone();
    let step = sweep["steps"][0].clone();
    assert_eq!(step["phase"], "unpaced", "{sweep}");
    (out, step, log)
}

/// Least-squares slope of the probe's enclosure temperature from `from_ns` to `to_ns`,
/// °C/min, read from the run's probe data (`hostd export --csv`).
fn probe_slope(run: &Path, from_ns: u64, to_ns: u64) -> f64 {
    let o = common::hostd()
        .args(["export", "--csv"])
        .arg(run)
        .output()
        .unwrap();
    assert!(
        o.status.success() || run.join("probe.csv").exists(),
        "{}",
        text(&o)
    );
    let rows = common::csv_rows(&run.join("probe.csv"));
    let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
    let (t, c) = (col("time_ns"), col("enclosure_temp_c"));
    let pts: Vec<(f64, f64)> = rows[1..]
        .iter()
        .filter_map(|r| Some((r[t].parse::<u64>().ok()?, r[c].parse::<f64>().ok()?)))
        .filter(|(ns, _)| (from_ns..=to_ns).contains(ns))
        .map(|(ns, c)| ((ns - from_ns) as f64 / 60e9, c))
        .collect();
    assert!(pts.len() > 100, "{} probe readings", pts.len());
    let n = pts.len() as f64;
    let (xm, ym) = (
        pts.iter().map(|p| p.0).sum::<f64>() / n,
        pts.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxy: f64 = pts.iter().map(|p| (p.0 - xm) * (p.1 - ym)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - xm).powi(2)).sum();
    sxy / sxx
}

#[test]
fn a_step_does_not_end_while_the_enclosure_warms_and_ends_once_it_settles() {
    let d = tempfile::tempdir().unwrap();
    let (run, step, log) = unpaced(d.path(), "25s");
    let ss = &step["steady"];
    assert_eq!(
        ss["ended_by"],
        format!("bw:50% and temp_slope:{LIMIT}"),
        "{ss}"
    );
    let (rate_s, end_s) = (
        ss["rate_settled_s"].as_f64().unwrap(),
        ss["elapsed_s"].as_f64().unwrap(),
    );
    // The rate settled first, and the step went on.
    assert!(end_s >= rate_s + 2.0, "{ss}");
    // When it settled the enclosure was still warming faster than the limit (the probe's
    // own data says so) …
    let start = step["start_ns"].as_u64().unwrap();
    let at = |s: f64| start + (s * 1e9) as u64;
    let warming = probe_slope(&run, at(rate_s - 3.0), at(rate_s));
    assert!(
        warming > 2.0 * LIMIT,
        "{warming} °C/min when the rate settled: {ss}"
    );
    // … and when the step ended it was not.
    let settled = probe_slope(&run, at(end_s - 3.0), at(end_s));
    assert!(settled.abs() <= LIMIT, "{settled} °C/min at the end: {ss}");
    assert!(
        ss["temp_slope_c_per_min"].as_f64().unwrap().abs() <= LIMIT,
        "{ss}"
    );
    assert!(ss["temp_mean_c"].as_f64().unwrap() > 50.0, "{ss}");
    assert!(end_s < 25.0, "{ss}");
    eprintln!(
        "steady temperature: rate settled at {rate_s:.1} s (enclosure then {warming:+.1} °C/min), step ended at {end_s:.1} s ({settled:+.2} °C/min, {:.1} °C)",
        ss["temp_mean_c"].as_f64().unwrap()
    );
    assert!(
        log.contains("unpaced: steady after") && log.contains("and temp_slope:10"),
        "{log}"
    );
}

#[test]
fn a_step_too_short_for_the_enclosure_to_settle_runs_its_full_time() {
    let d = tempfile::tempdir().unwrap();
    let (_, step, log) = unpaced(d.path(), "6s");
    let ss = &step["steady"];
    assert!(ss["ended_by"].is_null(), "{ss}");
    assert!(ss["elapsed_s"].as_f64().unwrap() >= 6.0, "{ss}");
    // The rate had settled; the last window judged was still warming past the limit.
    assert!(ss["rate_settled_s"].as_f64().unwrap() < 6.0, "{ss}");
    assert!(ss["temp_slope_c_per_min"].as_f64().unwrap() > LIMIT, "{ss}");
    assert!(
        log.contains("unpaced: no steady state: ran its full time"),
        "{log}"
    );
}

#[test]
fn a_temperature_criterion_with_no_temperature_is_refused_before_anything_is_written() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("run");
    let o = hostd_run(
        profile(d.path(), "15s", "\"bw:50%\", \"temp_slope:3\""),
        ["sim:x5-thermal*20:write"],
        &out,
    )
    .args(["--probe", "none"])
    .output()
    .unwrap();
    let log = text(&o);
    assert!(!o.status.success(), "{log}");
    assert!(
        log.contains("[steady_state] criteria \"temp_slope:3\" needs a temperature")
            && log.contains("sim:x5-thermal*20 has no probe"),
        "{log}"
    );
    assert!(!out.exists(), "{} was created", out.display());
}
