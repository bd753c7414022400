//! Headline figures reviewers publish for an external SSD and the enclosure's thermal fit
//! (`events.json` `headlines`, `summary.json` `extra.analysis.headlines`). Computed by
//! `hostd_analysis::headline`; every number is defined in docs/methodology.md "Headline
//! figures".

use crate::cause::{Cause, EventKind};
use crate::published::Kind;
use serde::{Deserialize, Serialize};

/// A figure with its 95 % interval, or the reason it could not be measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Figure {
    /// Measured.
    Value {
        /// Point estimate.
        value: f64,
        /// Lower end of the 95 % interval (or of the onset's 99.9 % interval for onsets).
        low: f64,
        /// Upper end.
        high: f64,
    },
    /// Not measurable from this run.
    Absent {
        /// Why, in words.
        absent: String,
    },
}

impl Figure {
    /// A figure the data cannot carry, with the reason.
    pub fn absent(reason: impl Into<String>) -> Figure {
        Figure::Absent {
            absent: reason.into(),
        }
    }

    /// A measured figure; the interval is widened to contain the value.
    pub fn value(value: f64, low: f64, high: f64) -> Figure {
        Figure::Value {
            value,
            low: low.min(value),
            high: high.max(value),
        }
    }

    /// The point estimate, if measured.
    pub fn get(&self) -> Option<f64> {
        match self {
            Figure::Value { value, .. } => Some(*value),
            Figure::Absent { .. } => None,
        }
    }

    /// (value, low, high), if measured.
    pub fn interval(&self) -> Option<(f64, f64, f64)> {
        match self {
            Figure::Value { value, low, high } => Some((*value, *low, *high)),
            Figure::Absent { .. } => None,
        }
    }

    /// The figure as every output writes it, through its [`Kind`]: "0.77 GB/s [0.71–0.83]",
    /// or "none (why)" when absent.
    pub fn text(&self, kind: Kind) -> String {
        match self {
            Figure::Value { value, low, high } => kind.interval(*value, *low, *high),
            Figure::Absent { absent } => format!("none ({absent})"),
        }
    }

    /// The reason it is absent, if it is.
    pub fn absent_reason(&self) -> Option<&str> {
        match self {
            Figure::Value { .. } => None,
            Figure::Absent { absent } => Some(absent),
        }
    }

    /// What a figure of an `events.json` written before it existed reads as.
    pub fn unrecorded() -> Figure {
        Figure::absent("not in this analysis (written by an older hostd)")
    }
}

/// Energy per GB on either side of one event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventEnergy {
    /// Kind of the event.
    pub kind: EventKind,
    /// Its cause.
    pub cause: Cause,
    /// Its onset, bytes of the series.
    pub onset_bytes: u64,
    /// J/GB of the files from the previous event (or the start) to this onset.
    pub j_per_gb_before: Figure,
    /// J/GB of the files from this onset to the next event (or the end).
    pub j_per_gb_after: Figure,
}

/// The headline figures of one target and phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesHeadline {
    /// Target.
    pub target: String,
    /// Phase.
    pub phase: String,
    /// Σ bytes / Σ file time of the whole phase (= `phases[].throughput_bps`), bytes/s.
    pub average_bps: Figure,
    /// Median per-file rate of the files starting in the last third of the bytes, bytes/s.
    pub sustained_bps: Figure,
    /// Bytes written before the first drop, whatever its cause (its onset interval).
    #[serde(default = "Figure::unrecorded")]
    pub drop_bytes: Figure,
    /// Seconds from the phase's first file to the first drop (its onset interval).
    #[serde(default = "Figure::unrecorded")]
    pub drop_s: Figure,
    /// Rate from the first drop (a ramp: from where it settles) to the next event or the
    /// end, bytes/s.
    #[serde(default = "Figure::unrecorded")]
    pub after_drop_bps: Figure,
    /// The first drop's cause, when there is a drop.
    #[serde(default)]
    pub drop_cause: Option<Cause>,
    /// The confidence of that cause, 0–1.
    #[serde(default)]
    pub drop_confidence: Option<f64>,
    /// Bytes written before the first drop attributed to the SLC cache (its onset interval).
    pub slc_cache_bytes: Figure,
    /// Rate from that drop to the next event or the end, bytes/s.
    pub post_cache_bps: Figure,
    /// Seconds from the phase's first file to the first thermal drop (its onset interval).
    pub throttle_s: Figure,
    /// Bytes before the first thermal drop (its onset interval).
    pub throttle_bytes: Figure,
    /// Rate from the first thermal drop to the next event or the end, bytes/s.
    pub throttled_bps: Figure,
    /// Energy per GB of the phase: Σ of its files' energies / Σ their bytes, J/GB (probed
    /// target only; = `phases[].j_per_gb`).
    #[serde(default = "Figure::unrecorded")]
    pub j_per_gb: Figure,
    /// Mean bus power over the files' time: Σ energies / Σ durations, W (= `phases[].mean_power_w`).
    #[serde(default = "Figure::unrecorded")]
    pub mean_power_w: Figure,
    /// Peak bus power: the highest 1 s mean of the phase (seconds from its first file), W
    /// (= `phases[].port.peak_w`).
    #[serde(default = "Figure::unrecorded")]
    pub peak_power_w: Figure,
    /// The enclosure's highest 1 s mean temperature of the phase, °C.
    #[serde(default = "Figure::unrecorded")]
    pub enclosure_max_c: Figure,
    /// J/GB before and after each drop and recovery (probed target only).
    #[serde(default)]
    pub energy: Vec<EventEnergy>,
}

