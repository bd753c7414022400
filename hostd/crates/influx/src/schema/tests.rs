//! Tests of the run-record mapping.
use super::*;
use hostd_records::manifest::extra;
use hostd_records::CorruptBlock;
use hostd_records::FileRecord;
use serde_json::{json, Value};
use std::collections::HashMap;

fn tags() -> RunTags {
    RunTags {
        rig: "bench".into(),
        run: "r1".into(),
        probe: Some("p7".into()),
        user: Default::default(),
    }
}

#[test]
fn files_csv_gets_tags_cumulative_bytes_and_seconds() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("files.csv"),
        "target,phase,index,start_ns,end_ns,bytes,mbps,verified,status\n\
         /mnt/x,write,0,1000000000,2000000000,100,0.0001,,ok\n\
         /mnt/x,write,1,2000000000,2500000000,50,0.0001,,ok\n\
         /mnt/x,read,0,3000000000,4000000000,100,0.0001,true,ok\n",
    )
    .unwrap();
    let mut pts = Vec::new();
    let n = csv_points(dir.path(), &CSV_SPECS[0], &tags(), |p| {
        pts.push(p.to_line()?);
        Ok(())
    })
    .unwrap();
    assert_eq!(n, Some(3));
    assert_eq!(
        pts[1],
        "file,phase=write,rig=bench,run=r1,target=/mnt/x index=1i,start_ns=2000000000i,\
         end_ns=2500000000i,bytes=50i,mbps=0.0001,corrupt_blocks=0i,corrupt_bytes=0i,late_ops=0i,\
         direct_io=false,status=\"ok\",block_size=0i,queue_depth=0i,cum_bytes=150i,seconds=0.5 2500000000"
    );
    assert!(pts[2].contains("verified=true") && pts[2].contains("cum_bytes=100i"));
}

