//! `hostd influx setup` (admin::setup) on a fresh influxd and `hostd import` of a run
//! directory (import::import_run), against real servers.
#![cfg(unix)] // the token files' mode bits

mod common;

use hostd_influx::testing::InfluxServer;
use hostd_influx::{admin, import, Token};
use hostd_records::manifest::extra;
use hostd_records::profile::Profile;
use hostd_records::RunEvent;
use hostd_records::{DirectIo, Manifest, TargetInfo};
use hostd_records::{FileRecord, IntervalRecord};
use hostd_store::{RunDirPart, RunPart, RunStart};
use hostd_workload::ProfileExt;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// `hostd influx setup` with the default organisation and bucket.
fn setup(url: &str, token_file: &Path) -> anyhow::Result<admin::SetupOutcome> {
    admin::setup(url, "throttlescope", "throttlescope", "me", token_file)
}

#[test]
fn setup_onboards_once_writes_a_private_token_and_maps_influxql() {
    let mut s = InfluxServer::start_fresh().unwrap_or_else(|e| panic!("{e:#}"));
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("cfg/token");

    // An existing file at the token path is never overwritten, and the server stays fresh.
    std::fs::create_dir_all(dir.path().join("cfg")).unwrap();
    std::fs::write(&token_file, "mine").unwrap();
    let err = format!("{:#}", setup(&s.url(), &token_file).unwrap_err());
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(std::fs::read_to_string(&token_file).unwrap(), "mine");
    std::fs::remove_file(&token_file).unwrap();

    let out = setup(&s.url(), &token_file).unwrap();
    assert!(out.onboarded);
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let pw = dir.path().join("cfg/token.password");
    assert_eq!(
        std::fs::metadata(&pw).unwrap().permissions().mode() & 0o777,
        0o600
    );
    s.set_token(Token::from_file(&token_file).unwrap()).unwrap();
    // InfluxQL works through the DBRP mapping.
    s.api()
        .unwrap()
        .influxql("throttlescope", "SHOW MEASUREMENTS")
        .unwrap();

    // Idempotent: a second run uses the token file and changes nothing.
    let again = setup(&s.url(), &token_file).unwrap();
    assert!(!again.onboarded);
    assert_eq!(again.ids, out.ids);
    s.api()
        .unwrap()
        .influxql("throttlescope", "SHOW MEASUREMENTS")
        .unwrap();

    // A second bucket is created on an onboarded server.
    let other = admin::setup(&s.url(), "throttlescope", "second", "me", &token_file).unwrap();
    assert!(!other.onboarded);
    assert_ne!(other.ids.bucket_id, out.ids.bucket_id);

    // Without a token for an onboarded server: a clear error.
    let err = setup(&s.url(), &dir.path().join("missing"));
    if std::env::var_os("INFLUX_TOKEN").is_none() {
        let err = format!("{:#}", err.unwrap_err());
        assert!(err.contains("already onboarded"), "{err}");
    }

    // No server: says how to start one.
    s.stop().unwrap();
    let err = format!(
        "{:#}",
        admin::setup(&s.url(), "o", "b", "me", &token_file).unwrap_err()
    );
    assert!(err.contains("just influx-up"), "{err}");
}

fn file_rec(index: u32, phase: &str, t0: u64) -> FileRecord {
    let start = t0 + u64::from(index) * 1_000_000_000;
    common::file_record(phase, index, start, start + 500_000_000, 64 << 20)
}

