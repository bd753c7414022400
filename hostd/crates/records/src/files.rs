//! `files.csv` (one row per file operation) and `corrupt.csv` (one row per corrupt 4 KiB
//! block, the first 64 per file). Columns: docs/run-directory.md.

use crate::columns::{column_table, Columns as _, Value};
use crate::csvio::{slurp, CsvOut, Table};
use crate::error::{RecordError, Result};
use crate::summary::{LatencyStats, LATENCY_COLUMNS};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// File name in the run directory.
pub const FILE_NAME: &str = "files.csv";
/// File name of the corrupt-block list.
pub const CORRUPT_FILE_NAME: &str = "corrupt.csv";
/// Newest format of `files.csv` and `corrupt.csv` this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;

/// Value of the `probe` column on the rows of targets the probe was not on.
pub const NO_PROBE: &str = "no probe";

/// One corrupt block: where, and how many of its bytes differ.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CorruptBlock {
    /// Byte offset of the block in the file.
    pub offset: u64,
    /// Bytes that differ from what was written.
    pub bad_bytes: u32,
    /// Offset in the file of the first differing byte.
    pub first_bad_byte: u64,
}

/// The probe's figures for one file (the columns appended with a probe; `None` where the
/// probe has no data). On rows of targets the probe was not on, `probe` is [`NO_PROBE`]
/// and every figure None.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileProbe {
    /// The probe's id (its source, e.g. `sim`, when it reported none), or [`NO_PROBE`].
    pub probe: String,
    /// Bus energy during the file (accumulator difference), J.
    pub energy_j: Option<f64>,
    /// The file's share of the energy where files of the probed target overlap, J.
    pub energy_share_j: Option<f64>,
    /// `energy_j` per 10⁹ bytes.
    pub j_per_gb: Option<f64>,
    /// `energy_j` over the file's time, W.
    pub mean_power_w: Option<f64>,
    /// Highest 10 ms mean bus power, W.
    pub peak_power_w: Option<f64>,
    /// Mean bus voltage, V.
    pub vbus_v: Option<f64>,
    /// Enclosure temperature at the start, °C.
    pub temp_start_c: Option<f64>,
    /// … at the end, °C.
    pub temp_end_c: Option<f64>,
    /// … its maximum, °C.
    pub temp_max_c: Option<f64>,
    /// Probe die temperature at the start, °C.
    pub die_temp_start_c: Option<f64>,
    /// … at the end, °C.
    pub die_temp_end_c: Option<f64>,
    /// … its maximum, °C.
    pub die_temp_max_c: Option<f64>,
}

/// One row of `corrupt.csv`: a corrupt block and the file it is in.
#[derive(Debug, Clone, Default)]
struct CorruptRow {
    target: String,
    phase: String,
    index: u32,
    block: CorruptBlock,
}

column_table! {
    /// Columns of `corrupt.csv`.
    pub const CORRUPT_COLUMNS for CorruptRow {
        "target" (Tag, required): |r| Value::Text(&r.target),
            |r, c| r.target = c.text()?.to_string();
        "phase" (Tag, required): |r| Value::Text(&r.phase), |r, c| r.phase = c.text()?.to_string();
        "index" (Field, required): |r| Value::Count(r.index.into()), |r, c| r.index = c.int()?;
        "block_offset" (Field, required): |r| Value::Count(r.block.offset),
            |r, c| r.block.offset = c.int()?;
        "bad_bytes" (Field, required): |r| Value::Count(r.block.bad_bytes.into()),
            |r, c| r.block.bad_bytes = c.int()?;
        "first_bad_byte" (Field, required): |r| Value::Count(r.block.first_bad_byte),
            |r, c| r.block.first_bad_byte = c.int()?;
    }
}

