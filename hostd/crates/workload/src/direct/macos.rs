//! macOS: `F_NOCACHE` on the open descriptor.

use super::OpenMode;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::io::AsRawFd;
use std::path::Path;

fn options(mode: OpenMode) -> OpenOptions {
    let mut o = OpenOptions::new();
    match mode {
        OpenMode::CreateNew => o.write(true).create_new(true),
        OpenMode::Write => o.write(true),
        OpenMode::Read => o.read(true),
    };
    o
}

/// Opens and sets `F_NOCACHE`.
pub fn open_direct(path: &Path, mode: OpenMode) -> io::Result<File> {
    let f = options(mode).open(path)?;
    // SAFETY: fcntl on a descriptor we own.
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_NOCACHE, 1) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(f)
}

/// Opens through the page cache (`CreateNew` may find the file a refused
/// direct open already created).
pub fn open_cached(path: &Path, mode: OpenMode) -> io::Result<File> {
    match mode {
        OpenMode::CreateNew => OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path),
        m => options(m).open(path),
    }
}
