//! Points written while a run goes: the run's one [`Writer`] and tags in a [`LiveSlot`]
//! shared by the parts that write live, and [`ProbeStream`], the probe's samples and
//! 10 ms bins into that writer as they arrive (so dashboards follow the probe during the
//! run, through the same spool and backfill as everything else).

use crate::schema::{agg_point, sample_point, RunTags};
use crate::{Point, Writer};
use hostd_records::agg::AggRow;
use hostd_records::probe::ProbeSample;
use hostd_store::ProbeData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Most probe records kept while the writer is not started yet (a few seconds at most in
/// practice: the probe starts before the InfluxDB part); more are counted as dropped.
/// 100 s at 1 kHz, about 15 MB (a record takes 152 bytes).
pub const MAX_WAITING: usize = 100_000;

/// A run's writer and the tags of its points.
#[derive(Debug)]
pub struct LiveWriter {
    /// The run's writer (one spool, one ordered stream).
    pub writer: Writer,
    /// Tags of every point of the run.
    pub tags: RunTags,
}

/// A [`LiveWriter`] shared by the parts of a run; empty until the owner starts it.
#[derive(Debug, Clone, Default)]
pub struct LiveSlot {
    inner: Arc<Mutex<Option<LiveWriter>>>,
    streamed: Arc<AtomicU64>,
}

impl LiveSlot {
    /// Puts the run's writer in the slot.
    pub fn fill(&self, live: LiveWriter) {
        *self.inner.lock().unwrap_or_else(|e| e.into_inner()) = Some(live);
    }

    /// Takes the writer out (at the end of the run).
    pub fn take(&self) -> Option<LiveWriter> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Runs `f` on the writer, if started; `None` otherwise.
    pub fn with<R>(&self, f: impl FnOnce(&mut LiveWriter) -> R) -> Option<R> {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .map(f)
    }

    /// Probe points queued live through [`ProbeStream`]s of this slot (not those the
    /// writer's full queue dropped).
    pub fn probe_points(&self) -> u64 {
        self.streamed.load(Ordering::Relaxed)
    }
}

/// The probe stream into a run's writer (see the module docs). Records that arrive before
/// the writer is started wait in memory (up to [`MAX_WAITING`]).
#[derive(Debug)]
pub struct ProbeStream {
    slot: LiveSlot,
    waiting: Vec<Record>,
    dropped: u64,
}

#[derive(Debug, Clone, Copy)]
enum Record {
    Sample(ProbeSample),
    Agg(AggRow),
}

impl Record {
    fn point(&self, tags: &RunTags) -> Point {
        match self {
            Record::Sample(s) => sample_point(tags, s),
            Record::Agg(r) => agg_point(tags, r),
        }
    }
}

impl ProbeStream {
    /// A stream into `slot`'s writer.
    pub fn new(slot: LiveSlot) -> Self {
        ProbeStream {
            slot,
            waiting: Vec::new(),
            dropped: 0,
        }
    }

    /// Aligned samples, in order.
    pub fn samples(&mut self, samples: &[ProbeSample]) -> anyhow::Result<()> {
        self.push(samples.iter().map(|s| Record::Sample(*s)))
    }

    /// A completed 10 ms bin.
    pub fn agg(&mut self, row: &AggRow) -> anyhow::Result<()> {
        self.push(std::iter::once(Record::Agg(*row)))
    }

    /// Sets the `probe` tag when none is known yet (the probe's id from its DeviceInfo).
    pub fn set_probe_id(&self, id: &str) {
        if id.is_empty() {
            return;
        }
        self.slot.with(|l| {
            if l.tags.probe.is_none() {
                l.tags.probe = Some(id.to_string());
            }
        });
    }

    /// Records dropped because the writer never started in time.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Sends the records still waiting, if the writer has started (at the stream's end).
    pub fn flush(&mut self) -> anyhow::Result<()> {
        self.push(std::iter::empty())
    }

    /// Takes one piece of the probe stream as a run part's probe feed gets it.
    pub fn feed(&mut self, data: ProbeData<'_>) -> anyhow::Result<()> {
        match data {
            ProbeData::Samples(s) => self.samples(s),
            ProbeData::Bin(row) => self.agg(row),
            ProbeData::Identity(id) => {
                self.set_probe_id(id);
                Ok(())
            }
            ProbeData::End => self.flush(),
        }
    }

    fn push(&mut self, records: impl Iterator<Item = Record>) -> anyhow::Result<()> {
        let mut batch: Vec<Record> = records.collect();
        let waiting = &mut self.waiting;
        let sent = self.slot.with(|l| -> anyhow::Result<usize> {
            let points: Vec<Point> = waiting
                .drain(..)
                .chain(batch.drain(..))
                .map(|r| r.point(&l.tags))
                .collect();
            // Live: never stall the probe; a full queue drops (and counts) instead.
            Ok(if l.writer.offer_all(&points)? {
                points.len()
            } else {
                0
            })
        });
        match sent {
            Some(n) => {
                self.slot.streamed.fetch_add(n? as u64, Ordering::Relaxed);
            }
            None => {
                // Not started yet: keep them (bounded) until it is.
                for r in batch {
                    if self.waiting.len() < MAX_WAITING {
                        self.waiting.push(r);
                    } else {
                        if self.dropped == 0 {
                            tracing::warn!(
                                "InfluxDB writer not started; probe records beyond {MAX_WAITING} are dropped"
                            );
                        }
                        self.dropped += 1;
                    }
                }
            }
        }
        Ok(())
    }
}
