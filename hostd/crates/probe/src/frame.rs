//! Framing: `COBS(payload ‖ CRC-32C(payload) LE) ‖ 0x00`.
//!
//! [`FrameDecoder`] is a streaming decoder: bytes arrive in any chunking,
//! every 0x00 ends a frame, and whatever sits between two delimiters is
//! either a good payload or a counted rejection. It never panics and never
//! lets one bad frame swallow the next one.

use crc::{Crc, CRC_32_ISCSI};
use serde::Serialize;

/// CRC-32C (Castagnoli), the checksum every frame carries.
pub const CRC32C: Crc<u32> = Crc::<u32>::new(&CRC_32_ISCSI);

/// Largest payload (message bytes, without CRC) the decoder accepts: the
/// schema's largest `ProbeToHost` (nanopb's `ProbeToHost_size`, in
/// `fixtures/protocol/limits.json`; a test keeps the two equal).
pub const DEFAULT_MAX_PAYLOAD: usize = 4425;

/// Why a frame was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The bytes between two delimiters are not valid COBS.
    #[error("invalid COBS encoding")]
    Cobs,
    /// The decoded frame is shorter than its 4-byte CRC.
    #[error("frame shorter than its CRC")]
    TooShort,
    /// The CRC-32C over the payload does not match the trailer.
    #[error("CRC-32C mismatch")]
    Crc,
    /// More bytes than the largest allowed frame arrived before a delimiter.
    #[error("frame longer than the maximum")]
    Oversize,
}

/// Counters of the frame layer since the decoder was created.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FrameStats {
    /// Bytes fed into the decoder.
    pub bytes: u64,
    /// Frames with good COBS and CRC.
    pub frames_ok: u64,
    /// Frames rejected for invalid COBS.
    pub cobs_errors: u64,
    /// Frames rejected because they were shorter than the CRC.
    pub short_frames: u64,
    /// Frames rejected for a CRC mismatch.
    pub crc_errors: u64,
    /// Frames dropped for exceeding the maximum length.
    pub oversize_frames: u64,
}

impl FrameStats {
    /// All rejected frames together.
    pub fn rejected(&self) -> u64 {
        self.cobs_errors + self.short_frames + self.crc_errors + self.oversize_frames
    }
}

/// Streaming frame decoder; see the module documentation.
#[derive(Debug)]
pub struct FrameDecoder {
    encoded: Vec<u8>,
    decoded: Vec<u8>,
    max_encoded: usize,
    overflowed: bool,
    stats: FrameStats,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_PAYLOAD)
    }
}

