//! A long outage meets the writer's bounds, against a real influxd that is stopped (an
//! absent server), frozen with SIGSTOP (a server that takes connections and never answers)
//! or behind a spool on a full disk (a small tmpfs; needs root):
//! - the spool stops at its cap, the points past it are counted as dropped, and when the
//!   server is back the spooled prefix is sent in order, with one gap;
//! - a full disk holds at most the bound of batches in memory, then drops;
//! - a live writer's queue holds at most its bytes while the thread hangs in a request
//!   (the rest is dropped and counted), a bulk writer waits instead.

mod common;

use common::{int_field, proxied, Proxy};
use hostd_influx::spool::Limits;
use hostd_influx::testing::InfluxServer;
use hostd_influx::{Point, Report, Stats, Writer, WriterConfig};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn point(i: i64) -> Point {
    Point::new("bound")
        .tag("rig", "t")
        .field("seq", i)
        .field("power_w", 5.0 + (i % 11) as f64 * 0.01)
        .timestamp_ns(1_700_000_000_000_000_000 + i * 1_000_000)
}

/// A config with small batches and quick retries.
fn config(target: hostd_influx::Target, spool: Option<PathBuf>, limits: Limits) -> WriterConfig {
    let mut cfg = WriterConfig::new(target, spool);
    cfg.batch_size = 500;
    cfg.flush_interval = Duration::from_millis(100);
    cfg.backoff_max = Duration::from_millis(300);
    cfg.spool_limits = limits;
    cfg
}

/// Offers `n` points live, `chunk` at a time, checking `each` after every chunk.
fn offer(w: &Writer, seq: &mut i64, n: i64, chunk: i64, pause: Duration, each: impl Fn(&Stats)) {
    let end = *seq + n;
    while *seq < end {
        let pts: Vec<Point> = (*seq..(*seq + chunk).min(end)).map(point).collect();
        w.offer_all(&pts).unwrap();
        *seq += pts.len() as i64;
        each(&w.stats());
        std::thread::sleep(pause);
    }
}

/// The `seq` of every point InfluxDB acknowledged, in arrival order.
fn acked(proxy: &Proxy) -> Vec<i64> {
    proxy
        .seen()
        .into_iter()
        .filter(|r| r.status == 204)
        .flat_map(|r| int_field(&r.body_text(), "seq"))
        .collect()
}

/// Asserts that `acked` is 0, 1, … `total - 1` in order with at most one gap; returns the
/// gap as a range (empty when none).
#[track_caller]
fn in_order_with_one_gap(acked: &[i64], total: i64) -> std::ops::Range<i64> {
    assert_eq!(acked.first(), Some(&0), "the first point arrived first");
    assert_eq!(
        acked.last(),
        Some(&(total - 1)),
        "the last point arrived last"
    );
    let gaps: Vec<(i64, i64)> = acked
        .windows(2)
        .filter(|w| w[1] != w[0] + 1)
        .map(|w| (w[0], w[1]))
        .collect();
    assert!(
        gaps.iter().all(|(a, b)| b > a),
        "points reached InfluxDB out of order or twice: {gaps:?}"
    );
    assert!(gaps.len() <= 1, "more than one gap: {gaps:?}");
    gaps.first().map_or(0..0, |&(a, b)| a + 1..b)
}

/// Bytes of the batch files in `dir`, in whole 4 KiB blocks.
fn spool_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len().div_ceil(4096) * 4096)
        .sum()
}

/// Accounting of a closed writer: each point written, dropped or still spooled.
#[track_caller]
fn accounted(report: &Report, total: i64) {
    let s = report.stats;
    assert_eq!(s.accepted, total as u64);
    assert_eq!(
        s.written + s.dropped + report.spooled_remaining as u64,
        total as u64,
        "{}",
        report.summary()
    );
    assert_eq!(s.backfilled, s.spooled, "every spooled point was sent");
}

