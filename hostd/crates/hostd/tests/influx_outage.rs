//! DESIGN.md's figure: InfluxDB stopped for 30 s in the middle of a `hostd run
//! --influx-url …` and restarted → zero points lost. A ~1 min simulated thermal run with
//! the simulated probe writes live into a private influxd; every file record, interval,
//! probe sample and 10 ms aggregate of the run directory is then counted in InfluxDB.

use hostd_influx::testing::InfluxServer;
use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;
use common::{hostd_run, read_json, record_count, to_influx};

#[test]
fn run_survives_a_30_second_influxdb_outage_with_nothing_lost() {
    let mut server = InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"));
    let work = tempfile::Builder::new()
        .prefix("hostd-influx-outage")
        .tempdir_in("/var/tmp")
        .unwrap();
    let run = work.path().join("run");
    let mut cmd = hostd_run("sustained-100GB", ["sim:x5-thermal*4:write"], &run);
    let child = to_influx(cmd.args(["--probe", "sim"]), &server)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // The scenario idles ~25 s before its files; stop InfluxDB while they are written.
    std::thread::sleep(Duration::from_secs(15));
    server.stop().unwrap();
    let down = Instant::now();
    std::thread::sleep(Duration::from_secs(30));
    server.restart().unwrap();
    eprintln!("influxd was down for {:?}", down.elapsed());

    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "hostd run failed:\n{stdout}\n{stderr}"
    );

    let summary = read_json(&run.join("summary.json"));
    let inf = &summary["extra"]["influx"];
    eprintln!("summary.extra.influx = {inf}");
    assert_eq!(inf["complete"], true, "{inf}");
    assert!(
        inf["points_spooled"].as_u64().unwrap() > 0,
        "the outage overlapped the run: {inf}"
    );
    assert_eq!(inf["points_waiting_in_spool"], 0);
    assert_eq!(inf["points_rejected"], 0);

    // Every record of the run directory is in InfluxDB.
    let files = record_count(&run.join("files.csv"));
    let probe = common::probe_samples(&run).len() as u64;
    let agg = common::agg_rows(&run);
    let intervals = record_count(&run.join("intervals.csv"));
    assert!(
        files >= 50 && probe > 10_000,
        "files {files}, probe samples {probe}"
    );
    assert_eq!(server.count("file", "bytes").unwrap(), files);
    assert_eq!(
        server.count("file", "energy_j").unwrap(),
        files,
        "energy columns merged"
    );
    assert_eq!(server.count("interval", "mbps").unwrap(), intervals);
    assert_eq!(server.count("probe", "seq").unwrap(), probe);
    assert_eq!(server.count("probe_agg", "power_w_mean").unwrap(), agg);
    assert_eq!(server.count("run", "profile").unwrap(), 1);
    assert_eq!(server.count("probe_health", "samples").unwrap(), 1);
    let spool = run.join("spool");
    assert!(
        !spool.exists() || std::fs::read_dir(&spool).unwrap().next().is_none(),
        "spool empty after backfill"
    );
}
