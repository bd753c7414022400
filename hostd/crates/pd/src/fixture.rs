//! The two formats of `fixtures/usb-pd/` (its README): a CC line's edges (`.edges`) and
//! sigrok's recorded decoding of it (`.sigrok.txt`), read for the tests that hold the
//! decoder, and `hostd pd-decode`, to sigrok's reading of real captures.

use crate::Sop;

/// A `.edges` file: one CC line of a capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeFile {
    /// The capture's sample rate: the edges' tick.
    pub clock_hz: u32,
    /// Samples in the capture.
    pub samples: u64,
    /// The line's level at sample 0.
    pub initial_level: bool,
    /// Every edge's sample, in order; the level toggles at each.
    pub edges: Vec<u64>,
}

impl EdgeFile {
    /// Parses the text of a `.edges` file.
    pub fn parse(text: &str) -> Result<EdgeFile, String> {
        let (mut clock_hz, mut samples, mut initial) = (None, None, None);
        let mut edges: Vec<u64> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            let mut words = line.split_whitespace();
            let Some(first) = words.next() else { continue };
            let bad = || format!("line {}: `{line}`", n + 1);
            let number = |w: Option<&str>| w.and_then(|w| w.parse::<u64>().ok()).ok_or_else(bad);
            match first {
                "clock_hz" => clock_hz = Some(number(words.next())?),
                "samples" => samples = Some(number(words.next())?),
                "initial_level" => initial = Some(number(words.next())? != 0),
                burst => {
                    let start: u64 = burst
                        .strip_prefix('@')
                        .and_then(|s| s.parse().ok())
                        .ok_or_else(bad)?;
                    if edges.last().is_some_and(|&l| start <= l) {
                        return Err(bad());
                    }
                    let mut t = start;
                    edges.push(t);
                    for w in words {
                        t += w.parse::<u64>().map_err(|_| bad())?;
                        edges.push(t);
                    }
                }
            }
        }
        let clock_hz = clock_hz.ok_or("no clock_hz")?;
        Ok(EdgeFile {
            clock_hz: u32::try_from(clock_hz).map_err(|_| "clock_hz too large")?,
            samples: samples.ok_or("no samples")?,
            initial_level: initial.ok_or("no initial_level")?,
            edges,
        })
    }

    /// Each edge with the level after it.
    pub fn levels(&self) -> impl Iterator<Item = (u64, bool)> + '_ {
        let first = !self.initial_level;
        self.edges
            .iter()
            .enumerate()
            .map(move |(i, &t)| (t, first ^ (i % 2 == 1)))
    }
}

/// One packet as sigrok decoded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SigrokPacket {
    /// The burst's first edge (the full-text line's first sample).
    pub start: u64,
    /// Its ordered set.
    pub sop: Sop,
    /// The header word (None for a reset).
    pub header: Option<u16>,
    /// The data objects.
    pub objects: Vec<u32>,
    /// The CRC as received.
    pub crc: Option<u32>,
    /// sigrok warned `Bad CRC`.
    pub bad_crc: bool,
    /// The message type as sigrok names it (`SOURCE CAP`, `GOOD CRC`, …; `HRST`, `CRST`).
    pub type_name: String,
    /// The MessageID sigrok printed (`SRC[3]`), None for a reset.
    pub id: Option<u8>,
    /// The full-text line after `(t ms): `.
    pub text: String,
}

/// A `.sigrok.txt` file: the packets, and the bursts in which sigrok found no ordered set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SigrokDecoding {
    /// The packets with an ordered set, in order.
    pub packets: Vec<SigrokPacket>,
    /// `No start of packet found`.
    pub no_sop: usize,
}

