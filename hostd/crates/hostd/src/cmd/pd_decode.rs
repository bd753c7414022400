//! `hostd pd-decode FILE.sr [--channel NAME|N] [--json]`: every USB PD message on a CC
//! line of a sigrok session file, through the decoder the probe runs
//! (`firmware/core/src/pd_decode.c`, compiled into `hostd-pd`), with its time from the
//! capture's start; then the contract at the end and the decoder's counters.
//!
//! Without `--channel` every logic channel is decoded and the first with PD traffic (a
//! message with a good CRC) is printed; the others with traffic are named, so that a
//! capture of both CC pins says where else to look.

mod json;

use anyhow::Context;
use hostd_pd::capture::{self, CaptureDecode, ChannelDecode};
use hostd_pd::reading::milli;
use hostd_pd::{Config, Message, Payload, Reader, Session, Sop, Supply};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `hostd pd-decode`.
#[derive(clap::Args)]
pub struct PdDecodeArgs {
    /// A sigrok session file (.sr) of a CC line, sampled at 1 MHz or faster.
    pub file: PathBuf,
    /// The CC line: a channel's name as the session gives it (CC1) or its probe number,
    /// 1-based (2). Default: the first channel with PD traffic.
    #[arg(long, value_name = "NAME|N")]
    pub channel: Option<String>,
    /// One JSON document on stdout instead of lines: the capture, the channel, every
    /// message with its fields and objects read, the contract and the counters.
    #[arg(long)]
    pub json: bool,
    /// The decoder's glitch filter: a pulse this short (ns) is dropped before decoding
    /// (0: off, every edge as captured).
    #[arg(long, value_name = "NS", default_value_t = 0)]
    pub glitch_ns: u32,
}

/// The channel printed, and what else the capture holds.
pub(crate) struct Decoded {
    /// The capture (rate, samples, channels decoded).
    pub capture: CaptureDecode,
    /// Index of the printed channel in `capture.channels`.
    pub chosen: usize,
    /// Chosen for its traffic (no `--channel`).
    pub auto: bool,
}

impl Decoded {
    fn channel(&self) -> &ChannelDecode {
        &self.capture.channels[self.chosen]
    }

    /// The other decoded channels with PD traffic.
    fn others_with_traffic(&self) -> Vec<&ChannelDecode> {
        (self.capture.channels.iter().enumerate())
            .filter(|(i, c)| *i != self.chosen && c.has_traffic())
            .map(|(_, c)| c)
            .collect()
    }

    /// A time in ticks as µs from the capture's start.
    fn us(&self, t: u64) -> f64 {
        t as f64 * 1e6 / self.capture.samplerate as f64
    }
}

/// Runs `hostd pd-decode`.
pub fn execute(args: PdDecodeArgs) -> anyhow::Result<ExitCode> {
    hostd_pd::decoder_built()?;
    let file = &args.file;
    let mut session =
        Session::open(file).with_context(|| format!("cannot read {}", file.display()))?;
    let channels = match &args.channel {
        Some(spec) => vec![session.channel(spec)?.clone()],
        None => session.channels().to_vec(),
    };
    anyhow::ensure!(
        !channels.is_empty(),
        "{}: the session has no logic channel",
        file.display()
    );
    let config = Config {
        glitch_ns: args.glitch_ns,
        ..Config::default()
    };
    let capture = capture::decode(&mut session, &channels, config)
        .with_context(|| format!("cannot decode {}", file.display()))?;
    let chosen = if args.channel.is_some() {
        0
    } else {
        let Some(i) = capture.channels.iter().position(ChannelDecode::has_traffic) else {
            let names: Vec<String> = (capture.channels.iter())
                .map(|c| format!("{} (probe {})", c.channel.name, c.channel.probe))
                .collect();
            anyhow::bail!(
                "{}: no USB PD message with a good CRC on any channel ({}); \
                 --channel NAME shows one channel's counters",
                file.display(),
                names.join(", ")
            );
        };
        i
    };
    let decoded = Decoded {
        capture,
        chosen,
        auto: args.channel.is_none(),
    };
    if args.json {
        outln!("{:#}", json::document(file, &decoded));
    } else {
        print_text(file, &decoded);
    }
    Ok(ExitCode::SUCCESS)
}

/// The lines: the capture and channel, one per message, the contract, the counters.
fn print_text(file: &std::path::Path, d: &Decoded) {
    let c = d.channel();
    let cap = &d.capture;
    let length_us = u128::from(cap.samples) * 1_000_000 / u128::from(cap.samplerate);
    let mut head = format!(
        "{}: {} MHz, {} samples ({} ms); channel {} (probe {})",
        file.display(),
        milli(cap.samplerate / 1000),
        cap.samples,
        milli(length_us as u64),
        c.channel.name,
        c.channel.probe
    );
    if d.auto {
        head.push_str(", the first with PD traffic");
    }
    outln!("{head}");
    let others = d.others_with_traffic();
    if !others.is_empty() {
        let names: Vec<String> = others.iter().map(|o| o.channel.name.clone()).collect();
        outln!(
            "PD traffic also on {} (--channel {})",
            names.join(", "),
            names[0]
        );
    }
    let mut reader = Reader::new();
    for m in &c.messages {
        let payload = reader.read(m);
        outln!("{}", message_line(d, m, &payload));
    }
    outln!("{}", contract_line(d));
    outln!("{}", counters_line(c));
}

