//! End to end with a real InfluxDB: `hostd run --profile quick --probe sim
//! --influx-url …` lands in a private influxd with every file record and every probe sample
//! (counted by InfluxQL), zero gaps, alignment within 1 ms and the energy
//! closing to 0.1 %.

use hostd_influx::testing::InfluxServer;

mod common;
use common::{
    assert_ok, disk_target, hostd, hostd_run, read_json, record_count, run_with_unplug, to_influx,
    UnplugRun,
};

#[test]
fn probe_run_reaches_influxdb_complete() {
    let server = InfluxServer::start().expect("private influxd (run `just influx-build` first)");
    let (_work, target, run) = disk_target();
    let out = to_influx(
        hostd_run("quick", [&target], &run).args(["--probe", "sim"]),
        &server,
    )
    .output()
    .unwrap();
    assert_ok(&out);

    let summary = read_json(&run.join("summary.json"));
    let probe = &summary["extra"]["probe"];
    let received = probe["link"]["stats"]["sequence"]["received"]
        .as_u64()
        .unwrap();
    assert_eq!(probe["link"]["stats"]["sequence"]["gaps"], 0);
    assert!(probe["alignment_uncertainty_ns"].as_f64().unwrap() <= 1e6);
    assert!(probe["energy_balance"]["relative_error"].as_f64().unwrap() < 1e-3);

    let files = record_count(&run.join("files.csv"));
    assert_eq!(
        server.count("probe", "seq").unwrap(),
        received,
        "every probe sample in InfluxDB"
    );
    assert_eq!(
        server.count("file", "bytes").unwrap(),
        files,
        "every file record in InfluxDB"
    );
    assert_eq!(
        server.count("file", "energy_j").unwrap(),
        files,
        "every file has its energy"
    );
    let agg = common::agg_rows(&run);
    assert_eq!(server.count("probe_agg", "power_w_mean").unwrap(), agg);

    // `hostd import` of the directory into another server gives the files the same
    // energy: files.csv joined with files-probe.csv, as the run had them in memory.
    let other = InfluxServer::start().expect("a second private influxd");
    let out = to_influx(hostd().arg("import").arg(&run), &other)
        .output()
        .unwrap();
    assert_ok(&out);
    assert_eq!(other.count("file", "bytes").unwrap(), files);
    assert_eq!(
        other.count("file", "energy_j").unwrap(),
        files,
        "every imported file has its energy"
    );
}

#[test]
fn monitor_streams_the_idle_probe_to_influxdb() {
    let server = InfluxServer::start().expect("private influxd (run `just influx-build` first)");
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("mon");
    let mut cmd = hostd();
    cmd.args(["monitor", "--probe", "sim", "--duration", "2.5"])
        .args([
            "--status-every",
            "0",
            "--sim-arg=--idle-w",
            "--sim-arg=1.5",
            "--out",
        ])
        .arg(&dir);
    let out = to_influx(&mut cmd, &server).output().unwrap();
    assert_ok(&out);
    let summary = read_json(&dir.join("summary.json"));
    let samples = summary["samples"].as_u64().unwrap();
    assert!(samples > 1500, "{samples} samples in 2.5 s");
    let idle = summary["mean_power_w"].as_f64().unwrap();
    assert!(
        (idle - 1.5).abs() < 0.05,
        "idle power {idle} W, simulator idles at 1.5 W"
    );
    assert_eq!(summary["link"]["stats"]["sequence"]["gaps"], 0);
    let csv_rows = common::probe_samples(&dir).len() as u64;
    assert_eq!(csv_rows, samples);
    assert_eq!(
        server.count("probe", "seq").unwrap(),
        samples,
        "every sample streamed to InfluxDB"
    );
    let agg = common::agg_rows(&dir);
    assert_eq!(server.count("probe_agg", "samples").unwrap(), agg);

    // One mapping: importing the directory afterwards writes the very points streamed
    // (same tags and times), so no count changes.
    let counts = || {
        [
            server.count("run", "hostd_version").unwrap(),
            server.count("probe", "seq").unwrap(),
            server.count("probe_agg", "samples").unwrap(),
        ]
    };
    let live = counts();
    assert_eq!(live, [1, samples, agg]);
    let out = to_influx(hostd().arg("import").arg(&dir), &server)
        .output()
        .unwrap();
    assert_ok(&out);
    assert_eq!(counts(), live, "import added points under other tags");
}

