//! Aligned physical samples, the probe crate's output.

use serde::Serialize;

/// One probe sample in physical units on the host's time axis. Channels the
/// probe did not measure for this sample are `None`. `energy_j` and
/// `charge_c` are the accumulators unwrapped since the link started
/// (continuous across 40-bit wraps), held from the latest reading.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProbeSample {
    /// Host Unix time in nanoseconds (aligned).
    pub time_ns: i64,
    /// Probe sequence number.
    pub seq: u64,
    /// Probe clock in microseconds.
    pub probe_time_us: u64,
    /// Bus voltage in volts.
    pub vbus_v: Option<f64>,
    /// Current in amperes.
    pub current_a: Option<f64>,
    /// Bus power in watts.
    pub power_w: Option<f64>,
    /// Energy since the first accumulator reading, in joules.
    pub energy_j: Option<f64>,
    /// Charge since the first accumulator reading, in coulombs.
    pub charge_c: Option<f64>,
    /// INA228 die temperature in °C.
    pub die_temp_c: Option<f64>,
    /// Enclosure temperature (first sensor) in °C, held from the latest reading.
    pub enclosure_temp_c: Option<f64>,
}

/// CSV header of `probe.csv` (contract 4 of the run directory).
pub const PROBE_CSV_HEADER: &str =
    "time_ns,seq,vbus_v,current_a,power_w,energy_j,charge_c,die_temp_c,enclosure_temp_c";

impl ProbeSample {
    /// Appends this sample as one `probe.csv` line (with newline) to `out`.
    pub fn write_csv_line(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(out, "{},{}", self.time_ns, self.seq);
        for value in [
            self.vbus_v,
            self.current_a,
            self.power_w,
            self.energy_j,
            self.charge_c,
            self.die_temp_c,
            self.enclosure_temp_c,
        ] {
            match value {
                Some(v) => {
                    let _ = write!(out, ",{v}");
                }
                None => out.push(','),
            }
        }
        out.push('\n');
    }
}
