//! A whole session through the decoder: one C decoder per channel asked for, fed in one
//! pass over the samples.

use crate::session::{Channel, Session};
use crate::{Config, ContractState, Counters, Decoder, Error, Message};
use std::io::{Read, Seek};

/// One channel's decoding.
#[derive(Clone, Debug)]
pub struct ChannelDecode {
    /// The channel.
    pub channel: Channel,
    /// Its messages, in order (times in samples from the capture's start).
    pub messages: Vec<Message>,
    /// The contract at the end.
    pub contract: ContractState,
    /// The decoder's counters at the end.
    pub counters: Counters,
}

impl ChannelDecode {
    /// PD traffic: at least one message (or reset) with a good CRC.
    pub fn has_traffic(&self) -> bool {
        self.messages.iter().any(Message::crc_ok)
    }
}

/// A session decoded.
#[derive(Clone, Debug)]
pub struct CaptureDecode {
    /// The sample rate (the decoder's tick), Hz.
    pub samplerate: u64,
    /// Samples in the capture.
    pub samples: u64,
    /// The channels asked for, in the order asked.
    pub channels: Vec<ChannelDecode>,
}

/// Decodes `channels` of `session` with `config` (its `tick_hz` is the session's rate).
/// After the last sample each line is idle to the capture's end (at least 1 ms past its
/// last edge), so a message the capture cut short is handed on.
pub fn decode<R: Read + Seek>(
    session: &mut Session<R>,
    channels: &[Channel],
    config: Config,
) -> Result<CaptureDecode, Error> {
    let samplerate = session.samplerate();
    let tick_hz = u32::try_from(samplerate).map_err(|_| {
        Error::Metadata(format!(
            "samplerate {samplerate} Hz is above what the decoder counts in (u32)"
        ))
    })?;
    if tick_hz < 1_000_000 {
        // The decoder would refuse it too; say so before reading the samples.
        return Err(Error::ClockTooSlow {
            tick_hz: samplerate,
        });
    }
    let config = Config { tick_hz, ..config };
    let mut decoders = channels
        .iter()
        .map(|_| Decoder::new(config))
        .collect::<Result<Vec<_>, _>>()?;
    let mut messages: Vec<Vec<Message>> = vec![Vec::new(); channels.len()];
    let probes: Vec<u32> = channels.iter().map(|c| c.probe).collect();
    let scan = session.scan(&probes, |i, t, level| {
        decoders[i].feed_edge(t, level);
        while let Some(m) = decoders[i].take() {
            messages[i].push(m);
        }
    })?;
    let tail = u64::from(tick_hz / 1000);
    let mut out = Vec::with_capacity(channels.len());
    for (i, (mut d, mut msgs)) in decoders.into_iter().zip(messages).enumerate() {
        if let Some(last) = scan.last_edge[i] {
            d.idle(scan.samples.max(last + tail));
        }
        while let Some(m) = d.take() {
            msgs.push(m);
        }
        out.push(ChannelDecode {
            channel: channels[i].clone(),
            messages: msgs,
            contract: d.contract(),
            counters: d.counters(),
        });
    }
    Ok(CaptureDecode {
        samplerate,
        samples: scan.samples,
        channels: out,
    })
}
