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
//!   IOPS on a virtio disk. The last one queued goes in with
//!   [`IoEngine::commit`], and the job loop then waits in [`IoEngine::reap`]:
//!   two `io_uring_enter` per I/O at QD1, as fio makes, so that the time
//!   between the two is the I/O's completion latency (fio's `clat`).
//! - The wait is fio's by default (`fio_ioring_getevents` with
//!   `iodepth_batch_complete_min=1`): take what the completion queue holds;
//!   if that is too few, one `io_uring_enter(0, min_complete, GETEVENTS)`
//!   that sleeps in the kernel until enough have come. No spinning. With
//!   polling on (`hostd run --poll`), a wait first asks without sleeping
//!   for up to [`POLL_NS`] while that finds completions. The engine counts
//!   how each wait ended ([`WaitCounts`]).
//! - `IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN` (Linux 6.1+,
//!   as fio 3.33+ sets them): a completion is not delivered by interrupting
//!   the job thread (task work and a wake-up per I/O); it waits in the ring's
//!   own list until the thread next waits in `io_uring_enter`, which runs it
//!   in place (docs/benchmarks.md has what it changed). Such a ring belongs
//!   to one thread, and backends create engines before their target thread runs:
//!   the ring is created disabled (`IORING_SETUP_R_DISABLED`) and enabled by
//!   the first [`IoEngine::begin_job`], on the thread that runs the job; a
//!   job on another thread later gets a fresh ring. Older kernels get a
//!   `COOP_TASKRUN` ring, or a plain one.

use super::{IoCompletion, IoEngine, IoRequest, WaitCounts};
use io_uring::{opcode, types, IoUring};
use std::io;
use std::os::unix::io::RawFd;
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

/// io_uring engine.
pub struct Uring {
    ring: IoUring,
    /// Entries the ring was built with.
    entries: u32,
    /// Who may submit to the ring.
    issuer: Issuer,
    queued: usize,
    /// Whether the ring has a (one-entry) file table.
    file_table: bool,
    /// The fd registered at index 0 of that table for the current job.
    file: Option<RawFd>,
    /// Registered buffers: start and length per slot.
    bufs: Vec<(usize, usize)>,
    /// Share of recent polls that found a completion within [`POLL_NS`]
    /// (moving average): polling goes on while it is at least [`POLL_HIT_MIN`].
    poll_hits: f64,
    /// Waits so far: every [`RELEARN_EVERY`]th polls whatever `poll_hits`
    /// says, so that a device that became fast is noticed.
    waits: u32,
    /// Whether waits may poll at all ([`IoEngine::set_polling`]).
    may_poll: bool,
    /// How the waits ended.
    counts: WaitCounts,
}

impl Uring {
    /// Creates a ring with room for `queue_depth` requests.
    pub fn new(queue_depth: usize) -> io::Result<Uring> {
        let entries = queue_depth.max(1).next_power_of_two() as u32;
        let (ring, issuer) = build_ring(entries)?;
        Ok(Uring {
            ring,
            entries,
            issuer,
            queued: 0,
            file_table: false,
            file: None,
            bufs: Vec::new(),
            poll_hits: 1.0,
            waits: 0,
            may_poll: false,
            counts: WaitCounts::default(),
        })
    }

    /// Makes the ring usable from the calling thread (between jobs: nothing is
    /// queued or in flight): enables a single-issuer ring on its first job, and
    /// replaces it with a fresh one when a job runs on another thread.
    fn claim_for_this_thread(&mut self) -> io::Result<()> {
        let me = thread::current().id();
        match self.issuer {
            Issuer::Any => return Ok(()),
            Issuer::Thread(t) if t == me => return Ok(()),
            Issuer::Thread(_) => {
                let (ring, issuer) = build_ring(self.entries)?;
                self.ring = ring;
                self.issuer = issuer;
                self.file_table = false;
                self.file = None;
                self.bufs.clear();
            }
            Issuer::Disabled => {}
        }
        if self.ring.submitter().register_enable_rings().is_ok() {
            self.issuer = Issuer::Thread(me);
        } else {
            // Cannot happen on a kernel that built the ring; stay usable anyway.
            self.ring = any_thread_ring(self.entries)?;
            self.issuer = Issuer::Any;
        }
        Ok(())
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

    fn begin_job(&mut self, fd: RawFd, bufs: &[(*mut u8, usize)]) -> io::Result<()> {
        self.claim_for_this_thread()?;
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
        Ok(())
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
            // waits for the next queue or for commit.
            let older = (self.queued - 1) as u32;
            let sent = self.enter(older, 0, 0)?;
            self.queued -= sent.min(self.queued);
        }
        Ok(())
    }

