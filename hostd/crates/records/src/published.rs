//! How every published figure is written: one [`Kind`] per kind of figure (a rate, a
//! position in the data written, a time, J/GB, a power, a temperature, …), each with one
//! unit rule and one rounding. The terminal, `report.html`, the comparison page and the
//! charts' CSV files all write a figure through its kind, so that it reads the same
//! everywhere (docs/methodology.md, "Output shape").

/// A unit a figure is written in: its name, its size in the figure's base unit (bytes/s,
/// bytes, s, J/GB, W, °C, …) and the decimals it is written with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    /// Name written after the number, e.g. "GB/s".
    pub name: &'static str,
    /// Base units in one of this unit (1e9 for GB/s).
    pub per: f64,
    /// Decimals written.
    pub decimals: usize,
}

impl Unit {
    /// `value` (base units) in this unit, rounded, without the unit's name: "0.77".
    pub fn num(self, value: f64) -> String {
        format!("{:.*}", self.decimals, value / self.per)
    }

    /// `value` (base units) as written, in this unit: the number [`Unit::num`] writes, read
    /// back (what a reader of the figure gets; a chart's data file holds it).
    pub fn rounded(self, value: f64) -> f64 {
        self.num(value).parse().unwrap_or(f64::NAN)
    }

    /// `value` (base units) as written in `self`, expressed in `other` (a chart's axis):
    /// 23.8 MB/s on a GB/s axis is 0.0238, not 0.02.
    pub fn rounded_in(self, value: f64, other: Unit) -> f64 {
        let v = self.rounded(value);
        if other.per >= self.per {
            v / (other.per / self.per)
        } else {
            v * (self.per / other.per)
        }
    }

    /// The decimals a number written in `self` takes in `other` (a chart's axis), so
    /// that it reads with the digits it was written with: 23.8 MB/s is 0.0238 GB/s.
    pub fn decimals_in(self, other: Unit) -> usize {
        let shift = (other.per / self.per).log10().round() as i64;
        (self.decimals as i64 + shift).max(0) as usize
    }

    /// "0.77 GB/s".
    pub fn text(self, value: f64) -> String {
        format!("{} {}", self.num(value), self.name)
    }
}

/// The kinds of published figures, each written one way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A rate, bytes/s: GB/s with 2 decimals from 0.1 GB/s up, MB/s with 1 below (a slow
    /// device's 24 → 12 MB/s would otherwise read 0.02 → 0.01 GB/s).
    Rate,
    /// An amount of data or a position in it, bytes: GB with 1 decimal from 1 GB up, MB
    /// below, kB below 1 MB, bytes below 1 kB.
    Data,
    /// A time, s: 1 decimal.
    Seconds,
    /// Energy per GB, J/GB: 2 decimals.
    JPerGb,
    /// Energy, J: 1 decimal.
    Energy,
    /// A power, W: 2 decimals.
    Power,
    /// A temperature, °C: 1 decimal.
    Temperature,
    /// A thermal resistance, °C/W: 2 decimals.
    ThermalResistance,
    /// Throughput per watt, MB/s per W: 1 decimal.
    MbpsPerW,
}

impl Kind {
    /// The unit `value` (base units) is written in.
    pub fn unit(self, value: f64) -> Unit {
        let u = |name, per, decimals| Unit {
            name,
            per,
            decimals,
        };
        let v = value.abs();
        match self {
            Kind::Rate if v >= 1e8 => u("GB/s", 1e9, 2),
            Kind::Rate => u("MB/s", 1e6, 1),
            Kind::Data if v >= 1e9 => u("GB", 1e9, 1),
            Kind::Data if v >= 1e6 => u("MB", 1e6, 0),
            Kind::Data if v >= 1e3 => u("kB", 1e3, 0),
            Kind::Data => u("B", 1.0, 0),
            Kind::Seconds => u("s", 1.0, 1),
            Kind::JPerGb => u("J/GB", 1.0, 2),
            Kind::Energy => u("J", 1.0, 1),
            Kind::Power => u("W", 1.0, 2),
            Kind::Temperature => u("°C", 1.0, 1),
            Kind::ThermalResistance => u("°C/W", 1.0, 2),
            Kind::MbpsPerW => u("MB/s per W", 1.0, 1),
        }
    }

    /// The number of `value` in its unit, without the unit's name: "0.77".
    pub fn num(self, value: f64) -> String {
        self.unit(value).num(value)
    }

