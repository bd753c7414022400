//! The spool: batches of line protocol waiting for InfluxDB, oldest first.
//!
//! With a directory (the run directory's `spool/`), each batch is one file
//! `NNNNNNNNNN.lp` (newline-terminated line protocol, numbered in write order), written to a
//! temporary name, synced and renamed, so a crash leaves only whole batches. Batches the
//! server rejected as bad data go to `rejected-NNNNNNNNNN.lp` beside them and are never
//! sent again.
//!
//! Both of its parts are bounded ([`Limits`]): the files take at most
//! [`Limits::disk_bytes`] (counted in whole 4 KiB blocks), and a batch that cannot be written
//! (disk full, directory gone; or a spool without a directory) is kept in memory in its place
//! in the queue, at most [`Limits::memory_batches`] of them. A batch beyond either bound is
//! refused ([`Refused`]) and the caller decides what to do with it.

use hostd_records::write_atomic;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// Disk blocks a spool file is counted in: a small batch still takes a block.
pub const BLOCK: u64 = 4096;

/// Default cap on the spool directory: 1 GiB, about 5 million probe points of line protocol.
pub const DEFAULT_DISK_BYTES: u64 = 1 << 30;

/// Default most batches kept in memory when the disk cannot take them (about 1 MB each at
/// 5 000 points).
pub const DEFAULT_MEMORY_BATCHES: usize = 8;

/// The bounds of a [`Spool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most bytes of batch and rejected files in the directory (whole 4 KiB blocks).
    pub disk_bytes: u64,
    /// Most batches kept in memory when they cannot be written to disk.
    pub memory_batches: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            disk_bytes: DEFAULT_DISK_BYTES,
            memory_batches: DEFAULT_MEMORY_BATCHES,
        }
    }
}

/// Why [`Spool::push`] did not take a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// The directory holds [`Limits::disk_bytes`] already.
    Disk,
    /// The disk cannot take the batch and [`Limits::memory_batches`] are in memory already.
    Memory,
}

/// The part of a batch [`Spool::push`] did not take, handed back.
#[derive(Debug)]
pub struct Refused {
    /// Its lines: the whole batch, or at the cap those past it.
    pub body: String,
    /// Its points.
    pub points: usize,
    /// Which bound was reached.
    pub full: Full,
}

enum Entry {
    File {
        path: PathBuf,
        points: usize,
        bytes: u64,
    },
    Mem {
        body: String,
        points: usize,
    },
}

/// A FIFO of line-protocol batches, on disk when it has a directory.
pub struct Spool {
    dir: Option<PathBuf>,
    limits: Limits,
    queue: VecDeque<Entry>,
    next_seq: u64,
    points: usize,
    /// Bytes of files in the directory (batches and rejected ones, whole blocks).
    disk_bytes: u64,
    disk_peak: u64,
    memory_batches: usize,
    memory_peak: usize,
    /// Set when a batch could not be written to disk (kept in memory instead).
    pub disk_error: Option<String>,
}

impl Spool {
    /// A spool kept in memory only (points are lost if the process ends before backfill),
    /// of at most `memory_batches` batches.
    pub fn in_memory(memory_batches: usize) -> Spool {
        Spool {
            dir: None,
            limits: Limits {
                disk_bytes: 0,
                memory_batches,
            },
            queue: VecDeque::new(),
            next_seq: 1,
            points: 0,
            disk_bytes: 0,
            disk_peak: 0,
            memory_batches: 0,
            memory_peak: 0,
            disk_error: None,
        }
    }

    /// Opens (creating if needed) a spool directory. Batches left there by an earlier
    /// writer (`NNNNNNNNNN.lp`) are queued first, in order, and count against the cap.
    pub fn open(dir: &Path, limits: Limits) -> anyhow::Result<Spool> {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create spool directory {}: {e}", dir.display()))?;
        let mut found = Vec::new();
        let mut rejected_bytes = 0;
        for entry in std::fs::read_dir(dir)
            .map_err(|e| anyhow::anyhow!("cannot read spool directory {}: {e}", dir.display()))?
        {
            let path = entry?.path();
            if let Some(seq) = batch_seq(&path) {
                found.push((seq, path));
            } else if is_rejected(&path) {
                rejected_bytes += blocks(std::fs::metadata(&path).map_or(0, |m| m.len()));
            }
        }
        found.sort();
        let mut spool = Spool {
            dir: Some(dir.to_owned()),
            limits,
            queue: VecDeque::new(),
            next_seq: found.last().map_or(1, |(s, _)| s + 1),
            points: 0,
            disk_bytes: rejected_bytes,
            disk_peak: 0,
            memory_batches: 0,
            memory_peak: 0,
            disk_error: None,
        };
        for (_, path) in found {
            let body = std::fs::read(&path)?;
            let points = count_lines(&body);
            let bytes = blocks(body.len() as u64);
            spool.points += points;
            spool.disk_bytes += bytes;
            spool.queue.push_back(Entry::File {
                path,
                points,
                bytes,
            });
        }
        spool.disk_peak = spool.disk_bytes;
        Ok(spool)
    }