#[test]
fn the_spool_stops_at_its_cap_and_its_prefix_is_sent_in_order() {
    let mut s = InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"));
    let (proxy, target) = proxied(&s);
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let cap = 256 << 10;
    let limits = Limits {
        disk_bytes: cap,
        memory_batches: 2,
    };
    let w = Writer::start(config(target, Some(spool.clone()), limits)).unwrap();
    let mut seq = 0;
    offer(&w, &mut seq, 2_000, 50, Duration::from_millis(5), |_| {});
    w.flush();
    assert_eq!(w.stats().written, 2_000, "sent while the server is up");

    s.stop().unwrap();
    // About 2.9 MB of line protocol: eleven times the cap.
    offer(&w, &mut seq, 50_000, 250, Duration::from_millis(1), |st| {
        assert!(
            st.spool_bytes <= cap,
            "spool {} over its cap",
            st.spool_bytes
        );
        assert_eq!(
            st.memory_batches, 0,
            "the disk takes the spool: no batch in memory"
        );
    });
    w.flush();
    let st = w.stats();
    eprintln!("server down: {st:?}");
    assert!(st.dropped > 0, "the cap was reached");
    assert!(
        st.spool_peak <= cap && st.spool_peak >= cap - 4096,
        "{st:?}"
    );
    assert!(spool_bytes(&spool) <= cap);
    assert_eq!(
        st.spool_bytes,
        spool_bytes(&spool),
        "the gauge is the directory's size"
    );
    assert_eq!(
        st.spooled + st.dropped,
        50_000,
        "each point is spooled or dropped"
    );

    s.restart().unwrap();
    // Live again: once the spool is sent, new points go straight on.
    offer(&w, &mut seq, 3_000, 50, Duration::from_millis(2), |_| {});
    std::thread::sleep(Duration::from_secs(1));
    offer(&w, &mut seq, 1_000, 50, Duration::from_millis(2), |_| {});
    let report = w.close(Duration::from_secs(60));
    eprintln!("{}", report.summary());
    accounted(&report, seq);
    assert_eq!(report.spooled_remaining, 0);
    assert!(!report.is_complete(), "dropped points make it incomplete");
    assert_eq!(report.bounds.spool_bytes, Some(cap));
    let text = report.summary();
    assert!(
        text.contains("dropped (the spool reached its cap of 262.1 kB)")
            && text.contains("spool peak")
            && text.contains(&format!("`hostd import {}`", dir.path().display())),
        "{text}"
    );

    let acked = acked(&proxy);
    assert_eq!(acked.len() as u64, report.stats.written);
    let gap = in_order_with_one_gap(&acked, seq);
    assert_eq!(
        gap.start,
        2_000 + report.stats.spooled as i64,
        "the spool holds the outage's first points, with no hole"
    );
    assert_eq!((gap.end - gap.start) as u64, report.stats.dropped);
    assert_eq!(s.count("bound", "seq").unwrap(), report.stats.written);
    assert_eq!(spool_bytes(&spool), 0, "spool empty after backfill");
}

/// A tmpfs of `size` mounted on a fresh directory under /var/tmp, unmounted when dropped.
struct SmallDisk(tempfile::TempDir);

