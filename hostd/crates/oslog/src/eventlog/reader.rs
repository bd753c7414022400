//! Notes the run's start and, when stopped, asks `wevtutil` for the System log's events
//! since then (the event log keeps them: nothing needs to run during the run).

use super::{parse_events, system_time};
use crate::{Collected, LogReader};
use std::process::Command;

/// The System event log, from the run's start.
pub struct EventLogReader {
    since_ns: i64,
}

/// Notes the start (1 s early: the log's clock and ours are read apart).
pub fn start() -> Result<Box<dyn LogReader>, String> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| format!("the clock is before 1970: {e}"))?;
    Ok(Box::new(EventLogReader {
        since_ns: now.as_nanos() as i64 - 1_000_000_000,
    }))
}

impl LogReader for EventLogReader {
    fn stop(self: Box<Self>) -> Collected {
        let query = format!(
            "*[System[TimeCreated[@SystemTime>='{}']]]",
            system_time(self.since_ns)
        );
        let out = Command::new("wevtutil")
            .args([
                "qe",
                "System",
                &format!("/q:{query}"),
                "/f:RenderedXml",
                "/e:Events",
            ])
            .output();
        match out {
            Ok(o) if o.status.success() => Collected {
                lines: parse_events(&String::from_utf8_lossy(&o.stdout)),
                note: None,
            },
            Ok(o) => Collected {
                lines: Vec::new(),
                note: Some(format!(
                    "cannot read the System event log (`wevtutil qe System` ended with {}: {})",
                    o.status,
                    String::from_utf8_lossy(&o.stderr).trim()
                )),
            },
            Err(e) => Collected {
                lines: Vec::new(),
                note: Some(format!(
                    "cannot read the System event log (`wevtutil`: {e})"
                )),
            },
        }
    }
}
