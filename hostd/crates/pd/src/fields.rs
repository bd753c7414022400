//! The fields of a message as the C decoder reads them: header, PDO, RDO and VDM header
//! (`ts_pd_parse_*`), in Rust types. They are made from a [`Message`](crate::Message)
//! (or its objects), so only a built decoder's output reaches the C code.

use crate::ffi;

/// The message header's fields (USB PD 3.x, Table 6-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Message type, 5 bits (control, data or extended by `ndo` and `extended`).
    pub kind: u8,
    /// Number of data objects.
    pub ndo: u8,
    /// MessageID, 3 bits.
    pub id: u8,
    /// Specification revision: 0 is 1.0, 1 is 2.0, 2 is 3.x.
    pub spec_rev: u8,
    /// An extended message.
    pub extended: bool,
    /// SOP: sent by the source; SOP'/SOP'': sent by a cable plug.
    pub power_role: bool,
    /// SOP: sent by the DFP (reserved in SOP'/SOP'').
    pub data_role: bool,
}

impl Header {
    pub(crate) fn parse(word: u16) -> Header {
        // SAFETY: a pure function of its argument.
        let h = unsafe { ffi::ts_pd_parse_header(word) };
        Header {
            kind: h.kind,
            ndo: h.ndo,
            id: h.id,
            spec_rev: h.spec_rev,
            extended: h.extended,
            power_role: h.power_role,
            data_role: h.data_role,
        }
    }

    /// The revision's major number (1, 2 or 3; 4 for the reserved value).
    pub fn revision(&self) -> u8 {
        self.spec_rev + 1
    }
}

/// The power supply kind of a PDO, and of a contract made from one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Supply {
    /// Fixed supply.
    Fixed,
    /// Battery.
    Battery,
    /// Variable supply (non-battery).
    Variable,
    /// SPR Programmable Power Supply APDO.
    Pps,
    /// EPR Adjustable Voltage Supply APDO.
    EprAvs,
    /// SPR Adjustable Voltage Supply APDO (PD 3.2).
    SprAvs,
    /// A reserved APDO kind.
    Reserved,
}

impl Supply {
    pub(crate) fn from_c(kind: u32) -> Supply {
        match kind {
            0 => Supply::Fixed,
            1 => Supply::Battery,
            2 => Supply::Variable,
            3 => Supply::Pps,
            4 => Supply::EprAvs,
            5 => Supply::SprAvs,
            _ => Supply::Reserved,
        }
    }

    fn to_c(self) -> u32 {
        self as u32
    }

    /// Its name as printed: `Fixed`, `Battery`, `Variable`, `PPS`, `EPR_AVS`, `SPR_AVS`,
    /// `APDO?`.
    pub fn name(self) -> &'static str {
        match self {
            Supply::Fixed => "Fixed",
            Supply::Battery => "Battery",
            Supply::Variable => "Variable",
            Supply::Pps => "PPS",
            Supply::EprAvs => "EPR_AVS",
            Supply::SprAvs => "SPR_AVS",
            Supply::Reserved => "APDO?",
        }
    }
}

/// A Power Data Object in mV, mA and mW (0 where the kind has no such field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pdo {
    /// Its supply kind.
    pub supply: Supply,
    /// Lowest voltage (Fixed: its voltage).
    pub mv_min: u32,
    /// Highest voltage (Fixed: its voltage).
    pub mv_max: u32,
    /// Maximum current: Fixed, Variable, PPS; SPR AVS in its 9..15 V range.
    pub ma_max: u32,
    /// Maximum power: Battery; EPR AVS (its PDP).
    pub mw_max: u32,
    /// The object as sent.
    pub raw: u32,
}

impl Pdo {
    pub(crate) fn parse(raw: u32) -> Pdo {
        // SAFETY: a pure function of its argument.
        let p = unsafe { ffi::ts_pd_parse_pdo(raw) };
        Pdo {
            supply: Supply::from_c(p.kind),
            mv_min: p.mv_min,
            mv_max: p.mv_max,
            ma_max: p.ma_max,
            mw_max: p.mw_max,
            raw: p.raw,
        }
    }

