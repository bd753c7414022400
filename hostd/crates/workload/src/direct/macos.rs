//! macOS: `F_NOCACHE` on the open descriptor.

use super::{options, OpenMode};
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Opens and sets `F_NOCACHE`.
pub fn open_direct(path: &Path, mode: OpenMode) -> io::Result<File> {
    let f = options(mode).open(path)?;
    // SAFETY: fcntl on a descriptor we own.
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_NOCACHE, 1) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(f)
}

/// What a cached open adds on this OS: nothing.
pub(super) fn cached(o: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    o
}
