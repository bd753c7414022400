//! Windows: overlapped I/O on an I/O completion port, the Windows counterpart
//! of io_uring (as fio's `windowsaio`). `commit` starts every queued request
//! with `ReadFile`/`WriteFile` and an `OVERLAPPED` of its own, so as many I/Os
//! as the job queues are in flight at once on one thread; `reap` takes
//! finished ones from the port in batches (`GetQueuedCompletionStatusEx`).
//! The file is associated with the port in `begin_job` (direct files are
//! opened with `FILE_FLAG_OVERLAPPED`, [`crate::direct`]).

use super::{IoCompletion, IoEngine, IoRequest, RawFile, WaitCounts};
use std::io;
use windows_sys::Win32::Foundation::{
    CloseHandle, GetLastError, ERROR_HANDLE_EOF, ERROR_INVALID_PARAMETER, ERROR_IO_PENDING, HANDLE,
    INVALID_HANDLE_VALUE, WAIT_TIMEOUT,
};
use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::IO::{
    CancelIoEx, CreateIoCompletionPort, GetOverlappedResult, GetQueuedCompletionStatusEx,
    OVERLAPPED, OVERLAPPED_ENTRY,
};

/// One request in flight: the `OVERLAPPED` first, so the pointer the port
/// hands back is the operation's.
#[repr(C)]
struct Op {
    ov: OVERLAPPED,
    slot: usize,
}

/// Completion-port engine.
pub struct Iocp {
    port: HANDLE,
    file: RawFile,
    pending: Vec<IoRequest>,
    /// One `Op` per job-loop slot, allocated once; boxed so it never moves
    /// while Windows writes to it.
    #[allow(clippy::vec_box)] // the Vec grows while earlier Ops are in flight
    ops: Vec<Box<Op>>,
    in_flight: usize,
    /// Requests that failed to start: completed at once with their error.
    failed: Vec<IoCompletion>,
    polling: bool,
    /// How the waits ended.
    counts: WaitCounts,
}

// The port and file handles may be used from any thread; the Ops are owned.
unsafe impl Send for Iocp {}

impl Iocp {
    /// Creates a completion port for up to `queue_depth` I/Os in flight.
    pub fn new(queue_depth: usize) -> io::Result<Iocp> {
        // SAFETY: a new port, no file yet.
        let port =
            unsafe { CreateIoCompletionPort(INVALID_HANDLE_VALUE, std::ptr::null_mut(), 0, 1) };
        if port.is_null() {
            return Err(io::Error::last_os_error());
        }
        Ok(Iocp {
            port,
            file: std::ptr::null_mut(),
            pending: Vec::with_capacity(queue_depth),
            ops: Vec::new(),
            in_flight: 0,
            failed: Vec::new(),
            polling: false,
            counts: WaitCounts::default(),
        })
    }

    fn op(&mut self, slot: usize) -> &mut Op {
        while self.ops.len() <= slot {
            self.ops.push(Box::new(Op {
                // SAFETY: OVERLAPPED is plain data; all zeros is its initial state.
                ov: unsafe { std::mem::zeroed() },
                slot: self.ops.len(),
            }));
        }
        &mut self.ops[slot]
    }

    /// Starts one request; false if it failed to start (its error is queued).
    fn start(&mut self, req: IoRequest) {
        let file = req.fd;
        let op = self.op(req.slot);
        // SAFETY: OVERLAPPED is plain data; all zeros is its initial state.
        op.ov = unsafe { std::mem::zeroed() };
        op.ov.Anonymous.Anonymous.Offset = req.offset as u32;
        op.ov.Anonymous.Anonymous.OffsetHigh = (req.offset >> 32) as u32;
        let ov: *mut OVERLAPPED = &mut op.ov;
        let len = u32::try_from(req.len).unwrap_or(u32::MAX);
        // SAFETY: the job loop keeps the buffer alive and untouched until
        // reaped, and the Op lives in a Box this engine owns until then.
        let ok = unsafe {
            if req.write {
                WriteFile(file, req.buf, len, std::ptr::null_mut(), ov)
            } else {
                ReadFile(file, req.buf, len, std::ptr::null_mut(), ov)
            }
        };
        // Success now or later: either way a packet comes to the port.
        if ok != 0 || unsafe { GetLastError() } == ERROR_IO_PENDING {
            self.in_flight += 1;
            return;
        }
        let err = unsafe { GetLastError() };
        self.failed.push(IoCompletion {
            slot: req.slot,
            result: if err == ERROR_HANDLE_EOF && !req.write {
                Ok(0)
            } else {
                Err(io::Error::from_raw_os_error(err as i32))
            },
            completed_at: None,
            issued_at: None,
        });
    }

