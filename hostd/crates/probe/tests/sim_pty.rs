//! The link against the real probe simulator (`just firmware-build`; the
//! justfile exports THROTTLESCOPE_PROBE_SIM) on a real pseudo-terminal.

mod common;

use common::drain;
use hostd_probe::link::{
    sim::sim_program, LinkConfig, LinkEvent, LinkOutput, ProbeLink, ProbeSource,
};
use std::sync::mpsc;
use std::time::Duration;

fn start_sim(args: &[&str]) -> (ProbeLink, mpsc::Receiver<LinkOutput>) {
    if let Err(err) = sim_program() {
        panic!("{err:#}");
    }
    let (tx, rx) = mpsc::channel();
    let config = LinkConfig {
        source: ProbeSource::Sim,
        sim_args: args.iter().map(|s| s.to_string()).collect(),
        sync_interval: Duration::from_millis(250),
        ..Default::default()
    };
    let link = ProbeLink::start(config, tx).expect("simulator link starts");
    link.wait_for_samples(Duration::from_secs(5))
        .expect("samples flow");
    (link, rx)
}

#[test]
fn simulator_streams_without_gaps_and_aligns_within_a_millisecond() {
    let (link, rx) = start_sim(&["--drift-ppm", "250", "--idle-w", "1.5", "--active-w", "6"]);
    link.set_load(1.0);
    std::thread::sleep(Duration::from_secs(4));
    let report = link.stop();
    let (samples, _) = drain(&rx);
    let stats = report.stats;
    let alignment = stats.alignment.expect("aligned");
    eprintln!(
        "sim alignment: {alignment:?}, max uncertainty {:?} ns",
        stats.alignment_uncertainty_max_ns
    );
    eprintln!(
        "sim samples: {} sequence {:?} frames {:?}",
        samples.len(),
        stats.sequence,
        stats.frames
    );

    assert!(
        samples.len() > 3000,
        "only {} samples in 4 s",
        samples.len()
    );
    assert_eq!(stats.sequence.gaps, 0, "{:?}", stats.sequence);
    assert_eq!(stats.frames.rejected(), 0);
    assert_eq!(stats.messages.undecodable, 0);
    assert!(
        alignment.uncertainty_ns < 1e6,
        "uncertainty {} ns",
        alignment.uncertainty_ns
    );
    assert!(
        (alignment.drift_ppm - 250.0).abs() < 50.0,
        "drift estimated {} ppm, simulator runs at 250",
        alignment.drift_ppm
    );
    for pair in samples.windows(2) {
        assert_eq!(pair[1].seq, pair[0].seq + 1);
    }
    let identity = report.identity.expect("device info");
    assert!(identity.current_lsb_a > 0.0);
    // Under full load the simulated bus power approaches the active power.
    let last_power = samples.iter().rev().find_map(|s| s.power_w).unwrap();
    assert!(last_power > 4.0 && last_power < 7.0, "power {last_power} W");
}

#[test]
fn simulator_unplug_is_recorded_and_samples_resume_within_two_seconds() {
    let (link, rx) = start_sim(&[]);
    std::thread::sleep(Duration::from_millis(800));
    link.sim().unwrap().unplug(500).unwrap();
    std::thread::sleep(Duration::from_millis(3000));
    let report = link.stop();
    let (samples, events) = drain(&rx);
    assert_eq!(report.reconnects.len(), 1, "{:?}", report.reconnects);
    let r = &report.reconnects[0];
    eprintln!("sim reconnect: {r:?}");
    assert!(
        r.gap_ms < 500.0 + 2000.0,
        "samples resumed {} ms after the unplug",
        r.gap_ms
    );
    assert!(r.resume_after_reopen_ms < 2000.0);
    assert!(r.samples_lost > 0, "an unplug of 500 ms loses samples");
    assert!(events
        .iter()
        .any(|e| matches!(e, LinkEvent::Disconnected { .. })));
    let holes: u64 = samples.windows(2).map(|p| p[1].seq - p[0].seq - 1).sum();
    assert_eq!(
        holes, r.samples_lost,
        "counted loss equals the hole in the sequence"
    );
    let resumed = samples.iter().filter(|s| s.time_ns > r.resumed_ns).count();
    assert!(resumed > 1000, "only {resumed} samples after the reconnect");
}
