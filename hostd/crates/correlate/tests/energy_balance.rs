//! Per-file energy and the energy balance on synthetic probe streams with
//! known power: idle 2 W, 6 W while any file is in progress.

use hostd_correlate::{correlate, Correlation, EnergyBalance, Timeline};
use hostd_probe::message::encode_probe_message;
use hostd_probe::pb;
use hostd_probe::pb::probe_to_host::Msg;
use hostd_probe::stream::{ProbeStream, StreamItem};
use hostd_records::probe::ProbeSample;
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
    Probe {
        scale,
        ..Probe::default()
    }
    .record(files, ms)
}

/// A probe stream as the INA228 gives it (docs/protocol.md): one sample per
/// conversion, stamped at the conversion's end, its power the mean of the true
/// power over the conversion before that time; the accumulator, read every 16
/// samples, the true energy (× `scale`) up to the reading.
struct Probe {
    /// Conversion length, ns.
    period_ns: i64,
    /// The first sample's time after T0, ns.
    offset_ns: i64,
    /// Accumulator scale against the true energy.
    scale: f64,
    /// Samples whose time falls in this range (ms after T0) never arrive.
    lost_ms: std::ops::Range<i64>,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            period_ns: MS,
            offset_ns: 0,
            scale: 1.0,
            lost_ms: 0..0,
        }
    }
}

impl Probe {
    /// The stream over the first `ms` of a run with `files` (6 W while any is in
    /// progress, else 2 W).
    fn record(&self, files: &[FileRecord], ms: i64) -> Timeline {
        let mut t = Timeline::new();
        for s in self.samples(files, ms) {
            t.push(&s);
        }
        t.flush();
        t
    }

    /// The samples from `offset_ns` to `ms` after T0, sequence numbers from 0.
    fn samples(&self, files: &[FileRecord], ms: i64) -> Vec<ProbeSample> {
        let mut out = Vec::new();
        let mut held = None;
        let lost = (T0 + self.lost_ms.start * MS)..(T0 + self.lost_ms.end * MS);
        let mut seq = 0u64;
        let mut time = T0 + self.offset_ns;
        while time < T0 + ms * MS {
            let power =
                true_energy(files, time - self.period_ns, time) / (self.period_ns as f64 / 1e9);
            if seq.is_multiple_of(16) {
                held = Some(true_energy(files, T0 - MS, time) * self.scale);
            }
            if !lost.contains(&time) {
                out.push(ProbeSample {
                    time_ns: time,
                    seq,
                    probe_time_us: ((time - T0) / 1000) as u64,
                    vbus_v: Some(5.0),
                    current_a: Some(power / 5.0),
                    power_w: Some(power),
                    energy_j: held,
                    charge_c: None,
                    die_temp_c: Some(40.0),
                    enclosure_temp_c: Some(30.0 + (time - T0) as f64 / 1e9),
                    vbus_min_v: None,
                });
            }
            seq += 1;
            time += self.period_ns;
        }
        out
    }
}

