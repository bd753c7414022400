//! The scenario file format.

use serde::Deserialize;

/// One scenario: targets with their throughput stages, and the probed device's model.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name (file stem).
    pub name: String,
    /// What it reproduces.
    pub description: String,
    /// Seed of every random draw.
    pub seed: u64,
    /// Target the inline probe measures.
    pub probe_target: String,
    /// Power and thermal model of the probed device (also the probe simulator's flags).
    pub device: DeviceModel,
    /// Targets run at the same time.
    #[serde(rename = "target")]
    pub targets: Vec<TargetSpec>,
}

/// Device model shared with the probe simulator (contract 2 flags).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceModel {
    /// Bus voltage, V.
    pub vbus_v: f64,
    /// Power at activity 0, W.
    pub idle_w: f64,
    /// Power at activity 1, W.
    pub active_w: f64,
    /// Ambient temperature, °C.
    pub ambient_c: f64,
    /// Thermal resistance enclosure → ambient, °C/W.
    pub rth_c_per_w: f64,
    /// Thermal time constant, s.
    pub tau_s: f64,
    /// Starting enclosure temperature, °C (default: idle equilibrium).
    #[serde(default)]
    pub initial_temp_c: Option<f64>,
    /// Current the host port allows, A: its budget (`--port-current-a`). The current it
    /// advertises on CC, or with `pd_contract_v` the contract's current. None: no port model,
    /// no limit, and a probe without CC sensing.
    #[serde(default)]
    pub port_current_a: Option<f64>,
    /// VBUS of a USB PD contract at the source, V (`--pd-contract-v`); else `vbus_v`.
    #[serde(default)]
    pub pd_contract_v: Option<f64>,
    /// Cable resistance between the probe and the drive, VBUS + GND, mΩ (`--cable-mohm`).
    /// The probe plugs into the host port, so the cable's drop lies beyond it: VBUS at the
    /// probe is the port's, and the probe measures the cable's loss with the drive's power.
    #[serde(default)]
    pub cable_mohm: f64,
}

/// What the host port delivers to a drive that asks for some power.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PortDraw {
    /// Current drawn, A.
    pub current_a: f64,
    /// VBUS at the probe: the port's own (the cable's drop lies beyond the probe), V.
    pub vbus_v: f64,
    /// Power through the probe: VBUS × I, the cable's loss included, W.
    pub power_w: f64,
    /// Power reaching the drive at the cable's far end: (VBUS − I·R) × I, W.
    pub drive_w: f64,
    /// The drive asked for more than the port gives.
    pub held: bool,
    /// Reaching the drive / asked: the drive's rate falls in proportion (1 when not held).
    pub rate_factor: f64,
}

impl DeviceModel {
    /// Power at activity `load` (0..1), W.
    pub fn power_w(&self, load: f64) -> f64 {
        self.idle_w + (self.active_w - self.idle_w) * load.clamp(0.0, 1.0)
    }

    /// Equilibrium temperature at power `p`, °C.
    pub fn equilibrium_c(&self, p: f64) -> f64 {
        self.ambient_c + self.rth_c_per_w * p
    }

    /// Activity whose equilibrium temperature is `temp_c` (clamped to 0..1).
    pub fn load_holding(&self, temp_c: f64) -> f64 {
        let p = (temp_c - self.ambient_c) / self.rth_c_per_w;
        ((p - self.idle_w) / (self.active_w - self.idle_w)).clamp(0.0, 1.0)
    }

    /// Temperature at the start.
    pub fn start_temp_c(&self) -> f64 {
        self.initial_temp_c
            .unwrap_or_else(|| self.equilibrium_c(self.idle_w))
    }

    /// The probe simulator's device-model flags (contract 2).
    pub fn probe_sim_args(&self) -> Vec<String> {
        let mut v = Vec::new();
        let port = [
            ("--port-current-a", self.port_current_a),
            ("--pd-contract-v", self.pd_contract_v),
            (
                "--cable-mohm",
                (self.cable_mohm > 0.0).then_some(self.cable_mohm),
            ),
        ];
        for (flag, value) in [
            ("--vbus-v", Some(self.vbus_v)),
            ("--idle-w", Some(self.idle_w)),
            ("--active-w", Some(self.active_w)),
            ("--ambient-c", Some(self.ambient_c)),
            ("--initial-c", Some(self.start_temp_c())),
            ("--rth-c-per-w", Some(self.rth_c_per_w)),
            ("--tau-s", Some(self.tau_s)),
        ]
        .into_iter()
        .chain(port)
        {
            if let Some(value) = value {
                v.push(flag.to_string());
                v.push(value.to_string());
            }
        }
        v
    }