impl FrameDecoder {
    /// A decoder accepting payloads up to `max_payload` bytes.
    pub fn new(max_payload: usize) -> Self {
        let max_frame = max_payload + 4;
        let max_encoded = max_frame + max_frame / 254 + 1;
        Self {
            encoded: Vec::with_capacity(max_encoded),
            decoded: vec![0; max_encoded],
            max_encoded,
            overflowed: false,
            stats: FrameStats::default(),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> FrameStats {
        self.stats
    }

    /// Forgets a partial frame (e.g. after the port was re-opened).
    pub fn reset_partial(&mut self) {
        self.encoded.clear();
        self.overflowed = false;
    }

    /// Feeds bytes; calls `on_frame` once per delimiter-terminated frame with
    /// the payload (CRC stripped) or the reason it was rejected. Empty frames
    /// (two delimiters in a row) are idle filler and are skipped silently.
    pub fn push(&mut self, mut data: &[u8], mut on_frame: impl FnMut(Result<&[u8], FrameError>)) {
        self.stats.bytes += data.len() as u64;
        while !data.is_empty() {
            match data.iter().position(|&b| b == 0) {
                None => {
                    self.append(data);
                    return;
                }
                Some(end) => {
                    self.append(&data[..end]);
                    data = &data[end + 1..];
                    self.finish_frame(&mut on_frame);
                }
            }
        }
    }

    fn append(&mut self, bytes: &[u8]) {
        if self.overflowed {
            return;
        }
        if self.encoded.len() + bytes.len() > self.max_encoded {
            self.overflowed = true;
            self.encoded.clear();
        } else {
            self.encoded.extend_from_slice(bytes);
        }
    }

    fn finish_frame(&mut self, on_frame: &mut impl FnMut(Result<&[u8], FrameError>)) {
        if self.overflowed {
            self.overflowed = false;
            self.encoded.clear();
            self.stats.oversize_frames += 1;
            on_frame(Err(FrameError::Oversize));
            return;
        }
        if self.encoded.is_empty() {
            return;
        }
        let result = decode_body(&self.encoded, &mut self.decoded);
        self.encoded.clear();
        match result {
            Ok(len) => {
                self.stats.frames_ok += 1;
                on_frame(Ok(&self.decoded[..len]));
            }
            Err(err) => {
                match err {
                    FrameError::Cobs => self.stats.cobs_errors += 1,
                    FrameError::TooShort => self.stats.short_frames += 1,
                    FrameError::Crc => self.stats.crc_errors += 1,
                    FrameError::Oversize => self.stats.oversize_frames += 1,
                }
                on_frame(Err(err));
            }
        }
    }
}

/// Decodes one frame body (COBS bytes without the delimiter) into `out`;
/// returns the payload length (CRC checked and stripped).
fn decode_body(encoded: &[u8], out: &mut [u8]) -> Result<usize, FrameError> {
    let len = cobs_decode(encoded, out)?;
    if len < 4 {
        return Err(FrameError::TooShort);
    }
    let (payload, trailer) = out[..len].split_at(len - 4);
    let expected = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    if CRC32C.checksum(payload) != expected {
        return Err(FrameError::Crc);
    }
    Ok(len - 4)
}

/// Strict COBS decoding of a body that contains no zero bytes. A code byte
/// that points past the end of the body is an error (the `cobs` crate's
/// in-place decoder is lenient there).
fn cobs_decode(encoded: &[u8], out: &mut [u8]) -> Result<usize, FrameError> {
    let mut src = 0;
    let mut dst = 0;
    while src < encoded.len() {
        let code = encoded[src] as usize;
        if code == 0 || src + code > encoded.len() {
            return Err(FrameError::Cobs);
        }
        let run = &encoded[src + 1..src + code];
        out.get_mut(dst..dst + run.len())
            .ok_or(FrameError::Oversize)?
            .copy_from_slice(run);
        dst += run.len();
        src += code;
        if code != 0xFF && src < encoded.len() {
            *out.get_mut(dst).ok_or(FrameError::Oversize)? = 0;
            dst += 1;
        }
    }
    Ok(dst)
}

/// Encodes one payload as a complete frame, delimiter included.
pub fn encode_frame(payload: &[u8]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(payload.len() + 4);
    raw.extend_from_slice(payload);
    raw.extend_from_slice(&CRC32C.checksum(payload).to_le_bytes());
    let mut frame = cobs::encode_vec(&raw);
    frame.push(0);
    frame
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(bytes: &[u8]) -> (Vec<Vec<u8>>, Vec<FrameError>, FrameStats) {
        let mut decoder = FrameDecoder::default();
        let (mut good, mut bad) = (Vec::new(), Vec::new());
        decoder.push(bytes, |frame| match frame {
            Ok(payload) => good.push(payload.to_vec()),
            Err(err) => bad.push(err),
        });
        (good, bad, decoder.stats())
    }

    #[test]
    fn round_trips_payloads_with_zeros_and_long_runs() {
        let payloads: Vec<Vec<u8>> = vec![
            vec![],
            vec![0],
            vec![0, 0, 0],
            (0..=255u8).collect(),
            vec![0x11; 600],
            (0..1000u32).map(|i| (i % 7) as u8).collect(),
        ];
        let stream: Vec<u8> = payloads.iter().flat_map(|p| encode_frame(p)).collect();
        let (good, bad, stats) = decode_all(&stream);
        assert_eq!(good, payloads);
        assert!(bad.is_empty());
        assert_eq!(stats.frames_ok, payloads.len() as u64);
    }

    #[test]
    fn any_chunking_gives_the_same_frames() {
        let payloads: Vec<Vec<u8>> = (0..20u8).map(|i| vec![i; i as usize * 37]).collect();
        let stream: Vec<u8> = payloads.iter().flat_map(|p| encode_frame(p)).collect();
        for chunk in [1, 2, 3, 7, 64, 1000] {
            let mut decoder = FrameDecoder::default();
            let mut good = Vec::new();
            for piece in stream.chunks(chunk) {
                decoder.push(piece, |f| good.push(f.unwrap().to_vec()));
            }
            assert_eq!(good, payloads, "chunk size {chunk}");
        }
    }

    #[test]
    fn flipped_bit_is_a_crc_or_cobs_error_and_next_frame_survives() {
        let mut first = encode_frame(b"hello probe");
        first[3] ^= 0x04;
        let second = encode_frame(b"next");
        let stream = [first, second].concat();
        let (good, bad, stats) = decode_all(&stream);
        assert_eq!(good, vec![b"next".to_vec()]);
        assert_eq!(bad.len(), 1);
        assert_eq!(stats.rejected(), 1);
    }

    #[test]
    fn oversize_frame_is_dropped_and_counted() {
        let mut decoder = FrameDecoder::new(16);
        let mut results = Vec::new();
        let big = encode_frame(&[7u8; 100]);
        let small = encode_frame(&[1, 2, 3]);
        decoder.push(&[big, small].concat(), |f| {
            results.push(f.map(|p| p.to_vec()))
        });
        assert_eq!(results, vec![Err(FrameError::Oversize), Ok(vec![1, 2, 3])]);
        assert_eq!(decoder.stats().oversize_frames, 1);
    }

    #[test]
    fn short_frame_and_code_past_end_are_rejected() {
        // COBS of [1, 2] is [3, 1, 2]: valid COBS, but shorter than a CRC.
        let (_, bad, _) = decode_all(&[3, 1, 2, 0]);
        assert_eq!(bad, vec![FrameError::TooShort]);
        // A code byte that claims 9 bytes where 2 follow.
        let (_, bad, _) = decode_all(&[9, 1, 2, 0]);
        assert_eq!(bad, vec![FrameError::Cobs]);
    }

    #[test]
    fn leading_delimiters_are_idle_filler() {
        let stream = [vec![0, 0, 0], encode_frame(b"x")].concat();
        let (good, bad, _) = decode_all(&stream);
        assert_eq!(good, vec![b"x".to_vec()]);
        assert!(bad.is_empty());
    }
}
