//! One module per subcommand. Each exposes a clap `…Args` struct and
//! `execute(args) -> anyhow::Result<ExitCode>`.

pub mod analyze;
pub mod bench_job;
pub mod clean;
pub mod compare;
pub mod export;
pub mod import;
pub mod influx;
pub mod monitor;
pub mod pd_decode;
pub mod profiles;
pub mod run;
pub mod verify;
