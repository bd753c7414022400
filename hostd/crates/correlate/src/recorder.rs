//! Records a probe link's output on its own thread: `probe/` (every aligned sample, in
//! Parquet segments closed every 10 s, and the 10 ms and 1 s min/mean/max levels beside
//! them), `probe-link.jsonl` (link
//! events), the in-memory [`Timeline`] for correlation, and the [`ProbeFeed`]s of the
//! run's other parts (e.g. an InfluxDB writer). Used by `hostd run` and `hostd monitor`
//! alike.

use crate::timeline::Timeline;
use anyhow::Context;
use hostd_probe::agg::Aggregator;
use hostd_probe::link::{LinkEvent, LinkOutput};
use hostd_probe::stream::StreamEvent;
use hostd_records::agg::AggRow;
use hostd_records::probe_link::LinkRecord;
use hostd_records::{probe_levels, probe_store, ProbeSeries};
use hostd_store::{ProbeData, ProbeFeed};
use serde_json::json;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::mpsc::Receiver;
use std::thread::JoinHandle;

/// What the recorder saw.
#[derive(Debug, Default)]
pub struct Recording {
    /// The compact timeline (10 ms bins + accumulator readings).
    pub timeline: Timeline,
    /// The samples in columns, for the analysis and the report: every sample (what `probe/`
    /// holds) up to [`hostd_records::run::SERIES_POINTS_MAX`] of them; beyond, the series
    /// `hostd analyze` reads from the summary levels, built at the end from the timeline's
    /// 10 ms bins, so memory does not grow with every sample.
    pub series: ProbeSeries,
    /// Samples written to `probe/`.
    pub samples: u64,
    /// 10 ms bins written to `probe/levels-*.parquet` (what `probe_agg.csv` held before).
    pub agg_rows: u64,
    /// Sequence gaps seen (time ns, missing samples).
    pub gaps: Vec<(i64, u64)>,
    /// The link events written to `probe-link.jsonl`, in order.
    pub link: Vec<LinkRecord>,
    /// Feed failures (reported once each; recording went on).
    pub listener_errors: Vec<String>,
}

/// The recording thread.
pub struct ProbeRecorder {
    thread: JoinHandle<anyhow::Result<Recording>>,
}

struct Files {
    samples: probe_store::Writer,
    levels: probe_levels::Writer,
    /// The 1 s level's bins (the 10 ms ones come from the timeline).
    seconds: Aggregator,
    events: BufWriter<File>,
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
        let thread = std::thread::Builder::new()
            .name("probe-recorder".into())
            .spawn(move || record(rx, files, listeners, hostd_records::run::SERIES_POINTS_MAX))
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

/// Records `rx`; the series keeps every sample while there are at most `series_max`.
fn record(
    rx: Receiver<LinkOutput>,
    mut files: Files,
    mut listeners: Vec<ProbeFeed>,
    series_max: u64,
) -> anyhow::Result<Recording> {
    let mut rec = Recording::default();
    let mut failed = vec![false; listeners.len()];
    let mut each = |rec: &mut Recording, data: ProbeData<'_>| {
        for (feed, failed) in listeners.iter_mut().zip(failed.iter_mut()) {
            if *failed {
                continue;
            }
            if let Err(e) = feed(data) {
                *failed = true;
                rec.listener_errors.push(format!("{e:#}"));
            }
        }
    };
    for out in rx {
        match out {
            LinkOutput::Samples(samples) => {
                let (mut rows, mut seconds) = (Vec::new(), Vec::new());
                let keep_every_sample = rec.samples + samples.len() as u64 <= series_max;
                if !keep_every_sample && !rec.series.is_empty() {
                    rec.series = ProbeSeries::default(); // from the bins at the end
                }
                for s in &samples {
                    if keep_every_sample {
                        rec.series.push(s);
                    }
                    if let Some(row) = rec.timeline.push(s) {
                        rows.push(row);
                    }
                    seconds.extend(files.seconds.push(s));
                }
                files.samples.write(&samples)?;
                rec.samples += samples.len() as u64;
                write_levels(&mut files, &mut rec, &rows, &seconds)?;
                each(&mut rec, ProbeData::Samples(&samples));
                for row in &rows {
                    each(&mut rec, ProbeData::Bin(row));
                }
            }
            LinkOutput::Event(event) => {
                if let Some(r) = link_record(&event) {
                    writeln!(files.events, "{}", r.to_line())
                        .context("cannot write probe-link.jsonl")?;
                    files.events.flush()?;
                    rec.link.push(r);
                }
                if let LinkEvent::Stream(StreamEvent::Gap { missing, .. }) = &event {
                    rec.gaps.push((hostd_probe::link::host_now_ns(), *missing));
                }
                if let LinkEvent::Stream(StreamEvent::Info(info)) = &event {
                    each(&mut rec, ProbeData::Identity(&info.probe_id));
                }
            }
        }
    }
    let last = rec.timeline.flush();
    let last_second: Vec<_> = files.seconds.flush().into_iter().collect();
    let rows: Vec<_> = last.into_iter().collect();
    write_levels(&mut files, &mut rec, &rows, &last_second)?;
    if let Some(row) = &last {
        each(&mut rec, ProbeData::Bin(row));
    }
    if rec.samples > series_max {
        rec.series = hostd_records::run::series_of_bins_within(&rec.timeline.bins, series_max);
    }
    rec.series.finish();
    files.samples.finish()?;
    files.levels.finish()?;
    files.events.flush()?;
    each(&mut rec, ProbeData::End);
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

    fn recorded(dir: &Path, series_max: u64) -> Recording {
        let (tx, rx) = std::sync::mpsc::channel();
        for batch in samples().chunks(32) {
            tx.send(LinkOutput::Samples(batch.to_vec())).unwrap();
        }
        drop(tx);
        record(rx, Files::create(dir).unwrap(), Vec::new(), series_max).unwrap()
    }

    #[test]
    fn a_long_recording_keeps_the_series_analyze_reads_not_every_sample() {
        let d = tempfile::tempdir().unwrap();
        // Short enough: every sample, as the run directory gives them.
        let all = recorded(d.path(), 100_000);
        assert_eq!(all.series.len(), 30_000);
        let from_dir = hostd_records::run::probe_series_within(d.path(), 100_000).unwrap();
        assert_eq!(format!("{:?}", all.series), format!("{from_dir:?}"));

        // Longer than the series may hold: one point per 10 ms bin, the same series
        // `hostd analyze` builds from the levels it wrote.
        let d = tempfile::tempdir().unwrap();
        let long = recorded(d.path(), 5_000);
        assert_eq!(long.samples, 30_000);
        assert_eq!(long.series.len(), 3_000);
        let from_dir = hostd_records::run::probe_series_within(d.path(), 5_000).unwrap();
        assert_eq!(format!("{:?}", long.series), format!("{from_dir:?}"));
        // Every sample is still on disk.
        assert_eq!(
            hostd_records::probe_store::read(d.path()).unwrap().len(),
            30_000
        );
    }
}
