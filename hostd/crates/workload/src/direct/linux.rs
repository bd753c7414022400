//! Linux: `O_DIRECT`.

use super::OpenMode;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
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

/// Opens with `O_DIRECT`.
pub fn open_direct(path: &Path, mode: OpenMode) -> io::Result<File> {
    options(mode).custom_flags(libc::O_DIRECT).open(path)
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