column_table! {
    /// Columns appended when the run had a probe (see [`FileProbe`]), in order (figures
    /// with 6 decimals).
    pub const PROBE_COLUMNS for FileProbe {
        "probe" (Field): |p| Value::Text(&p.probe), |p, c| p.probe = c.text()?.to_string();
        "energy_j" (Field): |p| fig(p.energy_j), |p, c| p.energy_j = c.opt_float()?;
        "energy_share_j" (Field): |p| fig(p.energy_share_j),
            |p, c| p.energy_share_j = c.opt_float()?;
        "j_per_gb" (Field): |p| fig(p.j_per_gb), |p, c| p.j_per_gb = c.opt_float()?;
        "mean_power_w" (Field): |p| fig(p.mean_power_w), |p, c| p.mean_power_w = c.opt_float()?;
        "peak_power_w" (Field): |p| fig(p.peak_power_w), |p, c| p.peak_power_w = c.opt_float()?;
        "vbus_v" (Field): |p| fig(p.vbus_v), |p, c| p.vbus_v = c.opt_float()?;
        "temp_start_c" (Field): |p| fig(p.temp_start_c), |p, c| p.temp_start_c = c.opt_float()?;
        "temp_end_c" (Field): |p| fig(p.temp_end_c), |p, c| p.temp_end_c = c.opt_float()?;
        "temp_max_c" (Field): |p| fig(p.temp_max_c), |p, c| p.temp_max_c = c.opt_float()?;
        "die_temp_start_c" (Field): |p| fig(p.die_temp_start_c),
            |p, c| p.die_temp_start_c = c.opt_float()?;
        "die_temp_end_c" (Field): |p| fig(p.die_temp_end_c),
            |p, c| p.die_temp_end_c = c.opt_float()?;
        "die_temp_max_c" (Field): |p| fig(p.die_temp_max_c),
            |p, c| p.die_temp_max_c = c.opt_float()?;
    }
}

/// A probe figure's cell: 6 decimals, empty when the probe has no data.
fn fig(v: Option<f64>) -> Value<'static> {
    v.map_or(Value::Absent, |v| Value::Fixed(v, 6))
}

/// One row of `files.csv`: one file operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileRecord {
    /// Target label.
    pub target: String,
    /// Target index (command-line order). Not a column: a reader numbers targets in the
    /// order they first appear.
    pub target_index: usize,
    /// Phase (`write`, `read`, `prepare`, `SEQ1M-QD8-read`, …).
    pub phase: String,
    /// Index within the phase.
    pub index: u32,
    /// Start, host Unix ns.
    pub start_ns: u64,
    /// End (after fsync for writes), host Unix ns.
    pub end_ns: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Throughput in MB/s (10^6 bytes per second).
    pub mbps: f64,
    /// `Some(true)` verified clean, `Some(false)` corruption found, `None` not verified.
    pub verified: Option<bool>,
    /// Corrupt 4 KiB blocks found.
    pub corrupt_blocks: u64,
    /// Corrupt bytes found.
    pub corrupt_bytes: u64,
    /// Paced I/Os that missed their slot (video).
    pub late_ops: u64,
    /// Size of each I/O, bytes.
    pub block_size: usize,
    /// I/Os kept in flight.
    pub queue_depth: usize,
    /// The first corrupt blocks (`corrupt.csv`; read from `files.csv` alone, only the first
    /// block's offset is known).
    pub corrupt: Vec<CorruptBlock>,
    /// Whether this file's I/O bypassed the page cache.
    pub direct_io: bool,
    /// `ok`, `interrupted`, `error: …`.
    pub status: String,
    /// Latency of the file's I/Os, submission to completion (None: not timed, e.g. a
    /// simulated target). Columns [`LATENCY_COLUMNS`], after [`COLUMNS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyStats>,
    /// The probe's figures for this file, once the run's probe has been correlated (boxed:
    /// most records travel without).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Box<FileProbe>>,
}

