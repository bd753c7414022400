//! `just bench-influx`: write throughput of the writer against a private local influxd,
//! in batches of 5 000 points (gzip on), counted back by a query.
//!
//! Usage: bench-influx [POINTS] [WRITERS] (default 1 000 000 points, 1 writer). With
//! several writers each sends its share (its own `probe` tag) from its own thread.

use hostd_influx::testing::InfluxServer;
use hostd_influx::{Point, Writer, WriterConfig};
use std::time::{Duration, Instant};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let n: i64 = args
        .get(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let writers: i64 = args
        .get(2)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(1)
        .max(1);
    let server = InfluxServer::start()?;
    let dir = tempfile::tempdir()?;

    // Probe-like points: 7 float fields, an integer sequence, 3 tags, 200 µs apart.
    let t0_ns = 1_700_000_000_000_000_000i64;
    let make = |probe: &str, i: i64| {
        Point::new("probe")
            .tag("rig", "bench")
            .tag("run", "bench-influx")
            .tag("probe", probe)
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

    let start = Instant::now();
    let reports = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let (server, dir, make) = (&server, &dir, &make);
                scope.spawn(move || -> anyhow::Result<hostd_influx::Report> {
                    let mut cfg = WriterConfig::new(
                        server.target(),
                        Some(dir.path().join(format!("spool{w}"))),
                    );
                    cfg.batch_size = 5_000;
                    let writer = Writer::start(cfg)?;
                    let probe = format!("p{w}");
                    let mut chunk = Vec::with_capacity(5_000);
                    for i in (w..n).step_by(writers as usize) {
                        chunk.push(make(&probe, i));
                        if chunk.len() == 5_000 {
                            writer.write_all(&chunk)?;
                            chunk.clear();
                        }
                    }
                    writer.write_all(&chunk)?;
                    Ok(writer.close(Duration::from_secs(600)))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("writer thread"))
            .collect::<anyhow::Result<Vec<_>>>()
    })?;
    let secs = start.elapsed().as_secs_f64();
    let mut s = hostd_influx::Stats::default();
    for r in &reports {
        anyhow::ensure!(r.is_complete(), "{}", r.summary());
        s.requests += r.stats.requests;
        s.bytes_raw += r.stats.bytes_raw;
        s.bytes_sent += r.stats.bytes_sent;
    }

    let counted = server.count("probe", "seq")?;
    anyhow::ensure!(
        counted == n as u64,
        "wrote {n} points, query counts {counted}"
    );
    println!(
        "bench-influx: {n} points (8 fields, 3 tags) from {writers} writer(s) in {} requests \
         of ≤5 000, {:.1} s: {:.0} points/s; gzip {:.1} MB → {:.1} MB; all {counted} counted back",
        s.requests,
        secs,
        n as f64 / secs,
        s.bytes_raw as f64 / 1e6,
        s.bytes_sent as f64 / 1e6
    );
    Ok(())
}
