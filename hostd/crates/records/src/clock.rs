//! The time base of every record: the host's Unix time read once, when a process
//! first asks, then advanced by the monotonic clock (`Instant`, CLOCK_MONOTONIC).
//! Timestamps stay Unix nanoseconds, but every difference between two of them is
//! monotonic time, so a host clock stepped mid-run (NTP, an admin) changes no
//! duration, rate, deadline or step time computed from records.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A Unix time paired with the monotonic instant it was read at.
#[derive(Debug, Clone, Copy)]
pub struct Anchor {
    unix_ns: i64,
    at: Instant,
}

impl Anchor {
    /// Pairs `unix_ns` with the monotonic clock's now.
    pub fn new(unix_ns: i64) -> Anchor {
        Anchor {
            unix_ns,
            at: Instant::now(),
        }
    }

    /// The anchor's Unix time advanced by the monotonic time since it was made.
    pub fn now_ns(&self) -> i64 {
        self.unix_ns + self.at.elapsed().as_nanos() as i64
    }
}

/// The host's Unix clock now, in nanoseconds (0 before 1970).
pub fn wall_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Unix nanoseconds on the process's monotonic timeline (see the module doc).
pub fn now_ns() -> i64 {
    static ANCHOR: OnceLock<Anchor> = OnceLock::new();
    ANCHOR.get_or_init(|| Anchor::new(wall_ns())).now_ns()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn time_advances_by_the_monotonic_clock_whatever_the_wall_clock_says() {
        // An anchor an hour off the wall clock, as after a step: differences are
        // monotonic time, and the wall clock is never read again.
        let a = Anchor::new(wall_ns() - 3_600_000_000_000);
        let t0 = a.now_ns();
        let clock = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        let (t1, mono) = (a.now_ns(), clock.elapsed().as_nanos() as i64);
        assert!(t1 - t0 >= 20_000_000, "{}", t1 - t0);
        assert!((t1 - t0 - mono).abs() < 2_000_000, "{} vs {mono}", t1 - t0);
        assert!(wall_ns() - t1 > 3_599_000_000_000);
    }

    #[test]
    fn the_process_timeline_never_goes_back() {
        let mut prev = now_ns();
        for _ in 0..10_000 {
            let t = now_ns();
            assert!(t >= prev);
            prev = t;
        }
        assert!((now_ns() - wall_ns()).abs() < 60_000_000_000);
    }
}
