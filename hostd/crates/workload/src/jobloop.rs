//! The job loop: keeps `queue_depth` I/Os in flight on one file through any
//! [`IoEngine`], fills blocks before writes, verifies them after reads and
//! times every I/O from submission to completion.

use crate::block::{BlockCodec, VerifyReport, BLOCK};
use crate::buffer::{AlignedBuf, BufferPool};
use crate::engine::{IoCompletion, IoEngine, IoRequest, RawFile};
use crate::latency::{IntervalLatency, FLUSH_NS};
use crate::step::IoJob;
use hostd_records::latency::LatencyHistogram;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What the loop needs besides the engine.
pub struct JobIo<'a> {
    /// The open file.
    pub fd: RawFile,
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
    /// Where the latencies go for the 1 s intervals (None: the file only).
    pub interval_latency: Option<&'a IntervalLatency>,
    /// Time every I/O (false only to measure what timing costs:
    /// `hostd bench-job --latency off`).
    pub record_latency: bool,
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
    /// I/Os that read (a mixed job's split).
    pub read_ops: u64,
    /// I/Os that wrote.
    pub write_ops: u64,
    /// Seconds from the first submission to the last completion (what fio
    /// calls the job's runtime: buffer set-up and the file's open and fsync
    /// are outside it).
    pub io_seconds: f64,
    /// Latency of every completed I/O, submission to completion (a short
    /// transfer and its resubmission count as one I/O).
    pub latency: LatencyHistogram,
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
    /// When the I/O went to the kernel (or the engine's workers): the call
    /// that submitted it had returned. Its latency runs from here to its
    /// completion, as fio's `clat` does.
    submitted: Instant,
    /// This I/O writes (a mixed job chooses per I/O).
    write: bool,
}

/// Reads at least this large are verified on a worker thread: checking a
/// 1 MiB read costs ~100 µs of CRC, enough to cap a 6–7 GB/s device if the
/// I/O thread did it. Smaller reads are checked on the I/O thread as they
/// are reaped (a 4 KiB block's CRC takes well under a microsecond; handing it
/// to another thread would cost more in wake-ups).
pub const OFFLOAD_VERIFY_MIN: usize = 64 << 10;

/// Whether `job`'s reads are verified on the worker thread.
fn offloads_verify(job: &IoJob) -> bool {
    !job.rw.is_write() && job.verify && job.block_size >= OFFLOAD_VERIFY_MIN
}

