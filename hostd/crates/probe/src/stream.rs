//! The host side of one probe stream: bytes in, aligned physical samples
//! and link events out. Transport-free, so it is what the link thread, the
//! tests, the bench and the fuzz target all drive.

use crate::align::{AlignmentEstimate, ClockAligner, SyncExchange};
use crate::convert::{charge_delta, charge_from_raw, dietemp_from_raw, energy_delta, Calibration};
use crate::frame::FrameStats;
use crate::message::{MessageStats, ProbeMessageDecoder};
use crate::packed::{self, Unpacked, CH_CURRENT, CH_POWER, CH_VBUS, CH_VSHUNT};
use crate::pb;
use crate::pb::probe_to_host::Msg;
use crate::port::PortSensing;
use crate::sequence::{Continuity, SequenceStats, SequenceTracker};
use hostd_records::probe::ProbeSample;
use serde::Serialize;
use std::collections::VecDeque;

/// Batches held while the probe's calibration or the first clock fit is
/// still missing; older ones are dropped (and counted) beyond this.
const MAX_PENDING_BATCHES: usize = 4096;
/// Samples are held at the start until the clock fit is this good…
pub const HOLD_UNTIL_UNCERTAINTY_NS: f64 = 250_000.0;
/// …or for at most this long (host time).
pub const MAX_HOLD_NS: i64 = 3_000_000_000;

/// INA228 register addresses of the v2 slow readings.
const REG_DIETEMP: u32 = 0x06;
const REG_ENERGY: u32 = 0x09;
const REG_CHARGE: u32 = 0x0A;
/// Protocol versions this host decodes.
pub const PROTOCOL_VERSIONS: [u32; 3] = [1, 2, 3];

/// A chip reset the probe re-initialised (a new accumulator epoch): a
/// reset, not a 40-bit wrap. ENERGY/CHARGE restarted from 0; the totals
/// carry what was accumulated before.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProbeReset {
    /// The new accumulator epoch.
    pub epoch: u32,
    /// Epochs passed since the last batch (more than 1 if resets hid in a gap).
    pub resets: u32,
    /// First sequence number of the new epoch.
    pub first_seq: u64,
    /// Probe time of that sample (µs).
    pub probe_time_us: u64,
    /// Energy accumulated before the reset and carried forward (J).
    pub energy_carried_j: f64,
    /// Probe time from the last ENERGY reading of the old epoch to the first
    /// sample of the new one (µs): energy in it is not in the total.
    pub unmeasured_us: Option<u64>,
}

/// Something the stream reports besides samples.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// The probe described itself.
    Info(pb::DeviceInfo),
    /// Probe counters.
    Status(pb::Status),
    /// The probe reported an error.
    ProbeError(pb::Error),
    /// A command was acknowledged.
    Ack(u32),
    /// Samples are missing before `next_seq`.
    Gap {
        /// First sequence number after the gap.
        next_seq: u64,
        /// Samples missing.
        missing: u64,
        /// Of them, reported dropped by the probe.
        probe_reported: u64,
    },
    /// The probe restarted its sequence numbering.
    Restart {
        /// New first sequence number.
        first_seq: u64,
    },
    /// A sync exchange updated the clock fit.
    Aligned(AlignmentEstimate),
    /// The INA228 was reset and re-initialised (new accumulator epoch).
    ChipReset(ProbeReset),
    /// The host port's status (wire v3): on a change, or answering a request.
    Port(pb::PortStatus),
}

/// One output item of [`ProbeStream::push`].
#[derive(Debug, Clone, PartialEq)]
pub enum StreamItem {
    /// An aligned sample.
    Sample(ProbeSample),
    /// An event.
    Event(StreamEvent),
}

