//! What a message's data objects say: capabilities as PDOs, a Request against the PDO it
//! asks for, a VDM's command. A [`Reader`] follows the messages in order, since a Request
//! is read against the source's last capabilities (as the decoder's contract is).

use crate::fields::{Pdo, Rdo, Supply, Vdm};
use crate::{Kind, Message, Sop};
use std::fmt;

/// A message's data objects, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload {
    /// No data objects (control messages, resets).
    None,
    /// Source_ or Sink_Capabilities: one PDO per object.
    Capabilities(Vec<Pdo>),
    /// Request or EPR_Request: the RDO, read against the PDO it asks for when that is known
    /// (the source's last capabilities; an EPR_Request carries it), else as for a Fixed one.
    Request {
        /// The request.
        rdo: Rdo,
        /// The PDO it asks for.
        pdo: Option<Pdo>,
    },
    /// Vendor_Defined: its header and the objects after it.
    Vdm {
        /// Word 0.
        header: Vdm,
        /// The VDOs after it.
        vdos: Vec<u32>,
    },
    /// Any other data or extended message: the objects as received.
    Objects(Vec<u32>),
}

/// Reads the messages of one CC line in order.
#[derive(Clone, Debug, Default)]
pub struct Reader {
    source_caps: Vec<Pdo>,
}

impl Reader {
    /// A reader that has seen no capabilities yet.
    pub fn new() -> Reader {
        Reader::default()
    }

    /// What `m`'s objects say (and, for a source's Source_Capabilities with a good CRC,
    /// what the next Requests are read against; a Hard Reset forgets them).
    pub fn read(&mut self, m: &Message) -> Payload {
        if m.sop() == Sop::HardReset {
            self.source_caps.clear();
        }
        let objects = m.objects();
        if m.sop().is_reset() || objects.is_empty() {
            return Payload::None;
        }
        match m.kind() {
            Kind::SOURCE_CAPABILITIES | Kind::SINK_CAPABILITIES => {
                let pdos: Vec<Pdo> = objects.iter().map(|&o| Pdo::parse(o)).collect();
                let from_source = m.sop() == Sop::Sop && m.header().power_role;
                if m.kind() == Kind::SOURCE_CAPABILITIES && from_source && m.crc_ok() {
                    self.source_caps = pdos.clone();
                }
                Payload::Capabilities(pdos)
            }
            Kind::REQUEST | Kind::EPR_REQUEST => {
                let position = usize::from((objects[0] >> 28) as u8);
                let pdo = if m.kind() == Kind::EPR_REQUEST && objects.len() >= 2 {
                    Some(Pdo::parse(objects[1]))
                } else {
                    position
                        .checked_sub(1)
                        .and_then(|i| self.source_caps.get(i))
                        .copied()
                };
                let supply = pdo.map_or(Supply::Fixed, |p| p.supply);
                Payload::Request {
                    rdo: Rdo::parse(objects[0], supply),
                    pdo,
                }
            }
            Kind::VENDOR_DEFINED => Payload::Vdm {
                header: Vdm::parse(objects[0]),
                vdos: objects[1..].to_vec(),
            },
            _ => Payload::Objects(objects.to_vec()),
        }
    }
}

