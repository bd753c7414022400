//! `hostd bench-job`: one fio-like job on one file (used by `just bench-io`
//! to compare hostd's engine with fio on the same file).

use hostd_records::units::parse_size;
use hostd_workload::bench::BenchOptions;
use hostd_workload::engine::EngineChoice;
use hostd_workload::step::{IoJob, Rw};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `hostd bench-job`.
#[derive(clap::Args)]
pub struct BenchJobArgs {
    /// The file to write or read (writes create it; see --overwrite).
    #[arg(long)]
    pub file: PathBuf,
    /// write, read, randread or randwrite.
    #[arg(long)]
    pub rw: String,
    /// I/O size (e.g. 1M, 4k).
    #[arg(long, default_value = "1MiB")]
    pub bs: String,
    /// I/Os in flight (1–64).
    #[arg(long, default_value_t = 1)]
    pub qd: usize,
    /// File size; also the bytes moved unless --io-size says otherwise.
    #[arg(long, default_value = "1GiB")]
    pub size: String,
    /// Bytes moved (fio's `io_size`), at most --size; default: --size.
    #[arg(long)]
    pub io_size: Option<String>,
    /// Engine (the engines of this build, `hostd_workload::engine::ENGINES`).
    #[arg(long, default_value = "auto", help = format!("Engine: {}", EngineChoice::names()))]
    pub engine: EngineChoice,
    /// Verify blocks on read (`off` measures the engine alone).
    #[arg(long, default_value = "on")]
    pub verify: String,
    /// Data seed (reads must use the seed of the write).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Allow writing over an existing file.
    #[arg(long)]
    pub overwrite: bool,
    /// Time every I/O (`off` only to measure what the timing costs).
    #[arg(long, default_value = "on")]
    pub latency: String,
    /// Poll for completions (up to 30 µs) before sleeping, as `hostd run --poll`. By
    /// default a wait sleeps at once, as fio's io_uring engine does.
    #[arg(long)]
    pub poll: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

fn size(s: &str) -> anyhow::Result<u64> {
    // fio style: 1M/4k mean binary units.
    let t = s.trim();
    let binary = match t.chars().last() {
        Some('k') | Some('K') => Some(1u64 << 10),
        Some('m') | Some('M') => Some(1 << 20),
        Some('g') | Some('G') => Some(1 << 30),
        _ => None,
    };
    match (binary, t[..t.len() - 1].parse::<u64>()) {
        (Some(m), Ok(n)) => Ok(n * m),
        _ => parse_size(t).map_err(anyhow::Error::msg),
    }
}

/// Runs `hostd bench-job`.
pub fn execute(args: BenchJobArgs) -> anyhow::Result<ExitCode> {
    let rw = match args.rw.as_str() {
        "write" => Rw::Write,
        "read" => Rw::Read,
        "randread" => Rw::RandRead,
        "randwrite" => Rw::RandWrite,
        o => anyhow::bail!("--rw {o}: use write, read, randread or randwrite"),
    };
    let bs = size(&args.bs)?;
    let file_size = size(&args.size)?;
    if bs == 0
        || !bs.is_multiple_of(4096)
        || !file_size.is_multiple_of(bs)
        || !(1..=64).contains(&args.qd)
    {
        anyhow::bail!("--bs must be a multiple of 4 KiB dividing --size, --qd 1..64");
    }
    let bytes = match &args.io_size {
        Some(s) => size(s)?,
        None => file_size,
    };
    if bytes == 0 || bytes > file_size || !bytes.is_multiple_of(bs) {
        anyhow::bail!("--io-size must be a multiple of --bs, at most --size");
    }
    let job = IoJob {
        rw,
        file_size,
        bytes,
        block_size: bs as usize,
        queue_depth: args.qd,
        verify: args.verify != "off",
        pace_ns: None,
        seed: args.seed,
    };
    let r = hostd_workload::bench::run_bench_job(
        &args.file,
        &job,
        BenchOptions {
            engine: args.engine,
            seed: args.seed,
            overwrite: args.overwrite,
            record_latency: args.latency != "off",
            polling: args.poll,
        },
    )?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        let l = &r.latency;
        let us = |ns: u64| ns as f64 / 1e3;
        outln!(
            "{} {:?} bs {} qd {}: {:.0} MB/s, {:.0} IOPS, cpu {:.3} s/GB (usr {:.2} s, sys {:.2} s){}",
            r.engine, rw, bs, args.qd, r.mbps, r.iops, r.cpu_s_per_gb, r.usr_s, r.sys_s,
            if r.corrupt_blocks > 0 { format!(", {} CORRUPT blocks", r.corrupt_blocks) } else { String::new() }
        );
        let w = &r.waits;
        outln!(
            "waits ({}): {} found completions ready, {} ended polling, {} asleep",
            if r.polling {
                "--poll"
            } else {
                "asleep, as fio"
            },
            w.ready,
            w.spun,
            w.slept
        );
        outln!(
            "latency µs (±0.1 %): p50 {:.1}, p90 {:.1}, p99 {:.1}, p99.9 {:.1}, p99.99 {:.1}, max {:.1} ({} I/Os)",
            us(l.p50_ns), us(l.p90_ns), us(l.p99_ns), us(l.p99_9_ns), us(l.p99_99_ns), us(l.max_ns), l.count
        );
    }
    Ok(if r.corrupt_blocks > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
