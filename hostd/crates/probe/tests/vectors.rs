//! The shared protocol test vectors in `fixtures/protocol/` (written by the
//! firmware's C tests): every frame decodes to exactly its JSON, and the
//! Rust encoder produces the same bytes.

use hostd_probe::frame::{encode_frame, FrameDecoder, DEFAULT_MAX_PAYLOAD};
use hostd_probe::pb;
use prost::Message;
use serde_json::Value;
use std::path::PathBuf;

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/protocol")
}

/// JSON equality where numbers compare exactly as integers, and floats as
/// 32-bit floats (the only float in the protocol is `current_lsb_a`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                return x == y;
            }
            if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                return x == y;
            }
            x.as_f64().map(|v| v as f32) == y.as_f64().map(|v| v as f32)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn every_vector_decodes_to_its_json_and_reencodes_to_its_bytes() {
    let dir = vectors_dir();
    let index: Vec<String> = serde_json::from_str(
        &std::fs::read_to_string(dir.join("index.json")).expect("fixtures/protocol/index.json"),
    )
    .unwrap();
    assert!(index.len() >= 10, "too few vectors: {index:?}");
    for name in index {
        let frame = std::fs::read(dir.join(format!("{name}.bin"))).unwrap();
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(
            hex(&frame),
            expected["frame_hex"].as_str().unwrap(),
            "{name}: .bin vs frame_hex"
        );

        let mut payloads = Vec::new();
        let mut decoder = FrameDecoder::default();
        decoder.push(&frame, |p| payloads.push(p.map(|p| p.to_vec())));
        assert_eq!(payloads.len(), 1, "{name}: one frame");
        let payload = payloads.remove(0).unwrap_or_else(|e| panic!("{name}: {e}"));

        let (decoded, reencoded) = match expected["direction"].as_str().unwrap() {
            "probe_to_host" => {
                let m = pb::ProbeToHost::decode(&payload[..]).unwrap();
                (
                    serde_json::to_value(&m).unwrap()["msg"].clone(),
                    m.encode_to_vec(),
                )
            }
            "host_to_probe" => {
                let m = pb::HostToProbe::decode(&payload[..]).unwrap();
                // {request_id, cmd: {start: …}} → {request_id, start: …}
                let bytes = m.encode_to_vec();
                let mut v = serde_json::to_value(m).unwrap();
                let cmd = v["cmd"].take();
                let obj = v.as_object_mut().unwrap();
                obj.remove("cmd");
                if let Value::Object(cmd) = cmd {
                    obj.extend(cmd);
                }
                (v, bytes)
            }
            other => panic!("{name}: unknown direction {other}"),
        };
        assert!(
            same(&decoded, &expected["message"]),
            "{name}:\n got  {decoded}\n want {}",
            expected["message"]
        );
        assert_eq!(
            encode_frame(&reencoded),
            frame,
            "{name}: re-encoded frame differs"
        );
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The v2 batches' `samples` (what `packed` holds, written by the C
/// generator from the values it packed) match the Rust unpacker exactly.
#[test]
fn v2_packed_samples_decode_to_the_c_generators_values() {
    use hostd_probe::packed::{unpack, Unpacked, CHANNELS};
    let dir = vectors_dir();
    let index: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
    let mut checked = 0;
    for name in index {
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let Some(want) = expected.get("samples").and_then(Value::as_array) else {
            continue;
        };
        let frame = std::fs::read(dir.join(format!("{name}.bin"))).unwrap();
        let mut payload = Vec::new();
        FrameDecoder::default().push(&frame, |p| payload = p.unwrap().to_vec());
        let Some(pb::probe_to_host::Msg::Batch(batch)) =
            pb::ProbeToHost::decode(&payload[..]).unwrap().msg
        else {
            panic!("{name}: not a batch");
        };
        let mut u = Unpacked::default();
        unpack(&batch, &mut u).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(u.time_us.len(), want.len(), "{name}");
        for (i, w) in want.iter().enumerate() {
            assert_eq!(
                w["seq"].as_u64(),
                Some(batch.first_seq + i as u64),
                "{name}"
            );
            assert_eq!(
                w["time_us"].as_u64(),
                Some(u.time_us[i]),
                "{name} sample {i}"
            );
            for (c, (bit, ch)) in CHANNELS.iter().enumerate() {
                let got = (batch.channels & bit != 0).then(|| u.values[c][i]);
                assert_eq!(w[ch].as_i64(), got, "{name} sample {i} {ch}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} v2 batch vectors");
}

/// The decoder accepts the schema's largest probe message (from the C
/// generator's `limits.json`), so no valid frame is ever counted as oversize,
/// and still bounds what it buffers.
#[test]
fn decoder_bound_is_the_schemas_largest_probe_message() {
    let limits: Value =
        serde_json::from_str(&std::fs::read_to_string(vectors_dir().join("limits.json")).unwrap())
            .unwrap();
    let max = limits["probe_to_host_payload_max"].as_u64().unwrap() as usize;
    assert_eq!(DEFAULT_MAX_PAYLOAD, max);
    for (len, accepted) in [(max, true), (2 * max, false)] {
        let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let mut decoder = FrameDecoder::default();
        let mut got = Vec::new();
        decoder.push(&encode_frame(&payload), |p| got.push(p.map(|p| p.len())));
        assert_eq!(got.len(), 1, "{len}");
        assert_eq!(got[0].is_ok(), accepted, "{len}: {:?}", got[0]);
    }
}
