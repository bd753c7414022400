//! The `sim:SCENARIO[@TARGET][*SCALE]` target backend: plays one target of a scenario
//! through the real run pipeline in real (optionally accelerated) time, and reports the
//! device activity the probe simulator's `load` follows.
//!
//! - `SCENARIO`: a built-in scenario name or a TOML path; `@TARGET` picks one of its targets
//!   (default: its probed target); `*SCALE` plays SCALE× faster than real time (default 1).
//! - File sizes come from the run's profile; each file's rate follows the scenario's stage
//!   at that point (bytes moved by this target, or time since another target finished).
//! - Times recorded are the modelled drive's: a run with targets played SCALE× faster
//!   records on a clock that plays SCALE× faster too ([`hostd_records::clock::play_faster`],
//!   which `hostd run` starts from [`playback_factor`]), so recorded times, rates and lags
//!   are the scenario's while the run takes 1/SCALE of the time. Start the probe simulator
//!   with the same `--time-scale` ([`probe_sim_args`]).
//! - Targets of one scenario in one run share a clock (`after_target_done` stages).

use crate::model::{DeviceModel, Scenario, StagePlayer, TargetSpec as ScenarioTarget};
use hostd_records::TargetInfo;
use hostd_workload::backend::{BackendRegistry, StepContext, StepError, StepOutput, TargetBackend};
use hostd_workload::jobloop::JobOutcome;
use hostd_workload::plan::TargetPlan;
use hostd_workload::step::{Capacity, Step};
use hostd_workload::TargetSpec;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Virtual time step of the stage integration, s.
const STEP_S: f64 = 0.001;
/// Idle time constants before a thermal-plateau scenario starts (see `needs_settle`).
const SETTLE_TAUS: f64 = 5.0;
/// A throttle entered at `until_temp_c` ends when the enclosure has cooled this much below it.
const THERMAL_HYSTERESIS_C: f64 = 2.0;
/// Longest single sleep (host time), so a stop request is seen quickly.
const MAX_SLEEP: Duration = Duration::from_millis(50);
/// Virtual time between two progress points of a file, s (the byte counters are sampled
/// every 100 ms of record time).
const PROGRESS_STEP_S: f64 = 0.01;

/// A point of a file's playback: at virtual time `t` the file has moved `done` bytes; a
/// `load` is the device activity from then on.
struct Point {
    t: f64,
    done: f64,
    load: Option<f64>,
}

/// A parsed `sim:` location.
#[derive(Debug, Clone, PartialEq)]
pub struct SimLocation {
    /// Scenario name or path.
    pub scenario: String,
    /// Scenario target name, if given.
    pub target: Option<String>,
    /// Speed-up over real time.
    pub scale: f64,
}

impl SimLocation {
    /// Parses `SCENARIO[@TARGET][*SCALE]`.
    pub fn parse(text: &str) -> anyhow::Result<SimLocation> {
        let (rest, scale) = match text.rsplit_once('*') {
            Some((r, s)) => {
                let v: f64 = s
                    .parse()
                    .map_err(|_| anyhow::anyhow!("sim:{text}: time scale `{s}` is not a number"))?;
                anyhow::ensure!(
                    v > 0.0 && v <= 1000.0,
                    "sim:{text}: time scale must be in (0, 1000]"
                );
                (r, v)
            }
            None => (text, 1.0),
        };
        let (scenario, target) = match rest.split_once('@') {
            Some((s, t)) => (s.to_string(), Some(t.to_string())),
            None => (rest.to_string(), None),
        };
        anyhow::ensure!(!scenario.is_empty(), "sim:{text}: no scenario name");
        Ok(SimLocation {
            scenario,
            target,
            scale,
        })
    }
}

