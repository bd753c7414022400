//! `hostd`: benchmark an external SSD, record the inline probe, and explain
//! every slowdown. Each subcommand lives in its own module under `cmd/`.

#[macro_use]
mod out;
mod cmd;
mod logging;
mod stop;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Command-line interface of hostd.
#[derive(Parser)]
#[command(
    name = "hostd",
    version,
    about = "Benchmark external SSDs and attribute their slowdowns"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// More log detail on stderr and in the run's hostd.log: -v info, -vv debug, -vvv trace
    /// (default: warnings and errors).
    #[arg(long, short = 'v', action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Log filter (error, warn, info, debug, trace, or `tracing` directives such as
    /// `hostd_probe=debug`); `RUST_LOG`, when set, wins.
    #[arg(long, value_name = "LEVEL", global = true)]
    log_level: Option<String>,
}

/// The subcommands; each maps to one module in `cmd/`.
#[derive(Subcommand)]
enum Command {
    /// Run a disk workload (optionally with the probe) and write a run directory.
    Run(cmd::run::RunArgs),
    /// List the built-in workload profiles with their parameters.
    Profiles(cmd::profiles::ProfilesArgs),
    /// One fio-like I/O job on one file (used by `just bench-io`).
    BenchJob(cmd::bench_job::BenchJobArgs),
    /// Analyse a run directory: statistics, throttle events and causes, report.html.
    Analyze(cmd::analyze::AnalyzeArgs),
    /// Compare runs side by side (e.g. direct port against hub).
    Compare(cmd::compare::CompareArgs),
    /// Write a run's probe samples as probe.csv (from its Parquet segments).
    Export(cmd::export::ExportArgs),
    /// Push a finished run directory to InfluxDB.
    Import(cmd::import::ImportArgs),
    /// Local InfluxDB helpers (`setup` onboards a fresh server).
    Influx(cmd::influx::InfluxArgs),
    /// Record the probe alone until stopped (idle power, cool-down curves).
    Monitor(cmd::monitor::MonitorArgs),
    /// Remove the test files a run left on its targets (killed, or run with --keep).
    Clean(cmd::clean::CleanArgs),
    /// Re-read the files a run kept (--keep) and locate every corrupt byte (exit 3 if any).
    Verify(cmd::verify::VerifyArgs),
    /// Decode the USB PD messages of a sigrok capture (.sr) with the probe's own decoder.
    PdDecode(cmd::pd_decode::PdDecodeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(err) = logging::init(&logging::directive(cli.verbose, cli.log_level.as_deref())) {
        eprintln!("hostd: error: {err:#}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Run(args) => cmd::run::execute(args),
        Command::Profiles(args) => cmd::profiles::execute(args),
        Command::BenchJob(args) => cmd::bench_job::execute(args),
        Command::Analyze(args) => cmd::analyze::execute(args),
        Command::Compare(args) => cmd::compare::execute(args),
        Command::Export(args) => cmd::export::execute(args),
        Command::Import(args) => cmd::import::execute(args),
        Command::Influx(args) => cmd::influx::execute(args),
        Command::Monitor(args) => cmd::monitor::execute(args),
        Command::Verify(args) => cmd::verify::execute(args),
        Command::Clean(args) => cmd::clean::execute(args),
        Command::PdDecode(args) => cmd::pd_decode::execute(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("hostd: error: {err:#}");
            ExitCode::from(2)
        }
    }
}