column_table! {
    /// Columns of every `files.csv`, in order (then [`LATENCY_COLUMNS`] and, with a probe,
    /// [`PROBE_COLUMNS`]). `target_index` and the corrupt blocks after the first are not
    /// columns.
    pub const COLUMNS for FileRecord {
        "target" (Tag, required): |r| Value::Text(&r.target),
            |r, c| r.target = c.text()?.to_string();
        "phase" (Tag, required): |r| Value::Text(&r.phase), |r, c| r.phase = c.text()?.to_string();
        "index" (Field, required): |r| Value::Count(r.index.into()), |r, c| r.index = c.int()?;
        "start_ns" (Field, required): |r| Value::Count(r.start_ns), |r, c| r.start_ns = c.int()?;
        "end_ns" (Field, required): |r| Value::Count(r.end_ns), |r, c| r.end_ns = c.int()?;
        "bytes" (Field, required): |r| Value::Count(r.bytes), |r, c| r.bytes = c.int()?;
        // Absent: computed from bytes and time (`FileRecord::new`).
        "mbps" (Field): |r| Value::Fixed(r.mbps, 3), |r, c| r.mbps = c.opt_float()?.unwrap_or(f64::NAN);
        "verified" (Field): |r| r.verified.map_or(Value::Absent, Value::Bool),
            |r, c| r.verified = c.opt_bool()?;
        "corrupt_blocks" (Field): |r| Value::Count(r.corrupt_blocks),
            |r, c| r.corrupt_blocks = c.opt_int()?.unwrap_or(0);
        "corrupt_bytes" (Field): |r| Value::Count(r.corrupt_bytes),
            |r, c| r.corrupt_bytes = c.opt_int()?.unwrap_or(0);
        "late_ops" (Field): |r| Value::Count(r.late_ops), |r, c| r.late_ops = c.opt_int()?.unwrap_or(0);
        "direct_io" (Field): |r| Value::Bool(r.direct_io),
            |r, c| r.direct_io = c.opt_bool()?.unwrap_or(false);
        "status" (Field): |r| Value::Text(&r.status),
            |r, c| r.status = match c.text()? { "" => "ok", s => s }.to_string();
        // The offset alone, until corrupt.csv (read by `read`) gives every block in full.
        "first_corrupt_offset" (Field): |r| r.corrupt.first().map_or(Value::Absent, |b| Value::Count(b.offset)),
            |r, c| r.corrupt = c.opt_int()?.map(|offset| vec![CorruptBlock {
                offset,
                bad_bytes: 0,
                first_bad_byte: offset,
            }]).unwrap_or_default();
        "block_size" (Field): |r| Value::Count(r.block_size as u64),
            |r, c| r.block_size = c.opt_int()?.unwrap_or(0);
        "queue_depth" (Field): |r| Value::Count(r.queue_depth as u64),
            |r, c| r.queue_depth = c.opt_int()?.unwrap_or(0);
    }
}

impl FileRecord {
    /// A completed (`ok`) file with everything else zero: the start of a record built field
    /// by field (simulated runs, tests).
    pub fn new(
        target: &str,
        phase: &str,
        index: u32,
        start_ns: u64,
        end_ns: u64,
        bytes: u64,
    ) -> Self {
        let mut r = FileRecord {
            target: target.to_string(),
            target_index: 0,
            phase: phase.to_string(),
            index,
            start_ns,
            end_ns,
            bytes,
            mbps: 0.0,
            verified: None,
            corrupt_blocks: 0,
            corrupt_bytes: 0,
            late_ops: 0,
            block_size: 0,
            queue_depth: 0,
            corrupt: Vec::new(),
            direct_io: true,
            status: "ok".to_string(),
            latency: None,
            probe: None,
        };
        r.mbps = r.bytes as f64 / 1e6 / r.seconds_nonzero();
        r
    }

    /// Seconds from start to end.
    pub fn seconds(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }

    /// Seconds from start to end, at least 1 ns (so rates stay finite).
    pub fn seconds_nonzero(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns).max(1) as f64 * 1e-9
    }

    /// Throughput in bytes per second (over at least 1 ns).
    pub fn rate_bps(&self) -> f64 {
        self.bytes as f64 / self.seconds_nonzero()
    }

    /// I/Os transferred (whole blocks; a short last I/O counts as one).
    pub fn ios(&self) -> u64 {
        if self.block_size == 0 {
            0
        } else {
            self.bytes.div_ceil(self.block_size as u64)
        }
    }

    fn cells(&self, with_probe: bool) -> Vec<String> {
        let mut c = FileRecord::csv_cells(Some(self));
        c.extend(LatencyStats::csv_cells(self.latency.as_ref()));
        if with_probe {
            c.extend(FileProbe::csv_cells(self.probe.as_deref()));
        }
        c
    }
}

/// The header of `files.csv`: [`COLUMNS`], [`LATENCY_COLUMNS`], then the probe's.
fn header(with_probe: bool) -> Vec<&'static str> {
    let probe: &[&str] = if with_probe { PROBE_COLUMNS } else { &[] };
    COLUMNS
        .iter()
        .chain(LATENCY_COLUMNS.iter())
        .chain(probe.iter())
        .copied()
        .collect()
}