impl SigrokDecoding {
    /// Parses `sigrok-cli`'s annotation lines (`S0-S1 usb_power_delivery-1: TEXT`).
    pub fn parse(text: &str) -> Result<SigrokDecoding, String> {
        let mut out = SigrokDecoding {
            packets: Vec::new(),
            no_sop: 0,
        };
        let (mut sop, mut header, mut crc, mut bad_crc) = (None, None, None, false);
        let mut objects = Vec::new();
        for line in text.lines() {
            let bad = || format!("unexpected sigrok line `{line}`");
            let (range, a) = line.split_once(" usb_power_delivery-1: ").ok_or_else(bad)?;
            let start: u64 = range
                .split('-')
                .next()
                .and_then(|s| s.parse().ok())
                .ok_or_else(bad)?;
            let hex = |s: &str| u32::from_str_radix(s, 16).map_err(|_| bad());
            match a {
                "SOP" => sop = Some(Sop::Sop),
                "SOP'" => sop = Some(Sop::SopPrime),
                "SOP\"" => sop = Some(Sop::SopDoublePrime),
                "SOP' Debug" => sop = Some(Sop::SopPrimeDebug),
                "SOP\" Debug" => sop = Some(Sop::SopDoublePrimeDebug),
                "No start of packet found" => out.no_sop += 1,
                _ if a.starts_with("H:") => header = Some(hex(&a[2..])? as u16),
                _ if a.starts_with("CRC:") => crc = Some(hex(&a[4..])?),
                _ if a.starts_with("Bad CRC") => bad_crc = true,
                _ if a.starts_with('[') => {
                    let (_, word) = a.split_once(']').ok_or_else(bad)?;
                    objects.push(hex(word)?);
                }
                _ if a.starts_with('#') => {
                    let body = a.split_once("): ").ok_or_else(bad)?.1.to_string();
                    let sop = match body.as_str() {
                        "HRST" => Some(Sop::HardReset),
                        "CRST" => Some(Sop::CableReset),
                        _ => sop.take(),
                    };
                    if let Some(sop) = sop {
                        let (type_name, id) = type_and_id(&body);
                        out.packets.push(SigrokPacket {
                            start,
                            sop,
                            header,
                            objects: std::mem::take(&mut objects),
                            crc,
                            bad_crc,
                            type_name,
                            id,
                            text: body,
                        });
                    }
                    (header, crc, bad_crc) = (None, None, false);
                    objects.clear();
                }
                _ => {} // other warnings (No EOP, Truncated) and classes not recorded
            }
        }
        Ok(out)
    }
}

/// `(r2) SRC[3]: SOURCE CAP - …` → (`SOURCE CAP`, Some(3)); a reset's text is its type.
fn type_and_id(body: &str) -> (String, Option<u8>) {
    let Some((role, rest)) = body.split_once("]: ") else {
        return (body.to_string(), None);
    };
    let id = role.rsplit('[').next().and_then(|i| i.parse().ok());
    let type_name = rest.split(" - ").next().unwrap_or(rest).to_string();
    (type_name, id)
}

/// The firmware's name (`ts_pd_kind_name`) of a type sigrok names, for the types sigrok
/// 0.5.3 knows.
pub fn kind_name_of_sigrok(name: &str) -> Option<&'static str> {
    Some(match name {
        "GOOD CRC" => "GoodCRC",
        "GOTO MIN" => "GotoMin",
        "ACCEPT" => "Accept",
        "REJECT" => "Reject",
        "PING" => "Ping",
        "PS RDY" => "PS_RDY",
        "GET SOURCE CAP" => "Get_Source_Cap",
        "GET SINK CAP" => "Get_Sink_Cap",
        "DR SWAP" => "DR_Swap",
        "PR SWAP" => "PR_Swap",
        "VCONN SWAP" => "VCONN_Swap",
        "WAIT" => "Wait",
        "SOFT RESET" => "Soft_Reset",
        "SOURCE CAP" => "Source_Capabilities",
        "REQUEST" => "Request",
        "BIST" => "BIST",
        "SINK CAP" => "Sink_Capabilities",
        "VDM" => "Vendor_Defined",
        "HRST" => "Hard_Reset",
        "CRST" => "Cable_Reset",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_toggle_from_the_initial_level() {
        let f = EdgeFile::parse(
            "# c\nclock_hz 4000000\nsamples 100\ninitial_level 1\n@10 2 3\n@40 1 # end\n",
        )
        .unwrap();
        assert_eq!(f.edges, [10, 12, 15, 40, 41]);
        let levels: Vec<bool> = f.levels().map(|(_, l)| l).collect();
        assert_eq!(levels, [false, true, false, true, false]);
        assert!(EdgeFile::parse("clock_hz 1\nsamples 1\ninitial_level 0\n@5\n@5\n").is_err());
    }

    #[test]
    fn a_packet_and_junk() {
        let text = "\
10-20 usb_power_delivery-1: SOP
20-30 usb_power_delivery-1: H:1042
30-40 usb_power_delivery-1: [0]530384e1
40-50 usb_power_delivery-1: CRC:c2025bca
5-55 usb_power_delivery-1: #3    (16.303500ms): (r2) SNK[4]: REQUEST - [1] (PDO #5: Fixed 20V) 2.25A
60-70 usb_power_delivery-1: No start of packet found
60-80 usb_power_delivery-1: #4    (17.0ms): Junk???
";
        let d = SigrokDecoding::parse(text).unwrap();
        assert_eq!(d.no_sop, 1);
        assert_eq!(d.packets.len(), 1);
        let p = &d.packets[0];
        assert_eq!(
            (p.start, p.sop, p.header, p.id),
            (5, Sop::Sop, Some(0x1042), Some(4))
        );
        assert_eq!(
            (p.objects.as_slice(), p.crc),
            (&[0x530384e1][..], Some(0xc2025bca))
        );
        assert_eq!(kind_name_of_sigrok(&p.type_name), Some("Request"));
    }
}
