//! The temperatures `[steady_state]`'s `temp_slope` criterion judges: for the target the
//! probe is on, its enclosure sensor (from the probe feed, one reading a second); for the
//! other targets, the drive's SMART temperature (from the drive feed: every reading of the
//! run's one drive poller, about one a second). A temperature criterion with neither is
//! refused before anything is written.

use anyhow::bail;
use hostd_records::profile::Profile;
use hostd_records::TargetInfo;
use hostd_store::{DriveData, DriveFeed, ProbeData, ProbeFeed, RunPart, Stage};
use hostd_workload::steady::{SteadySpec, Thermometer};
use std::sync::{Arc, Mutex};

/// One probe reading a second, as the throughput samples.
const READING_NS: u64 = 1_000_000_000;

struct Inner {
    /// The target the probe is on, if any.
    probed: Option<usize>,
    /// Whether a target reads its drive's temperature (every target the probe is not on).
    smart: bool,
    /// Per target: readings (host Unix ns, °C).
    readings: Mutex<Vec<Vec<(u64, f64)>>>,
}

impl Inner {
    /// Adds a reading of `target` taken at least `gap_ns` after its last one.
    fn push(&self, target: usize, time_ns: u64, c: f64, gap_ns: u64) {
        let mut all = self.readings.lock().unwrap_or_else(|e| e.into_inner());
        let Some(mine) = all.get_mut(target) else {
            return;
        };
        if mine.last().is_none_or(|l| time_ns >= l.0 + gap_ns) {
            mine.push((time_ns, c));
        }
    }
}

/// The run's temperature readings, as the steady-state judge asks for them.
pub struct RunThermometer(Arc<Inner>);

impl Thermometer for RunThermometer {
    fn readings(&self, target_index: usize, from_ns: u64, to_ns: u64) -> Vec<(u64, f64)> {
        let all = self.0.readings.lock().unwrap_or_else(|e| e.into_inner());
        all.get(target_index).map_or(Vec::new(), |r| {
            r.iter()
                .filter(|(t, _)| (from_ns..=to_ns).contains(t))
                .copied()
                .collect()
        })
    }
}

/// The run part that hears the probe's enclosure temperature.
pub struct ThermometerPart(Arc<Inner>);

/// The thermometer of this run, when its `[steady_state]` has a temperature criterion.
/// Refused (naming the criterion) when a target has neither the probe nor a drive that
/// gives a temperature.
pub fn build(
    profile: &Profile,
    probe_on: Option<usize>,
    targets: &[TargetInfo],
) -> anyhow::Result<Option<(Arc<dyn Thermometer>, ThermometerPart)>> {
    let Some(ss) = &profile.steady_state else {
        return Ok(None);
    };
    let Ok(spec) = SteadySpec::new(ss, None) else {
        return Ok(None); // the profile check refuses it
    };
    let Some(criterion) = spec.temperature_criteria().first().map(|c| c.to_string()) else {
        return Ok(None);
    };
    for (i, t) in targets.iter().enumerate() {
        if Some(i) == probe_on {
            continue;
        }
        let config = hostd_drive::smart::PollerConfig::default();
        if let Err(why) = hostd_drive::smart::detect::check(t, &config) {
            bail!(
                "profile {}: [steady_state] criteria \"{criterion}\" needs a temperature, but target {} has no probe{} and its drive gives none ({why}): give --probe, or drop \"{criterion}\"",
                profile.name,
                t.label,
                if probe_on.is_none() { " (--probe none)" } else { "" },
            );
        }
    }
    let inner = Arc::new(Inner {
        probed: probe_on,
        smart: (0..targets.len()).any(|i| Some(i) != probe_on),
        readings: Mutex::new(vec![Vec::new(); targets.len()]),
    });
    Ok(Some((
        Arc::new(RunThermometer(Arc::clone(&inner))) as Arc<dyn Thermometer>,
        ThermometerPart(inner),
    )))
}

impl RunPart for ThermometerPart {
    fn name(&self) -> &str {
        "steady_state_temperature"
    }