/// The manifest of `make_run`, as `hostd run --probe` writes it.
fn manifest(t0: u64) -> Manifest {
    let mut m = Manifest::new(
        "run-import-1",
        t0,
        vec![TargetInfo {
            label: "t0".into(),
            scheme: "dir".into(),
            mode: "rw".into(),
            path: "/mnt/t0".into(),
            test_dir: Some("/mnt/t0/throttlescope-run-import-1".into()),
            fs_type: Some("ext4".into()),
            mount_point: Some("/mnt/t0".into()),
            device: Some("/dev/sdb1".into()),
            device_model: Some("Samsung PSSD T7".into()),
            capacity_bytes: Some(1_000_204_886_016),
            free_bytes: Some(981_234_567_168),
            direct_io: DirectIo::Direct,
            engine: "io_uring".into(),
            engine_note: None,
            link: None,
        }],
    );
    m.hostd_version = "0.1.0".into();
    m.command_line = ["hostd", "run", "--profile", "quick", "--target", "/mnt/t0"]
        .map(String::from)
        .to_vec();
    m.host.hostname = "rig-a".into();
    m.profile = Some(Profile::load("quick").unwrap().into());
    m.seed = 7;
    m.probe_target = Some("t0".into());
    m.set_section(
        extra::PROBE,
        &extra::ProbeSection {
            source: "sim".into(),
            target: Some("t0".into()),
            probe_id: Some("P1".into()),
            ..Default::default()
        },
    );
    m
}

/// A run directory as hostd writes it: manifest.json, files.csv and intervals.csv by the
/// real run directory part, the rest as documented in docs/run-directory.md.
fn make_run(dir: &Path) {
    let t0 = 1_763_700_000_000_000_000u64;
    let mut sink = RunDirPart::create(dir).unwrap();
    sink.start(&mut RunStart {
        manifest: &mut manifest(t0),
        dir,
        probe_feeds: &mut Vec::new(),
        drive_feeds: &mut Vec::new(),
    })
    .unwrap();
    for i in 0..10 {
        sink.on_event(&RunEvent::FileEnd(file_rec(i, "write", t0)))
            .unwrap();
    }
    for i in 0..5 {
        sink.on_event(&RunEvent::FileEnd(file_rec(i, "read", t0 + 20_000_000_000)))
            .unwrap();
    }
    for i in 0..12u64 {
        sink.on_event(&RunEvent::Interval(IntervalRecord {
            latency: None,
            target: "t0".into(),
            target_index: 0,
            start_ns: t0 + i * 1_000_000_000,
            end_ns: t0 + (i + 1) * 1_000_000_000,
            bytes: 128 << 20,
            mbps: 134.2,
            phase: "write".into(),
        }))
        .unwrap();
    }
    drop(sink);
    // probe.csv gzipped (20 000 samples), probe_agg.csv plain.
    let f = std::fs::File::create(dir.join("probe.csv.gz")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
    writeln!(
        gz,
        "time_ns,seq,vbus_v,current_a,power_w,energy_j,charge_c,die_temp_c,enclosure_temp_c"
    )
    .unwrap();
    for i in 0..20_000u64 {
        writeln!(
            gz,
            "{},{i},5.01,1.2,6.01,{},{},40.5,38.25",
            t0 + i * 500_000,
            i as f64 * 0.003,
            i as f64 * 0.0006
        )
        .unwrap();
    }
    gz.finish().unwrap();
    let mut agg = String::from("time_ns,power_w_min,power_w_mean,power_w_max\n");
    for i in 0..1_000u64 {
        agg.push_str(&format!("{},5.9,6.0,6.1\n", t0 + i * 10_000_000));
    }
    std::fs::write(dir.join("probe_agg.csv"), agg).unwrap();
    // events.json as hostd writes it: through the typed record's writer.
    let analysis: hostd_records::Analysis = serde_json::from_value(serde_json::json!({
        "events": [{
            "kind": "drop", "target": "t0", "phase": "write", "onset_ns": t0 + 3_000_000_000,
            "onset_bytes": 400_000_000u64, "rate_before_bps": 1.3e8, "rate_after_bps": 6.0e7,
            "cause": "thermal", "confidence": 0.8,
            "evidence": {"text": "thermal at 0.4 GB", "reasons": [], "onset_gb": 0.4,
                         "onset_s": 3.0,
                         "scores": {"thermal": 0.8, "slc_cache": 0.0, "contention": 0.0},
                         "duration_s": 1.0, "onset_file_index": 3}
        }],
        "phases": [],
        "overlap": {"targets": [], "window": null, "per_target": [], "aggregate_bps": null,
                    "peak_aggregate_bps": null, "lags": []}
    }))
    .unwrap();
    hostd_records::events::write(dir, &analysis).unwrap();
    // A spool batch left by a run whose InfluxDB was away at the end.
    std::fs::create_dir(dir.join("spool")).unwrap();
    std::fs::write(
        dir.join("spool/0000000001.lp"),
        format!("probe_health,rig=rig-a,run=run-import-1,probe=P1 samples=5i,dropped=0i {t0}\n"),
    )
    .unwrap();
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walk(dir) {
        out.push((e.display().to_string(), std::fs::read(&e).unwrap()));
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.extend(walk(&p));
        } else {
            v.push(p);
        }
    }
    v
}

