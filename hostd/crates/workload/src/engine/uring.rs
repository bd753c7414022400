//! io_uring engine (Linux): one ring sized to the queue depth.
//!
//! - Per job the file and the job's buffers are registered with the ring
//!   (`IORING_REGISTER_FILES` / `IORING_REGISTER_BUFFERS`), so an I/O neither
//!   looks up the descriptor nor pins its buffer's pages again. Registered
//!   buffers count against RLIMIT_MEMLOCK for users without CAP_IPC_LOCK
//!   (often 8 MiB): if all do not fit, the first half, quarter, … are
//!   registered and the rest run as plain buffers, as fio's do by default.
//! - Requests are submitted as they are queued, each one when the next is
//!   queued (fio's default `iodepth_batch_submit=1`): the device starts on
//!   the first while the next are prepared. Submitting a refill of 64 in one
//!   call made the first wait for the last and cost 8–10 % of RND4K QD64
//!   IOPS on a virtio disk. The last one queued goes in with the wait for
//!   completions ([`IoEngine::commit_and_reap`]): at QD1 every I/O costs one
//!   `io_uring_enter`, not two.
//! - `IORING_SETUP_COOP_TASKRUN` (Linux 5.19+): completions are handled
//!   when the job loop enters the kernel anyway, not by interrupting it.
//!   (`SINGLE_ISSUER | DEFER_TASKRUN` would tie the ring to the thread that
//!   created it, and backends create engines before their target thread
//!   runs.)

use super::{IoCompletion, IoEngine, IoRequest};
use io_uring::{opcode, types, IoUring};
use std::io;
use std::os::unix::io::RawFd;

/// io_uring engine.
pub struct Uring {
    ring: IoUring,
    queued: usize,
    /// Whether the ring has a (one-entry) file table.
    file_table: bool,
    /// The fd registered at index 0 of that table for the current job.
    file: Option<RawFd>,
    /// Registered buffers: start and length per slot.
    bufs: Vec<(usize, usize)>,
}

impl Uring {
    /// Creates a ring with room for `queue_depth` requests.
    pub fn new(queue_depth: usize) -> io::Result<Uring> {
        let entries = queue_depth.max(1).next_power_of_two() as u32;
        // Older kernels refuse COOP_TASKRUN; then a plain ring.
        let ring = IoUring::builder()
            .setup_coop_taskrun()
            .build(entries)
            .or_else(|_| IoUring::new(entries))?;
        Ok(Uring {
            ring,
            queued: 0,
            file_table: false,
            file: None,
            bufs: Vec::new(),
        })
    }

    /// The registered buffer holding `[buf, buf + len)`, if it is `slot`'s.
    fn fixed_buf(&self, slot: usize, buf: *const u8, len: usize) -> Option<u16> {
        let (start, size) = *self.bufs.get(slot)?;
        let p = buf as usize;
        (p >= start && p + len <= start + size).then_some(slot as u16)
    }
}

impl IoEngine for Uring {
    fn name(&self) -> &'static str {
        "io_uring"
    }

    fn begin_job(&mut self, fd: RawFd, bufs: &[(*mut u8, usize)]) {
        let sub = self.ring.submitter();
        let registered = if self.file_table {
            sub.register_files_update(0, &[fd]).is_ok()
        } else {
            self.file_table = sub.register_files(&[fd]).is_ok();
            self.file_table
        };
        self.file = registered.then_some(fd);
        self.bufs.clear();
        let iov: Vec<libc::iovec> = bufs
            .iter()
            .take(u16::MAX as usize)
            .map(|&(p, n)| libc::iovec {
                iov_base: p.cast(),
                iov_len: n,
            })
            .collect();
        let mut n = iov.len();
        while n > 0 {
            // SAFETY: the job loop keeps these buffers allocated until
            // end_job, which unregisters them.
            if unsafe { self.ring.submitter().register_buffers(&iov[..n]) }.is_ok() {
                self.bufs = bufs[..n].iter().map(|&(p, l)| (p as usize, l)).collect();
                break;
            }
            n /= 2;
        }
    }

    fn end_job(&mut self) {
        // The table holds a reference to the file: drop it, so that closing
        // the job's descriptor really closes the file.
        if self.file.take().is_some() {
            let _ = self.ring.submitter().register_files_update(0, &[-1]);
        }
        if !self.bufs.is_empty() {
            let _ = self.ring.submitter().unregister_buffers();
            self.bufs.clear();
        }
    }

    fn queue(&mut self, req: IoRequest) -> io::Result<()> {
        let fixed = self.fixed_buf(req.slot, req.buf, req.len);
        let len = req.len as u32;
        macro_rules! entry {
            ($fd:expr) => {
                match (fixed, req.write) {
                    (Some(i), true) => opcode::WriteFixed::new($fd, req.buf, len, i)
                        .offset(req.offset)
                        .build(),
                    (Some(i), false) => opcode::ReadFixed::new($fd, req.buf, len, i)
                        .offset(req.offset)
                        .build(),
                    (None, true) => opcode::Write::new($fd, req.buf, len)
                        .offset(req.offset)
                        .build(),
                    (None, false) => opcode::Read::new($fd, req.buf, len)
                        .offset(req.offset)
                        .build(),
                }
            };
        }
        let entry = if self.file == Some(req.fd) {
            entry!(types::Fixed(0))
        } else {
            entry!(types::Fd(req.fd))
        }
        .user_data(req.slot as u64);
        // SAFETY: the buffer stays valid until the completion is reaped.
        unsafe {
            if self.ring.submission().push(&entry).is_err() {
                self.ring.submit()?;
                self.queued = 0;
                self.ring
                    .submission()
                    .push(&entry)
                    .map_err(|_| io::Error::other("io_uring submission queue full"))?;
            }
        }
        self.queued += 1;
        if self.queued > 1 {
            // Everything but the newest goes to the kernel now; the newest
            // waits for the next queue or for commit_and_reap.
            let older = (self.queued - 1) as u32;
            // SAFETY: a plain io_uring_enter(to_submit) on our own ring; the
            // entries were synced to the ring when the push above returned.
            let sent = unsafe {
                self.ring
                    .submitter()
                    .enter::<libc::sigset_t>(older, 0, 0, None)?
            };
            self.queued -= sent.min(self.queued);
        }
        Ok(())
    }

    fn commit(&mut self) -> io::Result<()> {
        if self.queued > 0 {
            self.ring.submit()?;
            self.queued = 0;
        }
        Ok(())
    }

    fn commit_and_reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> io::Result<()> {
        // One io_uring_enter: submit what is queued and wait for `min`
        // completions (unless enough are already there).
        let ready = self.ring.completion().len();
        if ready < min {
            loop {
                match self.ring.submit_and_wait(min - ready) {
                    Ok(_) => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
            self.queued = 0;
        } else {
            self.commit()?;
        }
        self.reap(min, out)
    }

    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> io::Result<()> {
        let mut got = 0;
        loop {
            for cqe in self.ring.completion() {
                let r = cqe.result();
                let result = if r < 0 {
                    Err(io::Error::from_raw_os_error(-r))
                } else {
                    Ok(r as usize)
                };
                out.push(IoCompletion {
                    slot: cqe.user_data() as usize,
                    result,
                    completed_at: None,
                });
                got += 1;
            }
            if got >= min {
                return Ok(());
            }
            match self.ring.submit_and_wait(min - got) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}