/// Thousandths as a decimal without trailing zeros: 14800 → `14.8`, 5000 → `5`.
pub fn milli(v: u64) -> String {
    let (whole, frac) = (v / 1000, v % 1000);
    if frac == 0 {
        return whole.to_string();
    }
    let frac = format!("{frac:03}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

impl fmt::Display for Pdo {
    /// `Fixed 20V 2.25A (45W)`, `PPS 3.3-16V 3A`, `Battery 5-20V 45W`, …
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (lo, hi) = (milli(self.mv_min.into()), milli(self.mv_max.into()));
        let a = milli(self.ma_max.into());
        let w = milli(self.mw_max.into());
        match self.supply {
            Supply::Fixed => write!(f, "Fixed {hi}V {a}A ({}W)", milli(self.max_mw())),
            Supply::Variable => write!(f, "Variable {lo}-{hi}V {a}A"),
            Supply::Battery => write!(f, "Battery {lo}-{hi}V {w}W"),
            Supply::Pps => write!(f, "PPS {lo}-{hi}V {a}A"),
            Supply::SprAvs => write!(f, "SPR_AVS {lo}-{hi}V {a}A"),
            Supply::EprAvs => write!(f, "EPR_AVS {lo}-{hi}V {w}W"),
            Supply::Reserved => write!(f, "APDO? {:08x}", self.raw),
        }
    }
}

impl fmt::Display for Payload {
    /// The objects read, on one line (empty for none).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Payload::None => Ok(()),
            Payload::Capabilities(pdos) => {
                for (i, p) in pdos.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}[{}] {p}", i + 1)?;
                }
                Ok(())
            }
            Payload::Request { rdo, pdo } => {
                write!(f, "PDO {} = ", rdo.position)?;
                match pdo {
                    Some(p) => write!(f, "{p}")?,
                    None => write!(f, "? (not in the capabilities seen; read as Fixed)")?,
                }
                match pdo.map_or(Supply::Fixed, |p| p.supply) {
                    Supply::Pps | Supply::SprAvs | Supply::EprAvs => write!(
                        f,
                        ": {}V {}A",
                        milli(rdo.out_mv.into()),
                        milli(rdo.op_ma.into())
                    )?,
                    Supply::Battery => write!(
                        f,
                        ": {}W operating, {}W max",
                        milli(rdo.op_mw.into()),
                        milli(rdo.max_mw.into())
                    )?,
                    _ => write!(
                        f,
                        ": {}A operating, {}A max",
                        milli(rdo.op_ma.into()),
                        milli(rdo.max_ma.into())
                    )?,
                }
                let flags = [
                    (rdo.give_back, "give_back"),
                    (rdo.capability_mismatch, "capability_mismatch"),
                    (rdo.usb_comm, "usb_comm"),
                    (rdo.no_suspend, "no_suspend"),
                    (rdo.unchunked, "unchunked"),
                    (rdo.epr_capable, "epr_capable"),
                ];
                for (_, name) in flags.iter().filter(|(on, _)| *on) {
                    write!(f, " [{name}]")?;
                }
                Ok(())
            }
            Payload::Vdm { header, vdos } => {
                if header.structured {
                    write!(
                        f,
                        "{} {} SVID {:04x}",
                        header.cmd_type_name(),
                        header.command_name(),
                        header.svid
                    )?;
                    if header.position != 0 {
                        write!(f, " pos {}", header.position)?;
                    }
                } else {
                    write!(f, "unstructured SVID {:04x}", header.svid)?;
                }
                for v in vdos {
                    write!(f, " {v:08x}")?;
                }
                Ok(())
            }
            Payload::Objects(objects) => {
                for (i, o) in objects.iter().enumerate() {
                    let sep = if i == 0 { "" } else { " " };
                    write!(f, "{sep}{o:08x}")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousandths() {
        assert_eq!(milli(5000), "5");
        assert_eq!(milli(14800), "14.8");
        assert_eq!(milli(2250), "2.25");
        assert_eq!(milli(3), "0.003");
        assert_eq!(milli(0), "0");
    }
}

#[cfg(all(test, not(no_pd_core)))]
mod c_tests {
    use super::*;

    /// The C parse of the Aukey's PDOs (fixtures/usb-pd/README.md) as printed.
    #[test]
    fn pdos_as_printed() {
        assert_eq!(Pdo::parse(0x0a01912c).to_string(), "Fixed 5V 3A (15W)");
        assert_eq!(Pdo::parse(0x000640e1).to_string(), "Fixed 20V 2.25A (45W)");
        assert_eq!(Pdo::parse(0xc1401e3c).to_string(), "PPS 3-16V 3A");
        let r = Rdo::parse(0x530384e1, Supply::Fixed);
        assert_eq!((r.position, r.op_ma, r.max_ma), (5, 2250, 2250));
        assert!(r.usb_comm && r.no_suspend && !r.give_back);
    }
}