/// A private influxd and a run directory `dir/run` made by [`make_run`].
fn server_and_run() -> (InfluxServer, tempfile::TempDir, PathBuf) {
    let s = InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"));
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    make_run(&run);
    (s, dir, run)
}

#[test]
fn import_pushes_every_record_reads_only_and_is_idempotent() {
    let (s, _dir, run) = server_and_run();
    let before = snapshot(&run);

    let sum = import::import_run(&run, s.target(), None).unwrap();
    assert!(sum.report.is_complete(), "{}", sum.report.summary());
    let got: Vec<(String, Option<usize>)> = sum
        .sources
        .iter()
        .map(|c| (c.source.clone(), c.points))
        .collect();
    assert_eq!(
        got,
        [
            ("manifest.json".into(), Some(1)),
            ("files.csv".into(), Some(15)),
            ("intervals.csv".into(), Some(12)),
            ("probe.csv".into(), Some(20_000)),
            ("probe_agg.csv".into(), Some(1_000)),
            ("drive_temp.csv".into(), None),
            ("drive_log.csv".into(), None),
            ("events.json".into(), Some(1)),
            ("events.json overlap".into(), Some(0)),
            ("events.json phases".into(), Some(0)),
            ("events.json headlines".into(), Some(0)),
            ("summary.json".into(), None),
            ("probe-link.jsonl".into(), None),
            ("os-log.jsonl".into(), None),
            ("spool/".into(), Some(1)),
        ]
    );
    let counts = |s: &InfluxServer| {
        [
            s.count("run", "profile").unwrap(),
            s.count("file", "bytes").unwrap(),
            s.count("interval", "mbps").unwrap(),
            s.count("probe", "seq").unwrap(),
            s.count("probe_agg", "power_w_mean").unwrap(),
            s.count("event", "confidence").unwrap(),
            s.count("probe_health", "samples").unwrap(),
        ]
    };
    assert_eq!(counts(&s), [1, 15, 12, 20_000, 1_000, 1, 1]);
    // Tags and derived fields as docs/data-model.md says.
    let rows = s
        .rows(r#"SELECT last("cum_bytes") FROM "file" WHERE "phase" = 'write' AND "run" = 'run-import-1' AND "rig" = 'rig-a'"#)
        .unwrap();
    assert_eq!(rows[0][1], 10 * (64 << 20));
    let rows = s
        .rows(r#"SELECT count("seq") FROM "probe" WHERE "probe" = 'P1'"#)
        .unwrap();
    assert_eq!(rows[0][1], 20_000);
    let rows = s
        .rows(r#"SELECT "rate_after_mbps", "text" FROM "event""#)
        .unwrap();
    assert_eq!(rows[0][1], 60.0);
    assert_eq!(rows[0][2], "thermal at 0.4 GB");

    // Read only, and a second import changes no count.
    assert_eq!(snapshot(&run), before, "the run directory was not changed");
    import::import_run(&run, s.target(), Some("rig-a")).unwrap();
    assert_eq!(counts(&s), [1, 15, 12, 20_000, 1_000, 1, 1]);
}

#[test]
fn import_with_a_refused_token_fails_clearly_and_changes_nothing() {
    let (s, dir, run) = server_and_run();
    let before = snapshot(&run);
    let mut target = s.target();
    target.token = Token::new("nope");
    let err = format!("{:#}", import::import_run(&run, target, None).unwrap_err());
    assert!(
        err.contains("401") && err.contains("manifest.json"),
        "{err}"
    );
    assert!(err.contains("Nothing in"), "{err}");
    assert_eq!(snapshot(&run), before);

    let err = format!(
        "{:#}",
        import::import_run(dir.path(), s.target(), None).unwrap_err()
    );
    assert!(err.contains("not a run directory"), "{err}");
}

/// The `run` point's tags and fields (name → value) and field types, as InfluxDB has them.
fn run_point_in(
    s: &InfluxServer,
) -> (
    serde_json::Map<String, serde_json::Value>,
    Vec<Vec<serde_json::Value>>,
) {
    let answer = s.influxql(r#"SELECT * FROM "run""#).unwrap();
    let series = &answer["results"][0]["series"][0];
    let rows = series["values"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "one run point: {answer}");
    let columns = series["columns"].as_array().unwrap();
    let point = columns
        .iter()
        .zip(rows[0].as_array().unwrap())
        .filter(|(_, v)| !v.is_null())
        .map(|(c, v)| (c.as_str().unwrap().to_owned(), v.clone()))
        .collect();
    let types =
        hostd_influx::admin::influxql_rows(&s.influxql(r#"SHOW FIELD KEYS FROM "run""#).unwrap());
    (point, types)
}

#[test]
fn the_imported_run_point_carries_each_manifest_field_with_its_value_and_type() {
    let s = InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"));
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    make_run(&run);
    import::import_run(&run, s.target(), None).unwrap();

    // What the run point must say, from the typed manifest read back from the directory
    // (every field taken apart: one added to `Manifest` has to be placed here too).
    let m = hostd_records::manifest::read(&run).unwrap();
    let Manifest {
        format_version,
        formats: _,
        run_id,
        hostd_version,
        command_line,
        start_ns,
        host,
        targets,
        profile: _,
        seed,
        keep,
        allow_cached,
        probe_target: _,
        conditions,
        extra: _,
    } = &m;
    // Tags and notes on the run point: schema::tests and tests/conditions_cli.rs in hostd.
    assert!(conditions.is_empty(), "this run has no tags or notes");
    let labels: Vec<&str> = targets.iter().map(|t| t.label.as_str()).collect();
    let want = serde_json::json!({
        "time": start_ns,
        "rig": host.hostname,
        "run": run_id,
        "profile": m.profile_name().unwrap(),
        "hostd_version": hostd_version,
        "format_version": format_version,
        "seed": seed,
        "keep": keep,
        "allow_cached": allow_cached,
        "command_line": command_line.join(" "),
        "hostname": host.hostname,
        "targets": labels.join(","),
        "direct_io": targets.iter().all(|t| t.direct_io.is_direct()),
    });
    let (got, types) = run_point_in(&s);
    assert_eq!(serde_json::Value::Object(got), want);
    // Types fixed by the typed mapping (a later live run of the same names must match).
    let types: Vec<(&str, &str)> = types
        .iter()
        .map(|r| (r[0].as_str().unwrap(), r[1].as_str().unwrap()))
        .collect();
    assert_eq!(
        types,
        [
            ("allow_cached", "boolean"),
            ("command_line", "string"),
            ("direct_io", "boolean"),
            ("format_version", "integer"),
            ("hostd_version", "string"),
            ("hostname", "string"),
            ("keep", "boolean"),
            ("profile", "string"),
            ("seed", "integer"),
            ("targets", "string"),
        ]
    );
}