#[test]
fn unplug_mid_run_loses_no_received_sample_on_the_way_to_influxdb() {
    let server = InfluxServer::start().expect("private influxd (run `just influx-build` first)");
    // `_work` keeps the scratch directory (and the run in it) until the end.
    let UnplugRun {
        run, work: _work, ..
    } = run_with_unplug("hostd-probe-influx", |cmd| {
        to_influx(cmd, &server);
    });

    let summary = read_json(&run.join("summary.json"));
    let probe = &summary["extra"]["probe"];
    let reconnects = probe["link"]["reconnects"].as_array().unwrap();
    assert_eq!(reconnects.len(), 1, "{reconnects:?}");
    assert!(reconnects[0]["gap_ms"].as_f64().unwrap() < 500.0 + 2000.0);
    let received = probe["link"]["stats"]["sequence"]["received"]
        .as_u64()
        .unwrap();
    assert_eq!(
        server.count("probe", "seq").unwrap(),
        received,
        "every received sample in InfluxDB"
    );
    let files = record_count(&run.join("files.csv"));
    assert_eq!(server.count("file", "bytes").unwrap(), files);
}

#[test]
fn a_port_model_reaches_influxdb_and_the_report() {
    // The probe simulator plays a 4.5 W port; the drive is held at it from 30 GB.
    let server = InfluxServer::start().expect("private influxd (run `just influx-build` first)");
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("run");
    let wall_ns = || hostd_records::clock::wall_ns();
    let started = wall_ns();
    let out = to_influx(
        hostd_run("sustained-100GB", ["sim:tb-ssd-4w5-port*20:write"], &run)
            .args(["--probe", "sim", "--seed", "1"])
            .env("THROTTLESCOPE_PROBE_SIM", common::sim_path()),
        &server,
    )
    .output()
    .unwrap();
    assert_ok(&out);
    let events = read_json(&run.join("events.json"));
    let drop = &events["events"][0];
    assert_eq!(drop["cause"], "power", "{:#?}", drop["evidence"]["reasons"]);
    assert_eq!(drop["evidence"]["port_budget_w"], 4.5);
    // The phase's power against the budget and its VBUS, and the event's figures.
    for field in [
        "port_budget_w",
        "peak_power_share",
        "mean_power_share",
        "vbus_min_v",
        "vbus_p1_v",
    ] {
        assert_eq!(server.count("stats", field).unwrap(), 1, "stats {field}");
    }
    assert_eq!(server.count("event", "port_budget_w").unwrap(), 1);
    assert_eq!(server.count("event", "power_share_after").unwrap(), 1);
    let report = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(report.contains("port budget 4.5 W") && report.contains("vSafe5V minimum 4.75 V"));
    // Played 20× faster: the run directory holds the modelled drive's time (its records
    // span 20× the host time), InfluxDB the host's, so no point lies in the future or
    // outside the time the run took; the run point carries the factor.
    let ended = wall_ns();
    let manifest = read_json(&run.join("manifest.json"));
    assert_eq!(manifest["extra"]["playback"]["factor"], 20.0);
    let summary = read_json(&run.join("summary.json"));
    let recorded = summary["end_ns"].as_i64().unwrap() - summary["start_ns"].as_i64().unwrap();
    assert!(recorded > 10 * (ended - started), "{recorded} ns recorded");
    for (measurement, field) in [("probe", "seq"), ("file", "bytes"), ("interval", "bytes")] {
        let outside = |when: &str| {
            server
                .rows(&format!(
                    "SELECT count(\"{field}\") FROM \"{measurement}\" WHERE {when}"
                ))
                .unwrap()
                .first()
                .and_then(|r| r.get(1).and_then(serde_json::Value::as_u64))
                .unwrap_or(0)
        };
        assert!(
            server.count(measurement, field).unwrap() > 0,
            "{measurement}"
        );
        assert_eq!(outside(&format!("time < {started}")), 0, "{measurement}");
        assert_eq!(outside(&format!("time > {ended}")), 0, "{measurement}");
    }
    let factor = server
        .rows("SELECT last(\"playback_factor\") FROM \"run\"")
        .unwrap();
    assert_eq!(factor[0][1], 20.0, "{factor:?}");
}
