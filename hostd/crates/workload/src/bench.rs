//! One I/O job on one given file, measured like fio measures it (for
//! `hostd bench-job` and `just bench-io`): throughput, IOPS and the CPU
//! seconds the process spent ([`crate::cputime`]), verification included, and the
//! latency percentiles of its I/Os.

use crate::block::{BlockCodec, DataPool};
use crate::buffer::BufferPool;
use crate::direct::{self, OpenMode};
use crate::engine::{self, EngineChoice, WaitCounts};
use crate::jobloop::{run_job, slots_for, JobIo};
use crate::step::IoJob;
use anyhow::{bail, Context};
use hostd_records::LatencyStats;
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Instant;

/// What one job did.
#[derive(Debug, Serialize)]
pub struct BenchResult {
    /// Engine that ran.
    pub engine: String,
    /// Whether its waits could poll before sleeping ([`BenchOptions::polling`]).
    pub polling: bool,
    /// How the engine's waits for completions ended.
    pub waits: WaitCounts,
    /// Job as run.
    pub job: IoJob,
    /// Bytes moved.
    pub bytes: u64,
    /// Seconds from the first I/O to the last completion, plus the final
    /// fsync of writes (as fio counts a job with `end_fsync=1`).
    pub seconds: f64,
    /// Wall-clock seconds of the whole job (buffer registration and the
    /// fsync included; the buffers themselves are allocated before).
    pub wall_seconds: f64,
    /// MB/s (10^6 bytes/s).
    pub mbps: f64,
    /// I/Os per second.
    pub iops: f64,
    /// User CPU seconds of the process during the job.
    pub usr_s: f64,
    /// System CPU seconds of the process during the job.
    pub sys_s: f64,
    /// (usr + sys) per 10^9 bytes.
    pub cpu_s_per_gb: f64,
    /// Corrupt blocks found (reads with verification).
    pub corrupt_blocks: u64,
    /// Blocks verified.
    pub verified_blocks: u64,
    /// Latency of the job's I/Os, submission to completion.
    pub latency: LatencyStats,
}

fn cpu_seconds() -> (f64, f64) {
    crate::cputime::process_cpu_seconds()
}

/// How `hostd bench-job` runs a job, beside the job itself.
#[derive(Debug, Clone, Copy)]
pub struct BenchOptions {
    /// Engine to run it on.
    pub engine: EngineChoice,
    /// Data seed (reads must use the seed of the write).
    pub seed: u64,
    /// Whether a write may go over an existing file.
    pub overwrite: bool,
    /// Time every I/O (false only to measure what the timing costs).
    pub record_latency: bool,
    /// Whether a wait may poll before it sleeps (`--poll`); false, the
    /// default, sleeps at once, as fio does ([`engine::IoEngine::set_polling`]).
    pub polling: bool,
}

/// Runs `job` on `path`. Writes create the file, or overwrite it only with
/// `opts.overwrite`; reads expect a file written by a previous write job with
/// the same seed (so verification passes).
pub fn run_bench_job(path: &Path, job: &IoJob, opts: BenchOptions) -> anyhow::Result<BenchResult> {
    let BenchOptions {
        engine: choice,
        seed,
        overwrite,
        record_latency,
        polling,
    } = opts;
    let write = job.rw.is_write();
    let mode = if write {
        if path.exists() {
            if !overwrite {
                bail!(
                    "{} exists; pass --overwrite to write over it",
                    path.display()
                );
            }
            OpenMode::Write
        } else {
            OpenMode::CreateNew
        }
    } else {
        OpenMode::Read
    };
    let (file, status) = direct::open(path, mode, false)
        .with_context(|| format!("cannot open {}", path.display()))?;
    if !status.is_direct() {
        bail!("{}: direct I/O not in force", path.display());
    }
    if !write {
        let len = file.metadata()?.len();
        if len < job.file_size {
            bail!(
                "{} holds {len} bytes, the job needs {}",
                path.display(),
                job.file_size
            );
        }
    }
    let (mut eng, _) = engine::open(choice, job.queue_depth)?;
    eng.set_polling(polling);
    let codec = BlockCodec::new(DataPool::new(seed), 0, 0);
    let mut buffers = BufferPool::new();
    buffers.reserve(slots_for(job), job.block_size);
    let progress = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let (u0, s0) = cpu_seconds();
    let t0 = Instant::now();
    let out = run_job(
        eng.as_mut(),
        JobIo {
            fd: engine::raw_file(&file),
            base_offset: 0,
            job,
            codec: &codec,
            progress: &progress,
            stop: &stop,
            buffers: &mut buffers,
            interval_latency: None,
            record_latency,
        },
    )?;
    let t_sync = Instant::now();
    if write {
        direct::sync(&file)?;
    }
    let seconds = out.io_seconds + t_sync.elapsed().as_secs_f64();
    let wall_seconds = t0.elapsed().as_secs_f64();
    let (u1, s1) = cpu_seconds();
    let verify = out.verify.unwrap_or_default();
    Ok(BenchResult {
        engine: eng.name().to_string(),
        polling,
        waits: eng.wait_counts(),
        job: job.clone(),
        bytes: out.bytes,
        seconds,
        wall_seconds,
        mbps: out.bytes as f64 / seconds / 1e6,
        iops: out.bytes.div_ceil(job.block_size as u64) as f64 / seconds,
        usr_s: u1 - u0,
        sys_s: s1 - s0,
        cpu_s_per_gb: (u1 - u0 + s1 - s0) / (out.bytes as f64 / 1e9),
        corrupt_blocks: verify.corrupt_blocks,
        verified_blocks: verify.blocks,
        latency: out.latency.stats(),
    })
}