/// All counters of one stream.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize)]
pub struct StreamStats {
    /// Frame layer (CRC and COBS failures, oversize frames).
    pub frames: FrameStats,
    /// Message layer (undecodable payloads).
    pub messages: MessageStats,
    /// Sequence accounting (gaps, probe-reported drops).
    pub sequence: SequenceStats,
    /// Batches whose channel lengths disagreed (bad channels ignored).
    pub malformed_batches: u64,
    /// Samples dropped while waiting for calibration/alignment (held too long).
    pub unaligned_dropped: u64,
    /// Sync replies that could not be used.
    pub sync_rejected: u64,
    /// Latest clock fit.
    pub alignment: Option<AlignmentEstimate>,
    /// Largest alignment uncertainty of the clock fits samples were mapped with (ns of the
    /// host's own clock: the link's quality; on the record clock of a run played N× faster
    /// a sample's time is N× as uncertain).
    pub alignment_uncertainty_max_ns: Option<f64>,
    /// OR of the DIAG_ALRT flags the probe sent with its batches (bit 0 set:
    /// MEMSTAT error; 9 MATHOF, 10 CHARGEOF, 11 ENERGYOF, …).
    pub diag_flags: u32,
    /// Batches that carried any DIAG flag.
    pub diag_batches: u64,
    /// Chip resets (accumulator epochs) seen.
    pub chip_resets: u64,
    /// Samples delivered per second of probe time since the last restart.
    pub delivered_rate_hz: Option<f64>,
    /// Protocol version the probe announced.
    pub protocol_version: Option<u32>,
}

/// Accumulator unwrapping state.
#[derive(Debug, Default, Clone, Copy)]
struct Accumulated {
    last_energy_raw: Option<u64>,
    last_charge_raw: Option<i64>,
    energy_counts: u64,
    charge_counts: i64,
    has_energy: bool,
    has_charge: bool,
    /// Probe time of the latest ENERGY reading.
    energy_at_us: Option<u64>,
}

/// Delivered-rate bookkeeping.
#[derive(Debug, Default, Clone, Copy)]
struct Rate {
    first_us: Option<u64>,
    last_us: u64,
    count: u64,
}

/// Bytes → aligned samples; see the module documentation.
#[derive(Debug, Default)]
pub struct ProbeStream {
    decoder: ProbeMessageDecoder,
    aligner: ClockAligner,
    sequence: SequenceTracker,
    calibration: Option<Calibration>,
    info: Option<pb::DeviceInfo>,
    status: Option<pb::Status>,
    port: Option<pb::PortStatus>,
    pending: VecDeque<pb::SampleBatch>,
    accumulated: Accumulated,
    enclosure_temp_c: Option<f64>,
    malformed_batches: u64,
    unaligned_dropped: u64,
    uncertainty_max_ns: Option<f64>,
    released: bool,
    pending_since: Option<i64>,
    epoch: Option<u32>,
    resets: Vec<ProbeReset>,
    unpacked: Unpacked,
    die_temp_c: Option<f64>,
    diag_flags: u32,
    diag_batches: u64,
    rate: Rate,
}

impl ProbeStream {
    /// A fresh stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes read at host Unix time `recv_ns` (used to stamp sync
    /// replies) and emits samples and events in order.
    pub fn push(&mut self, data: &[u8], recv_ns: i64, out: &mut impl FnMut(StreamItem)) {
        let mut messages = Vec::new();
        self.decoder.push(data, |m| messages.push(m));
        for msg in messages {
            self.handle(msg, recv_ns, out);
        }
    }

    /// Forgets a partial frame (call after re-opening the port).
    pub fn reset_partial(&mut self) {
        self.decoder.reset_partial();
    }

    /// The probe's device info, once received.
    pub fn info(&self) -> Option<&pb::DeviceInfo> {
        self.info.as_ref()
    }

    /// The latest probe status, once received.
    pub fn status(&self) -> Option<&pb::Status> {
        self.status.as_ref()
    }

    /// The latest host port status, once received (wire v3 probes).
    pub fn port_status(&self) -> Option<&pb::PortStatus> {
        self.port.as_ref()
    }

