//! DESIGN.md's figure: InfluxDB stopped for 30 s in the middle of a `hostd run
//! --influx-url …` and restarted → zero points lost. A ~1 min simulated thermal run with
//! the simulated probe writes live into a private influxd; every file record, interval,
//! probe sample and 10 ms aggregate of the run directory is then counted in InfluxDB.

use hostd_influx::testing::InfluxServer;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::sim_path;

fn csv_rows(path: &Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count() as u64
}

#[test]
fn run_survives_a_30_second_influxdb_outage_with_nothing_lost() {
    let mut server = InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"));
    let token_file = server.token_file().unwrap();
    let work = tempfile::Builder::new()
        .prefix("hostd-influx-outage")
        .tempdir_in("/var/tmp")
        .unwrap();
    let run = work.path().join("run");
    let child = Command::new(env!("CARGO_BIN_EXE_hostd"))
        .args([
            "run",
            "--profile",
            "sustained-100GB",
            "--target",
            "sim:x5-thermal*4:write",
            "--probe",
            "sim",
            "-q",
            "--influx-url",
            &server.url(),
            "--influx-token-file",
        ])
        .arg(&token_file)
        .arg("--out")
        .arg(&run)
        .env("THROTTLESCOPE_PROBE_SIM", sim_path())
        .env_remove("INFLUX_TOKEN")
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

    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
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
    let files = csv_rows(&run.join("files.csv"));
    let probe = csv_rows(&run.join("probe.csv"));
    let agg = csv_rows(&run.join("probe_agg.csv"));
    let intervals = csv_rows(&run.join("intervals.csv"));
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
