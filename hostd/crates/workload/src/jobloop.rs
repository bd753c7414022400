//! The job loop: keeps `queue_depth` I/Os in flight on one file through any
//! [`IoEngine`], fills blocks before writes and verifies them after reads.

use crate::block::{BlockCodec, VerifyReport, BLOCK};
use crate::buffer::{AlignedBuf, BufferPool};
use crate::engine::{IoCompletion, IoEngine, IoRequest};
use crate::plan::IoJob;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io;
use std::os::unix::io::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What the loop needs besides the engine.
pub struct JobIo<'a> {
    /// The open file.
    pub fd: RawFd,
    /// Added to every file offset (raw devices hold several "files").
    pub base_offset: u64,
    /// What to do.
    pub job: &'a IoJob,
    /// Block contents of this file.
    pub codec: &'a BlockCodec,
    /// Bytes completed, shared with the live view and interval recorder.
    pub progress: &'a AtomicU64,
    /// Set to stop early (Ctrl-C).
    pub stop: &'a AtomicBool,
    /// Where the job's buffers come from and go back to.
    pub buffers: &'a mut BufferPool,
}

/// What the loop did.
#[derive(Debug, Default)]
pub struct JobOutcome {
    /// Bytes transferred.
    pub bytes: u64,
    /// Verification result of reads (None for writes or verify off).
    pub verify: Option<VerifyReport>,
    /// Paced I/Os issued after their slot had passed (video: dropped frames).
    pub late_ops: u64,
    /// Stopped by the stop flag before the end.
    pub interrupted: bool,
    /// Of `bytes`, those read (a mixed job's read share; all of a read job's).
    pub read_bytes: u64,
    /// I/Os that read and that wrote (a mixed job's split).
    pub read_ops: u64,
    /// I/Os that wrote.
    pub write_ops: u64,
    /// Seconds from the first submission to the last completion (what fio
    /// calls the job's runtime: buffer set-up and the file's open and fsync
    /// are outside it).
    pub io_seconds: f64,
}

/// An I/O error, where it happened, and what had been done.
#[derive(Debug, thiserror::Error)]
#[error("I/O error at offset {offset}: {source}")]
pub struct JobError {
    /// File offset of the failed I/O.
    pub offset: u64,
    /// The OS error.
    #[source]
    pub source: io::Error,
    /// Bytes completed before the error.
    pub bytes_done: u64,
    /// The engine itself failed (not one I/O): its ring may still hold
    /// requests into this job's buffers, so it must not run another job.
    pub engine_failed: bool,
}

struct Slot {
    buf: AlignedBuf,
    offset: u64,
    len: usize,
    done: usize,
    /// What the buffer's payload was last filled for (file id, offset, length).
    primed: Option<(u64, u64, usize)>,
    /// This I/O writes (a mixed job chooses per I/O).
    write: bool,
}

/// Buffers a job uses: one per I/O in flight and, for verified reads, spares.
///
/// A completed read is verified while the next I/O is already in flight, so
/// verification never stalls the queue (at QD1 it would otherwise add its
/// time to every I/O). Spares for the whole depth where that costs at most
/// 16 MiB (a burst of QD64 4 KiB completions is then refilled before any is
/// verified), else 8.
pub fn slots_for(job: &IoJob) -> usize {
    const SPARE_BUDGET: usize = 16 << 20;
    let qd = job.queue_depth.max(1);
    let bs = job.block_size.max(1);
    let spare = if !job.rw.is_write() && job.verify {
        qd.min((SPARE_BUDGET / bs).max(8))
    } else {
        0
    };
    (qd + spare).min(total_ops(job).max(1) as usize)
}

/// I/Os in the job (random jobs move whole blocks only).
fn total_ops(job: &IoJob) -> u64 {
    let bs = job.block_size.max(1) as u64;
    if job.rw.is_random() {
        job.bytes / bs
    } else {
        job.bytes.div_ceil(bs)
    }
}