    /// Whether this probe can tell the host port's budget.
    pub fn port_sensing(&self) -> PortSensing {
        PortSensing::from_info(self.info.as_ref())
    }

    /// The next sequence number expected.
    pub fn next_seq(&self) -> Option<u64> {
        self.sequence.next_expected()
    }

    /// The clock aligner (read-only).
    pub fn aligner(&self) -> &ClockAligner {
        &self.aligner
    }

    /// Chip resets seen so far.
    pub fn resets(&self) -> &[ProbeReset] {
        &self.resets
    }

    /// Counters so far.
    pub fn stats(&self) -> StreamStats {
        let r = self.rate;
        StreamStats {
            diag_flags: self.diag_flags,
            diag_batches: self.diag_batches,
            chip_resets: self.resets.iter().map(|r| u64::from(r.resets)).sum(),
            delivered_rate_hz: r.first_us.and_then(|first| {
                (r.count > 1 && r.last_us > first)
                    .then(|| (r.count - 1) as f64 * 1e6 / (r.last_us - first) as f64)
            }),
            protocol_version: self.info.as_ref().map(|i| i.protocol_version),
            frames: self.decoder.frame_stats(),
            messages: self.decoder.message_stats(),
            sequence: self.sequence.stats(),
            malformed_batches: self.malformed_batches,
            unaligned_dropped: self.unaligned_dropped,
            sync_rejected: self.aligner.rejected(),
            alignment: self.aligner.estimate(),
            alignment_uncertainty_max_ns: self.uncertainty_max_ns,
        }
    }

    fn handle(&mut self, msg: Msg, recv_ns: i64, out: &mut impl FnMut(StreamItem)) {
        match msg {
            Msg::Info(info) => {
                if !PROTOCOL_VERSIONS.contains(&info.protocol_version) {
                    tracing::warn!(
                        "probe speaks protocol version {}; this hostd decodes versions {:?} (fields it does not know are ignored)",
                        info.protocol_version,
                        PROTOCOL_VERSIONS
                    );
                }
                self.calibration = Calibration::from_info(&info).or(self.calibration);
                self.info = Some(info.clone());
                out(StreamItem::Event(StreamEvent::Info(info)));
                self.drain_pending(recv_ns, out);
            }
            Msg::Batch(batch) => {
                if self.released && self.ready(recv_ns) {
                    self.emit_batch(&batch, out);
                } else {
                    if self.pending.len() == MAX_PENDING_BATCHES {
                        if let Some(old) = self.pending.pop_front() {
                            self.unaligned_dropped += batch_len(&old) as u64;
                        }
                    }
                    self.pending_since.get_or_insert(recv_ns);
                    self.pending.push_back(batch);
                    self.drain_pending(recv_ns, out);
                }
            }
            Msg::Sync(reply) => {
                let exchange = SyncExchange {
                    host_send_ns: reply.host_time_ns as i64,
                    probe_rx_us: reply.probe_rx_us,
                    probe_tx_us: reply.probe_tx_us,
                    host_recv_ns: recv_ns,
                };
                if self.aligner.add(exchange) {
                    if let Some(est) = self.aligner.estimate() {
                        out(StreamItem::Event(StreamEvent::Aligned(est)));
                    }
                    self.drain_pending(recv_ns, out);
                }
            }
            Msg::Status(status) => {
                self.status = Some(status.clone());
                out(StreamItem::Event(StreamEvent::Status(status)));
            }
            Msg::Port(port) => {
                self.port = Some(port.clone());
                out(StreamItem::Event(StreamEvent::Port(port)));
            }
            Msg::Error(err) => out(StreamItem::Event(StreamEvent::ProbeError(err))),
            Msg::Ack(ack) => out(StreamItem::Event(StreamEvent::Ack(ack.request_id))),
        }
    }

