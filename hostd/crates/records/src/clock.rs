//! The time base of every record: the host's Unix time read once, when a process
//! first asks, then advanced by the monotonic clock (`Instant`, CLOCK_MONOTONIC).
//! Timestamps stay Unix nanoseconds, but every difference between two of them is
//! monotonic time, so a host clock stepped mid-run (NTP, an admin) changes no
//! duration, rate, deadline or step time computed from records.
//!
//! A run whose targets are simulated drives played N× faster records on the modelled
//! drive's clock: from the moment [`play_faster`] is called, the record timeline advances
//! N ns per ns of monotonic time, so every timestamp, duration, rate, time constant and
//! prediction taken from records is the modelled drive's. [`real_ns`] stays on the host's
//! own timeline (what a clock fit against a probe's crystal needs), [`record_ns_at`] maps
//! it onto the record timeline, and [`real_duration`] turns a record-time span into the
//! host time to sleep. Without [`play_faster`] the two timelines are one.

use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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

/// Unix nanoseconds on the host's monotonic timeline, never played faster (see the module
/// doc): the one to fit a probe's clock against.
pub fn real_ns() -> i64 {
    static ANCHOR: OnceLock<Anchor> = OnceLock::new();
    ANCHOR.get_or_init(|| Anchor::new(wall_ns())).now_ns()
}

/// Where the record timeline leaves the host's: from `origin_ns` (both timelines agree
/// there) it advances `factor` ns per host ns.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Playback {
    /// Host (and record) Unix ns at which the playback started.
    pub origin_ns: i64,
    /// Record ns per host ns (the simulated drives' `*N`).
    pub factor: f64,
}

/// The key of [`Playback`] in the manifest's `extra`.
pub const MANIFEST_KEY: &str = "playback";

impl Playback {
    /// The note a target played `factor`× faster carries, stated once per run.
    pub fn note(factor: f64) -> String {
        format!("played {factor}× faster than real time; times and rates are the modelled drive's")
    }

    /// What the run's record time from `start_ns` to `end_ns` took on the host, e.g.
    /// `its 3m 6s took 37s` (whole seconds).
    pub fn took(&self, start_ns: i64, end_ns: i64) -> String {
        let secs = |ns: i64| {
            crate::units::DurationText(Duration::from_secs((ns.max(0) as f64 / 1e9).round() as u64))
        };
        format!(
            "its {} took {}",
            secs(end_ns - start_ns),
            secs(self.real_ns(end_ns) - self.real_ns(start_ns))
        )
    }

    /// The record time of host time `real_ns`.
    pub fn record_ns(&self, real_ns: i64) -> i64 {
        if real_ns <= self.origin_ns {
            return real_ns;
        }
        self.origin_ns + ((real_ns - self.origin_ns) as f64 * self.factor) as i64
    }

    /// The host time of record time `record_ns` (the inverse of [`Playback::record_ns`]).
    pub fn real_ns(&self, record_ns: i64) -> i64 {
        if record_ns <= self.origin_ns {
            return record_ns;
        }
        self.origin_ns + ((record_ns - self.origin_ns) as f64 / self.factor) as i64
    }
}

static PLAYBACK: OnceLock<Playback> = OnceLock::new();

/// The record timeline's playback, if [`play_faster`] was called.
pub fn playback() -> Option<Playback> {
    PLAYBACK.get().copied()
}

/// From now on, records advance `factor`× faster than the host's monotonic clock (a run of
/// simulated drives played `factor`× faster); returns the playback's start. Once per
/// process: a second call with another factor is an error.
pub fn play_faster(factor: f64) -> Result<Playback, String> {
    if !(factor.is_finite() && factor > 0.0) {
        return Err(format!("playback factor {factor} is not a positive number"));
    }
    let p = *PLAYBACK.get_or_init(|| Playback {
        origin_ns: real_ns(),
        factor,
    });
    if p.factor != factor {
        return Err(format!(
            "records already play {}× faster; cannot also play {factor}× faster",
            p.factor
        ));
    }
    Ok(p)
}

/// The record time of host time `real_ns` (itself when nothing plays faster).
pub fn record_ns_at(real_ns: i64) -> i64 {
    playback().map_or(real_ns, |p| p.record_ns(real_ns))
}

/// The host time that `record` of record time takes (itself when nothing plays faster).
pub fn real_duration(record: Duration) -> Duration {
    match playback() {
        Some(p) => record.div_f64(p.factor),
        None => record,
    }
}

/// Unix nanoseconds on the record timeline: the host's monotonic timeline, played faster
/// after [`play_faster`] (see the module doc).
pub fn now_ns() -> i64 {
    record_ns_at(real_ns())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_playback_maps_host_time_onto_the_record_timeline_and_back() {
        let p = Playback {
            origin_ns: 1_000,
            factor: 5.0,
        };
        assert_eq!(
            p.record_ns(900),
            900,
            "before the playback the timelines agree"
        );
        assert_eq!(p.record_ns(1_000 + 2_000), 1_000 + 10_000);
        assert_eq!(p.real_ns(p.record_ns(123_456)), 123_456);
    }
}
