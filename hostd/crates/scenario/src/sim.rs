//! Playing a scenario in virtual time: which files each target moves when, the true
//! throughput changes, and the probed device's activity over time.

use crate::model::{Scenario, Stage, StagePlayer};
use hostd_records::FileRecord;
use rand::{Rng, SeedableRng};

/// Virtual time step of the simulation, ns (1 ms: 2 MB at 2 GB/s).
const STEP_NS: i64 = 1_000_000;

/// Host Unix ns the simulated run starts at (2026-09-21 UTC; fixed for repeatability).
pub const BASE_UNIX_NS: i64 = 1_790_000_000_000_000_000;

/// A true change of throughput (a stage boundary).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TruthEvent {
    /// Target.
    pub target: String,
    /// Phase.
    pub phase: String,
    /// "drop" or "recovery".
    pub kind: String,
    /// Bytes of the target moved before the change.
    pub onset_bytes: u64,
    /// ns since run start.
    pub onset_ns: i64,
    /// Cause named by the scenario.
    pub cause: String,
    /// All bytes the target moves in the run (the 2 % tolerance's base).
    pub total_bytes: u64,
    /// Gradual change: bytes at which the new level is reached.
    pub settle_bytes: Option<u64>,
    /// Stall: how many complete stalls the target went through.
    pub count: Option<usize>,
}

/// Interval of the simulated byte counters, ns (as `hostd run` samples them).
pub const COUNTER_NS: i64 = 100_000_000;

/// From `t_ns` on (since run start) the probed device works at `load` (0..1).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct LoadStep {
    /// ns since run start.
    pub t_ns: i64,
    /// Activity 0..1.
    pub load: f64,
}

/// From `t_ns` on (since run start) the host port advertises `current_a` (a stage's
/// `port_current_a`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PortStep {
    /// ns since run start.
    pub t_ns: i64,
    /// Advertised current, A.
    pub current_a: f64,
}

/// The host port's VBUS collapsed at the probe from `t_ns` to `until_ns` (since run start)
/// to `vbus_v` (a stage's `vbus_collapse`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Collapse {
    /// ns since run start.
    pub t_ns: i64,
    /// End, ns since run start.
    pub until_ns: i64,
    /// VBUS at the probe meanwhile, V.
    pub vbus_v: f64,
}

/// A line the OS logged about a target's link (a stage's `os_log`).
#[derive(Debug, Clone, PartialEq)]
pub struct Logged {
    /// ns since run start.
    pub t_ns: i64,
    /// The target whose link it names.
    pub target: String,
    /// What it says happened.
    pub kind: hostd_records::os_log::OsLogKind,
    /// The line.
    pub line: String,
}

/// What entering stages did at the port and in the OS's log, in time order.
#[derive(Debug, Clone, Default, PartialEq)]
struct Marks {
    port: Vec<PortStep>,
    collapses: Vec<Collapse>,
    os_log: Vec<Logged>,
}

/// Everything a scenario produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Files in order of completion (host Unix ns from [`BASE_UNIX_NS`], as `files.csv`).
    pub files: Vec<FileRecord>,
    /// True events in onset order.
    pub truth: Vec<TruthEvent>,
    /// The probed device's activity over time (first step at 0).
    pub load: Vec<LoadStep>,
    /// End of the last file, ns since run start.
    pub end_ns: i64,
    /// Per target (name): (ns since run start, cumulative bytes) every 100 ms.
    pub counters: Vec<(String, Vec<(i64, u64)>)>,
    /// The port's advertisement changes, in time order (empty: the device's port throughout).
    pub port: Vec<PortStep>,
    /// The port's VBUS collapses, in time order.
    pub collapses: Vec<Collapse>,
    /// The lines the OS logged, in time order.
    pub os_log: Vec<Logged>,
}

struct Current {
    start_ns: i64,
    bytes: u64,
    bytes_left: f64,
    overhead_left_ns: f64,
    jitter_u: f64,
}

struct TargetState {
    sizes: Vec<u64>,
    next_file: usize,
    stage: usize,
    cum: f64,
    current: Option<Current>,
    done_ns: Option<i64>,
    hold_load: Option<f64>,
    player: StagePlayer,
    stall_truth: Option<usize>,
}