    /// Samples flow once the probe's calibration is known and the clock fit
    /// is good (uncertainty ≤ [`HOLD_UNTIL_UNCERTAINTY_NS`]) — or has been
    /// waited for [`MAX_HOLD_NS`]. After that they always flow.
    fn ready(&self, now_ns: i64) -> bool {
        let Some(est) = self.aligner.estimate() else {
            return false;
        };
        if self.calibration.is_none() {
            return false;
        }
        self.released
            || est.uncertainty_ns <= HOLD_UNTIL_UNCERTAINTY_NS
            || self
                .pending_since
                .is_some_and(|t| now_ns - t >= MAX_HOLD_NS)
    }

    fn drain_pending(&mut self, now_ns: i64, out: &mut impl FnMut(StreamItem)) {
        if !self.ready(now_ns) {
            return;
        }
        self.release(out);
    }

    fn release(&mut self, out: &mut impl FnMut(StreamItem)) {
        self.released = true;
        self.pending_since = None;
        while let Some(batch) = self.pending.pop_front() {
            self.emit_batch(&batch, out);
        }
    }

    /// Emits held samples with whatever clock fit there is (end of stream);
    /// without any fit they stay unaligned and are counted as dropped.
    pub fn flush(&mut self, out: &mut impl FnMut(StreamItem)) {
        if self.calibration.is_some() && self.aligner.estimate().is_some() {
            self.release(out);
        } else {
            self.unaligned_dropped += self
                .pending
                .drain(..)
                .map(|b| batch_len(&b) as u64)
                .sum::<u64>();
        }
    }

    fn emit_batch(&mut self, batch: &pb::SampleBatch, out: &mut impl FnMut(StreamItem)) {
        let Some(cal) = self.calibration else { return };
        if let Some(est) = self.aligner.estimate() {
            let max = self.uncertainty_max_ns.unwrap_or(0.0);
            self.uncertainty_max_ns = Some(max.max(est.uncertainty_ns));
        }
        if packed::is_v2(batch) {
            self.emit_v2(batch, cal, out);
        } else {
            self.emit_v1(batch, cal, out);
        }
    }

    /// Sequence accounting of a batch of `n` samples; returns how many
    /// leading samples repeat ones already received.
    fn continuity(
        &mut self,
        batch: &pb::SampleBatch,
        n: usize,
        out: &mut impl FnMut(StreamItem),
    ) -> usize {
        match self
            .sequence
            .batch(batch.first_seq, n as u64, batch.dropped_before as u64)
        {
            Continuity::Contiguous => 0,
            Continuity::Gap { missing } => {
                out(StreamItem::Event(StreamEvent::Gap {
                    next_seq: batch.first_seq,
                    missing,
                    probe_reported: batch.dropped_before as u64,
                }));
                0
            }
            Continuity::Restart => {
                // A restarted probe may have restarted its accumulators too:
                // continue the unwrapped totals from the next reading.
                self.accumulated.last_energy_raw = None;
                self.accumulated.last_charge_raw = None;
                self.rate = Rate::default();
                out(StreamItem::Event(StreamEvent::Restart {
                    first_seq: batch.first_seq,
                }));
                0
            }
            Continuity::Overlap { overlap } => overlap as usize,
        }
    }

    /// A new accumulator epoch is a chip reset: ENERGY/CHARGE restarted from
    /// 0 at the re-initialisation, so the next readings count from 0 and the
    /// totals so far are carried (never read as a 40-bit wrap).
    fn check_epoch(
        &mut self,
        batch: &pb::SampleBatch,
        cal: Calibration,
        out: &mut impl FnMut(StreamItem),
    ) {
        let previous = self.epoch.replace(batch.epoch);
        let Some(previous) = previous.filter(|&e| e != batch.epoch) else {
            return;
        };
        let a = &mut self.accumulated;
        a.last_energy_raw = Some(0);
        a.last_charge_raw = Some(0);
        let reset = ProbeReset {
            epoch: batch.epoch,
            resets: batch.epoch.wrapping_sub(previous),
            first_seq: batch.first_seq,
            probe_time_us: batch.first_time_us,
            energy_carried_j: cal.energy_j(a.energy_counts),
            unmeasured_us: a
                .energy_at_us
                .map(|t| batch.first_time_us.saturating_sub(t)),
        };
        tracing::warn!(
            "probe INA228 was reset and re-initialised (accumulator epoch {} → {}); energy carried: {:.3} J",
            previous,
            batch.epoch,
            reset.energy_carried_j
        );
        self.resets.push(reset);
        out(StreamItem::Event(StreamEvent::ChipReset(reset)));
    }

