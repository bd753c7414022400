//! `hostd import` accepts every run directory the project writes: the one `scenario-gen`
//! writes, the one `hostd monitor` writes, and the ones both wrote before they used the
//! records' manifest (no `start_ns`, run id or host), with every file record and probe
//! sample counted in a private influxd; an old directory with neither a start time nor a
//! record is refused with a clear error. (`hostd run` directories, format 1 among them:
//! `hostd-records`' manifest tests and `hostd-influx`'s tests/import_setup.rs.)

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
    assert_eq!(manifest.probe_target(), Some(sc.probe_target.clone()));

    let out = import(&dir, &server);
    let text = common::text(&out);
    assert!(out.status.success(), "hostd import failed:\n{text}");
    let files = record_count(&dir.join("files.csv"));
    let probe = common::probe_samples(&dir).len() as u64;
    assert!(files > 10 && probe > 1000, "{files} files, {probe} samples");
    assert_eq!(server.count("file", "bytes").unwrap(), files, "{text}");
    assert_eq!(server.count("probe", "seq").unwrap(), probe, "{text}");
    assert_eq!(server.count("run", "scenario").unwrap(), 1, "{text}");
    // The run point is at the earliest record: the first probe sample (the lead).
    let first_probe: i64 = common::probe_samples(&dir)[0].time_ns;
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
    let dir = monitor_session(work.path(), "mon");
    let out = import(&dir, &server);
    assert_ok(&out);
    let probe = common::probe_samples(&dir).len() as u64;
    assert!(probe > 500, "{probe} samples");
    assert_eq!(server.count("probe", "seq").unwrap(), probe);
    assert_eq!(
        server.count("probe_agg", "samples").unwrap(),
        common::agg_rows(&dir)
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
        err.contains("no start_ns") && err.contains("files.csv"),
        "{err}"
    );
    // Nothing changed in the directory.
    let names: Vec<_> = std::fs::read_dir(work.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
}

/// A manifest an older build wrote, kept in hostd-records' fixtures.
fn old_manifest(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../records/tests/fixtures/manifests")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Time and fields of the one `run` point.
fn run_point(server: &InfluxServer) -> serde_json::Map<String, serde_json::Value> {
    let answer = server.influxql(r#"SELECT * FROM "run""#).unwrap();
    let series = &answer["results"][0]["series"][0];
    let rows = series["values"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{answer}");
    series["columns"]
        .as_array()
        .unwrap()
        .iter()
        .zip(rows[0].as_array().unwrap())
        .filter(|(_, v)| !v.is_null())
        .map(|(c, v)| (c.as_str().unwrap().to_owned(), v.clone()))
        .collect()
}

#[test]
fn import_takes_a_directory_of_the_old_scenario_gen() {
    let server = InfluxServer::start().expect("private influxd (run `just influx-build` first)");
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("hub-www-contention");
    // The records of `scenario-gen hub-www-contention` (their CSV shapes have not changed)
    // with the manifest it wrote before 862a295.
    let sc = hostd_scenario::load("hub-www-contention").unwrap();
    write_run(&dir, &sc, &hostd_scenario::simulate(&sc), None).unwrap();
    std::fs::write(
        dir.join("manifest.json"),
        old_manifest("scenario-gen-before-records.json"),
    )
    .unwrap();
    let out = import(&dir, &server);
    assert_ok(&out);
    let files = record_count(&dir.join("files.csv"));
    assert_eq!(server.count("file", "bytes").unwrap(), files);
    // The run starts with its first file; its name is the directory's.
    let first_file = hostd_records::files::read(&dir)
        .unwrap()
        .iter()
        .map(|f| f.start_ns)
        .min()
        .unwrap();
    let p = run_point(&server);
    assert_eq!(p["time"], first_file, "{p:?}");
    assert_eq!(p["run"], "hub-www-contention");
    assert_eq!(p["rig"], "unknown");
    assert_eq!(p["scenario"], "hub-www-contention");
    assert_eq!(p["targets"], "C,A,B");
    assert_eq!(p["direct_io"], true);
}

#[test]
fn import_takes_a_directory_of_the_old_monitor() {
    let server = InfluxServer::start().expect("private influxd (run `just influx-build` first)");
    let work = tempfile::tempdir().unwrap();
    // The records of a monitor session with the manifest `hostd monitor` wrote before
    // 5e52024 (`kind`, top-level `probe` and `end_ns`, no run id).
    let dir = monitor_session(work.path(), "run1");
    std::fs::write(
        dir.join("manifest.json"),
        old_manifest("monitor-before-records.json"),
    )
    .unwrap();
    let out = import(&dir, &server);
    assert_ok(&out);
    let probe = common::probe_samples(&dir).len() as u64;
    assert_eq!(server.count("probe", "seq").unwrap(), probe);
    // Still a monitor session: its summary.json is not taken for a run summary.
    assert_eq!(server.count("probe_health", "samples").unwrap(), 0);
    let p = run_point(&server);
    assert_eq!(p["time"], 1_795_453_129_645_964_104u64, "{p:?}");
    assert_eq!(p["run"], "run1");
    assert_eq!(p["hostd_version"], "0.1.0");
}

/// A 1.5 s `hostd monitor` session of the simulated probe in `parent/name`.
fn monitor_session(parent: &std::path::Path, name: &str) -> std::path::PathBuf {
    let dir = parent.join(name);
    let out = hostd()
        .args(["monitor", "--probe", "sim", "--duration", "1.5"])
        .args(["--status-every", "0", "--out"])
        .arg(&dir)
        .env("THROTTLESCOPE_PROBE_SIM", sim_path())
        .output()
        .unwrap();
    assert_ok(&out);
    dir
}
