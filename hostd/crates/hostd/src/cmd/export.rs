//! `hostd export RUN_DIR --csv`: writes `probe.csv` (the format of runs before Parquet
//! storage) from the run's `probe/` segments, for tools that want plain text.

use anyhow::Context;
use hostd_records::{probe, probe_store};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `hostd export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// Run directory holding `probe/` (the probe's samples in Parquet segments).
    pub run_dir: PathBuf,
    /// Write `RUN_DIR/probe.csv` (the only export so far; required so that another format
    /// can be added later without changing what this one means).
    #[arg(long, required = true)]
    pub csv: bool,
    /// Replace an existing probe.csv.
    #[arg(long)]
    pub force: bool,
}

/// Runs `hostd export`: one pass over the segments, one segment in memory at a time.
pub fn execute(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let dir = &args.run_dir;
    anyhow::ensure!(
        probe_store::exists(dir),
        "{} has no {}/ directory: no probe samples to export (a run before Parquet storage already has probe.csv)",
        dir.display(),
        probe_store::DIR_NAME
    );
    let out = dir.join(probe::FILE_NAME);
    anyhow::ensure!(
        args.force || !out.exists(),
        "{} exists; not replacing it (pass --force to replace)",
        out.display()
    );
    let mut w = probe::Writer::create(dir)?;
    let mut n = 0u64;
    probe_store::for_each_segment(dir, |samples| {
        n += samples.len() as u64;
        w.write(samples)
    })
    .with_context(|| format!("cannot export {}", out.display()))?;
    w.flush()?;
    println!("{}: {n} samples", out.display());
    Ok(ExitCode::SUCCESS)
}
