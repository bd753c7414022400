//! The probe link: one thread that owns the serial port, sends commands,
//! turns bytes into aligned samples, and reconnects by itself when the port
//! disappears and comes back. It never blocks the caller: samples and
//! events go out on a channel, a snapshot is there for the live view.

pub mod sim;
pub mod sim_locate;
pub mod source;
mod types;
mod worker;

pub use sim::SimProcess;
pub use source::{check_port, discover, ProbeSource, PROBE_USB_PID, PROBE_USB_VID, SIM_ENV};
pub use types::*;
use worker::Worker;

use crate::pb;
use crate::pb::host_to_probe::Cmd;
use crate::stream::{ProbeStream, StreamEvent, StreamItem};
use anyhow::Context;
use hostd_records::probe::ProbeSample;
/// The OS's own serial port type: a tty on Unix.
#[cfg(unix)]
pub type NativePort = serialport::TTYPort;
/// The OS's own serial port type: a COM port on Windows.
#[cfg(windows)]
pub type NativePort = serialport::COMPort;
use std::io::{ErrorKind, Read, Write};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Host Unix time in nanoseconds on the record timeline (the same monotonic-advanced
/// timeline, [`hostd_records::clock`], the workload stamps its file records with): the
/// time of the link's events.
pub fn host_now_ns() -> i64 {
    hostd_records::clock::now_ns()
}

/// Host Unix time in nanoseconds on the host's own timeline, never played faster
/// ([`hostd_records::clock::real_ns`]): what the probe's clock is fitted against, since the
/// probe's crystal runs in real time. Aligned samples are then put on the record timeline.
pub fn host_real_ns() -> i64 {
    hostd_records::clock::real_ns()
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
        let mut worker = Worker::new(
            config,
            port,
            path.display().to_string(),
            sim.clone(),
            out,
            Arc::clone(&snapshot),
        );
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
pub fn open_port(path: &std::path::Path) -> anyhow::Result<NativePort> {
    serialport::new(path.to_string_lossy(), 115_200)
        .timeout(Duration::from_millis(20))
        .open_native()
        .with_context(|| {
            format!(
                "could not open the probe port {} — is it plugged in, and not held by another hostd?{}",
                path.display(),
                source::ports_there_are(path)
            )
        })
}
