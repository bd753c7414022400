//! `hostd profiles` (being built; see issue tracker).

use std::process::ExitCode;

/// Arguments of `hostd profiles`.
#[derive(clap::Args)]
pub struct ProfilesArgs {}

/// Runs `hostd profiles`.
pub fn execute(_args: ProfilesArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("hostd profiles is not implemented yet")
}
