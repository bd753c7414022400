//! Energy figures, defined once for the whole project (the probe's correlation, the
//! analysis, the summary and the report all call these; see docs/methodology.md).
//!
//! - The energy at an instant is the INA228 ENERGY accumulator interpolated linearly
//!   between the instants at which its reading changed ([`energy_at`]); the host
//!   integrates nothing while the accumulator is there.
//! - A phase's energy is the sum of its files' energies (each file from its start to its
//!   end), so it adds up with the files' own figures and with the idle energy of the
//!   energy balance; J/GB and mean power divide it by the same files' bytes and
//!   seconds ([`phase_energy`]).

use serde::{Deserialize, Serialize};

/// Energy (J) at host time `t` from accumulator `steps` — (host ns, reading) at each
/// change of the reading, in time order — linear between steps; None outside them.
pub fn energy_at(steps: &[(i64, f64)], t: i64) -> Option<f64> {
    let (first, last) = (steps.first()?.0, steps.last()?.0);
    if t < first || t > last {
        return None;
    }
    let i = steps.partition_point(|&(ti, _)| ti <= t);
    let (t0, e0) = steps[i.max(1) - 1];
    match steps.get(i) {
        Some(&(t1, e1)) if t1 > t0 => Some(e0 + (e1 - e0) * (t - t0) as f64 / (t1 - t0) as f64),
        _ => Some(e0),
    }
}

/// Energy, J/GB and mean power of a group of files (one phase of one target).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseEnergy {
    /// Σ of the files' energies, J (None when no file has one).
    pub energy_j: Option<f64>,
    /// Energy per GB (10⁹ bytes) of the files that have an energy, J/GB.
    pub j_per_gb: Option<f64>,
    /// Energy / the same files' summed duration, W.
    pub mean_power_w: Option<f64>,
}

/// The energy figures of `files` — (start ns, end ns, bytes) — with `energy_between`
/// giving the energy of one file's span (None where the probe has no data).
pub fn phase_energy(
    files: impl IntoIterator<Item = (i64, i64, u64)>,
    energy_between: impl Fn(i64, i64) -> Option<f64>,
) -> PhaseEnergy {
    let (mut joules, mut bytes, mut ns, mut any) = (0.0, 0u64, 0i64, false);
    for (start, end, b) in files {
        if let Some(e) = energy_between(start, end) {
            joules += e;
            bytes += b;
            ns += end - start;
            any = true;
        }
    }
    let energy = any.then_some(joules);
    PhaseEnergy {
        energy_j: energy,
        j_per_gb: energy
            .filter(|_| bytes > 0)
            .map(|e| e / (bytes as f64 / 1e9)),
        mean_power_w: energy.filter(|_| ns > 0).map(|e| e / (ns as f64 / 1e9)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energy_is_linear_between_accumulator_changes_and_unknown_outside() {
        let steps = [(0, 0.0), (10, 1.0), (30, 5.0)];
        assert_eq!(energy_at(&steps, 5), Some(0.5));
        assert_eq!(energy_at(&steps, 20), Some(3.0));
        assert_eq!(energy_at(&steps, 30), Some(5.0));
        assert_eq!(energy_at(&steps, 31), None);
        assert_eq!(energy_at(&steps, -1), None);
        assert_eq!(energy_at(&[], 0), None);
    }

    #[test]
    fn phase_energy_sums_the_files_and_divides_by_their_bytes_and_time() {
        let files = [
            (0, 1_000_000_000, 1_000_000_000),
            (2_000_000_000, 3_000_000_000, 500_000_000),
            (5_000_000_000, 6_000_000_000, 7),
        ];
        // The third file has no probe data: it counts in none of the three figures.
        let e = phase_energy(files, |a, b| {
            (a < 4_000_000_000).then_some((b - a) as f64 * 3e-9)
        });
        assert_eq!(e.energy_j, Some(6.0));
        assert_eq!(e.j_per_gb, Some(4.0));
        assert_eq!(e.mean_power_w, Some(3.0));
        assert_eq!(phase_energy(files, |_, _| None), PhaseEnergy::default());
    }
}
