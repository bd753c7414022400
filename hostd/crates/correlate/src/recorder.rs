//! Records a probe link's output on its own thread: `probe.csv` (every
//! aligned sample), `probe_agg.csv` (10 ms bins), `probe-link.jsonl` (link
//! events), the in-memory [`Timeline`] for correlation, and any extra
//! [`SampleListener`]s (e.g. an InfluxDB writer). Used by `hostd run` and
//! `hostd monitor` alike.

use crate::timeline::Timeline;
use anyhow::Context;
use hostd_probe::agg::AggRow;
use hostd_probe::link::{LinkEvent, LinkOutput};
use hostd_probe::stream::StreamEvent;
use hostd_probe::ProbeSample;
use hostd_records::{agg, probe};
use serde_json::json;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::mpsc::Receiver;
use std::thread::JoinHandle;

/// Receives the probe stream besides the run directory files.
pub trait SampleListener: Send {
    /// Aligned samples, in order.
    fn samples(&mut self, _samples: &[ProbeSample]) -> anyhow::Result<()> {
        Ok(())
    }
    /// A completed 10 ms bin.
    fn agg(&mut self, _row: &AggRow) -> anyhow::Result<()> {
        Ok(())
    }
    /// A link event.
    fn event(&mut self, _event: &LinkEvent) -> anyhow::Result<()> {
        Ok(())
    }
    /// The stream ended.
    fn finish(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// What the recorder saw.
#[derive(Debug, Default)]
pub struct Recording {
    /// The compact timeline (10 ms bins + accumulator readings).
    pub timeline: Timeline,
    /// Samples written to `probe.csv`.
    pub samples: u64,
    /// Rows written to `probe_agg.csv`.
    pub agg_rows: u64,
    /// Sequence gaps seen (time ns, missing samples).
    pub gaps: Vec<(i64, u64)>,
    /// Listener failures (reported once each; recording went on).
    pub listener_errors: Vec<String>,
}

/// The recording thread.
pub struct ProbeRecorder {
    thread: JoinHandle<anyhow::Result<Recording>>,
}

struct Files {
    samples: probe::Writer,
    agg: agg::Writer,
    events: BufWriter<File>,
}

impl Files {
    fn create(dir: &Path) -> anyhow::Result<Self> {
        let path = dir.join("probe-link.jsonl");
        let events =
            File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(Self {
            samples: probe::Writer::create(dir)?,
            agg: agg::Writer::create(dir)?,
            events: BufWriter::new(events),
        })
    }
}

impl ProbeRecorder {
    /// Starts recording `rx` into `dir` (which must exist).
    pub fn spawn(
        rx: Receiver<LinkOutput>,
        dir: &Path,
        listeners: Vec<Box<dyn SampleListener>>,
    ) -> anyhow::Result<Self> {
        let files = Files::create(dir)?;
        let thread = std::thread::Builder::new()
            .name("probe-recorder".into())
            .spawn(move || record(rx, files, listeners))
            .context("cannot start the probe recorder thread")?;
        Ok(Self { thread })
    }

    /// Waits for the stream to end (the link stopped) and returns the recording.
    pub fn finish(self) -> anyhow::Result<Recording> {
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("the probe recorder thread panicked"))?
    }
}

fn record(
    rx: Receiver<LinkOutput>,
    mut files: Files,
    mut listeners: Vec<Box<dyn SampleListener>>,
) -> anyhow::Result<Recording> {
    let mut rec = Recording::default();
    let mut failed = vec![false; listeners.len()];
    let mut each =
        |rec: &mut Recording, f: &mut dyn FnMut(&mut dyn SampleListener) -> anyhow::Result<()>| {
            for (l, failed) in listeners.iter_mut().zip(failed.iter_mut()) {
                if *failed {
                    continue;
                }
                if let Err(e) = f(l.as_mut()) {
                    *failed = true;
                    rec.listener_errors.push(format!("{e:#}"));
                }
            }
        };
    for out in rx {
        match out {
            LinkOutput::Samples(samples) => {
                let mut rows = Vec::new();
                for s in &samples {
                    if let Some(row) = rec.timeline.push(s) {
                        rows.push(row);
                    }
                }
                files.samples.write(&samples)?;
                rec.samples += samples.len() as u64;
                write_agg(&mut files, &mut rec, &rows)?;
                each(&mut rec, &mut |l| l.samples(&samples));
                for row in &rows {
                    each(&mut rec, &mut |l| l.agg(row));
                }
            }
            LinkOutput::Event(event) => {
                if let Some(line) = event_json(&event) {
                    writeln!(files.events, "{line}").context("cannot write probe-link.jsonl")?;
                    files.events.flush()?;
                }
                if let LinkEvent::Stream(StreamEvent::Gap { missing, .. }) = &event {
                    rec.gaps.push((hostd_probe::link::host_now_ns(), *missing));
                }
                each(&mut rec, &mut |l| l.event(&event));
            }
        }
    }
    if let Some(row) = rec.timeline.flush() {
        write_agg(&mut files, &mut rec, &[row])?;
        each(&mut rec, &mut |l| l.agg(&row));
    }
    files.samples.flush()?;
    files.agg.flush()?;
    files.events.flush()?;
    each(&mut rec, &mut |l| l.finish());
    Ok(rec)
}

fn write_agg(files: &mut Files, rec: &mut Recording, rows: &[AggRow]) -> anyhow::Result<()> {
    files.agg.write(rows)?;
    rec.agg_rows += rows.len() as u64;
    Ok(())
}

/// The `probe-link.jsonl` line of an event worth keeping (not every status).
fn event_json(event: &LinkEvent) -> Option<serde_json::Value> {
    let now = hostd_probe::link::host_now_ns();
    Some(match event {
        LinkEvent::Connected { port } => {
            json!({"event": "connected", "time_ns": now, "port": port})
        }
        LinkEvent::Disconnected { at_ns, reason } => {
            json!({"event": "disconnected", "time_ns": at_ns, "reason": reason})
        }
        LinkEvent::Reconnected(r) => {
            json!({"event": "reconnected", "time_ns": r.resumed_ns, "reconnect": r})
        }
        LinkEvent::Stream(StreamEvent::Gap {
            next_seq,
            missing,
            probe_reported,
        }) => {
            json!({"event": "gap", "time_ns": now, "next_seq": next_seq, "missing": missing, "probe_reported": probe_reported})
        }
        LinkEvent::Stream(StreamEvent::Restart { first_seq }) => {
            json!({"event": "sequence_restart", "time_ns": now, "first_seq": first_seq})
        }
        LinkEvent::Stream(StreamEvent::ProbeError(e)) => {
            json!({"event": "probe_error", "time_ns": now, "code": e.code, "detail": e.detail})
        }
        LinkEvent::Stream(StreamEvent::Aligned(a)) => {
            json!({"event": "alignment", "time_ns": now, "alignment": a})
        }
        LinkEvent::Stream(StreamEvent::Info(i)) => {
            json!({"event": "device_info", "time_ns": now, "info": i})
        }
        _ => return None,
    })
}
