//! `hostd pd-decode --json`: the capture, the channel, each message with its fields and
//! objects read, the contract and the counters, as one JSON document.

use super::{role, type_name, Decoded};
use hostd_pd::{Counters, Message, Payload, Pdo, Rdo, Reader, Vdm};
use serde_json::{json, Value};
use std::path::Path;

/// The whole document.
pub(super) fn document(file: &Path, d: &Decoded) -> Value {
    let c = d.channel();
    let mut reader = Reader::new();
    let messages: Vec<Value> = (c.messages.iter())
        .map(|m| message(d, m, &reader.read(m)))
        .collect();
    let state = c.contract;
    let contract = state.current.map(|k| {
        json!({
            "supply": k.supply.name(),
            "position": k.position,
            "mv": k.mv,
            "mv_min": k.mv_min,
            "mv_max": k.mv_max,
            "ma": k.ma,
            "ma_max": k.ma_max,
            "mw": k.mw,
            "capability_mismatch": k.capability_mismatch,
            "pdo": hex(k.pdo),
            "rdo": hex(k.rdo),
            "since_us": us(d, k.t),
        })
    });
    json!({
        "file": file.display().to_string(),
        "samplerate_hz": d.capture.samplerate,
        "samples": d.capture.samples,
        "channel": { "name": c.channel.name, "probe": c.channel.probe, "auto": d.auto },
        "also_with_traffic": d.others_with_traffic().iter().map(|o| &o.channel.name).collect::<Vec<_>>(),
        "messages": messages,
        "contract": contract,
        "contract_changes": state.generation,
        "counters": counters(&c.counters),
    })
}

/// µs from the capture's start, to the ns.
fn us(d: &Decoded, t: u64) -> f64 {
    (d.us(t) * 1000.0).round() / 1000.0
}

fn hex(v: u32) -> String {
    format!("{v:08x}")
}

fn message(d: &Decoded, m: &Message, payload: &Payload) -> Value {
    let mut v = json!({
        "t_us": us(d, m.t()),
        "sample": m.t(),
        "sop": m.sop().name(),
    });
    if m.sop().is_reset() {
        v["type"] = json!(m.sop().name());
        return v;
    }
    let h = m.header();
    let fields = json!({
        "type": type_name(m),
        "id": h.id,
        "revision": h.revision(),
        "role": role(m),
        "header": format!("{:04x}", m.header_word()),
        "objects": m.objects().iter().map(|&o| hex(o)).collect::<Vec<_>>(),
        "crc": hex(m.crc()),
        "crc_ok": m.crc_ok(),
        "eop": m.eop(),
        "truncated": m.truncated(),
        "aborted": m.aborted(),
        "bad_symbols": m.bad_symbols(),
        "preamble_bits": m.preamble_bits(),
        "text": payload.to_string(),
    });
    merge(&mut v, fields);
    match payload {
        Payload::Capabilities(pdos) => v["pdos"] = pdos.iter().map(pdo).collect(),
        Payload::Request { rdo: r, pdo: p } => {
            v["request"] = rdo(r);
            v["request"]["pdo"] = p.as_ref().map_or(Value::Null, pdo);
        }
        Payload::Vdm { header, vdos } => {
            v["vdm"] = vdm(header);
            v["vdm"]["vdos"] = vdos.iter().map(|&o| json!(hex(o))).collect();
        }
        Payload::None | Payload::Objects(_) => {}
    }
    v
}

fn merge(into: &mut Value, from: Value) {
    if let (Value::Object(a), Value::Object(b)) = (into, from) {
        a.extend(b);
    }
}

fn pdo(p: &Pdo) -> Value {
    json!({
        "supply": p.supply.name(),
        "mv_min": p.mv_min,
        "mv_max": p.mv_max,
        "ma_max": p.ma_max,
        "mw_max": p.max_mw(),
        "raw": hex(p.raw),
        "text": p.to_string(),
    })
}

fn rdo(r: &Rdo) -> Value {
    json!({
        "position": r.position,
        "op_ma": r.op_ma,
        "max_ma": r.max_ma,
        "op_mw": r.op_mw,
        "max_mw": r.max_mw,
        "out_mv": r.out_mv,
        "give_back": r.give_back,
        "capability_mismatch": r.capability_mismatch,
        "usb_comm": r.usb_comm,
        "no_suspend": r.no_suspend,
        "unchunked": r.unchunked,
        "epr_capable": r.epr_capable,
    })
}

fn vdm(h: &Vdm) -> Value {
    json!({
        "svid": format!("{:04x}", h.svid),
        "structured": h.structured,
        "command": h.structured.then(|| h.command_name()),
        "cmd_type": h.structured.then(|| h.cmd_type_name()),
        "position": h.position,
        "version": h.version,
    })
}

fn counters(k: &Counters) -> Value {
    json!({
        "edges": k.edges,
        "messages": k.messages,
        "crc_failures": k.crc_failures,
        "bad_symbols": k.bad_symbols,
        "bursts_without_sop": k.noise_bursts,
        "short_bursts": k.short_bursts,
        "bmc_errors": k.bmc_errors,
        "missing_eop": k.missing_eop,
        "truncated": k.truncated,
        "level_errors": k.level_errors,
        "glitches": k.glitches,
    })
}
