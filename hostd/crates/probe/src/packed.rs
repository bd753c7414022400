//! Wire v2 sample packing (`SampleBatch.packed`, docs/protocol.md): per
//! sample, the zig-zag varint of `dt_us - period_us` (0 for sample 0), then
//! for each channel bit set in `channels` (VBUS, VSHUNT, CURRENT, POWER, lowest
//! bit first) the zig-zag varint of the raw value minus the previous sample's.

use crate::pb;
use thiserror::Error;

/// Channel bits in `SampleBatch.channels` / `Start.channels`, in packing order.
pub const CHANNELS: [(u32, &str); 4] = [
    (CH_VBUS, "vbus"),
    (CH_VSHUNT, "vshunt"),
    (CH_CURRENT, "current"),
    (CH_POWER, "power"),
];
/// VBUS channel bit.
pub const CH_VBUS: u32 = 1;
/// VSHUNT channel bit.
pub const CH_VSHUNT: u32 = 2;
/// CURRENT channel bit.
pub const CH_CURRENT: u32 = 4;
/// POWER channel bit.
pub const CH_POWER: u32 = 8;
/// Samples per batch at most (the probe's nanopb bound).
pub const MAX_BATCH_SAMPLES: u32 = 64;

/// Why `packed` could not be decoded.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PackedError {
    /// More samples than a batch may hold.
    #[error("batch says {0} samples, at most {MAX_BATCH_SAMPLES} allowed")]
    TooManySamples(u32),
    /// The bytes end inside a sample.
    #[error("packed samples end early (sample {0})")]
    Truncated(u32),
    /// Bytes left after the last sample.
    #[error("{0} bytes after the last packed sample")]
    Trailing(usize),
}

/// A v2 batch's samples unpacked into reusable buffers.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Unpacked {
    /// Probe time of each sample (µs).
    pub time_us: Vec<u64>,
    /// Raw values per channel (VBUS, VSHUNT, CURRENT, POWER); empty when the
    /// channel is not in the batch.
    pub values: [Vec<i64>; 4],
}

/// True when the batch uses the v2 layout (`count`/`packed`), false for v1.
pub fn is_v2(batch: &pb::SampleBatch) -> bool {
    batch.count > 0 || !batch.packed.is_empty() || batch.channels != 0 || batch.period_us != 0
}

fn get_zigzag(bytes: &[u8], pos: &mut usize) -> Option<i64> {
    let mut z: u64 = 0;
    let mut shift = 0u32;
    while shift < 64 {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        z |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some((z >> 1) as i64 ^ -((z & 1) as i64));
        }
        shift += 7;
    }
    None
}

fn put_zigzag(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let b = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Decodes `batch.packed` into `out` (buffers reused, previous content dropped).
pub fn unpack(batch: &pb::SampleBatch, out: &mut Unpacked) -> Result<(), PackedError> {
    if batch.count > MAX_BATCH_SAMPLES {
        return Err(PackedError::TooManySamples(batch.count));
    }
    let n = batch.count as usize;
    out.time_us.clear();
    let present: [bool; 4] = std::array::from_fn(|c| batch.channels & CHANNELS[c].0 != 0);
    for (c, v) in out.values.iter_mut().enumerate() {
        v.clear();
        if present[c] {
            v.reserve(n);
        }
    }
    let bytes = &batch.packed[..];
    let mut pos = 0usize;
    let mut t = batch.first_time_us;
    let mut prev = [0i64; 4];
    for i in 0..n {
        let dev = get_zigzag(bytes, &mut pos).ok_or(PackedError::Truncated(i as u32))?;
        if i > 0 {
            t = t.wrapping_add(i64::from(batch.period_us).wrapping_add(dev) as u64);
        }
        out.time_us.push(t);
        for c in 0..4 {
            if present[c] {
                let d = get_zigzag(bytes, &mut pos).ok_or(PackedError::Truncated(i as u32))?;
                prev[c] = prev[c].wrapping_add(d);
                out.values[c].push(prev[c]);
            }
        }
    }
    if pos != bytes.len() {
        return Err(PackedError::Trailing(bytes.len() - pos));
    }
    Ok(())
}

/// Packs samples the way the probe does (tests, benches, simulated peers):
/// `time_us[i]` and `values[c][i]` for the channels in `channels`.
pub fn pack(channels: u32, period_us: u32, time_us: &[u64], values: &[Vec<i64>; 4]) -> Vec<u8> {
    let mut out = Vec::with_capacity(time_us.len() * 4);
    for i in 0..time_us.len() {
        let dev = if i == 0 {
            0
        } else {
            time_us[i] as i64 - time_us[i - 1] as i64 - i64::from(period_us)
        };
        put_zigzag(&mut out, dev);
        for (c, (bit, _)) in CHANNELS.iter().enumerate() {
            if channels & bit != 0 {
                let prev = if i == 0 { 0 } else { values[c][i - 1] };
                put_zigzag(&mut out, values[c][i] - prev);
            }
        }
    }
    out
}

/// Channel bits from names (`vbus,vshunt,current,power`; `all`).
pub fn parse_channels(list: &str) -> Result<u32, String> {
    let mut bits = 0;
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if name.eq_ignore_ascii_case("all") {
            bits |= CH_VBUS | CH_VSHUNT | CH_CURRENT | CH_POWER;
            continue;
        }
        let bit = CHANNELS
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(name))
            .map(|(b, _)| *b)
            .ok_or_else(|| {
                format!("unknown probe channel '{name}' (choose from vbus, vshunt, current, power, all)")
            })?;
        bits |= bit;
    }
    if bits == 0 {
        return Err("no probe channel given (e.g. vbus,vshunt)".into());
    }
    if bits & (CH_VSHUNT | CH_CURRENT) == 0 {
        return Err("the probe channels need vshunt or current to measure current".into());
    }
    Ok(bits)
}

