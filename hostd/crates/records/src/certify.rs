//! Certify runs and retention checks: `certify.jsonl` (the journal of completed file
//! steps, appended and flushed as each completes), `certify.json` (the verdict over all
//! sessions, also `summary.json` `certify`) and `verify-<UTC time>.json` (each
//! `hostd verify`). See docs/certify.md.

use crate::error::{RecordError, Result};
use crate::files::CorruptBlock;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// File name of the journal.
pub const JOURNAL_FILE_NAME: &str = "certify.jsonl";
/// File name of the verdict.
pub const VERDICT_FILE_NAME: &str = "certify.json";
/// Version of `certify.json` and `verify-*.json`.
pub const FORMAT_VERSION: u32 = 1;

/// One completed file step of a certify run (a line of `certify.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// 0 for the first run, N for the Nth `--resume`.
    pub session: u32,
    /// Target index (command-line order).
    pub target_index: usize,
    /// `passN-write` or `passN-read`.
    pub phase: String,
    /// File number (`fNNNNN.dat`).
    pub index: u32,
    /// Bytes moved.
    pub bytes: u64,
    /// Duration on the monotonic clock, s.
    pub seconds: f64,
    /// Rate, MB/s.
    pub mbps: f64,
    /// `Some(true)` clean, `Some(false)` corrupt, `None` not verified (writes).
    pub verified: Option<bool>,
    /// Corrupt bytes found by this read.
    pub corrupt_bytes: u64,
    /// The corrupt blocks (first ones), with the first bad byte of each.
    #[serde(default)]
    pub corrupt: Vec<CorruptBlock>,
    /// End, host Unix ns (for people; durations use `seconds`).
    pub end_ns: u64,
}

impl JournalEntry {
    /// True for a verify read (`passN-read`).
    pub fn is_read(&self) -> bool {
        self.phase.ends_with("-read")
    }

    /// The step's key in a plan: (target, phase, index).
    pub fn key(&self) -> (usize, String, u32) {
        (self.target_index, self.phase.clone(), self.index)
    }
}

/// The journal, open for appending: the one writer of `certify.jsonl`.
pub struct Journal {
    path: PathBuf,
    file: Mutex<File>,
}

impl Journal {
    /// Opens (creating) `dir/certify.jsonl` for appending.
    pub fn open(dir: &Path) -> Result<Journal> {
        let path = dir.join(JOURNAL_FILE_NAME);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| RecordError::write(&path, e))?;
        Ok(Journal {
            path,
            file: Mutex::new(file),
        })
    }

    /// Appends one entry and flushes it to the device before returning.
    pub fn append(&self, entry: &JournalEntry) -> Result<()> {
        let mut line = serde_json::to_vec(entry)
            .map_err(|e| RecordError::write(&self.path, std::io::Error::other(e)))?;
        line.push(b'\n');
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        f.write_all(&line)
            .and_then(|()| f.sync_data())
            .map_err(|e| RecordError::write(&self.path, e))
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads `dir/certify.jsonl` (empty if absent). A last line without its newline is a
/// write the process did not finish (killed) and is skipped; any other unreadable line is
/// an error naming the file and line.
pub fn read_journal(dir: &Path) -> Result<Vec<JournalEntry>> {
    let path = dir.join(JOURNAL_FILE_NAME);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(RecordError::io(&path, e)),
    };
    let complete = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::with_capacity(lines.len());
    for (n, line) in lines.iter().enumerate() {
        match serde_json::from_str(line) {
            Ok(e) => out.push(e),
            Err(_) if n + 1 == lines.len() && !complete => break,
            Err(e) => return Err(RecordError::json_at_line(&path, n + 1, &e)),
        }
    }
    Ok(out)
}

/// Outcome of one gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    /// Measured and within the limit.
    Pass,
    /// Measured and outside the limit.
    Fail,
    /// No data to judge by: counts as a failure.
    NotEvaluated,
}

/// One gate's limit, measured value and outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    /// The `[gates]` key.
    pub gate: String,
    /// The limit, with its unit.
    pub limit: String,
    /// The measured value with its unit, if there was data.
    pub measured: Option<String>,
    /// Outcome.
    pub status: GateStatus,
    /// Where the value comes from, or why it could not be measured.
    pub detail: String,
}

/// A corrupt block located in a test file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorruptAt {
    /// Target index.
    pub target_index: usize,
    /// File number (`fNNNNN.dat`).
    pub file: u32,
    /// The read that found it.
    pub phase: String,
    /// The block.
    pub block: CorruptBlock,
}

/// The verdict of a certify run over all its sessions (`certify.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Format version of this file.
    #[serde(default = "crate::version::one")]
    pub format_version: u32,
    /// `PASS`, `FAIL` or `INCOMPLETE` (not every step ran and no gate failed).
    pub result: String,
    /// Every gate of the profile.
    pub gates: Vec<GateResult>,
    /// Steps completed.
    pub steps_done: usize,
    /// Steps in the plan.
    pub steps_planned: usize,
    /// Bytes read back and verified.
    pub bytes_verified: u64,
    /// Corrupt bytes over all reads.
    pub corrupt_bytes: u64,
    /// Where (first blocks of each file).
    pub corrupt: Vec<CorruptAt>,
    /// Sessions the journal spans (1 + resumes).
    pub sessions: u32,
}