    /// Takes up to 64 completions from the port, waiting at most `ms`.
    fn take(&mut self, ms: u32, out: &mut Vec<IoCompletion>) -> io::Result<usize> {
        // SAFETY: OVERLAPPED_ENTRY is plain data.
        let mut entries: [OVERLAPPED_ENTRY; 64] = unsafe { std::mem::zeroed() };
        let mut n = 0u32;
        // SAFETY: our port, a buffer of the length given, an out count.
        let ok = unsafe {
            GetQueuedCompletionStatusEx(self.port, entries.as_mut_ptr(), 64, &mut n, ms, 0)
        };
        if ok == 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error().map(|c| c as u32) {
                Some(WAIT_TIMEOUT) => Ok(0),
                _ => Err(e),
            };
        }
        for e in &entries[..n as usize] {
            let op = e.lpOverlapped as *const Op;
            let mut bytes = 0u32;
            // SAFETY: every packet on this port carries one of our Ops; the
            // I/O is finished, so asking without waiting only reads its status.
            let (slot, done) = unsafe {
                (
                    (*op).slot,
                    GetOverlappedResult(self.file, &(*op).ov, &mut bytes, 0),
                )
            };
            let result = if done != 0 {
                Ok(bytes as usize)
            } else {
                match unsafe { GetLastError() } {
                    ERROR_HANDLE_EOF => Ok(0),
                    err => Err(io::Error::from_raw_os_error(err as i32)),
                }
            };
            self.in_flight -= 1;
            out.push(IoCompletion {
                slot,
                result,
                completed_at: None,
                issued_at: None,
            });
        }
        Ok(n as usize)
    }
}

impl IoEngine for Iocp {
    fn name(&self) -> &'static str {
        "iocp"
    }

    fn begin_job(&mut self, fd: RawFile, _bufs: &[(*mut u8, usize)]) -> io::Result<()> {
        // SAFETY: associates an open file with our port (key 0).
        let r = unsafe { CreateIoCompletionPort(fd, self.port, 0, 0) };
        // A handle stays associated for its life: the same file again is fine.
        if r.is_null() && unsafe { GetLastError() } != ERROR_INVALID_PARAMETER {
            return Err(io::Error::last_os_error());
        }
        self.file = fd;
        Ok(())
    }

    fn queue(&mut self, req: IoRequest) -> io::Result<()> {
        self.pending.push(req);
        Ok(())
    }

    fn commit(&mut self) -> io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        for req in &pending {
            self.start(*req);
        }
        self.pending = pending;
        self.pending.clear();
        Ok(())
    }

    fn unsubmitted(&self) -> usize {
        self.pending.len()
    }

    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> io::Result<()> {
        let mut got = self.failed.len();
        out.append(&mut self.failed);
        if got < min && self.in_flight == 0 {
            return Err(io::Error::other("waiting for I/Os that were never started"));
        }
        if got >= min {
            self.counts.ready += 1;
            return Ok(());
        }
        if self.polling {
            // One look at the port without waiting.
            self.counts.polled += 1;
            got += self.take(0, out)?;
            if got >= min {
                self.counts.spun += 1;
                return Ok(());
            }
        }
        // Asleep in GetQueuedCompletionStatusEx until a packet comes (it
        // returns at once with those already queued).
        while got < min {
            got += self.take(u32::MAX, out)?;
        }
        self.counts.slept += 1;
        Ok(())
    }

    fn set_polling(&mut self, on: bool) {
        self.polling = on;
    }

    fn wait_counts(&self) -> WaitCounts {
        self.counts
    }
}

