//! The spool: batches of line protocol waiting for InfluxDB, oldest first.
//!
//! With a directory (the run directory's `spool/`), each batch is one file
//! `NNNNNNNNNN.lp` (newline-terminated line protocol, numbered in write order), written to a
//! temporary name, synced and renamed, so a crash leaves only whole batches. If a file
//! cannot be written (disk full) the batch is kept in memory in its place in the queue, so
//! order is kept either way. Batches the server rejected as bad data go to
//! `rejected-NNNNNNNNNN.lp` beside them and are never sent again.

use hostd_records::write_atomic;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

enum Entry {
    File { path: PathBuf, points: usize },
    Mem { body: String, points: usize },
}

/// A FIFO of line-protocol batches, on disk when it has a directory.
pub struct Spool {
    dir: Option<PathBuf>,
    queue: VecDeque<Entry>,
    next_seq: u64,
    points: usize,
    /// Set when a batch could not be written to disk (kept in memory instead).
    pub disk_error: Option<String>,
}

impl Spool {
    /// A spool kept in memory only (points are lost if the process ends before backfill).
    pub fn in_memory() -> Spool {
        Spool {
            dir: None,
            queue: VecDeque::new(),
            next_seq: 1,
            points: 0,
            disk_error: None,
        }
    }

    /// Opens (creating if needed) a spool directory. Batches left there by an earlier
    /// writer (`NNNNNNNNNN.lp`) are queued first, in order.
    pub fn open(dir: &Path) -> anyhow::Result<Spool> {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create spool directory {}: {e}", dir.display()))?;
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir)
            .map_err(|e| anyhow::anyhow!("cannot read spool directory {}: {e}", dir.display()))?
        {
            let path = entry?.path();
            if let Some(seq) = batch_seq(&path) {
                found.push((seq, path));
            }
        }
        found.sort();
        let mut spool = Spool {
            dir: Some(dir.to_owned()),
            queue: VecDeque::new(),
            next_seq: found.last().map_or(1, |(s, _)| s + 1),
            points: 0,
            disk_error: None,
        };
        for (_, path) in found {
            let points = count_lines(&std::fs::read(&path)?);
            spool.points += points;
            spool.queue.push_back(Entry::File { path, points });
        }
        Ok(spool)
    }

    /// The spool directory, if on disk.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
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

    /// Appends a batch (`body` is newline-terminated line protocol of `points` lines).
    pub fn push(&mut self, body: String, points: usize) {
        self.points += points;
        if let Some(dir) = &self.dir {
            let seq = self.next_seq;
            self.next_seq += 1;
            let path = dir.join(format!("{seq:010}.lp"));
            match write_atomic(&path, body.as_bytes()) {
                Ok(()) => {
                    self.queue.push_back(Entry::File { path, points });
                    return;
                }
                Err(e) => {
                    self.disk_error = Some(format!(
                        "cannot write spool file {}: {e}; batch kept in memory",
                        path.display()
                    ));
                    tracing::error!("{}", self.disk_error.as_deref().unwrap_or_default());
                }
            }
        }
        self.queue.push_back(Entry::Mem { body, points });
    }

    /// The oldest batch and its point count.
    pub fn front(&self) -> anyhow::Result<Option<(String, usize)>> {
        match self.queue.front() {
            None => Ok(None),
            Some(Entry::Mem { body, points }) => Ok(Some((body.clone(), *points))),
            Some(Entry::File { path, points }) => {
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
                Entry::Mem { points, .. } => self.points -= points,
                Entry::File { path, points } => {
                    self.points -= points;
                    std::fs::remove_file(&path).map_err(|e| {
                        anyhow::anyhow!("cannot remove sent spool file {}: {e}", path.display())
                    })?;
                }
            }
        }
        Ok(())
    }

    /// Removes the oldest batch because the server rejected its data: on disk it is kept
    /// as `rejected-….lp` for inspection. Returns where it went, if anywhere.
    pub fn reject_front(&mut self) -> Option<PathBuf> {
        let entry = self.queue.pop_front()?;
        match entry {
            Entry::Mem { body, points } => {
                self.points -= points;
                let dir = self.dir.clone()?;
                let path = dir.join(format!("rejected-{:010}.lp", self.next_seq));
                self.next_seq += 1;
                write_atomic(&path, body.as_bytes()).ok().map(|_| path)
            }
            Entry::File { path, points } => {
                self.points -= points;
                let name = path.file_name()?.to_string_lossy().into_owned();
                let dest = path.with_file_name(format!("rejected-{name}"));
                std::fs::rename(&path, &dest).ok().map(|_| dest)
            }
        }
    }

    /// Keeps a rejected batch that never reached the queue (see [`Spool::reject_front`]).
    pub fn keep_rejected(&mut self, body: &str) -> Option<PathBuf> {
        let dir = self.dir.clone()?;
        let path = dir.join(format!("rejected-{:010}.lp", self.next_seq));
        self.next_seq += 1;
        write_atomic(&path, body.as_bytes()).ok().map(|_| path)
    }
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
        let mut s = Spool::open(&sp).unwrap();
        s.push("a 1\nb 2\n".into(), 2);
        s.push("c 3\n".into(), 1);
        assert_eq!(s.points(), 3);
        drop(s);
        // an unrelated file is left alone and not queued
        std::fs::write(sp.join("notes.txt"), "x").unwrap();
        let mut s = Spool::open(&sp).unwrap();
        assert_eq!((s.batches(), s.points()), (2, 3));
        assert_eq!(s.front().unwrap().unwrap(), ("a 1\nb 2\n".into(), 2));
        s.pop_front().unwrap();
        s.push("d 4\n".into(), 1);
        assert_eq!(s.front().unwrap().unwrap().0, "c 3\n");
        s.pop_front().unwrap();
        assert_eq!(s.front().unwrap().unwrap().0, "d 4\n");
        assert!(s
            .reject_front()
            .unwrap()
            .ends_with("rejected-0000000003.lp"));
        assert!(s.is_empty());
        let mut names: Vec<_> = std::fs::read_dir(&sp)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["notes.txt", "rejected-0000000003.lp"]);
    }

    #[test]
    fn unwritable_directory_keeps_batches_in_memory_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let sp = dir.path().join("spool");
        let mut s = Spool::open(&sp).unwrap();
        s.push("a 1\n".into(), 1);
        std::fs::remove_dir_all(&sp).unwrap(); // directory vanishes under us
        s.push("b 2\n".into(), 1);
        assert!(s.disk_error.is_some());
        assert!(s.front().is_err(), "first file is gone: a clear error");
    }

    #[test]
    fn batch_names_and_line_counts() {
        assert_eq!(batch_seq(Path::new("/x/0000000012.lp")), Some(12));
        assert_eq!(batch_seq(Path::new("/x/rejected-0000000012.lp")), None);
        assert_eq!(batch_seq(Path::new("/x/12.lp.tmp")), None);
        assert_eq!(count_lines(b"a 1\n\nb 2\n# c\nd 3"), 3);
    }
}
