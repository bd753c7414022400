//! InfluxDB live for the probe: while `hostd run --probe sim --influx-url …` is still
//! running, its probe samples and 10 ms aggregates are already in InfluxDB (Grafana follows
//! the run); at the end every received sample is there once, none pushed twice.

use hostd_influx::testing::InfluxServer;
use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;
use common::{assert_ok, disk_target, hostd_run, paced_profile, read_json, to_influx};

#[test]
fn probe_points_reach_influxdb_while_the_run_is_going() {
    let server = InfluxServer::start().expect("private influxd (run `just influx-build` first)");
    let (work, target, run) = disk_target();
    let mut cmd = hostd_run(paced_profile(work.path()), [&target], &run);
    let mut child = to_influx(cmd.args(["--probe", "sim"]), &server)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // Poll InfluxDB while hostd runs (about 6 s of paced writes).
    let started = Instant::now();
    let mut seen_running = (0, 0);
    while child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(500));
        let probe = server.count("probe", "seq").unwrap_or(0);
        let agg = server.count("probe_agg", "power_w_mean").unwrap_or(0);
        if child.try_wait().unwrap().is_none() {
            seen_running = (probe, agg);
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "hostd run hangs"
        );
    }
    let out = child.wait_with_output().unwrap();
    assert_ok(&out);
    let (probe_live, agg_live) = seen_running;
    // 1 kHz for several seconds: thousands of samples in InfluxDB before the end.
    assert!(
        probe_live > 1_000,
        "{probe_live} probe points while running"
    );
    assert!(agg_live > 100, "{agg_live} probe_agg points while running");

    let summary = read_json(&run.join("summary.json"));
    let received = summary["extra"]["probe"]["link"]["stats"]["sequence"]["received"]
        .as_u64()
        .unwrap();
    let inf = &summary["extra"]["influx"];
    assert_eq!(inf["complete"], true, "{inf}");
    // Streamed live, not pushed again from probe.csv at the end.
    let pushed = &inf["pushed_at_end"];
    assert!(pushed.get("probe.csv").is_none(), "{pushed}");
    assert_eq!(server.count("probe", "seq").unwrap(), received);
    let agg_rows = common::agg_rows(&run);
    assert_eq!(server.count("probe_agg", "power_w_mean").unwrap(), agg_rows);
    assert!(
        pushed["probe (live)"].as_u64().unwrap() >= received + agg_rows,
        "{pushed}"
    );
}
