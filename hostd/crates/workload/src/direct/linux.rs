//! Linux: `O_DIRECT`.

use super::{options, OpenMode};
use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens with `O_DIRECT`.
pub fn open_direct(path: &Path, mode: OpenMode) -> io::Result<File> {
    options(mode).custom_flags(libc::O_DIRECT).open(path)
}

/// What a cached open adds on this OS: nothing.
pub(super) fn cached(o: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    o
}
