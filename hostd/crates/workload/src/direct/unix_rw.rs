//! Unix: positional I/O with `pread`/`pwrite` on the descriptor, and how the
//! kernel says a disk is full (`ENOSPC`).

use crate::engine::RawFile;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Reads up to `len` bytes at `offset` into `buf`.
///
/// # Safety
/// `buf` must be valid for `len` bytes of writes and `fd` an open descriptor.
#[inline]
pub unsafe fn pread(fd: RawFile, buf: *mut u8, len: usize, offset: u64) -> io::Result<usize> {
    let n = libc::pread(fd, buf as *mut libc::c_void, len, offset as libc::off_t);
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Writes up to `len` bytes of `buf` at `offset`.
///
/// # Safety
/// `buf` must be valid for `len` bytes of reads and `fd` an open descriptor.
#[inline]
pub unsafe fn pwrite(fd: RawFile, buf: *const u8, len: usize, offset: u64) -> io::Result<usize> {
    let n = libc::pwrite(fd, buf as *const libc::c_void, len, offset as libc::off_t);
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Reads up to `buf.len()` bytes of `file` at `offset`.
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    file.read_at(buf, offset)
}

/// Whether `e` says the disk is full.
pub fn is_disk_full(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENOSPC)
}

/// The error the OS gives when the disk is full.
pub fn disk_full() -> io::Error {
    io::Error::from_raw_os_error(libc::ENOSPC)
}

/// Whether an open failed because the filesystem refuses direct I/O.
pub(super) fn is_refusal(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EINVAL)
}
