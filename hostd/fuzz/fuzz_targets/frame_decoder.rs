//! Any byte stream through the full probe → host path (framing, CRC-32C,
//! protobuf, sequence accounting, alignment, conversion) and the host →
//! probe message decoder: no panic, and the result does not depend on how
//! the bytes were chunked.

#![no_main]

use hostd_probe::frame::FrameDecoder;
use hostd_probe::pb;
use hostd_probe::stream::ProbeStream;
use libfuzzer_sys::fuzz_target;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    let mut whole = ProbeStream::new();
    let mut items_whole = Vec::new();
    whole.push(data, 1_000_000_000, &mut |item| items_whole.push(item));

    let split = data.first().map_or(0, |b| *b as usize % (data.len() + 1));
    let mut parts = ProbeStream::new();
    let mut items_parts = Vec::new();
    parts.push(&data[..split], 1_000_000_000, &mut |item| items_parts.push(item));
    parts.push(&data[split..], 1_000_000_000, &mut |item| items_parts.push(item));

    assert_eq!(items_whole, items_parts, "chunking changed the output");
    assert_eq!(whole.stats().frames, parts.stats().frames);

    let mut frames = FrameDecoder::default();
    frames.push(data, |frame| {
        if let Ok(payload) = frame {
            let _ = pb::HostToProbe::decode(payload);
        }
    });
});
