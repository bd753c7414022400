//! Clock alignment: probe microseconds → host Unix nanoseconds.
//!
//! Each sync exchange gives four stamps: host send (t1), probe receive (t2),
//! probe transmit (t3), host receive (t4). Its round trip is
//! `(t4 − t1) − (t3 − t2)`; the probe's clock at the host midpoint
//! `(t1 + t4)/2` is the probe midpoint `(t2 + t3)/2`, wrong by at most half
//! the round trip. The aligner keeps a window of recent exchanges, picks the
//! half with the smallest round trips (and of those only the ones within
//! twice the smallest plus 50 µs), and fits host time against probe time
//! by least squares (offset and drift). Its uncertainty is half the smallest
//! round trip in use plus the RMS residual of the fit.

use serde::Serialize;
use std::collections::VecDeque;

/// One completed sync exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncExchange {
    /// Host Unix ns when the request was sent (t1).
    pub host_send_ns: i64,
    /// Probe µs when the request arrived (t2).
    pub probe_rx_us: u64,
    /// Probe µs when the reply was queued (t3).
    pub probe_tx_us: u64,
    /// Host Unix ns when the reply arrived (t4).
    pub host_recv_ns: i64,
}

impl SyncExchange {
    /// Round trip minus the probe's turnaround, in ns.
    pub fn round_trip_ns(&self) -> i64 {
        (self.host_recv_ns - self.host_send_ns)
            - (self.probe_tx_us as i64 - self.probe_rx_us as i64) * 1000
    }

    fn host_mid_ns(&self) -> i64 {
        self.host_send_ns + (self.host_recv_ns - self.host_send_ns) / 2
    }

    fn probe_mid_ns(&self) -> i64 {
        (self.probe_rx_us as i64) * 1000 + (self.probe_tx_us as i64 - self.probe_rx_us as i64) * 500
    }

    fn is_plausible(&self) -> bool {
        self.host_recv_ns >= self.host_send_ns
            && self.probe_tx_us >= self.probe_rx_us
            && self.round_trip_ns() >= 0
            && self.probe_rx_us < (i64::MAX / 1000) as u64
    }
}

/// Current estimate of the probe → host mapping.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AlignmentEstimate {
    /// Host ns minus probe ns at the reference point.
    pub offset_ns: i64,
    /// Probe clock rate error in ppm (positive: the probe runs fast).
    pub drift_ppm: f64,
    /// Alignment uncertainty in ns (half the smallest RTT + RMS residual).
    pub uncertainty_ns: f64,
    /// Smallest round trip among the exchanges in use, in ns.
    pub min_rtt_ns: i64,
    /// RMS residual of the fit, in ns.
    pub residual_rms_ns: f64,
    /// Exchanges the fit uses.
    pub exchanges_used: usize,
    /// Exchanges accepted since the start.
    pub exchanges_total: u64,
}

#[derive(Debug, Clone, Copy)]
struct Fit {
    probe_ref_ns: i64,
    host_ref_ns: i64,
    /// Host ns per probe ns.
    slope: f64,
    estimate: AlignmentEstimate,
}

/// Shortest probe-time span over which drift is fitted; below it the
/// previous (or nominal) rate is kept and only the offset is fitted.
const MIN_DRIFT_SPAN_NS: f64 = 2.0e9;

/// Windowed offset + drift fit over min-RTT sync exchanges.
#[derive(Debug, Clone)]
pub struct ClockAligner {
    window: VecDeque<SyncExchange>,
    capacity: usize,
    fit: Option<Fit>,
    accepted: u64,
    rejected: u64,
}

impl Default for ClockAligner {
    fn default() -> Self {
        Self::new(120)
    }
}

impl ClockAligner {
    /// An aligner keeping the last `capacity` exchanges (≈ seconds at 1 Hz).
    pub fn new(capacity: usize) -> Self {
        Self {
            window: VecDeque::with_capacity(capacity.max(2)),
            capacity: capacity.max(2),
            fit: None,
            accepted: 0,
            rejected: 0,
        }
    }

