//! [`Budget`]: the bytes of line protocol allowed to wait in the channel to the writer
//! thread, so that what waits there is bounded whatever the thread is doing (a request to a
//! server that does not answer takes up to the request timeout).

use super::report::{gauge, Counters};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The channel's byte budget, shared by the writer's callers and its thread.
pub(super) struct Budget {
    max: usize,
    used: Mutex<usize>,
    room: Condvar,
    counters: Arc<Counters>,
}

impl Budget {
    pub(super) fn new(max: usize, counters: Arc<Counters>) -> Budget {
        Budget {
            max,
            used: Mutex::new(0),
            room: Condvar::new(),
            counters,
        }
    }

    /// Takes `n` bytes of room. A message larger than the whole budget passes when the
    /// queue is empty (else it could never go). Without room: `wait` waits for it while
    /// `alive()` (the thread that makes room still runs); otherwise, or once the thread
    /// is gone, returns false.
    pub(super) fn take(&self, n: usize, wait: bool, alive: impl Fn() -> bool) -> bool {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if *used == 0 || *used + n <= self.max {
                *used += n;
                self.publish(*used);
                return true;
            }
            if !wait || !alive() {
                return false;
            }
            used = self
                .room
                .wait_timeout(used, Duration::from_millis(200))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Gives back `n` bytes (the thread took a message out of the channel).
    pub(super) fn give(&self, n: usize) {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        *used = used.saturating_sub(n);
        self.publish(*used);
        self.room.notify_all();
    }

    fn publish(&self, used: usize) {
        gauge(
            &self.counters.queue_bytes,
            &self.counters.queue_peak,
            used as u64,
        );
    }
}
