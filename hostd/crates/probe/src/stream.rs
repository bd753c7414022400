//! The host side of one probe stream: bytes in, aligned physical samples
//! and link events out. Transport-free, so it is what the link thread, the
//! tests, the bench and the fuzz target all drive.

use crate::align::{AlignmentEstimate, ClockAligner, SyncExchange};
use crate::convert::{charge_delta, energy_delta, Calibration};
use crate::frame::FrameStats;
use crate::message::{MessageStats, ProbeMessageDecoder};
use crate::pb;
use crate::pb::probe_to_host::Msg;
use crate::sample::ProbeSample;
use crate::sequence::{Continuity, SequenceStats, SequenceTracker};
use serde::Serialize;
use std::collections::VecDeque;

/// Batches held while the probe's calibration or the first clock fit is
/// still missing; older ones are dropped (and counted) beyond this.
const MAX_PENDING_BATCHES: usize = 4096;
/// Samples are held at the start until the clock fit is this good…
pub const HOLD_UNTIL_UNCERTAINTY_NS: f64 = 250_000.0;
/// …or for at most this long (host time).
pub const MAX_HOLD_NS: i64 = 3_000_000_000;

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
    /// Largest alignment uncertainty of the clock fits samples were mapped with (ns).
    pub alignment_uncertainty_max_ns: Option<f64>,
}

/// Accumulator unwrapping state.
#[derive(Debug, Default, Clone, Copy)]
struct Accumulated {
    last_energy_raw: Option<u64>,
    last_charge_raw: i64,
    energy_counts: u64,
    charge_counts: i64,
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
    pending: VecDeque<pb::SampleBatch>,
    accumulated: Accumulated,
    enclosure_temp_c: Option<f64>,
    malformed_batches: u64,
    unaligned_dropped: u64,
    uncertainty_max_ns: Option<f64>,
    released: bool,
    pending_since: Option<i64>,
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

    /// The next sequence number expected.
    pub fn next_seq(&self) -> Option<u64> {
        self.sequence.next_expected()
    }

    /// The clock aligner (read-only).
    pub fn aligner(&self) -> &ClockAligner {
        &self.aligner
    }

    /// Counters so far.
    pub fn stats(&self) -> StreamStats {
        StreamStats {
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
        let skip = match self
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
                // A restarted probe restarted its accumulators too: continue
                // the unwrapped totals from the next reading.
                self.accumulated.last_energy_raw = None;
                out(StreamItem::Event(StreamEvent::Restart {
                    first_seq: batch.first_seq,
                }));
                0
            }
            Continuity::Overlap { overlap } => overlap as usize,
        };

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
                self.take_accumulators(accumulators[next_acc]);
                next_acc += 1;
            }
            while next_temp < temps.len() && temps[next_temp].seq <= seq {
                self.enclosure_temp_c = Some(temps[next_temp].milli_c as f64 / 1000.0);
                next_temp += 1;
            }
            if i < skip {
                continue;
            }
            let has_energy = self.accumulated.last_energy_raw.is_some();
            let sample = ProbeSample {
                time_ns: self.aligner.to_host_ns(probe_time_us).unwrap_or_default(),
                seq,
                probe_time_us,
                vbus_v: channel(batch.vbus.len()).then(|| cal.vbus_v(batch.vbus[i])),
                current_a: channel(batch.current.len()).then(|| cal.current_a(batch.current[i])),
                power_w: channel(batch.power.len()).then(|| cal.power_w(batch.power[i])),
                energy_j: has_energy.then(|| cal.energy_j(self.accumulated.energy_counts)),
                charge_c: has_energy.then(|| cal.charge_c(self.accumulated.charge_counts)),
                die_temp_c: channel(batch.die_temp.len())
                    .then(|| cal.die_temp_c(batch.die_temp[i])),
                enclosure_temp_c: self.enclosure_temp_c,
            };
            out(StreamItem::Sample(sample));
        }
        // Readings tagged beyond the batch's last sample still count.
        for acc in &accumulators[next_acc..] {
            self.take_accumulators(acc);
        }
        if let Some(t) = temps[next_temp..].last() {
            self.enclosure_temp_c = Some(t.milli_c as f64 / 1000.0);
        }
    }

    fn take_accumulators(&mut self, acc: &pb::Accumulators) {
        let a = &mut self.accumulated;
        if let Some(last) = a.last_energy_raw {
            a.energy_counts += energy_delta(last, acc.energy);
            a.charge_counts += charge_delta(a.last_charge_raw, acc.charge);
        }
        a.last_energy_raw = Some(acc.energy);
        a.last_charge_raw = acc.charge;
    }
}

/// Number of samples in a batch: the longest channel.
fn batch_len(batch: &pb::SampleBatch) -> usize {
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
