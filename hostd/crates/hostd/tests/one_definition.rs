//! One home for each figure: the analysis computes the per-phase statistics and the
//! all-targets window once; `hostd run` puts them into events.json and summary.json (the
//! summary adds the unmeasured `prepare` writes) and prints them once, in its table. The
//! probe's phase energy (from its 10 ms level and the accumulator) and the analysis' (from
//! the files' energies) are two computations that must agree.

use serde_json::Value;

mod common;
use common::{assert_ok, disk_tempdir, hostd_run, read_json, small_profile, two_targets_and_a_run};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

#[test]
fn summary_and_events_agree_on_rates_energy_and_the_window() {
    // Real files with direct I/O (tmpfs has none): one target writes while the other reads.
    let work = disk_tempdir();
    let (a, b, out) = two_targets_and_a_run(work.path());
    let profile = small_profile(work.path(), 16, "16MB");
    let targets = [
        format!("{}:write", a.display()),
        format!("{}:read", b.display()),
    ];
    let o = hostd_run(&profile, targets, &out)
        .args(["--seed", "5", "--probe", "sim"])
        .output()
        .unwrap();
    assert_ok(&o);
    // Printed once: the run's table has one row per phase; the analysis' own phase lines
    // (GB/s) and its window line are not printed again.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(!stdout.contains(" — average "), "{stdout}");
    let window_lines = stdout
        .lines()
        .filter(|l| l.starts_with("all 2 targets active for"))
        .count();
    assert_eq!(window_lines, 1, "{stdout}");
    let summary = read_json(&out.join("summary.json"));
    let events = read_json(&out.join("events.json"));

    // Per-phase rate statistics.
    let ev_phases = events["phases"].as_array().unwrap();
    let sum_phases = summary["phases"].as_array().unwrap();
    // The summary also shows the unmeasured `prepare` writes; the analysis leaves them out.
    let measured: Vec<&Value> = sum_phases
        .iter()
        .filter(|p| p["phase"] != "prepare")
        .collect();
    assert_eq!(measured.len(), ev_phases.len(), "{sum_phases:?}");
    assert!(
        sum_phases.len() > measured.len(),
        "the read target's prepare writes: {sum_phases:?}"
    );
    for s in measured {
        let e = ev_phases
            .iter()
            .find(|e| e["target"] == s["target"] && e["phase"] == s["phase"])
            .unwrap_or_else(|| panic!("no events.json phase for {s}"));
        // The analysis' figures: the same fields with the same values (bytes/s in both, and
        // the latency of the phase's files merged). The summary leaves the energy to its
        // probe section (below).
        let fields = |p: &Value| -> Vec<String> {
            p.as_object()
                .unwrap()
                .keys()
                .filter(|k| !["energy_j", "j_per_gb", "mean_power_w"].contains(&k.as_str()))
                .cloned()
                .collect()
        };
        assert!(s["latency"]["p99_9_ns"].as_u64().unwrap() > 0, "{s}");
        assert_eq!(fields(s), fields(e), "{s}\n{e}");
        for k in fields(e) {
            assert_eq!(
                s[&k], e[&k],
                "{k}: summary {} against events {}",
                s[&k], e[&k]
            );
        }
        assert!(e["throughput_bps"].as_f64().unwrap() > 0.0, "{e}");
    }

    // Phase energy: the probe section of the summary against events.json.
    let probe_phases = summary["extra"]["probe"]["phases"].as_array().unwrap();
    assert!(!probe_phases.is_empty());
    for p in probe_phases {
        let e = ev_phases
            .iter()
            .find(|e| e["target"] == p["target"] && e["phase"] == p["phase"])
            .unwrap_or_else(|| panic!("no events.json phase for {p}"));
        for key in ["energy_j", "j_per_gb", "mean_power_w"] {
            let (a, b) = (p[key].as_f64().unwrap(), e[key].as_f64().unwrap());
            assert!(
                (a - b).abs() <= 1e-6 * a.abs(),
                "{key}: summary {a}, events {b}"
            );
        }
    }

    // The all-targets window and each target's rate in it (MB/s in the summary).
    let (w, ov) = (&summary["window"], &events["overlap"]);
    assert!(w.is_object() && ov["window"].is_object(), "{w} {ov}");
    assert_eq!(w["start_ns"], ov["window"]["start_ns"]);
    assert_eq!(w["end_ns"], ov["window"]["end_ns"]);
    let agg = ov["aggregate_bps"].as_f64().unwrap();
    assert!(
        close(w["aggregate_mbps"].as_f64().unwrap() * 1e6, agg),
        "{w} {ov}"
    );
    for t in w["targets"].as_array().unwrap() {
        let e = ov["per_target"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["target"] == t["target"])
            .unwrap();
        let (a, b) = (
            t["mbps"].as_f64().unwrap() * 1e6,
            e["rate_bps"].as_f64().unwrap(),
        );
        assert!(
            close(a, b),
            "{}: summary {a} B/s, events {b} B/s",
            t["target"]
        );
    }
}
