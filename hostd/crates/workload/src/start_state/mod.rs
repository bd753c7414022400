//! A known starting state before a profile's measured part (`hostd run --trim --rest …`):
//! trim the target's free space (or discard a whole raw device), then rest for a set time
//! or until the device's I/O counters stay unchanged for a window. What was done, and
//! what could not be, is a [`Preparation`] for the manifest, the summary and the report.
//!
//! The OS parts live in one file each (`linux.rs`, `macos.rs`, `windows.rs`) behind the
//! same three functions: [`os::trim_free_space`], [`os::discard_device`] and
//! [`os::io_counters`].

#[cfg(target_os = "linux")]
#[path = "linux.rs"]
mod os;
#[cfg(target_os = "macos")]
#[path = "macos.rs"]
mod os;
#[cfg(windows)]
#[path = "windows.rs"]
mod os;
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
#[path = "macos.rs"]
mod os;

use hostd_records::conditions::{Preparation, RestOutcome, RestUntil, TrimOutcome};
use hostd_records::TargetInfo;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a rest reads the device's counters.
const POLL: Duration = Duration::from_millis(250);

/// What to do to each target before its measured part.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StartState {
    /// Trim the free space (a raw device: discard all of it).
    pub trim: bool,
    /// Then rest.
    pub rest: Option<Rest>,
}

impl StartState {
    /// True when nothing is to be done.
    pub fn is_empty(&self) -> bool {
        !self.trim && self.rest.is_none()
    }
}

/// How long to rest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rest {
    /// A set time.
    Time(Duration),
    /// Until the device's I/O counters are unchanged for `window`, at most `timeout`.
    Idle {
        /// How long the counters must stay unchanged.
        window: Duration,
        /// Longest wait.
        timeout: Duration,
    },
}

impl Rest {
    /// Default idle window.
    pub const IDLE_WINDOW: Duration = Duration::from_secs(5);
    /// Default idle timeout.
    pub const IDLE_TIMEOUT: Duration = Duration::from_secs(300);

    /// `--rest`: `SECONDS`, `idle`, `idle:WINDOW_S` or `idle:WINDOW_S:TIMEOUT_S`.
    pub fn parse(text: &str) -> Result<Rest, String> {
        let secs = |s: &str, what: &str| -> Result<Duration, String> {
            let v: f64 = s
                .trim_end_matches('s')
                .parse()
                .map_err(|_| format!("--rest {text}: {what} {s:?} is not a number of seconds"))?;
            if !(0.0..=86_400.0).contains(&v) {
                return Err(format!(
                    "--rest {text}: {what} {v} s must be between 0 and 86400"
                ));
            }
            Ok(Duration::from_secs_f64(v))
        };
        let mut parts = text.split(':');
        match parts.next() {
            Some("idle") => {
                let window = parts
                    .next()
                    .map_or(Ok(Rest::IDLE_WINDOW), |w| secs(w, "window"))?;
                let timeout = parts
                    .next()
                    .map_or(Ok(Rest::IDLE_TIMEOUT), |t| secs(t, "timeout"))?;
                if parts.next().is_some() {
                    return Err(format!("--rest {text}: give idle[:WINDOW_S[:TIMEOUT_S]]"));
                }
                if window.is_zero() || window > timeout {
                    return Err(format!(
                        "--rest {text}: the idle window ({} s) must be more than 0 and at most the timeout ({} s)",
                        window.as_secs_f64(),
                        timeout.as_secs_f64()
                    ));
                }
                Ok(Rest::Idle { window, timeout })
            }
            _ => Ok(Rest::Time(secs(text, "time")?)),
        }
    }
}

/// Brings one target to the starting state; returns what was done. `stop` (Ctrl-C) cuts
/// a rest short.
pub fn prepare(target: &TargetInfo, state: &StartState, stop: &AtomicBool) -> Preparation {
    let trim = state.trim.then(|| trim(target));
    let rest = state.rest.map(|r| rest(target, r, stop));
    Preparation {
        target: target.label.clone(),
        trim,
        rest,
    }
}

/// Trims the free space of a directory target's filesystem, or discards a raw device.
pub fn trim(target: &TargetInfo) -> TrimOutcome {
    let started = Instant::now();
    let done = |method: &str, bytes: Option<u64>| TrimOutcome::Done {
        method: method.into(),
        bytes_trimmed: bytes,
        seconds: started.elapsed().as_secs_f64(),
    };
    match target.scheme.as_str() {
        "dir" => match os::trim_free_space(Path::new(&target.path)) {
            Ok(r) => done(r.method, r.bytes),
            Err(e) => e.into_outcome(),
        },
        "raw" => match os::discard_device(Path::new(&target.path)) {
            Ok(r) => done(r.method, r.bytes),
            Err(e) => e.into_outcome(),
        },
        other => TrimOutcome::NotAvailable {
            reason: format!("a {other} target has no device to trim"),
        },
    }
}