/// Joules over `(a, b]` at 6 W while a file is in progress, else 2 W; a stretch
/// at one power gives exactly that power × time.
fn true_energy(files: &[FileRecord], a: i64, b: i64) -> f64 {
    let mut edges: Vec<i64> = files
        .iter()
        .flat_map(|f| [f.start_ns as i64, f.end_ns as i64])
        .filter(|&e| a < e && e < b)
        .chain([a, b])
        .collect();
    edges.sort_unstable();
    edges
        .windows(2)
        .map(|w| {
            let power = if busy(files, w[0]) { 6.0 } else { 2.0 };
            power * (w[1] - w[0]) as f64 / 1e9
        })
        .sum()
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

/// The balance of `ms` of stream with `files` when the samples from 3 to 4 s
/// never arrive (an unplug: their sequence numbers are missing, and the
/// accumulator readings resume after it); asserts it closes, and that what it
/// left out is the stretch between the accumulator readings around the gap
/// (read every 16 samples), so 1.000–1.016 s.
fn closed_across_a_gap(files: &[FileRecord], ms: i64) -> EnergyBalance {
    let probe = Probe {
        lost_ms: 3_000..4_000,
        ..Probe::default()
    };
    let (_, b) = closed(&probe.record(files, ms), files);
    assert!((1.0..=1.016).contains(&b.uncovered_s), "{b:?}");
    b
}

#[test]
fn a_gap_in_the_stream_is_left_out_of_both_sides() {
    let files = vec![span("a", "write", 0, 1_000, 6_000, 5_000_000_000)];
    let b = closed_across_a_gap(&files, 8_000);
    // The accumulator still knows the whole energy, including the gap.
    assert!(
        (b.accumulator_j - b.covered_accumulator_j - 6.0).abs() < 0.1,
        "{b:?}"
    );
}

/// `hostd run`'s quick demo gave a 0.6 s probe record that missed the 0.1 % by
/// 0.15–0.21 % about once in 25 runs: a sample's power belongs to the
/// conversion before its time, and counting it in the bin its time falls in
/// moved each power step by up to one conversion against the accumulator.
#[test]
fn a_short_record_whose_conversions_straddle_the_bins_closes() {
    // 0.6 s at the chip's 936 µs conversions (1068 Hz), which drift across the
    // 10 ms bins; one file from 15 to 410 ms: two 4 W steps.
    let files = vec![span("a", "write", 0, 15, 410, 500_000_000)];
    for offset_us in [0, 3, 250, 500, 931] {
        let probe = Probe {
            period_ns: 936_000,
            offset_ns: offset_us * 1000,
            ..Probe::default()
        };
        let (c, b) = closed(&probe.record(&files, 600), &files);
        assert!(b.relative_error < 1e-6, "offset {offset_us} µs: {b:?}");
        // 0.395 s at 6 W, from an accumulator read every 15 ms (linear between
        // readings: up to ΔP × 15 ms / 4 off at each edge).
        let e = c.files[0].figures.energy_j.unwrap();
        assert!((e - 2.37).abs() < 0.03, "offset {offset_us} µs: {e} J");
    }
}

/// Across a gap the accumulator is known only at its readings on either side:
/// a bin next to the gap, counted at its mean against the accumulator
/// interpolated across the gap, put a file that ended in the gap 0.03–0.125 %
/// off. Only stretches between readings with every conversion measured count.
#[test]
fn a_gap_that_swallows_the_end_of_a_file_still_closes() {
    let files = vec![span("a", "write", 0, 1_000, 3_500, 2_500_000_000)];
    let b = closed_across_a_gap(&files, 5_000);
    assert!(b.relative_error < 1e-6, "{b:?}");
}

/// A clock refit moves the host time of the samples after it; a reconnected
/// probe starts its sequence again, here at 20 ms conversions instead of 1 ms.
/// Neither loses a sample, so neither may leave time uncovered.
#[test]
fn a_clock_step_and_a_reconnect_at_another_rate_keep_the_record_covered() {
    let files = vec![span("a", "write", 0, 500, 4_000, 3_500_000_000)];
    let mut before = Probe::default().samples(&files, 2_000);
    // The refit: from 1 s on, every time 0.7 ms earlier.
    for s in before.iter_mut().filter(|s| s.time_ns >= T0 + 1_000 * MS) {
        s.time_ns -= 700_000;
    }
    let after = Probe {
        period_ns: 20 * MS,
        offset_ns: 2_020 * MS,
        ..Probe::default()
    }
    .samples(&files, 5_000);
    let mut t = Timeline::new();
    for s in before.iter().chain(&after) {
        t.push(s);
    }
    t.flush();
    let (_, b) = closed(&t, &files);
    // Left out: only the stretch from the last accumulator reading before the
    // reconnect to the first after it (the new probe's first conversion is of
    // unknown length): 16 + 20 ms.
    assert!(b.uncovered_s < 0.040, "{b:?}");
    // The refit took 0.7 ms at 6 W out of one sample's conversion: 4.2 mJ of 23.6 J.
    assert!(b.relative_error < 2.5e-4, "{b:?}");
}