/// Runs `io.job` to completion (or stop, or the first error).
pub fn run_job(engine: &mut dyn IoEngine, io: JobIo<'_>) -> Result<JobOutcome, JobError> {
    let job = io.job;
    let bs = job.block_size;
    let qd = job.queue_depth.max(1);
    let write = job.rw.is_write();
    let total_ops = total_ops(job);
    let blocks_in_file = (job.file_size / bs as u64).max(1);
    let mut rng = ChaCha8Rng::seed_from_u64(job.seed);
    // A mixed job's directions come from their own stream, so its offsets are
    // the same as a pure job's with the same seed.
    let mut direction = ChaCha8Rng::seed_from_u64(job.seed ^ 0x6d69_7865_6400_0000);
    let read_percent = job.rw.read_percent();
    let verify_reads = job.verify;
    let mut slots: Vec<Slot> = io
        .buffers
        .take(slots_for(job), bs)
        .into_iter()
        .map(|buf| Slot {
            buf,
            offset: 0,
            len: 0,
            done: 0,
            primed: None,
            write,
        })
        .collect();
    let bufs: Vec<(*mut u8, usize)> = slots
        .iter_mut()
        .map(|s| (s.buf.as_mut_ptr(), s.buf.len()))
        .collect();
    engine.begin_job(io.fd, &bufs);
    let mut free: Vec<usize> = (0..slots.len()).rev().collect();
    let mut issued = 0u64;
    let mut in_flight = 0usize;
    let mut out = JobOutcome::default();
    let mut verify = VerifyReport::default();
    let mut error: Option<(u64, io::Error)> = None;
    let mut comps: Vec<IoCompletion> = Vec::with_capacity(qd);
    let mut to_verify: Vec<usize> = Vec::with_capacity(qd);
    let started = Instant::now();

    // An engine failure (not an I/O error) ends the loop with I/Os possibly
    // still owned by the kernel; their buffers are then leaked, never freed.
    let mut fatal: Option<JobError> = None;
    'run: loop {
        // Queue as much as the depth allows.
        let stopping = error.is_some() || io.stop.load(Ordering::Relaxed);
        if stopping && error.is_none() && issued < total_ops {
            out.interrupted = true;
        }
        let mut queued_any = false;
        while !stopping && issued < total_ops && in_flight < qd {
            let Some(s) = free.pop() else { break };
            if let Some(pace) = job.pace_ns {
                let due = Duration::from_nanos(pace * issued);
                let now = started.elapsed();
                if now < due {
                    if in_flight > 0 || queued_any {
                        free.push(s);
                        break;
                    }
                    std::thread::sleep(due - now);
                } else if now > due + Duration::from_nanos(pace) {
                    out.late_ops += 1;
                }
            }
            let offset = if job.rw.is_random() {
                rng.gen_range(0..blocks_in_file) * bs as u64
            } else {
                issued * bs as u64
            };
            let len = (job.file_size - offset).min(bs as u64) as usize;
            let this_write = match read_percent {
                Some(p) => direction.gen_range(0..100u8) >= p,
                None => write,
            };
            let slot = &mut slots[s];
            slot.offset = offset;
            slot.len = len;
            slot.done = 0;
            slot.write = this_write;
            if this_write {
                out.write_ops += 1;
                io.codec.fill_reusing(
                    &mut slot.buf.as_mut_slice()[..len],
                    offset,
                    &mut slot.primed,
                );
            } else {
                out.read_ops += 1;
                // A read overwrites the payload the buffer was primed with.
                slot.primed = None;
            }
            if let Err(e) = submit(engine, io.fd, io.base_offset, s, slot) {
                fatal = Some(JobError {
                    offset,
                    source: e,
                    bytes_done: out.bytes,
                    engine_failed: true,
                });
                break 'run;
            }
            issued += 1;
            in_flight += 1;
            queued_any = true;
        }
        comps.clear();
        // Nothing to verify in between: submit and wait in one call.
        let combined = to_verify.is_empty() && in_flight > 0;
        let committed = if combined {
            engine.commit_and_reap(1, &mut comps)
        } else {
            engine.commit()
        };
        if let Err(e) = committed {
            fatal = Some(JobError {
                offset: issued * bs as u64,
                source: e,
                bytes_done: out.bytes,
                engine_failed: true,
            });
            break 'run;
        }
        for s in to_verify.drain(..) {
            let slot = &slots[s];
            let full = slot.len / BLOCK * BLOCK;
            verify.merge(io.codec.verify(&slot.buf.as_slice()[..full], slot.offset));
            free.push(s);
        }
        if in_flight == 0 {
            break;
        }
        if let Err(e) = if combined {
            Ok(())
        } else {
            engine.reap(1, &mut comps)
        } {
            fatal = Some(JobError {
                offset: 0,
                source: e,
                bytes_done: out.bytes,
                engine_failed: true,
            });
            break 'run;
        }
        for c in comps.drain(..) {
            in_flight -= 1;
            let slot = &mut slots[c.slot];
            match c.result {
                Err(e) => {
                    error.get_or_insert((slot.offset + slot.done as u64, e));
                    free.push(c.slot);
                }
                Ok(0) if slot.done < slot.len => {
                    let e = io::Error::new(io::ErrorKind::UnexpectedEof, "file ended early");
                    error.get_or_insert((slot.offset + slot.done as u64, e));
                    free.push(c.slot);
                }
                Ok(n) => {
                    slot.done += n;
                    io.progress.fetch_add(n as u64, Ordering::Relaxed);
                    out.bytes += n as u64;
                    if !slot.write {
                        out.read_bytes += n as u64;
                    }
                    if slot.done < slot.len && error.is_none() {
                        // Short transfer: resubmit the rest from the same buffer.
                        if let Err(e) = submit(engine, io.fd, io.base_offset, c.slot, slot) {
                            fatal = Some(JobError {
                                offset: slot.offset,
                                source: e,
                                bytes_done: out.bytes,
                                engine_failed: true,
                            });
                            break 'run;
                        }
                        in_flight += 1;
                        continue;
                    }
                    if verify_reads && !slot.write {
                        to_verify.push(c.slot);
                    } else {
                        free.push(c.slot);
                    }
                }
            }
        }
    }
    out.io_seconds = started.elapsed().as_secs_f64();
    if let Some(f) = fatal {
        // The engine broke: requests it accepted (even ones it then failed to
        // submit) may still write into these buffers, so they are neither
        // reused nor freed, and the engine is not asked to unregister them
        // (on older kernels that waits for every request). The caller drops
        // the engine.
        std::mem::forget(slots);
        return Err(f);
    }
    engine.end_job();
    io.buffers.give_back(slots.into_iter().map(|s| s.buf));
    if let Some((offset, source)) = error {
        return Err(JobError {
            offset,
            source,
            bytes_done: out.bytes,
            engine_failed: false,
        });
    }
    if !write && job.verify {
        out.verify = Some(verify);
    }
    Ok(out)
}