    fn commit(&mut self) -> io::Result<()> {
        // GETEVENTS with nothing to wait for: on a DEFER_TASKRUN ring it also
        // posts completions already made, so that reap may find them without
        // entering the kernel again.
        let flags = match self.issuer {
            Issuer::Any => 0,
            _ => GETEVENTS,
        };
        while self.queued > 0 {
            let sent = self.enter(self.queued as u32, 0, flags)?;
            if sent == 0 {
                return Err(io::Error::other(format!(
                    "io_uring took none of {} queued requests",
                    self.queued
                )));
            }
            self.queued -= sent.min(self.queued);
        }
        Ok(())
    }

    fn unsubmitted(&self) -> usize {
        self.queued
    }

    fn set_polling(&mut self, on: bool) {
        self.may_poll = on;
    }

    fn wait_counts(&self) -> WaitCounts {
        self.counts
    }

    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> io::Result<()> {
        let mut got = self.take_completions(out);
        if got >= min {
            self.counts.ready += 1;
            return Ok(());
        }
        if self.may_poll {
            self.waits = self.waits.wrapping_add(1);
            if self.poll_hits >= POLL_HIT_MIN || self.waits.is_multiple_of(RELEARN_EVERY) {
                self.counts.polled += 1;
                let hit = self.poll()?;
                self.poll_hits += (f64::from(u8::from(hit)) - self.poll_hits) / 16.0;
                got += self.take_completions(out);
                if got >= min {
                    self.counts.spun += 1;
                    return Ok(());
                }
            }
        }
        // Sleep until the kernel has enough; anything queued went in with
        // commit, so this submits nothing.
        while got < min {
            match self.enter(0, (min - got) as u32, GETEVENTS) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            got += self.take_completions(out);
        }
        self.counts.slept += 1;
        Ok(())
    }
}

impl Uring {
    /// Appends what the completion queue holds; how many.
    fn take_completions(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let before = out.len();
        out.extend(self.ring.completion().map(|cqe| {
            let r = cqe.result();
            IoCompletion {
                slot: cqe.user_data() as usize,
                result: if r < 0 {
                    Err(io::Error::from_raw_os_error(-r))
                } else {
                    Ok(r as usize)
                },
                completed_at: None,
                issued_at: None,
            }
        }));
        out.len() - before
    }

    /// `io_uring_enter(to_submit, min_complete, flags)` on this ring: how many
    /// requests it submitted.
    fn enter(&self, to_submit: u32, min_complete: u32, flags: u32) -> io::Result<usize> {
        // SAFETY: no signal mask is passed, and every submission entry was
        // complete and synced to the ring when `queue` pushed it; its buffer
        // stays valid until the completion is reaped.
        unsafe {
            self.ring
                .submitter()
                .enter::<libc::sigset_t>(to_submit, min_complete, flags, None)
        }
    }

    /// Asks the kernel for completions without sleeping, for up to
    /// [`POLL_NS`]; whether one came.
    fn poll(&mut self) -> io::Result<bool> {
        let t0 = Instant::now();
        while self.ring.completion().is_empty() {
            if t0.elapsed() >= POLL_NS {
                return Ok(false);
            }
            // Runs the completions the kernel holds for this task; never sleeps.
            self.enter(0, 0, GETEVENTS)?;
        }
        Ok(true)
    }
}

/// How long a reap asks for a completion before it sleeps. Sleeping and
/// being woken costs 20–40 µs on a virtual machine (more than a RAM disk's or
/// a fast NVMe drive's whole QD1 I/O); a USB drive's 50–100 µs I/O is not
/// worth polling for, and `poll_hits` soon stops it there.
const POLL_NS: Duration = Duration::from_micros(30);

/// Polling goes on while at least this share of polls find a completion.
const POLL_HIT_MIN: f64 = 0.5;

/// One wait in this many polls whatever the hit rate says.
const RELEARN_EVERY: u32 = 16;

/// `IORING_ENTER_GETEVENTS` (the io-uring crate keeps its constants private).
const GETEVENTS: u32 = 1;

/// Who may submit to a ring.
#[derive(Debug, Clone, Copy)]
enum Issuer {
    /// A plain ring: any thread.
    Any,
    /// A single-issuer ring not yet enabled: the first job's thread will own it.
    Disabled,
    /// A single-issuer ring owned by this thread.
    Thread(ThreadId),
}

/// Builds the best ring the kernel offers for `entries` requests: fio's flags
/// (`CQSIZE` with a completion queue as long as the submission queue, as fio
/// clamps it, `COOP_TASKRUN`, `SINGLE_ISSUER`, `DEFER_TASKRUN`; fio sets
/// `0x3108`), plus `R_DISABLED` ([`Issuer::Disabled`]).
fn build_ring(entries: u32) -> io::Result<(IoUring, Issuer)> {
    if let Ok(ring) = IoUring::builder()
        .setup_cqsize(entries)
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_r_disabled()
        .build(entries)
    {
        return Ok((ring, Issuer::Disabled));
    }
    // Older kernels refuse DEFER_TASKRUN (6.1).
    Ok((any_thread_ring(entries)?, Issuer::Any))
}

