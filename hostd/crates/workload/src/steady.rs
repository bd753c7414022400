//! Steady-state detection as fio's `ss=`, `ss_dur=`, `ss_ramp=` define it: throughput is
//! sampled once a second (each file's bytes spread over the seconds it ran); once the ramp
//! has passed, the step ends as soon as the last `window` seconds of samples meet any one
//! criterion:
//!
//! - `bw:L` / `iops:L`: the largest deviation of a sample from the window's mean is at most L
//!   (B/s or IOPS; with `%`, L percent of the mean);
//! - `bw_slope:L` / `iops_slope:L`: the least-squares slope of the samples against time is
//!   at most L in magnitude (B/s or IOPS per second; with `%`, L percent of the mean per
//!   second);
//! - `temp_slope:L`: the least-squares slope of the target's temperature (the probe's
//!   enclosure sensor, or the drive's SMART temperature, read once a second by a
//!   [`Thermometer`]) over the same window is at most L °C per minute in magnitude. Unlike
//!   the throughput criteria, of which any one ends the step, a temperature criterion must
//!   hold as well: the step ends when throughput AND temperature have settled.

use hostd_records::profile::SteadyStateSpec;
use hostd_records::programs::SteadyStateFigures;
use hostd_records::FileRecord;
use std::sync::Arc;
use std::time::Duration;

/// Where the `temp_slope` criterion reads temperatures: the run's readings of each target,
/// about one a second.
pub trait Thermometer: Send + Sync {
    /// Readings of target `target_index` taken from `from_ns` to `to_ns` (host Unix ns),
    /// in time order, as (time, °C).
    fn readings(&self, target_index: usize, from_ns: u64, to_ns: u64) -> Vec<(u64, f64)>;
}

/// A [`Thermometer`] and the target it is read for.
#[derive(Clone)]
pub struct TargetThermometer {
    /// The run's temperatures.
    pub thermometer: Arc<dyn Thermometer>,
    /// The target's index.
    pub target_index: usize,
}

impl std::fmt::Debug for TargetThermometer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TargetThermometer(target {})", self.target_index)
    }
}

impl PartialEq for TargetThermometer {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.thermometer, &other.thermometer)
            && self.target_index == other.target_index
    }
}

/// One sample a second, as fio's default `ss_interval`.
const SAMPLE_NS: u64 = 1_000_000_000;
/// The fewest samples a window may hold (a slope needs two points, a deviation three to mean much).
pub const MIN_WINDOW_SAMPLES: u64 = 3;

/// What a criterion measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    Bw,
    Iops,
    /// Temperature, °C (slope only, per minute).
    Temp,
}

/// One criterion (`bw:10%`).
#[derive(Debug, Clone, PartialEq)]
pub struct Criterion {
    text: String,
    metric: Metric,
    slope: bool,
    limit: f64,
    percent: bool,
}

impl Criterion {
    /// Parses `METRIC:LIMIT[%]`; the error names the text.
    pub fn parse(text: &str) -> Result<Criterion, String> {
        let bad = |why: &str| format!("[steady_state] criteria: \"{text}\" {why}");
        let (metric, limit) = text
            .split_once(':')
            .ok_or_else(|| bad("is not METRIC:LIMIT (e.g. \"bw:10%\")"))?;
        let (metric, slope) = match metric.trim() {
            "bw" => (Metric::Bw, false),
            "bw_slope" => (Metric::Bw, true),
            "iops" => (Metric::Iops, false),
            "iops_slope" => (Metric::Iops, true),
            "temp_slope" => (Metric::Temp, true),
            m => {
                return Err(bad(&format!(
                    "has metric `{m}`: give bw, bw_slope, iops, iops_slope or temp_slope"
                )))
            }
        };
        let limit = limit.trim();
        let (number, percent) = match limit.strip_suffix('%') {
            Some(n) => (n.trim(), true),
            None => (limit, false),
        };
        let limit: f64 = number
            .parse()
            .map_err(|_| bad(&format!("has limit `{limit}`, not a number")))?;
        if !(limit.is_finite() && limit > 0.0) || (percent && limit >= 100.0) {
            return Err(bad("needs a limit above 0 (and below 100 %)"));
        }
        if metric == Metric::Temp && percent {
            return Err(bad(
                "is in °C per minute, not a percentage (e.g. \"temp_slope:0.5\")",
            ));
        }
        Ok(Criterion {
            text: text.trim().to_string(),
            metric,
            slope,
            limit,
            percent,
        })
    }

    /// True for `temp_slope`, which must hold beside the throughput criteria.
    pub fn is_temperature(&self) -> bool {
        self.metric == Metric::Temp
    }

