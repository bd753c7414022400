//! `just bench-influx`: write throughput of the writer against a private local influxd,
//! in batches of 5 000 points (gzip on), counted back by a query.
//!
//! Usage: bench-influx [POINTS] (default 1 000 000).

use hostd_influx::testing::InfluxServer;
use hostd_influx::{Point, Writer, WriterConfig};
use std::time::{Duration, Instant};

fn main() -> anyhow::Result<()> {
    let n: i64 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let server = InfluxServer::start()?;
    let dir = tempfile::tempdir()?;
    let mut cfg = WriterConfig::new(server.target(), Some(dir.path().join("spool")));
    cfg.batch_size = 5_000;

    // Probe-like points: 7 float fields, an integer sequence, 3 tags, 200 µs apart.
    let t0_ns = 1_700_000_000_000_000_000i64;
    let make = |i: i64| {
        Point::new("probe")
            .tag("rig", "bench")
            .tag("run", "bench-influx")
            .tag("probe", "p1")
            .field("seq", i)
            .field("vbus_v", 5.0 + (i % 97) as f64 * 1e-4)
            .field("current_a", 1.2 + (i % 89) as f64 * 1e-4)
            .field("power_w", 6.0 + (i % 83) as f64 * 1e-3)
            .field("energy_j", i as f64 * 1.2e-3)
            .field("charge_c", i as f64 * 2.4e-4)
            .field("die_temp_c", 41.0 + (i % 71) as f64 * 1e-2)
            .field("enclosure_temp_c", 38.0 + (i % 67) as f64 * 1e-2)
            .timestamp_ns(t0_ns + i * 200_000)
    };

    let writer = Writer::start(cfg)?;
    let start = Instant::now();
    let mut chunk = Vec::with_capacity(5_000);
    for i in 0..n {
        chunk.push(make(i));
        if chunk.len() == 5_000 {
            writer.write_all(&chunk)?;
            chunk.clear();
        }
    }
    writer.write_all(&chunk)?;
    let report = writer.close(Duration::from_secs(600));
    let secs = start.elapsed().as_secs_f64();
    anyhow::ensure!(report.is_complete(), "{}", report.summary());

    let counted = server.count("probe", "seq")?;
    anyhow::ensure!(
        counted == n as u64,
        "wrote {n} points, query counts {counted}"
    );
    let s = report.stats;
    println!(
        "bench-influx: {n} points (8 fields, 3 tags) in {} requests of ≤5 000, {:.1} s: \
         {:.0} points/s; gzip {:.1} MB → {:.1} MB; all {counted} counted back",
        s.requests,
        secs,
        n as f64 / secs,
        s.bytes_raw as f64 / 1e6,
        s.bytes_sent as f64 / 1e6
    );
    Ok(())
}
