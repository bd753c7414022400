//! A run directory written before summary.json format 2 (a real `hostd run` of the previous
//! build: a directory target, 3 files written and read back; `hostd-records`'
//! tests/fixtures/run-format1) still analyses and imports. (`hostd verify` reads only the
//! manifest and the kept test files, neither summary.json nor events.json.)

use hostd_influx::testing::InfluxServer;
use std::path::{Path, PathBuf};

mod common;
use common::{assert_ok, hostd, read_json, to_influx};

/// A copy of the fixture (the commands write into the run directory).
fn format1_copy(work: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../records/tests/fixtures/run-format1");
    let to = work.join("run-format1");
    std::fs::create_dir(&to).unwrap();
    for e in std::fs::read_dir(&from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
    to
}

#[test]
fn a_format_1_run_directory_analyses_with_its_latency_and_imports() {
    let work = tempfile::tempdir().unwrap();
    let dir = format1_copy(work.path());
    let old_summary = read_json(&dir.join("summary.json"));
    assert_eq!(old_summary["format_version"], 1);

    let a = hostd()
        .arg("analyze")
        .arg(&dir)
        .arg("--json")
        .output()
        .unwrap();
    assert_ok(&a);
    let doc: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let phases = doc["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    for (p, old) in phases.iter().zip(old_summary["phases"].as_array().unwrap()) {
        let (bps, mbps) = (
            p["throughput_bps"].as_f64().unwrap(),
            old["overall_mbps"].as_f64().unwrap(),
        );
        assert!(
            (bps / 1e6 - mbps).abs() < 1e-9 * mbps,
            "{bps} B/s against {mbps} MB/s"
        );
        assert_eq!(p["block_size"], 1 << 20);
    }
    // The report has the latency of the logs the old run wrote.
    let report = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        report.contains(r#"<td class="l">target 0 write</td><td>7</td>"#),
        "no latency table"
    );

    let server = InfluxServer::start().expect("private influxd (run `just influx-build` first)");
    let out = to_influx(hostd().arg("import").arg(&dir), &server)
        .output()
        .unwrap();
    assert_ok(&out);
    assert_eq!(server.count("file", "bytes").unwrap(), 6);
    assert_eq!(server.count("stats", "files").unwrap(), 2);
    // summary.json was read (format 1): the run's summary still says format 1.
    assert_eq!(read_json(&dir.join("summary.json"))["format_version"], 1);
}
