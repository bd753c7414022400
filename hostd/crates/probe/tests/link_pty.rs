//! The link over real pseudo-terminals against a protocol peer.
#![cfg(unix)] // pseudo-terminals

mod common;

use common::{start_link, stop_after, PeerProbe, POWER_W, SAG_RAW};
use hostd_probe::link::{LinkConfig, LinkEvent, ProbeLink, ProbeSource};
use std::sync::mpsc;
use std::time::Duration;

fn link_to(peer: &PeerProbe) -> (ProbeLink, mpsc::Receiver<hostd_probe::link::LinkOutput>) {
    start_link(LinkConfig {
        source: ProbeSource::Port(peer.link.clone()),
        sync_interval: Duration::from_millis(200),
        ..Default::default()
    })
}

#[test]
fn streams_every_sample_aligned_to_host_time() {
    let dir = tempfile::tempdir().unwrap();
    let peer = PeerProbe::start(dir.path(), 150.0);
    let (link, rx) = link_to(&peer);
    let (report, samples, _) = stop_after(link, &rx, Duration::from_secs(3));

    assert!(samples.len() > 2000, "only {} samples", samples.len());
    for pair in samples.windows(2) {
        assert_eq!(pair[1].seq, pair[0].seq + 1, "sequence broken");
        assert!(pair[1].time_ns > pair[0].time_ns, "time not increasing");
    }
    let seq = report.stats.sequence;
    assert_eq!((seq.gaps, seq.missing), (0, 0));
    assert_eq!(report.stats.frames.rejected(), 0);
    let alignment = report.stats.alignment.expect("aligned");
    eprintln!("alignment: {alignment:?}");
    assert!(
        alignment.uncertainty_ns < 1e6,
        "uncertainty {} ns",
        alignment.uncertainty_ns
    );
    // Samples are stamped near "now": the last one within 0.5 s of the stop.
    let last = samples.last().unwrap();
    let lag_ms = (hostd_probe::link::host_now_ns() - last.time_ns) as f64 / 1e6;
    assert!(
        (0.0..500.0).contains(&lag_ms),
        "last sample {lag_ms} ms old"
    );
    assert!((last.power_w.unwrap() - POWER_W).abs() < 0.01);
    // The accumulator advanced by about 5 W × the time between its readings.
    let with_energy: Vec<_> = samples
        .iter()
        .filter_map(|s| s.energy_j.map(|e| (s.time_ns, e)))
        .collect();
    let (t0, e0) = with_energy[0];
    let (t1, e1) = *with_energy.last().unwrap();
    let expected = POWER_W * (t1 - t0) as f64 / 1e9;
    assert!(
        (e1 - e0 - expected).abs() < 0.05 * expected + 0.1,
        "energy {} vs {expected}",
        e1 - e0
    );
}

#[test]
fn a_sag_only_the_batch_minimum_saw_is_on_its_samples_and_in_their_bins() {
    use hostd_probe::convert::VBUS_LSB_V;
    use hostd_records::binning::Aggregator;
    let dir = tempfile::tempdir().unwrap();
    let peer = PeerProbe::start(dir.path(), 0.0);
    peer.sag_every(4);
    let (link, rx) = link_to(&peer);
    let (_, samples, _) = stop_after(link, &rx, Duration::from_millis(1500));
    assert!(samples.len() > 500, "only {} samples", samples.len());
    let sag_v = f64::from(SAG_RAW) * VBUS_LSB_V;
    // Every sample reads 5.0 V; the batches of 32 whose index is a multiple of 4 carry
    // a 4.5 V minimum, on each of their samples; the others carry 5.0 V.
    for s in &samples {
        assert_eq!(s.vbus_v, Some(5.0), "{s:?}");
        let want = if (s.seq / 32) % 4 == 0 { sag_v } else { 5.0 };
        assert_eq!(s.vbus_min_v, Some(want), "seq {}", s.seq);
    }
    assert!(samples.iter().any(|s| s.vbus_min_v == Some(sag_v)));
    // The analysis' lowest VBUS and the 10 ms level's minimum see the sag; their means
    // stay the samples'.
    let series = hostd_records::ProbeSeries::from_samples(&samples);
    let lowest = series
        .vbus_min_v
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    assert_eq!(lowest, sag_v);
    assert!(series.vbus_v.iter().all(|&v| v == 5.0));
    let mut agg = Aggregator::default();
    let mut bins: Vec<_> = samples.iter().filter_map(|s| agg.push(s)).collect();
    bins.extend(agg.flush());
    assert!(bins
        .iter()
        .any(|b| b.vbus_v.min == sag_v && b.vbus_v.mean == 5.0));
    // A wire v1 peer: no batch minimum, nothing below the readings.
    let dir = tempfile::tempdir().unwrap();
    let peer = PeerProbe::start(dir.path(), 0.0);
    let (link, rx) = link_to(&peer);
    let (_, samples, _) = stop_after(link, &rx, Duration::from_millis(500));
    assert!(!samples.is_empty() && samples.iter().all(|s| s.vbus_min_v.is_none()));
}