impl Drop for Iocp {
    fn drop(&mut self) {
        if self.in_flight > 0 {
            // After an engine failure: cancel, and wait (bounded) so that no
            // I/O still writes into an Op freed here.
            // SAFETY: cancels our own I/Os on the file.
            unsafe { CancelIoEx(self.file, std::ptr::null()) };
            let mut sink = Vec::new();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while self.in_flight > 0 && std::time::Instant::now() < deadline {
                if self.take(100, &mut sink).is_err() {
                    break;
                }
            }
            if self.in_flight > 0 {
                // Never free memory the kernel may still write.
                std::mem::forget(std::mem::take(&mut self.ops));
            }
        }
        // SAFETY: the port handle is ours and closed once.
        unsafe { CloseHandle(self.port) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{BlockCodec, DataPool};
    use crate::buffer::BufferPool;
    use crate::direct::{self, OpenMode};
    use crate::jobloop::{run_job, slots_for, JobIo};
    use crate::step::{IoJob, Rw};
    use std::sync::atomic::{AtomicBool, AtomicU64};

    fn job(rw: Rw, queue_depth: usize) -> IoJob {
        IoJob {
            rw,
            file_size: 8 << 20,
            bytes: 8 << 20,
            block_size: 64 << 10,
            queue_depth,
            verify: true,
            pace_ns: None,
            seed: 3,
        }
    }

    fn run(engine: &mut Iocp, file: &std::fs::File, job: &IoJob) -> crate::jobloop::JobOutcome {
        let codec = BlockCodec::new(DataPool::new(3), 0, 0);
        let mut buffers = BufferPool::new();
        buffers.reserve(slots_for(job), job.block_size);
        run_job(
            engine,
            JobIo {
                fd: super::super::raw_file(file),
                base_offset: 0,
                job,
                codec: &codec,
                progress: &AtomicU64::new(0),
                stop: &AtomicBool::new(false),
                buffers: &mut buffers,
                interval_latency: None,
                record_latency: true,
            },
        )
        .unwrap()
    }

    #[test]
    fn writes_and_reads_back_verified_at_queue_depth_8() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.dat");
        let mut engine = Iocp::new(8).unwrap();
        assert_eq!(engine.name(), "iocp");
        let (file, status) = direct::open(&path, OpenMode::CreateNew, false).unwrap();
        assert!(status.is_direct());
        let w = run(&mut engine, &file, &job(Rw::Write, 8));
        assert_eq!(w.bytes, 8 << 20);
        drop(file);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 8 << 20);
        // The same engine on the next file, as a run reuses it.
        let (file, _) = direct::open(&path, OpenMode::Read, false).unwrap();
        let r = run(&mut engine, &file, &job(Rw::Read, 8));
        assert_eq!(r.bytes, 8 << 20);
        let v = r.verify.expect("verified");
        assert_eq!((v.blocks, v.corrupt_blocks), ((8 << 20) / 4096, 0));
    }

    #[test]
    fn a_write_on_a_read_only_handle_completes_with_its_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.dat");
        std::fs::write(&path, vec![0u8; 1 << 20]).unwrap();
        let (file, _) = direct::open(&path, OpenMode::Read, false).unwrap();
        let mut engine = Iocp::new(4).unwrap();
        engine
            .begin_job(super::super::raw_file(&file), &[])
            .unwrap();
        let mut buf = crate::buffer::AlignedBuf::new(4096);
        engine
            .queue(IoRequest {
                slot: 2,
                fd: super::super::raw_file(&file),
                offset: 0,
                buf: buf.as_mut_ptr(),
                len: 4096,
                write: true,
            })
            .unwrap();
        engine.commit().unwrap();
        let mut out = Vec::new();
        engine.reap(1, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].slot, 2);
        assert!(out[0].result.is_err(), "{:?}", out[0].result);
    }
}
