//! Probe samples of the simulated device: bus power from its activity, enclosure
//! temperature from the first-order RC model of the probe simulator (contract 2).

use crate::model::DeviceModel;
use crate::sim::Trace;
use rand::{Rng, SeedableRng};

/// One probe sample (time relative to the run start).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// ns since run start (may be negative: the probe starts before the first file).
    pub t_ns: i64,
    /// Bus voltage, V.
    pub vbus_v: f64,
    /// Current, A.
    pub current_a: f64,
    /// Power, W.
    pub power_w: f64,
    /// Accumulated energy, J.
    pub energy_j: f64,
    /// Enclosure temperature, °C.
    pub enclosure_temp_c: f64,
    /// INA228 die temperature, °C.
    pub die_temp_c: f64,
}

/// Calls `emit` for samples at `rate_hz` from `lead_s` before the run to `tail_s` after.
/// Noise: power ±1.5 %, temperature ±0.05 °C, seeded.
pub fn samples(
    dev: &DeviceModel,
    trace: &Trace,
    rate_hz: f64,
    lead_s: f64,
    tail_s: f64,
    seed: u64,
    mut emit: impl FnMut(&Sample),
) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_cafe);
    let dt = 1.0 / rate_hz;
    let n = (((trace.end_ns as f64 * 1e-9) + lead_s + tail_s) * rate_hz).ceil() as u64;
    let t0 = -(lead_s * 1e9) as i64;
    let mut temp = dev.start_temp_c();
    let mut energy = 0.0;
    let k = 1.0 - (-dt / dev.tau_s).exp();
    let mut li = 0usize;
    for i in 0..n {
        let t_ns = t0 + (i as f64 * dt * 1e9) as i64;
        while li + 1 < trace.load.len() && trace.load[li + 1].t_ns <= t_ns {
            li += 1;
        }
        let load = if t_ns < 0 { 0.0 } else { trace.load[li].load };
        // The port in force now (a stage may have changed its advertisement).
        let dev = &dev.with_port_current(trace.port_current_at(t_ns));
        // The enclosure heats from what reaches the drive; the probe, at the port, measures
        // that and the loss of a cable beyond it.
        let p_drive = dev.delivered_w(load);
        let mut p_true = dev.probe_w(load);
        let mut v_true = if dev.has_port() {
            dev.port_draw(dev.power_w(load)).vbus_v
        } else {
            dev.vbus_v * (1.0 - 0.004 * load)
        };
        // The port's VBUS collapsing (a stage's `vbus_collapse`), seen at the probe: the
        // same current at the lower voltage for its few milliseconds.
        if let Some(v) = trace.vbus_collapse_at(t_ns) {
            p_true *= v / v_true;
            v_true = v;
        }
        temp += (dev.equilibrium_c(p_drive) - temp) * k;
        energy += p_true * dt;
        let power = p_true * (1.0 + rng.gen_range(-0.015..=0.015));
        let vbus = v_true + rng.gen_range(-0.002..=0.002);
        emit(&Sample {
            t_ns,
            vbus_v: vbus,
            current_a: power / vbus,
            power_w: power,
            energy_j: energy,
            enclosure_temp_c: temp + rng.gen_range(-0.05..=0.05),
            die_temp_c: dev.ambient_c + 3.0 + 0.2 * p_true + rng.gen_range(-0.05..=0.05),
        });
    }
}
