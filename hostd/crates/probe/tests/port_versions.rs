//! Wire v3 (the host port's budget) from both ends: a v2 host ignores a v3
//! probe's `PortStatus`, and this host reads a v2 probe as one without CC
//! sensing, using the shared vectors in `fixtures/protocol/`.

use hostd_probe::message::ProbeMessageDecoder;
use hostd_probe::pb;
use hostd_probe::port::PortSensing;
use hostd_probe::stream::{ProbeStream, StreamEvent, StreamItem};
use prost::Message;
use std::path::PathBuf;

fn vector(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/protocol")
        .join(format!("{name}.bin"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `ProbeToHost` as a wire-v2 host compiled it: the oneof without `port`.
#[derive(Clone, PartialEq, Message)]
struct V2ProbeToHost {
    #[prost(oneof = "V2Msg", tags = "1, 2, 3, 4, 5, 6")]
    msg: Option<V2Msg>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum V2Msg {
    #[prost(message, tag = "1")]
    Info(pb::DeviceInfo),
    #[prost(message, tag = "2")]
    Batch(pb::SampleBatch),
    #[prost(message, tag = "3")]
    Sync(pb::SyncReply),
    #[prost(message, tag = "4")]
    Status(pb::Status),
    #[prost(message, tag = "5")]
    Error(pb::Error),
    #[prost(message, tag = "6")]
    Ack(pb::Ack),
}

fn payload(frame: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    hostd_probe::frame::FrameDecoder::default().push(frame, |p| out = p.unwrap().to_vec());
    out
}

#[test]
fn a_v2_host_skips_a_port_status_and_keeps_decoding() {
    for name in [
        "port_v3_attach_3a0_flipped",
        "port_v3_requested_out_of_range_pd_contract",
    ] {
        let m = V2ProbeToHost::decode(&payload(&vector(name))[..]).unwrap();
        assert_eq!(m.msg, None, "{name}: a v2 host sees no message it knows");
    }
    // A v3 batch (with vbus_min) and DeviceInfo (with cc_sensing) still
    // decode on a v2 host; the new fields are skipped.
    let m = V2ProbeToHost::decode(&payload(&vector("batch_v3_vbus_min"))[..]).unwrap();
    assert!(matches!(m.msg, Some(V2Msg::Batch(b)) if b.count == 4));
    let m = V2ProbeToHost::decode(&payload(&vector("info_v3_cc_sensing"))[..]).unwrap();
    assert!(matches!(m.msg, Some(V2Msg::Info(i)) if i.protocol_version == 3));
}

#[test]
fn the_message_decoder_counts_a_message_it_does_not_know_and_goes_on() {
    // What the v2 decoder did with the v3 message is what this one does
    // with a message from a probe newer than itself: count it, go on.
    let unknown = hostd_probe::encode_frame(&[0xfa, 0x01, 0x00]); // field 31, empty
    let mut d = ProbeMessageDecoder::new();
    let mut got = Vec::new();
    d.push(
        &[unknown, vector("port_v3_attach_3a0_flipped")].concat(),
        |m| got.push(m),
    );
    assert_eq!(d.message_stats().unknown, 1);
    assert_eq!(got.len(), 1);
}

fn feed(names: &[&str]) -> (ProbeStream, Vec<StreamEvent>) {
    let mut stream = ProbeStream::new();
    let mut events = Vec::new();
    for name in names {
        stream.push(&vector(name), 1_800_000_000_000_000_000, &mut |item| {
            if let StreamItem::Event(e) = item {
                events.push(e);
            }
        });
    }
    (stream, events)
}

#[test]
fn a_v2_probe_reads_as_one_without_cc_sensing() {
    let (stream, _) = feed(&[]);
    assert_eq!(stream.port_sensing(), PortSensing::NotYet);
    let (stream, events) = feed(&["info_v2_running", "batch_v2_default"]);
    assert_eq!(stream.port_sensing(), PortSensing::Absent);
    assert!(stream.port_status().is_none());
    assert!(!events.iter().any(|e| matches!(e, StreamEvent::Port(_))));
    assert_eq!(stream.stats().protocol_version, Some(2));
}

#[test]
fn a_v3_probe_reports_its_port_on_change_and_on_request() {
    let (stream, events) = feed(&[
        "info_v3_cc_sensing",
        "port_v3_attach_3a0_flipped",
        "port_v3_requested_out_of_range_pd_contract",
    ]);
    assert_eq!(stream.port_sensing(), PortSensing::Present);
    let ports: Vec<&pb::PortStatus> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Port(p) => Some(p),
            _ => None,
        })
        .collect();
    assert_eq!(ports.len(), 2);
    let change = ports[0];
    assert_eq!(
        change.advertisement(),
        pb::CcAdvertisement::CcAdvertisement3a0
    );
    assert_eq!(change.active_cc(), pb::ActiveCc::Cc2);
    assert_eq!((change.cc1_mv, change.cc2_mv), (12, 1689));
    assert_eq!(change.vbus_level(), pb::VbusLevel::Safe5v);
    assert_eq!(change.vbus_min_mv, 4610);
    assert_eq!(change.windows, u32::MAX);
    assert!(!change.requested);
    let asked = stream.port_status().unwrap();
    assert!(asked.requested);
    assert_eq!(asked.advertisement(), pb::CcAdvertisement::OutOfRange);
    assert_eq!(asked.cc1_mv, 650);
    assert!(asked.pd_contract);
    assert_eq!(asked.vbus_level(), pb::VbusLevel::Above);
    assert_eq!(
        hostd_probe::port::advertised_current_a(change.advertisement(), true),
        Some(3.0)
    );
}

#[test]
fn a_v3_batch_carries_the_vbus_minimum_of_its_samples() {
    let m = pb::ProbeToHost::decode(&payload(&vector("batch_v3_vbus_min"))[..]).unwrap();
    let Some(pb::probe_to_host::Msg::Batch(b)) = m.msg else {
        panic!("not a batch")
    };
    assert_eq!(b.vbus_min, Some(23_040)); // 4.5 V
    let v2 = pb::ProbeToHost::decode(&payload(&vector("batch_v2_default"))[..]).unwrap();
    let Some(pb::probe_to_host::Msg::Batch(b)) = v2.msg else {
        panic!("not a batch")
    };
    assert_eq!(b.vbus_min, None);
}

/// `PortStatus` as a v3 host compiled it before the PD contract's terms (fields 1-16).
#[derive(Clone, PartialEq, Message)]
struct EarlyV3PortStatus {
    #[prost(uint64, tag = "1")]
    probe_time_us: u64,
    #[prost(int32, tag = "2")]
    advertisement: i32,
    #[prost(uint32, tag = "9")]
    vbus_mv: u32,
    #[prost(bool, tag = "11")]
    pd_contract: bool,
    #[prost(uint32, tag = "15")]
    changes: u32,
    #[prost(bool, tag = "16")]
    requested: bool,
}

/// `ProbeToHost` of that host: `port` without the contract.
#[derive(Clone, PartialEq, Message)]
struct EarlyV3ProbeToHost {
    #[prost(oneof = "EarlyV3Msg", tags = "1, 7")]
    msg: Option<EarlyV3Msg>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum EarlyV3Msg {
    #[prost(message, tag = "1")]
    Info(pb::DeviceInfo),
    #[prost(message, tag = "7")]
    Port(EarlyV3PortStatus),
}

#[test]
fn a_host_from_before_the_contract_reads_a_probe_that_sends_it() {
    // The new fields are skipped; what that host knew reads as before.
    let m = EarlyV3ProbeToHost::decode(&payload(&vector("port_v3_pd_contract_20v"))[..]).unwrap();
    let Some(EarlyV3Msg::Port(p)) = m.msg else {
        panic!("not a PortStatus")
    };
    assert!(p.pd_contract);
    assert_eq!((p.vbus_mv, p.changes), (20_010, 3));
}

#[test]
fn this_host_reads_a_probe_without_the_contract_as_terms_unknown() {
    // An earlier v3 probe: VBUS above vSafe5V, no `contract`, no `pd_decoding`.
    let (stream, _) = feed(&[
        "info_v3_cc_sensing",
        "port_v3_requested_out_of_range_pd_contract",
    ]);
    assert!(!stream.info().unwrap().pd_decoding);
    let st = stream.port_status().unwrap();
    assert!(st.contract.is_none());
    let b = hostd_probe::port::budget(Some(st), None);
    assert_eq!(
        (b.source, b.budget_w),
        (hostd_records::port_budget::BudgetSource::VbusLevel, None)
    );
    // A probe that decodes PD says so, and its contract is the budget.
    let (stream, _) = feed(&["info_v3_pd_decoding", "port_v3_pd_contract_20v"]);
    assert!(stream.info().unwrap().pd_decoding);
    let b = hostd_probe::port::budget(stream.port_status(), None);
    assert_eq!(b.budget_w, Some(60.0));
    assert_eq!((b.contract_v, b.contract_a), (Some(20.0), Some(3.0)));
    assert_eq!(b.contract_object, Some(3));
    assert_eq!(b.contract_agreed_us, Some(2_446_964));
    // A PPS contract with a Capability Mismatch: 9.02 V 2.1 A.
    let (stream, _) = feed(&["port_v3_pd_contract_pps_mismatch"]);
    let b = hostd_probe::port::budget(stream.port_status(), None);
    assert_eq!(b.contract_terms().as_deref(), Some("9.02 V 2.1 A, PPS"));
    assert_eq!(b.budget_w, Some(18.942));
}
