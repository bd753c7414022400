//! Windows: `FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH` (as fio's
//! `windowsaio` opens files), so reads and writes skip the system cache and
//! writes reach the device before they complete. The buffers, offsets and
//! lengths are 4 KiB aligned ([`crate::buffer`]), a multiple of every sector size.
//!
//! Files are also opened with `FILE_FLAG_OVERLAPPED`. Windows serialises
//! the I/O of a handle opened for synchronous I/O, so the threads engine's
//! workers would take turns on one file; on an overlapped handle each worker
//! issues its own positioned `ReadFile`/`WriteFile` and waits on its own event,
//! and the completion-port engine can keep the queue full.

use crate::engine::RawFile;
use std::fs::File;
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::Path;
use windows_sys::Win32::Foundation::{
    CloseHandle, GetLastError, ERROR_DISK_FULL, ERROR_HANDLE_DISK_FULL, ERROR_HANDLE_EOF,
    ERROR_INVALID_PARAMETER, ERROR_IO_PENDING, ERROR_NOT_SUPPORTED, HANDLE,
};
use windows_sys::Win32::Storage::FileSystem::{
    ReadFile, WriteFile, FILE_FLAG_NO_BUFFERING, FILE_FLAG_OVERLAPPED, FILE_FLAG_WRITE_THROUGH,
};
use windows_sys::Win32::System::Threading::CreateEventW;
use windows_sys::Win32::System::IO::{GetOverlappedResult, OVERLAPPED};

use super::{options, OpenMode};

/// The flags every direct open adds.
pub const DIRECT_FLAGS: u32 =
    FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH | FILE_FLAG_OVERLAPPED;

/// Opens bypassing the system cache, for overlapped I/O.
pub fn open_direct(path: &Path, mode: OpenMode) -> io::Result<File> {
    options(mode).custom_flags(DIRECT_FLAGS).open(path)
}

/// What a cached open adds: `FILE_FLAG_OVERLAPPED`, like a direct one, so that the
/// threads engine's workers keep their own positions in flight and the completion port
/// can take the handle (a synchronous handle cannot be linked to one).
pub(super) fn cached(o: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    o.custom_flags(FILE_FLAG_OVERLAPPED)
}

/// Whether an open failed because the volume refuses unbuffered I/O.
pub(super) fn is_refusal(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(|c| c as u32),
        Some(ERROR_INVALID_PARAMETER | ERROR_NOT_SUPPORTED)
    )
}

/// Whether `e` says the disk is full.
pub fn is_disk_full(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(|c| c as u32),
        Some(ERROR_DISK_FULL | ERROR_HANDLE_DISK_FULL)
    )
}

/// The error Windows gives when the disk is full.
pub fn disk_full() -> io::Error {
    io::Error::from_raw_os_error(ERROR_DISK_FULL as i32)
}

/// This thread's manual-reset event for waiting on its own I/O (one per
/// thread, so concurrent I/Os on one handle never wake each other).
struct Event(HANDLE);

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: the handle was created by CreateEventW and is closed once.
        unsafe { CloseHandle(self.0) };
    }
}

thread_local! {
    static EVENT: Result<Event, i32> = {
        // SAFETY: no attributes, manual reset, unsignalled, unnamed.
        let h = unsafe { CreateEventW(std::ptr::null(), 1, 0, std::ptr::null()) };
        if h.is_null() {
            Err(io::Error::last_os_error().raw_os_error().unwrap_or(0))
        } else {
            Ok(Event(h))
        }
    };
}

/// One positioned transfer on a handle, waited for on this thread's event.
/// End of file reads 0 bytes.
///
/// # Safety
/// `buf` must be valid for `len` bytes and `h` an open file handle.
unsafe fn transfer(
    h: RawFile,
    buf: *mut u8,
    len: usize,
    offset: u64,
    write: bool,
) -> io::Result<usize> {
    let len = u32::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "one I/O of 4 GiB or more"))?;
    EVENT.with(|ev| {
        let ev = ev.as_ref().map_err(|&c| io::Error::from_raw_os_error(c))?;
        let mut ov: OVERLAPPED = std::mem::zeroed();
        ov.Anonymous.Anonymous.Offset = offset as u32;
        ov.Anonymous.Anonymous.OffsetHigh = (offset >> 32) as u32;
        ov.hEvent = ev.0;
        let h = h as HANDLE;
        let ok = if write {
            WriteFile(h, buf, len, std::ptr::null_mut(), &mut ov)
        } else {
            ReadFile(h, buf, len, std::ptr::null_mut(), &mut ov)
        };
        if ok == 0 {
            match GetLastError() {
                ERROR_IO_PENDING => {}
                ERROR_HANDLE_EOF if !write => return Ok(0),
                e => return Err(io::Error::from_raw_os_error(e as i32)),
            }
        }
        let mut n = 0u32;
        if GetOverlappedResult(h, &ov, &mut n, 1) == 0 {
            return match GetLastError() {
                ERROR_HANDLE_EOF if !write => Ok(0),
                e => Err(io::Error::from_raw_os_error(e as i32)),
            };
        }
        Ok(n as usize)
    })
}

/// Reads up to `len` bytes at `offset` into `buf`.
///
/// # Safety
/// `buf` must be valid for `len` bytes of writes and `h` an open file handle.
#[inline]
pub unsafe fn pread(h: RawFile, buf: *mut u8, len: usize, offset: u64) -> io::Result<usize> {
    transfer(h, buf, len, offset, false)
}

/// Writes up to `len` bytes of `buf` at `offset`.
///
/// # Safety
/// `buf` must be valid for `len` bytes of reads and `h` an open file handle.
#[inline]
pub unsafe fn pwrite(h: RawFile, buf: *const u8, len: usize, offset: u64) -> io::Result<usize> {
    transfer(h, buf as *mut u8, len, offset, true)
}

/// Reads up to `buf.len()` bytes of `file` at `offset` (a direct file is
/// overlapped, where std's `seek_read` would wait on the handle itself).
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    // SAFETY: `buf` is a live mutable slice and the handle is open.
    unsafe {
        transfer(
            file.as_raw_handle(),
            buf.as_mut_ptr(),
            buf.len(),
            offset,
            false,
        )
    }
}
