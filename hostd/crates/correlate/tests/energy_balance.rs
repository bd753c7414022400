//! Per-file energy and the energy balance on synthetic probe streams with
//! known power: idle 2 W, 6 W while any file is in progress.

use hostd_correlate::{correlate, Correlation, EnergyBalance, Timeline};
use hostd_probe::message::encode_probe_message;
use hostd_probe::pb;
use hostd_probe::pb::probe_to_host::Msg;
use hostd_probe::stream::{ProbeStream, StreamItem};
use hostd_probe::ProbeSample;
use hostd_records::FileRecord;

const T0: i64 = 1_800_000_000_000_000_000;
const MS: i64 = 1_000_000;

fn span(
    target: &str,
    phase: &str,
    index: u32,
    start_ms: i64,
    end_ms: i64,
    bytes: u64,
) -> FileRecord {
    FileRecord::new(
        target,
        phase,
        index,
        (T0 + start_ms * MS) as u64,
        (T0 + end_ms * MS) as u64,
        bytes,
    )
}

fn busy(files: &[FileRecord], t: i64) -> bool {
    files
        .iter()
        .any(|f| f.start_ns as i64 <= t && t < f.end_ns as i64)
}

/// 1 kHz samples over `ms`, the accumulator read every 16 samples.
fn timeline(files: &[FileRecord], ms: i64) -> Timeline {
    timeline_scaled(files, ms, 1.0)
}

/// The same with the accumulator counting `scale` × the true energy.
fn timeline_scaled(files: &[FileRecord], ms: i64, scale: f64) -> Timeline {
    let mut t = Timeline::new();
    let mut energy = 0.0;
    let mut held = None;
    for i in 0..ms {
        let time = T0 + i * MS;
        let power = if busy(files, time) { 6.0 } else { 2.0 };
        energy += power * 1e-3 * scale;
        if i % 16 == 0 {
            held = Some(energy);
        }
        t.push(&ProbeSample {
            time_ns: time,
            seq: i as u64,
            probe_time_us: i as u64 * 1000,
            vbus_v: Some(5.0),
            current_a: Some(power / 5.0),
            power_w: Some(power),
            energy_j: held,
            charge_c: None,
            die_temp_c: Some(40.0),
            enclosure_temp_c: Some(30.0 + i as f64 / 1000.0),
        });
    }
    t.flush();
    t
}

/// Correlates `files` with `tl` and asserts that the energy balance closes within 0.1 %.
fn closed(tl: &Timeline, files: &[FileRecord]) -> (Correlation, EnergyBalance) {
    let c = correlate(tl, files);
    let b = c.balance.clone().expect("balance");
    assert!(b.relative_error < 1e-3, "balance off: {b:?}");
    (c, b)
}

#[test]
fn sequential_files_with_idle_gaps_close_the_balance() {
    let files = vec![
        span("a", "write", 0, 1_000, 3_000, 2_000_000_000),
        span("a", "write", 1, 3_500, 4_500, 1_000_000_000),
        span("a", "read", 0, 6_000, 8_000, 3_000_000_000),
    ];
    let (c, b) = closed(&timeline(&files, 10_000), &files);
    // 2 s at 6 W = 12 J; 2 GB → 6 J/GB.
    let f0 = &c.files[0];
    assert!((f0.figures.energy_j.unwrap() - 12.0).abs() < 0.05, "{f0:?}");
    assert!((f0.figures.j_per_gb.unwrap() - 6.0).abs() < 0.03);
    assert!((f0.figures.mean_power_w.unwrap() - 6.0).abs() < 0.03);
    assert_eq!(f0.figures.peak_power_w, Some(6.0));
    assert_eq!(f0.figures.vbus_v, Some(5.0));
    assert!((f0.figures.temp_start_c.unwrap() - 31.0).abs() < 0.02);
    assert!((f0.figures.temp_end_c.unwrap() - 33.0).abs() < 0.02);
    assert!(f0.figures.temp_max_c.unwrap() >= 33.0 - 0.01);
    // Idle: 10 s − 5 s busy, at 2 W, inside the accumulator record.
    assert!((b.idle_j - 2.0 * 5.0).abs() < 0.1, "idle {}", b.idle_j);
    let write = &c.phases[0];
    assert_eq!(
        (write.target.as_str(), write.phase.as_str()),
        ("a", "write")
    );
    // The write phase spans an idle gap: min 2 W, peak 6 W.
    assert_eq!(write.min_power_w, Some(2.0));
    assert_eq!(write.peak_power_w, Some(6.0));
    assert_eq!(write.bytes, 3_000_000_000);
}

