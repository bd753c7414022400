//! [`InfluxSink`]: the InfluxDB destination of a live run, as a `hostd_store::RecordSink`.
//!
//! It writes the same points `hostd import` makes from the run directory (see
//! [`crate::schema`]), so a run written live and imported later agrees field for field.
//! Points wait in `RUN_DIR/spool/` while InfluxDB is away and are backfilled in order.

use crate::schema::{m, RunTags};
use crate::{Point, Report, Target, Writer, WriterConfig, WriterHandle};
use hostd_store::{Manifest, RecordSink, Summary};
use hostd_workload::events::{FileRecord, IntervalRecord};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// How long `finish` keeps backfilling before leaving the rest in the spool.
pub const FINISH_TIMEOUT: Duration = Duration::from_secs(30);

/// The InfluxDB record sink of a run.
pub struct InfluxSink {
    writer: Option<Writer>,
    tags: RunTags,
    rig: Option<String>,
    cum_bytes: HashMap<(String, String), u64>,
    report: Option<Report>,
}

impl std::fmt::Debug for InfluxSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InfluxSink")
            .field("tags", &self.tags)
            .field("writer", &self.writer)
            .finish()
    }
}

impl InfluxSink {
    /// Starts a writer to `target` that spools to `run_dir/spool/`. `rig` overrides the
    /// host name as the `rig` tag.
    pub fn start(target: Target, run_dir: &Path, rig: Option<String>) -> anyhow::Result<Self> {
        let writer = Writer::start(WriterConfig::new(target, Some(run_dir.join("spool"))))?;
        Ok(InfluxSink {
            writer: Some(writer),
            tags: RunTags::default(),
            rig,
            cum_bytes: HashMap::new(),
            report: None,
        })
    }

    /// A handle for other components of the run (probe samples) to write into the same
    /// ordered stream and spool. `None` after `finish`.
    pub fn handle(&self) -> Option<WriterHandle> {
        self.writer.as_ref().map(Writer::handle)
    }

    /// The run's tags (known after `begin`).
    pub fn tags(&self) -> &RunTags {
        &self.tags
    }

    /// The final report (after `finish`).
    pub fn report(&self) -> Option<&Report> {
        self.report.as_ref()
    }

    fn write(&self, p: Point) -> anyhow::Result<()> {
        if let Some(w) = &self.writer {
            w.write(&p)?;
        }
        Ok(())
    }

    /// The `file` point of a record; `cum_bytes` is the running total of its target and
    /// phase (see `docs/data-model.md`).
    pub fn file_point(tags: &RunTags, r: &FileRecord, cum_bytes: u64) -> Point {
        let mut p = tags
            .apply(Point::new(m::FILE))
            .timestamp_ns(r.end_ns as i64)
            .tag("target", &r.target)
            .tag("phase", &r.phase)
            .field("index", i64::from(r.index))
            .field("start_ns", r.start_ns as i64)
            .field("end_ns", r.end_ns as i64)
            .field("bytes", r.bytes as i64)
            .field("mbps", r.mbps);
        if let Some(v) = r.verified {
            p = p.field("verified", v);
        }
        p = p
            .field("corrupt_blocks", r.corrupt_blocks as i64)
            .field("corrupt_bytes", r.corrupt_bytes as i64)
            .field("late_ops", r.late_ops as i64)
            .field("block_size", r.block_size as i64)
            .field("queue_depth", r.queue_depth as i64)
            .field("direct_io", r.direct_io)
            .field("status", r.status.as_str());
        if let Some(c) = r.corrupt.first() {
            p = p.field("first_corrupt_offset", c.offset as i64);
        }
        p.field("cum_bytes", cum_bytes as i64)
            .field("seconds", r.seconds())
    }

    /// The `interval` point of a record.
    pub fn interval_point(tags: &RunTags, r: &IntervalRecord) -> Point {
        tags.apply(Point::new(m::INTERVAL))
            .timestamp_ns(r.start_ns as i64)
            .tag("target", &r.target)
            .tag("phase", &r.phase)
            .field("start_ns", r.start_ns as i64)
            .field("end_ns", r.end_ns as i64)
            .field("bytes", r.bytes as i64)
            .field("mbps", r.mbps)
    }
}

impl RecordSink for InfluxSink {
    fn name(&self) -> &str {
        "influx"
    }