/// A ring any thread may use: `COOP_TASKRUN`, or plain where the kernel
/// refuses that (before 5.19).
fn any_thread_ring(entries: u32) -> io::Result<IoUring> {
    IoUring::builder()
        .setup_cqsize(entries)
        .setup_coop_taskrun()
        .build(entries)
        .or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries))
        .or_else(|_| IoUring::new(entries))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::Write;
    use std::os::unix::io::{AsRawFd, FromRawFd};

    /// Reads `f`'s first 4 KiB through `ring` as one job: begin, queue,
    /// commit, reap, end.
    fn read_once(ring: &mut Uring, f: &std::fs::File) -> io::Result<Vec<u8>> {
        let mut buf = vec![0u8; 4096];
        ring.begin_job(f.as_raw_fd(), &[(buf.as_mut_ptr(), buf.len())])?;
        ring.queue(IoRequest {
            slot: 0,
            fd: f.as_raw_fd(),
            offset: 0,
            buf: buf.as_mut_ptr(),
            len: buf.len(),
            write: false,
        })?;
        assert_eq!(ring.unsubmitted(), 1, "queue alone submits nothing at QD1");
        ring.commit()?;
        assert_eq!(ring.unsubmitted(), 0);
        let mut out = Vec::new();
        ring.reap(1, &mut out)?;
        ring.end_job();
        assert_eq!(out.len(), 1);
        assert_eq!(*out[0].result.as_ref().unwrap(), 4096);
        Ok(buf)
    }

    #[test]
    fn a_ring_made_on_one_thread_serves_jobs_on_others() {
        // Backends make engines on the main thread and run jobs on a target
        // thread; a single-issuer ring then belongs to the first job's thread,
        // and a job on yet another thread must still work.
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let data: Vec<u8> = (0..8192u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        let mut ring = Uring::new(1).unwrap();
        for _ in 0..2 {
            let r = thread::scope(|s| {
                s.spawn(|| {
                    read_once(&mut ring, &f)?;
                    // The same thread again: the ring stays its own.
                    read_once(&mut ring, &f)
                })
                .join()
                .unwrap()
            });
            assert_eq!(r.unwrap(), data[..4096]);
        }
    }

    #[test]
    fn by_default_a_wait_sleeps_at_once_and_never_spins() {
        // A read from an empty pipe completes only when another thread writes
        // (20 ms later). By default the wait goes to sleep in the kernel at
        // once, as fio's does; with polling on it first asks without sleeping,
        // finds nothing, and then sleeps. The engine counts how each ended.
        for polling in [None, Some(true), Some(false)] {
            let mut fds = [0; 2];
            // SAFETY: fds has room for the two descriptors.
            assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
            // SAFETY: pipe() just opened both; each is owned once.
            let (r, w) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
            let mut ring = Uring::new(1).unwrap();
            if let Some(on) = polling {
                ring.set_polling(on);
            }
            let mut buf = [0u8; 8];
            ring.begin_job(r.as_raw_fd(), &[]).unwrap();
            ring.queue(IoRequest {
                slot: 0,
                fd: r.as_raw_fd(),
                offset: 0,
                buf: buf.as_mut_ptr(),
                len: buf.len(),
                write: false,
            })
            .unwrap();
            ring.commit().unwrap();
            let writer = thread::spawn(move || {
                thread::sleep(Duration::from_millis(20));
                (&w).write_all(b"12345678").unwrap();
                w
            });
            let mut out = Vec::new();
            ring.reap(1, &mut out).unwrap();
            // Nothing left: a second wait for nothing returns at once.
            ring.reap(0, &mut out).unwrap();
            ring.end_job();
            drop(writer.join().unwrap());
            assert_eq!(*out[0].result.as_ref().unwrap(), 8);
            assert_eq!(&buf, b"12345678");
            let c = ring.wait_counts();
            assert_eq!((c.slept, c.ready, c.spun), (1, 1, 0), "{polling:?}: {c:?}");
            if polling == Some(true) {
                assert_eq!(c.polled, 1, "the wait polled first: {c:?}");
                assert!(ring.poll_hits < 1.0, "the wait polled and missed");
            } else {
                assert_eq!(c.polled, 0, "{polling:?}: a ring not told to poll polled");
                assert_eq!(ring.poll_hits, 1.0);
            }
        }
    }
}
