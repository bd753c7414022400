//! The bytes each CSV writer puts in a run directory, pinned (`files.csv`: in its module): the column tables
//! (`columns.rs`) must write what the hand-written writers before them wrote, byte for byte
//! (header, column order, number formatting, quoting, empty cells).

use hostd_records::agg::{self, AggRow, Stat};
use hostd_records::drive_temp::{self, DriveTempRecord};
use hostd_records::intervals::{self, IntervalRecord};
use hostd_records::probe::{self, ProbeSample};
use hostd_records::LatencyStats;

fn latency() -> LatencyStats {
    LatencyStats {
        count: 3,
        min_ns: 10_000,
        mean_ns: 20_000.4,
        p50_ns: 20_000,
        p90_ns: 30_000,
        p99_ns: 30_001,
        p99_9_ns: 30_002,
        p99_99_ns: 30_003,
        max_ns: 30_004,
    }
}

#[test]
fn intervals_csv_bytes() {
    let d = tempfile::tempdir().unwrap();
    let mut w = intervals::Writer::create(d.path()).unwrap();
    let r = |target: &str, mbps: f64, phase: &str, latency| IntervalRecord {
        target: target.into(),
        target_index: 0,
        start_ns: 1_000_000_001,
        end_ns: 2_000_000_001,
        bytes: 417_210_500,
        mbps,
        phase: phase.into(),
        latency,
    };
    w.write(&r("/mnt/x", 417.2105, "write", Some(latency())))
        .unwrap();
    w.write(&r("b,\"q\"", 0.0, "write+read", None)).unwrap();
    drop(w);
    assert_eq!(
        std::fs::read_to_string(d.path().join(intervals::FILE_NAME)).unwrap(),
        "target,start_ns,end_ns,bytes,mbps,phase,lat_io_count,lat_min_ns,lat_mean_ns,\
lat_p50_ns,lat_p90_ns,lat_p99_ns,lat_p99_9_ns,lat_p99_99_ns,lat_max_ns
/mnt/x,1000000001,2000000001,417210500,417.211,write,3,10000,20000,20000,30000,30001,30002,30003,30004
\"b,\"\"q\"\"\",1000000001,2000000001,417210500,0.000,write+read,,,,,,,,,
"
    );
}

#[test]
fn probe_agg_and_drive_temp_csv_bytes() {
    let d = tempfile::tempdir().unwrap();
    let mut w = probe::Writer::create(d.path()).unwrap();
    w.write(&[
        ProbeSample {
            time_ns: 1_795_280_425_231_439_833,
            seq: 7,
            probe_time_us: 99,
            vbus_v: Some(4.99921875),
            current_a: Some(0.1 + 0.2),
            power_w: Some(0.79949951171875),
            energy_j: None,
            charge_c: Some(0.0),
            die_temp_c: Some(28.0),
            enclosure_temp_c: None,
            vbus_min_v: Some(4.5),
        },
        ProbeSample::default(),
    ])
    .unwrap();
    w.flush().unwrap();
    assert_eq!(
        std::fs::read_to_string(d.path().join(probe::FILE_NAME)).unwrap(),
        "time_ns,seq,vbus_v,current_a,power_w,energy_j,charge_c,die_temp_c,enclosure_temp_c,vbus_min_v
1795280425231439833,7,4.99921875,0.30000000000000004,0.79949951171875,,0,28,,4.5
0,0,,,,,,,,
"
    );

    let s = |a: f64| Stat {
        min: a,
        mean: a + 0.25,
        max: a + 0.5,
    };
    let mut w = agg::Writer::create(d.path()).unwrap();
    w.write(&[AggRow {
        time_ns: 10_000_000,
        samples: 10,
        vbus_v: s(5.0),
        current_a: s(0.1),
        power_w: s(1.0 / 3.0),
        die_temp_c: Stat::EMPTY,
        enclosure_temp_c: s(25.0),
        energy_j: f64::NAN,
    }])
    .unwrap();
    w.flush().unwrap();
    assert_eq!(
        std::fs::read_to_string(d.path().join(agg::FILE_NAME)).unwrap(),
        "time_ns,samples,vbus_v_min,vbus_v_mean,vbus_v_max,current_a_min,current_a_mean,\
current_a_max,power_w_min,power_w_mean,power_w_max,die_temp_c_min,die_temp_c_mean,\
die_temp_c_max,enclosure_temp_c_min,enclosure_temp_c_mean,enclosure_temp_c_max,energy_j
10000000,10,5,5.25,5.5,0.1,0.35,0.6,0.3333333333333333,0.5833333333333333,0.8333333333333333,,,,25,25.25,25.5,
"
    );

    drive_temp::write(
        d.path(),
        &[DriveTempRecord {
            time_ns: -3,
            target: "b,1".into(),
            temperature_c: 40.5,
        }],
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(d.path().join(drive_temp::FILE_NAME)).unwrap(),
        "time_ns,target,temperature_c\n-3,\"b,1\",40.5\n"
    );
}

#[test]
fn counters_csv_bytes() {
    let d = tempfile::tempdir().unwrap();
    let c = |time_ns, bytes| hostd_records::CounterRecord { time_ns, bytes };
    hostd_records::counters::write(
        d.path(),
        &["b,c".to_string(), "/mnt/a".to_string()],
        &[vec![c(0, 0), c(100_000_000, 5)], vec![c(7, u64::MAX)]],
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(d.path().join(hostd_records::counters::FILE_NAME)).unwrap(),
        "target,time_ns,bytes\n\"b,c\",0,0\n\"b,c\",100000000,5\n/mnt/a,7,18446744073709551615\n"
    );
}
