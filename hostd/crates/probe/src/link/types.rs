//! What the link reports: its output ([`LinkOutput`], [`LinkEvent`]), reconnections, the
//! probe's counters and identity, the live snapshot and the final report.

use crate::pb;
use crate::stream::{ProbeReset, StreamEvent, StreamStats};
use hostd_records::probe::ProbeSample;
use serde::Serialize;

/// What the link sends to its consumer.
#[derive(Debug, Clone)]
pub enum LinkOutput {
    /// Aligned samples, in sequence order.
    Samples(Vec<ProbeSample>),
    /// Something happened on the link.
    Event(LinkEvent),
}

/// Link events.
#[derive(Debug, Clone)]
pub enum LinkEvent {
    /// The port was opened (first time).
    Connected {
        /// Device path.
        port: String,
    },
    /// The port vanished or failed.
    Disconnected {
        /// Host Unix ns of the failure.
        at_ns: i64,
        /// What failed.
        reason: String,
    },
    /// Samples flow again after a disconnect.
    Reconnected(Reconnect),
    /// A protocol-level event (info, status, gap, alignment…).
    Stream(StreamEvent),
}

/// One disconnect → reconnect episode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reconnect {
    /// Host Unix ns when the port failed.
    pub disconnected_ns: i64,
    /// Host Unix ns when the port was open again.
    pub reopened_ns: i64,
    /// Host Unix ns of the first received bytes carrying samples again.
    pub resumed_ns: i64,
    /// Time without samples, in ms (`resumed − disconnected`).
    pub gap_ms: f64,
    /// From re-open to samples flowing, in ms.
    pub resume_after_reopen_ms: f64,
    /// Samples the probe took that never arrived.
    pub samples_lost: u64,
    /// True when `samples_lost` was estimated from the probe clock (the
    /// probe restarted its sequence numbers) rather than counted.
    pub samples_lost_estimated: bool,
    /// Why the port failed.
    pub reason: String,
}

/// Probe-side counters from the latest Status.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize)]
pub struct ProbeCounters {
    /// Samples taken since boot.
    pub samples_taken: u64,
    /// Samples dropped by the probe (ring full).
    pub samples_dropped: u64,
    /// I²C errors.
    pub i2c_errors: u32,
    /// Times the ring buffer was full.
    pub ring_overflows: u32,
    /// Frames that did not fit the probe's tx queue.
    pub tx_overflows: u32,
    /// Host frames the probe rejected.
    pub rx_bad_frames: u32,
    /// Undecodable host messages.
    pub rx_bad_messages: u32,
    /// Temperature sensor errors.
    pub temp_errors: u32,
    /// Conversions the probe took no sample for (v2; also in `samples_dropped`).
    pub missed_slots: u64,
    /// Sample rate the probe achieved in the current run (v2), Hz.
    pub achieved_rate_hz: f64,
    /// Nominal conversion rate of the run, 1 / (CT sum × AVG) (v2), Hz.
    pub conversion_rate_hz: f64,
    /// The rate the Start asked for (v2), Hz.
    pub requested_rate_hz: u32,
    /// Accumulator epoch (v2): chip resets and accumulator resets since boot.
    pub epoch: u32,
    /// Chip re-initialisations after a detected reset (v2).
    pub reinits: u32,
    /// OR of every DIAG_ALRT flag seen since boot (v2; bit 0: MEMSTAT error).
    pub diag: u32,
}

impl From<&pb::Status> for ProbeCounters {
    fn from(s: &pb::Status) -> Self {
        Self {
            samples_taken: s.samples_taken,
            samples_dropped: s.samples_dropped,
            i2c_errors: s.i2c_errors,
            ring_overflows: s.ring_overflows,
            tx_overflows: s.tx_overflows,
            rx_bad_frames: s.rx_bad_frames,
            rx_bad_messages: s.rx_bad_messages,
            temp_errors: s.temp_errors,
            missed_slots: s.missed_slots,
            achieved_rate_hz: f64::from(s.achieved_rate_hz),
            conversion_rate_hz: f64::from(s.conversion_rate_hz),
            requested_rate_hz: s.requested_rate_hz,
            epoch: s.epoch,
            reinits: s.reinits,
            diag: s.diag,
        }
    }
}