/// Streams `files.csv` (and `corrupt.csv` once a file has corrupt blocks) row by row,
/// flushed after each, so an interrupted run keeps every finished file.
pub struct Writer {
    dir: std::path::PathBuf,
    files: CsvOut,
    corrupt: Option<CsvOut>,
}

impl Writer {
    /// Creates `dir/files.csv` with its header: the workload's columns (the probe's go to
    /// `files-probe.csv`, written once at the run's end).
    pub fn create(dir: &Path) -> Result<Writer> {
        let header = header(false);
        let mut files = CsvOut::create(&dir.join(FILE_NAME), &header)?;
        files.flush()?;
        Ok(Writer {
            dir: dir.to_path_buf(),
            files,
            corrupt: None,
        })
    }

    /// Appends one record (its corrupt blocks to `corrupt.csv`) and flushes.
    pub fn write(&mut self, r: &FileRecord) -> Result<()> {
        self.files.row(r.cells(false))?;
        self.files.flush()?;
        if !r.corrupt.is_empty() {
            if self.corrupt.is_none() {
                self.corrupt = Some(CsvOut::create(
                    &self.dir.join(CORRUPT_FILE_NAME),
                    CORRUPT_COLUMNS,
                )?);
            }
            let w = self.corrupt.as_mut().expect("created above");
            for &block in &r.corrupt {
                let row = CorruptRow {
                    target: r.target.clone(),
                    phase: r.phase.clone(),
                    index: r.index,
                    block,
                };
                w.row(CorruptRow::csv_cells(Some(&row)))?;
            }
            w.flush()?;
        }
        Ok(())
    }
}

/// Writes the whole `files.csv` at once, atomically, in the format before `files-probe.csv`:
/// with the probe columns when any record has probe figures. No run writes it any more;
/// tests and tools use it to make the run directories older builds wrote.
pub fn write_all(dir: &Path, records: &[FileRecord]) -> Result<()> {
    let with_probe = records.iter().any(|r| r.probe.is_some());
    let path = dir.join(FILE_NAME);
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    let header = header(with_probe);
    let err = |e: csv::Error| RecordError::write(&path, std::io::Error::other(e));
    w.write_record(&header).map_err(err)?;
    for r in records {
        w.write_record(r.cells(with_probe)).map_err(err)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| RecordError::write(&path, std::io::Error::other(e.to_string())))?;
    crate::csvio::write_atomic(&path, &bytes)
}

/// Reads `dir/files.csv` (and, when present, `dir/corrupt.csv` and the probe's figures in
/// `dir/files-probe.csv`), refusing a newer format.
pub fn read(dir: &Path) -> Result<Vec<FileRecord>> {
    crate::version::check_csv(dir, FILE_NAME, FORMAT_VERSION)?;
    let mut records = read_streamed(dir)?;
    if records.is_empty() {
        return Err(RecordError::Empty {
            path: dir.join(FILE_NAME),
        });
    }
    crate::files_probe::read_into(dir, &mut records)?;
    Ok(records)
}

/// Reads back `dir/files.csv` (with `dir/corrupt.csv`) that this build's `hostd run` has just
/// streamed: as [`read`], but without asking `manifest.json` for the format (it is this
/// build's) and without the probe's figures (their part writes them later). A file without
/// rows gives none.
pub fn read_streamed(dir: &Path) -> Result<Vec<FileRecord>> {
    let path = dir.join(FILE_NAME);
    let mut records = parse(&path, &slurp(&path)?)?;
    let corrupt = dir.join(CORRUPT_FILE_NAME);
    if corrupt.exists() {
        let blocks = read_corrupt(&corrupt)?;
        for r in &mut records {
            if let Some(b) = blocks.get(&(r.target.clone(), r.phase.clone(), r.index)) {
                r.corrupt = b.clone();
            }
        }
    }
    Ok(records)
}

