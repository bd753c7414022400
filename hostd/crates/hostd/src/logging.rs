//! Logging of the `hostd` binary: one `tracing` subscriber, set up in `main`.
//!
//! What the parts log (`tracing::warn!` "probe port lost", the InfluxDB writer's
//! errors, …) goes to stderr and, once a run directory exists, to its `hostd.log`. The
//! level is `RUST_LOG` if set, else `--log-level`, else `warn` raised by each `-v`
//! (`info`, `debug`, `trace`). While the live view draws its bars, a line for stderr is
//! written with the bars cleared and redrawn after it ([`indicatif::MultiProgress::suspend`]),
//! so no frame is torn.

use indicatif::MultiProgress;
use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::sync::Mutex;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// The live view's bars while they are drawn (lines for stderr suspend them).
static BARS: Mutex<Option<MultiProgress>> = Mutex::new(None);
/// The run directory's log file, once it exists.
static FILE: Mutex<Option<File>> = Mutex::new(None);

/// Name of the log file in a run directory.
pub const LOG_FILE: &str = "hostd.log";

/// The filter directive for `-v` given `count` times and `--log-level`.
pub fn directive(verbose: u8, level: Option<&str>) -> String {
    match level {
        Some(l) => l.to_string(),
        None => match verbose {
            0 => "warn",
            1 => "info",
            2 => "debug",
            _ => "trace",
        }
        .to_string(),
    }
}

/// Installs the subscriber. `RUST_LOG`, when set, wins over `directive`.
pub fn init(directive: &str) -> anyhow::Result<()> {
    let filter = match std::env::var("RUST_LOG") {
        Ok(env) if !env.trim().is_empty() => {
            EnvFilter::try_new(env.trim()).map_err(|e| anyhow::anyhow!("RUST_LOG={env:?}: {e}"))?
        }
        _ => EnvFilter::try_new(directive)
            .map_err(|e| anyhow::anyhow!("--log-level {directive:?}: {e}"))?,
    };
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(|| StderrLine)
        .with_ansi(io::stderr().is_terminal())
        .without_time()
        .with_target(false);
    let file = tracing_subscriber::fmt::layer()
        .with_writer(LogFile)
        .with_ansi(false)
        .with_filter(tracing_subscriber::filter::filter_fn(|_| has_file()));
    tracing_subscriber::registry()
        .with(filter)
        .with(stderr)
        .with(file)
        .try_init()
        .map_err(|e| anyhow::anyhow!("cannot set up logging: {e}"))
}

/// From now on, log lines go to `dir/hostd.log` too (appended).
pub fn log_to_dir(dir: &Path) -> anyhow::Result<()> {
    let path = dir.join(LOG_FILE);
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
    *FILE.lock().unwrap_or_else(|e| e.into_inner()) = Some(f);
    Ok(())
}

/// Stops writing to the run directory's log file (the run is over).
pub fn stop_log_file() {
    if let Some(mut f) = FILE.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = f.flush();
    }
}

/// Lines for stderr are written around the bars of `multi` until [`release_bars`].
pub fn hold_bars(multi: &MultiProgress) {
    *BARS.lock().unwrap_or_else(|e| e.into_inner()) = Some(multi.clone());
}

/// The bars are no longer drawn.
pub fn release_bars() {
    BARS.lock().unwrap_or_else(|e| e.into_inner()).take();
}

/// Runs `f`, which writes to the terminal, with the live view's bars (if drawn) cleared
/// before and redrawn under what it wrote.
pub fn around_bars<R>(f: impl FnOnce() -> R) -> R {
    let bars = BARS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    match bars {
        Some(m) => m.suspend(f),
        None => f(),
    }
}

fn has_file() -> bool {
    FILE.lock().map(|g| g.is_some()).unwrap_or(false)
}

/// Writes one formatted event to stderr, suspending the live view's bars if drawn.
struct StderrLine;

impl Write for StderrLine {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        around_bars(|| io::stderr().lock().write_all(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

/// The run directory's log file as a `MakeWriter`.
struct LogFile;

/// One event into the log file (dropped silently when there is none).
struct LogFileLine;

impl<'a> MakeWriter<'a> for LogFile {
    type Writer = LogFileLine;

    fn make_writer(&'a self) -> Self::Writer {
        LogFileLine
    }
}

impl Write for LogFileLine {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(f) = FILE.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            // Unbuffered: a line is on disk even if the process is killed next.
            f.write_all(buf)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_raises_the_level_and_log_level_wins() {
        assert_eq!(directive(0, None), "warn");
        assert_eq!(directive(1, None), "info");
        assert_eq!(directive(2, None), "debug");
        assert_eq!(directive(5, None), "trace");
        assert_eq!(directive(3, Some("error")), "error");
    }
}
