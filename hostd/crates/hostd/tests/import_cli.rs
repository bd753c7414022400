//! `hostd import` accepts every run directory the project writes: the one `scenario-gen`
//! writes (its manifest has no `start_ns`, run id or host) and the one `hostd monitor`
//! writes, with every file record and probe sample counted in a private influxd; a
//! directory with neither a start time nor a record is refused with a clear error.
//! (`hostd run` directories: `hostd-influx`'s tests/import_setup.rs.)

use hostd_influx::testing::InfluxServer;
use hostd_scenario::write::{write_run, ProbeOptions};
use std::path::Path;
use std::process::Output;

mod common;
use common::{assert_ok, hostd, record_count, sim_path, to_influx};

fn import(dir: &Path, server: &InfluxServer) -> Output {
    to_influx(hostd().arg("import").arg(dir), server)
        .output()
        .unwrap()
}

#[test]
fn import_takes_a_scenario_gen_run_directory() {
    let server = InfluxServer::start().expect("private influxd (run `just influx-build` first)");
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("x5-thermal");
    // What `scenario-gen x5-thermal DIR` (and `--bench`) write.
    let sc = hostd_scenario::load("x5-thermal").unwrap();
    write_run(
        &dir,
        &sc,
        &hostd_scenario::simulate(&sc),
        Some(ProbeOptions {
            rate_hz: 50.0,
            ..ProbeOptions::default()
        }),
    )
    .unwrap();
    // The same manifest shape as `hostd run` writes, read by the same reader.
    let manifest = hostd_records::manifest::read(&dir).unwrap();
    assert!(
        manifest.start_ns < hostd_scenario::BASE_UNIX_NS as u64,
        "{manifest:?}"
    );
    assert_eq!(manifest.probe_target(), Some(sc.probe_target.as_str()));

    let out = import(&dir, &server);
    let text = common::text(&out);
    assert!(out.status.success(), "hostd import failed:\n{text}");
    let files = record_count(&dir.join("files.csv"));
    let probe = record_count(&dir.join("probe.csv"));
    assert!(files > 10 && probe > 1000, "{files} files, {probe} samples");
    assert_eq!(server.count("file", "bytes").unwrap(), files, "{text}");
    assert_eq!(server.count("probe", "seq").unwrap(), probe, "{text}");
    assert_eq!(server.count("run", "scenario").unwrap(), 1, "{text}");
    // The run point is at the earliest record: the first probe sample (the lead).
    let first_probe: i64 = std::fs::read_to_string(dir.join("probe.csv"))
        .unwrap()
        .lines()
        .nth(1)
        .and_then(|l| l.split(',').next())
        .and_then(|t| t.parse().ok())
        .unwrap();
    let rows = server
        .rows("SELECT scenario FROM run")
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(rows.len(), 1, "{rows:?}");
    let t = &rows[0][0];
    let t_ns = t
        .as_i64()
        .or_else(|| t.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("time {t}"));
    assert!(
        (t_ns - first_probe).abs() < 1_000,
        "run point at {t_ns}, first sample at {first_probe}"
    );
    assert_eq!(rows[0][1], "x5-thermal");
}

#[test]
fn import_takes_a_monitor_directory() {
    let server = InfluxServer::start().expect("private influxd (run `just influx-build` first)");
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("mon");
    let out = hostd()
        .args(["monitor", "--probe", "sim", "--duration", "1.5"])
        .args(["--status-every", "0", "--out"])
        .arg(&dir)
        .env("THROTTLESCOPE_PROBE_SIM", sim_path())
        .output()
        .unwrap();
    assert_ok(&out);
    let out = import(&dir, &server);
    assert_ok(&out);
    let probe = record_count(&dir.join("probe.csv"));
    assert!(probe > 500, "{probe} samples");
    assert_eq!(server.count("probe", "seq").unwrap(), probe);
    assert_eq!(
        server.count("probe_agg", "samples").unwrap(),
        record_count(&dir.join("probe_agg.csv"))
    );
}

#[test]
fn import_refuses_a_manifest_without_start_and_records_clearly() {
    let server = InfluxServer::start().expect("private influxd (run `just influx-build` first)");
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("manifest.json"), "{\"scenario\": \"x\"}").unwrap();
    let out = import(work.path(), &server);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no integer start_ns") && err.contains("files.csv"),
        "{err}"
    );
    // Nothing changed in the directory.
    let names: Vec<_> = std::fs::read_dir(work.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
}