    /// The model with the port advertising `current_a` (unchanged when None).
    pub fn with_port_current(self, current_a: Option<f64>) -> DeviceModel {
        DeviceModel {
            port_current_a: current_a.or(self.port_current_a),
            ..self
        }
    }

    /// A port model is given (an advertised current or a cable).
    pub fn has_port(&self) -> bool {
        self.port_current_a.is_some() || self.pd_contract_v.is_some() || self.cable_mohm > 0.0
    }

    /// What the port delivers to a drive asking for `need_w` at its own end of the cable:
    /// the drive is a constant-power load behind the cable's I·R, and the current stops at
    /// the port's (the probe simulator's `ts_port_model_draw`, same equations). The probe,
    /// at the port, sees the port's VBUS and the power with the cable's loss.
    pub fn port_draw(&self, need_w: f64) -> PortDraw {
        let v = self.pd_contract_v.unwrap_or(self.vbus_v);
        let r = self.cable_mohm * 1e-3;
        let mut held = false;
        let mut i = if need_w <= 0.0 {
            0.0
        } else if r <= 0.0 {
            need_w / v
        } else if v * v < 4.0 * r * need_w {
            held = true;
            v / (2.0 * r)
        } else {
            (v - (v * v - 4.0 * r * need_w).sqrt()) / (2.0 * r)
        };
        if let Some(max) = self.port_current_a.filter(|&a| i > a) {
            i = max;
            held = true;
        }
        let drive_w = (v - i * r) * i;
        PortDraw {
            current_a: i,
            vbus_v: v,
            power_w: v * i,
            drive_w,
            held,
            rate_factor: if held && need_w > 0.0 {
                drive_w / need_w
            } else {
                1.0
            },
        }
    }

    /// The drive's rate factor at activity `load` (1 without a port model).
    pub fn port_rate_factor(&self, load: f64) -> f64 {
        if self.has_port() {
            self.port_draw(self.power_w(load)).rate_factor
        } else {
            1.0
        }
    }

    /// Power reaching the drive at activity `load`, W (held at the port's budget, less the
    /// cable's loss): what heats the enclosure.
    pub fn delivered_w(&self, load: f64) -> f64 {
        if self.has_port() {
            self.port_draw(self.power_w(load)).drive_w
        } else {
            self.power_w(load)
        }
    }

    /// Power through the probe at activity `load`, W: what the drive gets and the cable's
    /// loss beyond the probe.
    pub fn probe_w(&self, load: f64) -> f64 {
        if self.has_port() {
            self.port_draw(self.power_w(load)).power_w
        } else {
            self.power_w(load)
        }
    }
}

/// One target: its files and the throughput stages it goes through.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// Target name as it appears in files.csv.
    pub name: String,
    /// Phase name.
    pub phase: String,
    /// Stop after this many GB (10⁹ bytes).
    pub total_gb: f64,
    /// Exactly this many files (sizes drawn as usual, then scaled to `total_gb`).
    #[serde(default)]
    pub file_count: Option<usize>,
    /// Smallest file, MB (10⁶ bytes); sizes are uniform between min and max.
    pub file_min_mb: f64,
    /// Largest file, MB.
    pub file_max_mb: f64,
    /// Fixed cost per file (open, fsync), ms.
    #[serde(default)]
    pub overhead_ms: f64,
    /// Start offset from the run start, s.
    #[serde(default)]
    pub start_s: f64,
    /// Throughput stages in order; the last one lasts to the end.
    #[serde(rename = "stage")]
    pub stages: Vec<Stage>,
    /// An SLC cache that refills when idle (the `sim:` backend): the first stage's
    /// `until_gb` is the cache; idle for t refills the used part by a share
    /// 1 − e^(−t/τ) with this τ (s, virtual time), and writing resumes in stage 0.
    #[serde(default)]
    pub slc_recovery_tau_s: Option<f64>,
}

