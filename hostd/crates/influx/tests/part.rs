//! InfluxPart through a whole (synthetic) run: live records and probe samples while
//! influxd goes away and comes back, then the run's records in memory (files, intervals,
//! analysis) at the end.

mod common;

use hostd_influx::testing::InfluxServer;
use hostd_influx::InfluxPart;
use hostd_records::profile::Profile;
use hostd_records::{
    FileRecord, IntervalRecord, Manifest, ProbeSample, RunEvent, RunOutcome, RunStatus, Summary,
};
use hostd_store::manifest::collect_host;
use hostd_store::{ProbeData, RunPart, RunRecords, RunStart, SummaryExt};
use hostd_workload::ProfileExt;
use std::time::Duration;

const T0: u64 = 1_763_800_000_000_000_000;

fn file(index: u32) -> FileRecord {
    let start = T0 + u64::from(index) * 100_000_000;
    common::file_record("write", index, start, start + 100_000_000, 8 << 20)
}

#[test]
fn live_records_survive_an_outage_and_run_files_follow_at_the_end() {
    let mut s = InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"));
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    std::fs::create_dir_all(&run_dir).unwrap();
    let mut manifest = Manifest::new("comp-run", T0, Vec::new());
    manifest.hostd_version = "test".into();
    manifest.command_line = vec!["hostd".into(), "run".into()];
    manifest.host = collect_host();
    manifest.profile = Some(Profile::load("quick").unwrap().into());
    manifest.seed = 1;
    let mut comp = InfluxPart::new(s.target(), Some("rig-c".into()));
    let mut feed = comp.probe_feed().expect("InfluxDB takes the probe stream");
    let section = comp
        .start(&mut RunStart {
            manifest: &mut manifest,
            dir: &run_dir,
            probe_feeds: &mut Vec::new(),
            drive_feeds: &mut Vec::new(),
        })
        .unwrap()
        .unwrap();
    assert_eq!(section["bucket"], "throttlescope");
    assert!(!section.to_string().contains(s.token().expose()));

    let mut files = Vec::new();
    let mut intervals = Vec::new();
    for i in 0..60u32 {
        if i == 20 {
            s.stop().unwrap();
        }
        if i == 0 {
            assert_eq!(
                comp.live_status(),
                None,
                "nothing to say while InfluxDB takes all"
            );
        }
        if i == 40 {
            // Longer than the 1 s flush interval: a batch certainly meets the outage.
            std::thread::sleep(Duration::from_millis(2_500));
            let status = comp.live_status().expect("the live view shows the spool");
            assert!(
                status.starts_with("influx: spool ") && status.ends_with(" of 1.07 GB"),
                "{status}"
            );
            s.restart().unwrap();
        }
        let f = file(i);
        comp.on_event(&RunEvent::FileEnd(f.clone())).unwrap();
        files.push(f);
        // The probe's samples of this file's 100 ms, as the probe part feeds them.
        let samples: Vec<ProbeSample> = (u64::from(i) * 100..u64::from(i + 1) * 100)
            .map(|k| ProbeSample {
                time_ns: (T0 + k * 1_000_000) as i64,
                seq: k,
                power_w: Some(6.5),
                ..ProbeSample::default()
            })
            .collect();
        feed(ProbeData::Samples(&samples)).unwrap();
        if i % 10 == 9 {
            let iv = IntervalRecord {
                latency: None,
                target: "t0".into(),
                target_index: 0,
                start_ns: T0 + u64::from(i / 10) * 1_000_000_000,
                end_ns: T0 + u64::from(i / 10 + 1) * 1_000_000_000,
                bytes: 80 << 20,
                mbps: 83.886,
                phase: "write".into(),
            };
            comp.on_event(&RunEvent::Interval(iv.clone())).unwrap();
            intervals.push(iv);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    feed(ProbeData::End).unwrap();
    // What the analysis part hands on in memory.
    let analysis: hostd_records::Analysis = serde_json::from_value(serde_json::json!({
        "events": [{
            "kind": "drop", "target": "t", "phase": "write", "onset_ns": T0 + 1,
            "onset_bytes": 0, "rate_before_bps": 2e8, "rate_after_bps": 1e8,
            "cause": "unknown", "confidence": 0.2,
            "evidence": {"text": "", "reasons": [], "onset_gb": 0.0, "onset_s": 0.0,
                         "scores": {"thermal": 0.0, "slc_cache": 0.0, "contention": 0.0},
                         "duration_s": 1.0, "onset_file_index": 0}
        }],
        "phases": [],
        "overlap": {"targets": [], "window": null, "per_target": [], "aggregate_bps": null,
                    "peak_aggregate_bps": null, "lags": []}
    }))
    .unwrap();

    let outcome = RunOutcome {
        status: RunStatus::Completed,
        start_ns: T0,
        end_ns: T0 + 6_000_000_000,
        targets: Vec::new(),
        files,
        intervals,
        samples: Vec::new(),
        warnings: Vec::new(),
        cleanup: Vec::new(),
        programs: Vec::new(),
        preparation: Vec::new(),
    };
    let summary = Summary::compute("comp-run", &outcome);
    let mut records = RunRecords {
        dir: &run_dir,
        manifest,
        outcome: &outcome,
        summary,
        data: hostd_records::RunData {
            files: outcome.files.clone(),
            ..Default::default()
        },
        probe_link: Vec::new(),
        analysis: Some(analysis),
    };
    comp.finish(&mut records).unwrap();
    let inf = &records.summary.extra["influx"];
    assert_eq!(inf["complete"], true, "{inf}");
    assert!(inf["points_backfilled"].as_u64().unwrap() > 0, "{inf}");
    // The bounds it kept to: nothing dropped, the spool used and empty again.
    assert_eq!(inf["points_dropped"], 0, "{inf}");
    assert_eq!(inf["spool_max_bytes"], 1u64 << 30, "{inf}");
    assert_eq!(inf["memory_batches_max"], 8, "{inf}");
    assert!(inf["spool_peak_bytes"].as_u64().unwrap() > 0, "{inf}");
    assert_eq!(inf["spool_bytes"], 0, "{inf}");
    assert_eq!(inf["pushed_at_end"]["probe (live)"], 6_000);
    assert_eq!(inf["pushed_at_end"]["files.csv"], 60);
    assert_eq!(inf["pushed_at_end"]["events.json"], 1);

    assert_eq!(s.count("run", "profile").unwrap(), 1);
    assert_eq!(s.count("file", "bytes").unwrap(), 60);
    assert_eq!(s.count("interval", "mbps").unwrap(), 6);
    assert_eq!(s.count("probe", "seq").unwrap(), 6_000);
    assert_eq!(s.count("event", "confidence").unwrap(), 1);
    let rows = s
        .rows(
            r#"SELECT last("cum_bytes") FROM "file" WHERE "rig" = 'rig-c' AND "run" = 'comp-run'"#,
        )
        .unwrap();
    assert_eq!(rows[0][1], 60 * (8 << 20));
    assert_eq!(std::fs::read_dir(run_dir.join("spool")).unwrap().count(), 0);
}