    fn count_rate(&mut self, probe_time_us: u64) {
        let r = &mut self.rate;
        r.first_us.get_or_insert(probe_time_us);
        r.last_us = probe_time_us;
        r.count += 1;
    }

    fn sample_at(&self, cal: Calibration, seq: u64, probe_time_us: u64) -> ProbeSample {
        let a = &self.accumulated;
        ProbeSample {
            // Fitted against the host's real timeline; recorded on the run's.
            time_ns: self
                .aligner
                .to_host_ns(probe_time_us)
                .map_or(0, hostd_records::clock::record_ns_at),
            seq,
            probe_time_us,
            vbus_v: None,
            current_a: None,
            power_w: None,
            energy_j: a.has_energy.then(|| cal.energy_j(a.energy_counts)),
            charge_c: a.has_charge.then(|| cal.charge_c(a.charge_counts)),
            die_temp_c: None,
            enclosure_temp_c: self.enclosure_temp_c,
            vbus_min_v: None,
        }
    }

    fn emit_v2(
        &mut self,
        batch: &pb::SampleBatch,
        cal: Calibration,
        out: &mut impl FnMut(StreamItem),
    ) {
        let mut u = std::mem::take(&mut self.unpacked);
        if let Err(e) = packed::unpack(batch, &mut u) {
            // Its samples are lost: the next batch shows them as a gap.
            tracing::debug!("malformed v2 batch at seq {}: {e}", batch.first_seq);
            self.malformed_batches += 1;
            self.unpacked = u;
            return;
        }
        let n = u.time_us.len();
        self.check_epoch(batch, cal, out);
        let skip = self.continuity(batch, n, out);
        self.diag_flags |= batch.diag;
        self.diag_batches += u64::from(batch.diag != 0);
        let has = |bit: u32| batch.channels & bit != 0;
        let batch_vbus_min = batch.vbus_min.map(|raw| cal.vbus_v(raw));
        let mut temps: Vec<&pb::TempReading> =
            batch.temps.iter().filter(|t| t.sensor == 0).collect();
        temps.sort_by_key(|t| t.seq);
        let (mut next_slow, mut next_temp) = (0, 0);
        for i in 0..n {
            let seq = batch.first_seq + i as u64;
            while next_slow < batch.slow.len() && batch.slow[next_slow].index as usize <= i {
                self.take_slow(&batch.slow[next_slow], cal, u.time_us[i]);
                next_slow += 1;
            }
            while next_temp < temps.len() && temps[next_temp].seq <= seq {
                self.enclosure_temp_c = Some(temps[next_temp].milli_c as f64 / 1000.0);
                next_temp += 1;
            }
            if i < skip {
                continue;
            }
            let raw = |c: usize| u.values[c][i] as i32;
            let vbus = has(CH_VBUS).then(|| cal.vbus_v(raw(0)));
            let current = if has(CH_CURRENT) {
                Some(cal.current_a(raw(2)))
            } else if has(CH_VSHUNT) {
                cal.current_from_vshunt_a(raw(1))
            } else {
                None
            };
            // POWER is |CURRENT| × VBUS on the chip (unsigned); the host does the same.
            let power = if has(CH_POWER) {
                Some(cal.power_w(u.values[3][i] as u32))
            } else {
                vbus.zip(current).map(|(v, c)| (v * c).abs())
            };
            let mut sample = self.sample_at(cal, seq, u.time_us[i]);
            sample.vbus_v = vbus;
            sample.current_a = current;
            sample.power_w = power;
            sample.die_temp_c = self.die_temp_c;
            sample.vbus_min_v = batch_vbus_min;
            self.count_rate(u.time_us[i]);
            out(StreamItem::Sample(sample));
        }
        // Readings tagged beyond the batch's last sample still count.
        let last_time = u.time_us.last().copied().unwrap_or(batch.first_time_us);
        for r in &batch.slow[next_slow..] {
            self.take_slow(r, cal, last_time);
        }
        if let Some(t) = temps[next_temp..].last() {
            self.enclosure_temp_c = Some(t.milli_c as f64 / 1000.0);
        }
        self.unpacked = u;
    }

