//! Host decode + clock alignment throughput on one core: pre-generated
//! frames (64-sample batches with every channel, accumulators every 16
//! samples, a temperature per batch, a sync reply every second of probe
//! time) are fed in 4 KiB reads, as from the serial port, through the full
//! path — framing, CRC-32C, protobuf, sequence accounting, conversion,
//! alignment — and, separately, the 10 ms aggregation.
//!
//! `cargo run --release -p hostd-probe --example bench_decode [SAMPLES]`

use hostd_probe::agg::Aggregator;
use hostd_probe::message::encode_probe_message;
use hostd_probe::pb;
use hostd_probe::pb::probe_to_host::Msg;
use hostd_probe::stream::{ProbeStream, StreamItem};
use std::time::Instant;

const BATCH: u64 = 64;
const RATE_HZ: u64 = 10_000;

fn frames(samples: u64) -> Vec<u8> {
    let mut out = encode_probe_message(Msg::Info(pb::DeviceInfo {
        protocol_version: 1,
        current_lsb_a: 10.0 / 524_288.0,
        ..Default::default()
    }));
    let period_us = 1_000_000 / RATE_HZ;
    let mut energy = 1u64 << 39;
    for b in 0..samples / BATCH {
        let first = b * BATCH;
        let t0 = first * period_us;
        if first.is_multiple_of(RATE_HZ) {
            out.extend(encode_probe_message(Msg::Sync(pb::SyncReply {
                sync_id: b as u32,
                host_time_ns: 1_800_000_000_000_000_000 + t0 * 1000,
                probe_rx_us: t0 + 40,
                probe_tx_us: t0 + 45,
            })));
        }
        let wobble =
            |i: u64, base: i64, amp: i64| base + ((first + i) as i64 * 7919 % (2 * amp + 1)) - amp;
        let accumulators = (0..BATCH / 16)
            .map(|k| {
                energy += 1234;
                pb::Accumulators {
                    seq: first + k * 16,
                    energy: energy & ((1 << 40) - 1),
                    charge: (energy / 3) as i64,
                }
            })
            .collect();
        out.extend(encode_probe_message(Msg::Batch(pb::SampleBatch {
            first_seq: first,
            first_time_us: t0,
            dt_us: (0..BATCH)
                .map(|i| if i == 0 { 0 } else { period_us as u32 })
                .collect(),
            vbus: (0..BATCH).map(|i| wobble(i, 25_600, 40) as i32).collect(),
            vshunt: (0..BATCH).map(|i| wobble(i, 19_200, 500) as i32).collect(),
            current: (0..BATCH).map(|i| wobble(i, 62_915, 800) as i32).collect(),
            power: (0..BATCH)
                .map(|i| wobble(i, 98_304, 1_000) as u32)
                .collect(),
            die_temp: (0..BATCH).map(|i| wobble(i, 3_600, 10) as i32).collect(),
            accumulators,
            temps: vec![pb::TempReading {
                seq: first,
                sensor: 0,
                milli_c: 41_250,
            }],
            dropped_before: 0,
        })));
    }
    out
}

fn main() {
    let samples: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let stream_bytes = frames(samples);
    let mut best_decode = f64::MAX;
    let mut best_agg = f64::MAX;
    let mut checksum = 0.0;
    for _ in 0..3 {
        let mut decoder = ProbeStream::new();
        let mut got = Vec::with_capacity(samples as usize);
        let start = Instant::now();
        for chunk in stream_bytes.chunks(4096) {
            decoder.push(chunk, 1_800_000_000_000_100_000, &mut |item| {
                if let StreamItem::Sample(s) = item {
                    got.push(s);
                }
            });
        }
        best_decode = best_decode.min(start.elapsed().as_secs_f64());
        let stats = decoder.stats();
        assert_eq!(
            got.len() as u64,
            samples / BATCH * BATCH,
            "samples lost: {stats:?}"
        );
        assert_eq!(stats.sequence.gaps, 0);
        assert_eq!(stats.frames.rejected(), 0);

        let mut agg = Aggregator::default();
        let start = Instant::now();
        let mut rows = 0u64;
        for s in &got {
            if let Some(r) = agg.push(s) {
                rows += 1;
                checksum += r.power_w.mean;
            }
        }
        best_agg = best_agg.min(start.elapsed().as_secs_f64());
        checksum += rows as f64 + got.last().map_or(0.0, |s| s.time_ns as f64);
    }
    let n = (samples / BATCH * BATCH) as f64;
    let rate = n / best_decode;
    println!(
        "bench-probe: {} samples ({:.1} MB of frames, {} B/sample): decode + alignment {:.0} samples/s on one core (target ≥ 200 000: {})",
        n as u64,
        stream_bytes.len() as f64 / 1e6,
        stream_bytes.len() as u64 / n as u64,
        rate,
        if rate >= 200_000.0 { "met" } else { "NOT met" }
    );
    println!(
        "bench-probe: 10 ms aggregation {:.0} samples/s (checksum {checksum:.0})",
        n / best_agg
    );
}
