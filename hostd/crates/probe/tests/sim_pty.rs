//! The link against the real probe simulator (`just firmware-build`; the
//! justfile exports THROTTLESCOPE_PROBE_SIM) on a real pseudo-terminal.
#![cfg(unix)] // pseudo-terminals

mod common;

use common::{start_link, stop_after};
use hostd_probe::link::{
    open_port, sim::sim_program, LinkConfig, LinkEvent, LinkOutput, ProbeLink, ProbeSource,
    SimProcess,
};
use hostd_probe::message::encode_command;
use hostd_probe::pb;
use hostd_probe::pb::host_to_probe::Cmd;
use hostd_probe::stream::{ProbeStream, StreamEvent, StreamItem};
use std::io::{Read, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn start_sim(args: &[&str]) -> (ProbeLink, mpsc::Receiver<LinkOutput>) {
    // Built into the repository's firmware tree when not set, where the link looks.
    hostd_testkit::probe_sim::path();
    if let Err(err) = sim_program() {
        panic!("{err:#}");
    }
    start_link(LinkConfig {
        source: ProbeSource::Sim,
        sim_args: args.iter().map(|s| s.to_string()).collect(),
        sync_interval: Duration::from_millis(250),
        ..Default::default()
    })
}

#[test]
fn simulator_streams_without_gaps_and_aligns_within_a_millisecond() {
    let (link, rx) = start_sim(&["--drift-ppm", "250", "--idle-w", "1.5", "--active-w", "6"]);
    link.set_load(1.0);
    let (report, samples, _) = stop_after(link, &rx, Duration::from_secs(4));
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
    // Over a 4 s window the drift is known only as well as the offsets it is fitted to: an
    // error of u at both ends of ~3.5 s of exchanges is 2u / 3.5 s. The bound is the fit's
    // own uncertainty (twice that, and at least 50 ppm), not how idle this machine is: a
    // loaded one widens u, and the fit says so.
    let tol = 50.0f64.max(4.0 * alignment.uncertainty_ns / 3.5e9 * 1e6);
    assert!(
        (alignment.drift_ppm - 250.0).abs() < tol,
        "drift estimated {} ppm, simulator runs at 250 (tolerance {tol:.0} ppm from uncertainty {} ns)",
        alignment.drift_ppm,
        alignment.uncertainty_ns
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
fn a_simulated_port_reports_its_budget_and_holds_the_drive_at_it() {
    // A USB 3 port's default 900 mA, a 200 mΩ cable between the probe and the drive; the
    // drive wants 8 W.
    let (link, rx) = start_sim(&[
        "--idle-w",
        "1",
        "--active-w",
        "8",
        "--port-current-a",
        "0.9",
        "--cable-mohm",
        "200",
    ]);
    link.set_load(1.0);
    let (report, samples, events) = stop_after(link, &rx, Duration::from_secs(3));
    let ports: Vec<&pb::PortStatus> = events
        .iter()
        .filter_map(|e| match e {
            LinkEvent::Stream(StreamEvent::Port(p)) => Some(p),
            _ => None,
        })
        .collect();
    let last = ports
        .last()
        .expect("a PortStatus from a probe that senses CC");
    assert_eq!(last.advertisement(), pb::CcAdvertisement::UsbDefault);
    assert_eq!(last.active_cc(), pb::ActiveCc::Cc1);
    assert!(!last.requested);
    assert_eq!(report.stats.protocol_version, Some(3));
    // Held at 0.9 A: the port's 5 V at the probe (the cable's drop lies beyond it), 4.5 W
    // through it (the drive gets 4.82 V × 0.9 A), not 8 W.
    let tail = &samples[samples.len() - 200..];
    let mean = |f: fn(&hostd_records::probe::ProbeSample) -> Option<f64>| {
        tail.iter().filter_map(f).sum::<f64>() / tail.len() as f64
    };
    let (p, v) = (mean(|s| s.power_w), mean(|s| s.vbus_v));
    assert!((v - 5.0).abs() < 0.01, "VBUS {v} V");
    assert!((p - 5.0 * 0.9).abs() < 0.05, "power {p} W");
}

#[test]
fn a_simulated_probe_without_a_port_model_has_no_cc_sensing() {
    let (link, rx) = start_sim(&[]);
    let (report, _, events) = stop_after(link, &rx, Duration::from_secs(1));
    assert!(!events
        .iter()
        .any(|e| matches!(e, LinkEvent::Stream(StreamEvent::Port(_)))));
    let info = events
        .iter()
        .find_map(|e| match e {
            LinkEvent::Stream(StreamEvent::Info(i)) => Some(i),
            _ => None,
        })
        .expect("device info");
    assert_eq!(
        hostd_probe::port::PortSensing::from_info(Some(info)),
        hostd_probe::port::PortSensing::Absent
    );
    assert_eq!(report.stats.protocol_version, Some(3));
}

#[test]
fn simulator_unplug_is_recorded_and_samples_resume_within_two_seconds() {
    let (link, rx) = start_sim(&[]);
    std::thread::sleep(Duration::from_millis(800));
    // Longer than the probe's ring holds (2048 samples at ~1068 Hz = 1.9 s).
    link.sim().unwrap().unplug(2500).unwrap();
    let (report, samples, events) = stop_after(link, &rx, Duration::from_millis(5000));
    assert_eq!(report.reconnects.len(), 1, "{:?}", report.reconnects);
    let r = &report.reconnects[0];
    eprintln!("sim reconnect: {r:?}");
    assert!(
        r.gap_ms < 2500.0 + 2000.0,
        "samples resumed {} ms after the unplug",
        r.gap_ms
    );
    assert!(r.resume_after_reopen_ms < 2000.0);
    assert!(
        r.samples_lost > 0,
        "an unplug longer than the ring loses samples"
    );
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

#[test]
fn chip_reset_mid_run_is_recorded_as_a_reset_and_energy_stays_continuous() {
    let (link, rx) = start_sim(&["--idle-w", "5.0", "--vbus-v", "5.0"]);
    std::thread::sleep(Duration::from_millis(1000));
    link.sim().unwrap().reset_chip().unwrap();
    let (report, samples, events) = stop_after(link, &rx, Duration::from_millis(1500));
    assert_eq!(report.resets.len(), 1, "{:?}", report.resets);
    let reset = report.resets[0];
    assert_eq!((reset.epoch, reset.resets), (1, 1));
    assert!(events
        .iter()
        .any(|e| matches!(e, LinkEvent::Stream(StreamEvent::ChipReset(_)))));
    let probe = report.probe.expect("status");
    assert_eq!((probe.epoch, probe.reinits), (1, 1), "{probe:?}");
    assert_eq!(report.stats.chip_resets, 1);
    // Energy never steps back and never jumps (a 40-bit wrap would add ~5.4e8 J
    // at this current LSB; the readings come every ~24 ms at ~5 W).
    let energy: Vec<(i64, f64)> = samples
        .iter()
        .filter_map(|s| s.energy_j.map(|e| (s.time_ns, e)))
        .collect();
    let mut max_step = 0.0f64;
    for w in energy.windows(2) {
        let step = w[1].1 - w[0].1;
        assert!(step >= 0.0, "energy went back by {step} J");
        max_step = max_step.max(step);
    }
    assert!(max_step < 0.5, "energy jumped by {max_step} J");
    let (t0, e0) = energy[0];
    let (t1, e1) = *energy.last().unwrap();
    let expected = 5.0 * (t1 - t0) as f64 * 1e-9;
    eprintln!(
        "energy over the reset: {:.3} J for {expected:.3} J of 5 W x time; reset {reset:?}",
        e1 - e0
    );
    // What the chip integrated between its reset and the re-initialisation is
    // not measured (a few ms at most): the total is short by at most that.
    assert!(
        e1 - e0 <= expected * 1.01 && e1 - e0 >= expected * 0.97,
        "{} J",
        e1 - e0
    );
    assert!(reset.unmeasured_us.unwrap() < 100_000, "{reset:?}");
}

#[test]
fn a_stalled_sampler_misses_slots_that_are_counted_on_both_ends() {
    let (link, rx) = start_sim(&[]);
    std::thread::sleep(Duration::from_millis(500));
    link.sim().unwrap().stall_sampler(300).unwrap();
    let (report, samples, _) = stop_after(link, &rx, Duration::from_millis(2500));
    let probe = report.probe.expect("status");
    let seq = report.stats.sequence;
    eprintln!("stall: probe {probe:?}, host {seq:?}");
    // 300 ms at 1000 us per conversion (die temperature on): 299-300 slots.
    assert!(
        (290..=345).contains(&probe.missed_slots),
        "{}",
        probe.missed_slots
    );
    assert_eq!(seq.missing, probe.missed_slots);
    assert_eq!(seq.probe_reported_drops, probe.missed_slots);
    let holes: u64 = samples.windows(2).map(|p| p[1].seq - p[0].seq - 1).sum();
    assert_eq!(holes, probe.missed_slots);
    assert!(probe.achieved_rate_hz < probe.conversion_rate_hz);
}

#[test]
fn samples_dropped_while_the_host_stops_reading_the_pty_are_all_counted() {
    if let Err(err) = sim_program() {
        panic!("{err:#}");
    }
    // A 2 kB host buffer and TX queue: the probe's 2048-sample ring fills in ~3 s.
    let args: Vec<String> = ["--link-buffer", "2048", "--txq-bytes", "2048"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let sim = SimProcess::spawn(&args).unwrap();
    let (_, path) = sim.current_pty().unwrap();
    let mut port = open_port(&path).unwrap();
    let mut stream = ProbeStream::new();
    let mut samples = Vec::new();
    let mut status = None;
    let mut buf = vec![0u8; 65536];
    let mut read_for = |port: &mut serialport::TTYPort,
                        stream: &mut ProbeStream,
                        samples: &mut Vec<u64>,
                        status: &mut Option<pb::Status>,
                        ms: u64| {
        let end = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < end {
            if let Ok(n) = port.read(&mut buf) {
                stream.push(
                    &buf[..n],
                    hostd_probe::link::host_now_ns(),
                    &mut |item| match item {
                        StreamItem::Sample(s) => samples.push(s.seq),
                        StreamItem::Event(StreamEvent::Status(s)) => *status = Some(s),
                        _ => {}
                    },
                );
            }
        }
    };
    let send = |port: &mut serialport::TTYPort, id: u32, cmd: Cmd| {
        port.write_all(&encode_command(id, cmd)).unwrap();
    };
    send(&mut port, 1, Cmd::GetInfo(pb::GetInfo {}));
    send(
        &mut port,
        2,
        Cmd::Sync(pb::SyncRequest {
            sync_id: 1,
            host_time_ns: hostd_probe::link::host_now_ns() as u64,
        }),
    );
    send(&mut port, 3, Cmd::Start(pb::Start::default()));
    read_for(&mut port, &mut stream, &mut samples, &mut status, 300);
    std::thread::sleep(Duration::from_millis(4000)); // the host stops reading
    read_for(&mut port, &mut stream, &mut samples, &mut status, 1000);
    send(&mut port, 4, Cmd::Stop(pb::Stop {}));
    read_for(&mut port, &mut stream, &mut samples, &mut status, 500);
    send(&mut port, 5, Cmd::GetStatus(pb::GetStatus {}));
    read_for(&mut port, &mut stream, &mut samples, &mut status, 500);
    stream.flush(&mut |item| {
        if let StreamItem::Sample(s) = item {
            samples.push(s.seq)
        }
    });
    sim.shutdown();
    let status = status.expect("a Status reply");
    let seq = stream.stats().sequence;
    eprintln!("host stopped reading: {seq:?}; probe {status:?}");
    assert!(status.ring_overflows >= 1);
    assert!(seq.missing > 0 && seq.gaps > 0);
    // Every slot is a received sample or counted by the probe as dropped.
    assert_eq!(seq.missing, seq.probe_reported_drops);
    assert_eq!(seq.received + status.samples_dropped, status.samples_taken);
    assert_eq!(status.missed_slots, 0, "the sampler itself kept up");
    let holes: u64 = samples.windows(2).map(|p| p[1] - p[0] - 1).sum();
    assert_eq!(holes, seq.missing);
}