    fn emit_v1(
        &mut self,
        batch: &pb::SampleBatch,
        cal: Calibration,
        out: &mut impl FnMut(StreamItem),
    ) {
        let n = batch_len(batch);
        if n == 0 {
            return;
        }
        let channel = |len: usize| len == n;
        let lengths = [
            batch.dt_us.len(),
            batch.vbus.len(),
            batch.current.len(),
            batch.power.len(),
            batch.die_temp.len(),
        ];
        if lengths.iter().any(|&l| l != 0 && l != n) {
            self.malformed_batches += 1;
        }
        let skip = self.continuity(batch, n, out);

        let mut accumulators: Vec<&pb::Accumulators> = batch.accumulators.iter().collect();
        accumulators.sort_by_key(|a| a.seq);
        let mut temps: Vec<&pb::TempReading> =
            batch.temps.iter().filter(|t| t.sensor == 0).collect();
        temps.sort_by_key(|t| t.seq);
        let (mut next_acc, mut next_temp) = (0, 0);

        let mut probe_time_us = batch.first_time_us;
        for i in 0..n {
            if i > 0 && channel(batch.dt_us.len()) {
                probe_time_us += batch.dt_us[i] as u64;
            }
            let seq = batch.first_seq + i as u64;
            while next_acc < accumulators.len() && accumulators[next_acc].seq <= seq {
                self.take_energy(accumulators[next_acc].energy, probe_time_us);
                self.take_charge(accumulators[next_acc].charge);
                next_acc += 1;
            }
            while next_temp < temps.len() && temps[next_temp].seq <= seq {
                self.enclosure_temp_c = Some(temps[next_temp].milli_c as f64 / 1000.0);
                next_temp += 1;
            }
            if i < skip {
                continue;
            }
            let mut sample = self.sample_at(cal, seq, probe_time_us);
            sample.vbus_v = channel(batch.vbus.len()).then(|| cal.vbus_v(batch.vbus[i]));
            sample.current_a =
                channel(batch.current.len()).then(|| cal.current_a(batch.current[i]));
            sample.power_w = channel(batch.power.len()).then(|| cal.power_w(batch.power[i]));
            sample.die_temp_c =
                channel(batch.die_temp.len()).then(|| cal.die_temp_c(batch.die_temp[i]));
            sample.vbus_min_v = batch.vbus_min.map(|raw| cal.vbus_v(raw));
            self.count_rate(probe_time_us);
            out(StreamItem::Sample(sample));
        }
        // Readings tagged beyond the batch's last sample still count.
        for acc in &accumulators[next_acc..] {
            self.take_energy(acc.energy, probe_time_us);
            self.take_charge(acc.charge);
        }
        if let Some(t) = temps[next_temp..].last() {
            self.enclosure_temp_c = Some(t.milli_c as f64 / 1000.0);
        }
    }

    fn take_slow(&mut self, r: &pb::RegisterReading, cal: Calibration, probe_time_us: u64) {
        match r.reg {
            REG_ENERGY => self.take_energy(r.value, probe_time_us),
            REG_CHARGE => self.take_charge(charge_from_raw(r.value)),
            REG_DIETEMP => self.die_temp_c = Some(cal.die_temp_c(dietemp_from_raw(r.value))),
            _ => {} // a register a newer probe reads: ignored
        }
    }

