//! The figures of the comparison's bar charts, per run and phase, each with its 95 %
//! interval or the reason it is missing. Every figure is the analysis' headline figure as
//! it is (the rates, the first drop with its cause, the SLC cache, the energy per GB, the
//! power and the enclosure); MB/s per W is 1000 / (J/GB) (docs/methodology.md, "Comparing
//! runs").

use super::CompareRun;
use hostd_records::cause::Cause;
use hostd_records::headline::{Figure, SeriesHeadline};
use hostd_records::published::Kind;
use serde::Serialize;
use std::collections::BTreeMap;

/// One bar chart's figure: its key in [`PhaseFigures::figures`], its title and its kind
/// (which writes it as every output does).
pub struct Metric {
    /// Key.
    pub key: &'static str,
    /// Chart title.
    pub title: &'static str,
    /// How the figure is written.
    pub kind: Kind,
    /// A figure of the first drop: its bar says the drop's cause.
    pub of_drop: bool,
}

/// A metric of the page.
const fn metric(key: &'static str, title: &'static str, kind: Kind, of_drop: bool) -> Metric {
    Metric {
        key,
        title,
        kind,
        of_drop,
    }
}

/// The bar charts, in the page's order.
pub const METRICS: [Metric; 12] = [
    metric("average_bps", "average rate", Kind::Rate, false),
    metric(
        "sustained_bps",
        "sustained rate (last third)",
        Kind::Rate,
        false,
    ),
    metric("drop_bytes", "data before the first drop", Kind::Data, true),
    metric("drop_s", "time to the first drop", Kind::Seconds, true),
    metric(
        "after_drop_bps",
        "rate after the first drop",
        Kind::Rate,
        true,
    ),
    metric("slc_cache_bytes", "SLC cache size", Kind::Data, false),
    metric("post_cache_bps", "rate after the cache", Kind::Rate, false),
    metric("j_per_gb", "energy per GB", Kind::JPerGb, false),
    metric("mean_power_w", "mean bus power", Kind::Power, false),
    metric(
        "peak_power_w",
        "peak bus power (1 s mean)",
        Kind::Power,
        false,
    ),
    metric(
        "enclosure_max_c",
        "enclosure maximum (1 s mean)",
        Kind::Temperature,
        false,
    ),
    metric("mbps_per_w", "MB/s per W", Kind::MbpsPerW, false),
];

/// The figures of one run's subject in one phase, keyed as [`METRICS`].
#[derive(Debug, Clone, Serialize)]
pub struct PhaseFigures {
    /// Phase.
    pub phase: String,
    /// Figure by key.
    pub figures: BTreeMap<String, Figure>,
    /// The first drop's cause and its confidence, when there is a drop.
    pub drop_cause: Option<DropCause>,
}

/// The cause of a phase's first drop, as the analysis' headline gives it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DropCause {
    /// The cause.
    pub cause: Cause,
    /// Its confidence, 0–1.
    pub confidence: f64,
}

impl DropCause {
    /// "thermal (confidence 0.80)", as the headline's line writes it.
    pub fn text(&self) -> String {
        self.cause.with_confidence(self.confidence)
    }
}

/// The figures of `r`'s subject in `phase`.
pub fn of(r: &CompareRun, phase: &str) -> PhaseFigures {
    let subject = r.subject().unwrap_or("");
    let headline = r
        .analysis
        .headlines
        .series
        .iter()
        .find(|s| s.target == subject && s.phase == phase);
    let figures = METRICS
        .iter()
        .map(|m| {
            let f = headline.map_or_else(
                || Figure::absent("no headline figures for this target and phase"),
                |h| pick(h, m.key),
            );
            (m.key.to_string(), f)
        })
        .collect();
    PhaseFigures {
        phase: phase.to_string(),
        figures,
        drop_cause: headline.and_then(|h| {
            h.drop_cause.map(|cause| DropCause {
                cause,
                confidence: h.drop_confidence.unwrap_or(0.0),
            })
        }),
    }
}

/// The headline's figure `key` (MB/s per W from its energy per GB).
fn pick(h: &SeriesHeadline, key: &str) -> Figure {
    match key {
        "average_bps" => h.average_bps.clone(),
        "sustained_bps" => h.sustained_bps.clone(),
        "drop_bytes" => h.drop_bytes.clone(),
        "drop_s" => h.drop_s.clone(),
        "after_drop_bps" => h.after_drop_bps.clone(),
        "slc_cache_bytes" => h.slc_cache_bytes.clone(),
        "post_cache_bps" => h.post_cache_bps.clone(),
        "j_per_gb" => h.j_per_gb.clone(),
        "mean_power_w" => h.mean_power_w.clone(),
        "peak_power_w" => h.peak_power_w.clone(),
        "enclosure_max_c" => h.enclosure_max_c.clone(),
        "mbps_per_w" => mbps_per_w(&h.j_per_gb),
        other => Figure::absent(format!("no figure {other}")),
    }
}

/// MB/s per W of an energy per GB: 1 GB at J joules is 1000 MB / J seconds·W, so 1000 /
/// (J/GB), its interval the inverse of that one.
pub fn mbps_per_w(j_per_gb: &Figure) -> Figure {
    match j_per_gb {
        Figure::Value { value, low, high } if *low > 0.0 => {
            Figure::value(1e3 / value, 1e3 / high, 1e3 / low)
        }
        Figure::Value { .. } => Figure::absent("the energy per GB's interval reaches 0"),
        absent => absent.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MB/s per W is 1000 / (J/GB) with the interval turned over; an energy interval that
    /// reaches 0 gives none.
    #[test]
    fn throughput_per_watt_is_the_inverse_of_the_energy_per_gb() {
        let (v, lo, hi) = mbps_per_w(&Figure::value(5.0, 4.0, 8.0))
            .interval()
            .unwrap();
        assert_eq!((v, lo, hi), (200.0, 125.0, 250.0));
        assert!(mbps_per_w(&Figure::value(5.0, 0.0, 8.0)).get().is_none());
        assert_eq!(
            mbps_per_w(&Figure::absent("no probe in this run")),
            Figure::absent("no probe in this run")
        );
    }
}