    /// The criterion's value over `window` (deviation or |slope|, scaled to percent of the
    /// mean when the limit is), and the mean.
    fn value(&self, window: &[f64]) -> (f64, f64) {
        let n = window.len() as f64;
        let mean = window.iter().sum::<f64>() / n;
        let v = if self.slope {
            let xm = (n - 1.0) / 2.0;
            let (sxy, sxx) = window
                .iter()
                .enumerate()
                .fold((0.0, 0.0), |(sxy, sxx), (i, y)| {
                    let dx = i as f64 - xm;
                    (sxy + dx * (y - mean), sxx + dx * dx)
                });
            (sxy / sxx).abs()
        } else {
            window.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max)
        };
        let v = if self.percent {
            if mean > 0.0 {
                100.0 * v / mean
            } else {
                f64::INFINITY
            }
        } else {
            v
        };
        (v, mean)
    }
}

/// The checked settings of a `[steady_state]` section.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadySpec {
    /// The criteria; the first met ends the step.
    pub criteria: Vec<Criterion>,
    /// Window (whole seconds).
    pub window: Duration,
    /// Ramp.
    pub ramp: Duration,
    /// Where `temp_slope` reads the target's temperature (set by the runner).
    pub thermometer: Option<TargetThermometer>,
}

impl SteadySpec {
    /// Checks a profile section; the error names the key and the value. `step` is the time
    /// the step runs at most, when it has one: a window (plus ramp) longer than it is refused.
    pub fn new(s: &SteadyStateSpec, step: Option<Duration>) -> Result<SteadySpec, String> {
        if s.criteria.is_empty() {
            return Err(
                "[steady_state] criteria is empty: give at least one, e.g. [\"bw:10%\"]".into(),
            );
        }
        let criteria = s
            .criteria
            .iter()
            .map(|c| Criterion::parse(c))
            .collect::<Result<Vec<_>, _>>()?;
        let (window, ramp) = (s.window.0, s.ramp.0);
        if window.as_nanos() < u128::from(MIN_WINDOW_SAMPLES * SAMPLE_NS)
            || window.subsec_nanos() != 0
        {
            return Err(format!(
                "[steady_state] window = \"{}\" must be whole seconds, at least {MIN_WINDOW_SAMPLES} s (one sample a second)",
                s.window
            ));
        }
        if let Some(step) = step {
            if window + ramp > step {
                return Err(format!(
                    "[steady_state] window = \"{}\" (+ ramp = \"{}\") is longer than the step ({}): it could never end the step",
                    s.window,
                    s.ramp,
                    hostd_records::units::DurationText(step)
                ));
            }
        }
        Ok(SteadySpec {
            criteria,
            window,
            ramp,
            thermometer: None,
        })
    }

    /// The temperature criteria asked for (`temp_slope:…`), as written.
    pub fn temperature_criteria(&self) -> Vec<&str> {
        self.criteria
            .iter()
            .filter(|c| c.is_temperature())
            .map(|c| c.text.as_str())
            .collect()
    }

    /// The same spec, reading temperatures of target `target_index` from `thermometer`.
    pub fn with_thermometer(
        mut self,
        thermometer: Option<&Arc<dyn Thermometer>>,
        target_index: usize,
    ) -> SteadySpec {
        self.thermometer = thermometer.map(|t| TargetThermometer {
            thermometer: Arc::clone(t),
            target_index,
        });
        self
    }
}

/// Least-squares slope of `(t_ns, c)` readings, °C per minute; `None` under
/// [`MIN_WINDOW_SAMPLES`] readings.
fn slope_per_minute(readings: &[(u64, f64)]) -> Option<f64> {
    if (readings.len() as u64) < MIN_WINDOW_SAMPLES {
        return None;
    }
    let t0 = readings[0].0;
    let xs: Vec<f64> = readings
        .iter()
        .map(|(t, _)| (t - t0) as f64 / 60e9)
        .collect();
    let n = readings.len() as f64;
    let (xm, ym) = (
        xs.iter().sum::<f64>() / n,
        readings.iter().map(|r| r.1).sum::<f64>() / n,
    );
    let (sxy, sxx) = xs
        .iter()
        .zip(readings)
        .fold((0.0, 0.0), |(sxy, sxx), (x, (_, y))| {
            (sxy + (x - xm) * (y - ym), sxx + (x - xm) * (x - xm))
        });
    (sxx > 0.0).then(|| sxy / sxx)
}

