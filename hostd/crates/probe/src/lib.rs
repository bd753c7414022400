//! hostd-probe: everything between the probe's USB serial port and aligned,
//! physical samples on the host.
//!
//! - [`frame`]: COBS + CRC-32C framing (streaming decoder that resynchronises
//!   on 0x00, encoder for host commands).
//! - [`pb`]: the protobuf messages generated from `firmware/proto`.
//! - [`message`]: frame payload ↔ message, with counters for bad messages.
//! - [`convert`]: raw INA228 register values → volts, amperes, watts, joules.
//! - [`packed`]: wire v2 sample packing (zig-zag varint deltas).
//! - [`port`]: the host port's budget (wire v3 `PortStatus`, CC sensing).
//! - [`sequence`]: sequence-number accounting (gaps, probe-reported drops).
//! - [`align`]: probe clock → host Unix time (offset + drift fit, uncertainty).
//! - [`stream`]: turns decoded messages into aligned physical samples.
//! - [`link`]: the serial link thread with reconnect, the simulator, discovery.

#![warn(missing_docs)]
// Protocol messages are `Copy` only while they have no string or repeated
// field; cloning keeps this crate compiling when fields are added.
#![allow(clippy::clone_on_copy)]

pub mod align;
pub mod convert;
pub mod frame;
pub mod link;
pub mod message;
pub mod packed;
pub mod port;
pub mod sequence;
pub mod stream;

/// Protocol messages generated from `firmware/proto/throttlescope.proto`
/// (package `throttlescope.v1`).
#[allow(missing_docs, clippy::all)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/throttlescope.v1.rs"));
}

pub use align::{ClockAligner, SyncExchange};
pub use convert::Calibration;
pub use frame::{encode_frame, FrameDecoder, FrameError, FrameStats};