/// A stretch at one throughput level.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stage {
    /// Throughput, GB/s.
    pub rate_gbps: f64,
    /// Per-file multiplicative jitter: each file's rate is scaled by 1 + U(−j, j).
    #[serde(default)]
    pub jitter: f64,
    /// Device activity 0..1 while writing in this stage (default 1).
    #[serde(default)]
    pub load: Option<f64>,
    /// Throttle: activity chosen so the equilibrium temperature equals the temperature
    /// at the start of this stage (a thermal plateau).
    #[serde(default)]
    pub hold_temperature: bool,
    /// Stage ends when this target has moved this many GB.
    #[serde(default)]
    pub until_gb: Option<f64>,
    /// Stage ends when the enclosure reaches this temperature, °C (the `sim:`
    /// backend: a throttle that only a hot enough load triggers).
    #[serde(default)]
    pub until_temp_c: Option<f64>,
    /// Stage ends `lag_s` after this other target has finished.
    #[serde(default)]
    pub after_target_done: Option<String>,
    /// See `after_target_done`, s.
    #[serde(default)]
    pub lag_s: f64,
    /// True cause of the change INTO this stage (thermal, slc_cache, contention).
    #[serde(default)]
    pub cause: Option<String>,
    /// The change into this stage is gradual: linear from the previous stage's rate over
    /// this many GB (the truth's onset is where it starts, its settle where it ends).
    #[serde(default)]
    pub ramp_gb: Option<f64>,
    /// Slow drift of the rate over the target's bytes, peak to peak as a fraction (0.12 =
    /// the rate wanders within ±6 %): two seeded sinusoids of periods total/1.3 and total/3.7.
    #[serde(default)]
    pub wander: f64,
    /// Stalls in this stage: normal stretches of a length uniform in this range (s)...
    #[serde(default)]
    pub stall_every_s: Option<[f64; 2]>,
    /// ...alternating with stalls of a length uniform in this range (s)...
    #[serde(default)]
    pub stall_s: Option<[f64; 2]>,
    /// ...at this rate, GB/s.
    #[serde(default)]
    pub stall_rate_gbps: f64,
    /// The current the host port advertises from this stage on, A (the probed target's
    /// stages): the port's advertisement changed mid-run (another device took its share).
    /// Played by `scenario-gen` alone (on the run's timeline); the probe simulator models
    /// one port.
    #[serde(default)]
    pub port_current_a: Option<f64>,
    /// On entering this stage the host port's VBUS collapses, as the probe sees it (the
    /// probed target's stages). Played by `scenario-gen` alone; the probe simulator models
    /// no collapse.
    #[serde(default)]
    pub vbus_collapse: Option<VbusCollapse>,
    /// A line the operating system logs about this target's link on entering this stage.
    /// Written by `scenario-gen` alone (`os-log.jsonl`): a simulated drive has no kernel.
    #[serde(default)]
    pub os_log: Option<LoggedLine>,
}

/// The host port's VBUS collapsing for a moment (a stage's `vbus_collapse`).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VbusCollapse {
    /// VBUS at the probe while it lasts, V.
    pub vbus_v: f64,
    /// How long it lasts, ms.
    pub ms: f64,
    /// When it begins, s from the stage's start (negative: before it).
    #[serde(default)]
    pub offset_s: f64,
}

/// A line of the operating system's log about a target's link (a stage's `os_log`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoggedLine {
    /// What it says happened.
    pub kind: hostd_records::os_log::OsLogKind,
    /// The line as the kernel wrote it.
    pub line: String,
    /// When it is logged, s from the stage's start (negative: before it).
    #[serde(default)]
    pub offset_s: f64,
}

/// Plays a target's stages: which stage it is in, and its rate at a point of its bytes and
/// time. Shared by the offline simulator and the `sim:` backend so both give the same truth.
#[derive(Debug, Clone)]
pub struct StagePlayer {
    /// Current stage.
    pub stage: usize,
    /// Target bytes when the stage began.
    pub stage_start_bytes: f64,
    /// Virtual s when the stage began.
    pub stage_start_s: f64,
    /// Stalls of the current stage, virtual s (absolute), in order.
    stalls: Vec<(f64, f64)>,
    /// Phases of the two wander sinusoids.
    phases: (f64, f64),
    seed: u64,
}