impl SmallDisk {
    fn mount(size: &str) -> SmallDisk {
        let dir = tempfile::Builder::new()
            .prefix("influx-bound-disk")
            .tempdir_in("/var/tmp")
            .unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(st.success(), "mounting a small tmpfs needs root");
        SmallDisk(dir)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn a_full_disk_keeps_at_most_the_bound_of_batches_in_memory() {
    let mut s = InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"));
    let (proxy, target) = proxied(&s);
    let disk = SmallDisk::mount("96k"); // room for about three batches of 500 points
    let spool = disk.0.path().join("spool");
    let limits = Limits {
        disk_bytes: 1 << 30, // the disk fills long before the cap
        memory_batches: 3,
    };
    let w = Writer::start(config(target, Some(spool.clone()), limits)).unwrap();
    s.stop().unwrap();
    let mut seq = 0;
    offer(&w, &mut seq, 20_000, 250, Duration::from_millis(1), |st| {
        assert!(
            st.memory_batches <= 3,
            "{} batches in memory",
            st.memory_batches
        );
    });
    w.flush();
    let st = w.stats();
    eprintln!("disk full: {st:?}");
    assert_eq!(st.memory_peak, 3, "the bound was used, never passed");
    assert!(st.dropped > 0);
    assert!(st.spool_bytes > 0 && st.spool_bytes <= 96 << 10, "{st:?}");
    assert_eq!(st.spooled + st.dropped, 20_000);

    s.restart().unwrap();
    let report = w.close(Duration::from_secs(60));
    eprintln!("{}", report.summary());
    accounted(&report, seq);
    assert_eq!(
        report.stats.memory_batches, 0,
        "the batches in memory were sent"
    );
    assert!(
        report
            .dropped_because
            .iter()
            .any(|r| r == "the disk could not take the spool and 3 batches were in memory already"),
        "{:?}",
        report.dropped_because
    );
    // Files then memory, then nothing: the outage's first points, whole and in order.
    assert_eq!(
        acked(&proxy),
        (0..report.stats.spooled as i64).collect::<Vec<_>>()
    );
    assert_eq!(s.count("bound", "seq").unwrap(), report.stats.written);
}

fn signal(server: &InfluxServer, sig: &str) {
    let pid = server.pid().expect("server running").to_string();
    assert!(Command::new("kill")
        .args([sig, &pid])
        .status()
        .unwrap()
        .success());
}

#[test]
fn a_hung_server_bounds_the_live_queue_and_a_bulk_writer_waits() {
    let s = InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"));
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(
        s.target(),
        Some(dir.path().join("spool")),
        Limits::default(),
    );
    cfg.request_timeout = Duration::from_secs(1);
    cfg.queue_bytes = 32 << 10;
    let w = Writer::start(cfg).unwrap();
    // Frozen: the kernel takes the connection, nobody answers until the timeout.
    signal(&s, "-STOP");
    let mut seq = 0;
    let chunk_bytes = 20 * 60; // 20 points of under 60 bytes
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        offer(&w, &mut seq, 20, 20, Duration::from_millis(1), |st| {
            assert!(
                st.queue_bytes <= (32 << 10) + chunk_bytes,
                "queue {} over its bound",
                st.queue_bytes
            );
        });
    }
    let live = w.stats();
    eprintln!("live, server hung: {live:?}");
    assert!(live.dropped_queue > 0, "the queue filled: {live:?}");
    assert!(live.queue_peak <= (32 << 10) + chunk_bytes);
    // A bulk push waits for room instead: nothing more is dropped.
    let bulk: Vec<Point> = (seq..seq + 5_000).map(point).collect();
    let t = Instant::now();
    w.write_all(&bulk).unwrap();
    seq += 5_000;
    eprintln!("bulk push of 5 000 points took {:?}", t.elapsed());
    assert_eq!(w.stats().dropped_queue, live.dropped_queue);
    signal(&s, "-CONT");

    let report = w.close(Duration::from_secs(60));
    eprintln!("{}", report.summary());
    accounted(&report, seq);
    assert_eq!(report.stats.dropped, report.stats.dropped_queue);
    assert!(
        report
            .summary()
            .contains("the queue to the writer thread was full"),
        "{}",
        report.summary()
    );
    assert_eq!(s.count("bound", "seq").unwrap(), report.stats.written);
}

/// A bulk writer with its spool in memory (`hostd import`'s) waits for the server when
/// the spool is full instead of dropping: three answers of 503 hold it up, and every point
/// arrives, in order, with never more than the bound of batches in memory.
#[test]
fn a_bulk_writer_with_a_full_memory_spool_waits_and_loses_nothing() {
    let s = InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"));
    let (proxy, target) = proxied(&s);
    for _ in 0..3 {
        proxy.inject(503, Some(1));
    }
    let mut cfg = config(
        target,
        None,
        Limits {
            disk_bytes: 0,
            memory_batches: 2,
        },
    );
    cfg.batch_size = 100;
    cfg.spool_wait = Some(Duration::from_secs(30));
    let w = Writer::start(cfg).unwrap();
    let pts: Vec<Point> = (0..2_000).map(point).collect();
    w.write_all(&pts).unwrap();
    let report = w.close(Duration::from_secs(30));
    eprintln!("{}", report.summary());
    assert!(report.is_complete(), "{}", report.summary());
    assert_eq!(report.stats.dropped, 0);
    assert_eq!(
        report.stats.memory_peak, 2,
        "the bound was reached, never passed"
    );
    assert_eq!(report.bounds.spool_bytes, None);
    assert_eq!(acked(&proxy), (0..2_000).collect::<Vec<_>>());
}