    fn stage(&self) -> Stage {
        Stage::Enrich
    }

    fn probe_feed(&mut self) -> Option<ProbeFeed> {
        let target = self.0.probed?;
        let inner = Arc::clone(&self.0);
        Some(Box::new(move |data: ProbeData<'_>| {
            if let ProbeData::Samples(samples) = data {
                for s in samples {
                    if let (Some(c), Ok(t)) = (s.enclosure_temp_c, u64::try_from(s.time_ns)) {
                        inner.push(target, t, c, READING_NS);
                    }
                }
            }
            Ok(())
        }))
    }

    /// Every drive reading of the targets the probe is not on (the poller reads about one a
    /// second already).
    fn drive_feed(&mut self) -> Option<DriveFeed> {
        if !self.0.smart {
            return None;
        }
        let inner = Arc::clone(&self.0);
        Some(Box::new(move |data: DriveData<'_>| {
            match data {
                DriveData::Reading(r) if Some(r.target_index) != inner.probed => {
                    if let (Some(c), Ok(t)) = (r.temperature_c, u64::try_from(r.time_ns)) {
                        inner.push(r.target_index, t, c, 0);
                    }
                }
                _ => {}
            }
            Ok(())
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostd_records::ProbeSample;
    use hostd_store::DriveReading;

    const S: u64 = 1_000_000_000;

    fn drive(target_index: usize, time_ns: u64, c: f64) -> DriveReading {
        DriveReading {
            target_index,
            target: format!("t{target_index}"),
            time_ns: time_ns as i64,
            device: "/dev/sdb".into(),
            device_type: None,
            model: None,
            temperature_c: Some(c),
            thermal_kind: None,
            thermal: None,
        }
    }

    #[test]
    fn the_probed_target_reads_the_enclosure_once_a_second_and_the_others_every_drive_reading() {
        let inner = Arc::new(Inner {
            probed: Some(0),
            smart: true,
            readings: Mutex::new(vec![Vec::new(); 2]),
        });
        let thermometer = RunThermometer(Arc::clone(&inner));
        let mut part = ThermometerPart(inner);
        let mut probe = part.probe_feed().unwrap();
        let mut feed = part.drive_feed().unwrap();
        // The probe at 1 kHz for 3 s, the enclosure at 40 °C + 1 °C a second.
        let samples: Vec<ProbeSample> = (0..3000u64)
            .map(|k| ProbeSample {
                time_ns: (10 * S + k * 1_000_000) as i64,
                enclosure_temp_c: Some(40.0 + (k / 1000) as f64),
                ..Default::default()
            })
            .collect();
        probe(ProbeData::Samples(&samples)).unwrap();
        // The drive poller's readings, 0.98 s apart (its cadence is about a second): every
        // one is a reading of the target it names; the probed target's are not its own.
        for (k, c) in [50.0, 51.0, 52.0].into_iter().enumerate() {
            let t = 10 * S + k as u64 * 980_000_000;
            feed(DriveData::Reading(&drive(1, t, c))).unwrap();
            feed(DriveData::Reading(&drive(0, t, 99.0))).unwrap();
        }
        feed(DriveData::Unanswered {
            target_index: 1,
            why: "not heard",
        })
        .unwrap();
        let probed = thermometer.readings(0, 0, u64::MAX);
        assert_eq!(probed, vec![(10 * S, 40.0), (11 * S, 41.0), (12 * S, 42.0)]);
        let smart = thermometer.readings(1, 10 * S, 11 * S);
        assert_eq!(smart, vec![(10 * S, 50.0), (10 * S + 980_000_000, 51.0)]);
        assert_eq!(thermometer.readings(1, 0, u64::MAX).len(), 3);
    }

    #[test]
    fn with_the_probe_on_the_only_target_the_drive_is_not_read() {
        let mut part = ThermometerPart(Arc::new(Inner {
            probed: Some(0),
            smart: false,
            readings: Mutex::new(vec![Vec::new(); 1]),
        }));
        assert!(part.drive_feed().is_none());
    }
}
