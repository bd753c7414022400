//! Garbage, bit flips and truncated frames: nothing panics, every corrupt
//! frame is rejected and counted, every intact frame is recovered, and the
//! samples of lost batches show up as counted sequence gaps.

use hostd_probe::message::encode_probe_message;
use hostd_probe::pb;
use hostd_probe::pb::probe_to_host::Msg;
use hostd_probe::stream::{ProbeStream, StreamEvent, StreamItem};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const BATCH: u64 = 20;

fn info() -> Msg {
    Msg::Info(pb::DeviceInfo {
        protocol_version: 1,
        probe_id: "t".into(),
        current_lsb_a: 1e-5,
        ..Default::default()
    })
}

fn sync() -> Msg {
    Msg::Sync(pb::SyncReply {
        sync_id: 1,
        host_time_ns: 1_999_900_000,
        probe_rx_us: 10,
        probe_tx_us: 11,
    })
}

fn batch(rng: &mut ChaCha8Rng, index: u64) -> Msg {
    let first = index * BATCH;
    Msg::Batch(pb::SampleBatch {
        first_seq: first,
        first_time_us: 1_000 + first * 100,
        dt_us: (0..BATCH).map(|i| if i == 0 { 0 } else { 100 }).collect(),
        vbus: (0..BATCH).map(|_| rng.gen_range(0..0x7ffff)).collect(),
        current: (0..BATCH)
            .map(|_| rng.gen_range(-0x7ffff..0x7ffff))
            .collect(),
        power: (0..BATCH).map(|_| rng.gen_range(0..0xffffff)).collect(),
        die_temp: (0..BATCH).map(|_| rng.gen_range(-3000..9000)).collect(),
        accumulators: vec![pb::Accumulators {
            seq: first + BATCH - 1,
            energy: rng.gen_range(0..1 << 40),
            charge: 0,
        }],
        ..Default::default()
    })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Damage {
    Intact,
    BitFlip,
    Truncated,
}

/// Damages a frame (delimiter kept) so that it stays exactly one frame.
fn damage(rng: &mut ChaCha8Rng, frame: &mut Vec<u8>, how: Damage) {
    let body = frame.len() - 1;
    match how {
        Damage::Intact => {}
        Damage::BitFlip => loop {
            let at = rng.gen_range(0..body);
            let flipped = frame[at] ^ (1 << rng.gen_range(0..8));
            if flipped != 0 {
                frame[at] = flipped;
                break;
            }
        },
        Damage::Truncated => {
            let keep = rng.gen_range(1..body);
            frame.drain(keep..body);
        }
    }
}

#[test]
fn corrupt_stream_loses_only_the_damaged_frames() {
    for seed in 0..20u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut stream = encode_probe_message(info());
        stream.extend(encode_probe_message(sync()));
        let mut intact_batches = Vec::new();
        let (mut damaged, mut garbage_frames, mut lost_samples) = (0u64, 0u64, 0u64);
        for index in 0..300 {
            if rng.gen_bool(0.1) {
                // Garbage between frames: nonzero bytes, then a delimiter.
                let len = rng.gen_range(1..80);
                stream.extend((0..len).map(|_| rng.gen_range(1..=255u8)));
                stream.push(0);
                garbage_frames += 1;
            }
            let msg = batch(&mut rng, index);
            let mut frame = encode_probe_message(msg.clone());
            let how = match rng.gen_range(0..10) {
                0 => Damage::BitFlip,
                1 => Damage::Truncated,
                _ => Damage::Intact,
            };
            damage(&mut rng, &mut frame, how);
            if how == Damage::Intact {
                intact_batches.push(msg);
            } else {
                damaged += 1;
                lost_samples += BATCH;
            }
            stream.extend(frame);
        }
        // Feed in random chunk sizes, as a serial port would deliver it.
        let mut decoder = ProbeStream::new();
        let mut samples = Vec::new();
        let mut gap_total = 0;
        let mut rest = &stream[..];
        while !rest.is_empty() {
            let n = rng.gen_range(1..=rest.len().min(700));
            decoder.push(&rest[..n], 2_000_000_000, &mut |item| match item {
                StreamItem::Sample(s) => samples.push(s),
                StreamItem::Event(StreamEvent::Gap { missing, .. }) => gap_total += missing,
                StreamItem::Event(_) => {}
            });
            rest = &rest[n..];
        }
        let stats = decoder.stats();
        assert_eq!(
            stats.frames.rejected(),
            damaged + garbage_frames,
            "seed {seed}: {stats:?}"
        );
        assert_eq!(
            stats.frames.frames_ok,
            2 + intact_batches.len() as u64,
            "seed {seed}"
        );
        assert_eq!(stats.messages.undecodable, 0, "seed {seed}");
        let want_seqs: Vec<u64> = intact_batches
            .iter()
            .flat_map(|m| match m {
                Msg::Batch(b) => (b.first_seq..b.first_seq + BATCH).collect::<Vec<_>>(),
                _ => vec![],
            })
            .collect();
        let got_seqs: Vec<u64> = samples.iter().map(|s| s.seq).collect();
        assert_eq!(
            got_seqs, want_seqs,
            "seed {seed}: intact samples recovered in order"
        );
        // Losses before the first and after the last intact batch are not
        // visible as gaps (nothing to compare with); all others are.
        let leading = want_seqs.first().copied().unwrap_or(0);
        let trailing = 300 * BATCH - want_seqs.last().map_or(0, |s| s + 1);
        assert_eq!(leading + gap_total + trailing, lost_samples, "seed {seed}");
        assert_eq!(stats.sequence.missing, gap_total);
    }
}