/// Watches one step's files and says when it has settled.
#[derive(Debug, Clone)]
pub struct Detector {
    spec: SteadySpec,
    /// The step's phase.
    phase: String,
    /// The step's first I/O, Unix ns.
    start_ns: Option<u64>,
    /// Latest file end, Unix ns.
    now_ns: u64,
    /// Bytes and I/Os per second since `start_ns`.
    bytes: Vec<f64>,
    ops: Vec<f64>,
    ended: Option<(String, f64, f64)>,
    /// The last temperature judgement: slope over the window (°C/min), mean (°C), readings.
    temp: Option<(f64, f64, usize)>,
    /// With a temperature criterion: when the throughput criteria were first met, s.
    rate_settled_s: Option<f64>,
}

impl Detector {
    /// A detector for a step `phase` (it starts at the first file it is given).
    pub fn new(spec: SteadySpec, phase: &str) -> Detector {
        Detector {
            spec,
            phase: phase.to_string(),
            start_ns: None,
            now_ns: 0,
            bytes: Vec::new(),
            ops: Vec::new(),
            ended: None,
            temp: None,
            rate_settled_s: None,
        }
    }

    /// Adds a finished file; true when the step has now reached steady state.
    pub fn add(&mut self, rec: &FileRecord) -> bool {
        let start = *self.start_ns.get_or_insert(rec.start_ns);
        self.now_ns = self.now_ns.max(rec.end_ns);
        let (a, b) = (
            rec.start_ns.max(start) - start,
            rec.end_ns.max(start) - start,
        );
        let ops = rec.bytes as f64 / rec.block_size.max(1) as f64;
        let len = (b - a).max(1) as f64;
        let last = (b / SAMPLE_NS) as usize;
        if self.bytes.len() <= last {
            self.bytes.resize(last + 1, 0.0);
            self.ops.resize(last + 1, 0.0);
        }
        for k in (a / SAMPLE_NS) as usize..=last {
            let (lo, hi) = (k as u64 * SAMPLE_NS, (k as u64 + 1) * SAMPLE_NS);
            let share = (b.min(hi).saturating_sub(a.max(lo))) as f64 / len;
            self.bytes[k] += rec.bytes as f64 * share;
            self.ops[k] += ops * share;
        }
        self.ended.is_some() || self.check()
    }

    fn check(&mut self) -> bool {
        let Some(start) = self.start_ns else {
            return false;
        };
        // Whole seconds only, after the ramp.
        let complete = ((self.now_ns - start) / SAMPLE_NS) as usize;
        let first = self.spec.ramp.as_nanos().div_ceil(u128::from(SAMPLE_NS)) as usize;
        let n = self.spec.window.as_secs() as usize;
        if complete < first + n {
            return false;
        }
        let range = complete - n..complete;
        // Throughput: the first criterion met (none asked: settled).
        let mut met = None;
        let mut asked = false;
        for c in self.spec.criteria.iter().filter(|c| !c.is_temperature()) {
            asked = true;
            let data = match c.metric {
                Metric::Bw => &self.bytes[range.clone()],
                _ => &self.ops[range.clone()],
            };
            let (v, mean) = c.value(data);
            if v <= c.limit && mean > 0.0 {
                met = Some((c.text.clone(), v, mean));
                break;
            }
        }
        let temps: Vec<&Criterion> = self
            .spec
            .criteria
            .iter()
            .filter(|c| c.is_temperature())
            .collect();
        if !temps.is_empty() {
            if asked && met.is_some() && self.rate_settled_s.is_none() {
                self.rate_settled_s = Some(complete as f64);
            }
            // The same window on the host clock.
            let (from, to) = (
                start + (complete - n) as u64 * SAMPLE_NS,
                start + complete as u64 * SAMPLE_NS,
            );
            let readings = self
                .spec
                .thermometer
                .as_ref()
                .map(|t| t.thermometer.readings(t.target_index, from, to))
                .unwrap_or_default();
            let slope = slope_per_minute(&readings);
            self.temp = slope.map(|s| {
                let mean = readings.iter().map(|r| r.1).sum::<f64>() / readings.len() as f64;
                (s, mean, readings.len())
            });
            let Some(slope) = slope else {
                return false;
            };
            if temps.iter().any(|c| slope.abs() > c.limit) {
                return false;
            }
            let texts: Vec<&str> = temps.iter().map(|c| c.text.as_str()).collect();
            met = match met {
                Some((c, v, mean)) => Some((format!("{c} and {}", texts.join(" and ")), v, mean)),
                None if !asked => Some((texts.join(" and "), slope.abs(), f64::NAN)),
                None => None,
            };
        }
        match met {
            Some(m) => {
                self.ended = Some(m);
                true
            }
            None => false,
        }
    }

