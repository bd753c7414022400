//! Raw INA228 register values → physical units, from the probe's
//! `DeviceInfo` (TI INA228 datasheet, section 7.6).

use crate::pb;

/// VBUS LSB in volts (195.3125 µV).
pub const VBUS_LSB_V: f64 = 195.3125e-6;
/// DIETEMP LSB in °C (7.8125 m°C).
pub const DIETEMP_LSB_C: f64 = 7.8125e-3;
/// VSHUNT LSB in volts with ADCRANGE = 0 (±163.84 mV).
pub const VSHUNT_LSB_RANGE0_V: f64 = 312.5e-9;
/// VSHUNT LSB in volts with ADCRANGE = 1 (±40.96 mV).
pub const VSHUNT_LSB_RANGE1_V: f64 = 78.125e-9;
/// Width of the ENERGY and CHARGE accumulators.
pub const ACCUMULATOR_BITS: u32 = 40;
const ACCUMULATOR_MASK: u64 = (1 << ACCUMULATOR_BITS) - 1;

/// Conversion factors of one probe, taken from its `DeviceInfo`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// CURRENT_LSB in amperes per bit.
    pub current_lsb_a: f64,
    /// ADCRANGE (0 or 1).
    pub adc_range: u32,
    /// The shunt in ohms (0 when the probe did not say), for current from VSHUNT.
    pub shunt_ohm: f64,
}

impl Calibration {
    /// Calibration from the probe's device info; `None` if the current LSB
    /// is not a positive finite number (a probe that cannot be converted).
    pub fn from_info(info: &pb::DeviceInfo) -> Option<Self> {
        let lsb = info.current_lsb_a as f64;
        (lsb.is_finite() && lsb > 0.0).then_some(Self {
            current_lsb_a: lsb,
            adc_range: info.adc_range,
            shunt_ohm: info.shunt_micro_ohm as f64 * 1e-6,
        })
    }

    /// Bus voltage in volts.
    pub fn vbus_v(&self, raw: i32) -> f64 {
        raw as f64 * VBUS_LSB_V
    }

    /// Shunt voltage in volts.
    pub fn vshunt_v(&self, raw: i32) -> f64 {
        let lsb = if self.adc_range == 0 {
            VSHUNT_LSB_RANGE0_V
        } else {
            VSHUNT_LSB_RANGE1_V
        };
        raw as f64 * lsb
    }

    /// Current in amperes from a VSHUNT reading and the shunt (v2 default
    /// channels); `None` when the probe gave no shunt value.
    pub fn current_from_vshunt_a(&self, raw: i32) -> Option<f64> {
        (self.shunt_ohm > 0.0).then(|| self.vshunt_v(raw) / self.shunt_ohm)
    }

    /// Current in amperes.
    pub fn current_a(&self, raw: i32) -> f64 {
        raw as f64 * self.current_lsb_a
    }

    /// Power in watts (POWER LSB = 3.2 × CURRENT_LSB).
    pub fn power_w(&self, raw: u32) -> f64 {
        raw as f64 * 3.2 * self.current_lsb_a
    }

    /// Joules per ENERGY count (16 × 3.2 × CURRENT_LSB).
    pub fn energy_lsb_j(&self) -> f64 {
        16.0 * 3.2 * self.current_lsb_a
    }

    /// Energy in joules of an ENERGY count (or a count difference).
    pub fn energy_j(&self, raw: u64) -> f64 {
        raw as f64 * self.energy_lsb_j()
    }

    /// Charge in coulombs of a CHARGE count (CHARGE LSB = CURRENT_LSB).
    pub fn charge_c(&self, raw: i64) -> f64 {
        raw as f64 * self.current_lsb_a
    }

    /// Die temperature in °C.
    pub fn die_temp_c(&self, raw: i32) -> f64 {
        raw as f64 * DIETEMP_LSB_C
    }
}

/// CHARGE register bits (40-bit two's complement) as a signed count.
pub fn charge_from_raw(raw: u64) -> i64 {
    ((raw << (64 - ACCUMULATOR_BITS)) as i64) >> (64 - ACCUMULATOR_BITS)
}

/// DIETEMP register bits (16-bit two's complement) as a signed count.
pub fn dietemp_from_raw(raw: u64) -> i32 {
    i32::from(raw as u16 as i16)
}

/// Counts the 40-bit ENERGY accumulator advanced from `earlier` to `later`,
/// correct across one wrap of the register.
pub fn energy_delta(earlier: u64, later: u64) -> u64 {
    later.wrapping_sub(earlier) & ACCUMULATOR_MASK
}

/// Counts the 40-bit two's-complement CHARGE accumulator moved from
/// `earlier` to `later` (signed), correct across one wrap.
pub fn charge_delta(earlier: i64, later: i64) -> i64 {
    let diff = (later.wrapping_sub(earlier) as u64) & ACCUMULATOR_MASK;
    // Sign-extend from bit 39.
    ((diff << (64 - ACCUMULATOR_BITS)) as i64) >> (64 - ACCUMULATOR_BITS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cal() -> Calibration {
        // 10 A max over 2^19 counts.
        Calibration {
            current_lsb_a: 10.0 / 524_288.0,
            adc_range: 0,
            shunt_ohm: 0.005,
        }
    }

    #[test]
    fn converts_datasheet_examples() {
        let c = cal();
        // 5.12 V = 26214.4 counts → 26214 counts ≈ 5.1199 V.
        assert!((c.vbus_v(26_214) - 5.119_921_875).abs() < 1e-12);
        assert!((c.die_temp_c(3_200) - 25.0).abs() < 1e-12);
        assert!((c.current_a(52_429) - 1.000_003).abs() < 1e-5);
        // Power LSB = 3.2 × current LSB.
        assert!((c.power_w(1) - 3.2 * c.current_lsb_a).abs() < 1e-15);
        // Energy LSB = 16 × power LSB.
        assert!((c.energy_j(1) - 16.0 * c.power_w(1)).abs() < 1e-15);
        assert!((c.charge_c(-2) + 2.0 * c.current_lsb_a).abs() < 1e-15);
        assert!((c.vshunt_v(1000) - 312.5e-6).abs() < 1e-15);
    }

    #[test]
    fn energy_delta_survives_a_wrap() {
        let top = (1u64 << 40) - 10;
        assert_eq!(energy_delta(top, 5), 15);
        assert_eq!(energy_delta(100, 250), 150);
    }

    #[test]
    fn charge_delta_is_signed_and_wrap_safe() {
        let max = (1i64 << 39) - 3; // near the positive end of 40-bit range
        let wrapped = -(1i64 << 39) + 4; // after wrapping to the negative end
        assert_eq!(charge_delta(max, wrapped), 7);
        assert_eq!(charge_delta(10, -5), -15);
    }

    #[test]
    fn slow_register_bits_sign_extend() {
        assert_eq!(charge_from_raw(0x80_0000_0000), -(1i64 << 39));
        assert_eq!(charge_from_raw(0x7F_FFFF_FFFF), (1i64 << 39) - 1);
        assert_eq!(dietemp_from_raw(0x8000), -32768);
        assert_eq!(dietemp_from_raw(4480), 4480);
        // 6 mV over 5 mΩ is 1.2 A.
        assert!((cal().current_from_vshunt_a(19_200).unwrap() - 1.2).abs() < 1e-12);
    }

    #[test]
    fn calibration_rejects_a_zero_lsb() {
        let info = pb::DeviceInfo::default();
        assert!(Calibration::from_info(&info).is_none());
    }
}