    /// Adds an exchange and refits. Implausible exchanges (negative round
    /// trip, reply before request) are counted and ignored. A probe clock
    /// that went backwards (probe reboot) restarts the window.
    pub fn add(&mut self, exchange: SyncExchange) -> bool {
        if !exchange.is_plausible() {
            self.rejected += 1;
            return false;
        }
        if let Some(last) = self.window.back() {
            if exchange.probe_rx_us < last.probe_tx_us {
                self.window.clear();
                self.fit = None;
            }
        }
        if self.window.len() == self.capacity {
            self.window.pop_front();
        }
        self.window.push_back(exchange);
        self.accepted += 1;
        self.refit();
        true
    }

    /// Exchanges rejected as implausible.
    pub fn rejected(&self) -> u64 {
        self.rejected
    }

    /// The current estimate, once at least one exchange was accepted.
    pub fn estimate(&self) -> Option<AlignmentEstimate> {
        self.fit.map(|f| f.estimate)
    }

    /// Maps a probe time to host Unix ns, once at least one exchange was accepted.
    pub fn to_host_ns(&self, probe_us: u64) -> Option<i64> {
        let fit = self.fit.as_ref()?;
        let dx = (probe_us as i64 * 1000 - fit.probe_ref_ns) as f64;
        Some(fit.host_ref_ns + (dx * fit.slope).round() as i64)
    }

