//! The link thread: owns the port, sends commands, decodes and aligns, detects a lost
//! port and reconnects, and resumes the stream (re-sending Start when the probe reset).

use super::*;

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

pub(super) struct Worker {
    config: LinkConfig,
    stream: ProbeStream,
    port: Option<NativePort>,
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
    /// A worker on the open `port` (`port_name` for messages), sending to `out`.
    pub(super) fn new(
        config: LinkConfig,
        port: NativePort,
        port_name: String,
        sim: Option<Arc<SimProcess>>,
        out: Sender<LinkOutput>,
        snapshot: Arc<Mutex<LinkSnapshot>>,
    ) -> Self {
        Worker {
            config,
            stream: ProbeStream::new(),
            port: Some(port),
            port_name,
            sim,
            out,
            snapshot,
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
        }
    }

    pub(super) fn run(&mut self, control: Receiver<Control>) -> LinkReport {
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
                let recv_ns = host_real_ns();
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
            StreamEvent::Info(info) => {
                snap.identity = Some(ProbeIdentity::from(info));
                snap.port_sensing = crate::port::PortSensing::from_info(Some(info));
                drop(snap);
                // A probe that reads CC says what the port offers now (it also sends
                // each change by itself).
                if crate::port::PortSensing::from_info(Some(info))
                    == crate::port::PortSensing::Present
                {
                    self.send(Cmd::GetPortStatus(pb::GetPortStatus {}));
                }
            }
            StreamEvent::Port(port) => snap.port_status = Some(port.clone()),
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
            host_time_ns: host_real_ns() as u64,
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
                    let recv_ns = host_real_ns();
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
            port_status: snap.port_status.clone(),
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
