//! Runs `log stream --style ndjson` with the storage predicate for the length of the run and
//! keeps its lines about the storage path.

use super::{parse_line, PREDICATE};
use crate::{Collected, LogReader};
use std::io::BufRead as _;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;

/// The unified log being streamed.
pub struct UnifiedReader {
    child: Child,
    thread: JoinHandle<Collected>,
}

/// Starts `log stream`; `Err` says why it cannot.
pub fn start() -> Result<Box<dyn LogReader>, String> {
    let mut child = Command::new("log")
        .args(["stream", "--style", "ndjson", "--predicate", PREDICATE])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot read the unified log (`log stream`: {e})"))?;
    let out = child.stdout.take().expect("piped stdout");
    let thread = std::thread::Builder::new()
        .name("os-log".into())
        .spawn(move || {
            let mut c = Collected::default();
            for line in std::io::BufReader::new(out).lines() {
                match line {
                    Ok(l) => c.lines.extend(parse_line(&l)),
                    Err(e) => {
                        c.note = Some(format!("the unified log stopped being read: {e}"));
                        break;
                    }
                }
            }
            c
        })
        .map_err(|e| format!("cannot start the unified log reader: {e}"))?;
    Ok(Box::new(UnifiedReader { child, thread }))
}

impl LogReader for UnifiedReader {
    fn stop(mut self: Box<Self>) -> Collected {
        // Our own child, by its handle: `log stream` runs until told to stop.
        let _ = self.child.kill();
        let status = self.child.wait();
        let mut c = self.thread.join().unwrap_or_default();
        if c.note.is_none() {
            if let Ok(s) = status {
                if s.code().is_some_and(|code| code != 0) {
                    c.note = Some(format!(
                        "`log stream` ended with {s}: the unified log was not read (permission?)"
                    ));
                }
            }
        }
        c
    }
}