#[test]
fn only_the_probed_targets_files_carry_the_probe_and_its_figures() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("files.csv"),
        "target,phase,index,start_ns,end_ns,bytes,probe,energy_j\n\
         sim:a,write,0,1000000000,2000000000,100,7,2.5\n\
         sim:b,write,0,1000000000,2000000000,100,no probe,\n",
    )
    .unwrap();
    let mut pts = Vec::new();
    csv_points(dir.path(), &CSV_SPECS[0], &tags(), |p| {
        pts.push(p.to_line()?);
        Ok(())
    })
    .unwrap();
    assert!(
        // A numeric probe id is still a string: the field has one type in every row.
        pts[0].contains(r#"probe="7""#) && pts[0].contains("energy_j=2.5"),
        "{}",
        pts[0]
    );
    assert!(
        pts[1].contains(r#"probe="no probe""#) && !pts[1].contains("energy_j"),
        "{}",
        pts[1]
    );
}

#[test]
fn gzipped_probe_csv_is_read_and_bad_time_is_a_clear_error() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let f = std::fs::File::create(dir.path().join("probe.csv.gz")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
    gz.write_all(b"time_ns,seq,power_w,enclosure_temp_c\n10,0,4.5,\nx,1,4.6,\n")
        .unwrap();
    gz.finish().unwrap();
    let mut lines = Vec::new();
    let err = csv_points(dir.path(), &CSV_SPECS[2], &tags(), |p| {
        lines.push(p.to_line()?);
        Ok(())
    })
    .unwrap_err();
    // The file is read whole before any point goes out: a bad file sends nothing.
    assert!(lines.is_empty(), "{lines:?}");
    assert!(
        format!("{err:#}").contains("probe.csv: line 3, column `time_ns`"),
        "{err:#}"
    );
    std::fs::remove_file(dir.path().join("probe.csv.gz")).unwrap();
    let f = std::fs::File::create(dir.path().join("probe.csv.gz")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
    gz.write_all(b"time_ns,seq,power_w,enclosure_temp_c\n10,0,4.5,\n")
        .unwrap();
    gz.finish().unwrap();
    csv_points(dir.path(), &CSV_SPECS[2], &tags(), |p| {
        lines.push(p.to_line()?);
        Ok(())
    })
    .unwrap();
    assert_eq!(
        lines,
        ["probe,probe=p7,rig=bench,run=r1 seq=0i,power_w=4.5 10"]
    );
    assert_eq!(
        csv_points(dir.path(), &CSV_SPECS[3], &tags(), |_| Ok(())).unwrap(),
        None
    );
}

/// A manifest as `hostd run --probe` writes it (two targets, one without direct I/O).
fn run_manifest() -> hostd_records::Manifest {
    use hostd_records::{DirectIo, Manifest, TargetInfo};
    let target = |label: &str, direct_io| TargetInfo {
        label: label.into(),
        scheme: "dir".into(),
        mode: "rw".into(),
        path: label.into(),
        test_dir: None,
        fs_type: Some("ext4".into()),
        mount_point: None,
        device: None,
        device_model: None,
        capacity_bytes: None,
        free_bytes: None,
        direct_io,
        engine: "io_uring".into(),
        engine_note: None,
        link: None,
    };
    let mut m = Manifest::new(
        "2026-11-21T16-00-00Z-ab12",
        5,
        vec![
            target("t0", DirectIo::Direct),
            target(
                "t1",
                DirectIo::Refused {
                    reason: "EINVAL".into(),
                },
            ),
        ],
    );
    m.hostd_version = "0.1.0".into();
    m.host.hostname = "rig1".into();
    m.profile = Some(
        <hostd_records::Profile as hostd_workload::ProfileExt>::load("quick")
            .unwrap()
            .into(),
    );
    m.command_line = vec!["hostd".into(), "run".into()];
    m.seed = 42;
    m.allow_cached = true;
    m.set_section(
        extra::PROBE,
        &extra::ProbeSection {
            source: "sim".into(),
            target: Some("t0".into()),
            probe_id: Some("abc".into()),
            ..Default::default()
        },
    );
    m
}

#[test]
fn the_users_tags_are_on_every_point_and_the_notes_on_the_run_point() {
    let mut man = run_manifest();
    man.conditions = hostd_records::conditions::Conditions::from_args(
        &["fan off".into(), "second\nline".into()],
        &["enclosure=Orico L".into(), "cable=TB4".into()],
    )
    .unwrap();
    let t = RunTags::from_manifest(&man);
    let run = run_point(&man, &t).to_line().unwrap();
    assert!(
        run.starts_with("run,cable=TB4,enclosure=Orico\\ L,rig=rig1,run="),
        "{run}"
    );
    assert!(run.contains(r#"notes="fan off | second line""#), "{run}");
    let file = file_point(&t, &rec(0, "write", 4096, None), 0);
    assert!(file
        .tags()
        .contains(&("enclosure".into(), "Orico L".into())));
    assert!(file
        .tags()
        .contains(&("target".into(), "/mnt/My Disk".into())));
}

#[test]
fn manifest_gives_tags_and_run_point() {
    let man = run_manifest();
    let t = RunTags::from_manifest(&man);
    assert_eq!(
        (t.rig.as_str(), t.run.as_str(), t.probe.as_deref()),
        ("rig1", "2026-11-21T16-00-00Z-ab12", Some("abc"))
    );
    let line = run_point(&man, &t).to_line().unwrap();
    assert_eq!(
        line,
        "run,rig=rig1,run=2026-11-21T16-00-00Z-ab12 profile=\"quick\",hostd_version=\"0.1.0\",\
         format_version=2i,seed=42i,keep=false,allow_cached=true,command_line=\"hostd run\",\
         hostname=\"rig1\",targets=\"t0,t1\",direct_io=false 5"
    );
    // Unknown facts of an old manifest are left out, not written empty; no host: `unknown`.
    let mut old = hostd_records::Manifest::new("mon", 7, Vec::new());
    old.set_section(
        extra::SCENARIO,
        &extra::ScenarioSection {
            name: "x5-thermal".into(),
            ..Default::default()
        },
    );
    let t = RunTags::from_manifest(&old);
    assert_eq!((t.rig.as_str(), t.probe.as_deref()), ("unknown", None));
    assert_eq!(
        run_point(&old, &t).to_line().unwrap(),
        "run,rig=unknown,run=mon scenario=\"x5-thermal\",format_version=2i,seed=0i,keep=false,allow_cached=false 7"
    );
}

/// An analysis from events.json text with its events, phases and overlap.
fn analysis(events: Value, phases: Value, overlap: Value) -> hostd_records::events::Analysis {
    serde_json::from_value(json!({"events": events, "phases": phases, "overlap": overlap})).unwrap()
}

fn no_overlap() -> Value {
    json!({"targets": [], "window": null, "per_target": [], "aggregate_bps": null,
           "peak_aggregate_bps": null, "lags": []})
}

#[test]
fn events_map_with_units_and_evidence() {
    let a = analysis(
        json!([{
            "kind": "drop", "target": "t0", "phase": "write", "onset_ns": 99,
            "onset_bytes": 23900000000u64, "rate_before_bps": 2.31e9, "rate_after_bps": 6.6e8,
            "cause": "thermal", "confidence": 0.9,
            "evidence": {"duration_s": 12.5, "text": "thermal at 23.9 GB", "reasons": [],
                         "scores": {"thermal": 0.9, "slc_cache": 0.0, "contention": 0.0},
                         "onset_gb": 23.9, "onset_s": 4.0, "onset_file_index": 7,
                         "temp_rise_c": 11.5}
        }]),
        json!([]),
        no_overlap(),
    );
    let pts = event_points(&a, &tags());
    let line = pts[0].to_line().unwrap();
    for want in [
        "event,phase=write,rig=bench,run=r1,target=t0 ",
        "kind=\"drop\"",
        "cause=\"thermal\"",
        "confidence=0.9",
        "onset_bytes=23900000000i",
        "rate_before_mbps=2310",
        "rate_after_mbps=660",
        "onset_gb=23.9",
        "duration_s=12.5",
        "temp_rise_c=11.5",
        "text=\"thermal at 23.9 GB\"",
        " 99",
    ] {
        assert!(line.contains(want), "{want} missing in {line}");
    }
    assert!(
        !line.contains("temp_noise_c"),
        "absent evidence is no field: {line}"
    );
}

#[test]
fn overlap_stats_probe_health_and_link_events() {
    let ev = analysis(
        json!([]),
        json!([{"target": "A", "phase": "write", "files": 107, "bytes": 100000000000u64,
                "seconds": 5.0, "start_ns": 10, "end_ns": 20, "throughput_bps": 2.0e10,
                "mean_bps": 2.1e10, "median_bps": 2.0e10, "trimmed_mean_bps": 1.6e10,
                "theil_sen_bps": null, "theil_sen_overhead_s": null,
                "least_squares_bps": null, "least_squares_overhead_s": null,
                "bimodal": true, "bimodality": {"bimodal": true, "gap": 1.0, "separation": 2.0,
                "split_at": 3.0, "low_fraction": 0.5}}]),
        json!({"targets": ["A", "B"],
               "window": {"start_ns": 100, "end_ns": 300, "duration_s": 2e-7},
               "per_target": [{"target": "A", "bytes": 3.01e10, "rate_bps": 1.1e10},
                              {"target": "B", "bytes": 5.0, "rate_bps": 2.0e6}],
               "aggregate_bps": 5.7e10, "peak_aggregate_bps": 5.8e10, "lags": []}),
    );
    let lines =
        |pts: Vec<Point>| -> Vec<String> { pts.iter().map(|p| p.to_line().unwrap()).collect() };
    assert_eq!(
        lines(overlap_points(&ev, &tags())),
        [
            "overlap,rig=bench,run=r1,target=A end_ns=300i,duration_s=0.0000002,bytes=30100000000i,mbps=11000 100",
            "overlap,rig=bench,run=r1,target=B end_ns=300i,duration_s=0.0000002,bytes=5i,mbps=2 100",
            "overlap,rig=bench,run=r1,target=all end_ns=300i,duration_s=0.0000002,mbps=57000,peak_mbps=58000 100",
        ]
    );
    assert!(overlap_points(&analysis(json!([]), json!([]), no_overlap()), &tags()).is_empty());
    let st = lines(stats_points(&ev, &tags()));
    assert_eq!(st.len(), 1);
    for want in [
        "stats,phase=write,rig=bench,run=r1,target=A ",
        "files=107i",
        "bytes=100000000000i",
        "mean_mbps=21000",
        "trimmed_mean_mbps=16000",
        "throughput_mbps=20000",
        "bimodal=true",
        "start_ns=10i",
    ] {
        assert!(st[0].contains(want), "{want} in {}", st[0]);
    }
    assert!(!st[0].contains("gap"));
    assert!(!st[0].contains("power"), "no probe, no power: {}", st[0]);
    // The probed phase: its power against the port's budget and its VBUS.
    let mut probed = ev.clone();
    probed.phases[0].port = Some(hostd_records::port_budget::PhasePower {
        budget_w: Some(4.5),
        budget_from_w: None,
        peak_w: 4.5,
        mean_w: 4.2,
        peak_share: Some(1.0),
        mean_share: Some(4.2 / 4.5),
        vbus_min_v: Some(4.62),
        vbus_p1_v: None,
    });
    let st = lines(stats_points(&probed, &tags()));
    let want = ",peak_power_w=4.5,mean_power_w=4.2,port_budget_w=4.5,peak_power_share=1,mean_power_share=0.9333333333333333,vbus_min_v=4.62 10";
    assert!(st[0].ends_with(want), "{want} at the end of {}", st[0]);
    assert!(
        !st[0].contains("theil_sen"),
        "no estimate, no field: {}",
        st[0]
    );

    let mut summary: hostd_records::Summary =
        serde_json::from_value(json!({"run_id": "r1", "status": "completed", "start_ns": 1,
            "end_ns": 999, "phases": [], "window": null, "warnings": [], "cleanup": []}))
        .unwrap();
    assert!(probe_health_point(&summary, &tags()).is_none());
    summary.probe_health = Some(hostd_records::summary::ProbeHealth {
        samples: Some(11835),
        dropped: Some(2),
        i2c_errors: Some(0),
        overflows: Some(4),
        crc_errors: 4,
        seq_gaps: 1,
        reconnects: 2,
        alignment_uncertainty_ns: Some(40105.3),
        sample_rate_hz: Some(1000.0),
    });
    let ph = probe_health_point(&summary, &tags())
        .unwrap()
        .to_line()
        .unwrap();
    assert_eq!(
        ph,
        "probe_health,probe=p7,rig=bench,run=r1 samples=11835i,dropped=2i,i2c_errors=0i,\
         crc_errors=4i,seq_gaps=1i,overflows=4i,reconnects=2i,alignment_uncertainty_us=40.1053,\
         sample_rate_hz=1000 999"
    );

    let jsonl = "{\"event\":\"connected\",\"port\":\"/dev/pts/0\",\"time_ns\":5}\n\
                 {\"event\":\"device_info\",\"info\":{\"x\":1},\"time_ns\":6}\n";
    assert_eq!(
        lines(probe_link_points(
            &hostd_records::probe_link::parse(std::path::Path::new("l"), jsonl).unwrap(),
            &tags()
        )),
        [
            "probe_link,probe=p7,rig=bench,run=r1 event=\"connected\",port=\"/dev/pts/0\" 5",
            "probe_link,probe=p7,rig=bench,run=r1 event=\"device_info\" 6",
        ]
    );
}

/// One mapping: a sample and a 10 ms bin streamed live give the same points as
/// `hostd import` of the `probe.csv` / `probe_agg.csv` lines they were written as.
#[test]
fn live_probe_points_equal_imported_ones() {
    use hostd_records::agg::{AggRow, Stat};
    use hostd_records::probe::ProbeSample;
    let dir = tempfile::tempdir().unwrap();
    let samples = [
        ProbeSample {
            time_ns: 1_700_000_000_000_000_123,
            seq: 41,
            probe_time_us: 9,
            vbus_v: Some(5.012_345),
            current_a: Some(0.812_5),
            power_w: Some(4.072_5),
            energy_j: Some(12.25),
            charge_c: Some(2.5),
            die_temp_c: Some(31.062_5),
            enclosure_temp_c: None,
            vbus_min_v: Some(4.52),
        },
        ProbeSample {
            time_ns: 1_700_000_000_001_000_123,
            seq: 42,
            probe_time_us: 1009,
            vbus_v: Some(5.0),
            current_a: None,
            power_w: None,
            energy_j: None,
            charge_c: None,
            die_temp_c: None,
            enclosure_temp_c: Some(28.5),
            vbus_min_v: None,
        },
    ];
    let st = |v: f64| Stat {
        min: v - 0.5,
        mean: v,
        max: v + 0.25,
    };
    let empty = Stat {
        min: f64::NAN,
        mean: f64::NAN,
        max: f64::NAN,
    };
    let aggs = [AggRow {
        time_ns: 1_700_000_000_000_000_000,
        samples: 10,
        vbus_v: st(5.0),
        current_a: st(0.8),
        power_w: st(4.0),
        die_temp_c: st(31.0),
        enclosure_temp_c: empty,
        energy_j: 12.5,
    }];
    let mut w = hostd_records::probe::Writer::create(dir.path()).unwrap();
    w.write(&samples).unwrap();
    w.flush().unwrap();
    let mut w = hostd_records::agg::Writer::create(dir.path()).unwrap();
    w.write(&aggs).unwrap();
    w.flush().unwrap();

    let imported = |spec: &CsvSpec| {
        let mut lines = Vec::new();
        csv_points(dir.path(), spec, &tags(), |p| {
            lines.push(p.to_line()?);
            Ok(())
        })
        .unwrap();
        lines
    };
    let live: Vec<String> = samples
        .iter()
        .map(|s| sample_point(&tags(), s).to_line().unwrap())
        .collect();
    assert_eq!(imported(&CSV_SPECS[2]), live);
    // The batch's VBUS minimum (wire v3) is a field of its own; absent from older probes.
    assert!(live[0].contains(",vbus_min_v=4.52 "), "{}", live[0]);
    assert!(
        live[1].contains("seq=42i,vbus_v=5,enclosure_temp_c=28.5 "),
        "{}",
        live[1]
    );
    let live: Vec<String> = aggs
        .iter()
        .map(|r| agg_point(&tags(), r).to_line().unwrap())
        .collect();
    assert_eq!(imported(&CSV_SPECS[3]), live);
    assert!(!live[0].contains("enclosure"), "{}", live[0]);
}

fn rec(index: u32, phase: &str, bytes: u64, verified: Option<bool>) -> FileRecord {
    FileRecord {
        latency: None,
        target: "/mnt/My Disk".into(),
        target_index: 0,
        phase: phase.into(),
        index,
        start_ns: 1_700_000_000_000_000_000 + u64::from(index) * 2_000_000_000,
        end_ns: 1_700_000_001_000_000_000 + u64::from(index) * 2_000_000_000,
        bytes,
        mbps: 512.25,
        verified,
        corrupt_blocks: u64::from(index),
        corrupt_bytes: 0,
        late_ops: 0,
        block_size: 1 << 20,
        queue_depth: 8,
        corrupt: if index == 2 {
            vec![CorruptBlock {
                offset: 8192,
                bad_bytes: 3,
                first_bad_byte: 8193,
            }]
        } else {
            Vec::new()
        },
        direct_io: true,
        status: "ok".into(),
        probe: None,
    }
}

/// A live run and `hostd import` of its run directory must produce the same points.
#[test]
fn live_file_points_equal_imported_ones() {
    let recs = [
        rec(0, "write", 1_000, None),
        rec(1, "write", 2_000, None),
        rec(2, "read", 1_000, Some(false)),
    ];
    let live = live_and_imported_file_points(&recs);
    assert!(live[2].contains("first_corrupt_offset=8192i"));
    assert!(live[2].contains("verified=false"));
    assert!(live[1].contains("cum_bytes=3000i"));
}

/// A probed run's file points carry the probe's figures live (the records in memory) and
/// imported (files.csv streamed without them, joined with files-probe.csv).
#[test]
fn probed_live_file_points_equal_imported_ones() {
    let mut recs = [rec(0, "write", 1_000, None), rec(1, "write", 2_000, None)];
    recs[0].probe = Some(Box::new(hostd_records::FileProbe {
        probe: "sim-0001".into(),
        energy_j: Some(0.125),
        j_per_gb: Some(2.5),
        temp_max_c: Some(31.25),
        ..Default::default()
    }));
    recs[1].probe = Some(Box::new(hostd_records::FileProbe {
        probe: "sim-0001".into(),
        ..Default::default()
    }));
    let live = live_and_imported_file_points(&recs);
    assert!(
        live[0].contains("energy_j=0.125") && live[0].contains("probe=\"sim-0001\""),
        "{}",
        live[0]
    );
    assert!(!live[1].contains("energy_j"), "{}", live[1]);
}

/// Streams `recs` to a run directory's files.csv as `hostd run` does (and their probe
/// figures, if any, to files-probe.csv at the end), imports it, and asserts that the
/// imported points equal the live ones; returns the live lines.
fn live_and_imported_file_points(recs: &[FileRecord]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let mut rundir = hostd_records::files::Writer::create(&run).unwrap();
    let tags = RunTags {
        rig: "rig1".into(),
        run: "r1".into(),
        probe: None,
        user: Default::default(),
    };
    let mut live = Vec::new();
    let mut cum: HashMap<String, u64> = HashMap::new();
    for r in recs {
        rundir.write(r).unwrap();
        let total = cum.entry(r.phase.clone()).or_default();
        *total += r.bytes;
        live.push(file_point(&tags, r, *total).to_line().unwrap());
    }
    drop(rundir);
    if recs.iter().any(|r| r.probe.is_some()) {
        hostd_records::files_probe::write(&run, recs).unwrap();
    }
    let mut imported = Vec::new();
    csv_points(&run, &CSV_SPECS[0], &tags, |p| {
        imported.push(p);
        Ok(())
    })
    .unwrap();
    assert_eq!(imported.len(), recs.len());
    for (live_line, imp) in live.iter().zip(&imported) {
        // Same fields in any order: compare sorted field lists.
        let sorted = |line: &str| {
            let mut parts: Vec<String> = line.split(' ').map(str::to_owned).collect();
            let mut fields: Vec<&str> = parts[1].split(',').collect();
            fields.sort();
            parts[1] = fields.join(",");
            parts.join(" ")
        };
        // The tag value has a space: split after the escaped key set instead.
        let live_norm = sorted(&live_line.replace("My\\ Disk", "My_Disk"));
        let imp_norm = sorted(&imp.to_line().unwrap().replace("My\\ Disk", "My_Disk"));
        assert_eq!(live_norm, imp_norm);
    }
    live
}

#[test]
fn headline_figures_map_with_their_intervals_or_the_reason_they_are_absent() {
    let ev: hostd_records::events::Analysis = serde_json::from_value(json!({
        "events": [],
        "overlap": no_overlap(),
        "phases": [{"target": "x5", "phase": "write", "files": 1, "bytes": 1, "seconds": 1.0,
                    "start_ns": 1000, "end_ns": 2000, "throughput_bps": 1.0, "mean_bps": 1.0,
                    "median_bps": 1.0, "trimmed_mean_bps": 1.0, "theil_sen_bps": null,
                    "theil_sen_overhead_s": null, "least_squares_bps": null,
                    "least_squares_overhead_s": null, "bimodal": false, "bimodality": null}],
        "headlines": {
            "series": [{
                "target": "x5", "phase": "write",
                "average_bps": {"value": 7.8e8, "low": 7.2e8, "high": 8.4e8},
                "sustained_bps": {"value": 6.5e8, "low": 6.3e8, "high": 6.7e8},
                "drop_bytes": {"value": 2.39e10, "low": 2.35e10, "high": 2.42e10},
                "drop_s": {"value": 10.5, "low": 10.3, "high": 10.9},
                "after_drop_bps": {"value": 6.47e8, "low": 6.39e8, "high": 6.56e8},
                "drop_cause": "thermal", "drop_confidence": 0.8,
                "peak_power_w": {"value": 8.2, "low": 8.1, "high": 8.3},
                "slc_cache_bytes": {"absent": "no drop attributed to the SLC cache"},
                "post_cache_bps": {"absent": "no drop attributed to the SLC cache"},
                "throttle_s": {"value": 10.5, "low": 10.3, "high": 10.9},
                "throttle_bytes": {"value": 2.39e10, "low": 2.35e10, "high": 2.42e10},
                "throttled_bps": {"value": 6.47e8, "low": 6.39e8, "high": 6.56e8},
                "energy": []
            }],
            "thermal_fit": {"Ok": {
                "target": "x5",
                "rth_c_per_w": {"value": 5.98, "low": 1.28, "high": 6.65},
                "tau_s": {"value": 19.9, "low": 2.55, "high": 22.0},
                "ambient_c": {"value": 25.1, "low": 21.7, "high": 48.8},
                "steps": 140, "residual_c_per_s": 0.01,
                "throttle_s_at_delta": {"value": 1.88, "low": 0.56, "high": 1.97},
                "ambient_delta_c": 10.0,
                "throttle_s_at_run_ambient": {"absent": "138 of 2988 bootstrap fits never reach"}
            }}
        }
    }))
    .unwrap();
    let pts: Vec<String> = headline_points(&ev, &tags())
        .iter()
        .map(|p| p.to_line().unwrap())
        .collect();
    assert_eq!(pts.len(), 2, "{pts:#?}");
    let h = &pts[0];
    assert!(
        h.starts_with("headline,phase=write,rig=bench,run=r1,target=x5 "),
        "{h}"
    );
    for want in [
        "average_mbps=780,average_mbps_low=720,average_mbps_high=840",
        "slc_cache_gb_absent=\"no drop attributed to the SLC cache\"",
        "throttle_gb=23.9,throttle_gb_low=23.5,throttle_gb_high=24.2",
        "throttle_s=10.5",
        "drop_gb=23.9,drop_gb_low=23.5,drop_gb_high=24.2",
        "drop_cause=\"thermal\",drop_confidence=0.8",
        "peak_power_w=8.2,peak_power_w_low=8.1,peak_power_w_high=8.3",
        "j_per_gb_absent=\"not in this analysis (written by an older hostd)\"",
    ] {
        assert!(h.contains(want), "{want} not in {h}");
    }
    assert!(h.ends_with(" 1000"), "{h}");
    let f = &pts[1];
    assert!(
        f.starts_with("thermal_fit,rig=bench,run=r1,target=x5 "),
        "{f}"
    );
    assert!(
        f.contains("rth_c_per_w=5.98,rth_c_per_w_low=1.28,rth_c_per_w_high=6.65"),
        "{f}"
    );
    assert!(f.contains("throttle_s_at_run_ambient_absent="), "{f}");
    assert!(f.contains("ambient_delta_c=10"), "{f}");
}

#[test]
fn drive_thermal_record_rows_are_points_with_the_fields_the_drive_reports() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("drive_log.csv"),
        "time_ns,target,warning_temp_time_min,critical_comp_time_min,tmt1_transitions,tmt2_transitions,tmt1_time_s,tmt2_time_s,sensors,sct_temperature_c,sct_over_limit_count,sct_under_limit_count\n\
         5000000000,/mnt/x,0,0,9,0,100,0,1=35,,,\n\
         6000000000,/mnt/s,,,,,,,,27,2,0\n",
    )
    .unwrap();
    let file = hostd_records::run_files::find("drive_log.csv").unwrap();
    let manifest = hostd_records::Manifest::new("r1", 0, Vec::new());
    let mut pts = Vec::new();
    let n = rows_points(dir.path(), &manifest, file, &tags(), |batch| {
        for p in batch {
            pts.push(p.to_line()?);
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(n, Some(2));
    pts.sort();
    assert_eq!(
        pts[0],
        "drive_log,rig=bench,run=r1,target=/mnt/s sct_temperature_c=27,sct_over_limit_count=2i,sct_under_limit_count=0i 6000000000"
    );
    assert_eq!(
        pts[1],
        "drive_log,rig=bench,run=r1,target=/mnt/x warning_temp_time_min=0i,critical_comp_time_min=0i,tmt1_transitions=9i,tmt2_transitions=0i,tmt1_time_s=100i,tmt2_time_s=0i,sensors=\"1=35\" 5000000000"
    );
}

#[test]
fn drive_temperature_rows_are_points_per_target() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("drive_temp.csv"),
        "time_ns,target,temperature_c\n5000000000,/mnt/x,49\n6000000000,/mnt/x,50\n",
    )
    .unwrap();
    let file = hostd_records::run_files::find("drive_temp.csv").unwrap();
    let manifest = hostd_records::Manifest::new("r1", 0, Vec::new());
    let mut pts = Vec::new();
    let n = rows_points(dir.path(), &manifest, file, &tags(), |batch| {
        for p in batch {
            pts.push(p.to_line()?);
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(n, Some(2));
    assert_eq!(
        pts[1],
        "drive_temp,rig=bench,run=r1,target=/mnt/x temperature_c=50 6000000000"
    );
}

#[test]
fn latency_fields_are_written_live_as_imported() {
    use hostd_records::LatencyStats;
    let mut f = rec(1, "write", 1 << 20, None);
    f.latency = Some(LatencyStats {
        count: 4,
        min_ns: 10_000,
        mean_ns: 265_000.4,
        p50_ns: 20_000,
        p90_ns: 1_000_000,
        p99_ns: 1_000_000,
        p99_9_ns: 1_000_000,
        p99_99_ns: 1_000_000,
        max_ns: 1_000_000,
    });
    let live = file_point(&tags(), &f, 1).to_line().unwrap();
    for field in [
        "lat_io_count=4i",
        "lat_mean_ns=265000i",
        "lat_p99_9_ns=1000000i",
    ] {
        assert!(live.contains(field), "{live}");
    }
    // Nothing timed: no latency fields.
    let plain = file_point(&tags(), &rec(2, "write", 1 << 20, None), 1)
        .to_line()
        .unwrap();
    assert!(!plain.contains("lat_"), "{plain}");
}

#[test]
fn every_file_the_run_file_registry_imports_has_its_points_here() {
    use hostd_records::run_files::{Import, RUN_FILES};
    let dir = tempfile::tempdir().unwrap();
    let manifest = hostd_records::Manifest::new("r1", 0, Vec::new());
    let mut sources = Vec::new();
    run_dir_points(
        dir.path(),
        &manifest,
        &tags(),
        |_| Ok(()),
        |source, _| {
            sources.push(source.to_string());
            Ok(())
        },
    )
    .unwrap();
    for f in RUN_FILES {
        let imported = matches!(f.import, Import::Mapped | Import::Rows { .. });
        assert_eq!(
            sources.iter().any(|s| s == f.name),
            imported,
            "{}: imported by the registry, and a source of the import",
            f.name
        );
    }
}