/// What a trim reported.
pub(crate) struct Trimmed {
    /// How (`FITRIM`, `BLKDISCARD`, …).
    pub method: &'static str,
    /// Bytes trimmed, where the OS says.
    pub bytes: Option<u64>,
}

/// Why a trim did not happen.
pub(crate) enum TrimError {
    /// This OS, filesystem or device has none.
    NotAvailable(String),
    /// It was tried and refused (Linux; the other OSes try nothing).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Failed(&'static str, String),
}

impl TrimError {
    fn into_outcome(self) -> TrimOutcome {
        match self {
            TrimError::NotAvailable(reason) => TrimOutcome::NotAvailable { reason },
            TrimError::Failed(method, reason) => TrimOutcome::Failed {
                method: method.into(),
                reason,
            },
        }
    }
}

/// Rests a target: a set time, or until its device's counters are unchanged for the
/// window (at most the timeout).
pub fn rest(target: &TargetInfo, rest: Rest, stop: &AtomicBool) -> RestOutcome {
    let started = Instant::now();
    let sleep_until = |end: Duration| {
        while started.elapsed() < end && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(POLL.min(end.saturating_sub(started.elapsed())));
        }
    };
    match rest {
        Rest::Time(d) => {
            sleep_until(d);
            RestOutcome {
                until: RestUntil::Time,
                waited_s: started.elapsed().as_secs_f64(),
                idle_window_s: 0.0,
                idle: false,
                note: None,
            }
        }
        Rest::Idle { window, timeout } => {
            let device = target
                .device
                .clone()
                .filter(|_| target.scheme == "dir")
                .unwrap_or_else(|| target.path.clone());
            let outcome = |idle: bool, note: Option<String>| RestOutcome {
                until: RestUntil::Idle,
                waited_s: started.elapsed().as_secs_f64(),
                idle_window_s: window.as_secs_f64(),
                idle,
                note,
            };
            let mut last = match os::io_counters(Path::new(&device)) {
                Ok(c) => c,
                Err(why) => {
                    // Nothing to watch: rest the window, and say so.
                    sleep_until(window);
                    return outcome(false, Some(why));
                }
            };
            let mut quiet_since = Instant::now();
            loop {
                if quiet_since.elapsed() >= window {
                    return outcome(true, None);
                }
                if started.elapsed() >= timeout || stop.load(Ordering::Relaxed) {
                    return outcome(false, None);
                }
                std::thread::sleep(POLL);
                match os::io_counters(Path::new(&device)) {
                    Ok(now) if now == last => {}
                    Ok(now) => {
                        last = now;
                        quiet_since = Instant::now();
                    }
                    Err(why) => return outcome(false, Some(why)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_is_a_time_or_idle_with_window_and_timeout() {
        assert_eq!(
            Rest::parse("30").unwrap(),
            Rest::Time(Duration::from_secs(30))
        );
        assert_eq!(
            Rest::parse("idle").unwrap(),
            Rest::Idle {
                window: Rest::IDLE_WINDOW,
                timeout: Rest::IDLE_TIMEOUT
            }
        );
        assert_eq!(
            Rest::parse("idle:2:60").unwrap(),
            Rest::Idle {
                window: Duration::from_secs(2),
                timeout: Duration::from_secs(60)
            }
        );
        for bad in ["idle:0", "idle:9:5", "soon", "-1", "idle:1:2:3"] {
            assert!(Rest::parse(bad).unwrap_err().contains(bad), "{bad}");
        }
    }

    #[test]
    fn a_target_without_a_device_records_trim_not_available_and_rests_the_time() {
        let sim = TargetInfo::simulated("x5", "write", "sim:x5-thermal");
        let state = StartState {
            trim: true,
            rest: Some(Rest::Time(Duration::from_millis(300))),
        };
        let p = prepare(&sim, &state, &AtomicBool::new(false));
        assert!(
            matches!(&p.trim, Some(TrimOutcome::NotAvailable { reason }) if reason.contains("sim target")),
            "{p:?}"
        );
        let rest = p.rest.as_ref().unwrap();
        assert!(rest.waited_s >= 0.3 && rest.waited_s < 1.0, "{rest:?}");
        assert!(
            p.describe().starts_with("trim not available"),
            "{}",
            p.describe()
        );
    }

    #[test]
    fn an_idle_rest_without_counters_to_watch_says_so() {
        let mut dir = TargetInfo::simulated("d", "write", "/nonexistent/dir");
        dir.scheme = "dir".into();
        dir.device = Some("/nonexistent/dev".into());
        let window = Duration::from_millis(200);
        let r = rest(
            &dir,
            Rest::Idle {
                window,
                timeout: Duration::from_secs(5),
            },
            &AtomicBool::new(false),
        );
        assert!(!r.idle && r.waited_s < 1.0, "{r:?}");
        assert!(
            r.note.as_deref().unwrap_or("").contains("/nonexistent/dev"),
            "{r:?}"
        );
    }
}