/// Names of the channel bits, comma separated.
pub fn channel_names(bits: u32) -> String {
    CHANNELS
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_then_unpack_is_the_identity_at_the_raw_limits() {
        let time_us = vec![10, 11, 5_000_000, 5_000_936];
        let values = [
            vec![524_287, -524_288, 0, 524_287],
            vec![-524_288, 524_287, -1, 0],
            vec![1, 2, 3, 4],
            vec![16_777_215, 0, 16_777_215, 1],
        ];
        let batch = pb::SampleBatch {
            first_time_us: 10,
            channels: 0xf,
            period_us: 936,
            count: 4,
            packed: pack(0xf, 936, &time_us, &values),
            ..Default::default()
        };
        let mut u = Unpacked::default();
        unpack(&batch, &mut u).unwrap();
        assert_eq!(u.time_us, time_us);
        assert_eq!(u.values, values);
    }

    #[test]
    fn truncated_or_trailing_bytes_are_errors() {
        let values = [vec![25_600, 25_601], vec![19_200, 19_100], vec![], vec![]];
        let mut batch = pb::SampleBatch {
            channels: 3,
            period_us: 1000,
            count: 2,
            packed: pack(3, 1000, &[0, 1000], &values),
            ..Default::default()
        };
        let mut u = Unpacked::default();
        batch.packed.pop();
        assert_eq!(unpack(&batch, &mut u), Err(PackedError::Truncated(1)));
        batch.packed = pack(3, 1000, &[0, 1000], &values);
        batch.packed.push(0);
        assert_eq!(unpack(&batch, &mut u), Err(PackedError::Trailing(1)));
        batch.count = 65;
        assert_eq!(unpack(&batch, &mut u), Err(PackedError::TooManySamples(65)));
    }

    #[test]
    fn random_bytes_never_panic_and_decode_only_when_exactly_consumed() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(14);
        let mut u = Unpacked::default();
        let (mut ok, mut bad) = (0, 0);
        for _ in 0..20_000 {
            let len = rng.gen_range(0..64);
            let batch = pb::SampleBatch {
                first_time_us: rng.gen(),
                channels: rng.gen_range(0..32),
                period_us: rng.gen(),
                count: rng.gen_range(0..70),
                packed: (0..len).map(|_| rng.gen()).collect(),
                ..Default::default()
            };
            match unpack(&batch, &mut u) {
                Ok(()) => {
                    ok += 1;
                    assert_eq!(u.time_us.len(), batch.count as usize);
                }
                Err(_) => bad += 1,
            }
        }
        assert!(ok > 0 && bad > 0, "{ok} decoded, {bad} refused");
        // A dt delta at the i64 limit wraps instead of overflowing.
        let max = [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]; // i64::MAX
        let batch = pb::SampleBatch {
            count: 2,
            packed: [&[0u8][..], &max[..]].concat(),
            period_us: u32::MAX,
            first_time_us: u64::MAX,
            ..Default::default()
        };
        assert!(unpack(&batch, &mut u).is_ok());
    }

    #[test]
    fn channel_lists_parse_and_need_a_current_channel() {
        assert_eq!(parse_channels("vbus,vshunt"), Ok(3));
        assert_eq!(parse_channels("all"), Ok(15));
        assert_eq!(parse_channels("VBUS, current"), Ok(5));
        assert!(parse_channels("vbus")
            .unwrap_err()
            .contains("vshunt or current"));
        assert!(parse_channels("vbus,amps").unwrap_err().contains("'amps'"));
        assert_eq!(channel_names(15), "vbus,vshunt,current,power");
    }
}
