//! The temperatures `[steady_state]`'s `temp_slope` criterion judges: for the target the
//! probe is on, its enclosure sensor (from the probe stream, one reading a second); for
//! the other targets, the drive's SMART temperature (smartctl once a second, on a thread of
//! its own). A temperature criterion with neither is refused before anything is written.

use anyhow::bail;
use hostd_records::profile::Profile;
use hostd_records::TargetInfo;
use hostd_store::{ProbeData, ProbeFeed, RunPart, RunRecords, Stage};
use hostd_workload::steady::{SteadySpec, Thermometer};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One reading a second, as the throughput samples.
const READING_NS: u64 = 1_000_000_000;

struct Inner {
    /// The target the probe is on, if any.
    probed: Option<usize>,
    /// Per target: readings (host Unix ns, °C).
    readings: Mutex<Vec<Vec<(u64, f64)>>>,
    /// Set when the run is over: the SMART thread ends.
    done: AtomicBool,
}

impl Inner {
    fn push(&self, target: usize, time_ns: u64, c: f64) {
        let mut all = self.readings.lock().unwrap_or_else(|e| e.into_inner());
        let mine = &mut all[target];
        if mine.last().is_none_or(|l| time_ns >= l.0 + READING_NS) {
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
    let mut smart = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        if Some(i) == probe_on {
            continue;
        }
        let r = hostd_drive::smart::read_smart(t.device.as_deref(), &t.label, "steady", "check");
        if r.temperature_c.is_none() {
            bail!(
                "profile {}: [steady_state] criteria \"{criterion}\" needs a temperature, but target {} has no probe{} and its drive gives none ({}): give --probe, or drop \"{criterion}\"",
                profile.name,
                t.label,
                if probe_on.is_none() { " (--probe none)" } else { "" },
                r.note.unwrap_or_else(|| "smartctl gave none".into())
            );
        }
        smart.push((i, t.label.clone(), t.device.clone()));
    }
    let inner = Arc::new(Inner {
        probed: probe_on,
        readings: Mutex::new(vec![Vec::new(); targets.len()]),
        done: AtomicBool::new(false),
    });
    if !smart.is_empty() {
        let inner = Arc::clone(&inner);
        std::thread::spawn(move || {
            while !inner.done.load(Ordering::Relaxed) {
                for (i, label, device) in &smart {
                    let r = hostd_drive::smart::read_smart(
                        device.as_deref(),
                        label,
                        "steady",
                        "steady",
                    );
                    if let Some(c) = r.temperature_c {
                        inner.push(*i, hostd_workload::unix_ns(), c);
                    }
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        });
    }
    Ok(Some((
        Arc::new(RunThermometer(Arc::clone(&inner))) as Arc<dyn Thermometer>,
        ThermometerPart(inner),
    )))
}

impl Drop for ThermometerPart {
    fn drop(&mut self) {
        self.0.done.store(true, Ordering::Relaxed);
    }
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
                        inner.push(target, t, c);
                    }
                }
            }
            Ok(())
        }))
    }

    fn finish(&mut self, _records: &mut RunRecords<'_>) -> anyhow::Result<()> {
        self.0.done.store(true, Ordering::Relaxed);
        Ok(())
    }
}
