//! Records a probe link's output on its own thread: `probe/` (every aligned sample, in
//! Parquet segments closed every 10 s, and the 10 ms and 1 s min/mean/max levels beside
//! them), `probe-link.jsonl` (link events), the [`Correlator`] (a bounded window of the
//! record, files correlated as they end) and `files-probe.csv` (each file's figures once
//! final), and the [`ProbeFeed`]s of the run's other parts (e.g. an InfluxDB writer).
//! Used by `hostd run` and `hostd monitor` alike. Nothing it keeps grows with the run's
//! samples or files: the analysis and the report read the probe series from `probe/`, the
//! link events from `probe-link.jsonl` and the figures from `files-probe.csv`.

use crate::correlate::FileEnergy;
use crate::stream::Correlator;
use anyhow::Context;
use hostd_probe::link::{LinkEvent, LinkOutput};
use hostd_probe::stream::StreamEvent;
use hostd_records::agg::AggRow;
use hostd_records::binning::Aggregator;
use hostd_records::clock;
use hostd_records::files_probe::{self, FigureRow};
use hostd_records::latency::LatencyHistogram;
use hostd_records::probe_link::LinkRecord;
use hostd_records::{probe_levels, probe_store};
use hostd_store::{ProbeData, ProbeFeed};
use serde_json::json;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// What the recorder saw.
#[derive(Debug, Default)]
pub struct Recording {
    /// The correlation, flushed: the files registered with it correlated.
    pub correlator: Correlator,
    /// Samples written to `probe/`.
    pub samples: u64,
    /// 10 ms bins written to `probe/levels-*.parquet` (what `probe_agg.csv` held before).
    pub agg_rows: u64,
    /// Feed failures (reported once each; recording went on).
    pub listener_errors: Vec<String>,
    /// How late each 10 ms bin reached the feeds (the temperature gate, the steady-state
    /// thermometer, InfluxDB): host ns from the bin's end to its hand-over. The probe's USB
    /// batching, the alignment and a loaded host all add to it.
    pub delivery_lag: LatencyHistogram,
    /// `files-probe.csv`, with the rows of every file settled while recording (created
    /// by the first; `None` where the recorder had no directory of its own, in tests). A
    /// row it could not write (a full disk) is counted there, and its figures are lost.
    pub figures: Option<files_probe::Stream>,
}

impl Recording {
    /// Notes that `rows` are being handed to the feeds now.
    fn note_delivery(&mut self, rows: &[AggRow]) {
        let now = clock::real_ns();
        let width = probe_levels::Level::Ms10.width_ns();
        let playback = clock::playback();
        for row in rows {
            // Bin times are on the record timeline; the lag is the host's.
            let end = row.time_ns + width;
            let end = playback.map_or(end, |p| p.real_ns(end));
            self.delivery_lag
                .record(u64::try_from(now - end).unwrap_or(0));
        }
    }

    /// Appends the rows of `settled` to `files-probe.csv`.
    pub fn write_figures(&mut self, settled: Vec<FileEnergy>) {
        if let Some(w) = self.figures.as_mut() {
            let rows: Vec<FigureRow> = settled.into_iter().map(FigureRow::from).collect();
            w.append(&rows);
        }
    }
}

/// The recording thread.
pub struct ProbeRecorder {
    thread: JoinHandle<anyhow::Result<Recording>>,
    correlator: Arc<Mutex<Correlator>>,
}

struct Files {
    samples: probe_store::Writer,
    levels: probe_levels::Writer,
    /// The 1 s level's bins (the 10 ms ones come from the timeline).
    seconds: Aggregator,
    events: BufWriter<File>,
    /// `files-probe.csv`, handed to the [`Recording`].
    figures: Option<files_probe::Stream>,
}

impl Files {
    fn create(dir: &Path) -> anyhow::Result<Self> {
        let path = dir.join("probe-link.jsonl");
        let events =
            File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(Self {
            samples: probe_store::Writer::create(dir)?,
            levels: probe_levels::Writer::new(dir),
            seconds: Aggregator::new(probe_levels::Level::S1.width_ns()),
            events: BufWriter::new(events),
            figures: Some(files_probe::stream(dir)),
        })
    }
}

impl ProbeRecorder {
    /// Starts recording `rx` into `dir` (which must exist).
    pub fn spawn(
        rx: Receiver<LinkOutput>,
        dir: &Path,
        listeners: Vec<ProbeFeed>,
    ) -> anyhow::Result<Self> {
        let files = Files::create(dir)?;
        let correlator = Arc::new(Mutex::new(Correlator::new()));
        let shared = Arc::clone(&correlator);
        let thread = std::thread::Builder::new()
            .name("probe-recorder".into())
            .spawn(move || record(rx, files, listeners, shared))
            .context("cannot start the probe recorder thread")?;
        Ok(Self { thread, correlator })
    }

