//! Fault injection at the engine boundary, for faults real parts cannot be
//! made to produce on demand in a test (e.g. a disk filling up mid-run on a
//! machine without a small filesystem). Off unless a test or the
//! `HOSTD_INJECT_ENOSPC_AFTER=BYTES` environment variable asks for it.

use crate::engine::{IoCompletion, IoEngine, IoRequest, RawFile};
use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Which fault to inject.
#[derive(Debug, Clone, Default)]
pub struct FaultPlan {
    /// Writes fail with ENOSPC once this many bytes were written (per target).
    pub enospc_after_bytes: Option<u64>,
}

impl FaultPlan {
    /// Reads `HOSTD_INJECT_ENOSPC_AFTER` (bytes), the test hook of the CLI.
    pub fn from_env() -> FaultPlan {
        FaultPlan {
            enospc_after_bytes: std::env::var("HOSTD_INJECT_ENOSPC_AFTER")
                .ok()
                .and_then(|v| hostd_records::units::parse_size(&v).ok()),
        }
    }

    /// True when no fault is planned.
    pub fn is_empty(&self) -> bool {
        self.enospc_after_bytes.is_none()
    }
}

/// Wraps an engine; write completions past the byte budget become ENOSPC.
pub struct FaultyEngine {
    inner: Box<dyn IoEngine>,
    budget: u64,
    written: Arc<AtomicU64>,
    writes: HashMap<usize, usize>,
}

impl FaultyEngine {
    /// `written` is shared by all files of a target.
    pub fn new(inner: Box<dyn IoEngine>, budget: u64, written: Arc<AtomicU64>) -> FaultyEngine {
        FaultyEngine {
            inner,
            budget,
            written,
            writes: HashMap::new(),
        }
    }
}

impl IoEngine for FaultyEngine {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn queue(&mut self, req: IoRequest) -> io::Result<()> {
        if req.write {
            self.writes.insert(req.slot, req.len);
        } else {
            self.writes.remove(&req.slot);
        }
        self.inner.queue(req)
    }
    fn begin_job(&mut self, fd: RawFile, bufs: &[(*mut u8, usize)]) -> io::Result<()> {
        self.inner.begin_job(fd, bufs)
    }
    fn end_job(&mut self) {
        self.inner.end_job()
    }
    fn commit(&mut self) -> io::Result<()> {
        self.inner.commit()
    }
    fn unsubmitted(&self) -> usize {
        self.inner.unsubmitted()
    }
    fn set_polling(&mut self, on: bool) {
        self.inner.set_polling(on)
    }
    fn wait_counts(&self) -> crate::engine::WaitCounts {
        self.inner.wait_counts()
    }
    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> io::Result<()> {
        let start = out.len();
        self.inner.reap(min, out)?;
        for c in &mut out[start..] {
            if let (Some(_), Ok(n)) = (self.writes.get(&c.slot), &c.result) {
                let before = self.written.fetch_add(*n as u64, Ordering::SeqCst);
                if before + *n as u64 > self.budget {
                    c.result = Err(crate::direct::disk_full());
                }
            }
        }
        Ok(())
    }
}