    fn take_energy(&mut self, raw: u64, probe_time_us: u64) {
        let a = &mut self.accumulated;
        if let Some(last) = a.last_energy_raw {
            a.energy_counts += energy_delta(last, raw);
        }
        a.last_energy_raw = Some(raw);
        a.has_energy = true;
        a.energy_at_us = Some(probe_time_us);
    }

    fn take_charge(&mut self, raw: i64) {
        let a = &mut self.accumulated;
        if let Some(last) = a.last_charge_raw {
            a.charge_counts += charge_delta(last, raw);
        }
        a.last_charge_raw = Some(raw);
        a.has_charge = true;
    }
}

/// Number of samples in a batch: v2 `count`, or the longest v1 channel.
fn batch_len(batch: &pb::SampleBatch) -> usize {
    if packed::is_v2(batch) {
        return batch.count as usize;
    }
    [
        batch.dt_us.len(),
        batch.vbus.len(),
        batch.vshunt.len(),
        batch.current.len(),
        batch.power.len(),
        batch.die_temp.len(),
    ]
    .into_iter()
    .max()
    .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::encode_probe_message;
    use crate::packed::pack;

    const LSB: f32 = 10.0 / 524_288.0;

    fn info() -> Msg {
        Msg::Info(pb::DeviceInfo {
            protocol_version: 2,
            shunt_micro_ohm: 5000,
            current_lsb_a: LSB,
            ..Default::default()
        })
    }

    fn sync() -> Msg {
        Msg::Sync(pb::SyncReply {
            sync_id: 1,
            host_time_ns: 1_800_000_000_000_000_000,
            probe_rx_us: 0,
            probe_tx_us: 0,
        })
    }

    /// A v2 batch of `n` samples at 1 ms: 5 V, 1.2 A, with slow readings.
    fn batch(first_seq: u64, n: u64, epoch: u32, slow: Vec<(u32, u32, u64)>) -> Msg {
        let time_us: Vec<u64> = (0..n).map(|i| (first_seq + i) * 1000).collect();
        let values = [
            vec![25_600; n as usize],
            vec![19_200; n as usize],
            Vec::new(),
            Vec::new(),
        ];
        Msg::Batch(pb::SampleBatch {
            first_seq,
            first_time_us: first_seq * 1000,
            packed: pack(3, 1000, &time_us, &values),
            channels: 3,
            period_us: 1000,
            count: n as u32,
            epoch,
            diag: if epoch > 0 { 1 << 9 } else { 0 },
            slow: slow
                .into_iter()
                .map(|(index, reg, value)| pb::RegisterReading { index, reg, value })
                .collect(),
            ..Default::default()
        })
    }

    fn run(msgs: Vec<Msg>) -> (ProbeStream, Vec<ProbeSample>, Vec<StreamEvent>) {
        let mut stream = ProbeStream::new();
        let (mut samples, mut events) = (Vec::new(), Vec::new());
        let mut sink = |item| match item {
            StreamItem::Sample(s) => samples.push(s),
            StreamItem::Event(e) => events.push(e),
        };
        for m in msgs {
            stream.push(
                &encode_probe_message(m),
                1_800_000_000_000_000_000,
                &mut sink,
            );
        }
        stream.flush(&mut sink);
        (stream, samples, events)
    }

    #[test]
    fn a_new_epoch_is_a_reset_and_the_energy_before_it_is_carried_not_wrapped() {
        let (stream, samples, events) = run(vec![
            info(),
            sync(),
            batch(0, 4, 0, vec![(0, 0x09, 1_000_000), (3, 0x09, 1_000_100)]),
            // The chip was reset and re-initialised: ENERGY counts from 0 again.
            batch(4, 4, 1, vec![(1, 0x09, 50), (2, 0x0A, 7)]),
            // Within an epoch a 40-bit wrap is still a wrap.
            batch(8, 2, 1, vec![(0, 0x09, (1 << 40) - 10)]),
            batch(10, 2, 1, vec![(0, 0x09, 5)]),
        ]);
        let cal = Calibration::from_info(&pb::DeviceInfo {
            current_lsb_a: LSB,
            shunt_micro_ohm: 5000,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(samples.len(), 12);
        assert_eq!(stream.resets().len(), 1);
        let r = stream.resets()[0];
        assert_eq!((r.epoch, r.resets, r.first_seq), (1, 1, 4));
        assert!((r.energy_carried_j - cal.energy_j(100)).abs() < 1e-12);
        assert_eq!(r.unmeasured_us, Some(1000));
        assert!(events
            .iter()
            .any(|e| matches!(e, StreamEvent::ChipReset(x) if x.epoch == 1)));
        // 100 counts before, 50 after the reset, then (2^40 - 10 - 50) + 15 across the wrap.
        assert!((samples[5].energy_j.unwrap() - cal.energy_j(150)).abs() < 1e-12);
        let total = 150 + ((1u64 << 40) - 10 - 50) + 15;
        assert!((samples[11].energy_j.unwrap() - cal.energy_j(total)).abs() < 1e-6);
        // CHARGE: first reading after the reset counts from 0 too.
        assert!((samples[6].charge_c.unwrap() - cal.charge_c(7)).abs() < 1e-12);
        let st = stream.stats();
        assert_eq!(st.chip_resets, 1);
        assert_eq!(st.diag_flags, 1 << 9);
        assert_eq!(st.diag_batches, 3);
        assert!((st.delivered_rate_hz.unwrap() - 1000.0).abs() < 1e-9);
    }

    #[test]
    fn v2_current_and_power_come_from_vbus_and_vshunt_and_v1_still_decodes() {
        let v1 = Msg::Batch(pb::SampleBatch {
            first_seq: 2,
            first_time_us: 2000,
            dt_us: vec![0, 1000],
            vbus: vec![25_600, 25_600],
            current: vec![62_915, 62_915],
            power: vec![98_304, 98_304],
            ..Default::default()
        });
        let (stream, samples, _) = run(vec![
            info(),
            sync(),
            batch(0, 2, 0, vec![(1, 0x06, 0x8000)]),
            v1,
        ]);
        assert_eq!(samples.len(), 4);
        let v2 = &samples[1];
        assert!((v2.vbus_v.unwrap() - 5.0).abs() < 1e-9);
        assert!((v2.current_a.unwrap() - 1.2).abs() < 1e-9);
        assert!((v2.power_w.unwrap() - 6.0).abs() < 1e-9);
        assert_eq!(v2.die_temp_c, Some(-256.0));
        assert_eq!(samples[0].die_temp_c, None);
        let v1 = &samples[3];
        assert_eq!(v1.seq, 3);
        assert_eq!(v1.probe_time_us, 3000);
        assert!((v1.current_a.unwrap() - 1.2).abs() < 1e-4);
        assert!((v1.power_w.unwrap() - 6.0).abs() < 1e-3);
        assert_eq!(stream.stats().malformed_batches, 0);
        assert_eq!(stream.stats().sequence.gaps, 0);
    }

    #[test]
    fn a_malformed_packed_batch_is_counted_and_its_samples_become_a_gap() {
        let mut bad = match batch(4, 4, 0, vec![]) {
            Msg::Batch(b) => b,
            _ => unreachable!(),
        };
        bad.packed.truncate(3);
        let (stream, samples, _) = run(vec![
            info(),
            sync(),
            batch(0, 4, 0, vec![]),
            Msg::Batch(bad),
            batch(8, 4, 0, vec![]),
        ]);
        assert_eq!(samples.len(), 8);
        let st = stream.stats();
        assert_eq!(st.malformed_batches, 1);
        assert_eq!((st.sequence.gaps, st.sequence.missing), (1, 4));
    }
}
