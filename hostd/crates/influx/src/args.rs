//! The `--influx-*` flags shared by `hostd run`, `hostd monitor`, `hostd import` and
//! `hostd influx setup`. Flatten [`InfluxArgs`] into a subcommand's clap struct, and
//! [`SpoolArgs`] into those that write live into a spool (`hostd run`, `hostd monitor`).

use crate::spool::{Limits, DEFAULT_DISK_BYTES};
use crate::{Target, Token};
use std::path::PathBuf;

/// Default organisation and bucket names.
pub const DEFAULT_ORG: &str = "throttlescope";
/// Default bucket (DESIGN.md's data model).
pub const DEFAULT_BUCKET: &str = "throttlescope";

/// Where to send points. The token comes from `INFLUX_TOKEN` or `--influx-token-file`,
/// never from the command line.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct InfluxArgs {
    /// InfluxDB base URL (e.g. http://127.0.0.1:8086); without it nothing goes to InfluxDB.
    #[arg(long = "influx-url", value_name = "URL")]
    pub url: Option<String>,
    /// InfluxDB organisation.
    #[arg(long = "influx-org", value_name = "ORG", default_value = DEFAULT_ORG)]
    pub org: String,
    /// InfluxDB bucket.
    #[arg(long = "influx-bucket", value_name = "BUCKET", default_value = DEFAULT_BUCKET)]
    pub bucket: String,
    /// File holding the API token (else the INFLUX_TOKEN environment variable is used).
    #[arg(long = "influx-token-file", value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

impl InfluxArgs {
    /// True when `--influx-url` was given.
    pub fn enabled(&self) -> bool {
        self.url.is_some()
    }

    /// The write target, or `None` without `--influx-url`. Fails when no token is found.
    pub fn target(&self) -> anyhow::Result<Option<Target>> {
        let Some(url) = &self.url else {
            return Ok(None);
        };
        let token = Token::resolve(self.token_file.as_deref())?;
        Ok(Some(Target {
            url: url.clone(),
            org: self.org.clone(),
            bucket: self.bucket.clone(),
            token,
        }))
    }
}

/// The spool's bounds, for the commands that spool (`RUN_DIR/spool/`) while InfluxDB is
/// away.
#[derive(Debug, Clone, clap::Args)]
pub struct SpoolArgs {
    /// Most disk the InfluxDB spool (RUN_DIR/spool/) may take while the server is away,
    /// e.g. 1GiB, 500MB, 0 (no spool). Past it, new points are not sent until the spool has
    /// been (they are counted as dropped; the run directory keeps them and `hostd import
    /// RUN_DIR` loads them).
    #[arg(
        long = "influx-spool-max",
        value_name = "SIZE",
        default_value = "1GiB",
        value_parser = hostd_records::units::parse_size
    )]
    pub spool_max: u64,
}

impl Default for SpoolArgs {
    fn default() -> Self {
        SpoolArgs {
            spool_max: DEFAULT_DISK_BYTES,
        }
    }
}

impl SpoolArgs {
    /// The spool's bounds: this cap, the default batches in memory.
    pub fn limits(&self) -> Limits {
        Limits {
            disk_bytes: self.spool_max,
            ..Limits::default()
        }
    }
}