#[test]
fn overlapping_targets_share_energy_and_still_close() {
    let files = vec![
        span("a", "write", 0, 1_000, 5_000, 4_000_000_000),
        span("b", "write", 0, 2_000, 3_000, 1_000_000_000),
        span("b", "write", 1, 4_000, 7_000, 3_000_000_000),
        // Outside the probe record: not in the balance.
        span("b", "write", 2, 9_500, 12_000, 1_000_000_000),
    ];
    let (c, b) = closed(&timeline(&files, 10_000), &files);
    assert_eq!(b.files_outside_probe, 1);
    assert_eq!(c.files[3].figures.energy_j, None);
    // File a: 4 s at 6 W = 24 J of bus energy, but 1 s shared with b0 and 1 s with b1.
    let a = &c.files[0];
    assert!((a.figures.energy_j.unwrap() - 24.0).abs() < 0.05);
    assert!(
        (a.figures.energy_share_j.unwrap() - 18.0).abs() < 0.05,
        "{a:?}"
    );
    let b0 = &c.files[1];
    assert!((b0.figures.energy_share_j.unwrap() - 3.0).abs() < 0.05);
    let shares: f64 = c
        .files
        .iter()
        .filter_map(|f| f.figures.energy_share_j)
        .sum();
    assert!((shares + b.idle_j - b.accumulator_j).abs() / b.accumulator_j < 1e-3);
}

/// The accumulator wraps past 2^40 in the middle of a file: energy still right.
#[test]
fn energy_is_right_across_a_40_bit_accumulator_wrap() {
    let lsb = 1e-4_f32; // current LSB, A
    let energy_lsb = 16.0 * 3.2 * lsb as f64;
    let power_w = 4.0;
    let counts_per_ms = power_w * 1e-3 / energy_lsb;
    let start_raw = (1u64 << 40) - (counts_per_ms * 500.0) as u64; // wraps 0.5 s in
    let mut stream = ProbeStream::new();
    let mut frames = encode_probe_message(Msg::Info(pb::DeviceInfo {
        current_lsb_a: lsb,
        ..Default::default()
    }));
    // Probe clock = host ns / 1000 − T0/1000 (offset only).
    frames.extend(encode_probe_message(Msg::Sync(pb::SyncReply {
        sync_id: 1,
        host_time_ns: T0 as u64,
        probe_rx_us: 0,
        probe_tx_us: 0,
    })));
    let power_raw = (power_w / (3.2 * lsb as f64)).round() as u32;
    for b in 0..100u64 {
        let first = b * 32;
        frames.extend(encode_probe_message(Msg::Batch(pb::SampleBatch {
            first_seq: first,
            first_time_us: first * 1000,
            dt_us: (0..32).map(|i| if i == 0 { 0 } else { 1000 }).collect(),
            power: vec![power_raw; 32],
            vbus: vec![25_600; 32],
            accumulators: vec![pb::Accumulators {
                seq: first,
                energy: (start_raw + (counts_per_ms * first as f64) as u64) & ((1 << 40) - 1),
                charge: 0,
            }],
            ..Default::default()
        })));
    }
    let mut tl = Timeline::new();
    stream.push(&frames, T0, &mut |item| {
        if let StreamItem::Sample(s) = item {
            tl.push(&s);
        }
    });
    tl.flush();
    let files = vec![span("a", "write", 0, 100, 2_900, 1_000_000_000)];
    let (c, _) = closed(&tl, &files);
    let e = c.files[0].figures.energy_j.unwrap();
    assert!(
        (e - power_w * 2.8).abs() < 0.01,
        "energy {e} J across the wrap"
    );
}

#[test]
fn a_power_scale_that_disagrees_with_the_accumulator_breaks_the_balance() {
    let files = vec![span("a", "write", 0, 1_000, 3_000, 2_000_000_000)];
    closed(&timeline_scaled(&files, 5_000, 1.0), &files);
    // An ENERGY register 0.5 % off from POWER × time: the balance says so.
    let bad = correlate(&timeline_scaled(&files, 5_000, 1.005), &files)
        .balance
        .unwrap();
    assert!(
        bad.relative_error > 4e-3 && bad.relative_error < 6e-3,
        "{bad:?}"
    );
}

#[test]
fn a_gap_in_the_stream_is_left_out_of_both_sides() {
    let files = vec![span("a", "write", 0, 1_000, 6_000, 5_000_000_000)];
    let full = timeline(&files, 8_000);
    // Drop 1 s of samples (an unplug): energy readings resume after it.
    let mut t = Timeline::new();
    let mut agg_src = Vec::new();
    for b in &full.bins {
        if b.time_ns < T0 + 3_000 * MS || b.time_ns >= T0 + 4_000 * MS {
            agg_src.push(*b);
        }
    }
    t.bins = agg_src;
    t.energy = full
        .energy
        .iter()
        .copied()
        .filter(|(ti, _)| *ti < T0 + 3_000 * MS || *ti >= T0 + 4_000 * MS)
        .collect();
    let (_, b) = closed(&t, &files);
    assert!((b.uncovered_s - 1.0).abs() < 0.02, "{b:?}");
    // The accumulator still knows the whole energy, including the gap.
    assert!(
        (b.accumulator_j - b.covered_accumulator_j - 6.0).abs() < 0.1,
        "{b:?}"
    );
}
