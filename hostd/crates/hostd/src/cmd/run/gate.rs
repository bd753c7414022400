//! `[temperature_gate]`: before a gated measured step the target idles until the probe's
//! enclosure sensor (from the probe feed) or the drive's SMART temperature (from the drive
//! feed: the run's one drive poller) is within the margin of its idle temperature, or the
//! timeout passes. The idle temperature is given, or read just before
//! the run's first measured step. Each wait (how long, reached or timed out) goes to the
//! manifest (`extra.temperature_gate`: settings, idle temperatures, totals) and the summary
//! (same key: every wait, and the closing lines).
//!
//! `diskmark` profiles get [`diskmark_default`] when a probe is on and they give no gate.

use anyhow::bail;
use hostd_records::profile::{GateAt, GateSource, Kind, Profile, TemperatureGate};
use hostd_records::TargetInfo;
use hostd_store::{DriveData, DriveFeed, ProbeData, ProbeFeed, RunPart, RunRecords, Stage};
use hostd_workload::gate::StepGate;
use hostd_workload::step::Step;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Name of the manifest and summary sections.
pub const NAME: &str = hostd_records::gate_wait::SUMMARY_KEY;
/// How long the first gate waits for a first reading to take as the idle temperature.
const FIRST_READING_WAIT: Duration = Duration::from_secs(10);
/// Between two looks at the latest reading while waiting (a reading in memory, probe or
/// drive: looking costs nothing, and a gate lets its step go within this of the reading
/// that allows it).
const LOOK: Duration = Duration::from_millis(100);

/// The gate `diskmark` uses when a probe is on and its profile gives none: each repetition
/// starts once the enclosure is within 2 °C of idle, waiting at most 2 minutes.
pub fn diskmark_default() -> TemperatureGate {
    TemperatureGate {
        source: GateSource::Probe,
        margin_c: 2.0,
        timeout_s: 120.0,
        idle_c: None,
        at: GateAt::Step,
    }
}

use hostd_records::gate_wait::{GateWait, WaitOutcome};

struct Inner {
    spec: TemperatureGate,
    /// Whether the gate came from the profile or is diskmark's default.
    defaulted: bool,
    /// Labels of the targets.
    targets: Vec<String>,
    /// The target the probe is on (probe source: the only one gated).
    probed: usize,
    /// Latest enclosure temperature from the probe, with the record time of its sample.
    probe_c: Mutex<Option<(i64, f64)>>,
    /// Per target: latest drive temperature from the drive feed, with its record time.
    drive_c: Mutex<Vec<Option<(i64, f64)>>>,
    /// Per target: idle temperature, last gated phase.
    idle: Mutex<Vec<Option<f64>>>,
    last_phase: Mutex<Vec<Option<String>>>,
    waits: Mutex<Vec<GateWait>>,
}

impl Inner {
    /// The temperature of `target` taken at or after record time `since_ns`: a probe's
    /// stream can lag the host (USB buffering, a starved reader, the clock fit not yet
    /// made), the drive is read about once a second, and a reading from before the gate
    /// began is the step's, not the idle's.
    fn reading(&self, target: usize, since_ns: i64) -> Option<f64> {
        let latest = match self.spec.source {
            GateSource::Probe => *self.probe_c.lock().unwrap_or_else(|e| e.into_inner()),
            GateSource::Drive => self
                .drive_c
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(target)
                .copied()
                .flatten(),
        };
        fresh(latest, since_ns)
    }

    /// The first reading from `since_ns` on within `limit`, polling; `None` when stopped or
    /// none came.
    fn first_reading(
        &self,
        target: usize,
        since_ns: i64,
        limit: Duration,
        stop: &AtomicBool,
    ) -> Option<f64> {
        let t0 = Instant::now();
        loop {
            if let Some(c) = self.reading(target, since_ns) {
                return Some(c);
            }
            if stop.load(Ordering::Relaxed) || t0.elapsed() >= limit {
                return None;
            }
            std::thread::sleep(LOOK.min(limit.saturating_sub(t0.elapsed())));
        }
    }
}

/// `reading`'s temperature if it was taken at or after record time `since_ns` (a sample not
/// yet aligned to the host, time 0, never is).
fn fresh(reading: Option<(i64, f64)>, since_ns: i64) -> Option<f64> {
    reading
        .filter(|&(t, _)| t > 0 && t >= since_ns)
        .map(|(_, c)| c)
}

/// The gate the runner asks before each measured step.
pub struct TemperatureGateHold(Arc<Inner>);

/// The run part that hears the probe's temperature and records the waits.
pub struct TemperatureGatePart(Arc<Inner>);

