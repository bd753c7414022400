//! hostd-oslog: what the operating system saw of a run's storage path — USB link resets,
//! UAS errors and fallbacks to usb-storage, re-enumeration at a lower speed, disconnects,
//! I/O errors — read from its log while the run goes and put on the run's timeline
//! (`os-log.jsonl`), where the analysis makes it the `link` cause.
//!
//! - [`part`]: the part of `hostd run` ([`OsLogPart`]): starts the reader, matches
//!   each line to the target whose device it names, writes `os-log.jsonl`.
//! - [`kmsg`]: Linux, the kernel log (`/dev/kmsg` records, their monotonic time converted
//!   to the run's clock) and the kernel's words for these events.
//! - [`unified`]: macOS, the unified log (`log stream --style ndjson`).
//! - [`eventlog`]: Windows, the System event log (`wevtutil qe System`, rendered XML).

#![warn(missing_docs)]

pub mod eventlog;
pub mod kmsg;
pub mod part;
pub mod unified;

pub use part::OsLogPart;

use hostd_records::os_log::OsLogKind;

/// One line of the OS's log about the storage path, not yet matched to a target.
#[derive(Debug, Clone, PartialEq)]
pub struct Logged {
    /// When, host Unix ns.
    pub time_ns: i64,
    /// What it says happened.
    pub kind: OsLogKind,
    /// The device it names, as the log spells it (`sda`, `2-1`, `disk4`, `pd2`).
    pub device: Option<String>,
    /// Which log (`kernel`, `user`, `unified`, `system`).
    pub source: String,
    /// The message text.
    pub line: String,
}

/// What a reader collected by the end of the run.
#[derive(Debug, Default)]
pub struct Collected {
    /// The lines about the storage path, in the order logged.
    pub lines: Vec<Logged>,
    /// Why the log could not be read (or stopped being read), said once.
    pub note: Option<String>,
}

/// A log being read while the run goes; `stop` ends the reading and hands over what it
/// collected.
pub trait LogReader: Send {
    /// Stops reading (after taking what was logged up to now).
    fn stop(self: Box<Self>) -> Collected;
}

/// Starts reading this OS's log from now on; `Err` says in words why it cannot be read.
pub fn start_reader() -> Result<Box<dyn LogReader>, String> {
    #[cfg(target_os = "linux")]
    {
        kmsg::reader::start()
    }
    #[cfg(target_os = "macos")]
    {
        unified::reader::start()
    }
    #[cfg(windows)]
    {
        eventlog::reader::start()
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    {
        Err("no log reader for this operating system".into())
    }
}

/// The first whitespace/punctuation-delimited word after `marker` in `text`.
pub(crate) fn word_after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let w: &str = rest
        .trim_start()
        .split(|c: char| c.is_whitespace() || c == ',' || c == ':' || c == ']' || c == ';')
        .next()?;
    (!w.is_empty()).then_some(w)
}