/// `   13156.00 µs  SOP    Source_Capabilities  id 0  SRC/DFP r3  [1] Fixed 5V 3A (15W), …`
fn message_line(d: &Decoded, m: &Message, payload: &Payload) -> String {
    let t = format!("{:>12.2} µs", d.us(m.t()));
    if m.sop().is_reset() {
        return format!("{t}  {}", m.sop().name());
    }
    let h = m.header();
    let mut line = format!(
        "{t}  {:<5}  {:<19}  id {}  {} r{}",
        m.sop().name(),
        type_name(m),
        h.id,
        role(m),
        h.revision()
    );
    for (on, flag) in [
        (!m.crc_ok() && !m.truncated(), "[bad CRC]"),
        (m.crc_ok() && !m.eop(), "[no EOP]"),
        (m.truncated(), "[truncated]"),
        (m.aborted(), "[aborted]"),
    ] {
        if on {
            line.push(' ');
            line.push_str(flag);
        }
    }
    if m.bad_symbols() > 0 {
        line.push_str(&format!(" [{} bad symbols]", m.bad_symbols()));
    }
    let text = payload.to_string();
    if !text.is_empty() {
        line.push_str("  ");
        line.push_str(&text);
    }
    line
}

/// The message type's name; an extended one with its type number.
pub(crate) fn type_name(m: &Message) -> String {
    let kind = m.kind();
    if kind.is_extended() {
        format!("Extended_{:#04x}", kind.0 & 0x1F)
    } else {
        m.kind_name().to_string()
    }
}

/// Who sent it: `SRC`/`SNK` and `DFP`/`UFP` on SOP, `cable`/`port` on SOP'/SOP''.
pub(crate) fn role(m: &Message) -> String {
    let h = m.header();
    match m.sop() {
        Sop::Sop => format!(
            "{}/{}",
            if h.power_role { "SRC" } else { "SNK" },
            if h.data_role { "DFP" } else { "UFP" }
        ),
        _ if h.power_role => "cable".into(),
        _ => "port".into(),
    }
}

/// `contract: 20V 2.25A (45W) from Fixed PDO 5, since 244163.75 µs`, or why there is none.
fn contract_line(d: &Decoded) -> String {
    let state = d.channel().contract;
    let Some(c) = state.current else {
        return if state.generation == 0 {
            "contract: none (no explicit contract made in the capture)".into()
        } else {
            format!(
                "contract: none (the last ended at {:.2} µs{})",
                d.us(state.changed_at),
                state
                    .ended_by
                    .map_or(String::new(), |e| format!(", by {}", e.name()))
            )
        };
    };
    let volts = match c.supply {
        Supply::Variable | Supply::Battery => {
            format!("{}-{}V", milli(c.mv_min.into()), milli(c.mv_max.into()))
        }
        _ => format!("{}V", milli(c.mv.into())),
    };
    let mut line = format!(
        "contract: {volts} {}A ({}W) from {} PDO {}, since {:.2} µs",
        milli(c.ma.into()),
        milli(c.mw.into()),
        c.supply.name(),
        c.position,
        d.us(c.t)
    );
    if c.capability_mismatch {
        line.push_str(", capability mismatch");
    }
    line
}

/// `counters: 8 messages (8 SOP), 0 CRC failures, 0 bad symbols, 0 bursts without SOP; …`
fn counters_line(c: &ChannelDecode) -> String {
    let mut per_sop: Vec<(Sop, usize)> = Vec::new();
    for m in &c.messages {
        match per_sop.iter_mut().find(|(s, _)| *s == m.sop()) {
            Some((_, n)) => *n += 1,
            None => per_sop.push((m.sop(), 1)),
        }
    }
    per_sop.sort();
    let per_sop: Vec<String> = (per_sop.iter())
        .map(|(s, n)| format!("{n} {}", s.name()))
        .collect();
    let k = &c.counters;
    let mut line = format!(
        "counters: {} messages ({}), {} CRC failures, {} bad symbols, {} bursts without SOP; \
         {} short bursts, {} BMC errors, {} missing EOP, {} truncated, {} level errors, {} edges",
        k.messages,
        if per_sop.is_empty() {
            "none".to_string()
        } else {
            per_sop.join(", ")
        },
        k.crc_failures,
        k.bad_symbols,
        k.noise_bursts,
        k.short_bursts,
        k.bmc_errors,
        k.missing_eop,
        k.truncated,
        k.level_errors,
        k.edges
    );
    if k.glitches > 0 {
        line.push_str(&format!(", {} glitches dropped", k.glitches));
    }
    line
}