    /// `value` with its unit: "0.77 GB/s", "600 MB", "8.20 W".
    pub fn text(self, value: f64) -> String {
        self.unit(value).text(value)
    }

    /// `value` with its interval in the value's unit: "0.77 GB/s [0.71–0.83]".
    pub fn interval(self, value: f64, low: f64, high: f64) -> String {
        let u = self.unit(value);
        format!("{} [{}–{}]", u.text(value), u.num(low), u.num(high))
    }

    /// The unit of a table column or a chart axis holding `values`: the unit of the
    /// largest, so that most read without their unit's name ([`Kind::cell`]).
    pub fn common_unit(self, values: impl IntoIterator<Item = f64>) -> Unit {
        let top = values
            .into_iter()
            .filter(|v| v.is_finite())
            .fold(0.0f64, |a, v| a.max(v.abs()));
        self.unit(top)
    }

    /// `value` in a table whose column is headed with `column`'s unit: the number alone
    /// where it is written in that unit, with its own unit's name where it is not, so
    /// that a cell reads as the figure does everywhere else ("23.8 MB/s" in a GB/s
    /// column, never "0.02").
    pub fn cell(self, value: f64, column: Unit) -> String {
        let own = self.unit(value);
        if own == column {
            own.num(value)
        } else {
            own.text(value)
        }
    }
}

/// A change or a slope with its sign, to `decimals`: "+1.264", "-0.001"; one that rounds to
/// zero reads "0.000", without a sign that would claim a direction it does not have.
pub fn signed(value: f64, decimals: usize) -> String {
    let text = format!("{value:+.decimals$}");
    if text[1..].chars().all(|c| c == '0' || c == '.') {
        text[1..].to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_writes_its_unit_and_rounding() {
        assert_eq!(Kind::Rate.text(2.31e9), "2.31 GB/s");
        assert_eq!(Kind::Rate.text(0.66e9), "0.66 GB/s");
        assert_eq!(Kind::Rate.text(23.8e6), "23.8 MB/s");
        assert_eq!(Kind::Data.text(23.94e9), "23.9 GB");
        assert_eq!(Kind::Data.text(0.6004e9), "600 MB");
        assert_eq!(Kind::Data.text(12_345.0), "12 kB");
        assert_eq!(Kind::Seconds.text(10.44), "10.4 s");
        assert_eq!(Kind::JPerGb.text(5.546), "5.55 J/GB");
        assert_eq!(Kind::Power.text(8.2016), "8.20 W");
        assert_eq!(Kind::Temperature.text(55.346), "55.3 °C");
        assert_eq!(
            Kind::Rate.interval(0.7712e9, 0.708e9, 0.834e9),
            "0.77 GB/s [0.71–0.83]"
        );
    }

    #[test]
    fn a_rounded_figure_is_the_number_written_in_any_unit() {
        let gbps = Kind::Rate.unit(1e9);
        let mbps = Kind::Rate.unit(1e7);
        assert_eq!(Kind::JPerGb.unit(5.546).rounded(5.546), 5.55);
        assert_eq!(mbps.rounded_in(23.84e6, gbps), 0.0238);
        assert_eq!(gbps.rounded_in(1.4417e9, gbps), 1.44);
        assert_eq!(gbps.rounded_in(1.4417e9, mbps), 1440.0);
        assert_eq!((mbps.decimals_in(gbps), gbps.decimals_in(mbps)), (4, 0));
    }

    #[test]
    fn a_signed_value_that_rounds_to_zero_has_no_sign() {
        assert_eq!(signed(1.2644, 3), "+1.264");
        assert_eq!(signed(-0.0012, 3), "-0.001");
        assert_eq!(signed(0.0004, 3), "0.000");
        assert_eq!(signed(-0.0004, 3), "0.000");
        assert_eq!(signed(-0.0, 1), "0.0");
        assert_eq!(signed(3.0, 0), "+3");
    }

    #[test]
    fn a_cell_names_its_unit_only_where_the_column_does_not() {
        let column = Kind::Rate.common_unit([2.3e9, 23.8e6]);
        assert_eq!(column.name, "GB/s");
        assert_eq!(Kind::Rate.cell(2.3e9, column), "2.30");
        assert_eq!(Kind::Rate.cell(23.8e6, column), "23.8 MB/s");
    }
}