fn stage_load(st: &Stage, hold: Option<f64>) -> f64 {
    if st.hold_temperature {
        hold.unwrap_or(1.0)
    } else {
        st.load.unwrap_or(1.0)
    }
}

/// File sizes for a target: uniform in [min, max] MB until the total is reached.
fn draw_sizes(rng: &mut impl Rng, min_mb: f64, max_mb: f64, total_gb: f64) -> Vec<u64> {
    let total = (total_gb * 1e9) as u64;
    let mut v = Vec::new();
    let mut sum = 0u64;
    while sum < total {
        let b = (rng.gen_range(min_mb..=max_mb) * 1e6) as u64;
        let b = b.min(total - sum).max(1);
        sum += b;
        v.push(b);
    }
    v
}

/// Exactly `n` file sizes, uniform in [min, max] MB, scaled to sum to the total.
fn draw_count(rng: &mut impl Rng, n: usize, min_mb: f64, max_mb: f64, total_gb: f64) -> Vec<u64> {
    let raw: Vec<f64> = (0..n.max(1))
        .map(|_| rng.gen_range(min_mb..=max_mb))
        .collect();
    let k = total_gb * 1e9 / raw.iter().sum::<f64>();
    raw.into_iter().map(|r| ((r * k) as u64).max(1)).collect()
}