    /// The spool directory, if on disk.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Its bounds (`disk_bytes` is 0 without a directory).
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// True when nothing is waiting.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Points waiting.
    pub fn points(&self) -> usize {
        self.points
    }

    /// Batches waiting.
    pub fn batches(&self) -> usize {
        self.queue.len()
    }

    /// Bytes its files take on disk now (whole 4 KiB blocks), rejected ones included.
    pub fn disk_bytes(&self) -> u64 {
        self.disk_bytes
    }

    /// The most [`Spool::disk_bytes`] ever took.
    pub fn disk_peak(&self) -> u64 {
        self.disk_peak
    }

    /// Batches held in memory now.
    pub fn memory_batches(&self) -> usize {
        self.memory_batches
    }

    /// The most batches ever held in memory at once.
    pub fn memory_peak(&self) -> usize {
        self.memory_peak
    }

    /// Appends a batch (`body` is newline-terminated line protocol of `points` lines): to a
    /// file if the cap leaves room and the write succeeds, else to memory if fewer than
    /// [`Limits::memory_batches`] are there. Refused (and handed back) otherwise. At the cap
    /// the lines that still fit are spooled and the rest is refused, without trying memory,
    /// so that the spool holds the run's points in order up to the cap, with no hole.
    pub fn push(&mut self, body: String, points: usize) -> Result<(), Refused> {
        if self.dir.is_some() {
            let room = (self.limits.disk_bytes.saturating_sub(self.disk_bytes) / BLOCK) * BLOCK;
            if blocks(body.len() as u64) > room {
                // The lines that fit (whole lines: a batch file is whole line protocol).
                let fit = body.as_bytes()[..body.len().min(room as usize)]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i + 1);
                let head_points = count_lines(&body.as_bytes()[..fit]);
                if fit > 0 && self.write_file(&body[..fit], head_points).is_ok() {
                    return Err(Refused {
                        body: body[fit..].to_owned(),
                        points: points - head_points,
                        full: Full::Disk,
                    });
                }
                return Err(Refused {
                    body,
                    points,
                    full: Full::Disk,
                });
            }
            match self.write_file(&body, points) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    let first = self.disk_error.is_none();
                    self.disk_error = Some(e);
                    if first {
                        tracing::error!("{}", self.disk_error.as_deref().unwrap_or_default());
                    }
                }
            }
        }
        if self.memory_batches >= self.limits.memory_batches {
            return Err(Refused {
                body,
                points,
                full: Full::Memory,
            });
        }
        self.points += points;
        self.memory_batches += 1;
        self.memory_peak = self.memory_peak.max(self.memory_batches);
        self.queue.push_back(Entry::Mem { body, points });
        Ok(())
    }

    /// Writes a batch file at the end of the queue.
    fn write_file(&mut self, body: &str, points: usize) -> Result<(), String> {
        let Some(dir) = &self.dir else {
            return Err("no spool directory".into());
        };
        let path = dir.join(format!("{:010}.lp", self.next_seq));
        write_atomic(&path, body.as_bytes()).map_err(|e| {
            format!(
                "cannot write spool file {}: {e}; batches are kept in memory (at most {})",
                path.display(),
                self.limits.memory_batches
            )
        })?;
        let bytes = blocks(body.len() as u64);
        self.next_seq += 1;
        self.points += points;
        self.disk_bytes += bytes;
        self.disk_peak = self.disk_peak.max(self.disk_bytes);
        self.queue.push_back(Entry::File {
            path,
            points,
            bytes,
        });
        Ok(())
    }

    /// The oldest batch and its point count.
    pub fn front(&self) -> anyhow::Result<Option<(String, usize)>> {
        match self.queue.front() {
            None => Ok(None),
            Some(Entry::Mem { body, points }) => Ok(Some((body.clone(), *points))),
            Some(Entry::File { path, points, .. }) => {
                let body = std::fs::read_to_string(path).map_err(|e| {
                    anyhow::anyhow!("cannot read spool file {}: {e}", path.display())
                })?;
                Ok(Some((body, *points)))
            }
        }
    }

    /// Removes the oldest batch after it was written (deletes its file).
    pub fn pop_front(&mut self) -> anyhow::Result<()> {
        if let Some(entry) = self.queue.pop_front() {
            match entry {
                Entry::Mem { points, .. } => {
                    self.points -= points;
                    self.memory_batches -= 1;
                }
                Entry::File {
                    path,
                    points,
                    bytes,
                } => {
                    self.points -= points;
                    self.disk_bytes -= bytes;
                    std::fs::remove_file(&path).map_err(|e| {
                        anyhow::anyhow!("cannot remove sent spool file {}: {e}", path.display())
                    })?;
                }
            }
        }
        Ok(())
    }

    /// Removes the oldest batch because the server rejected its data: on disk it is kept
    /// as `rejected-….lp` for inspection (within the cap). Returns where it went, if
    /// anywhere.
    pub fn reject_front(&mut self) -> Option<PathBuf> {
        let entry = self.queue.pop_front()?;
        match entry {
            Entry::Mem { body, points } => {
                self.points -= points;
                self.memory_batches -= 1;
                self.keep_rejected(&body)
            }
            Entry::File { path, points, .. } => {
                // The file stays (renamed): its bytes still count.
                self.points -= points;
                let name = path.file_name()?.to_string_lossy().into_owned();
                let dest = path.with_file_name(format!("rejected-{name}"));
                std::fs::rename(&path, &dest).ok().map(|_| dest)
            }
        }
    }

    /// Keeps a rejected batch that never reached the queue (see [`Spool::reject_front`]);
    /// `None` without a directory, at the cap, or when it cannot be written.
    pub fn keep_rejected(&mut self, body: &str) -> Option<PathBuf> {
        let dir = self.dir.clone()?;
        let bytes = blocks(body.len() as u64);
        if self.disk_bytes + bytes > self.limits.disk_bytes {
            return None;
        }
        let path = dir.join(format!("rejected-{:010}.lp", self.next_seq));
        self.next_seq += 1;
        write_atomic(&path, body.as_bytes()).ok()?;
        self.disk_bytes += bytes;
        self.disk_peak = self.disk_peak.max(self.disk_bytes);
        Some(path)
    }
}

