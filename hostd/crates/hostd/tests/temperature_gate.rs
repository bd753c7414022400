//! `[temperature_gate]` against the probe simulator's thermal model: `sim:x5-thermal*20`
//! with `--probe sim` plays the X5's enclosure as a first-order RC (ambient 25 °C, 6 °C/W,
//! 20 s played in 1 s): idle at 2.9 W it settles at 42.4 °C, a 20 GB write heats it to
//! about 50 °C, and idle it cools back with a 20 s time constant; it starts at that idle
//! equilibrium, as the scenario's model does (the run's records are the
//! modelled drive's time: 1 s of the host's). A gate at 44.4 °C waits
//! and then passes; one below the idle equilibrium can only time out. And a gate with
//! nothing to wait on is refused before anything is written. The waits reach events.json
//! and the report too.

mod common;
use common::{hostd_run, read_json, sim_path, text};
use std::path::Path;

/// Idle equilibrium of the X5 scenario's enclosure: 25 °C + 2.9 W × 6 °C/W.
const X5_IDLE_C: f64 = 42.4;

/// A profile of `count` 20 GB writes with the gate `gate` (TOML lines).
fn profile(dir: &Path, count: u32, gate: &str) -> std::path::PathBuf {
    let path = dir.join("gated.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"gated\"\nkind = \"files\"\n[files]\ncount = {count}\nmin_size = \"20GB\"\nmax_size = \"20GB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\"]\n[temperature_gate]\n{gate}\n"
        ),
    )
    .unwrap();
    path
}

/// Runs the gated profile on the simulated X5 with the probe simulator; the run directory.
fn run_gated(dir: &Path, count: u32, gate: &str) -> (std::path::PathBuf, String) {
    let out = dir.join("run");
    let o = hostd_run(profile(dir, count, gate), ["sim:x5-thermal*20:write"], &out)
        .args(["--probe", "sim", "--seed", "1"])
        .env("THROTTLESCOPE_PROBE_SIM", sim_path())
        .output()
        .unwrap();
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    (out, log)
}

fn waits(run: &Path) -> Vec<serde_json::Value> {
    read_json(&run.join("summary.json"))["extra"]["temperature_gate"]["waits"]
        .as_array()
        .expect("summary.json extra.temperature_gate.waits")
        .clone()
}

#[test]
fn a_gate_waits_while_the_enclosure_cools_then_lets_the_step_start() {
    let d = tempfile::tempdir().unwrap();
    let margin = 2.0;
    let (run, log) = run_gated(
        d.path(),
        2,
        &format!("source = \"probe\"\nmargin_c = {margin}\ntimeout_s = 400\nidle_c = {X5_IDLE_C}"),
    );
    let w = waits(&run);
    assert_eq!(w.len(), 2, "{w:#?}");
    let second = &w[1];
    assert_eq!(second["outcome"], "reached", "{second}");
    let (start_c, end_c) = (
        second["start_c"].as_f64().unwrap(),
        second["end_c"].as_f64().unwrap(),
    );
    // Hot after 20 GB, cooled to the line when it let the step go.
    assert!(start_c > X5_IDLE_C + margin + 3.0, "{second}");
    assert!(end_c <= X5_IDLE_C + margin, "{second}");
    // The RC model needs ln((start − idle) / margin) time constants of 20 s to get there.
    // The gate judges only readings taken since it began, as they reach it: on a loaded
    // host the probe's stream arrives up to about a host second late (20 s here), so the
    // wait may run that much past the model's.
    let waited = second["waited_s"].as_f64().unwrap();
    let expected = 20.0 * ((start_c - X5_IDLE_C) / margin).ln();
    assert!(
        waited > 0.5 * expected && waited < 2.0 * expected + 20.0,
        "waited {waited} s, the model needs about {expected:.2} s: {second}"
    );
    // The second file started after the wait ended.
    let files = common::csv_rows(&run.join("files.csv"));
    let header = &files[0];
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let start_ns: u64 = files[2][col("start_ns")].parse().unwrap();
    let wait_end = second["start_ns"].as_u64().unwrap() + (waited * 1e9) as u64;
    assert!(
        start_ns >= wait_end,
        "file 2 at {start_ns}, gate until {wait_end}"
    );
    // Recorded in the manifest, and said at the end of the run.
    let m = read_json(&run.join("manifest.json"))["extra"]["temperature_gate"].clone();
    assert_eq!(m["steps_held"], 2, "{m}");
    assert_eq!(m["timed_out"], 0, "{m}");
    assert_eq!(m["given_idle_c"], X5_IDLE_C, "{m}");
    assert!(
        log.contains(
            "temperature gate (enclosure within 2 °C of idle 42.4 °C, timeout 400 s): 2 steps held"
        ) && log.contains("2 reached, 0 timed out"),
        "{log}"
    );
    gate_waits_in_events_and_report(&run, &w);
}

