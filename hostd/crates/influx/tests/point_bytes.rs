//! The line protocol of the `file`, `interval`, `probe`, `probe_agg` and `drive_temp`
//! points, pinned byte for byte: tags, field names, field types (`i` integers, floats in
//! shortest form, strings quoted), what is left out, and the field order (a record's column
//! order, from its column table in `hostd-records`).

use hostd_influx::schema::{
    agg_point, drive_temp_point, file_point, interval_point, sample_point, RunTags,
};
use hostd_records::files::{CorruptBlock, FileProbe, FileRecord};
use hostd_records::{AggRow, IntervalRecord, LatencyStats, ProbeSample, Stat};

fn tags() -> RunTags {
    RunTags {
        rig: "bench".into(),
        run: "r1".into(),
        probe: Some("p 0".into()),
    }
}

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
fn file_points() {
    let mut a = FileRecord::new("/mnt/a,b", "write", 0, 1_000, 2_000_001_000, 500_000_000);
    a.block_size = 1 << 20;
    a.queue_depth = 8;
    a.verified = Some(false);
    a.corrupt = vec![CorruptBlock {
        offset: 8192,
        bad_bytes: 3,
        first_bad_byte: 8200,
    }];
    a.corrupt_blocks = 1;
    a.corrupt_bytes = 3;
    a.status = "error: \"x\"".into();
    a.latency = Some(latency());
    a.probe = Some(Box::new(FileProbe {
        probe: "sim-0001".into(),
        energy_j: Some(2.5),
        j_per_gb: Some(1.0 / 3.0),
        temp_max_c: Some(f64::NAN),
        ..FileProbe::default()
    }));
    assert_eq!(
        file_point(&tags(), &a, 600_000_000).to_line().unwrap(),
        "file,phase=write,rig=bench,run=r1,target=/mnt/a\\,b index=0i,start_ns=1000i,\
         end_ns=2000001000i,bytes=500000000i,mbps=250,verified=false,corrupt_blocks=1i,\
         corrupt_bytes=3i,late_ops=0i,direct_io=true,status=\"error: \\\"x\\\"\",\
         first_corrupt_offset=8192i,block_size=1048576i,queue_depth=8i,probe=\"sim-0001\",\
         energy_j=2.5,j_per_gb=0.3333333333333333,lat_io_count=3i,lat_min_ns=10000i,\
         lat_mean_ns=20000i,lat_p50_ns=20000i,lat_p90_ns=30000i,lat_p99_ns=30001i,\
         lat_p99_9_ns=30002i,lat_p99_99_ns=30003i,lat_max_ns=30004i,cum_bytes=600000000i,\
         seconds=2 2000001000"
    );
    let b = FileRecord::new("/mnt/c", "read", 1, 5, 10, 7);
    assert_eq!(
        file_point(&tags(), &b, 7).to_line().unwrap(),
        "file,phase=read,rig=bench,run=r1,target=/mnt/c index=1i,start_ns=5i,end_ns=10i,\
         bytes=7i,mbps=1400,corrupt_blocks=0i,corrupt_bytes=0i,late_ops=0i,direct_io=true,\
         status=\"ok\",block_size=0i,queue_depth=0i,cum_bytes=7i,seconds=0.000000005 10"
    );
}

#[test]
fn interval_points() {
    let mut r = IntervalRecord {
        target: "/mnt/x".into(),
        target_index: 0,
        start_ns: 1_000_000_001,
        end_ns: 2_000_000_001,
        bytes: 417_210_500,
        mbps: 417.2105,
        phase: "write+read".into(),
        latency: Some(latency()),
    };
    assert_eq!(
        interval_point(&tags(), &r).to_line().unwrap(),
        "interval,phase=write+read,rig=bench,run=r1,target=/mnt/x start_ns=1000000001i,\
         end_ns=2000000001i,bytes=417210500i,mbps=417.2105,lat_io_count=3i,lat_min_ns=10000i,\
         lat_mean_ns=20000i,lat_p50_ns=20000i,lat_p90_ns=30000i,lat_p99_ns=30001i,\
         lat_p99_9_ns=30002i,lat_p99_99_ns=30003i,lat_max_ns=30004i 1000000001"
    );
    r.latency = None;
    assert_eq!(
        interval_point(&tags(), &r).to_line().unwrap(),
        "interval,phase=write+read,rig=bench,run=r1,target=/mnt/x start_ns=1000000001i,\
         end_ns=2000000001i,bytes=417210500i,mbps=417.2105 1000000001"
    );
}

#[test]
fn probe_points() {
    let s = ProbeSample {
        time_ns: 1_795_280_425_231_439_833,
        seq: 7,
        probe_time_us: 99,
        vbus_v: Some(4.99921875),
        current_a: Some(0.1 + 0.2),
        power_w: Some(0.79949951171875),
        energy_j: None,
        charge_c: Some(0.0),
        die_temp_c: Some(f64::INFINITY),
        enclosure_temp_c: Some(25.5),
    };
    assert_eq!(
        sample_point(&tags(), &s).to_line().unwrap(),
        "probe,probe=p\\ 0,rig=bench,run=r1 seq=7i,vbus_v=4.99921875,\
         current_a=0.30000000000000004,power_w=0.79949951171875,charge_c=0,\
         enclosure_temp_c=25.5 1795280425231439833"
    );
    let st = |a: f64| Stat {
        min: a,
        mean: a + 0.25,
        max: a + 0.5,
    };
    let r = AggRow {
        time_ns: 10_000_000,
        samples: 10,
        vbus_v: st(5.0),
        current_a: Stat::EMPTY,
        power_w: st(1.0 / 3.0),
        die_temp_c: Stat::EMPTY,
        enclosure_temp_c: st(25.0),
        energy_j: f64::NAN,
    };
    assert_eq!(
        agg_point(&tags(), &r).to_line().unwrap(),
        "probe_agg,probe=p\\ 0,rig=bench,run=r1 samples=10i,vbus_v_min=5,vbus_v_mean=5.25,\
         vbus_v_max=5.5,power_w_min=0.3333333333333333,power_w_mean=0.5833333333333333,\
         power_w_max=0.8333333333333333,enclosure_temp_c_min=25,enclosure_temp_c_mean=25.25,\
         enclosure_temp_c_max=25.5 10000000"
    );
    assert_eq!(
        drive_temp_point(&tags(), "b,1", -3, 40.5)
            .to_line()
            .unwrap(),
        "drive_temp,rig=bench,run=r1,target=b\\,1 temperature_c=40.5 -3"
    );
}
