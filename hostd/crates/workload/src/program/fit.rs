//! The recovery fit: bytes recovered after an idle time `t`,
//! `recovered = C·(1 − e^(−t/τ))`, by weighted least squares.
//!
//! For each τ on a log grid the best C is closed form; τ is where χ² is
//! least, and its interval is where χ² stays within 1 of that (χ² scaled by
//! the reduced χ² when the points scatter more than their stated
//! uncertainties). A τ whose interval reaches the end of the grid is not
//! determined: the fit says there is not enough data.

/// One point: an idle time and the bytes then written at the fast rate.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    /// Idle time, s.
    pub t_s: f64,
    /// Bytes recovered.
    pub bytes: f64,
    /// 1σ uncertainty of `bytes`.
    pub sigma: f64,
}

/// A fit that carries (the record type of `summary.json`).
use hostd_records::programs::RecoveryFit;

/// Fits the points; Err says why the data does not carry a fit.
pub fn fit(points: &[Point]) -> Result<RecoveryFit, String> {
    let pts: Vec<Point> = points
        .iter()
        .copied()
        .filter(|p| p.t_s > 0.0 && p.bytes.is_finite() && p.sigma > 0.0)
        .collect();
    let mut ts: Vec<f64> = pts.iter().map(|p| p.t_s).collect();
    ts.sort_by(f64::total_cmp);
    ts.dedup();
    if pts.len() < 3 || ts.len() < 3 {
        return Err(format!(
            "{} pause(s) with a measured recovery; a fit of C and τ needs at least 3 different pauses",
            ts.len()
        ));
    }
    let (tmin, tmax) = (ts[0], ts[ts.len() - 1]);
    let (lo, hi) = ((tmin / 20.0).ln(), (tmax * 20.0).ln());
    const N: usize = 600;
    let grid: Vec<f64> = (0..=N)
        .map(|i| (lo + (hi - lo) * i as f64 / N as f64).exp())
        .collect();
    let eval = |tau: f64| -> (f64, f64, f64) {
        let (mut syg, mut sgg) = (0.0, 0.0);
        for p in &pts {
            let w = 1.0 / (p.sigma * p.sigma);
            let g = 1.0 - (-p.t_s / tau).exp();
            syg += w * p.bytes * g;
            sgg += w * g * g;
        }
        let c = syg / sgg;
        let chi2: f64 = pts
            .iter()
            .map(|p| {
                let g = 1.0 - (-p.t_s / tau).exp();
                ((p.bytes - c * g) / p.sigma).powi(2)
            })
            .sum();
        (c, chi2, sgg)
    };
    let evals: Vec<(f64, f64, f64)> = grid.iter().map(|&t| eval(t)).collect();
    let best = (0..evals.len())
        .min_by(|&a, &b| evals[a].1.total_cmp(&evals[b].1))
        .expect("grid");
    let (c, chi2_min, sgg) = evals[best];
    let reduced = chi2_min / (pts.len() - 2) as f64;
    let scale = reduced.max(1.0);
    let within = |i: usize| evals[i].1 / scale <= chi2_min / scale + 1.0;
    let (mut a, mut b) = (best, best);
    while a > 0 && within(a - 1) {
        a -= 1;
    }
    while b < N && within(b + 1) {
        b += 1;
    }
    if a == 0 || b == N || c <= 0.0 {
        return Err(format!(
            "τ is not determined by pauses of {tmin:.3}–{tmax:.3} s (the recovered bytes do not bend within them)"
        ));
    }
    Ok(RecoveryFit {
        tau_s: grid[best],
        tau_low_s: grid[a],
        tau_high_s: grid[b],
        capacity_bytes: c,
        capacity_sigma: (scale / sgg).sqrt(),
        reduced_chi2: reduced,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(c: f64, tau: f64, ts: &[f64]) -> Vec<Point> {
        ts.iter()
            .map(|&t| Point {
                t_s: t,
                bytes: c * (1.0 - (-t / tau).exp()),
                sigma: c * 0.02,
            })
            .collect()
    }

    #[test]
    fn the_fit_finds_the_time_constant_of_an_exact_curve() {
        let f = fit(&curve(48e6, 3.0, &[1.0, 2.0, 4.0, 8.0])).unwrap();
        assert!((f.tau_s - 3.0).abs() < 0.05, "{f:?}");
        assert!(f.tau_low_s <= 3.0 && 3.0 <= f.tau_high_s, "{f:?}");
        assert!((f.capacity_bytes - 48e6).abs() < 0.5e6, "{f:?}");
    }

    #[test]
    fn pauses_all_long_after_recovery_do_not_carry_a_fit() {
        // Every pause ≫ τ: all points at C, τ could be anything shorter.
        let e = fit(&curve(48e6, 0.1, &[5.0, 15.0, 30.0, 60.0])).unwrap_err();
        assert!(e.contains("not determined"), "{e}");
    }

    #[test]
    fn two_pauses_are_not_enough() {
        let e = fit(&curve(48e6, 3.0, &[1.0, 2.0])).unwrap_err();
        assert!(e.contains("at least 3"), "{e}");
    }
}