/// `len` bytes rounded up to whole [`BLOCK`]s.
fn blocks(len: u64) -> u64 {
    len.div_ceil(BLOCK) * BLOCK
}

fn is_rejected(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("rejected-"))
        .is_some_and(|rest| batch_seq(Path::new(rest)).is_some())
}

/// The sequence number of a spool batch file (`NNNNNNNNNN.lp`), or `None` for other files.
pub fn batch_seq(path: &Path) -> Option<u64> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".lp")?;
    if stem.is_empty() || !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    stem.parse().ok()
}

/// Counts the non-empty lines (points) of a line-protocol body.
pub fn count_lines(body: &[u8]) -> usize {
    body.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_spool_keeps_order_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let sp = dir.path().join("spool");
        let mut s = Spool::open(&sp, Limits::default()).unwrap();
        s.push("a 1\nb 2\n".into(), 2).unwrap();
        s.push("c 3\n".into(), 1).unwrap();
        assert_eq!(s.points(), 3);
        assert_eq!(s.disk_bytes(), 2 * BLOCK, "each file counts whole blocks");
        drop(s);
        // an unrelated file is left alone and not queued
        std::fs::write(sp.join("notes.txt"), "x").unwrap();
        let mut s = Spool::open(&sp, Limits::default()).unwrap();
        assert_eq!((s.batches(), s.points()), (2, 3));
        assert_eq!(
            s.disk_bytes(),
            2 * BLOCK,
            "reopened files count against the cap"
        );
        assert_eq!(s.front().unwrap().unwrap(), ("a 1\nb 2\n".into(), 2));
        s.pop_front().unwrap();
        s.push("d 4\n".into(), 1).unwrap();
        assert_eq!(s.front().unwrap().unwrap().0, "c 3\n");
        s.pop_front().unwrap();
        assert_eq!(s.front().unwrap().unwrap().0, "d 4\n");
        assert!(s
            .reject_front()
            .unwrap()
            .ends_with("rejected-0000000003.lp"));
        assert!(s.is_empty());
        assert_eq!(s.disk_bytes(), BLOCK, "a rejected file stays and counts");
        let mut names: Vec<_> = std::fs::read_dir(&sp)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["notes.txt", "rejected-0000000003.lp"]);
        assert_eq!(
            Spool::open(&sp, Limits::default()).unwrap().disk_bytes(),
            BLOCK
        );
    }

    #[test]
    fn unwritable_directory_keeps_batches_in_memory_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let sp = dir.path().join("spool");
        let mut s = Spool::open(&sp, Limits::default()).unwrap();
        s.push("a 1\n".into(), 1).unwrap();
        std::fs::remove_dir_all(&sp).unwrap(); // directory vanishes under us
        s.push("b 2\n".into(), 1).unwrap();
        assert!(s.disk_error.is_some());
        assert_eq!(s.memory_batches(), 1);
        assert!(s.front().is_err(), "first file is gone: a clear error");
    }

    /// At the cap the lines that still fit are spooled and the rest is handed back, never
    /// kept in memory; once sent batches make room, batches are taken again.
    #[test]
    fn the_cap_takes_what_fits_and_refuses_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let sp = dir.path().join("spool");
        let limits = Limits {
            disk_bytes: 3 * BLOCK,
            memory_batches: 2,
        };
        let mut s = Spool::open(&sp, limits).unwrap();
        let batch = |i: usize| format!("m v={i}i\n").repeat(700); // 4.9 kB: two blocks
        s.push(batch(1), 700).unwrap();
        let refused = s.push(batch(2), 700).unwrap_err();
        assert_eq!(refused.full, Full::Disk);
        // One block was left: 585 whole lines of 7 bytes (4 095 bytes) fit.
        assert_eq!(refused.points, 700 - 585);
        assert_eq!(refused.body, "m v=2i\n".repeat(115));
        assert_eq!(s.front().unwrap().unwrap().0, batch(1));
        s.pop_front().unwrap();
        assert_eq!(
            s.front().unwrap().unwrap(),
            ("m v=2i\n".repeat(585), 585),
            "the prefix that fitted, as a batch of its own"
        );
        assert_eq!((s.disk_bytes(), s.memory_batches()), (BLOCK, 0));
        s.push(batch(3), 700).unwrap();
        assert_eq!(s.disk_bytes(), 3 * BLOCK);
        let refused = s.push("x 1\n".into(), 1).unwrap_err();
        assert_eq!((refused.full, refused.points), (Full::Disk, 1));
        assert_eq!(s.points(), 585 + 700);
        assert_eq!(s.disk_peak(), 3 * BLOCK);
        assert_eq!(std::fs::read_dir(&sp).unwrap().count(), 2);
        // Multi-byte text is cut at a line end, never inside a character.
        let mut s = Spool::open(&dir.path().join("utf8"), limits).unwrap();
        let refused = s.push("t s=\"°C\"\n".repeat(2000), 2000).unwrap_err();
        assert!(refused.body.starts_with("t s=") && refused.points < 2000);
    }

    /// Without a directory (or when the disk refuses), at most `memory_batches` wait.
    #[test]
    fn memory_holds_at_most_its_bound() {
        let mut s = Spool::in_memory(2);
        s.push("a 1\n".into(), 1).unwrap();
        s.push("b 1\n".into(), 1).unwrap();
        assert_eq!(s.push("c 1\n".into(), 1).unwrap_err().full, Full::Memory);
        assert_eq!((s.memory_batches(), s.memory_peak(), s.points()), (2, 2, 2));
        s.pop_front().unwrap();
        s.push("c 1\n".into(), 1).unwrap();
        assert_eq!(s.front().unwrap().unwrap().0, "b 1\n");
        assert_eq!(s.memory_peak(), 2);
    }

    #[test]
    fn batch_names_and_line_counts() {
        assert_eq!(batch_seq(Path::new("/x/0000000012.lp")), Some(12));
        assert_eq!(batch_seq(Path::new("/x/rejected-0000000012.lp")), None);
        assert!(is_rejected(Path::new("/x/rejected-0000000012.lp")));
        assert!(!is_rejected(Path::new("/x/rejected-x.lp")));
        assert_eq!(batch_seq(Path::new("/x/12.lp.tmp")), None);
        assert_eq!(count_lines(b"a 1\n\nb 2\n# c\nd 3"), 3);
        assert_eq!(
            (blocks(0), blocks(1), blocks(BLOCK + 1)),
            (0, BLOCK, 2 * BLOCK)
        );
    }
}
