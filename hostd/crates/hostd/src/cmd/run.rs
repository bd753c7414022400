//! `hostd run` (being built; see issue tracker).

use std::process::ExitCode;

/// Arguments of `hostd run`.
#[derive(clap::Args)]
pub struct RunArgs {}

/// Runs `hostd run`.
pub fn execute(_args: RunArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("hostd run is not implemented yet")
}
