//! The line protocol of the `file`, `interval`, `probe`, `probe_agg` and `drive_temp`
//! points, pinned byte for byte: tags, field names, field types (`i` integers, floats in
//! shortest form, strings quoted), what is left out, and the field order (a record's column
//! order, from its column table in `hostd-records`).

use hostd_influx::schema::{
    agg_point, file_point, interval_point, row_point, sample_point, RunTags,
};
use hostd_records::{files, intervals, probe, AggRow, Stat};
use std::path::Path;

fn tags() -> RunTags {
    RunTags {
        rig: "bench".into(),
        run: "r1".into(),
        probe: Some("p 0".into()),
        user: Default::default(),
    }
}

const LATENCY_HEADER: &str = "lat_io_count,lat_min_ns,lat_mean_ns,lat_p50_ns,lat_p90_ns,\
lat_p99_ns,lat_p99_9_ns,lat_p99_99_ns,lat_max_ns";

#[test]
fn file_points() {
    let csv = format!(
        "target,phase,index,start_ns,end_ns,bytes,mbps,verified,corrupt_blocks,corrupt_bytes,\
late_ops,direct_io,status,first_corrupt_offset,block_size,queue_depth,{LATENCY_HEADER},\
probe,energy_j,j_per_gb,temp_max_c
\"/mnt/a,b\",write,0,1000,2000001000,500000000,250.000,false,1,3,0,true,\"error: \"\"x\"\"\",8192,\
1048576,8,3,10000,20000,20000,30000,30001,30002,30003,30004,sim-0001,2.5,0.3333333333333333,NaN
/mnt/c,read,1,5,10,7,1400.000,,0,0,0,true,ok,,0,0,,,,,,,,,,,,,
"
    );
    let recs = files::parse(Path::new("files.csv"), csv.as_bytes()).unwrap();
    assert_eq!(
        file_point(&tags(), &recs[0], 600_000_000)
            .to_line()
            .unwrap(),
        "file,phase=write,rig=bench,run=r1,target=/mnt/a\\,b index=0i,start_ns=1000i,\
         end_ns=2000001000i,bytes=500000000i,mbps=250,verified=false,corrupt_blocks=1i,\
         corrupt_bytes=3i,late_ops=0i,direct_io=true,status=\"error: \\\"x\\\"\",\
         first_corrupt_offset=8192i,block_size=1048576i,queue_depth=8i,probe=\"sim-0001\",\
         energy_j=2.5,j_per_gb=0.3333333333333333,lat_io_count=3i,lat_min_ns=10000i,\
         lat_mean_ns=20000i,lat_p50_ns=20000i,lat_p90_ns=30000i,lat_p99_ns=30001i,\
         lat_p99_9_ns=30002i,lat_p99_99_ns=30003i,lat_max_ns=30004i,cum_bytes=600000000i,\
         seconds=2 2000001000"
    );
    assert_eq!(
        file_point(&tags(), &recs[1], 7).to_line().unwrap(),
        "file,phase=read,rig=bench,run=r1,target=/mnt/c index=1i,start_ns=5i,end_ns=10i,\
         bytes=7i,mbps=1400,corrupt_blocks=0i,corrupt_bytes=0i,late_ops=0i,direct_io=true,\
         status=\"ok\",block_size=0i,queue_depth=0i,cum_bytes=7i,seconds=0.000000005 10"
    );
}

#[test]
fn interval_points() {
    let csv = format!(
        "target,start_ns,end_ns,bytes,mbps,phase,{LATENCY_HEADER}
/mnt/x,1000000001,2000000001,417210500,417.2105,write+read,3,10000,20000,20000,30000,30001,30002,30003,30004
/mnt/x,1000000001,2000000001,417210500,417.2105,write+read,,,,,,,,,
"
    );
    let recs = intervals::parse(Path::new("intervals.csv"), csv.as_bytes()).unwrap();
    assert_eq!(
        interval_point(&tags(), &recs[0]).to_line().unwrap(),
        "interval,phase=write+read,rig=bench,run=r1,target=/mnt/x start_ns=1000000001i,\
         end_ns=2000000001i,bytes=417210500i,mbps=417.2105,lat_io_count=3i,lat_min_ns=10000i,\
         lat_mean_ns=20000i,lat_p50_ns=20000i,lat_p90_ns=30000i,lat_p99_ns=30001i,\
         lat_p99_9_ns=30002i,lat_p99_99_ns=30003i,lat_max_ns=30004i 1000000001"
    );
    assert_eq!(
        interval_point(&tags(), &recs[1]).to_line().unwrap(),
        "interval,phase=write+read,rig=bench,run=r1,target=/mnt/x start_ns=1000000001i,\
         end_ns=2000000001i,bytes=417210500i,mbps=417.2105 1000000001"
    );
}

#[test]
fn probe_points() {
    let csv = "time_ns,seq,vbus_v,current_a,power_w,energy_j,charge_c,die_temp_c,enclosure_temp_c
1795280425231439833,7,4.99921875,0.30000000000000004,0.79949951171875,,0,inf,25.5
";
    let s = probe::parse(Path::new("probe.csv"), csv.as_bytes()).unwrap()[0];
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
        power_w: st(1.0 / 3.0),
        enclosure_temp_c: st(25.0),
        ..AggRow::default()
    };
    assert_eq!(
        agg_point(&tags(), &r).to_line().unwrap(),
        "probe_agg,probe=p\\ 0,rig=bench,run=r1 samples=10i,vbus_v_min=5,vbus_v_mean=5.25,\
         vbus_v_max=5.5,power_w_min=0.3333333333333333,power_w_mean=0.5833333333333333,\
         power_w_max=0.8333333333333333,enclosure_temp_c_min=25,enclosure_temp_c_mean=25.25,\
         enclosure_temp_c_max=25.5 10000000"
    );
    assert_eq!(
        row_point(
            "drive_temp",
            &tags(),
            &hostd_records::drive_temp::DriveTempRecord {
                time_ns: -3,
                target: "b,1".into(),
                temperature_c: 40.5,
            }
        )
        .to_line()
        .unwrap(),
        "drive_temp,rig=bench,run=r1,target=b\\,1 temperature_c=40.5 -3"
    );
}
