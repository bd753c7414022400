//! The C decoder's types and functions as `firmware/core/include/throttlescope/pd_decode.h`
//! declares them: `#[repr(C)]` mirrors (checked against the C compiler's sizes by the tests
//! below) and the functions. Nothing here is safe to use directly; `decoder` and `fields`
//! wrap it.
//!
//! A C enum (`ts_pd_supply`, `ts_pd_kind`) is a `u32` here: an `int`-sized value on every
//! target hostd builds for, and no Rust enum to hold a value the C code might add.

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `ts_pd_msg`: one decoded message, or a Hard/Cable Reset.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawMsg {
    pub t: u64,
    pub obj: [u32; 7],
    pub crc: u32,
    pub header: u16,
    pub preamble_bits: u16,
    pub sop: u8,
    pub ndo: u8,
    pub flags: u8,
    pub bad_symbols: u8,
}

/// `ts_pd_header`: the message header's fields.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RawHeader {
    pub kind: u8,
    pub ndo: u8,
    pub id: u8,
    pub spec_rev: u8,
    pub extended: bool,
    pub power_role: bool,
    pub data_role: bool,
}

/// `ts_pd_pdo`: a Power Data Object in mV, mA and mW.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RawPdo {
    pub kind: u32,
    pub mv_min: u32,
    pub mv_max: u32,
    pub ma_max: u32,
    pub mw_max: u32,
    pub raw: u32,
}

/// `ts_pd_rdo`: a Request Data Object read against the kind of PDO it asks for.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RawRdo {
    pub position: u8,
    pub give_back: bool,
    pub capability_mismatch: bool,
    pub usb_comm: bool,
    pub no_suspend: bool,
    pub unchunked: bool,
    pub epr_capable: bool,
    pub op_ma: u32,
    pub max_ma: u32,
    pub op_mw: u32,
    pub max_mw: u32,
    pub out_mv: u32,
}

/// `ts_pd_vdm`: a Vendor_Defined message's header (its first object).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RawVdm {
    pub svid: u16,
    pub structured: bool,
    pub command: u8,
    pub cmd_type: u8,
    pub position: u8,
    pub version: u8,
}

/// `ts_pd_contract`: the explicit power contract.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawContract {
    pub valid: bool,
    pub kind: u32,
    pub position: u8,
    pub capability_mismatch: bool,
    pub end: u8,
    pub mv: u32,
    pub mv_min: u32,
    pub mv_max: u32,
    pub ma: u32,
    pub ma_max: u32,
    pub mw: u32,
    pub pdo: u32,
    pub rdo: u32,
    pub t: u64,
    pub generation: u32,
}

/// `ts_pd_counters`: every error and drop.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawCounters {
    pub edges: u32,
    pub glitches: u32,
    pub level_errors: u32,
    pub bmc_errors: u32,
    pub messages: u32,
    pub crc_failures: u32,
    pub bad_symbols: u32,
    pub missing_eop: u32,
    pub truncated: u32,
    pub noise_bursts: u32,
    pub short_bursts: u32,
    pub queue_overflows: u32,
}

/// `ts_pd_on_msg`.
pub type OnMsg = unsafe extern "C" fn(ctx: *mut c_void, msg: *const RawMsg);

/// `ts_pd_config`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RawConfig {
    pub tick_hz: u32,
    pub zero_ns: u32,
    pub idle_ns: u32,
    pub glitch_ns: u32,
    pub on_msg: Option<OnMsg>,
    pub ctx: *mut c_void,
}

/// `ts_pd_decoder`, opaque: allocated with the size the C compiler gives
/// ([`ts_pd_rs_size`]`(SIZE_DECODER)`).
#[repr(C)]
pub struct RawDecoder {
    _opaque: [u8; 0],
}

/// `ts_pd_msg.flags`: whole, and the CRC matched.
pub const F_CRC_OK: u8 = 0x01;
/// `ts_pd_msg.flags`: EOP followed the CRC.
pub const F_EOP: u8 = 0x02;
/// `ts_pd_msg.flags`: the burst ended before the CRC's last symbol.
pub const F_TRUNCATED: u8 = 0x04;
/// `ts_pd_msg.flags`: an edge was missing, or a Hard Reset interrupted the message.
pub const F_ABORTED: u8 = 0x08;

/// What [`ts_pd_rs_size`] measures (`csrc/layout.c`).
pub const SIZE_DECODER: c_uint = 0;