    /// The correlator the samples go to, to tell it of the probed files' starts and ends.
    pub fn correlator(&self) -> Arc<Mutex<Correlator>> {
        Arc::clone(&self.correlator)
    }

    /// Waits for the stream to end (the link stopped) and returns the recording.
    pub fn finish(self) -> anyhow::Result<Recording> {
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("the probe recorder thread panicked"))?
    }
}

/// The run's other parts that take the probe's data, each dropped at its first error.
struct Feeds {
    feeds: Vec<ProbeFeed>,
    failed: Vec<bool>,
}

impl Feeds {
    fn new(feeds: Vec<ProbeFeed>) -> Self {
        let failed = vec![false; feeds.len()];
        Self { feeds, failed }
    }

    /// Hands `data` to every feed that has not failed; a failure is noted in `rec` once.
    fn send(&mut self, rec: &mut Recording, data: ProbeData<'_>) {
        for (feed, failed) in self.feeds.iter_mut().zip(self.failed.iter_mut()) {
            if *failed {
                continue;
            }
            if let Err(e) = feed(data) {
                *failed = true;
                rec.listener_errors.push(format!("{e:#}"));
            }
        }
    }

    /// Hands on the 10 ms bins `rows` and notes how late they came.
    fn hand_bins(&mut self, rec: &mut Recording, rows: &[AggRow]) {
        for row in rows {
            self.send(rec, ProbeData::Bin(row));
        }
        rec.note_delivery(rows);
    }
}

/// Records `rx`, feeding `correlator` as it goes; takes it flushed into the recording.
fn record(
    rx: Receiver<LinkOutput>,
    mut files: Files,
    feeds: Vec<ProbeFeed>,
    correlator: Arc<Mutex<Correlator>>,
) -> anyhow::Result<Recording> {
    let lock = || correlator.lock().unwrap_or_else(|e| e.into_inner());
    let mut rec = Recording {
        figures: files.figures.take(),
        ..Recording::default()
    };
    let mut feeds = Feeds::new(feeds);
    for out in rx {
        match out {
            LinkOutput::Samples(samples) => {
                let (mut rows, mut seconds) = (Vec::new(), Vec::new());
                let settled = {
                    let mut c = lock();
                    for s in &samples {
                        if let Some(row) = c.push(s) {
                            rows.push(row);
                        }
                        seconds.extend(files.seconds.push(s));
                    }
                    c.advance();
                    c.take_settled()
                };
                // The feeds first: the temperature gate and the steady-state thermometer
                // judge the newest readings, and writing Parquet on a loaded host can take
                // long.
                feeds.send(&mut rec, ProbeData::Samples(&samples));
                feeds.hand_bins(&mut rec, &rows);
                rec.write_figures(settled);
                files.samples.write(&samples)?;
                rec.samples += samples.len() as u64;
                write_levels(&mut files, &mut rec, &rows, &seconds)?;
            }
            LinkOutput::Event(event) => {
                if let Some(r) = link_record(&event) {
                    let line = r.to_line();
                    writeln!(files.events, "{line}").context("cannot write probe-link.jsonl")?;
                    files.events.flush()?;
                }
                if let LinkEvent::Stream(StreamEvent::Info(info)) = &event {
                    feeds.send(&mut rec, ProbeData::Identity(&info.probe_id));
                }
            }
        }
    }
    let (last, settled) = {
        let mut c = lock();
        (c.flush(), c.take_settled())
    };
    let rows: Vec<_> = last.into_iter().collect();
    feeds.hand_bins(&mut rec, &rows);
    rec.write_figures(settled);
    let last_second: Vec<_> = files.seconds.flush().into_iter().collect();
    write_levels(&mut files, &mut rec, &rows, &last_second)?;
    files.samples.finish()?;
    files.levels.finish()?;
    files.events.flush()?;
    feeds.send(&mut rec, ProbeData::End);
    rec.correlator = std::mem::take(&mut *lock());
    Ok(rec)
}

fn write_levels(
    files: &mut Files,
    rec: &mut Recording,
    rows: &[AggRow],
    seconds: &[AggRow],
) -> anyhow::Result<()> {
    files.levels.write(rows, seconds)?;
    rec.agg_rows += rows.len() as u64;
    Ok(())
}

