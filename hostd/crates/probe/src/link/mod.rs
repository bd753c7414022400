//! The probe link: one thread that owns the serial port, sends commands,
//! turns bytes into aligned samples, and reconnects by itself when the port
//! disappears and comes back. It never blocks the caller: samples and
//! events go out on a channel, a snapshot is there for the live view.

pub mod sim;
pub mod sim_locate;
pub mod source;

pub use sim::SimProcess;
pub use source::{discover, ProbeSource, PROBE_USB_PID, PROBE_USB_VID, SIM_ENV};

use crate::pb;
use crate::pb::host_to_probe::Cmd;
use crate::sample::ProbeSample;
use crate::stream::{ProbeReset, ProbeStream, StreamEvent, StreamItem, StreamStats};
use anyhow::Context;
use serde::Serialize;
use serialport::TTYPort;
use std::io::{ErrorKind, Read, Write};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Host Unix time in nanoseconds: the one clock the probe is aligned to
/// (the same `SystemTime` the workload stamps its file records with).
pub fn host_now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or_default()
}

/// How to run the link.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    /// Which probe.
    pub source: ProbeSource,
    /// Extra simulator flags (device model) for [`ProbeSource::Sim`].
    pub sim_args: Vec<String>,
    /// The Start command sent on connect.
    pub start: pb::Start,
    /// Interval between sync requests.
    pub sync_interval: Duration,
    /// Interval between status requests.
    pub status_interval: Duration,
    /// Interval between attempts to re-open a vanished port.
    pub reopen_interval: Duration,
    /// A port that stays silent this long (no sync replies, no status, no
    /// samples) is treated as lost and re-opened: a hung USB device gives
    /// no error of its own.
    pub silence_timeout: Duration,
}

impl Default for LinkConfig {
    fn default() -> Self {
        Self {
            source: ProbeSource::None,
            sim_args: Vec::new(),
            start: pb::Start {
                rate_hz: 1000,
                die_temp: true,
                ..Default::default()
            },
            sync_interval: Duration::from_secs(1),
            status_interval: Duration::from_secs(2),
            reopen_interval: Duration::from_millis(50),
            silence_timeout: Duration::from_secs(5),
        }
    }
}

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

enum Control {
    Stop,
}

/// Handle of a running link; see the module documentation.
pub struct ProbeLink {
    control: Sender<Control>,
    thread: Option<JoinHandle<LinkReport>>,
    snapshot: Arc<Mutex<LinkSnapshot>>,
    sim: Option<Arc<SimProcess>>,
}

impl ProbeLink {
    /// Opens the probe and starts the link thread; samples and events go to
    /// `out`. Fails with a clear message when the port cannot be opened
    /// (later failures are reconnected, not reported as errors).
    pub fn start(config: LinkConfig, out: Sender<LinkOutput>) -> anyhow::Result<Self> {
        let sim = match config.source {
            ProbeSource::Sim => Some(Arc::new(SimProcess::spawn(&config.sim_args)?)),
            ProbeSource::None => anyhow::bail!("--probe none: there is no probe link to start"),
            _ => None,
        };
        let path = locate(&config.source, sim.as_deref())?;
        let port = open_port(&path)?;
        let snapshot = Arc::new(Mutex::new(LinkSnapshot {
            connected: true,
            port: path.display().to_string(),
            ..Default::default()
        }));
        let (control, control_rx) = mpsc::channel();
        let mut worker = Worker {
            config,
            stream: ProbeStream::new(),
            port: Some(port),
            port_name: path.display().to_string(),
            sim: sim.clone(),
            out,
            snapshot: Arc::clone(&snapshot),
            request_id: 0,
            sync_id: 0,
            next_sync: Instant::now(),
            fast_syncs: 0,
            last_rx: Instant::now(),
            next_status: Instant::now() + Duration::from_millis(500),
            reconnects: Vec::new(),
            down: None,
            resuming: None,
            last_sample: None,
            start_request: None,
        };
        let thread = std::thread::Builder::new()
            .name("probe-link".into())
            .spawn(move || worker.run(control_rx))
            .context("could not start the probe link thread")?;
        Ok(Self {
            control,
            thread: Some(thread),
            snapshot,
            sim,
        })
    }

