//! Host decode + clock alignment throughput on one core: pre-generated wire
//! v2 frames as the probe sends them at its defaults (32-sample batches of
//! VBUS and VSHUNT packed as zig-zag varint deltas, one slow register every 8
//! samples, a temperature per batch, a sync reply every second of probe time)
//! are fed in 4 KiB reads, as from the serial port, through the full path —
//! framing, CRC-32C, protobuf, unpacking, sequence and epoch accounting,
//! conversion (current and power from VBUS and VSHUNT), alignment — and,
//! separately, the 10 ms aggregation.
//!
//! `cargo run --release -p hostd-probe --example bench_decode [SAMPLES]`

use hostd_probe::message::encode_probe_message;
use hostd_probe::packed::pack;
use hostd_probe::pb;
use hostd_probe::pb::probe_to_host::Msg;
use hostd_probe::stream::{ProbeStream, StreamItem};
use hostd_records::binning::Aggregator;
use std::time::Instant;

const BATCH: u64 = 32;
const PERIOD_US: u64 = 936;
const SLOW_EVERY: u64 = 8;

fn frames(samples: u64) -> Vec<u8> {
    let mut out = encode_probe_message(Msg::Info(pb::DeviceInfo {
        protocol_version: 2,
        shunt_micro_ohm: 5000,
        current_lsb_a: 10.0 / 524_288.0,
        ..Default::default()
    }));
    let mut energy = 1u64 << 39;
    let per_second = 1_000_000 / PERIOD_US;
    for b in 0..samples / BATCH {
        let first = b * BATCH;
        let t0 = first * PERIOD_US;
        if first / per_second != (first + BATCH) / per_second || first == 0 {
            out.extend(encode_probe_message(Msg::Sync(pb::SyncReply {
                sync_id: b as u32,
                host_time_ns: 1_800_000_000_000_000_000 + t0 * 1000,
                probe_rx_us: t0 + 40,
                probe_tx_us: t0 + 45,
            })));
        }
        let wobble =
            |i: u64, base: i64, amp: i64| base + ((first + i) as i64 * 7919 % (2 * amp + 1)) - amp;
        let time_us: Vec<u64> = (0..BATCH)
            .map(|i| t0 + i * PERIOD_US + (i % 3 == 2) as u64)
            .collect();
        let values = [
            (0..BATCH).map(|i| wobble(i, 25_600, 40)).collect(),
            (0..BATCH).map(|i| wobble(i, 19_200, 60)).collect(),
            Vec::new(),
            Vec::new(),
        ];
        let slow = (0..BATCH / SLOW_EVERY)
            .map(|k| {
                energy += 1234;
                let turn = (first / SLOW_EVERY + k) % 3;
                pb::RegisterReading {
                    index: (k * SLOW_EVERY + SLOW_EVERY - 1) as u32,
                    reg: [0x09, 0x0A, 0x06][turn as usize],
                    value: [energy & ((1 << 40) - 1), energy / 3, 4480][turn as usize],
                }
            })
            .collect();
        out.extend(encode_probe_message(Msg::Batch(pb::SampleBatch {
            first_seq: first,
            first_time_us: t0,
            temps: vec![pb::TempReading {
                seq: first,
                sensor: 0,
                milli_c: 41_250,
            }],
            packed: pack(3, PERIOD_US as u32, &time_us, &values),
            channels: 3,
            period_us: PERIOD_US as u32,
            count: BATCH as u32,
            slow,
            ..Default::default()
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
        "bench-probe: {} samples ({:.1} MB of wire v2 frames, {:.2} B/sample): decode + alignment {:.0} samples/s on one core (target ≥ 200 000: {})",
        n as u64,
        stream_bytes.len() as f64 / 1e6,
        stream_bytes.len() as f64 / n,
        rate,
        if rate >= 200_000.0 { "met" } else { "NOT met" }
    );
    println!(
        "bench-probe: 10 ms aggregation {:.0} samples/s (checksum {checksum:.0})",
        n / best_agg
    );
}