/// The one playback factor of a run whose targets are `target_texts` (as on the command
/// line): the `*SCALE` of its `sim:` targets when it is not 1, which the run's records then
/// play at ([`hostd_records::clock::play_faster`]). None when every target plays in real
/// time. An error when simulated targets play at different factors, or one played faster
/// shares the run with a real target (one run has one clock: the real target's figures
/// would be scaled too).
pub fn playback_factor(target_texts: &[String]) -> anyhow::Result<Option<f64>> {
    let mut factor: Option<(f64, &str)> = None;
    let mut real: Option<&str> = None;
    for text in target_texts {
        let Some(body) = text.strip_prefix("sim:") else {
            real.get_or_insert(text);
            continue;
        };
        let scale = SimLocation::parse(strip_mode(body))?.scale;
        match factor {
            Some((f, other)) if f != scale => anyhow::bail!(
                "--target {other} plays {f}× faster but --target {text} {scale}×: a run has one clock, so its simulated targets play at one factor"
            ),
            _ => factor = Some((scale, text)),
        }
    }
    let Some((f, sim)) = factor.filter(|(f, _)| *f != 1.0) else {
        return Ok(None);
    };
    if let Some(real) = real {
        anyhow::bail!(
            "--target {sim} plays {f}× faster, --target {real} in real time: a run has one clock (its records would be on the simulated drive's); run them separately, or the simulated one at ×1"
        );
    }
    Ok(Some(f))
}

/// A `sim:` target text without its trailing `:write`, `:read` or `:rw`.
fn strip_mode(body: &str) -> &str {
    ["write", "read", "rw"]
        .iter()
        .find_map(|m| body.strip_suffix(&format!(":{m}")))
        .unwrap_or(body)
}

/// Registers the `sim` scheme.
pub fn register(registry: &mut BackendRegistry) {
    registry.register(
        "sim",
        Box::new(|spec, index, opts| {
            Ok(Box::new(SimBackend::open(spec, index, &opts.run_id)?) as Box<dyn TargetBackend>)
        }),
    );
}

/// The host port the probe simulator models where the scenario gives none (or no target is
/// simulated): a Type-C port advertising 3.0 A, 15 W at 5 V, more than any drive of the
/// scenarios draws, so it holds nothing back. The simulated probe then reads its port as a
/// probe that senses CC does, and the run knows its budget.
pub const SIM_PORT_CURRENT_A: f64 = 3.0;

/// The probe simulator's flags for a run whose targets are `target_texts` (as on the
/// command line): the first `sim:` target's device model, its time scale and seed; the host
/// port [`SIM_PORT_CURRENT_A`] where the scenario models none, or alone when no target is
/// simulated.
pub fn probe_sim_args(target_texts: &[String]) -> anyhow::Result<Vec<String>> {
    let default_port = || {
        vec![
            "--port-current-a".to_string(),
            SIM_PORT_CURRENT_A.to_string(),
        ]
    };
    let Some(text) = target_texts.iter().find(|t| t.starts_with("sim:")) else {
        return Ok(default_port());
    };
    let loc = SimLocation::parse(strip_mode(text.trim_start_matches("sim:")))?;
    let sc = playable(&loc.scenario)?;
    let mut args = sc.device.probe_sim_args();
    if sc.device.port_current_a.is_none() {
        args.extend(default_port());
    }
    args.extend([
        "--time-scale".to_string(),
        loc.scale.to_string(),
        "--seed".to_string(),
        sc.seed.to_string(),
    ]);
    Ok(args)
}

/// Scenario `name` if a `sim:` target can play it: one whose port's budget changes mid-run,
/// whose VBUS collapses or that logs a line of the OS's log is `scenario-gen`'s alone
/// ([`Scenario::scenario_gen_only`]).
fn playable(name: &str) -> anyhow::Result<Scenario> {
    let sc = crate::load(name)?;
    if let Some(why) = sc.scenario_gen_only() {
        anyhow::bail!(
            "sim:{name}: scenario {} {why}: scenario-gen plays it",
            sc.name
        );
    }
    Ok(sc)
}