#[cfg(not(no_pd_core))]
extern "C" {
    pub fn ts_pd_init(d: *mut RawDecoder, cfg: *const RawConfig) -> c_int;
    pub fn ts_pd_feed_edge(d: *mut RawDecoder, t: u64, level: u8);
    pub fn ts_pd_idle(d: *mut RawDecoder, now: u64);
    pub fn ts_pd_take(d: *mut RawDecoder, out: *mut RawMsg) -> bool;
    pub fn ts_pd_contract_get(d: *const RawDecoder, out: *mut RawContract);
    pub fn ts_pd_counters_get(d: *const RawDecoder) -> *const RawCounters;
    pub fn ts_pd_parse_header(header: u16) -> RawHeader;
    pub fn ts_pd_msg_kind(m: *const RawMsg) -> c_uint;
    pub fn ts_pd_kind_name(k: c_uint) -> *const c_char;
    pub fn ts_pd_parse_pdo(pdo: u32) -> RawPdo;
    pub fn ts_pd_parse_rdo(rdo: u32, kind: u32) -> RawRdo;
    pub fn ts_pd_parse_vdm(vdm_header: u32) -> RawVdm;
    /// `csrc/layout.c`: `sizeof` of the decoder (0) and of the types above (1..8).
    pub fn ts_pd_rs_size(what: c_uint) -> usize;
    /// `csrc/layout.c`: the decoder's alignment.
    pub fn ts_pd_rs_decoder_align() -> usize;
}

#[cfg(no_pd_core)]
pub use self::missing::*;

/// Built without the C decoder: the same functions, never called, since no decoder can
/// be made (`Decoder::new` says why) and every other call needs one of its messages.
#[cfg(no_pd_core)]
#[allow(clippy::missing_safety_doc)]
mod missing {
    use super::*;

    fn absent() -> ! {
        unreachable!("hostd-pd was built without the C decoder")
    }
    pub unsafe fn ts_pd_init(_: *mut RawDecoder, _: *const RawConfig) -> c_int {
        absent()
    }
    pub unsafe fn ts_pd_feed_edge(_: *mut RawDecoder, _: u64, _: u8) {
        absent()
    }
    pub unsafe fn ts_pd_idle(_: *mut RawDecoder, _: u64) {
        absent()
    }
    pub unsafe fn ts_pd_take(_: *mut RawDecoder, _: *mut RawMsg) -> bool {
        absent()
    }
    pub unsafe fn ts_pd_contract_get(_: *const RawDecoder, _: *mut RawContract) {
        absent()
    }
    pub unsafe fn ts_pd_counters_get(_: *const RawDecoder) -> *const RawCounters {
        absent()
    }
    pub unsafe fn ts_pd_parse_header(_: u16) -> RawHeader {
        absent()
    }
    pub unsafe fn ts_pd_msg_kind(_: *const RawMsg) -> c_uint {
        absent()
    }
    pub unsafe fn ts_pd_kind_name(_: c_uint) -> *const c_char {
        absent()
    }
    pub unsafe fn ts_pd_parse_pdo(_: u32) -> RawPdo {
        absent()
    }
    pub unsafe fn ts_pd_parse_rdo(_: u32, _: u32) -> RawRdo {
        absent()
    }
    pub unsafe fn ts_pd_parse_vdm(_: u32) -> RawVdm {
        absent()
    }
    pub unsafe fn ts_pd_rs_size(_: c_uint) -> usize {
        absent()
    }
    pub unsafe fn ts_pd_rs_decoder_align() -> usize {
        absent()
    }
}

#[cfg(all(test, not(no_pd_core)))]
mod tests {
    use super::*;
    use std::mem::size_of;

    /// Each mirror has the size the C compiler gives its type (a field left out or of the
    /// wrong width changes it), and the decoder fits the 8-byte aligned storage it gets.
    #[test]
    fn mirrors_have_the_c_sizes() {
        let c = |what| unsafe { ts_pd_rs_size(what) };
        assert_eq!(size_of::<RawMsg>(), c(1), "ts_pd_msg");
        assert_eq!(size_of::<RawHeader>(), c(2), "ts_pd_header");
        assert_eq!(size_of::<RawPdo>(), c(3), "ts_pd_pdo");
        assert_eq!(size_of::<RawRdo>(), c(4), "ts_pd_rdo");
        assert_eq!(size_of::<RawVdm>(), c(5), "ts_pd_vdm");
        assert_eq!(size_of::<RawContract>(), c(6), "ts_pd_contract");
        assert_eq!(size_of::<RawCounters>(), c(7), "ts_pd_counters");
        assert_eq!(size_of::<RawConfig>(), c(8), "ts_pd_config");
        assert!(c(SIZE_DECODER) > size_of::<RawMsg>() * 8);
        assert!(unsafe { ts_pd_rs_decoder_align() } <= 8);
    }
}