/// The gate of this run, if any: the profile's, or diskmark's default when a probe is on.
/// Refused before anything is written (naming the key and value): a probe gate without a
/// probe, a drive gate on a target whose drive gives no temperature.
pub fn build(
    profile: &Profile,
    probe_on: Option<usize>,
    targets: &[TargetInfo],
) -> anyhow::Result<Option<(TemperatureGateHold, TemperatureGatePart)>> {
    let (spec, defaulted) = match (&profile.temperature_gate, profile.kind, probe_on) {
        (Some(g), _, _) => (g.clone(), false),
        (None, Kind::Diskmark, Some(_)) => (diskmark_default(), true),
        (None, _, _) => return Ok(None),
    };
    let probed = match (spec.source, probe_on) {
        (GateSource::Probe, Some(i)) => i,
        (GateSource::Probe, None) => bail!(
            "profile {}: [temperature_gate] source = \"probe\" but no probe is on (--probe none): give --probe, or source = \"drive\"",
            profile.name
        ),
        (GateSource::Drive, _) => {
            let config = hostd_drive::smart::PollerConfig::default();
            for t in targets {
                if let Err(why) = hostd_drive::smart::detect::check(t, &config) {
                    bail!(
                        "profile {}: [temperature_gate] source = \"drive\" but target {}'s drive gives no temperature ({why}): give --probe and source = \"probe\"",
                        profile.name,
                        t.label,
                    );
                }
            }
            0
        }
    };
    let n = targets.len();
    let inner = Arc::new(Inner {
        idle: Mutex::new(vec![spec.idle_c; n]),
        spec,
        defaulted,
        targets: targets.iter().map(|t| t.label.clone()).collect(),
        probed,
        probe_c: Mutex::new(None),
        drive_c: Mutex::new(vec![None; n]),
        last_phase: Mutex::new(vec![None; n]),
        waits: Mutex::new(Vec::new()),
    });
    Ok(Some((
        TemperatureGateHold(Arc::clone(&inner)),
        TemperatureGatePart(inner),
    )))
}

impl StepGate for TemperatureGateHold {
    fn holds(&self, target_index: usize, step: &Step) -> bool {
        let g = &self.0;
        if g.spec.source == GateSource::Probe && target_index != g.probed {
            return false;
        }
        let mut last = g.last_phase.lock().unwrap_or_else(|e| e.into_inner());
        let first_of_phase = last[target_index].as_deref() != Some(step.phase.as_str());
        last[target_index] = Some(step.phase.clone());
        g.spec.at == GateAt::Step || first_of_phase
    }

    fn wait(&self, target_index: usize, step: &Step, stop: &AtomicBool) {
        let g = &self.0;
        // The wait and its timeout are record time (a drive played N× faster cools in its
        // own time: `hostd_records::clock`).
        let start_ns = hostd_workload::unix_ns();
        let since = start_ns as i64;
        let waited = || Duration::from_nanos(hostd_workload::unix_ns().saturating_sub(start_ns));
        let timeout = Duration::from_secs_f64(g.spec.timeout_s);
        let idle = g.idle.lock().unwrap_or_else(|e| e.into_inner())[target_index];
        // The first reading taken since the gate began (see `Inner::reading`).
        let mut start_c = g.reading(target_index, since);
        let (outcome, end_c, idle) = match idle {
            // Before the first measured step: what the drive reads now is its idle.
            None => {
                let c = start_c
                    .or_else(|| g.first_reading(target_index, since, FIRST_READING_WAIT, stop));
                start_c = c;
                g.idle.lock().unwrap_or_else(|e| e.into_inner())[target_index] = c;
                let outcome = if c.is_some() {
                    WaitOutcome::IdleMeasured
                } else {
                    WaitOutcome::NoReading
                };
                (outcome, c, c)
            }
            Some(idle) => {
                let mut last = start_c;
                let outcome = loop {
                    if let Some(c) = last {
                        if c <= idle + g.spec.margin_c {
                            break WaitOutcome::Reached;
                        }
                    }
                    if stop.load(Ordering::Relaxed) {
                        break WaitOutcome::Stopped;
                    }
                    if waited() >= timeout {
                        // A stream that lagged past the timeout still read: the latest
                        // reading, however old, is the temperature known at the end.
                        last = last.or_else(|| g.reading(target_index, 0));
                        break if last.is_some() {
                            WaitOutcome::TimedOut
                        } else {
                            WaitOutcome::NoReading
                        };
                    }
                    let left = timeout.saturating_sub(waited());
                    std::thread::sleep(LOOK.min(hostd_records::clock::real_duration(left)));
                    last = g.reading(target_index, since).or(last);
                    start_c = start_c.or(last);
                };
                (outcome, last, Some(idle))
            }
        };
        let wait = GateWait {
            target: g.targets[target_index].clone(),
            phase: step.phase.clone(),
            index: step.index,
            start_ns,
            waited_s: waited().as_secs_f64(),
            outcome,
            idle_c: idle,
            start_c,
            end_c,
        };
        tracing::info!(
            target = %wait.target,
            "temperature gate before {} #{}: {:?} after {:.1} s",
            wait.phase,
            wait.index,
            wait.outcome,
            wait.waited_s
        );
        g.waits.lock().unwrap_or_else(|e| e.into_inner()).push(wait);
    }
}