    /// The record of the step: which criterion ended it and when, or that it ran out.
    pub fn figures(&self) -> SteadyStateFigures {
        let start = self.start_ns.unwrap_or(self.now_ns);
        SteadyStateFigures {
            phase: self.phase.clone(),
            criteria: self.spec.criteria.iter().map(|c| c.text.clone()).collect(),
            window_s: self.spec.window.as_secs_f64(),
            ramp_s: self.spec.ramp.as_secs_f64(),
            ended_by: self.ended.as_ref().map(|e| e.0.clone()),
            end_ns: self.now_ns,
            elapsed_s: (self.now_ns - start) as f64 / 1e9,
            value: self.ended.as_ref().map(|e| e.1),
            mean: self.ended.as_ref().map(|e| e.2).filter(|m| m.is_finite()),
            temp_slope_c_per_min: self.temp.map(|t| t.0),
            temp_mean_c: self.temp.map(|t| t.1),
            rate_settled_s: self.rate_settled_s,
        }
    }

    /// The closing line of the step.
    pub fn text(&self, target: &str) -> String {
        let f = self.figures();
        let temp = match (f.temp_slope_c_per_min, f.temp_mean_c) {
            (Some(s), Some(c)) => format!(
                "; temperature {c:.1} °C, slope {s:+.2} °C/min{}",
                f.rate_settled_s.map_or(String::new(), |r| format!(
                    ", throughput settled at {r:.0} s"
                ))
            ),
            _ => String::new(),
        };
        match (&f.ended_by, f.value) {
            (Some(c), Some(v)) => format!(
                "{target} {}: steady state after {:.1} s by {c} (value {v:.3} over the last {} s; mean {}{temp})",
                f.phase,
                f.elapsed_s,
                f.window_s,
                match f.mean {
                    None => "-".to_string(),
                    Some(mean) if c.starts_with("bw") => format!("{:.1} MB/s", mean / 1e6),
                    Some(mean) => format!("{mean:.0} IOPS"),
                }
            ),
            _ => format!(
                "{target} {}: no steady state ({}) in {:.1} s: the step ran its full course{temp}",
                f.phase,
                f.criteria.join(", "),
                f.elapsed_s
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(criteria: &[&str], window: u64, ramp: u64) -> SteadySpec {
        SteadySpec {
            criteria: criteria
                .iter()
                .map(|c| Criterion::parse(c).unwrap())
                .collect(),
            window: Duration::from_secs(window),
            ramp: Duration::from_secs(ramp),
            thermometer: None,
        }
    }

    /// A file of `mb` MB from `t0` to `t1` seconds.
    fn file(t0: f64, t1: f64, mb: f64) -> FileRecord {
        FileRecord {
            target: "t".into(),
            target_index: 0,
            phase: "fill".into(),
            index: 0,
            start_ns: (1e12 + t0 * 1e9) as u64,
            end_ns: (1e12 + t1 * 1e9) as u64,
            bytes: (mb * 1e6) as u64,
            mbps: mb / (t1 - t0),
            verified: None,
            corrupt_blocks: 0,
            corrupt_bytes: 0,
            late_ops: 0,
            block_size: 1 << 20,
            queue_depth: 1,
            corrupt: Vec::new(),
            direct_io: true,
            status: "ok".into(),
            latency: None,
            probe: None,
        }
    }

    #[test]
    fn criteria_parse_as_fio_writes_them_and_refuse_what_it_would() {
        let c = Criterion::parse("bw_slope:0.5%").unwrap();
        assert!(c.slope && c.percent && c.metric == Metric::Bw && c.limit == 0.5);
        let c = Criterion::parse("iops:200").unwrap();
        assert!(!c.slope && !c.percent && c.metric == Metric::Iops && c.limit == 200.0);
        for bad in ["bw", "lat:5%", "bw:0", "bw:x%", "bw:150%", "bw:-1"] {
            let e = Criterion::parse(bad).unwrap_err();
            assert!(e.contains(&format!("\"{bad}\"")), "{e}");
        }
    }

    #[test]
    fn a_rate_that_alternates_never_settles_a_constant_one_settles_after_a_window() {
        // 1 s files: 10, 30, 10, 30 … 10 MB for 9 s, then 30 MB/s from 9 s on.
        let mut d = Detector::new(spec(&["bw:10%"], 3, 0), "fill");
        let mut t = 0.0;
        for k in 0..9 {
            let mb = if k % 2 == 0 { 10.0 } else { 30.0 };
            assert!(!d.add(&file(t, t + 1.0, mb)), "ended at {t}");
            t += 1.0;
        }
        let mut ended = None;
        for _ in 0..10 {
            if d.add(&file(t, t + 1.0, 30.0)) {
                ended = Some(t + 1.0);
                break;
            }
            t += 1.0;
        }
        // Three whole seconds at 30 MB/s after the change at 9 s.
        assert_eq!(ended, Some(12.0));
        let f = d.figures();
        assert_eq!(f.ended_by.as_deref(), Some("bw:10%"));
        assert!((f.mean.unwrap() - 30e6).abs() < 1.0, "{f:?}");
        assert!((f.elapsed_s - 12.0).abs() < 1e-6);
    }

    #[test]
    fn the_slope_criterion_waits_for_a_ramp_to_flatten_and_the_ramp_delays_judging() {
        // Rising 2 MB/s each second (a slope of ~5 % of the mean), then flat.
        let mut d = Detector::new(spec(&["bw_slope:1%"], 4, 0), "step");
        let mut t = 0.0;
        for k in 0..10 {
            assert!(
                !d.add(&file(t, t + 1.0, 20.0 + 2.0 * k as f64)),
                "ended at {t}"
            );
            t += 1.0;
        }
        let mut n = 0;
        while !d.add(&file(t, t + 1.0, 40.0)) {
            t += 1.0;
            n += 1;
            assert!(n < 10);
        }
        assert!(
            d.text("t").contains("steady state after"),
            "{}",
            d.text("t")
        );
        // A ramp longer than the data: never judged.
        let mut d = Detector::new(spec(&["bw:50%"], 3, 20), "step");
        for k in 0..15 {
            assert!(!d.add(&file(k as f64, k as f64 + 1.0, 30.0)));
        }
        assert!(
            d.text("t").contains("ran its full course"),
            "{}",
            d.text("t")
        );
    }

    #[test]
    fn a_window_longer_than_the_step_is_refused_naming_it() {
        let s = SteadyStateSpec {
            criteria: vec!["bw:10%".into()],
            window: hostd_records::units::DurationText(Duration::from_secs(90)),
            ramp: hostd_records::units::DurationText(Duration::ZERO),
        };
        let e = SteadySpec::new(&s, Some(Duration::from_secs(60))).unwrap_err();
        assert!(e.contains("[steady_state] window = \"1m 30s\""), "{e}");
        assert!(SteadySpec::new(&s, Some(Duration::from_secs(120))).is_ok());
        assert!(SteadySpec::new(&s, None).is_ok());
    }

    /// Readings of a temperature that rises 1 °C a second until `settle_s`, then holds.
    struct Warming {
        t0: u64,
        settle_s: f64,
    }

    impl Thermometer for Warming {
        fn readings(&self, _: usize, from_ns: u64, to_ns: u64) -> Vec<(u64, f64)> {
            (0..100u64)
                .map(|k| self.t0 + k * SAMPLE_NS + SAMPLE_NS / 2)
                .filter(|t| (from_ns..=to_ns).contains(t))
                .map(|t| {
                    let s = (t - self.t0) as f64 / 1e9;
                    (t, 40.0 + s.min(self.settle_s))
                })
                .collect()
        }
    }

    #[test]
    fn a_temperature_criterion_holds_the_step_until_the_temperature_has_settled_too() {
        assert!(Criterion::parse("temp_slope:0.5%").is_err());
        let thermo: Arc<dyn Thermometer> = Arc::new(Warming {
            t0: 1_000_000_000_000,
            settle_s: 8.0,
        });
        let s = spec(&["bw:10%", "temp_slope:6"], 3, 0).with_thermometer(Some(&thermo), 0);
        let mut d = Detector::new(s, "fill");
        let mut ended = None;
        for k in 0..20 {
            if d.add(&file(k as f64, k as f64 + 1.0, 30.0)) {
                ended = Some(k + 1);
                break;
            }
        }
        // The rate is flat from the start (met at 3 s); the temperature rises 60 °C/min
        // until 8 s, and a whole window of it flat ends the step.
        assert_eq!(ended, Some(11));
        let f = d.figures();
        assert_eq!(f.ended_by.as_deref(), Some("bw:10% and temp_slope:6"));
        assert_eq!(f.rate_settled_s, Some(3.0));
        assert!(f.temp_slope_c_per_min.unwrap().abs() <= 6.0, "{f:?}");
        // Without a thermometer the criterion can never be met.
        let mut d = Detector::new(spec(&["temp_slope:6"], 3, 0), "fill");
        assert!((0..10).all(|k| !d.add(&file(k as f64, k as f64 + 1.0, 30.0))));
    }
}