impl StagePlayer {
    /// Starts in stage 0 at time 0.
    pub fn new(seed: u64) -> StagePlayer {
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed ^ 0x57a6e);
        let tau = std::f64::consts::TAU;
        let phases = (
            rand::Rng::gen_range(&mut rng, 0.0..tau),
            rand::Rng::gen_range(&mut rng, 0.0..tau),
        );
        StagePlayer {
            stage: 0,
            stage_start_bytes: 0.0,
            stage_start_s: 0.0,
            stalls: Vec::new(),
            phases,
            seed,
        }
    }

    /// Enters stage `k` at `bytes`, virtual time `t_s`; draws its stalls.
    pub fn enter(&mut self, spec: &TargetSpec, k: usize, bytes: f64, t_s: f64) {
        self.stage = k;
        self.stage_start_bytes = bytes;
        self.stage_start_s = t_s;
        self.stalls.clear();
        let st = &spec.stages[k];
        if let (Some(every), Some(len)) = (st.stall_every_s, st.stall_s) {
            let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(
                self.seed.wrapping_add(k as u64 * 7_777),
            );
            let mut t = t_s;
            while t < t_s + 100_000.0 && self.stalls.len() < 100_000 {
                t += rand::Rng::gen_range(&mut rng, every[0]..=every[1]);
                let l = rand::Rng::gen_range(&mut rng, len[0]..=len[1]);
                self.stalls.push((t, t + l));
                t += l;
            }
        }
    }

    /// True when virtual time `t_s` is inside a stall of the current stage.
    pub fn stalled(&self, t_s: f64) -> bool {
        let i = self.stalls.partition_point(|s| s.1 <= t_s);
        self.stalls.get(i).is_some_and(|s| s.0 <= t_s)
    }

    /// The stalls of the current stage (start, end), virtual s.
    pub fn stalls(&self) -> &[(f64, f64)] {
        &self.stalls
    }

    /// Start of the first stall of the current stage, if any.
    pub fn first_stall_s(&self) -> Option<f64> {
        self.stalls.first().map(|s| s.0)
    }

    /// Rate in bytes/s at target bytes `bytes` and virtual time `t_s`, with the file's
    /// jitter draw `u` in −1..1.
    pub fn rate_bps(&self, spec: &TargetSpec, bytes: f64, t_s: f64, u: f64) -> f64 {
        let st = &spec.stages[self.stage];
        if self.stalled(t_s) {
            return st.stall_rate_gbps.max(1e-6) * 1e9;
        }
        let mut rate = st.rate_gbps;
        if let (Some(r), Some(prev)) = (st.ramp_gb, self.stage.checked_sub(1)) {
            let f = ((bytes - self.stage_start_bytes) / (r * 1e9)).clamp(0.0, 1.0);
            let p = spec.stages[prev].rate_gbps;
            rate = p + (rate - p) * f;
        }
        if st.wander > 0.0 {
            let x = bytes / (spec.total_gb * 1e9);
            let tau = std::f64::consts::TAU;
            let shape = 0.6 * (tau * 1.3 * x + self.phases.0).sin()
                + 0.4 * (tau * 3.7 * x + self.phases.1).sin();
            rate *= 1.0 + 0.5 * st.wander * shape;
        }
        rate * 1e9 * (1.0 + u * st.jitter)
    }
}

impl Scenario {
    /// Parses and checks a scenario.
    pub fn from_toml(text: &str) -> anyhow::Result<Scenario> {
        let s: Scenario =
            toml::from_str(text).map_err(|e| anyhow::anyhow!("invalid scenario: {e}"))?;
        s.check()?;
        Ok(s)
    }

    fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            !self.targets.is_empty(),
            "scenario {}: no [[target]]",
            self.name
        );
        anyhow::ensure!(
            self.targets.iter().any(|t| t.name == self.probe_target),
            "scenario {}: probe_target `{}` is not one of the targets",
            self.name,
            self.probe_target
        );
        // The probe simulator takes the same ranges (--port-current-a, --pd-contract-v, --cable-mohm).
        let d = &self.device;
        anyhow::ensure!(
            d.port_current_a.is_none_or(|a| a > 0.0 && a <= 5.0)
                && d.pd_contract_v.is_none_or(|v| (5.0..=48.0).contains(&v))
                && (0.0..=10_000.0).contains(&d.cable_mohm),
            "scenario {}: [device] port_current_a must be in (0, 5] A, pd_contract_v in 5..48 V, \
             cable_mohm in 0..10000 mΩ",
            self.name
        );
        for t in &self.targets {
            anyhow::ensure!(
                !t.stages.is_empty(),
                "scenario {}: target {} has no [[target.stage]]",
                self.name,
                t.name
            );
            anyhow::ensure!(
                t.file_min_mb > 0.0 && t.file_max_mb >= t.file_min_mb && t.total_gb > 0.0,
                "scenario {}: target {}: sizes must be positive and min ≤ max",
                self.name,
                t.name
            );
            for (i, st) in t.stages.iter().enumerate() {
                anyhow::ensure!(
                    st.rate_gbps > 0.0,
                    "scenario {}: target {} stage {i}: rate_gbps must be > 0",
                    self.name,
                    t.name
                );
                anyhow::ensure!(
                    (0.0..0.9).contains(&st.jitter),
                    "scenario {}: target {} stage {i}: jitter must be in 0..0.9",
                    self.name,
                    t.name
                );
                if let Some(r) = st.ramp_gb {
                    anyhow::ensure!(
                        i > 0 && r > 0.0,
                        "scenario {}: target {} stage {i}: ramp_gb needs a stage before it and must be > 0",
                        self.name,
                        t.name
                    );
                }
                anyhow::ensure!(
                    (0.0..0.5).contains(&st.wander),
                    "scenario {}: target {} stage {i}: wander must be in 0..0.5",
                    self.name,
                    t.name
                );
                anyhow::ensure!(
                    st.stall_every_s.is_some() == st.stall_s.is_some()
                        && st.stall_every_s.is_none_or(|e| e[0] > 0.0 && e[1] >= e[0])
                        && st.stall_s.is_none_or(|e| e[0] > 0.0 && e[1] >= e[0]),
                    "scenario {}: target {} stage {i}: stall_every_s and stall_s go together, as [min, max] with 0 < min ≤ max",
                    self.name,
                    t.name
                );
                anyhow::ensure!(
                    st.port_current_a.is_none()
                        || (t.name == self.probe_target
                            && d.port_current_a.is_some()
                            && st.port_current_a.is_some_and(|a| a > 0.0 && a <= 5.0)),
                    "scenario {}: target {} stage {i}: port_current_a changes the probed target's port: \
                     it needs [device] port_current_a and must be in (0, 5] A",
                    self.name,
                    t.name
                );
                if let Some(c) = st.vbus_collapse {
                    anyhow::ensure!(
                        t.name == self.probe_target
                            && i > 0
                            && c.vbus_v > 0.0
                            && c.vbus_v < d.pd_contract_v.unwrap_or(d.vbus_v)
                            && c.ms > 0.0
                            && c.ms <= 10_000.0
                            && c.offset_s.abs() <= 5.0,
                        "scenario {}: target {} stage {i}: vbus_collapse is the probed target's, on a \
                         stage after the first, below the port's VBUS, 0 < ms ≤ 10000, |offset_s| ≤ 5",
                        self.name,
                        t.name
                    );
                }
                if let Some(l) = &st.os_log {
                    anyhow::ensure!(
                        i > 0 && l.offset_s.abs() <= 5.0 && !l.line.is_empty(),
                        "scenario {}: target {} stage {i}: os_log is logged on a stage after the \
                         first, with a line, |offset_s| ≤ 5",
                        self.name,
                        t.name
                    );
                }
                if let Some(other) = &st.after_target_done {
                    anyhow::ensure!(
                        self.targets.iter().any(|o| &o.name == other && o.name != t.name),
                        "scenario {}: target {} stage {i}: after_target_done `{other}` is not another target",
                        self.name,
                        t.name
                    );
                }
            }
        }
        Ok(())
    }

    /// The probed device in stage `k` of the probed target: its port advertising what the
    /// last stage up to `k` that changed it says.
    pub fn device_in_stage(&self, k: usize) -> DeviceModel {
        let port = self.probed().stages[..=k.min(self.probed().stages.len() - 1)]
            .iter()
            .rev()
            .find_map(|st| st.port_current_a);
        self.device.with_port_current(port)
    }

    /// What of this scenario only `scenario-gen` plays, when anything: a stage that changes
    /// the port's budget mid-run (the probe simulator models one port), collapses VBUS (it
    /// models no collapse) or logs a line (a simulated drive has no kernel).
    pub fn scenario_gen_only(&self) -> Option<&'static str> {
        let stages = || self.targets.iter().flat_map(|t| &t.stages);
        if stages().any(|st| st.port_current_a.is_some()) {
            Some("changes its port's budget mid-run (a stage's port_current_a); the probe simulator models one port")
        } else if stages().any(|st| st.vbus_collapse.is_some()) {
            Some("collapses its port's VBUS (a stage's vbus_collapse); the probe simulator models none")
        } else if stages().any(|st| st.os_log.is_some()) {
            Some("logs a line of the OS's log (a stage's os_log); a simulated drive has no kernel")
        } else {
            None
        }
    }

    /// The probed target's spec.
    pub fn probed(&self) -> &TargetSpec {
        self.targets
            .iter()
            .find(|t| t.name == self.probe_target)
            .expect("checked in from_toml")
    }
}