/// Buffers a job uses: one per I/O in flight and, for reads verified on the
/// worker thread, spares, so that the queue stays full while the worker
/// checks what came in: one per I/O in flight where that costs at most
/// 16 MiB, else 8.
pub fn slots_for(job: &IoJob) -> usize {
    const SPARE_BUDGET: usize = 16 << 20;
    let qd = job.queue_depth.max(1);
    let bs = job.block_size.max(1);
    let spare = if offloads_verify(job) {
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

/// A read buffer handed to the verifier thread.
struct ToVerify {
    slot: usize,
    ptr: *const u8,
    len: usize,
    offset: u64,
}

// The job loop does not touch the buffer until the verifier sends it back.
unsafe impl Send for ToVerify {}

/// Verification of reads on a worker thread: buffers go there, their slot
/// numbers and reports come back. Outstanding work is bounded by the job's
/// spare buffers.
struct Verifier {
    tx: Option<mpsc::Sender<ToVerify>>,
    rx: mpsc::Receiver<(usize, VerifyReport)>,
    thread: Option<std::thread::JoinHandle<()>>,
    outstanding: usize,
}

impl Verifier {
    fn start(codec: &BlockCodec) -> Verifier {
        let (tx, work) = mpsc::channel::<ToVerify>();
        let (done, rx) = mpsc::channel();
        let codec = codec.clone();
        let thread = std::thread::Builder::new()
            .name("hostd-verify".into())
            .spawn(move || {
                for w in work {
                    // SAFETY: the buffer stays allocated and untouched by
                    // the job loop until this slot number is sent back.
                    let data = unsafe { std::slice::from_raw_parts(w.ptr, w.len) };
                    let report = codec.verify(data, w.offset);
                    if done.send((w.slot, report)).is_err() {
                        return;
                    }
                }
            })
            .expect("spawn the verifier thread");
        Verifier {
            tx: Some(tx),
            rx,
            thread: Some(thread),
            outstanding: 0,
        }
    }

    fn send(&mut self, w: ToVerify) {
        self.outstanding += 1;
        let _ = self.tx.as_ref().expect("open").send(w);
    }

    /// Collects finished verifications; waits for one if `wait`.
    fn collect(&mut self, wait: bool, report: &mut VerifyReport, free: &mut Vec<usize>) {
        let mut first = wait && self.outstanding > 0;
        while self.outstanding > 0 {
            let got = if first {
                first = false;
                self.rx.recv().ok()
            } else {
                self.rx.try_recv().ok()
            };
            let Some((slot, r)) = got else { break };
            self.outstanding -= 1;
            report.merge(r);
            free.push(slot);
        }
    }
}

impl Drop for Verifier {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Runs `io.job` to completion (or stop, or the first error).
pub fn run_job(engine: &mut dyn IoEngine, io: JobIo<'_>) -> Result<JobOutcome, JobError> {
    let mut job = JobLoop::start(engine, io)?;
    let fatal = job.run().err();
    job.finish(fatal)
}

/// A job while it runs: its buffers (slots), what is in flight, and what it found so far.
struct JobLoop<'e, 'a> {
    engine: &'e mut dyn IoEngine,
    io: JobIo<'a>,
    /// I/O size.
    bs: usize,
    /// I/Os in flight at most.
    qd: usize,
    /// A write job (a mixed job is not).
    write: bool,
    total_ops: u64,
    blocks_in_file: u64,
    /// Random offsets.
    rng: ChaCha8Rng,
    /// A mixed job's directions come from their own stream, so its offsets are the same
    /// as a pure job's with the same seed.
    direction: ChaCha8Rng,
    /// Reads are verified (a mixed job's too); writes never are.
    verifying: bool,
    started: Instant,
    slots: Vec<Slot>,
    free: Vec<usize>,
    issued: u64,
    in_flight: usize,
    out: JobOutcome,
    verify: VerifyReport,
    verifier: Option<Verifier>,
    /// The first I/O error, at its file offset.
    error: Option<(u64, io::Error)>,
    comps: Vec<IoCompletion>,
    /// Latencies since the last hand-over to the interval accumulator.
    recent: LatencyHistogram,
    stamps: IssueStamps,
    flushed: Instant,
}

impl<'e, 'a> JobLoop<'e, 'a> {
    /// Takes the job's buffers and registers them with the engine.
    fn start(engine: &'e mut dyn IoEngine, io: JobIo<'a>) -> Result<Self, JobError> {
        let job = io.job;
        let bs = job.block_size;
        let write = job.rw.is_write();
        let started = Instant::now();
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
                submitted: started,
                write,
            })
            .collect();
        let bufs: Vec<(*mut u8, usize)> = slots
            .iter_mut()
            .map(|s| (s.buf.as_mut_ptr(), s.buf.len()))
            .collect();
        if let Err(e) = engine.begin_job(io.fd, &bufs) {
            return Err(JobError {
                offset: 0,
                source: e,
                bytes_done: 0,
                engine_failed: true,
            });
        }
        let qd = job.queue_depth.max(1);
        Ok(JobLoop {
            bs,
            qd,
            write,
            total_ops: total_ops(job),
            blocks_in_file: (job.file_size / bs as u64).max(1),
            rng: ChaCha8Rng::seed_from_u64(job.seed),
            direction: ChaCha8Rng::seed_from_u64(job.seed ^ 0x6d69_7865_6400_0000),
            verifying: !write && job.verify,
            started,
            free: (0..slots.len()).rev().collect(),
            slots,
            issued: 0,
            in_flight: 0,
            out: JobOutcome::default(),
            verify: VerifyReport::default(),
            verifier: offloads_verify(job).then(|| Verifier::start(io.codec)),
            error: None,
            comps: Vec::with_capacity(qd),
            recent: LatencyHistogram::new(),
            stamps: IssueStamps::new(io.record_latency),
            flushed: started,
            engine,
            io,
        })
    }

    /// Keeps the queue full and reaps completions until every I/O is done or the job
    /// stops. An engine failure (not an I/O error) ends it with I/Os possibly still owned
    /// by the kernel.
    fn run(&mut self) -> Result<(), JobError> {
        let flush_every = Duration::from_nanos(FLUSH_NS);
        loop {
            if let Some(v) = self.verifier.as_mut() {
                // Buffers back from the verifier; wait for one only when nothing
                // else can happen (nothing in flight and none free).
                let starved = self.in_flight == 0 && self.free.is_empty();
                v.collect(starved, &mut self.verify, &mut self.free);
            }
            // Queue as much as the depth allows.
            let stopping = self.error.is_some() || self.io.stop.load(Ordering::Relaxed);
            if stopping && self.error.is_none() && self.issued < self.total_ops {
                self.out.interrupted = true;
            }
            if !stopping {
                self.fill_queue()?;
            }
            if self.in_flight == 0 {
                if self.verifier.as_ref().is_some_and(|v| v.outstanding > 0)
                    && !stopping
                    && self.issued < self.total_ops
                {
                    continue;
                }
                return Ok(());
            }
            let reaped_at = self.reap()?;
            let mut comps = std::mem::take(&mut self.comps);
            for c in comps.drain(..) {
                self.complete(c, reaped_at)?;
            }
            self.comps = comps;
            // Only intervals need the latencies as they come (`bench-job` has none: its
            // histogram is handed over once, at the end, so what it costs goes with the
            // I/Os and not with the time the job takes).
            if self.io.record_latency
                && self.io.interval_latency.is_some()
                && reaped_at.duration_since(self.flushed) >= flush_every
            {
                flush_latency(
                    &mut self.out.latency,
                    &mut self.recent,
                    self.io.interval_latency,
                );
                self.flushed = reaped_at;
            }
        }
    }

    /// Queues I/Os on free slots while the depth, the job and a paced job's clock allow.
    fn fill_queue(&mut self) -> Result<(), JobError> {
        let job = self.io.job;
        let bs = self.bs;
        let mut queued_any = false;
        while self.issued < self.total_ops && self.in_flight < self.qd {
            let Some(s) = self.free.pop() else { break };
            if let Some(pace) = job.pace_ns {
                let due = Duration::from_nanos(pace * self.issued);
                let now = self.started.elapsed();
                if now < due {
                    if self.in_flight > 0 || queued_any {
                        self.free.push(s);
                        break;
                    }
                    std::thread::sleep(due - now);
                } else if now > due + Duration::from_nanos(pace) {
                    self.out.late_ops += 1;
                }
            }
            let offset = if job.rw.is_random() {
                self.rng.gen_range(0..self.blocks_in_file) * bs as u64
            } else {
                self.issued * bs as u64
            };
            let len = (job.file_size - offset).min(bs as u64) as usize;
            let this_write = match job.rw.read_percent() {
                Some(p) => self.direction.gen_range(0..100u8) >= p,
                None => self.write,
            };
            let slot = &mut self.slots[s];
            slot.offset = offset;
            slot.len = len;
            slot.done = 0;
            slot.write = this_write;
            if this_write {
                self.out.write_ops += 1;
                self.io.codec.fill_reusing(
                    &mut slot.buf.as_mut_slice()[..len],
                    offset,
                    &mut slot.primed,
                );
            } else {
                self.out.read_ops += 1;
                // A read overwrites the payload the buffer was primed with.
                slot.primed = None;
            }
            if let Err(e) = submit(&mut *self.engine, self.io.fd, self.io.base_offset, s, slot) {
                return Err(JobError {
                    offset,
                    source: e,
                    bytes_done: self.out.bytes,
                    engine_failed: true,
                });
            }
            self.stamps.queued(s, true);
            self.stamps
                .engine_returned(self.engine.unsubmitted(), &mut self.slots);
            self.issued += 1;
            self.in_flight += 1;
            queued_any = true;
        }
        Ok(())
    }

    /// Submits what was queued and waits for at least one completion (into `comps`);
    /// returns when they were reaped, for their latency.
    fn reap(&mut self) -> Result<Instant, JobError> {
        self.comps.clear();
        let (engine, stamps, slots) = (&mut *self.engine, &mut self.stamps, &mut self.slots);
        let reaped = engine.commit().and_then(|()| {
            stamps.engine_returned(engine.unsubmitted(), slots);
            engine.reap(1, &mut self.comps)
        });
        if let Err(e) = reaped {
            return Err(JobError {
                offset: self.issued * self.bs as u64,
                source: e,
                bytes_done: self.out.bytes,
                engine_failed: true,
            });
        }
        // One clock reading for everything this reap returned (engines that saw the
        // completion earlier, on another thread, stamped it there).
        Ok(if self.io.record_latency {
            Instant::now()
        } else {
            self.started
        })
    }

    /// One completion: an error kept, a short transfer resubmitted, or the I/O done (its
    /// latency recorded, its buffer verified or freed).
    fn complete(&mut self, c: IoCompletion, reaped_at: Instant) -> Result<(), JobError> {
        self.in_flight -= 1;
        let slot = &mut self.slots[c.slot];
        match c.result {
            Err(e) => {
                self.error
                    .get_or_insert((slot.offset + slot.done as u64, e));
                self.free.push(c.slot);
            }
            Ok(0) if slot.done < slot.len => {
                let e = io::Error::new(io::ErrorKind::UnexpectedEof, "file ended early");
                self.error
                    .get_or_insert((slot.offset + slot.done as u64, e));
                self.free.push(c.slot);
            }
            Ok(n) => {
                if let (0, Some(t)) = (slot.done, c.issued_at) {
                    // The engine's worker began it (the first part of a short I/O: the
                    // rest keeps this start).
                    slot.submitted = t;
                }
                slot.done += n;
                self.io.progress.fetch_add(n as u64, Ordering::Relaxed);
                self.out.bytes += n as u64;
                if !slot.write {
                    self.out.read_bytes += n as u64;
                }
                if slot.done < slot.len && self.error.is_none() {
                    // Short transfer: resubmit the rest from the same buffer.
                    let io = &self.io;
                    if let Err(e) = submit(&mut *self.engine, io.fd, io.base_offset, c.slot, slot) {
                        return Err(JobError {
                            offset: slot.offset,
                            source: e,
                            bytes_done: self.out.bytes,
                            engine_failed: true,
                        });
                    }
                    // The rest of a short I/O: its latency still runs from the first
                    // part's issue.
                    self.stamps.queued(c.slot, false);
                    self.stamps
                        .engine_returned(self.engine.unsubmitted(), &mut self.slots);
                    self.in_flight += 1;
                    return Ok(());
                }
                if self.io.record_latency {
                    let at = c.completed_at.unwrap_or(reaped_at);
                    self.recent
                        .record(at.saturating_duration_since(slot.submitted).as_nanos() as u64);
                }
                if !self.verifying || slot.write {
                    self.free.push(c.slot);
                } else if let Some(v) = self.verifier.as_mut() {
                    v.send(ToVerify {
                        slot: c.slot,
                        ptr: slot.buf.as_mut_ptr(),
                        len: slot.len / BLOCK * BLOCK,
                        offset: slot.offset,
                    });
                } else {
                    let full = slot.len / BLOCK * BLOCK;
                    self.verify.merge(
                        self.io
                            .codec
                            .verify(&slot.buf.as_slice()[..full], slot.offset),
                    );
                    self.free.push(c.slot);
                }
            }
        }
        Ok(())
    }

    /// Ends the job: its run time and last latencies, every buffer back from the verifier,
    /// then the buffers given back (or, after an engine failure, leaked) and the outcome.
    fn finish(mut self, fatal: Option<JobError>) -> Result<JobOutcome, JobError> {
        self.out.io_seconds = self.started.elapsed().as_secs_f64();
        flush_latency(
            &mut self.out.latency,
            &mut self.recent,
            self.io.interval_latency,
        );
        if let Some(mut v) = self.verifier.take() {
            // Every buffer comes back before the buffers are reused or leaked.
            while v.outstanding > 0 {
                v.collect(true, &mut self.verify, &mut self.free);
            }
        }
        if let Some(f) = fatal {
            // The engine broke: requests it accepted (even ones it then failed to
            // submit) may still write into these buffers, so they are neither
            // reused nor freed, and the engine is not asked to unregister them
            // (on older kernels that waits for every request). The caller drops
            // the engine.
            std::mem::forget(self.slots);
            return Err(f);
        }
        self.engine.end_job();
        self.io
            .buffers
            .give_back(self.slots.into_iter().map(|s| s.buf));
        if let Some((offset, source)) = self.error {
            return Err(JobError {
                offset,
                source,
                bytes_done: self.out.bytes,
                engine_failed: false,
            });
        }
        let job = self.io.job;
        let mut out = self.out;
        if !self.write && job.verify {
            out.verify = Some(self.verify);
        }
        Ok(out)
    }
}

/// Moves `recent` into the file's histogram and the interval accumulator.
fn flush_latency(
    file: &mut LatencyHistogram,
    recent: &mut LatencyHistogram,
    interval: Option<&IntervalLatency>,
) {
    if recent.is_empty() {
        return;
    }
    file.add(recent);
    if let Some(acc) = interval {
        acc.add(recent);
    }
    recent.reset();
}

/// Stamps each I/O's issue time once the engine has handed it on (fio's
/// `issue_time`, where its `clat` starts): the I/Os queued and not yet
/// stamped, oldest first. One clock reading serves all that left together.
struct IssueStamps {
    on: bool,
    /// Slot, and whether to stamp it (the rest of a short I/O keeps the
    /// first part's stamp but still takes its place in the queue).
    waiting: VecDeque<(usize, bool)>,
}

impl IssueStamps {
    fn new(on: bool) -> IssueStamps {
        IssueStamps {
            on,
            waiting: VecDeque::new(),
        }
    }

    /// `slot` was queued with the engine.
    fn queued(&mut self, slot: usize, stamp: bool) {
        if self.on {
            self.waiting.push_back((slot, stamp));
        }
    }

    /// An engine call returned with `unsubmitted` requests still held back:
    /// every older one has been issued now.
    fn engine_returned(&mut self, unsubmitted: usize, slots: &mut [Slot]) {
        if self.waiting.len() <= unsubmitted {
            return;
        }
        let now = Instant::now();
        while self.waiting.len() > unsubmitted {
            if let Some((s, true)) = self.waiting.pop_front() {
                slots[s].submitted = now;
            }
        }
    }
}

fn submit(
    engine: &mut dyn IoEngine,
    fd: RawFile,
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
    use crate::step::Rw;

    /// Completes every request in full, except: request `fail_queue_at` is
    /// taken but `queue` then fails (as a ring whose submit fails after the
    /// push), and request `io_error_at` completes with EIO. `commit` takes
    /// `commit_takes` (a slow submitting system call) and hands on what was
    /// queued since the last one; with `hand_on_older`, `queue` too hands on
    /// all but the newest, taking as long (as the io_uring engine does), and
    /// each request completes the moment it is handed on.
    #[derive(Default)]
    struct Scripted {
        queued: Vec<IoRequest>,
        /// When each queued request was handed on (`hand_on_older` only).
        handed_at: Vec<Option<Instant>>,
        uncommitted: usize,
        commit_takes: Duration,
        hand_on_older: bool,
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
        fn begin_job(&mut self, _fd: RawFile, _bufs: &[(*mut u8, usize)]) -> io::Result<()> {
            self.begun = true;
            Ok(())
        }
        fn end_job(&mut self) {
            self.ended = true;
        }
        fn queue(&mut self, req: IoRequest) -> io::Result<()> {
            self.queued.push(req);
            self.uncommitted += 1;
            if Some(self.seen + self.queued.len() - 1) == self.fail_queue_at {
                return Err(io::Error::other("ring broke"));
            }
            self.handed_at.push(None);
            if self.hand_on_older && self.uncommitted > 1 {
                std::thread::sleep(self.commit_takes);
                self.hand_on(1);
            }
            Ok(())
        }
        fn commit(&mut self) -> io::Result<()> {
            std::thread::sleep(self.commit_takes);
            self.hand_on(0);
            Ok(())
        }
        fn unsubmitted(&self) -> usize {
            self.uncommitted
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<IoCompletion>) -> io::Result<()> {
            let handed: Vec<Option<Instant>> = self.handed_at.drain(..).collect();
            for (r, handed) in self.queued.drain(..).zip(handed) {
                let result = if Some(self.seen) == self.io_error_at {
                    Err(io::Error::from_raw_os_error(libc::EIO))
                } else {
                    Ok(r.len)
                };
                self.seen += 1;
                out.push(IoCompletion {
                    slot: r.slot,
                    result,
                    completed_at: handed.filter(|_| self.hand_on_older),
                    issued_at: None,
                });
            }
            Ok(())
        }
    }

    impl Scripted {
        /// Hands on every request but the newest `keep`.
        fn hand_on(&mut self, keep: usize) {
            let now = Instant::now();
            let n = self.handed_at.len().saturating_sub(keep);
            for h in &mut self.handed_at[..n] {
                h.get_or_insert(now);
            }
            self.uncommitted = keep.min(self.uncommitted);
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
                fd: crate::engine::NO_FILE,
                base_offset: 0,
                job: &job,
                codec: &codec,
                progress: &AtomicU64::new(0),
                stop: &AtomicBool::new(false),
                buffers: pool,
                interval_latency: None,
                record_latency: true,
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

    #[test]
    fn latency_runs_from_the_issue_not_from_the_queueing() {
        // fio's clat: the time the submitting call takes is not the I/O's.
        // Every request completes the moment it is reaped, so each latency
        // is only the loop's own bookkeeping, far below the 20 ms submit.
        let mut e = Scripted {
            commit_takes: Duration::from_millis(20),
            ..Default::default()
        };
        let mut pool = BufferPool::new();
        let out = run(&mut e, &mut pool).unwrap();
        assert_eq!(out.latency.count(), 16);
        let max = out.latency.stats().max_ns;
        assert!(max < 5_000_000, "max latency {max} ns includes the submit");
    }

    #[test]
    fn each_io_is_timed_from_the_call_that_handed_it_on() {
        // QD4: every queue call hands on the older requests and the commit the
        // newest, each call taking 10 ms. Stamping the wrong request (the
        // newest instead of the oldest) would put a whole call inside its
        // latency.
        let mut e = Scripted {
            commit_takes: Duration::from_millis(10),
            hand_on_older: true,
            ..Default::default()
        };
        let mut pool = BufferPool::new();
        let out = run(&mut e, &mut pool).unwrap();
        assert_eq!(out.latency.count(), 16);
        let max = out.latency.stats().max_ns;
        assert!(max < 5_000_000, "max latency {max} ns includes a submit");
    }
}