/// State shared by the targets of one scenario in one run.
#[derive(Default)]
struct Shared {
    /// Record ns at virtual time 0 (the first measured step of any of them).
    origin_ns: OnceLock<u64>,
    /// Virtual s at which each scenario target finished its measured steps.
    done_s: Mutex<HashMap<String, f64>>,
}

fn shared(key: &str) -> Arc<Shared> {
    static ALL: OnceLock<Mutex<HashMap<String, Arc<Shared>>>> = OnceLock::new();
    let mut map = ALL
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    map.entry(key.to_string()).or_default().clone()
}

/// One simulated target.
pub struct SimBackend {
    spec: TargetSpec,
    loc: SimLocation,
    device: DeviceModel,
    target: ScenarioTarget,
    probed: bool,
    shared: Arc<Shared>,
    rng: rand_chacha::ChaCha8Rng,
    stage: usize,
    player: StagePlayer,
    cum_bytes: f64,
    cursor_s: f64,
    temp_c: f64,
    hold_load: Option<f64>,
    measured_total: usize,
    measured_done: usize,
    /// SLC cache left, bytes (targets with `slc_recovery_tau_s`).
    cache_left: f64,
    /// The current step's paced rate, virtual bytes/s.
    pace_bps: Option<f64>,
    /// The runner said the target idles until the next step: for a planned record time, or
    /// (None) for as long as the host says.
    idle_pending: Option<Option<Duration>>,
}