/// DIAG_ALRT flag names for the bits the probe reports (bit 0 is MEMSTAT
/// sent inverted: set means a trim-memory checksum error).
pub fn diag_flag_names(diag: u32) -> Vec<&'static str> {
    const NAMES: [(u32, &str); 10] = [
        (1 << 11, "ENERGYOF"),
        (1 << 10, "CHARGEOF"),
        (1 << 9, "MATHOF"),
        (1 << 7, "TMPOL"),
        (1 << 6, "SHNTOL"),
        (1 << 5, "SHNTUL"),
        (1 << 4, "BUSOL"),
        (1 << 3, "BUSUL"),
        (1 << 2, "POL"),
        (1, "MEMSTAT error"),
    ];
    NAMES
        .iter()
        .filter(|(bit, _)| diag & bit != 0)
        .map(|(_, n)| *n)
        .collect()
}

/// Identity of the probe from its DeviceInfo.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct ProbeIdentity {
    /// Probe id.
    pub probe_id: String,
    /// Firmware version.
    pub firmware_version: String,
    /// Protocol version.
    pub protocol_version: u32,
    /// Shunt in µΩ.
    pub shunt_micro_ohm: u32,
    /// CURRENT_LSB in A.
    pub current_lsb_a: f64,
    /// Highest rate the probe accepts for its default channels (I²C ceiling), Hz.
    pub max_rate_hz: u32,
    /// Nominal conversion (= sample) rate of the run (v2, after a Start), Hz.
    pub conversion_rate_hz: f64,
    /// ADC_CONFIG of the run (v2).
    pub adc_config: u32,
    /// Channels read on every sample (v2), e.g. `vbus,vshunt`.
    pub channels: String,
    /// I²C clock of the probe (v2), Hz.
    pub i2c_bus_hz: u32,
    /// Worst-case I²C time of one sample (v2), µs.
    pub sample_bus_us: u32,
    /// The probe reads the host port's CC and sends its status (v3).
    pub cc_sensing: bool,
    /// The probe decodes USB PD on CC: the port's status carries the contract's terms (v3).
    pub pd_decoding: bool,
}

impl From<&pb::DeviceInfo> for ProbeIdentity {
    fn from(i: &pb::DeviceInfo) -> Self {
        Self {
            probe_id: i.probe_id.clone(),
            firmware_version: i.firmware_version.clone(),
            protocol_version: i.protocol_version,
            shunt_micro_ohm: i.shunt_micro_ohm,
            current_lsb_a: i.current_lsb_a as f64,
            max_rate_hz: i.max_rate_hz,
            conversion_rate_hz: f64::from(i.conversion_rate_hz),
            adc_config: i.adc_config,
            channels: crate::packed::channel_names(i.channels),
            i2c_bus_hz: i.i2c_bus_hz,
            sample_bus_us: i.sample_bus_us,
            cc_sensing: i.cc_sensing,
            pd_decoding: i.pd_decoding,
        }
    }
}

/// What the link looks like right now (for the live view).
#[derive(Debug, Default, Clone, Serialize)]
pub struct LinkSnapshot {
    /// Port open.
    pub connected: bool,
    /// Device path in use.
    pub port: String,
    /// Latest sample.
    pub latest: Option<ProbeSample>,
    /// Stream counters.
    pub stats: StreamStats,
    /// Reconnect episodes so far.
    pub reconnects: u64,
    /// The probe, once it described itself.
    pub identity: Option<ProbeIdentity>,
    /// Probe-side counters.
    pub probe: Option<ProbeCounters>,
    /// Why the probe refused the Start command, if it did.
    pub start_refused: Option<String>,
    /// Whether the probe reads the host port's CC (from its DeviceInfo).
    pub port_sensing: crate::port::PortSensing,
    /// The host port's latest status (wire v3 probes that read CC).
    pub port_status: Option<pb::PortStatus>,
}

/// Everything about the link at its end, for manifest/summary.
#[derive(Debug, Default, Clone, Serialize)]
pub struct LinkReport {
    /// `--probe` value.
    pub source: String,
    /// Last device path.
    pub port: String,
    /// The probe.
    pub identity: Option<ProbeIdentity>,
    /// The host port's last status, when the probe reads CC.
    pub port_status: Option<pb::PortStatus>,
    /// Host-side counters (CRC failures, gaps, drops, alignment).
    pub stats: StreamStats,
    /// Probe-side counters from the last Status.
    pub probe: Option<ProbeCounters>,
    /// Reconnect episodes.
    pub reconnects: Vec<Reconnect>,
    /// A disconnect still unresolved when the link stopped.
    pub disconnected_at_end: Option<Outage>,
    /// Chip resets (new accumulator epochs): recorded as resets, not wraps.
    pub resets: Vec<ProbeReset>,
}

/// A disconnect that had not recovered when the link stopped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outage {
    /// Host Unix ns when the port failed.
    pub disconnected_ns: i64,
    /// Why.
    pub reason: String,
}