    /// The current state (cheap; for the live view).
    pub fn snapshot(&self) -> LinkSnapshot {
        self.snapshot
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The simulator, when the source is `sim`.
    pub fn sim(&self) -> Option<&SimProcess> {
        self.sim.as_deref()
    }

    /// Tells the simulator the workload's activity (0..1); no-op for a real probe.
    pub fn set_load(&self, fraction: f64) {
        if let Some(sim) = &self.sim {
            if let Err(err) = sim.set_load(fraction) {
                tracing::debug!("probe simulator load update failed: {err:#}");
            }
        }
    }

    /// Waits until the first sample was aligned, or the timeout passes.
    pub fn wait_for_samples(&self, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            let snap = self.snapshot();
            if let Some(why) = snap.start_refused {
                anyhow::bail!("the probe on {} refused to start: {why}", snap.port);
            }
            if snap.latest.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let snap = self.snapshot();
        anyhow::bail!(
            "no probe samples on {} within {timeout:?} (frames ok {}, rejected {}; device info {})",
            snap.port,
            snap.stats.frames.frames_ok,
            snap.stats.frames.rejected(),
            if snap.identity.is_some() {
                "received"
            } else {
                "not received"
            }
        )
    }

    /// Stops sampling, ends the thread and the simulator, returns the report.
    pub fn stop(mut self) -> LinkReport {
        self.finish()
    }

    fn finish(&mut self) -> LinkReport {
        let _ = self.control.send(Control::Stop);
        let report = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        if let Some(sim) = self.sim.take() {
            sim.shutdown();
        }
        report
    }
}

impl Drop for ProbeLink {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.finish();
        }
    }
}

/// Where to open the port right now.
fn locate(source: &ProbeSource, sim: Option<&SimProcess>) -> anyhow::Result<PathBuf> {
    match source {
        ProbeSource::Port(p) => Ok(p.clone()),
        ProbeSource::Auto { serial } => discover(serial.as_deref()),
        ProbeSource::Sim => sim
            .and_then(|s| s.current_pty())
            .map(|(_, p)| p)
            .context("the probe simulator has no pty"),
        ProbeSource::None => anyhow::bail!("no probe"),
    }
}

/// Opens a probe serial port (raw, 20 ms read timeout).
pub fn open_port(path: &std::path::Path) -> anyhow::Result<TTYPort> {
    serialport::new(path.to_string_lossy(), 115_200)
        .timeout(Duration::from_millis(20))
        .open_native()
        .with_context(|| {
            format!(
                "could not open the probe port {} — is it plugged in, and not held by another hostd?",
                path.display()
            )
        })
}

/// A disconnect in progress.
struct Down {
    at_ns: i64,
    reason: String,
    reopened_ns: Option<i64>,
    last_before: Option<ProbeSample>,
}

/// Waiting for samples after a re-open (to decide whether to re-send Start).
struct Resuming {
    /// The Start decision was made (from the probe's Status).
    start_sent: bool,
    gap: Option<u64>,
    restarted: bool,
    /// Arrival time and first sample after the re-open.
    resumed: Option<(i64, ProbeSample)>,
}

struct Worker {
    config: LinkConfig,
    stream: ProbeStream,
    port: Option<TTYPort>,
    port_name: String,
    sim: Option<Arc<SimProcess>>,
    out: Sender<LinkOutput>,
    snapshot: Arc<Mutex<LinkSnapshot>>,
    request_id: u32,
    sync_id: u32,
    next_sync: Instant,
    fast_syncs: u32,
    last_rx: Instant,
    next_status: Instant,
    reconnects: Vec<Reconnect>,
    down: Option<Down>,
    resuming: Option<Resuming>,
    last_sample: Option<ProbeSample>,
    /// Request id of the latest Start sent.
    start_request: Option<u32>,
}