/// The `probe-link.jsonl` record of an event worth keeping (not every status).
fn link_record(event: &LinkEvent) -> Option<LinkRecord> {
    let now = hostd_probe::link::host_now_ns();
    let nested = |event: &str, time_ns: i64, key: &str, v: serde_json::Value| {
        let mut r = LinkRecord::new(event, time_ns);
        r.nested.insert(key.to_owned(), v);
        r
    };
    Some(match event {
        LinkEvent::Connected { port } => LinkRecord {
            port: Some(port.clone()),
            ..LinkRecord::new("connected", now)
        },
        LinkEvent::Disconnected { at_ns, reason } => LinkRecord {
            reason: Some(reason.clone()),
            ..LinkRecord::new("disconnected", *at_ns)
        },
        LinkEvent::Reconnected(r) => nested("reconnected", r.resumed_ns, "reconnect", json!(r)),
        LinkEvent::Stream(StreamEvent::Gap {
            next_seq,
            missing,
            probe_reported,
        }) => LinkRecord {
            next_seq: Some(*next_seq),
            missing: Some(*missing),
            probe_reported: Some(*probe_reported),
            ..LinkRecord::new("gap", now)
        },
        LinkEvent::Stream(StreamEvent::Restart { first_seq }) => LinkRecord {
            first_seq: Some(*first_seq),
            ..LinkRecord::new("sequence_restart", now)
        },
        LinkEvent::Stream(StreamEvent::ProbeError(e)) => LinkRecord {
            code: Some(i64::from(e.code)),
            detail: Some(e.detail.clone()),
            ..LinkRecord::new("probe_error", now)
        },
        LinkEvent::Stream(StreamEvent::Aligned(a)) => {
            nested("alignment", now, "alignment", json!(a))
        }
        LinkEvent::Stream(StreamEvent::Info(i)) => nested("device_info", now, "info", json!(i)),
        // The run's timeline of the host port: each status the probe sent (on a change,
        // or answering the start's request), with the budget it gives.
        LinkEvent::Stream(StreamEvent::Port(p)) => {
            // `port_status`, not `port`: a link record's `port` is the serial device.
            let mut r = nested("port", now, "port_status", json!(p));
            r.nested.insert(
                hostd_records::port_budget::MANIFEST_KEY.into(),
                json!(hostd_probe::port::budget(Some(p), None)),
            );
            r
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostd_records::ProbeSample;

    /// 30 s of samples at 1 kHz with a power step, in batches of 32 as the link sends them.
    fn samples() -> Vec<ProbeSample> {
        (0..30_000u64)
            .map(|i| ProbeSample {
                time_ns: 1_795_280_420_000_000_000 + i as i64 * 1_000_000,
                seq: i,
                vbus_v: Some(5.0),
                current_a: Some(0.4),
                power_w: Some(if i < 15_000 { 2.0 } else { 3.5 }),
                energy_j: Some((i / 16 * 16) as f64 * 2e-3),
                enclosure_temp_c: Some(25.0 + i as f64 * 1e-4),
                ..Default::default()
            })
            .collect()
    }

    fn recorded(dir: &Path) -> Recording {
        let (tx, rx) = std::sync::mpsc::channel();
        for batch in samples().chunks(32) {
            tx.send(LinkOutput::Samples(batch.to_vec())).unwrap();
        }
        drop(tx);
        let correlator = Arc::new(Mutex::new(Correlator::new()));
        record(rx, Files::create(dir).unwrap(), Vec::new(), correlator).unwrap()
    }

    #[test]
    fn the_directory_gives_the_series_of_every_sample_or_of_the_bins() {
        let d = tempfile::tempdir().unwrap();
        let rec = recorded(d.path());
        assert_eq!(rec.samples, 30_000);
        // Short enough: every sample, exactly as the link gave them (the series `hostd
        // run` and `hostd analyze` read from the directory).
        let mut fed = hostd_records::ProbeSeries::default();
        samples().iter().for_each(|s| fed.push(s));
        fed.finish();
        let from_dir = hostd_records::run::probe_series_within(d.path(), 100_000).unwrap();
        assert_eq!(fed.len(), 30_000);
        assert_eq!(format!("{fed:?}"), format!("{from_dir:?}"));

        // Longer than the series may hold: one point per 10 ms bin, the series of the
        // bins the correlation's timeline makes of the same samples.
        let mut timeline = crate::timeline::Timeline::new();
        let mut bins: Vec<_> = samples().iter().filter_map(|s| timeline.push(s)).collect();
        bins.extend(timeline.flush());
        let long = hostd_records::run::series_of_bins_within(&bins, 5_000);
        assert_eq!(long.len(), 3_000);
        let from_dir = hostd_records::run::probe_series_within(d.path(), 5_000).unwrap();
        assert_eq!(format!("{long:?}"), format!("{from_dir:?}"));
        // Every sample is still on disk.
        assert_eq!(
            hostd_records::probe_store::read(d.path()).unwrap().len(),
            30_000
        );
        // What the recorder kept: a window of the record, not the 30 000 samples.
        assert!(
            rec.correlator.retained() < 10_000,
            "{}",
            rec.correlator.retained()
        );
        assert_eq!(rec.agg_rows, 3_000);
    }
}
