//! `[steady_state]` on a paced sweep, through `hostd run` on a simulated drive that does not
//! slow down (`sim:steady*20`: 1.6 GB/s ± 10 % per file, played 20× faster): each step ends
//! once a 3 s window of 1 s samples deviates less than 10 % from its mean — before its 5 s
//! — and says so; with a criterion tighter than the drive's own spread, a paced step (held
//! to the byte on the simulated drive's plan) meets it and a step beyond the drive runs its
//! full time and says that. A soak (`files` with a duration) ends the same way once a cycle's writes settle.
//! (Steady state against a rate the kernel settles: `real_steady.rs`.)

mod common;
use serde_json::Value;

/// Runs the sweep with `criteria` at `percents` of the drive's rate; its `paced-sweep`
/// result.
fn sweep(criteria: &str, percents: &str) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("ps.toml");
    std::fs::write(
        &prof,
        format!("name = \"ps\"\nkind = \"paced-sweep\"\n[paced_sweep]\nchunk = \"1GiB\"\nstep_time = \"5s\"\npercents = [{percents}]\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 8\nphases = [\"write\"]\n[steady_state]\ncriteria = [{criteria}]\nwindow = \"3s\"\n"),
    )
    .unwrap();
    let out = dir.path().join("run");
    let o = common::hostd_run(&prof, ["sim:steady*20:write"], &out)
        .args(["--seed", "3"])
        .output()
        .unwrap();
    let log = common::text(&o);
    assert!(o.status.success(), "{log}");
    let summary = common::read_json(&out.join("summary.json"));
    let r = summary["programs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "paced-sweep")
        .unwrap()["result"]
        .clone();
    (r, log)
}

#[test]
fn sweep_steps_end_at_steady_state_or_run_their_full_time_and_say_which() {
    let (r, log) = sweep("\"bw_slope:50%\", \"bw:10%\"", "50, 100");
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "{r}");
    for s in steps {
        let ss = &s["steady"];
        // bw_slope:50% is listed first and is met at the first full window.
        assert_eq!(ss["ended_by"], "bw_slope:50%", "{s}");
        let elapsed = ss["elapsed_s"].as_f64().unwrap();
        assert!((3.0..4.5).contains(&elapsed), "{s}");
        assert_eq!(ss["end_ns"], s["end_ns"], "{s}");
        assert!(ss["value"].as_f64().unwrap() <= 50.0, "{s}");
    }
    assert!(log.contains("pace-50%: steady after"), "{log}");

    // A criterion tighter than the drive's own spread (±10 % per file): a step paced below
    // the drive's rate is held to the byte (a simulated drive's files lie on its plan) and
    // meets it at the first full window; a step asked beyond the drive (130 %) shows the
    // drive's spread, never meets it, and runs its full time.
    let (r, log) = sweep("\"bw:0.001%\"", "50, 130");
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "{r}");
    let step = |pct: f64| {
        steps
            .iter()
            .find(|s| s["percent"].as_f64() == Some(pct))
            .unwrap_or_else(|| panic!("no {pct} % step: {r}"))
    };
    let held = &step(50.0)["steady"];
    assert_eq!(held["ended_by"], "bw:0.001%", "{r}");
    assert!(held["elapsed_s"].as_f64().unwrap() < 5.0, "{r}");
    let beyond = step(130.0);
    assert_eq!(beyond["held"], false, "{r}");
    assert!(beyond["steady"]["ended_by"].is_null(), "{r}");
    assert!(
        beyond["steady"]["elapsed_s"].as_f64().unwrap() >= 5.0,
        "{r}"
    );
    assert!(log.contains("no steady state: ran its full time"), "{log}");
}

/// Runs a soak (`files` with a duration, cycles of 200 × 2 GB ≈ 12 s played) with
/// `criteria` on the simulated steady drive; its `duration` result and the log.
fn soak(duration: &str, criteria: &str) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("soak.toml");
    std::fs::write(
        &prof,
        format!("name = \"soak\"\nkind = \"files\"\n[files]\nduration = \"{duration}\"\ncount = 200\nmin_size = \"2GB\"\nmax_size = \"2GB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 8\nphases = [\"write\"]\n[steady_state]\ncriteria = [{criteria}]\nwindow = \"3s\"\n"),
    )
    .unwrap();
    let out = dir.path().join("run");
    let o = common::hostd_run(&prof, ["sim:steady*20:write"], &out)
        .args(["--seed", "3"])
        .output()
        .unwrap();
    let log = common::text(&o);
    assert!(o.status.success(), "{log}");
    let summary = common::read_json(&out.join("summary.json"));
    let r = summary["programs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "duration")
        .unwrap_or_else(|| panic!("no duration result: {}", summary["programs"]))["result"]
        .clone();
    (r, log)
}

#[test]
fn a_soak_ends_once_a_cycles_writes_settle_or_runs_its_duration_and_says_which() {
    let (r, log) = soak("30s", "\"bw:10%\"");
    let ss = &r["steady"];
    assert_eq!(ss["ended_by"], "bw:10%", "{r}");
    assert_eq!(ss["phase"], "write (cycle 1)", "{r}");
    let (settled, elapsed) = (
        ss["elapsed_s"].as_f64().unwrap(),
        r["elapsed_s"].as_f64().unwrap(),
    );
    // Settled at the first full window, well inside the first ~12 s cycle and the 30 s.
    assert!((3.0..5.0).contains(&settled), "{r}");
    assert!(elapsed < 10.0, "{r}");
    assert_eq!(r["full_cycles"], 0, "{r}");
    assert!(log.contains("write (cycle 1): steady state after"), "{log}");

    let (r, log) = soak("5s", "\"bw:0.001%\"");
    let ss = &r["steady"];
    assert!(ss["ended_by"].is_null(), "{r}");
    assert!(r["elapsed_s"].as_f64().unwrap() >= 5.0, "{r}");
    assert!(log.contains("no steady state (bw:0.001%)"), "{log}");
}
