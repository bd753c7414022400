//! The safe wrapper over the C decoder: make one for a clock, feed it a CC line's edges in
//! order, take its messages, read its contract and counters.

use crate::fields::{Header, Supply};
use crate::{ffi, Error};
use std::collections::VecDeque;

/// How the decoder reads the line (`ts_pd_config`); a zero leaves the C default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// Rate of the edge timestamps (a capture's sample rate), at least 1 MHz.
    pub tick_hz: u32,
    /// An interval longer than this is a whole bit (default 2500 ns).
    pub zero_ns: u32,
    /// An interval longer than this ends a burst (default 5000 ns).
    pub idle_ns: u32,
    /// An edge at most this long after the previous one cancels it (0: off).
    pub glitch_ns: u32,
}

impl Config {
    /// The C defaults at `tick_hz`, no glitch filter.
    pub fn new(tick_hz: u32) -> Config {
        Config {
            tick_hz,
            ..Config::default()
        }
    }
}

/// The ordered set that starts a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sop {
    /// To or from the port partner.
    Sop,
    /// SOP': the cable's near plug.
    SopPrime,
    /// SOP'': the cable's far plug.
    SopDoublePrime,
    /// SOP'_Debug.
    SopPrimeDebug,
    /// SOP''_Debug.
    SopDoublePrimeDebug,
    /// Cable Reset (an ordered set alone).
    CableReset,
    /// Hard Reset (an ordered set alone; ends the contract).
    HardReset,
}

impl Sop {
    fn from_c(sop: u8) -> Sop {
        match sop {
            0 => Sop::Sop,
            1 => Sop::SopPrime,
            2 => Sop::SopDoublePrime,
            3 => Sop::SopPrimeDebug,
            4 => Sop::SopDoublePrimeDebug,
            5 => Sop::CableReset,
            _ => Sop::HardReset,
        }
    }

    /// As the specification writes it: `SOP`, `SOP'`, `SOP''`, `SOP'_Debug`,
    /// `SOP''_Debug`, `Cable_Reset`, `Hard_Reset`.
    pub fn name(self) -> &'static str {
        match self {
            Sop::Sop => "SOP",
            Sop::SopPrime => "SOP'",
            Sop::SopDoublePrime => "SOP''",
            Sop::SopPrimeDebug => "SOP'_Debug",
            Sop::SopDoublePrimeDebug => "SOP''_Debug",
            Sop::CableReset => "Cable_Reset",
            Sop::HardReset => "Hard_Reset",
        }
    }

    /// A reset: an ordered set with no header, objects or CRC.
    pub fn is_reset(self) -> bool {
        matches!(self, Sop::CableReset | Sop::HardReset)
    }
}

/// What a message is (`ts_pd_kind`): control `0x00 | type`, data `0x20 | type`, extended
/// `0x40 | type`; Cable Reset `0x60`, Hard Reset `0x61`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Kind(pub u8);

impl Kind {
    /// GoodCRC.
    pub const GOODCRC: Kind = Kind(0x01);
    /// Accept.
    pub const ACCEPT: Kind = Kind(0x03);
    /// PS_RDY.
    pub const PS_RDY: Kind = Kind(0x06);
    /// Source_Capabilities.
    pub const SOURCE_CAPABILITIES: Kind = Kind(0x21);
    /// Request.
    pub const REQUEST: Kind = Kind(0x22);
    /// Sink_Capabilities.
    pub const SINK_CAPABILITIES: Kind = Kind(0x24);
    /// EPR_Request (its second object repeats the PDO asked for).
    pub const EPR_REQUEST: Kind = Kind(0x29);
    /// Vendor_Defined.
    pub const VENDOR_DEFINED: Kind = Kind(0x2F);
    /// Hard Reset.
    pub const HARD_RESET: Kind = Kind(0x61);

    /// An extended message (its type in the low 5 bits).
    pub fn is_extended(self) -> bool {
        self.0 & 0x60 == 0x40
    }
}

/// One decoded message, or a Hard/Cable Reset, as the C decoder hands it on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    raw: ffi::RawMsg,
}

impl Message {
    /// The first edge of its burst (the start of the preamble), in ticks of the decoder's
    /// clock; a Hard Reset inside a burst: the edge that ends it.
    pub fn t(&self) -> u64 {
        self.raw.t
    }

    /// The ordered set that started it.
    pub fn sop(&self) -> Sop {
        Sop::from_c(self.raw.sop)
    }

    /// The header word as received (0 for a reset).
    pub fn header_word(&self) -> u16 {
        self.raw.header
    }

    /// The header's fields.
    pub fn header(&self) -> Header {
        Header::parse(self.raw.header)
    }

    /// The data objects received (the header's count, or fewer if truncated).
    pub fn objects(&self) -> &[u32] {
        let n = usize::from(self.raw.ndo).min(self.raw.obj.len());
        &self.raw.obj[..n]
    }

    /// The CRC-32 as received.
    pub fn crc(&self) -> u32 {
        self.raw.crc
    }