    fn begin(&mut self, manifest: &Manifest) -> anyhow::Result<()> {
        let v = serde_json::to_value(manifest)?;
        self.tags = RunTags::from_manifest(&v, &manifest.run_id);
        if let Some(r) = &self.rig {
            self.tags.rig = r.clone();
        }
        self.write(crate::schema::run_point(&v, &self.tags)?)
    }

    fn file(&mut self, rec: &FileRecord) -> anyhow::Result<()> {
        let total = self
            .cum_bytes
            .entry((rec.target.clone(), rec.phase.clone()))
            .or_default();
        *total += rec.bytes;
        let p = InfluxSink::file_point(&self.tags, rec, *total);
        self.write(p)
    }

    fn interval(&mut self, rec: &IntervalRecord) -> anyhow::Result<()> {
        self.write(InfluxSink::interval_point(&self.tags, rec))
    }

    fn finish(&mut self, _manifest: &Manifest, _summary: &Summary) -> anyhow::Result<()> {
        let Some(w) = self.writer.take() else {
            return Ok(());
        };
        let report = w.close(FINISH_TIMEOUT);
        let complete = report.is_complete();
        let summary = report.summary();
        self.report = Some(report);
        if complete {
            tracing::info!("{summary}");
            Ok(())
        } else {
            anyhow::bail!("{summary}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{csv_points, CSV_SPECS};
    use hostd_store::RunDirSink;
    use hostd_workload::block::CorruptBlock;

    fn rec(index: u32, phase: &str, bytes: u64, verified: Option<bool>) -> FileRecord {
        FileRecord {
            target: "/mnt/My Disk".into(),
            target_index: 0,
            phase: phase.into(),
            index,
            start_ns: 1_700_000_000_000_000_000 + u64::from(index) * 2_000_000_000,
            end_ns: 1_700_000_001_000_000_000 + u64::from(index) * 2_000_000_000,
            bytes,
            mbps: 512.25,
            verified,
            corrupt_blocks: u64::from(index),
            corrupt_bytes: 0,
            late_ops: 0,
            block_size: 1 << 20,
            queue_depth: 8,
            corrupt: if index == 2 {
                vec![CorruptBlock {
                    offset: 8192,
                    bad_bytes: 3,
                    first_bad_byte: 8193,
                }]
            } else {
                Vec::new()
            },
            direct_io: true,
            status: "ok".into(),
        }
    }

    /// A live run and `hostd import` of its run directory must produce the same points.
    #[test]
    fn live_file_points_equal_imported_ones() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        let mut rundir = RunDirSink::create(&run).unwrap();
        let tags = RunTags {
            rig: "rig1".into(),
            run: "r1".into(),
            probe: None,
        };
        let recs = [
            rec(0, "write", 1_000, None),
            rec(1, "write", 2_000, None),
            rec(2, "read", 1_000, Some(false)),
        ];
        let mut live = Vec::new();
        let mut cum: HashMap<String, u64> = HashMap::new();
        for r in &recs {
            rundir.file(r).unwrap();
            let total = cum.entry(r.phase.clone()).or_default();
            *total += r.bytes;
            live.push(InfluxSink::file_point(&tags, r, *total).to_line().unwrap());
        }
        drop(rundir);
        let mut imported = Vec::new();
        csv_points(&run, &CSV_SPECS[0], &tags, |p| {
            imported.push(p);
            Ok(())
        })
        .unwrap();
        assert_eq!(imported.len(), 3);
        for (live_line, imp) in live.iter().zip(&imported) {
            // Same fields in any order: compare sorted field lists.
            let sorted = |line: &str| {
                let mut parts: Vec<String> = line.split(' ').map(str::to_owned).collect();
                let mut fields: Vec<&str> = parts[1].split(',').collect();
                fields.sort();
                parts[1] = fields.join(",");
                parts.join(" ")
            };
            // The tag value has a space: split after the escaped key set instead.
            let live_norm = sorted(&live_line.replace("My\\ Disk", "My_Disk"));
            let imp_norm = sorted(&imp.to_line().unwrap().replace("My\\ Disk", "My_Disk"));
            assert_eq!(live_norm, imp_norm);
        }
        assert!(live[2].contains("first_corrupt_offset=8192i"));
        assert!(live[2].contains("verified=false"));
        assert!(live[1].contains("cum_bytes=3000i"));
    }
}