/// First-order RC fit of the enclosure: τ·dT/dt = Rth·P − (T − T_amb).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThermalFit {
    /// Target the probe is on.
    pub target: String,
    /// Thermal resistance enclosure → ambient, °C/W.
    pub rth_c_per_w: Figure,
    /// Time constant, s.
    pub tau_s: Figure,
    /// Ambient the fit implies, °C.
    pub ambient_c: Figure,
    /// 1 s steps the fit used.
    pub steps: usize,
    /// Residual standard deviation of dT/dt, °C/s.
    pub residual_c_per_s: f64,
    /// Predicted seconds to the first thermal throttle had the ambient been
    /// `ambient_delta_c` warmer, same power history (absent without a thermal drop).
    pub throttle_s_at_delta: Figure,
    /// The ambient shift of that prediction, °C.
    pub ambient_delta_c: f64,
    /// The same prediction at the run's own ambient: a check against the observed onset.
    pub throttle_s_at_run_ambient: Figure,
}

impl ThermalFit {
    /// One line in words: the fit, each figure with its interval or its reason once, and the
    /// prediction only where the run has a thermal drop.
    pub fn text(&self) -> String {
        let mut s = format!(
            "{} enclosure as a first-order RC over {} s: time constant {}",
            self.target,
            self.steps,
            self.tau_s.text(Kind::Seconds)
        );
        match (&self.rth_c_per_w, &self.ambient_c) {
            (Figure::Absent { absent }, Figure::Absent { .. }) => {
                s.push_str(&format!(
                    "; thermal resistance and ambient: not measured ({absent})"
                ));
            }
            (r, a) => s.push_str(&format!(
                ", thermal resistance {}, ambient {}",
                r.text(Kind::ThermalResistance),
                a.text(Kind::Temperature)
            )),
        }
        s
    }

    /// The predicted time to throttle at another ambient in words; None where the run has
    /// no thermal drop to predict.
    pub fn prediction_text(&self) -> Option<String> {
        let no_drop =
            |f: &Figure| matches!(f, Figure::Absent { absent } if absent.starts_with("no drop"));
        (!no_drop(&self.throttle_s_at_delta)).then(|| match &self.throttle_s_at_delta {
            Figure::Absent { absent } => {
                format!(
                    "{} first throttle at {:+.0} °C ambient: {absent}",
                    self.target, self.ambient_delta_c
                )
            }
            at_delta => format!(
                "{} first throttle predicted after {} at {:+.0} °C ambient (the model at this run's ambient: {})",
                self.target,
                at_delta.text(Kind::Seconds),
                self.ambient_delta_c,
                self.throttle_s_at_run_ambient.text(Kind::Seconds)
            ),
        })
    }
}

/// All headline figures of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Headlines {
    /// One entry per target and phase.
    pub series: Vec<SeriesHeadline>,
    /// The enclosure's thermal fit (absent without probe temperatures, with the reason).
    pub thermal_fit: Option<Result<ThermalFit, String>>,
}