/// Reads one `files.csv`. Required columns: `target,phase,index,start_ns,end_ns,bytes`; the
/// others default (`mbps` computed, counters 0, `status` `ok`, `direct_io` false); extra
/// columns to the right are ignored. An empty file (header only) is an error.
pub fn read_path(path: &Path) -> Result<Vec<FileRecord>> {
    let out = parse(path, &slurp(path)?)?;
    if out.is_empty() {
        return Err(RecordError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(out)
}

/// Parses the bytes of a `files.csv` (`path` names it in errors), as [`read_path`] but
/// accepting a file without rows (a run that failed before its first file).
pub fn parse(path: &Path, buf: &[u8]) -> Result<Vec<FileRecord>> {
    let mut t = Table::new(path, buf)?;
    let cols = t.columns_of::<FileRecord>()?;
    let (lat, probe) = (t.positions(LATENCY_COLUMNS), t.positions(PROBE_COLUMNS));
    let mut targets: Vec<String> = Vec::new();
    let mut out = Vec::new();
    while let Some(row) = t.next_row()? {
        let mut r = FileRecord::new("", "", 0, 0, 0, 0);
        (r.mbps, r.direct_io) = (f64::NAN, false);
        row.read(&mut r, &cols)?;
        if r.end_ns < r.start_ns {
            return Err(row.bad("end_ns", &r.end_ns.to_string(), "end_ns is before start_ns"));
        }
        if r.mbps.is_nan() {
            r.mbps = r.bytes as f64 / 1e6 / r.seconds_nonzero();
        }
        r.target_index = match targets.iter().position(|t| *t == r.target) {
            Some(i) => i,
            None => {
                targets.push(r.target.clone());
                targets.len() - 1
            }
        };
        r.latency = LatencyStats::from_row(&row, &lat)?;
        let named = row.cell(probe[0], PROBE_COLUMNS[0]);
        if !named.map_or(Ok(""), |c| c.text())?.is_empty() {
            let mut p = FileProbe::default();
            row.read(&mut p, &probe)?;
            r.probe = Some(Box::new(p));
        }
        out.push(r);
    }
    Ok(out)
}

type CorruptMap = HashMap<(String, String, u32), Vec<CorruptBlock>>;

fn read_corrupt(path: &Path) -> Result<CorruptMap> {
    let buf = slurp(path)?;
    let mut t = Table::new(path, &buf)?;
    let cols = t.columns_of::<CorruptRow>()?;
    let mut out: CorruptMap = HashMap::new();
    t.each_record(&cols, |r: CorruptRow, _| {
        let key = (r.target, r.phase, r.index);
        out.entry(key).or_default().push(r.block);
        Ok(())
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csvio::testing::{assert_newer_format_refused, assert_read_error};

    fn sample() -> Vec<FileRecord> {
        let mut a = FileRecord::new("/mnt/a,b", "write", 0, 1_000, 2_000_001_000, 500_000_000);
        a.block_size = 1 << 20;
        a.queue_depth = 8;
        a.verified = Some(false);
        a.corrupt = vec![CorruptBlock {
            offset: 8192,
            bad_bytes: 3,
            first_bad_byte: 8200,
        }];
        a.corrupt_blocks = 1;
        a.corrupt_bytes = 3;
        let mut b = FileRecord::new("/mnt/c", "read", 1, 5, 10, 7);
        b.target_index = 1;
        b.status = "error: disk full after 7 bytes".into();
        b.mbps = 1400.0;
        vec![a, b]
    }

    /// Probe figures on the first of `recs` and "no probe" on the second.
    fn add_probe(recs: &mut [FileRecord]) {
        recs[0].probe = Some(Box::new(FileProbe {
            probe: "sim-0001".into(),
            energy_j: Some(2.5),
            temp_max_c: Some(41.25),
            ..FileProbe::default()
        }));
        recs[1].probe = Some(Box::new(FileProbe {
            probe: NO_PROBE.into(),
            ..FileProbe::default()
        }));
    }

    #[test]
    fn files_round_trip_through_the_streaming_writer() {
        let d = tempfile::tempdir().unwrap();
        let mut w = Writer::create(d.path()).unwrap();
        let recs = sample();
        recs.iter().for_each(|r| w.write(r).unwrap());
        drop(w);
        let back = read(d.path()).unwrap();
        let mut want = recs.clone();
        want[0].mbps = (want[0].mbps * 1000.0).round() / 1000.0;
        assert_eq!(back, want);
    }

    #[test]
    fn probe_columns_round_trip_through_write_all() {
        let d = tempfile::tempdir().unwrap();
        let mut recs = sample();
        recs[0].mbps = 250.0;
        add_probe(&mut recs);
        write_all(d.path(), &recs).unwrap();
        let mut back = read_path(&d.path().join(FILE_NAME)).unwrap();
        // Without corrupt.csv (the streaming writer's) only the first offset comes back.
        assert_eq!(back[0].corrupt[0].offset, 8192);
        back[0].corrupt = recs[0].corrupt.clone();
        assert_eq!(back, recs);
    }

    #[test]
    fn the_bytes_written_are_pinned() {
        let d = tempfile::tempdir().unwrap();
        let mut recs = sample();
        recs[0].latency = Some(LatencyStats {
            count: 3,
            mean_ns: 20_000.4,
            max_ns: 30_004,
            ..LatencyStats::default()
        });
        recs[1].verified = Some(true);
        recs[1].direct_io = false;
        recs.push(FileRecord::new("/mnt/c", "read", 2, 10, 20, 0));
        let mut w = Writer::create(d.path()).unwrap();
        recs.iter().for_each(|r| w.write(r).unwrap());
        drop(w);
        let header = "target,phase,index,start_ns,end_ns,bytes,mbps,verified,corrupt_blocks,\
corrupt_bytes,late_ops,direct_io,status,first_corrupt_offset,block_size,queue_depth,lat_io_count,\
lat_min_ns,lat_mean_ns,lat_p50_ns,lat_p90_ns,lat_p99_ns,lat_p99_9_ns,lat_p99_99_ns,lat_max_ns";
        let rows = [
            "\"/mnt/a,b\",write,0,1000,2000001000,500000000,250.000,false,1,3,0,true,ok,8192,\
1048576,8,3,0,20000,0,0,0,0,0,30004",
            "/mnt/c,read,1,5,10,7,1400.000,true,0,0,0,false,error: disk full after 7 bytes,,0,0,\
,,,,,,,,",
            "/mnt/c,read,2,10,20,0,0.000,,0,0,0,true,ok,,0,0,,,,,,,,,",
        ];
        let read = |name| std::fs::read_to_string(d.path().join(name)).unwrap();
        assert_eq!(read(FILE_NAME), format!("{header}\n{}\n", rows.join("\n")));
        assert_eq!(
            read(CORRUPT_FILE_NAME),
            "target,phase,index,block_offset,bad_bytes,first_bad_byte\n\
             \"/mnt/a,b\",write,0,8192,3,8200\n"
        );

        add_probe(&mut recs);
        recs[0].probe.as_mut().unwrap().j_per_gb = Some(1.0 / 3.0);
        write_all(d.path(), &recs).unwrap();
        let probe = [
            format!(",{}", PROBE_COLUMNS.join(",")),
            ",sim-0001,2.500000,,0.333333,,,,,,41.250000,,,".into(),
            format!(",{NO_PROBE}{}", ",".repeat(12)),
            ",".repeat(13),
        ];
        let lines: Vec<String> = std::iter::once(header)
            .chain(rows)
            .zip(probe)
            .map(|(l, p)| format!("{l}{p}\n"))
            .collect();
        assert_eq!(read(FILE_NAME), lines.concat());
    }

    #[test]
    fn a_bad_cell_names_file_line_and_column() {
        assert_read_error(
            FILE_NAME,
            "target,phase,index,start_ns,end_ns,bytes\nA,write,0,1,5,10\n\nA,write,1,5,9,ten\n",
            read,
            &["files.csv: line 4, column `bytes`", "\"ten\""],
        );
    }

    #[test]
    fn a_missing_column_is_named() {
        assert_read_error(
            FILE_NAME,
            "target,phase,index,start_ns,bytes\nA,write,0,1,5\n",
            read,
            &["missing required column `end_ns`"],
        );
    }

    #[test]
    fn a_newer_format_recorded_in_the_manifest_is_refused() {
        let d = tempfile::tempdir().unwrap();
        write_all(d.path(), &sample()).unwrap();
        assert_newer_format_refused(d.path(), FILE_NAME, FORMAT_VERSION, read);
    }
}
