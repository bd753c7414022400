//! io_uring engine (Linux): one ring sized to the queue depth.

use super::{IoCompletion, IoEngine, IoRequest};
use io_uring::{opcode, types, IoUring};
use std::io;

/// io_uring engine.
pub struct Uring {
    ring: IoUring,
    queued: usize,
}

impl Uring {
    /// Creates a ring with room for `queue_depth` requests.
    pub fn new(queue_depth: usize) -> io::Result<Uring> {
        let entries = queue_depth.max(1).next_power_of_two() as u32;
        // COOP_TASKRUN (Linux 5.19+): completions are handled when we enter the
        // kernel anyway, not by interrupting us — less CPU per I/O. Older
        // kernels refuse the flag; then a plain ring.
        let ring = match IoUring::builder().setup_coop_taskrun().build(entries) {
            Ok(r) => r,
            Err(_) => IoUring::new(entries)?,
        };
        Ok(Uring { ring, queued: 0 })
    }
}

impl IoEngine for Uring {
    fn name(&self) -> &'static str {
        "io_uring"
    }

    fn queue(&mut self, req: IoRequest) -> io::Result<()> {
        let fd = types::Fd(req.fd);
        let entry = if req.write {
            opcode::Write::new(fd, req.buf as *const u8, req.len as u32)
                .offset(req.offset)
                .build()
        } else {
            opcode::Read::new(fd, req.buf, req.len as u32)
                .offset(req.offset)
                .build()
        }
        .user_data(req.slot as u64);
        // SAFETY: the buffer stays valid until the completion is reaped.
        unsafe {
            if self.ring.submission().push(&entry).is_err() {
                self.ring.submit()?;
                self.ring
                    .submission()
                    .push(&entry)
                    .map_err(|_| io::Error::other("io_uring submission queue full"))?;
            }
        }
        self.queued += 1;
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