    /// Whole, and the CRC matched (always true for a reset).
    pub fn crc_ok(&self) -> bool {
        self.raw.flags & ffi::F_CRC_OK != 0
    }

    /// EOP followed the CRC.
    pub fn eop(&self) -> bool {
        self.raw.flags & ffi::F_EOP != 0
    }

    /// The burst ended before the CRC's last symbol.
    pub fn truncated(&self) -> bool {
        self.raw.flags & ffi::F_TRUNCATED != 0
    }

    /// An edge was missing, or a Hard Reset interrupted it.
    pub fn aborted(&self) -> bool {
        self.raw.flags & ffi::F_ABORTED != 0
    }

    /// 5-bit codes where data belongs that are no data symbol.
    pub fn bad_symbols(&self) -> u8 {
        self.raw.bad_symbols
    }

    /// Bits before the ordered set.
    pub fn preamble_bits(&self) -> u16 {
        self.raw.preamble_bits
    }

    /// What it is (`ts_pd_msg_kind`).
    pub fn kind(&self) -> Kind {
        // SAFETY: the message is a valid ts_pd_msg; the function only reads it.
        let k = unsafe { ffi::ts_pd_msg_kind(&self.raw) };
        Kind(k as u8)
    }

    /// Its kind's name as the firmware gives it (`ts_pd_kind_name`: `Source_Capabilities`,
    /// `GoodCRC`, …; `Extended` for any extended message, `?` for a reserved type).
    pub fn kind_name(&self) -> &'static str {
        // SAFETY: ts_pd_kind_name returns a pointer to a NUL-terminated string literal of
        // the C library, which lives as long as the program.
        let name = unsafe { std::ffi::CStr::from_ptr(ffi::ts_pd_kind_name(self.kind().0.into())) };
        name.to_str().unwrap_or("?")
    }
}

/// The explicit power contract in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contract {
    /// The supply kind of the PDO asked for.
    pub supply: Supply,
    /// Its object position, 1-based.
    pub position: u8,
    /// The sink said it wants more than this.
    pub capability_mismatch: bool,
    /// Fixed: its voltage; PPS/AVS: the voltage asked for; else 0.
    pub mv: u32,
    /// The PDO's lowest voltage.
    pub mv_min: u32,
    /// The PDO's highest voltage.
    pub mv_max: u32,
    /// Operating current (Battery: mW / mv_min).
    pub ma: u32,
    /// Maximum operating current the RDO asks for (PPS/AVS: = ma).
    pub ma_max: u32,
    /// The power it allows, mW.
    pub mw: u32,
    /// The PDO as sent.
    pub pdo: u32,
    /// The RDO as sent.
    pub rdo: u32,
    /// PS_RDY's burst start, in ticks.
    pub t: u64,
}

/// What ended the last contract (`ts_pd_contract_end`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContractEnd {
    /// A Hard Reset: the source went back to vSafe5V.
    HardReset,
    /// A Soft_Reset: the supply kept its output; no terms until renegotiated.
    SoftReset,
    /// An accepted PR_Swap: the new source offers anew.
    PowerRoleSwap,
}

impl ContractEnd {
    fn from_c(end: u8) -> Option<ContractEnd> {
        match end {
            1 => Some(ContractEnd::HardReset),
            2 => Some(ContractEnd::SoftReset),
            3 => Some(ContractEnd::PowerRoleSwap),
            _ => None,
        }
    }

    /// The message that ended it, as the spec names it.
    pub fn name(self) -> &'static str {
        match self {
            ContractEnd::HardReset => "Hard Reset",
            ContractEnd::SoftReset => "Soft_Reset",
            ContractEnd::PowerRoleSwap => "PR_Swap",
        }
    }
}

/// The contract as the decoder tracks it: the one in force, if any, and its changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContractState {
    /// The contract in force.
    pub current: Option<Contract>,
    /// While none is in force: what ended the last one (None: none was ever made).
    pub ended_by: Option<ContractEnd>,
    /// +1 on every change (made, replaced, ended): 0 means none was ever made.
    pub generation: u32,
    /// When it last changed, in ticks (a reset's time when one ended it).
    pub changed_at: u64,
}

/// Every error and drop of the decoder (`ts_pd_counters`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Edges fed.
    pub edges: u32,
    /// Edge pairs dropped by the glitch filter.
    pub glitches: u32,
    /// An edge to the level the line already had: one was missed.
    pub level_errors: u32,
    /// Inside a message: a short interval, then a long one (not BMC).
    pub bmc_errors: u32,
    /// Messages and reset ordered sets decoded.
    pub messages: u32,
    /// Whole messages whose CRC did not match.
    pub crc_failures: u32,
    /// Invalid 5-bit codes inside header, data or CRC.
    pub bad_symbols: u32,
    /// Whole messages not followed by EOP.
    pub missing_eop: u32,
    /// Bursts that ended inside a message.
    pub truncated: u32,
    /// Bursts of a preamble's length or more with no ordered set.
    pub noise_bursts: u32,
    /// Shorter bursts with no ordered set (the line's level changes).
    pub short_bursts: u32,
    /// Messages dropped because the C queue was full (the wrapper drains it after every
    /// call, so 0).
    pub queue_overflows: u32,
}