impl Verdict {
    /// True when every gate passed and every step ran.
    pub fn passed(&self) -> bool {
        self.result == "PASS"
    }
}

/// Writes `dir/certify.json` atomically.
pub fn write_verdict(dir: &Path, v: &Verdict) -> Result<()> {
    crate::version::write_json(&dir.join(VERDICT_FILE_NAME), v)
}

/// Reads `dir/certify.json`, refusing a newer format.
pub fn read_verdict(dir: &Path) -> Result<Verdict> {
    crate::version::read_json(&dir.join(VERDICT_FILE_NAME), FORMAT_VERSION)
}

/// One byte that differs from what was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadByte {
    /// Offset in the file.
    pub offset: u64,
    /// What was written.
    pub expected: u8,
    /// What was read.
    pub found: u8,
}

/// One re-read file in a `verify-*.json` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifiedFile {
    /// Target index in the manifest.
    pub target_index: usize,
    /// The file (or device and extent).
    pub path: String,
    /// Bytes read.
    pub bytes: u64,
    /// Blocks with a bad byte.
    pub corrupt_blocks: u64,
    /// Bad bytes.
    pub corrupt_bytes: u64,
    /// Whether the reads bypassed the page cache.
    pub direct_io: bool,
    /// Every bad byte (up to the listing limit).
    pub bad: Vec<BadByte>,
}

/// What one `hostd verify` found (`verify-<UTC time>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyResult {
    /// Format version of this file.
    #[serde(default = "crate::version::one")]
    pub format_version: u32,
    /// The run verified.
    pub run_id: String,
    /// The hostd that verified it.
    pub hostd_version: String,
    /// When, host Unix ns.
    pub time_ns: u64,
    /// `clean` or `corrupt`.
    pub result: String,
    /// Files read.
    pub files: usize,
    /// Bytes read.
    pub bytes: u64,
    /// Bad bytes in all.
    pub corrupt_bytes: u64,
    /// Each file.
    pub per_file: Vec<VerifiedFile>,
}

/// Adds `dir/verify-<stamp>.json` (a new file, `-N` appended if the name is taken;
/// never overwrites) and flushes it; returns its path.
pub fn write_verify_result(dir: &Path, stamp: &str, r: &VerifyResult) -> Result<PathBuf> {
    let mut bytes = serde_json::to_vec_pretty(r)
        .map_err(|e| RecordError::write(dir, std::io::Error::other(e)))?;
    bytes.push(b'\n');
    for n in 0u32.. {
        let path = dir.join(match n {
            0 => format!("verify-{stamp}.json"),
            n => format!("verify-{stamp}-{n}.json"),
        });
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                f.write_all(&bytes)
                    .and_then(|()| f.sync_all())
                    .map_err(|e| RecordError::write(&path, e))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(RecordError::write(&path, e)),
        }
    }
    unreachable!("u32 names run out")
}

/// Reads one `verify-*.json`.
pub fn read_verify_result(path: &Path) -> Result<VerifyResult> {
    crate::version::read_json(path, FORMAT_VERSION)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(index: u32) -> JournalEntry {
        JournalEntry {
            session: 0,
            target_index: 0,
            phase: "pass1-read".into(),
            index,
            bytes: 4096,
            seconds: 0.5,
            mbps: 0.008,
            verified: Some(true),
            corrupt_bytes: 0,
            corrupt: Vec::new(),
            end_ns: 7,
        }
    }

    #[test]
    fn the_journal_survives_a_torn_last_line_and_names_a_bad_one() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path()).unwrap();
        j.append(&entry(3)).unwrap();
        drop(j);
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.path().join(JOURNAL_FILE_NAME))
            .unwrap();
        f.write_all(b"{\"session\":0,\"tar").unwrap();
        assert_eq!(read_journal(dir.path()).unwrap(), vec![entry(3)]);
        f.write_all(b"\n{}\n").unwrap();
        let err = read_journal(dir.path()).unwrap_err().to_string();
        assert!(err.contains("certify.jsonl: line 2"), "{err}");
    }

    #[test]
    fn verify_results_are_added_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let r = VerifyResult {
            format_version: FORMAT_VERSION,
            run_id: "r".into(),
            hostd_version: "0".into(),
            time_ns: 1,
            result: "clean".into(),
            files: 0,
            bytes: 0,
            corrupt_bytes: 0,
            per_file: Vec::new(),
        };
        let a = write_verify_result(dir.path(), "T", &r).unwrap();
        let b = write_verify_result(dir.path(), "T", &r).unwrap();
        assert_ne!(a, b);
        assert_eq!(read_verify_result(&b).unwrap(), r);
    }
}