impl TemperatureGatePart {
    /// What the manifest says about the gate (its settings; the idle temperatures once read).
    fn section(&self) -> Value {
        let g = &self.0;
        json!({
            "source": g.spec.source,
            "margin_c": g.spec.margin_c,
            "timeout_s": g.spec.timeout_s,
            "at": g.spec.at,
            "given_idle_c": g.spec.idle_c,
            "default_for_diskmark": g.defaulted,
            "target": match g.spec.source {
                GateSource::Probe => Some(g.targets[g.probed].clone()),
                GateSource::Drive => None,
            },
        })
    }
}

/// The closing lines: per target, how many steps waited, for how long, how many timed out.
pub fn text(waits: &[GateWait], spec: &TemperatureGate) -> Vec<String> {
    let mut targets: Vec<&str> = waits.iter().map(|w| w.target.as_str()).collect();
    targets.dedup();
    targets
        .into_iter()
        .map(|t| {
            let mine: Vec<&GateWait> = waits.iter().filter(|w| w.target == t).collect();
            let count = |o: WaitOutcome| mine.iter().filter(|w| w.outcome == o).count();
            let waited: f64 = mine.iter().map(|w| w.waited_s).sum();
            let longest = mine.iter().map(|w| w.waited_s).fold(0.0, f64::max);
            let idle = mine
                .iter()
                .find_map(|w| w.idle_c)
                .map_or("unknown".to_string(), |c| format!("{c:.1} °C"));
            let source = match spec.source {
                GateSource::Probe => "enclosure",
                GateSource::Drive => "drive",
            };
            format!(
                "{t} temperature gate ({source} within {} °C of idle {idle}, timeout {} s): {} steps held, waited {waited:.1} s in all (longest {longest:.1} s); {} reached, {} timed out{}",
                spec.margin_c,
                spec.timeout_s,
                mine.len(),
                count(WaitOutcome::Reached) + count(WaitOutcome::IdleMeasured),
                count(WaitOutcome::TimedOut),
                match count(WaitOutcome::NoReading) {
                    0 => String::new(),
                    n => format!(", {n} without a reading"),
                }
            )
        })
        .collect()
}

impl RunPart for TemperatureGatePart {
    fn name(&self) -> &str {
        NAME
    }

    fn stage(&self) -> Stage {
        Stage::Enrich
    }

    fn probe_feed(&mut self) -> Option<ProbeFeed> {
        if self.0.spec.source != GateSource::Probe {
            return None;
        }
        let inner = Arc::clone(&self.0);
        Some(Box::new(move |data: ProbeData<'_>| {
            if let ProbeData::Samples(samples) = data {
                if let Some(r) = samples
                    .iter()
                    .rev()
                    .find_map(|s| s.enclosure_temp_c.map(|c| (s.time_ns, c)))
                {
                    *inner.probe_c.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                }
            }
            Ok(())
        }))
    }

    fn drive_feed(&mut self) -> Option<DriveFeed> {
        if self.0.spec.source != GateSource::Drive {
            return None;
        }
        let inner = Arc::clone(&self.0);
        Some(Box::new(move |data: DriveData<'_>| {
            if let DriveData::Reading(r) = data {
                if let Some(c) = r.temperature_c {
                    let mut latest = inner.drive_c.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some(slot) = latest.get_mut(r.target_index) {
                        *slot = Some((r.time_ns, c));
                    }
                }
            }
            Ok(())
        }))
    }

    fn start(&mut self, _run: &mut hostd_store::RunStart<'_>) -> anyhow::Result<Option<Value>> {
        Ok(Some(self.section()))
    }

    fn finish(&mut self, records: &mut RunRecords<'_>) -> anyhow::Result<()> {
        let waits = self
            .0
            .waits
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let mut section = self.section();
        let idle: Vec<Value> = self
            .0
            .targets
            .iter()
            .zip(self.0.idle.lock().unwrap_or_else(|e| e.into_inner()).iter())
            .map(|(label, c)| json!({ "target": label, "idle_c": c }))
            .collect();
        section["idle"] = json!(idle);
        section["steps_held"] = json!(waits.len());
        section["timed_out"] = json!(waits
            .iter()
            .filter(|w| w.outcome == WaitOutcome::TimedOut)
            .count());
        section["waited_s"] = json!(waits.iter().map(|w| w.waited_s).sum::<f64>());
        records.manifest.extra.insert(NAME.into(), section);
        records.summary.extra.insert(
            NAME.into(),
            json!({ "waits": waits, "text": text(&waits, &self.0.spec) }),
        );
        // For events.json and the report (Stage::Analyse reads them from here).
        records.data.gate_waits = waits;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::fresh;

    #[test]
    fn a_reading_from_before_the_gate_or_not_yet_aligned_is_not_taken() {
        let since = 1_000_000_000;
        assert_eq!(fresh(Some((since - 1, 50.0)), since), None);
        assert_eq!(fresh(Some((0, 50.0)), 0), None);
        assert_eq!(fresh(None, since), None);
        assert_eq!(fresh(Some((since, 44.0)), since), Some(44.0));
        assert_eq!(fresh(Some((since + 5, 43.0)), since), Some(43.0));
    }
}