/// Plays the scenario; the same scenario and seed always give the same trace.
pub fn simulate(sc: &Scenario) -> Trace {
    let dev = &sc.device;
    let mut rngs: Vec<rand_chacha::ChaCha8Rng> = (0..sc.targets.len())
        .map(|i| {
            rand_chacha::ChaCha8Rng::seed_from_u64(
                sc.seed.wrapping_mul(1_000_003).wrapping_add(i as u64),
            )
        })
        .collect();
    let mut st: Vec<TargetState> = sc
        .targets
        .iter()
        .zip(rngs.iter_mut())
        .enumerate()
        .map(|(k, (t, rng))| TargetState {
            sizes: match t.file_count {
                Some(n) => draw_count(rng, n, t.file_min_mb, t.file_max_mb, t.total_gb),
                None => draw_sizes(rng, t.file_min_mb, t.file_max_mb, t.total_gb),
            },
            next_file: 0,
            stage: 0,
            cum: 0.0,
            current: None,
            done_ns: None,
            hold_load: None,
            player: {
                let mut p = StagePlayer::new(sc.seed.wrapping_add(k as u64));
                p.enter(t, 0, 0.0, t.start_s);
                p
            },
            stall_truth: None,
        })
        .collect();
    let probe_idx = sc
        .targets
        .iter()
        .position(|t| t.name == sc.probe_target)
        .unwrap_or(0);
    let mut temp = dev.start_temp_c();
    let mut files = Vec::new();
    let mut truth = Vec::new();
    let mut load = vec![LoadStep { t_ns: 0, load: 0.0 }];
    let mut marks = Marks::default();
    let dt_s = STEP_NS as f64 * 1e-9;
    let mut t: i64 = 0;
    let mut counters: Vec<(String, Vec<(i64, u64)>)> = sc
        .targets
        .iter()
        .map(|t| (t.name.clone(), Vec::new()))
        .collect();
    while st.iter().any(|s| s.done_ns.is_none()) && t < 1_000_000 * 1_000_000_000 {
        if t % COUNTER_NS == 0 {
            for (k, s) in st.iter().enumerate() {
                if s.done_ns.is_none() {
                    counters[k].1.push((t, s.cum.round() as u64));
                }
            }
        }
        let done_at: Vec<Option<i64>> = st.iter().map(|s| s.done_ns).collect();
        for (k, spec) in sc.targets.iter().enumerate() {
            let s = &mut st[k];
            if s.done_ns.is_some() || (t as f64) < spec.start_s * 1e9 {
                continue;
            }
            let advance = |s: &mut TargetState,
                           at_ns: i64,
                           truth: &mut Vec<TruthEvent>,
                           marks: &mut Marks,
                           temp: f64| {
                // The rate the drive gets: the stage's, held by the port's budget on
                // the probed target (a drive that asks for more than it is held at it).
                let effective = |i: usize, hold: Option<f64>| {
                    let st = &spec.stages[i];
                    st.rate_gbps
                        * if k == probe_idx {
                            sc.device_in_stage(i).port_rate_factor(stage_load(st, hold))
                        } else {
                            1.0
                        }
                };
                let old_rate = effective(s.stage, s.hold_load);
                s.stage += 1;
                let new = &spec.stages[s.stage];
                s.player.enter(spec, s.stage, s.cum, at_ns as f64 * 1e-9);
                if new.hold_temperature {
                    s.hold_load = Some(dev.load_holding(temp));
                }
                if let Some(current_a) = new.port_current_a.filter(|_| k == probe_idx) {
                    marks.port.push(PortStep {
                        t_ns: at_ns,
                        current_a,
                    });
                }
                let from = |offset_s: f64| at_ns + (offset_s * 1e9) as i64;
                if let Some(c) = new.vbus_collapse.filter(|_| k == probe_idx) {
                    marks.collapses.push(Collapse {
                        t_ns: from(c.offset_s),
                        until_ns: from(c.offset_s) + (c.ms * 1e6) as i64,
                        vbus_v: c.vbus_v,
                    });
                }
                if let Some(l) = &new.os_log {
                    marks.os_log.push(Logged {
                        t_ns: from(l.offset_s),
                        target: spec.name.clone(),
                        kind: l.kind,
                        line: l.line.clone(),
                    });
                }
                let new_rate = effective(s.stage, s.hold_load);
                if new_rate == old_rate {
                    // Same level (e.g. stalls begin): no drop or recovery.
                    return;
                }
                truth.push(TruthEvent {
                    target: spec.name.clone(),
                    phase: spec.phase.clone(),
                    kind: if new_rate < old_rate {
                        "drop"
                    } else {
                        "recovery"
                    }
                    .to_string(),
                    onset_bytes: s.cum.round() as u64,
                    onset_ns: at_ns,
                    cause: new.cause.clone().unwrap_or_else(|| "unknown".to_string()),
                    total_bytes: s.sizes.iter().sum(),
                    settle_bytes: new.ramp_gb.map(|r| (s.cum + r * 1e9).round() as u64),
                    count: None,
                });
            };
            // Time-triggered stage ends.
            if let Some(other) = &spec.stages[s.stage].after_target_done {
                let oi = sc
                    .targets
                    .iter()
                    .position(|o| &o.name == other)
                    .unwrap_or(k);
                if let Some(end) = done_at[oi] {
                    if s.stage + 1 < spec.stages.len()
                        && t as f64 >= end as f64 + spec.stages[s.stage].lag_s * 1e9
                    {
                        advance(s, t, &mut truth, &mut marks, temp);
                    }
                }
            }
            let mut avail = STEP_NS as f64;
            while avail > 0.0 && s.done_ns.is_none() {
                let now = t + (STEP_NS as f64 - avail) as i64;
                if s.current.is_none() {
                    if s.next_file >= s.sizes.len() {
                        s.done_ns = Some(now);
                        break;
                    }
                    let b = s.sizes[s.next_file];
                    s.current = Some(Current {
                        start_ns: now,
                        bytes: b,
                        bytes_left: b as f64,
                        overhead_left_ns: spec.overhead_ms * 1e6,
                        jitter_u: rngs[k].gen_range(-1.0..=1.0),
                    });
                }
                let stage = &spec.stages[s.stage];
                let cur = s.current.as_mut().expect("set above");
                if cur.bytes_left > 0.0 {
                    let now_s = now as f64 * 1e-9;
                    if s.stall_truth.is_none() && s.player.stalled(now_s) {
                        s.stall_truth = Some(truth.len());
                        truth.push(TruthEvent {
                            target: spec.name.clone(),
                            phase: spec.phase.clone(),
                            kind: "stall".into(),
                            onset_bytes: s.cum.round() as u64,
                            onset_ns: now,
                            cause: "unknown".into(),
                            total_bytes: s.sizes.iter().sum(),
                            settle_bytes: None,
                            count: None,
                        });
                    }
                    // bytes per ns
                    let mut rate = s.player.rate_bps(spec, s.cum, now_s, cur.jitter_u) * 1e-9;
                    if k == probe_idx {
                        // Held at the port's budget: the rate falls in proportion.
                        rate *= sc
                            .device_in_stage(s.stage)
                            .port_rate_factor(stage_load(stage, s.hold_load));
                    }
                    let to_boundary = match stage.until_gb {
                        Some(g) if s.stage + 1 < spec.stages.len() => (g * 1e9 - s.cum).max(0.0),
                        _ => f64::INFINITY,
                    };
                    let take = cur.bytes_left.min(rate * avail).min(to_boundary);
                    avail -= take / rate;
                    cur.bytes_left -= take;
                    s.cum += take;
                    if cur.bytes_left < 0.5 {
                        cur.bytes_left = 0.0;
                    }
                    if to_boundary.is_finite() && take >= to_boundary - 0.5 {
                        let at = t + (STEP_NS as f64 - avail) as i64;
                        advance(s, at, &mut truth, &mut marks, temp);
                    }
                } else {
                    let used = cur.overhead_left_ns.min(avail);
                    cur.overhead_left_ns -= used;
                    avail -= used;
                    if cur.overhead_left_ns <= 0.0 {
                        let end = t + (STEP_NS as f64 - avail).round() as i64;
                        let mut f = FileRecord::new(
                            &spec.name,
                            &spec.phase,
                            s.next_file as u32,
                            (BASE_UNIX_NS + cur.start_ns) as u64,
                            (BASE_UNIX_NS + end.max(cur.start_ns + 1)) as u64,
                            cur.bytes,
                        );
                        f.target_index = k;
                        files.push(f);
                        s.current = None;
                        s.next_file += 1;
                    }
                }
            }
        }
        // The probed device's activity and temperature over this step.
        let ps = &st[probe_idx];
        let active = ps.current.is_some();
        let l = if active {
            stage_load(&sc.targets[probe_idx].stages[ps.stage], ps.hold_load)
        } else {
            0.0
        };
        if load.last().is_some_and(|x| (x.load - l).abs() > 1e-9) {
            load.push(LoadStep { t_ns: t, load: l });
        }
        let eq = dev.equilibrium_c(sc.device_in_stage(ps.stage).delivered_w(l));
        temp += (eq - temp) * (1.0 - (-dt_s / dev.tau_s).exp());
        t += STEP_NS;
    }
    let end_ns = files
        .iter()
        .map(|f| f.end_ns as i64 - BASE_UNIX_NS)
        .max()
        .unwrap_or(0);
    for (k, s) in st.iter().enumerate() {
        // The last sample: where the target finished.
        let done = s.done_ns.unwrap_or(end_ns);
        counters[k].1.push((done, s.cum.round() as u64));
        if let Some(i) = s.stall_truth {
            let done_s = done as f64 * 1e-9;
            truth[i].count = Some(s.player.stalls().iter().filter(|x| x.1 < done_s).count());
        }
    }
    truth.sort_by_key(|e| e.onset_ns);
    marks.collapses.sort_by_key(|c| c.t_ns);
    marks.os_log.sort_by_key(|l| l.t_ns);
    Trace {
        files,
        truth,
        load,
        end_ns,
        counters,
        port: marks.port,
        collapses: marks.collapses,
        os_log: marks.os_log,
    }
}

impl Trace {
    /// The current the port advertises at `t_ns` (since run start) when a stage changed
    /// it; None: the device's own.
    pub fn port_current_at(&self, t_ns: i64) -> Option<f64> {
        let i = self.port.partition_point(|p| p.t_ns <= t_ns);
        i.checked_sub(1).map(|i| self.port[i].current_a)
    }

    /// VBUS at the probe at `t_ns` (since run start) while the port's VBUS is collapsed.
    pub fn vbus_collapse_at(&self, t_ns: i64) -> Option<f64> {
        self.collapses
            .iter()
            .find(|c| c.t_ns <= t_ns && t_ns < c.until_ns)
            .map(|c| c.vbus_v)
    }

    /// The probed device's activity at `t_ns` (since run start).
    pub fn load_at(&self, t_ns: i64) -> f64 {
        let i = self.load.partition_point(|s| s.t_ns <= t_ns);
        if i == 0 {
            0.0
        } else {
            self.load[i - 1].load
        }
    }
}