    /// The power it offers at most, in mW: Battery and EPR AVS give it; the others are
    /// their highest voltage times their current.
    pub fn max_mw(&self) -> u64 {
        match self.supply {
            Supply::Battery | Supply::EprAvs => u64::from(self.mw_max),
            _ => u64::from(self.mv_max) * u64::from(self.ma_max) / 1000,
        }
    }
}

/// A Request Data Object, read against the kind of PDO it asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rdo {
    /// Object position of the PDO asked for, 1-based.
    pub position: u8,
    /// GiveBack flag.
    pub give_back: bool,
    /// Capability Mismatch flag.
    pub capability_mismatch: bool,
    /// USB Communications Capable flag.
    pub usb_comm: bool,
    /// No USB Suspend flag.
    pub no_suspend: bool,
    /// Unchunked Extended Messages Supported flag.
    pub unchunked: bool,
    /// EPR Capable flag.
    pub epr_capable: bool,
    /// Operating current (Fixed, Variable; PPS and AVS: the current asked for).
    pub op_ma: u32,
    /// Maximum operating current (Fixed, Variable).
    pub max_ma: u32,
    /// Operating power (Battery).
    pub op_mw: u32,
    /// Maximum operating power (Battery).
    pub max_mw: u32,
    /// Output voltage asked for (PPS, AVS).
    pub out_mv: u32,
}

impl Rdo {
    pub(crate) fn parse(raw: u32, supply: Supply) -> Rdo {
        // SAFETY: a pure function of its arguments.
        let r = unsafe { ffi::ts_pd_parse_rdo(raw, supply.to_c()) };
        Rdo {
            position: r.position,
            give_back: r.give_back,
            capability_mismatch: r.capability_mismatch,
            usb_comm: r.usb_comm,
            no_suspend: r.no_suspend,
            unchunked: r.unchunked,
            epr_capable: r.epr_capable,
            op_ma: r.op_ma,
            max_ma: r.max_ma,
            op_mw: r.op_mw,
            max_mw: r.max_mw,
            out_mv: r.out_mv,
        }
    }
}

/// A Vendor_Defined message's header (its first data object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vdm {
    /// Standard or Vendor ID: 0xFF00 PD SID, 0xFF01 DisplayPort, 0x8087 Intel.
    pub svid: u16,
    /// A structured VDM (the fields below are 0 otherwise).
    pub structured: bool,
    /// Command: 1 Discover Identity … 6 Attention; 16..31 SVID-specific.
    pub command: u8,
    /// 0 REQ, 1 ACK, 2 NAK, 3 BUSY.
    pub cmd_type: u8,
    /// Object position (mode index).
    pub position: u8,
    /// Structured VDM version (major).
    pub version: u8,
}

impl Vdm {
    pub(crate) fn parse(raw: u32) -> Vdm {
        // SAFETY: a pure function of its argument.
        let v = unsafe { ffi::ts_pd_parse_vdm(raw) };
        Vdm {
            svid: v.svid,
            structured: v.structured,
            command: v.command,
            cmd_type: v.cmd_type,
            position: v.position,
            version: v.version,
        }
    }

    /// The command's name: the PD ones, DisplayPort's two, else `SVID_cmd_N`.
    pub fn command_name(&self) -> String {
        let name = match (self.command, self.svid) {
            (1, _) => "Discover_Identity",
            (2, _) => "Discover_SVIDs",
            (3, _) => "Discover_Modes",
            (4, _) => "Enter_Mode",
            (5, _) => "Exit_Mode",
            (6, _) => "Attention",
            (16, 0xFF01) => "DP_Status",
            (17, 0xFF01) => "DP_Configure",
            (c, _) => return format!("SVID_cmd_{c}"),
        };
        name.to_string()
    }

    /// The command type's name: `REQ`, `ACK`, `NAK`, `BUSY`.
    pub fn cmd_type_name(&self) -> &'static str {
        ["REQ", "ACK", "NAK", "BUSY"][usize::from(self.cmd_type & 3)]
    }
}
