//! `hostd influx …`: helpers for a local InfluxDB (`setup` onboards a fresh server).

use hostd_influx::admin;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `hostd influx`.
#[derive(clap::Args)]
pub struct InfluxArgs {
    #[command(subcommand)]
    command: InfluxCommand,
}

#[derive(clap::Subcommand)]
enum InfluxCommand {
    /// Onboard a fresh local influxd (org, bucket `throttlescope`, token file, DBRP mapping
    /// for InfluxQL). Safe to run again.
    Setup(SetupArgs),
}

/// Arguments of `hostd influx setup`.
#[derive(clap::Args)]
struct SetupArgs {
    /// InfluxDB base URL.
    #[arg(
        long = "influx-url",
        value_name = "URL",
        default_value = "http://127.0.0.1:8086"
    )]
    url: String,
    /// Organisation to create.
    #[arg(long = "influx-org", value_name = "ORG", default_value = hostd_influx::args::DEFAULT_ORG)]
    org: String,
    /// Bucket to create (also the InfluxQL database name).
    #[arg(long = "influx-bucket", value_name = "BUCKET", default_value = hostd_influx::args::DEFAULT_BUCKET)]
    bucket: String,
    /// Where to write the token (mode 0600) [default: ~/.cache/throttlescope/influxd/token].
    #[arg(long = "influx-token-file", value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Name of the first user.
    #[arg(long, default_value = "throttlescope")]
    username: String,
}

/// Runs `hostd influx …`.
pub fn execute(args: InfluxArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        InfluxCommand::Setup(a) => {
            let token_file = a.token_file.unwrap_or_else(admin::default_token_file);
            let out = admin::setup(&a.url, &a.org, &a.bucket, &a.username, &token_file)?;
            if out.onboarded {
                outln!(
                    "onboarded InfluxDB at {}: org '{}', bucket '{}'",
                    a.url,
                    a.org,
                    a.bucket
                );
            } else {
                outln!(
                    "InfluxDB at {} was already set up; bucket '{}' checked",
                    a.url,
                    a.bucket
                );
            }
            outln!(
                "InfluxQL database '{}' maps to bucket '{}'",
                a.bucket,
                a.bucket
            );
            outln!("token: {}", out.token_file.display());
            outln!(
                "use: hostd run … --influx-url {} --influx-token-file {}",
                a.url,
                out.token_file.display()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
