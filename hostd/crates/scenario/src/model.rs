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
        for (flag, value) in [
            ("--vbus-v", self.vbus_v),
            ("--idle-w", self.idle_w),
            ("--active-w", self.active_w),
            ("--ambient-c", self.ambient_c),
            ("--rth-c-per-w", self.rth_c_per_w),
            ("--tau-s", self.tau_s),
        ] {
            v.push(flag.to_string());
            v.push(value.to_string());
        }
        v
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
    /// Stage ends `lag_s` after this other target has finished.
    #[serde(default)]
    pub after_target_done: Option<String>,
    /// See `after_target_done`, s.
    #[serde(default)]
    pub lag_s: f64,
    /// True cause of the change INTO this stage (thermal, slc_cache, contention).
    #[serde(default)]
    pub cause: Option<String>,
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

    /// The probed target's spec.
    pub fn probed(&self) -> &TargetSpec {
        self.targets
            .iter()
            .find(|t| t.name == self.probe_target)
            .expect("checked in from_toml")
    }
}