#[test]
fn reconnects_after_the_port_vanishes_and_records_the_gap() {
    let dir = tempfile::tempdir().unwrap();
    let peer = PeerProbe::start(dir.path(), 0.0);
    let (link, rx) = link_to(&peer);
    std::thread::sleep(Duration::from_millis(500));
    peer.unplug(600);
    let (report, samples, events) = stop_after(link, &rx, Duration::from_millis(2500));

    assert_eq!(report.reconnects.len(), 1, "{:?}", report.reconnects);
    let r = &report.reconnects[0];
    eprintln!("reconnect: {r:?}");
    assert!(
        r.gap_ms >= 550.0 && r.gap_ms < 600.0 + 2000.0,
        "gap {} ms",
        r.gap_ms
    );
    assert!(
        r.resume_after_reopen_ms < 2000.0,
        "resume {} ms",
        r.resume_after_reopen_ms
    );
    assert!(
        !r.samples_lost_estimated,
        "the peer kept running, so loss is counted"
    );
    assert!(r.samples_lost > 0);
    assert!(events
        .iter()
        .any(|e| matches!(e, LinkEvent::Disconnected { .. })));
    assert!(events
        .iter()
        .any(|e| matches!(e, LinkEvent::Reconnected(_))));
    // Everything after the reconnect is contiguous again, and the counted
    // loss equals the hole in the sequence numbers.
    let holes: u64 = samples.windows(2).map(|p| p[1].seq - p[0].seq - 1).sum();
    assert_eq!(holes, r.samples_lost);
    assert_eq!(report.stats.sequence.missing, r.samples_lost);
    assert!(samples.last().unwrap().time_ns > r.resumed_ns - 100_000_000);
}

#[test]
fn a_probe_that_goes_silent_is_reopened_and_the_outage_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let peer = PeerProbe::start(dir.path(), 0.0);
    let (tx, rx) = mpsc::channel();
    let config = LinkConfig {
        source: ProbeSource::Port(peer.link.clone()),
        sync_interval: Duration::from_millis(200),
        status_interval: Duration::from_millis(300),
        silence_timeout: Duration::from_millis(800),
        ..Default::default()
    };
    let link = ProbeLink::start(config, tx).expect("link starts");
    link.wait_for_samples(Duration::from_secs(5))
        .expect("samples flow");
    std::thread::sleep(Duration::from_millis(300));
    peer.freeze(1500);
    let (report, samples, events) = stop_after(link, &rx, Duration::from_millis(3500));
    assert!(
        events.iter().any(
            |e| matches!(e, LinkEvent::Disconnected { reason, .. } if reason.contains("no data"))
        ),
        "the silence was noticed"
    );
    assert_eq!(report.reconnects.len(), 1, "{:?}", report.reconnects);
    assert!(report.disconnected_at_end.is_none());
    let r = &report.reconnects[0];
    assert!(r.gap_ms < 1500.0 + 2000.0, "{r:?}");
    let holes: u64 = samples.windows(2).map(|p| p[1].seq - p[0].seq - 1).sum();
    assert_eq!(holes, report.stats.sequence.missing);
    assert!(samples.last().unwrap().time_ns > r.resumed_ns);
}