/// The waits are in events.json (`gate_waits`, beside the events) and in the report's
/// table, as the summary has them; `hostd analyze` writes both again from the run directory.
fn gate_waits_in_events_and_report(run: &Path, waits: &[serde_json::Value]) {
    let check = |when: &str| {
        let events = read_json(&run.join("events.json"));
        assert_eq!(
            events["gate_waits"].as_array().map(Vec::as_slice),
            Some(waits),
            "{when}: events.json gate_waits"
        );
        assert!(events["events"].is_array(), "{when}: {events}");
        let html = std::fs::read_to_string(run.join("report.html")).unwrap();
        assert!(
            html.contains(r#"<section id="gate-waits"><h2>Temperature gate</h2>"#)
                && html.contains(&format!(
                    "{} steps waited to cool before they started",
                    waits.len()
                )),
            "{when}: no gate section in the report"
        );
        // The waits that took time are shaded on the throughput and enclosure charts.
        let shaded = waits.iter().filter(|w| w["waited_s"].as_f64() > Some(0.0));
        let tip = |w: &serde_json::Value| {
            format!(
                "waited {:.1} s before {} #{}",
                w["waited_s"].as_f64().unwrap(),
                w["phase"].as_str().unwrap(),
                w["index"]
            )
        };
        for w in shaded {
            assert_eq!(html.matches(&tip(w)).count(), 2, "{when}: {}", tip(w));
        }
        assert_eq!(html.matches(r#"<g class="gate-wait""#).count(), 2, "{when}");
        for w in waits {
            let row = format!(
                r#"<td class="l">{} #{}</td>"#,
                w["phase"].as_str().unwrap(),
                w["index"]
            );
            assert!(html.contains(&row), "{when}: no row {row}");
        }
    };
    check("hostd run");
    std::fs::remove_file(run.join("events.json")).unwrap();
    std::fs::remove_file(run.join("report.html")).unwrap();
    let o = common::hostd().arg("analyze").arg(run).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    check("hostd analyze");
}

#[test]
fn a_gate_below_the_idle_equilibrium_times_out_and_the_step_runs_anyway() {
    let d = tempfile::tempdir().unwrap();
    // Record time (the modelled drive's): 1.5 s of the host's at ×20.
    let timeout = 30.0;
    let (run, log) = run_gated(
        d.path(),
        2,
        &format!("source = \"probe\"\nmargin_c = 1\ntimeout_s = {timeout}\nidle_c = 30"),
    );
    let w = waits(&run);
    assert_eq!(w.len(), 2, "{w:#?}");
    // The simulator starts where the scenario's model does, at idle's 42.4 °C equilibrium,
    // and after 20 GB the enclosure cannot cool below it either, let alone to 31 °C: both
    // gates time out.
    let start = w[0]["start_c"].as_f64().unwrap();
    assert!((start - X5_IDLE_C).abs() < 1.0, "{}", w[0]);
    for wait in &w {
        assert_eq!(wait["outcome"], "timed_out", "{wait}");
        let waited = wait["waited_s"].as_f64().unwrap();
        // Record seconds: 20 of them are one host second at ×20, room for a late thread.
        assert!(
            (timeout..timeout + 20.0).contains(&waited),
            "waited {waited} s, timeout {timeout} s"
        );
        assert!(wait["end_c"].as_f64().unwrap() > X5_IDLE_C - 1.0, "{wait}");
    }
    // Both files were written all the same.
    assert_eq!(common::record_count(&run.join("files.csv")), 2);
    assert_eq!(
        read_json(&run.join("manifest.json"))["extra"]["temperature_gate"]["timed_out"],
        2
    );
    assert!(log.contains("2 timed out"), "{log}");
}

#[test]
fn the_first_gate_takes_the_idle_temperature_when_none_is_given() {
    let d = tempfile::tempdir().unwrap();
    let (run, _) = run_gated(
        d.path(),
        1,
        "source = \"probe\"\nmargin_c = 1\ntimeout_s = 5",
    );
    let w = waits(&run);
    assert_eq!(w.len(), 1, "{w:#?}");
    assert_eq!(w[0]["outcome"], "idle_measured", "{}", w[0]);
    let idle = w[0]["idle_c"].as_f64().unwrap();
    // The simulator starts at the scenario's idle equilibrium, 42.4 °C, and stays there.
    assert!((idle - X5_IDLE_C).abs() <= 1.0, "{}", w[0]);
    let m = read_json(&run.join("manifest.json"))["extra"]["temperature_gate"].clone();
    assert_eq!(m["idle"][0]["idle_c"], idle, "{m}");
}

/// A refused run: exit status 2 or 1, the message names `key = value`, no run directory.
fn refused(dir: &Path, gate: &str, probe: &str, target: &str, expect: &[&str]) {
    let out = dir.join("refused-run");
    let o = hostd_run(profile(dir, 1, gate), [target], &out)
        .args(["--probe", probe])
        .env("THROTTLESCOPE_PROBE_SIM", sim_path())
        .output()
        .unwrap();
    let log = text(&o);
    assert!(!o.status.success(), "{gate}: ran\n{log}");
    for e in expect {
        assert!(log.contains(e), "{gate}: `{e}` not in\n{log}");
    }
    assert!(!out.exists(), "{gate}: {} was created", out.display());
}

#[test]
fn a_gate_with_no_margin_or_nothing_to_wait_on_is_refused_before_anything_is_written() {
    let d = tempfile::tempdir().unwrap();
    let sim = "sim:x5-thermal*20:write";
    refused(
        d.path(),
        "source = \"probe\"\nmargin_c = 0\ntimeout_s = 5",
        "sim",
        sim,
        &["[temperature_gate] margin_c = 0", "above 0 °C"],
    );
    refused(
        d.path(),
        "source = \"probe\"\nmargin_c = 1\ntimeout_s = 5",
        "none",
        sim,
        &["[temperature_gate] source = \"probe\"", "no probe is on"],
    );
    // A simulated drive has no SMART: nothing to wait on.
    refused(
        d.path(),
        "source = \"drive\"\nmargin_c = 1\ntimeout_s = 5",
        "none",
        sim,
        &[
            "[temperature_gate] source = \"drive\"",
            "sim:x5-thermal*20's drive gives no temperature",
        ],
    );
}

#[test]
fn diskmark_gates_every_repetition_by_default_when_a_probe_is_on_and_only_then() {
    let d = tempfile::tempdir().unwrap();
    let target = common::disk_tempdir();
    let path = d.path().join("dm.toml");
    std::fs::write(
        &path,
        "name = \"dm\"\nkind = \"diskmark\"\n[diskmark]\nfile_size = \"8MiB\"\nrepetitions = 2\ntests = [\n{ name = \"SEQ1M-QD8\", pattern = \"sequential\", block_size = \"1MiB\", queue_depth = 8 },\n{ name = \"RND4K-QD1\", pattern = \"random\", block_size = \"4KiB\", queue_depth = 1, bytes = \"1MiB\" },\n]\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 8\nphases = [\"read\", \"write\"]\n",
    )
    .unwrap();
    let run = |probe: &str, name: &str| {
        let out = d.path().join(name);
        let o = hostd_run(&path, [target.path()], &out)
            .args(["--probe", probe])
            .env("THROTTLESCOPE_PROBE_SIM", sim_path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        out
    };
    let probed = run("sim", "probed");
    let m = read_json(&probed.join("manifest.json"))["extra"]["temperature_gate"].clone();
    assert_eq!(m["default_for_diskmark"], true, "{m}");
    assert_eq!(
        (m["source"].as_str(), m["margin_c"].as_f64()),
        (Some("probe"), Some(2.0))
    );
    // 2 tests × 2 directions × 2 repetitions: every measured step waited at the gate (the
    // simulated enclosure barely warms on a few MiB: none had to wait long).
    let w = waits(&probed);
    assert_eq!(w.len(), 8, "{w:#?}");
    assert_eq!(w[0]["outcome"], "idle_measured");
    assert!(w[1..].iter().all(|w| w["outcome"] == "reached"), "{w:#?}");
    let phases: std::collections::BTreeSet<&str> =
        w.iter().map(|w| w["phase"].as_str().unwrap()).collect();
    assert_eq!(phases.len(), 4, "{phases:?}");
    // Without a probe there is nothing to wait on: no gate, no section.
    let plain = run("none", "plain");
    assert!(read_json(&plain.join("manifest.json"))["extra"]
        .get("temperature_gate")
        .is_none());
    assert!(read_json(&plain.join("summary.json"))["extra"]
        .get("temperature_gate")
        .is_none());
}