impl Worker {
    fn run(&mut self, control: Receiver<Control>) -> LinkReport {
        let _ = self.out.send(LinkOutput::Event(LinkEvent::Connected {
            port: self.port_name.clone(),
        }));
        self.handshake(true);
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match control.try_recv() {
                Ok(Control::Stop) | Err(TryRecvError::Disconnected) => break,
                Err(TryRecvError::Empty) => {}
            }
            if self.port.is_some() {
                self.service_port(&mut buf);
            } else {
                self.try_reopen();
            }
        }
        self.shutdown(&mut buf);
        self.flush_held();
        self.report()
    }

    fn service_port(&mut self, buf: &mut [u8]) {
        let now = Instant::now();
        if now >= self.next_sync {
            // A quick burst after (re)connecting pins the offset down early.
            let interval = if self.fast_syncs > 0 {
                self.fast_syncs -= 1;
                Duration::from_millis(100).min(self.config.sync_interval)
            } else {
                self.config.sync_interval
            };
            self.next_sync = now + interval;
            self.send_sync();
        }
        if now >= self.next_status {
            self.next_status = now + self.config.status_interval;
            self.send(Cmd::GetStatus(pb::GetStatus {}));
        }
        if now.duration_since(self.last_rx) > self.config.silence_timeout {
            let silent = now.duration_since(self.last_rx);
            self.last_rx = now;
            self.lose_port(format!(
                "no data from the probe for {:.1} s",
                silent.as_secs_f64()
            ));
            return;
        }
        let Some(port) = self.port.as_mut() else {
            return;
        };
        match port.read(buf) {
            Ok(0) => self.lose_port("end of file on the probe port".into()),
            Ok(n) => {
                let recv_ns = host_now_ns();
                self.last_rx = Instant::now();
                self.ingest(&buf[..n], recv_ns);
            }
            Err(e) if e.kind() == ErrorKind::TimedOut || e.kind() == ErrorKind::Interrupted => {}
            Err(e) => self.lose_port(format!("read failed: {e}")),
        }
    }

    fn ingest(&mut self, data: &[u8], recv_ns: i64) {
        let mut samples = Vec::new();
        let mut events = Vec::new();
        self.stream.push(data, recv_ns, &mut |item| match item {
            StreamItem::Sample(s) => samples.push(s),
            StreamItem::Event(e) => events.push(e),
        });
        for event in events {
            self.on_stream_event(&event);
            let _ = self.out.send(LinkOutput::Event(LinkEvent::Stream(event)));
        }
        if let Some(last) = samples.last().copied() {
            self.track_resume(&samples[0], &last, recv_ns);
            self.last_sample = Some(last);
        }
        let mut snap = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(last) = samples.last() {
            snap.latest = Some(*last);
        }
        snap.stats = self.stream.stats();
        drop(snap);
        if !samples.is_empty() {
            let _ = self.out.send(LinkOutput::Samples(samples));
        }
    }

    fn on_stream_event(&mut self, event: &StreamEvent) {
        let mut snap = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            StreamEvent::Info(info) => snap.identity = Some(ProbeIdentity::from(info)),
            StreamEvent::ProbeError(err)
                if err.request_id != 0 && Some(err.request_id) == self.start_request =>
            {
                tracing::error!("the probe refused Start: {}", err.detail);
                snap.start_refused = Some(err.detail.clone());
            }
            StreamEvent::Status(status) => {
                snap.probe = Some(ProbeCounters::from(status));
                drop(snap);
                // After a re-open: a probe still running keeps its sequence
                // numbers (so the gap is counted exactly); a stopped one is
                // started again.
                if let Some(r) = &mut self.resuming {
                    if !r.start_sent {
                        r.start_sent = true;
                        if !status.running {
                            let start = self.config.start.clone();
                            self.send(Cmd::Start(start));
                        }
                    }
                }
            }
            StreamEvent::Gap { missing, .. } => {
                if let Some(r) = &mut self.resuming {
                    r.gap = Some(r.gap.unwrap_or(0) + missing);
                }
            }
            StreamEvent::Restart { .. } => {
                if let Some(r) = &mut self.resuming {
                    r.restarted = true;
                }
            }
            _ => {}
        }
    }

    /// After a re-open the probe first delivers what its ring kept from the
    /// outage, then reports what it dropped; the episode is complete once
    /// the samples have caught up with the re-open time (or after 5 s).
    fn track_resume(&mut self, first: &ProbeSample, last: &ProbeSample, recv_ns: i64) {
        let Some(r) = &mut self.resuming else { return };
        if r.resumed.is_none() {
            r.resumed = Some((recv_ns, *first));
        }
        let reopened_ns = self
            .down
            .as_ref()
            .and_then(|d| d.reopened_ns)
            .unwrap_or(recv_ns);
        let caught_up = last.time_ns >= reopened_ns;
        let too_long = recv_ns - reopened_ns > 5_000_000_000;
        if caught_up || too_long {
            self.finish_reconnect();
        }
    }

    fn finish_reconnect(&mut self) {
        let (Some(resuming), Some(down)) = (self.resuming.take(), self.down.take()) else {
            return;
        };
        let Some((resumed_ns, first)) = resuming.resumed else {
            return;
        };
        let (samples_lost, estimated) = match (resuming.gap, resuming.restarted, down.last_before) {
            (Some(gap), false, _) => (gap, false),
            (_, true, Some(before)) => {
                // v2 probes say their conversion rate; v1 ran at the rate asked.
                let rate = self
                    .snapshot
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .identity
                    .as_ref()
                    .map(|i| i.conversion_rate_hz)
                    .filter(|r| *r > 0.0)
                    .unwrap_or(self.config.start.rate_hz.max(1) as f64);
                let period_us = 1e6 / rate;
                let elapsed = first.probe_time_us.saturating_sub(before.probe_time_us) as f64;
                (
                    ((elapsed / period_us).round() as u64).saturating_sub(1),
                    true,
                )
            }
            _ => (0, false),
        };
        let reopened_ns = down.reopened_ns.unwrap_or(resumed_ns);
        let record = Reconnect {
            disconnected_ns: down.at_ns,
            reopened_ns,
            resumed_ns,
            gap_ms: (resumed_ns - down.at_ns) as f64 / 1e6,
            resume_after_reopen_ms: (resumed_ns - reopened_ns) as f64 / 1e6,
            samples_lost,
            samples_lost_estimated: estimated,
            reason: down.reason,
        };
        tracing::info!(
            "probe link resumed after {:.0} ms ({} samples lost)",
            record.gap_ms,
            record.samples_lost
        );
        self.reconnects.push(record.clone());
        self.snapshot
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .reconnects = self.reconnects.len() as u64;
        let _ = self
            .out
            .send(LinkOutput::Event(LinkEvent::Reconnected(record)));
    }

    fn lose_port(&mut self, reason: String) {
        let at_ns = host_now_ns();
        tracing::warn!("probe port {} lost: {reason}", self.port_name);
        self.port = None;
        self.stream.reset_partial();
        // A second failure before samples resumed extends the same episode.
        if self.down.is_none() {
            self.down = Some(Down {
                at_ns,
                reason: reason.clone(),
                reopened_ns: None,
                last_before: self.last_sample,
            });
        }
        self.resuming = None;
        self.snapshot
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .connected = false;
        let _ = self
            .out
            .send(LinkOutput::Event(LinkEvent::Disconnected { at_ns, reason }));
    }

    fn try_reopen(&mut self) {
        std::thread::sleep(self.config.reopen_interval);
        let Ok(path) = locate(&self.config.source, self.sim.as_deref()) else {
            return;
        };
        let Ok(port) = open_port(&path) else { return };
        self.port = Some(port);
        self.last_rx = Instant::now();
        self.port_name = path.display().to_string();
        if let Some(down) = &mut self.down {
            down.reopened_ns = Some(host_now_ns());
        }
        {
            let mut snap = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
            snap.connected = true;
            snap.port = self.port_name.clone();
        }
        self.resuming = Some(Resuming {
            start_sent: false,
            gap: None,
            restarted: false,
            resumed: None,
        });
        self.handshake(false);
    }

    /// Info, a first sync and status; Start right away on the first connect,
    /// after a re-open only if the probe is not still running.
    fn handshake(&mut self, first: bool) {
        self.send(Cmd::GetInfo(pb::GetInfo {}));
        self.send_sync();
        self.send(Cmd::GetStatus(pb::GetStatus {}));
        if first {
            let start = self.config.start.clone();
            self.send(Cmd::Start(start));
        }
        self.next_sync = Instant::now() + Duration::from_millis(100);
        self.fast_syncs = 5;
    }

    fn send_sync(&mut self) {
        self.sync_id = self.sync_id.wrapping_add(1);
        let sync = pb::SyncRequest {
            sync_id: self.sync_id,
            host_time_ns: host_now_ns() as u64,
        };
        self.send(Cmd::Sync(sync));
    }

    fn send(&mut self, cmd: Cmd) {
        self.request_id = self.request_id.wrapping_add(1).max(1);
        if matches!(cmd, Cmd::Start(_)) {
            self.start_request = Some(self.request_id);
        }
        let frame = crate::message::encode_command(self.request_id, cmd);
        let Some(port) = self.port.as_mut() else {
            return;
        };
        if let Err(e) = port.write_all(&frame) {
            self.lose_port(format!("write failed: {e}"));
        }
    }

    /// Stop sampling and read what is still in flight for a moment.
    fn shutdown(&mut self, buf: &mut [u8]) {
        if self.port.is_none() {
            return;
        }
        self.send(Cmd::Stop(pb::Stop {}));
        self.send(Cmd::GetStatus(pb::GetStatus {}));
        let deadline = Instant::now() + Duration::from_millis(150);
        while Instant::now() < deadline {
            let Some(port) = self.port.as_mut() else {
                break;
            };
            match port.read(buf) {
                Ok(n) if n > 0 => {
                    let recv_ns = host_now_ns();
                    self.ingest(&buf[..n], recv_ns);
                }
                Ok(_) => break,
                Err(e) if e.kind() == ErrorKind::TimedOut => {}
                Err(_) => break,
            }
        }
    }

    /// Samples still held for a better clock fit go out with the fit there is.
    fn flush_held(&mut self) {
        let mut samples = Vec::new();
        self.stream.flush(&mut |item| {
            if let StreamItem::Sample(s) = item {
                samples.push(s);
            }
        });
        if !samples.is_empty() {
            let _ = self.out.send(LinkOutput::Samples(samples));
        }
    }

    fn report(&self) -> LinkReport {
        let snap = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        LinkReport {
            source: self.config.source.to_string(),
            port: self.port_name.clone(),
            identity: snap.identity.clone(),
            stats: self.stream.stats(),
            probe: snap.probe,
            reconnects: self.reconnects.clone(),
            disconnected_at_end: self.down.as_ref().map(|d| Outage {
                disconnected_ns: d.at_ns,
                reason: d.reason.clone(),
            }),
            resets: self.stream.resets().to_vec(),
        }
    }
}
