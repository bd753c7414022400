//! Portable engine: `queue_depth` worker threads, each doing blocking
//! positioned reads and writes ([`crate::direct::pread`]) for one request at a time.

use super::{IoCompletion, IoEngine, IoRequest, WaitCounts};
use std::collections::VecDeque;
use std::io;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

struct Shared {
    queue: Mutex<(VecDeque<IoRequest>, bool)>,
    ready: Condvar,
}

/// Thread-pool engine.
pub struct Threads {
    shared: Arc<Shared>,
    pending: Vec<IoRequest>,
    done_rx: Receiver<IoCompletion>,
    workers: Vec<JoinHandle<()>>,
    /// How the waits ended.
    counts: WaitCounts,
}

impl Threads {
    /// Starts `n` workers.
    pub fn new(n: usize) -> Threads {
        let shared = Arc::new(Shared {
            queue: Mutex::new((VecDeque::new(), false)),
            ready: Condvar::new(),
        });
        let (tx, done_rx) = channel();
        let workers = (0..n.max(1))
            .map(|_| {
                let shared = shared.clone();
                let tx: Sender<IoCompletion> = tx.clone();
                std::thread::spawn(move || worker(shared, tx))
            })
            .collect();
        Threads {
            shared,
            pending: Vec::new(),
            done_rx,
            workers,
            counts: WaitCounts::default(),
        }
    }
}

fn worker(shared: Arc<Shared>, tx: Sender<IoCompletion>) {
    loop {
        let req = {
            let mut q = shared.queue.lock().unwrap();
            loop {
                if let Some(r) = q.0.pop_front() {
                    break r;
                }
                if q.1 {
                    return;
                }
                q = shared.ready.wait(q).unwrap();
            }
        };
        let issued_at = Some(std::time::Instant::now());
        // SAFETY: the job loop keeps the buffer alive and untouched until reaped.
        let result = unsafe {
            if req.write {
                crate::direct::pwrite(req.fd, req.buf, req.len, req.offset)
            } else {
                crate::direct::pread(req.fd, req.buf, req.len, req.offset)
            }
        };
        let completed_at = Some(std::time::Instant::now());
        if tx
            .send(IoCompletion {
                slot: req.slot,
                result,
                completed_at,
                issued_at,
            })
            .is_err()
        {
            return;
        }
    }
}

impl IoEngine for Threads {
    fn name(&self) -> &'static str {
        "threads"
    }

    fn queue(&mut self, req: IoRequest) -> io::Result<()> {
        self.pending.push(req);
        Ok(())
    }

    fn commit(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut q = self.shared.queue.lock().unwrap();
        q.0.extend(self.pending.drain(..));
        drop(q);
        self.shared.ready.notify_all();
        Ok(())
    }

    fn unsubmitted(&self) -> usize {
        self.pending.len()
    }

    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> io::Result<()> {
        let mut got = 0;
        while let Ok(c) = self.done_rx.try_recv() {
            out.push(c);
            got += 1;
        }
        if got >= min {
            self.counts.ready += 1;
            return Ok(());
        }
        while got < min {
            let c = self
                .done_rx
                .recv()
                .map_err(|_| io::Error::other("I/O worker threads ended"))?;
            out.push(c);
            got += 1;
        }
        while let Ok(c) = self.done_rx.try_recv() {
            out.push(c);
        }
        self.counts.slept += 1;
        Ok(())
    }

    fn wait_counts(&self) -> WaitCounts {
        self.counts
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        self.shared.queue.lock().unwrap().1 = true;
        self.shared.ready.notify_all();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
