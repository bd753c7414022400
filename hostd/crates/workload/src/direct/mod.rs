//! Opening files so that I/O bypasses the page cache: `O_DIRECT` on Linux
//! (`linux.rs`), `F_NOCACHE` on macOS (`macos.rs`), `FILE_FLAG_NO_BUFFERING`
//! on Windows (`windows.rs`); and positional I/O on the open file
//! (`unix_rw.rs`, `windows.rs`). Nothing else in the crate asks which OS it
//! runs on.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as os;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as os;
#[cfg(unix)]
mod unix_rw;
#[cfg(unix)]
use unix_rw as rw;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;
#[cfg(windows)]
use windows as rw;

pub use rw::{disk_full, is_disk_full, pread, pwrite, read_at};

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

use hostd_records::DirectIo;

/// How to open a test file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Create a new file (fails if it exists) for writing.
    CreateNew,
    /// Open an existing file for writing (random-write tests).
    Write,
    /// Open for reading.
    Read,
}

/// Opens `path` with direct I/O. With `allow_cached`, falls back to cached
/// I/O when direct I/O is refused and says so in the second value.
pub fn open(path: &Path, mode: OpenMode, allow_cached: bool) -> io::Result<(File, DirectIo)> {
    match os::open_direct(path, mode) {
        Ok(f) => Ok((f, DirectIo::Direct)),
        Err(e) if rw::is_refusal(&e) => {
            let reason = format!("direct I/O refused by the filesystem ({e})");
            if !allow_cached {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("{reason}; results would measure the page cache, not the disk — rerun with --allow-cached to accept that"),
                ));
            }
            let f = open_cached(path, mode)?;
            Ok((f, DirectIo::Refused { reason }))
        }
        Err(e) => Err(e),
    }
}

/// Flushes file data to the device (fsync).
pub fn sync(file: &File) -> io::Result<()> {
    file.sync_all()
}

/// Open options for `mode`; each OS file adds its cache-bypass step.
pub(crate) fn options(mode: OpenMode) -> OpenOptions {
    let mut o = OpenOptions::new();
    match mode {
        OpenMode::CreateNew => o.write(true).create_new(true),
        // Read too: a mixed job reads and writes the same file.
        OpenMode::Write => o.read(true).write(true),
        OpenMode::Read => o.read(true),
    };
    o
}

/// Opens through the page cache (`CreateNew` may find the file a refused
/// direct open already created).
pub fn open_cached(path: &Path, mode: OpenMode) -> io::Result<File> {
    let mut o = match mode {
        OpenMode::CreateNew => {
            let mut o = OpenOptions::new();
            o.write(true).create(true).truncate(false);
            o
        }
        m => options(m),
    };
    os::cached(&mut o).open(path)
}
