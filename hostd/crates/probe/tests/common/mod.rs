//! A protocol peer on the master side of a real pseudo-terminal: answers
//! GetInfo/Sync/GetStatus, streams batches at the requested rate after
//! Start, and can "unplug" (close the pty, reappear behind the same
//! symlink later, keep counting samples meanwhile as dropped).
#![allow(dead_code)]

use hostd_probe::frame::FrameDecoder;
use hostd_probe::message::encode_probe_message;
use hostd_probe::pb;
use hostd_probe::pb::probe_to_host::Msg;
use prost::Message;
use serialport::{SerialPort, TTYPort};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub const CURRENT_LSB_A: f32 = 10.0 / 524_288.0;
pub const POWER_W: f64 = 5.0;
/// Every sample's raw VBUS (5.0 V).
pub const VBUS_RAW: i32 = 25_600;
/// A sagging batch's raw VBUS minimum (4.5 V), see [`PeerProbe::sag_every`].
pub const SAG_RAW: i32 = 23_040;

pub struct PeerProbe {
    pub link: PathBuf,
    stop: Arc<AtomicBool>,
    unplug_ms: Arc<AtomicU64>,
    freeze_ms: Arc<AtomicU64>,
    sag_every: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl PeerProbe {
    /// Starts a peer whose clock runs `drift_ppm` fast, reachable at `dir/probe`.
    pub fn start(dir: &Path, drift_ppm: f64) -> Self {
        let link = dir.join("probe");
        let stop = Arc::new(AtomicBool::new(false));
        let unplug_ms = Arc::new(AtomicU64::new(0));
        let freeze_ms = Arc::new(AtomicU64::new(0));
        let sag_every = Arc::new(AtomicU64::new(0));
        let (master, slave) = open_pair(&link);
        let knobs = Knobs {
            stop: stop.clone(),
            unplug: unplug_ms.clone(),
            freeze: freeze_ms.clone(),
            sag_every: sag_every.clone(),
        };
        let l = link.clone();
        let thread = std::thread::spawn(move || run(master, slave, l, drift_ppm, knobs));
        Self {
            link,
            stop,
            unplug_ms,
            freeze_ms,
            sag_every,
            thread: Some(thread),
        }
    }

    /// Speaks wire v3 from the next `GetInfo` on (call it before the link starts): every
    /// batch carries its VBUS minimum, and every `n`-th batch's minimum is [`SAG_RAW`]
    /// (4.5 V) while each of its samples reads 5.0 V, a sag shorter than a sample period.
    pub fn sag_every(&self, n: u64) {
        self.sag_every.store(n, Ordering::SeqCst);
    }

    /// Closes the pty for `ms` milliseconds, then reappears behind the link.
    pub fn unplug(&self, ms: u64) {
        self.unplug_ms.store(ms, Ordering::SeqCst);
    }

    /// Hangs for `ms` milliseconds with the pty open: reads and sends
    /// nothing (a wedged USB device), then carries on.
    pub fn freeze(&self, ms: u64) {
        self.freeze_ms.store(ms, Ordering::SeqCst);
    }
}

impl Drop for PeerProbe {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn open_pair(link: &Path) -> (TTYPort, TTYPort) {
    let (mut master, slave) = TTYPort::pair().expect("pty pair");
    master.set_timeout(Duration::from_millis(2)).unwrap();
    let tmp = link.with_extension("new");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(slave.name().unwrap(), &tmp).unwrap();
    std::fs::rename(&tmp, link).unwrap();
    (master, slave)
}

struct State {
    epoch: Instant,
    drift: f64,
    running: bool,
    rate_hz: u32,
    next_seq: u64,
    sent_seq: u64,
    started_at_us: u64,
    energy_counts: f64,
    dropped: u64,
    taken: u64,
    /// Wire v3 with a sag every this many batches (0: wire v1, no batch minimum).
    sag_every: u64,
}

impl State {
    fn now_us(&self) -> u64 {
        (self.epoch.elapsed().as_nanos() as f64 * (1.0 + self.drift * 1e-6) / 1000.0) as u64
    }
}

/// What the test tells the peer's thread.
struct Knobs {
    stop: Arc<AtomicBool>,
    unplug: Arc<AtomicU64>,
    freeze: Arc<AtomicU64>,
    sag_every: Arc<AtomicU64>,
}

fn run(mut master: TTYPort, mut slave: TTYPort, link: PathBuf, drift: f64, knobs: Knobs) {
    let Knobs {
        stop,
        unplug,
        freeze,
        sag_every,
    } = knobs;
    let mut st = State {
        epoch: Instant::now(),
        drift,
        running: false,
        rate_hz: 1000,
        next_seq: 0,
        sent_seq: 0,
        started_at_us: 0,
        energy_counts: 0.0,
        dropped: 0,
        taken: 0,
        sag_every: 0,
    };
    let mut decoder = FrameDecoder::default();
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::SeqCst) {
        let frozen = freeze.swap(0, Ordering::SeqCst);
        if frozen > 0 {
            std::thread::sleep(Duration::from_millis(frozen));
        }
        let ms = unplug.swap(0, Ordering::SeqCst);
        if ms > 0 {
            drop(master);
            drop(slave);
            std::thread::sleep(Duration::from_millis(ms));
            (master, slave) = open_pair(&link);
            decoder = FrameDecoder::default();
        }
        let mut commands = Vec::new();
        if let Ok(n) = master.read(&mut buf) {
            decoder.push(&buf[..n], |f| {
                if let Ok(p) = f {
                    if let Ok(m) = pb::HostToProbe::decode(p) {
                        commands.push(m);
                    }
                }
            });
        }
        for cmd in commands {
            let rx = st.now_us();
            let reply = match cmd.cmd {
                Some(pb::host_to_probe::Cmd::GetInfo(_)) => Msg::Info(pb::DeviceInfo {
                    protocol_version: {
                        st.sag_every = sag_every.load(Ordering::SeqCst);
                        if st.sag_every > 0 {
                            3
                        } else {
                            1
                        }
                    },
                    firmware_version: "peer-1".into(),
                    probe_id: "peer".into(),
                    shunt_micro_ohm: 5000,
                    current_lsb_a: CURRENT_LSB_A,
                    max_rate_hz: 10_000,
                    max_batch_samples: 32,
                    ..Default::default()
                }),
                Some(pb::host_to_probe::Cmd::Sync(s)) => Msg::Sync(pb::SyncReply {
                    sync_id: s.sync_id,
                    host_time_ns: s.host_time_ns,
                    probe_rx_us: rx,
                    probe_tx_us: st.now_us(),
                }),
                Some(pb::host_to_probe::Cmd::Start(s)) => {
                    st.running = true;
                    st.rate_hz = if s.rate_hz == 0 { 1000 } else { s.rate_hz };
                    st.next_seq = 0;
                    st.sent_seq = 0;
                    st.started_at_us = st.now_us();
                    Msg::Ack(pb::Ack {
                        request_id: cmd.request_id,
                    })
                }
                Some(pb::host_to_probe::Cmd::Stop(_)) => {
                    st.running = false;
                    Msg::Ack(pb::Ack {
                        request_id: cmd.request_id,
                    })
                }
                Some(pb::host_to_probe::Cmd::GetStatus(_)) => Msg::Status(pb::Status {
                    uptime_us: st.now_us(),
                    samples_taken: st.taken,
                    samples_dropped: st.dropped,
                    running: st.running,
                    rate_hz: st.rate_hz,
                    ..Default::default()
                }),
                _ => Msg::Ack(pb::Ack {
                    request_id: cmd.request_id,
                }),
            };
            let _ = master.write_all(&encode_probe_message(reply));
        }
        if st.running {
            emit_due(&mut st, &mut master);
        }
    }
}

/// Sends every complete 32-sample batch that is due; samples taken while a
/// previous write failed are counted as dropped and skipped.
fn emit_due(st: &mut State, master: &mut TTYPort) {
    let period_us = 1e6 / st.rate_hz as f64;
    let due = ((st.now_us() - st.started_at_us) as f64 / period_us) as u64;
    // A 256-sample ring: what did not fit while the port was gone is dropped.
    if due > st.next_seq + 256 {
        let skip = (due - 256 - st.next_seq) / 32 * 32 + 32;
        st.next_seq += skip;
        st.taken += skip;
        st.dropped += skip;
    }
    while due >= st.next_seq + 32 {
        let first = st.next_seq;
        let power_raw = (POWER_W / (3.2 * CURRENT_LSB_A as f64)) as u32;
        let energy_lsb = 16.0 * 3.2 * CURRENT_LSB_A as f64;
        let mut batch = pb::SampleBatch {
            first_seq: first,
            first_time_us: st.started_at_us + (first as f64 * period_us) as u64,
            dropped_before: (first - st.sent_seq) as u32,
            ..Default::default()
        };
        for i in 0..32u64 {
            let t0 = ((first + i) as f64 * period_us) as u64;
            let t1 = ((first + i + 1) as f64 * period_us) as u64;
            batch.dt_us.push(if i == 0 { 0 } else { (t1 - t0) as u32 });
            batch.vbus.push(VBUS_RAW);
            batch.current.push(52_429);
            batch.power.push(power_raw);
            batch.die_temp.push(3_200);
            st.energy_counts += POWER_W * period_us * 1e-6 / energy_lsb;
            if i % 16 == 15 {
                batch.accumulators.push(pb::Accumulators {
                    seq: first + i,
                    energy: st.energy_counts as u64,
                    charge: 0,
                });
            }
        }
        if st.sag_every > 0 {
            let sags = (first / 32).is_multiple_of(st.sag_every);
            batch.vbus_min = Some(if sags { SAG_RAW } else { VBUS_RAW });
        }
        st.next_seq += 32;
        st.taken += 32;
        let frame = encode_probe_message(Msg::Batch(batch));
        if master.write_all(&frame).is_ok() {
            st.sent_seq = st.next_seq;
        } else {
            st.dropped += 32;
        }
    }
}

pub fn drain(
    rx: &std::sync::mpsc::Receiver<hostd_probe::link::LinkOutput>,
) -> (
    Vec<hostd_records::probe::ProbeSample>,
    Vec<hostd_probe::link::LinkEvent>,
) {
    let (mut samples, mut events) = (Vec::new(), Vec::new());
    while let Ok(out) = rx.try_recv() {
        match out {
            hostd_probe::link::LinkOutput::Samples(s) => samples.extend(s),
            hostd_probe::link::LinkOutput::Event(e) => events.push(e),
        }
    }
    (samples, events)
}

/// Starts a link with `config` and waits until samples flow.
pub fn start_link(
    config: hostd_probe::link::LinkConfig,
) -> (
    hostd_probe::link::ProbeLink,
    std::sync::mpsc::Receiver<hostd_probe::link::LinkOutput>,
) {
    let (tx, rx) = std::sync::mpsc::channel();
    let link = hostd_probe::link::ProbeLink::start(config, tx).expect("link starts");
    link.wait_for_samples(Duration::from_secs(5))
        .expect("samples flow");
    (link, rx)
}

/// Lets the link run for `wait`, stops it and returns its report with every
/// sample and event it sent.
pub fn stop_after(
    link: hostd_probe::link::ProbeLink,
    rx: &std::sync::mpsc::Receiver<hostd_probe::link::LinkOutput>,
    wait: Duration,
) -> (
    hostd_probe::link::LinkReport,
    Vec<hostd_records::probe::ProbeSample>,
    Vec<hostd_probe::link::LinkEvent>,
) {
    std::thread::sleep(wait);
    let report = link.stop();
    let (samples, events) = drain(rx);
    (report, samples, events)
}