impl SimBackend {
    /// Opens `sim:…` for target `spec` (index `index`) of run `run_id`.
    pub fn open(spec: &TargetSpec, index: usize, run_id: &str) -> anyhow::Result<SimBackend> {
        let loc = SimLocation::parse(&spec.location)?;
        let playing = hostd_records::clock::playback().map_or(1.0, |p| p.factor);
        anyhow::ensure!(
            playing == loc.scale,
            "sim:{}: plays {}× faster but the run's records play {playing}× faster (hostd run starts the playback; see playback_factor)",
            spec.location,
            loc.scale
        );
        let sc: Scenario = playable(&loc.scenario)?;
        let name = loc
            .target
            .clone()
            .unwrap_or_else(|| sc.probe_target.clone());
        let target = sc
            .targets
            .iter()
            .find(|t| t.name == name)
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = sc.targets.iter().map(|t| t.name.as_str()).collect();
                anyhow::anyhow!(
                    "sim:{}: scenario {} has no target `{name}` (it has {})",
                    spec.location,
                    sc.name,
                    names.join(", ")
                )
            })?;
        let scenario_index = sc.targets.iter().position(|t| t.name == name).unwrap_or(0);
        let mut player = StagePlayer::new(sc.seed.wrapping_add(scenario_index as u64));
        player.enter(&target, 0, 0.0, 0.0);
        Ok(SimBackend {
            player,
            spec: spec.clone(),
            device: sc.device,
            probed: target.name == sc.probe_target,
            shared: shared(&format!("{run_id}/{}*{}", loc.scenario, loc.scale)),
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(
                sc.seed.wrapping_mul(7919).wrapping_add(index as u64),
            ),
            temp_c: sc.device.start_temp_c(),
            target,
            loc,
            stage: 0,
            cum_bytes: 0.0,
            cursor_s: 0.0,
            hold_load: None,
            measured_total: 0,
            measured_done: 0,
            cache_left: 0.0,
            pace_bps: None,
            idle_pending: None,
        })
        .map(|mut b| {
            b.cache_left = b.cache_size();
            b
        })
    }

    /// A thermal scenario (a thermal-plateau stage, or a change whose true cause is
    /// thermal) needs the simulator's temperature to start where this model does (the idle
    /// equilibrium), not at ambient.
    fn needs_settle(&self) -> bool {
        self.probed
            && self.device.initial_temp_c.is_none()
            && self
                .target
                .stages
                .iter()
                .any(|s| s.hold_temperature || s.cause.as_deref() == Some("thermal"))
    }

    fn load(&self) -> f64 {
        let st = &self.target.stages[self.stage];
        let load = if st.hold_temperature {
            self.hold_load.unwrap_or(1.0)
        } else {
            st.load.unwrap_or(1.0)
        };
        // A paced write keeps the device busy only for its share of the stage's rate.
        match self.pace_bps {
            Some(p) => load * (p / (st.rate_gbps * 1e9)).min(1.0),
            None => load,
        }
    }

    /// The SLC cache of a target that models one, bytes (0 otherwise).
    fn cache_size(&self) -> f64 {
        match (
            self.target.slc_recovery_tau_s,
            self.target.stages[0].until_gb,
        ) {
            (Some(_), Some(g)) => g * 1e9,
            _ => 0.0,
        }
    }

    /// Idle for `gap_s` virtual seconds: the enclosure cools toward its idle
    /// equilibrium and an SLC cache refills (back to the first stage).
    fn idle(&mut self, gap_s: f64) {
        if gap_s <= 0.0 {
            return;
        }
        let eq = self.device.equilibrium_c(self.device.idle_w);
        self.temp_c = eq + (self.temp_c - eq) * (-gap_s / self.device.tau_s).exp();
        if let Some(tau) = self.target.slc_recovery_tau_s {
            let size = self.cache_size();
            self.cache_left = size - (size - self.cache_left) * (-gap_s / tau).exp();
            if self.stage != 0 && self.cache_left > 0.0 {
                self.stage = 0;
                self.player.enter(&self.target, 0, self.cum_bytes, 0.0);
            }
        }
    }

    fn advance_stage(&mut self, t: f64) {
        self.stage += 1;
        self.player
            .enter(&self.target, self.stage, self.cum_bytes, t);
        if self.target.stages[self.stage].hold_temperature {
            self.hold_load = Some(self.device.load_holding(self.temp_c));
        }
    }

    /// Plays `bytes` from virtual time `start_s`; returns the end and the points of the
    /// playback (progress every 10 ms of virtual time, and where the activity changed).
    fn play(&mut self, bytes: f64, start_s: f64) -> (f64, Vec<Point>) {
        let u: f64 = self.rng.gen_range(-1.0..=1.0);
        let mut t = start_s;
        let mut left = bytes;
        let mut points = vec![Point {
            t,
            done: 0.0,
            load: Some(self.load()),
        }];
        let mut last_point = t;
        let k = 1.0 - (-STEP_S / self.device.tau_s).exp();
        while left > 0.5 {
            let st = &self.target.stages[self.stage];
            let last = self.stage + 1 >= self.target.stages.len();
            if !last {
                if let Some(other) = &st.after_target_done {
                    let done = self
                        .shared
                        .done_s
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .get(other)
                        .copied();
                    if done.is_some_and(|d| t >= d + st.lag_s) {
                        self.advance_stage(t);
                        points.push(Point {
                            t,
                            done: bytes - left,
                            load: Some(self.load()),
                        });
                        continue;
                    }
                }
            }
            // A throttle entered by temperature ends once the enclosure has cooled.
            let cooled = self.stage.checked_sub(1).is_some_and(|p| {
                self.target.stages[p]
                    .until_temp_c
                    .is_some_and(|c| self.temp_c < c - THERMAL_HYSTERESIS_C)
            });
            if cooled {
                self.stage -= 1;
                self.player
                    .enter(&self.target, self.stage, self.cum_bytes, t);
                points.push(Point {
                    t,
                    done: bytes - left,
                    load: Some(self.load()),
                });
                continue;
            }
            if !last && st.until_temp_c.is_some_and(|c| self.temp_c >= c) {
                self.advance_stage(t);
                points.push(Point {
                    t,
                    done: bytes - left,
                    load: Some(self.load()),
                });
                continue;
            }
            let mut rate = self.player.rate_bps(&self.target, self.cum_bytes, t, u)
                * self.device.port_rate_factor(self.load());
            if let Some(p) = self.pace_bps {
                rate = rate.min(p);
            }
            let cache = self.target.slc_recovery_tau_s.is_some() && self.stage == 0;
            let to_boundary = match st.until_gb {
                Some(_) if cache && !last => self.cache_left.max(0.0),
                Some(g) if !last => (g * 1e9 - self.cum_bytes).max(0.0),
                _ => f64::INFINITY,
            };
            let take = left.min(rate * STEP_S).min(to_boundary);
            t += take / rate;
            left -= take;
            self.cum_bytes += take;
            if cache {
                self.cache_left -= take;
            }
            let p = self.device.delivered_w(self.load());
            self.temp_c +=
                (self.device.equilibrium_c(p) - self.temp_c) * k * (take / rate / STEP_S);
            if to_boundary.is_finite() && take >= to_boundary - 0.5 {
                self.advance_stage(t);
                points.push(Point {
                    t,
                    done: bytes - left,
                    load: Some(self.load()),
                });
            } else if t - last_point >= PROGRESS_STEP_S {
                points.push(Point {
                    t,
                    done: bytes - left,
                    load: None,
                });
                last_point = t;
            }
        }
        // The last bytes' point, so the per-file overhead after it moves nothing.
        if points.last().is_some_and(|p| p.t < t) {
            points.push(Point {
                t,
                done: bytes,
                load: None,
            });
        }
        (t + self.target.overhead_ms * 1e-3, points)
    }

    /// The record time of virtual time `virtual_s` (the records play at the scenario's pace).
    fn record_ns(origin: u64, virtual_s: f64) -> u64 {
        origin + (virtual_s * 1e9) as u64
    }

    /// Sleeps until record time `until_ns`; false if a stop was requested.
    fn sleep_until(until_ns: u64, ctx: &StepContext<'_>) -> bool {
        loop {
            if ctx.stop.load(Ordering::Relaxed) {
                return false;
            }
            let now = hostd_workload::unix_ns();
            if now >= until_ns {
                return true;
            }
            let left = hostd_records::clock::real_duration(Duration::from_nanos(until_ns - now));
            std::thread::sleep(left.min(MAX_SLEEP));
        }
    }
}