fn submit(
    engine: &mut dyn IoEngine,
    fd: RawFd,
    base: u64,
    s: usize,
    slot: &mut Slot,
) -> io::Result<()> {
    // SAFETY of the pointer: slot buffers live until the loop returns, and a
    // slot is not reused before its completion is reaped.
    let buf = unsafe { slot.buf.as_mut_ptr().add(slot.done) };
    engine.queue(IoRequest {
        slot: s,
        fd,
        offset: base + slot.offset + slot.done as u64,
        buf,
        len: slot.len - slot.done,
        write: slot.write,
    })
}

#[cfg(test)]
mod tests {
    //! Engine failures cannot be produced with a real ring on demand, so these
    //! use a scripted engine (the one place a mock is the only way).
    use super::*;
    use crate::block::DataPool;
    use crate::plan::Rw;

    /// Completes every request in full, except: request `fail_queue_at` is
    /// taken but `queue` then fails (as a ring whose submit fails after the
    /// push), and request `io_error_at` completes with EIO.
    #[derive(Default)]
    struct Scripted {
        queued: Vec<IoRequest>,
        seen: usize,
        fail_queue_at: Option<usize>,
        io_error_at: Option<usize>,
        begun: bool,
        ended: bool,
    }

    impl IoEngine for Scripted {
        fn name(&self) -> &'static str {
            "scripted"
        }
        fn begin_job(&mut self, _fd: RawFd, _bufs: &[(*mut u8, usize)]) {
            self.begun = true;
        }
        fn end_job(&mut self) {
            self.ended = true;
        }
        fn queue(&mut self, req: IoRequest) -> io::Result<()> {
            self.queued.push(req);
            if Some(self.seen + self.queued.len() - 1) == self.fail_queue_at {
                return Err(io::Error::other("ring broke"));
            }
            Ok(())
        }
        fn commit(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<IoCompletion>) -> io::Result<()> {
            for r in self.queued.drain(..) {
                let result = if Some(self.seen) == self.io_error_at {
                    Err(io::Error::from_raw_os_error(libc::EIO))
                } else {
                    Ok(r.len)
                };
                self.seen += 1;
                out.push(IoCompletion {
                    slot: r.slot,
                    result,
                });
            }
            Ok(())
        }
    }

    fn run(engine: &mut Scripted, pool: &mut BufferPool) -> Result<JobOutcome, JobError> {
        let job = IoJob {
            rw: Rw::Write,
            file_size: 64 << 10,
            bytes: 64 << 10,
            block_size: 4096,
            queue_depth: 4,
            verify: false,
            pace_ns: None,
            seed: 1,
        };
        let codec = BlockCodec::new(DataPool::new(1), 0, 0);
        run_job(
            engine,
            JobIo {
                fd: -1,
                base_offset: 0,
                job: &job,
                codec: &codec,
                progress: &AtomicU64::new(0),
                stop: &AtomicBool::new(false),
                buffers: pool,
            },
        )
    }

    #[test]
    fn a_finished_job_returns_its_buffers_and_ends_the_job() {
        let (mut e, mut pool) = (Scripted::default(), BufferPool::new());
        assert_eq!(run(&mut e, &mut pool).unwrap().bytes, 64 << 10);
        assert!(e.begun && e.ended);
        assert_eq!(pool.available(4096), 4);
    }

    #[test]
    fn an_io_error_is_not_an_engine_failure() {
        let mut e = Scripted {
            io_error_at: Some(5),
            ..Default::default()
        };
        let mut pool = BufferPool::new();
        let err = run(&mut e, &mut pool).unwrap_err();
        assert_eq!(err.source.raw_os_error(), Some(libc::EIO));
        assert!(!err.engine_failed);
        assert!(e.ended, "the engine may run the next job");
        assert_eq!(pool.available(4096), 4);
    }

    #[test]
    fn an_engine_failure_keeps_its_buffers_away_from_later_jobs() {
        // The 5th request fails after the first four completed: nothing the
        // loop knows of is in flight, but the engine holds that request.
        let mut e = Scripted {
            fail_queue_at: Some(4),
            ..Default::default()
        };
        let mut pool = BufferPool::new();
        let err = run(&mut e, &mut pool).unwrap_err();
        assert!(err.engine_failed);
        assert!(!e.ended, "a broken engine is not asked to unregister");
        assert_eq!(
            pool.available(4096),
            0,
            "requests the engine accepted may still write into them"
        );
    }
}