    fn refit(&mut self) {
        let mut chosen: Vec<SyncExchange> = self.window.iter().copied().collect();
        chosen.sort_by_key(|e| e.round_trip_ns());
        // The faster half, and of it only those within twice the fastest
        // round trip (+50 µs): a stalled exchange never enters the fit,
        // however few there are.
        let min_rtt = chosen[0].round_trip_ns();
        let limit = 2 * min_rtt + 50_000;
        let keep = chosen.len().div_ceil(2).max(2.min(chosen.len())).min(
            chosen
                .iter()
                .take_while(|e| e.round_trip_ns() <= limit)
                .count(),
        );
        chosen.truncate(keep);

        // Reference: the newest chosen exchange, so extrapolation starts near now.
        let newest = chosen
            .iter()
            .max_by_key(|e| e.probe_rx_us)
            .copied()
            .unwrap_or(chosen[0]);
        let probe_ref = newest.probe_mid_ns();
        let host_ref = newest.host_mid_ns();
        let points: Vec<(f64, f64)> = chosen
            .iter()
            .map(|e| {
                (
                    (e.probe_mid_ns() - probe_ref) as f64,
                    (e.host_mid_ns() - host_ref) as f64,
                )
            })
            .collect();
        let n = points.len() as f64;
        let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
        let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
        let span = points.iter().map(|p| p.0).fold(f64::MIN, f64::max)
            - points.iter().map(|p| p.0).fold(f64::MAX, f64::min);
        let slope = if span >= MIN_DRIFT_SPAN_NS && sxx > 0.0 {
            points
                .iter()
                .map(|p| (p.0 - mean_x) * (p.1 - mean_y))
                .sum::<f64>()
                / sxx
        } else {
            self.fit.map_or(1.0, |f| f.slope)
        };
        let intercept = mean_y - slope * mean_x;
        let residual_rms = (points
            .iter()
            .map(|p| (p.1 - intercept - slope * p.0).powi(2))
            .sum::<f64>()
            / n)
            .sqrt();
        let host_ref_ns = host_ref + intercept.round() as i64;
        self.fit = Some(Fit {
            probe_ref_ns: probe_ref,
            host_ref_ns,
            slope,
            estimate: AlignmentEstimate {
                offset_ns: host_ref_ns - probe_ref,
                drift_ppm: (1.0 / slope - 1.0) * 1e6,
                uncertainty_ns: min_rtt as f64 / 2.0 + residual_rms,
                min_rtt_ns: min_rtt,
                residual_rms_ns: residual_rms,
                exchanges_used: chosen.len(),
                exchanges_total: self.accepted,
            },
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const EPOCH_NS: i64 = 1_763_700_000_000_000_000;

    /// A probe whose clock reads `(host − start) × (1 + drift)` µs, answering
    /// after a one-way delay of `base + jitter` each way.
    fn exchange(
        host_send_ns: i64,
        drift_ppm: f64,
        up_ns: i64,
        down_ns: i64,
        turn_us: u64,
    ) -> SyncExchange {
        let probe_us =
            |host_ns: i64| ((host_ns - EPOCH_NS) as f64 * (1.0 + drift_ppm * 1e-6) / 1000.0) as u64;
        let rx = probe_us(host_send_ns + up_ns);
        SyncExchange {
            host_send_ns,
            probe_rx_us: rx,
            probe_tx_us: rx + turn_us,
            host_recv_ns: host_send_ns + up_ns + turn_us as i64 * 1000 + down_ns,
        }
    }

    fn true_host_ns(probe_us: u64, drift_ppm: f64) -> i64 {
        EPOCH_NS + (probe_us as f64 * 1000.0 / (1.0 + drift_ppm * 1e-6)) as i64
    }

    #[test]
    fn recovers_offset_and_drift_within_a_few_microseconds_under_jitter() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let drift = 120.0;
        let mut aligner = ClockAligner::default();
        for i in 0..90 {
            let send = EPOCH_NS + 5_000_000_000 + i * 1_000_000_000;
            // 50–90 µs each way, with an occasional 20 ms stall.
            let stall = if rng.gen_bool(0.1) { 20_000_000 } else { 0 };
            let up = rng.gen_range(50_000..90_000) + stall;
            let down = rng.gen_range(50_000..90_000);
            aligner.add(exchange(send, drift, up, down, rng.gen_range(5..40)));
        }
        let est = aligner.estimate().unwrap();
        assert!(
            (est.drift_ppm - drift).abs() < 1.0,
            "drift {}",
            est.drift_ppm
        );
        assert!(
            est.uncertainty_ns < 100_000.0,
            "uncertainty {}",
            est.uncertainty_ns
        );
        for probe_us in [10_000_000u64, 60_000_000, 95_000_000] {
            let err = aligner.to_host_ns(probe_us).unwrap() - true_host_ns(probe_us, drift);
            assert!(err.abs() < 40_000, "error {err} ns at {probe_us} µs");
            assert!(
                (err.abs() as f64) < est.uncertainty_ns,
                "error beyond stated uncertainty"
            );
        }
    }

    #[test]
    fn stalled_exchanges_are_not_used() {
        let mut aligner = ClockAligner::default();
        for i in 0..10 {
            let send = EPOCH_NS + i * 1_000_000_000;
            // Every other exchange has a 30 ms one-sided stall.
            let up = if i % 2 == 0 { 30_000_000 } else { 100_000 };
            aligner.add(exchange(send, 0.0, up, 100_000, 10));
        }
        let est = aligner.estimate().unwrap();
        assert_eq!(est.min_rtt_ns, 200_000);
        assert!(est.uncertainty_ns < 150_000.0);
        let err = aligner.to_host_ns(5_000_000).unwrap() - true_host_ns(5_000_000, 0.0);
        assert!(err.abs() < 1_000, "error {err}");
    }

    #[test]
    fn implausible_exchanges_are_rejected() {
        let mut aligner = ClockAligner::default();
        let mut bad = exchange(EPOCH_NS, 0.0, 1000, 1000, 0);
        bad.host_recv_ns = bad.host_send_ns - 1;
        assert!(!aligner.add(bad));
        assert_eq!(aligner.rejected(), 1);
        assert!(aligner.to_host_ns(0).is_none());
    }

    #[test]
    fn probe_reboot_restarts_the_fit() {
        let mut aligner = ClockAligner::default();
        for i in 0..5 {
            aligner.add(exchange(
                EPOCH_NS + 100_000_000_000 + i * 1_000_000_000,
                0.0,
                1000,
                1000,
                1,
            ));
        }
        // The probe now counts from zero again: probe time 0 ↔ host EPOCH + 200 s.
        let send = EPOCH_NS + 200_000_000_000;
        aligner.add(SyncExchange {
            host_send_ns: send,
            probe_rx_us: 1,
            probe_tx_us: 2,
            host_recv_ns: send + 3_000,
        });
        assert_eq!(aligner.estimate().unwrap().exchanges_used, 1);
        let mapped = aligner.to_host_ns(1).unwrap();
        assert!((mapped - send).abs() < 5_000);
    }
}