#[test]
fn random_bytes_never_panic_and_are_all_rejected_or_ignored() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut decoder = ProbeStream::new();
    let mut items = 0;
    for _ in 0..2_000 {
        let len = rng.gen_range(0..600);
        let chunk: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        decoder.push(&chunk, 0, &mut |_| items += 1);
    }
    let stats = decoder.stats();
    assert_eq!(items, 0, "random bytes produced output");
    assert_eq!(stats.frames.frames_ok, 0);
    assert!(stats.frames.rejected() > 1000);
}

/// Feeds one message at host time `recv_ns`; returns the samples it released.
fn feed(d: &mut ProbeStream, msg: Msg, recv_ns: i64) -> Vec<hostd_records::probe::ProbeSample> {
    let mut samples = Vec::new();
    d.push(&encode_probe_message(msg), recv_ns, &mut |i| {
        if let StreamItem::Sample(s) = i {
            samples.push(s)
        }
    });
    samples
}

fn sync_at(host_send_ns: u64, probe_us: u64) -> Msg {
    Msg::Sync(pb::SyncReply {
        sync_id: 1,
        host_time_ns: host_send_ns,
        probe_rx_us: probe_us,
        probe_tx_us: probe_us + 1,
    })
}

#[test]
fn samples_wait_for_calibration_and_alignment_then_flow() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut d = ProbeStream::new();
    assert!(feed(&mut d, batch(&mut rng, 0), 2_000_000_000).is_empty());
    assert!(feed(&mut d, info(), 2_000_000_000).is_empty());
    assert!(
        feed(&mut d, batch(&mut rng, 1), 2_000_000_000).is_empty(),
        "no samples before the clock is aligned"
    );
    let samples = feed(&mut d, sync(), 2_000_000_000);
    assert_eq!(samples.len(), 2 * BATCH as usize);
    // Probe time 10.5 µs ↔ host midpoint (1.9999 s + 2 s)/2; sample 0 at 1000 µs.
    let expected = 1_999_950_000 + (1_000 - 10) * 1000 - 500;
    assert!(
        (samples[0].time_ns - expected).abs() <= 1000,
        "{}",
        samples[0].time_ns
    );
}

#[test]
fn a_slow_first_sync_holds_samples_until_a_good_one_arrives() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut d = ProbeStream::new();
    feed(&mut d, info(), 1_000_000_000);
    // Round trip 4 ms: ±2 ms is not good enough to stamp samples with.
    assert!(feed(&mut d, sync_at(996_000_000, 0), 1_000_000_000).is_empty());
    assert!(feed(&mut d, batch(&mut rng, 0), 1_100_000_000).is_empty());
    // A 100 µs round trip releases them, all stamped with the good fit.
    let released = feed(&mut d, sync_at(1_199_900_000, 199_950), 1_200_000_000);
    assert_eq!(released.len(), BATCH as usize);
    assert!(d.stats().alignment_uncertainty_max_ns.unwrap() < 250_000.0);
    // Afterwards batches flow at once.
    assert_eq!(
        feed(&mut d, batch(&mut rng, 1), 1_300_000_000).len(),
        BATCH as usize
    );
}

#[test]
fn without_a_good_sync_samples_flow_after_the_hold_limit() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut d = ProbeStream::new();
    feed(&mut d, info(), 1_000_000_000);
    feed(&mut d, sync_at(990_000_000, 0), 1_000_000_000); // ±5 ms
    assert!(feed(&mut d, batch(&mut rng, 0), 1_000_000_000).is_empty());
    let late = feed(&mut d, batch(&mut rng, 1), 4_100_000_000);
    assert_eq!(late.len(), 2 * BATCH as usize);
    let max = d.stats().alignment_uncertainty_max_ns.unwrap();
    assert!(max > 1e6, "the poor fit is reported: {max}");
}