/// One C decoder (`ts_pd_decoder`) on one CC line.
pub struct Decoder {
    /// The C struct, in storage of the size the C compiler gives it, 8-byte aligned.
    state: Box<[u64]>,
    /// Messages taken from the C queue and not yet from this one.
    ready: VecDeque<Message>,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("ready", &self.ready.len())
            .field("counters", &self.counters())
            .finish()
    }
}

impl Decoder {
    /// A decoder for `config`: fails when the C decoder was not built for this target, or
    /// refuses the clock.
    pub fn new(config: Config) -> Result<Decoder, Error> {
        crate::decoder_built()?;
        // SAFETY: csrc/layout.c's functions take and touch nothing.
        let (size, align) = unsafe {
            (
                ffi::ts_pd_rs_size(ffi::SIZE_DECODER),
                ffi::ts_pd_rs_decoder_align(),
            )
        };
        if align > std::mem::align_of::<u64>() {
            return Err(Error::Alignment(align));
        }
        let mut decoder = Decoder {
            state: vec![0u64; size.div_ceil(8)].into_boxed_slice(),
            ready: VecDeque::new(),
        };
        let raw = ffi::RawConfig {
            tick_hz: config.tick_hz,
            zero_ns: config.zero_ns,
            idle_ns: config.idle_ns,
            glitch_ns: config.glitch_ns,
            on_msg: None, // to the queue, drained after every call
            ctx: std::ptr::null_mut(),
        };
        // SAFETY: the storage is as large and as aligned as ts_pd_decoder; the config is
        // read during the call only (no callback, so no pointer is kept).
        let rc = unsafe { ffi::ts_pd_init(decoder.raw_mut(), &raw) };
        if rc != 0 {
            return Err(Error::ClockTooSlow {
                tick_hz: config.tick_hz.into(),
            });
        }
        Ok(decoder)
    }

    fn raw_mut(&mut self) -> *mut ffi::RawDecoder {
        self.state.as_mut_ptr().cast()
    }

    fn raw(&self) -> *const ffi::RawDecoder {
        self.state.as_ptr().cast()
    }

    /// One transition of the line at `t` (ticks, not decreasing) to `level`.
    pub fn feed_edge(&mut self, t: u64, level: bool) {
        // SAFETY: the decoder was initialised by new(); the C code owns no pointer into it.
        unsafe { ffi::ts_pd_feed_edge(self.raw_mut(), t, u8::from(level)) };
        self.drain();
    }

    /// No edge until `now`: ends a burst idle long enough (hands on a message cut short).
    pub fn idle(&mut self, now: u64) {
        // SAFETY: as in feed_edge.
        unsafe { ffi::ts_pd_idle(self.raw_mut(), now) };
        self.drain();
    }

    /// The oldest message not yet taken.
    pub fn take(&mut self) -> Option<Message> {
        self.ready.pop_front()
    }

    /// Moves what the C queue holds (at most a few messages per call) into `ready`.
    fn drain(&mut self) {
        let mut raw = ffi::RawMsg::default();
        // SAFETY: `raw` is a valid ts_pd_msg to write to.
        while unsafe { ffi::ts_pd_take(self.raw_mut(), &mut raw) } {
            self.ready.push_back(Message { raw });
        }
    }

    /// The contract now.
    pub fn contract(&self) -> ContractState {
        let mut c = ffi::RawContract::default();
        // SAFETY: reads the decoder, writes `c`.
        unsafe { ffi::ts_pd_contract_get(self.raw(), &mut c) };
        let current = c.valid.then_some(Contract {
            supply: Supply::from_c(c.kind),
            position: c.position,
            capability_mismatch: c.capability_mismatch,
            mv: c.mv,
            mv_min: c.mv_min,
            mv_max: c.mv_max,
            ma: c.ma,
            ma_max: c.ma_max,
            mw: c.mw,
            pdo: c.pdo,
            rdo: c.rdo,
            t: c.t,
        });
        ContractState {
            current,
            ended_by: ContractEnd::from_c(c.end),
            generation: c.generation,
            changed_at: c.t,
        }
    }

    /// The counters so far.
    pub fn counters(&self) -> Counters {
        // SAFETY: the pointer is into the decoder, valid while `self` is borrowed; copied.
        let c = unsafe { *ffi::ts_pd_counters_get(self.raw()) };
        Counters {
            edges: c.edges,
            glitches: c.glitches,
            level_errors: c.level_errors,
            bmc_errors: c.bmc_errors,
            messages: c.messages,
            crc_failures: c.crc_failures,
            bad_symbols: c.bad_symbols,
            missing_eop: c.missing_eop,
            truncated: c.truncated,
            noise_bursts: c.noise_bursts,
            short_bursts: c.short_bursts,
            queue_overflows: c.queue_overflows,
        }
    }
}
