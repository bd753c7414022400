//! The probe stream into InfluxDB as a probe-recorder listener, for `hostd run` (the run's
//! writer, from `InfluxComponent::probe_stream`) and `hostd monitor` (its own writer).
//! The mapping of samples and bins to points is `hostd_influx::schema`'s, the same
//! `hostd import` uses.

use hostd_correlate::SampleListener;
use hostd_influx::{LiveSlot, ProbeStream, Report};
use hostd_probe::agg::AggRow;
use hostd_probe::link::LinkEvent;
use hostd_probe::stream::StreamEvent;
use hostd_probe::ProbeSample;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A [`ProbeStream`] as a [`SampleListener`]; with `close`, the writer is closed when the
/// stream ends and its report left in the given place (`hostd monitor`).
pub struct InfluxProbe {
    stream: ProbeStream,
    close: Option<(LiveSlot, Arc<Mutex<Option<Report>>>)>,
}

impl InfluxProbe {
    /// Streams into a run's writer (closed by its owner).
    pub fn new(stream: ProbeStream) -> Self {
        InfluxProbe {
            stream,
            close: None,
        }
    }

    /// Streams into `slot`'s writer and closes it when the stream ends, leaving the report
    /// in `report`.
    pub fn closing(slot: LiveSlot, report: Arc<Mutex<Option<Report>>>) -> Self {
        InfluxProbe {
            stream: ProbeStream::new(slot.clone()),
            close: Some((slot, report)),
        }
    }
}

/// How long the writer keeps backfilling at the end before leaving the rest in the spool.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(30);

impl SampleListener for InfluxProbe {
    fn samples(&mut self, samples: &[ProbeSample]) -> anyhow::Result<()> {
        self.stream.samples(samples)
    }

    fn agg(&mut self, row: &AggRow) -> anyhow::Result<()> {
        self.stream.agg(row)
    }

    fn event(&mut self, event: &LinkEvent) -> anyhow::Result<()> {
        if let LinkEvent::Stream(StreamEvent::Info(info)) = event {
            self.stream.set_probe_id(&info.probe_id);
        }
        Ok(())
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        self.stream.flush()?;
        if let Some((slot, report)) = self.close.take() {
            if let Some(live) = slot.take() {
                *report.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(live.writer.close(CLOSE_TIMEOUT));
            }
        }
        Ok(())
    }
}
