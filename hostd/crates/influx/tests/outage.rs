//! InfluxDB goes away mid-stream and comes back: zero points lost, order preserved.
//! A short outage (5 s, quick config) and the full 30 s one of DESIGN.md's figures
//! (production retry settings) run side by side.

mod common;

use common::{int_field, proxied};
use hostd_influx::testing::InfluxServer;
use hostd_influx::{Point, Writer, WriterConfig};
use std::time::{Duration, Instant};

const CHUNK: i64 = 50; // points every 10 ms: 5 000 points/s, like a 5 kS/s probe stream

fn produce(w: &Writer, seq: &mut i64, for_: Duration) {
    let end = Instant::now() + for_;
    while Instant::now() < end {
        let pts: Vec<Point> = (*seq..*seq + CHUNK)
            .map(|i| {
                Point::new("outage")
                    .tag("rig", "t")
                    .field("seq", i)
                    .field("power_w", 5.0 + (i % 11) as f64 * 0.01)
                    .timestamp_ns(1_700_000_000_000_000_000 + i * 200_000)
            })
            .collect();
        w.write_all(&pts).unwrap();
        *seq += CHUNK;
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn outage(length: Duration, quick: bool) {
    let mut s = InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"));
    let (proxy, target) = proxied(&s);
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let mut cfg = WriterConfig::new(target, Some(spool.clone()));
    if quick {
        cfg.backoff_max = Duration::from_millis(500);
        cfg.flush_interval = Duration::from_millis(200);
    }
    let w = Writer::start(cfg).unwrap();

    let mut seq = 0;
    produce(&w, &mut seq, Duration::from_secs(2));
    s.stop().unwrap();
    let down = Instant::now();
    produce(&w, &mut seq, length);
    s.restart().unwrap();
    eprintln!("influxd was down for {:?}", down.elapsed());
    produce(&w, &mut seq, Duration::from_secs(2));
    let during = w.stats();
    let report = w.close(Duration::from_secs(60));

    eprintln!("{} points sent; {}", seq, report.summary());
    assert!(report.is_complete(), "{}", report.summary());
    assert!(during.spooled > 0, "the outage made the writer spool");
    assert!(report.stats.backfilled > 0);
    assert_eq!(report.stats.written, seq as u64);
    assert_eq!(
        s.count("outage", "seq").unwrap(),
        seq as u64,
        "zero points lost"
    );

    // Order: the acknowledged bodies, in arrival order, carry seq 0, 1, 2, … exactly once.
    let acked: Vec<i64> = proxy
        .seen()
        .into_iter()
        .filter(|r| r.status == 204)
        .flat_map(|r| int_field(&r.body_text(), "seq"))
        .collect();
    assert_eq!(acked.len(), seq as usize);
    assert!(
        acked.iter().copied().eq(0..seq),
        "points reached InfluxDB out of order"
    );
    assert_eq!(
        std::fs::read_dir(&spool).unwrap().count(),
        0,
        "spool empty after backfill"
    );
}

#[test]
fn short_outage_loses_nothing_and_keeps_order() {
    outage(Duration::from_secs(5), true);
}

#[test]
fn thirty_second_outage_loses_nothing_and_keeps_order() {
    outage(Duration::from_secs(30), false);
}
