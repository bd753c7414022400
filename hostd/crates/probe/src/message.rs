//! Frame payloads ↔ protocol messages.

use crate::frame::{encode_frame, FrameDecoder, FrameStats};
use crate::pb;
use prost::Message;
use serde::Serialize;

/// Counters of the message layer on top of [`FrameStats`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MessageStats {
    /// Messages decoded and understood.
    pub messages: u64,
    /// Frames with a good CRC whose payload is not a `ProbeToHost`.
    pub undecodable: u64,
    /// Decodable messages with no known `msg` (a newer probe's addition).
    pub unknown: u64,
}

/// Decodes a byte stream from the probe into messages, counting every
/// rejected frame and every undecodable payload.
#[derive(Debug, Default)]
pub struct ProbeMessageDecoder {
    frames: FrameDecoder,
    stats: MessageStats,
}

impl ProbeMessageDecoder {
    /// A decoder with the default maximum frame size.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; calls `on_message` for each decoded message in order.
    pub fn push(&mut self, data: &[u8], mut on_message: impl FnMut(pb::probe_to_host::Msg)) {
        let stats = &mut self.stats;
        self.frames.push(data, |frame| {
            let Ok(payload) = frame else { return };
            match pb::ProbeToHost::decode(payload) {
                Ok(pb::ProbeToHost { msg: Some(msg) }) => {
                    stats.messages += 1;
                    on_message(msg);
                }
                Ok(pb::ProbeToHost { msg: None }) => stats.unknown += 1,
                Err(_) => stats.undecodable += 1,
            }
        });
    }

    /// Forgets a partial frame (after a reconnect).
    pub fn reset_partial(&mut self) {
        self.frames.reset_partial();
    }

    /// Frame-layer counters.
    pub fn frame_stats(&self) -> FrameStats {
        self.frames.stats()
    }

    /// Message-layer counters.
    pub fn message_stats(&self) -> MessageStats {
        self.stats
    }
}

/// Encodes a host → probe command as a complete frame.
pub fn encode_command(request_id: u32, cmd: pb::host_to_probe::Cmd) -> Vec<u8> {
    let msg = pb::HostToProbe {
        request_id,
        cmd: Some(cmd),
    };
    encode_frame(&msg.encode_to_vec())
}

/// Encodes a probe → host message as a complete frame (tests, benches, fuzz seeds).
pub fn encode_probe_message(msg: pb::probe_to_host::Msg) -> Vec<u8> {
    encode_frame(&pb::ProbeToHost { msg: Some(msg) }.encode_to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::encode_frame;

    #[test]
    fn decodes_messages_and_counts_undecodable_payloads() {
        let good = encode_probe_message(pb::probe_to_host::Msg::Ack(pb::Ack { request_id: 9 }));
        // Field 1 as a length-delimited value that runs past the end.
        let garbage = encode_frame(&[0x0a, 0x7f, 0x01]);
        let mut decoder = ProbeMessageDecoder::new();
        let mut seen = Vec::new();
        decoder.push(&[garbage, good].concat(), |m| seen.push(m));
        assert_eq!(
            seen,
            vec![pb::probe_to_host::Msg::Ack(pb::Ack { request_id: 9 })]
        );
        assert_eq!(decoder.message_stats().undecodable, 1);
        assert_eq!(decoder.message_stats().messages, 1);
    }

    #[test]
    fn command_frames_decode_back() {
        let frame = encode_command(
            3,
            pb::host_to_probe::Cmd::Sync(pb::SyncRequest {
                sync_id: 4,
                host_time_ns: 1_700_000_000_000_000_000,
            }),
        );
        let mut frames = FrameDecoder::default();
        let mut msgs = Vec::new();
        frames.push(&frame, |p| {
            msgs.push(pb::HostToProbe::decode(p.unwrap()).unwrap())
        });
        assert_eq!(msgs[0].request_id, 3);
        assert!(matches!(msgs[0].cmd, Some(pb::host_to_probe::Cmd::Sync(ref s)) if s.sync_id == 4));
    }
}