impl TargetBackend for SimBackend {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            device_model: Some(format!(
                "simulated: scenario {} target {}{}",
                self.loc.scenario,
                self.target.name,
                if self.probed { " (probed)" } else { "" }
            )),
            capacity_bytes: Some(4_000_000_000_000),
            free_bytes: Some(4_000_000_000_000),
            // The run's summary states it once, with the host time the run took.
            engine_note: (self.loc.scale != 1.0)
                .then(|| hostd_records::clock::Playback::note(self.loc.scale)),
            ..TargetInfo::simulated(
                &self.spec.label,
                self.spec.mode.as_str(),
                &self.spec.location,
            )
        }
    }

    fn capacity(&self) -> Option<Capacity> {
        Some(Capacity {
            total: 4_000_000_000_000,
            available: 4_000_000_000_000,
        })
    }

    fn storage_key(&self) -> Option<String> {
        Some(format!("sim:{}", self.spec.location))
    }

    fn prepare(&mut self, plan: &TargetPlan) -> anyhow::Result<()> {
        // An adaptive program's steps are not known in advance.
        self.measured_total = if plan.program.is_some() {
            usize::MAX
        } else {
            plan.measured.len()
        };
        Ok(())
    }

    fn reports_activity(&self) -> bool {
        true
    }

    fn idle_started(&mut self, planned: Option<Duration>) {
        self.idle_pending = Some(planned);
    }

    fn counts_on_plan(&self) -> bool {
        true
    }

    fn run_step(&mut self, step: &Step, ctx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let bytes = step.job.bytes;
        if step.phase == "prepare" {
            return Ok(StepOutput {
                outcome: JobOutcome {
                    bytes,
                    verify: None,
                    late_ops: 0,
                    interrupted: false,
                    ..Default::default()
                },
                timing: None,
                direct_io: true,
            });
        }
        if self.measured_done == 0 && self.needs_settle() {
            // Let the probe simulator's enclosure reach the idle equilibrium this model
            // starts from (the simulator may start at ambient): 5 time constants idle.
            ctx.activity(0.0);
            let settle_ns = (SETTLE_TAUS * self.device.tau_s * 1e9) as u64;
            if !Self::sleep_until(hostd_workload::unix_ns() + settle_ns, ctx) {
                return Ok(StepOutput {
                    outcome: JobOutcome {
                        bytes: 0,
                        verify: None,
                        late_ops: 0,
                        interrupted: true,
                        ..Default::default()
                    },
                    timing: None,
                    direct_io: true,
                });
            }
        }
        let now = hostd_workload::unix_ns();
        let origin = *self.shared.origin_ns.get_or_init(|| now);
        // Files lie on the model's own timeline: each starts where the one before ended,
        // whenever the host got round to it (a late thread catches up, as `sleep_until`
        // returns at once), so the host's scheduling leaves no gap in the records. Only a
        // pause asked for moves the start: a program's by its planned length, a gate's
        // (of unknown length) to now.
        let start_s = match self.idle_pending.take() {
            None => self.cursor_s,
            Some(Some(pause)) => self.cursor_s + pause.as_secs_f64(),
            Some(None) => self
                .cursor_s
                .max((now.saturating_sub(origin)) as f64 * 1e-9),
        };
        self.idle(start_s - self.cursor_s);
        self.pace_bps = step
            .job
            .pace_ns
            .map(|ns| step.job.block_size as f64 * 1e9 / ns.max(1) as f64);
        // The scenario's stages play on its phase, and on any step of the same
        // direction with another name (an adaptive program's `fill`, `pace-50%`).
        let plays = step.phase == self.target.phase
            || step.job.rw.is_write() == (self.target.phase != "read");
        let (end_s, points) = if plays {
            self.play(bytes as f64, start_s)
        } else {
            // Other phases (read-back) at the first stage's rate, no stages.
            let st = &self.target.stages[0];
            let rate = st.rate_gbps * 1e9 * (1.0 + self.rng.gen_range(-1.0..=1.0) * st.jitter);
            let d = bytes as f64 / rate;
            let steps = (d / PROGRESS_STEP_S).ceil().max(1.0) as usize;
            let points = (0..=steps)
                .map(|i| Point {
                    t: start_s + d * i as f64 / steps as f64,
                    done: bytes as f64 * i as f64 / steps as f64,
                    load: (i == 0).then(|| st.load.unwrap_or(1.0)),
                })
                .collect();
            (start_s + d + self.target.overhead_ms * 1e-3, points)
        };
        // Count bytes as they move, so the 100 ms byte counters see stalls inside a file;
        // the plan lets them count on time when this thread wakes late (it stays until the
        // next step's: the runner's sampler waits for a late thread's next plan).
        let before = ctx.progress.load(Ordering::Relaxed);
        ctx.schedule(
            points
                .iter()
                .map(|p| {
                    let done = (p.done.round() as u64).min(bytes);
                    (Self::record_ns(origin, p.t), before + done)
                })
                .chain([(Self::record_ns(origin, end_s), before + bytes)])
                .collect(),
        );
        let mut interrupted = false;
        let mut counted = 0u64;
        for p in points {
            if !Self::sleep_until(Self::record_ns(origin, p.t), ctx) {
                interrupted = true;
                break;
            }
            let done = (p.done.round() as u64).min(bytes);
            ctx.progress
                .fetch_add(done - counted.min(done), Ordering::Relaxed);
            counted = counted.max(done);
            if let Some(load) = p.load {
                ctx.activity(load);
            }
        }
        interrupted |= !Self::sleep_until(Self::record_ns(origin, end_s), ctx);
        if interrupted {
            // What was counted is what moved.
            ctx.unschedule();
        }
        if !interrupted && counted < bytes {
            ctx.progress.fetch_add(bytes - counted, Ordering::Relaxed);
        }
        self.cursor_s = end_s;
        self.measured_done += 1;
        if self.measured_done >= self.measured_total || interrupted {
            self.shared
                .done_s
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(self.target.name.clone(), end_s);
            ctx.activity(0.0);
        }
        Ok(StepOutput {
            outcome: JobOutcome {
                bytes,
                verify: None,
                late_ops: 0,
                interrupted,
                ..Default::default()
            },
            timing: Some((
                Self::record_ns(origin, start_s),
                Self::record_ns(origin, end_s),
            )),
            direct_io: true,
        })
    }

    fn cleanup(&mut self, _keep: bool) -> anyhow::Result<String> {
        Ok(String::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_parses_scenario_target_and_scale() {
        let l = SimLocation::parse("hub-www-contention@A*20").unwrap();
        assert_eq!(
            (l.scenario.as_str(), l.target.as_deref(), l.scale),
            ("hub-www-contention", Some("A"), 20.0)
        );
        assert_eq!(SimLocation::parse("x5-thermal").unwrap().scale, 1.0);
        assert!(SimLocation::parse("x5*fast")
            .unwrap_err()
            .to_string()
            .contains("not a number"));
    }

    #[test]
    fn probe_sim_args_carry_the_device_model_and_scale() {
        let a = probe_sim_args(&["/mnt/x".into(), "sim:x5-thermal*10:write".into()]).unwrap();
        let s = a.join(" ");
        assert!(
            s.contains("--idle-w 2.9") && s.contains("--tau-s 20") && s.contains("--time-scale 10"),
            "{s}"
        );
        // A scenario without a port, or no simulated target: the simulator's 3.0 A port.
        assert!(s.contains("--port-current-a 3"), "{s}");
        assert_eq!(
            probe_sim_args(&["/mnt/x".into()]).unwrap(),
            ["--port-current-a", "3"]
        );
        // A scenario's own port is kept.
        let own = probe_sim_args(&["sim:tb-ssd-4w5-port*5".into()])
            .unwrap()
            .join(" ");
        assert_eq!(own.matches("--port-current-a").count(), 1, "{own}");
        assert!(own.contains("--port-current-a 0.9"), "{own}");
    }

    #[test]
    fn a_scenario_whose_port_changes_or_collapses_mid_run_is_refused_as_a_sim_target() {
        for (name, why) in [
            ("tb-ssd-port-change", "port_current_a"),
            ("tb-ssd-long-cable", "vbus_collapse"),
        ] {
            let e = probe_sim_args(&[format!("sim:{name}*10:write")])
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("scenario-gen plays it") && e.contains(why),
                "{e}"
            );
        }
    }

    #[test]
    fn a_run_plays_at_one_factor_and_never_beside_a_real_target() {
        let f = |targets: &[&str]| {
            playback_factor(&targets.iter().map(|t| t.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(
            f(&["sim:x5-thermal*5:write", "sim:steady*5:write"]).unwrap(),
            Some(5.0)
        );
        assert_eq!(f(&["/mnt/x:write", "sim:steady:write"]).unwrap(), None);
        let mixed = f(&["sim:x5-thermal*5", "sim:steady*20"]).unwrap_err();
        assert!(mixed.to_string().contains("one factor"), "{mixed}");
        let real = f(&["sim:x5-thermal*5:write", "/mnt/x:write"]).unwrap_err();
        assert!(real.to_string().contains("real time"), "{real}");
    }
}
