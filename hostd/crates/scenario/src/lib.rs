//! hostd-scenario: storage scenarios with known truth (fixtures/scenarios/*.toml), a
//! seeded simulator that plays them into per-file records, probe samples and the true
//! events, and writers for the run-directory files `hostd analyze` reads.

#![warn(missing_docs)]

pub mod backend;
pub mod device;
pub mod model;
pub mod sim;
pub mod write;

pub use model::{DeviceModel, LoggedLine, Scenario, Stage, TargetSpec, VbusCollapse};
pub use sim::{simulate, Collapse, LoadStep, Logged, PortStep, Trace, TruthEvent, BASE_UNIX_NS};

/// The built-in scenarios (the files in fixtures/scenarios/, compiled in).
pub const BUILT_IN: &[(&str, &str)] = &[
    (
        "x5-thermal",
        include_str!("../../../../fixtures/scenarios/x5-thermal.toml"),
    ),
    (
        "extreme-pro-slc-30gb",
        include_str!("../../../../fixtures/scenarios/extreme-pro-slc-30gb.toml"),
    ),
    (
        "p50-slc-13gb",
        include_str!("../../../../fixtures/scenarios/p50-slc-13gb.toml"),
    ),
    (
        "hub-www-contention",
        include_str!("../../../../fixtures/scenarios/hub-www-contention.toml"),
    ),
    (
        "steady",
        include_str!("../../../../fixtures/scenarios/steady.toml"),
    ),
    (
        "x5-gradual",
        include_str!("../../../../fixtures/scenarios/x5-gradual.toml"),
    ),
    (
        "x5-oscillating",
        include_str!("../../../../fixtures/scenarios/x5-oscillating.toml"),
    ),
    (
        "p50-stalls",
        include_str!("../../../../fixtures/scenarios/p50-stalls.toml"),
    ),
    (
        "small-files",
        include_str!("../../../../fixtures/scenarios/small-files.toml"),
    ),
    (
        "wander",
        include_str!("../../../../fixtures/scenarios/wander.toml"),
    ),
    (
        "x5-read-thermal",
        include_str!("../../../../fixtures/scenarios/x5-read-thermal.toml"),
    ),
    (
        "slc-cool",
        include_str!("../../../../fixtures/scenarios/slc-cool.toml"),
    ),
    (
        "tb-ssd-4w5-port",
        include_str!("../../../../fixtures/scenarios/tb-ssd-4w5-port.toml"),
    ),
    (
        "tb-ssd-15w-thermal",
        include_str!("../../../../fixtures/scenarios/tb-ssd-15w-thermal.toml"),
    ),
    (
        "slc-7w5-port",
        include_str!("../../../../fixtures/scenarios/slc-7w5-port.toml"),
    ),
    (
        "tb-ssd-long-cable",
        include_str!("../../../../fixtures/scenarios/tb-ssd-long-cable.toml"),
    ),
    (
        "tb-ssd-port-change",
        include_str!("../../../../fixtures/scenarios/tb-ssd-port-change.toml"),
    ),
    (
        "slc-4w5-port",
        include_str!("../../../../fixtures/scenarios/slc-4w5-port.toml"),
    ),
    (
        "tb-ssd-contract-change",
        include_str!("../../../../fixtures/scenarios/tb-ssd-contract-change.toml"),
    ),
];

/// Loads a scenario by built-in name, or from a TOML file path.
pub fn load(name_or_path: &str) -> anyhow::Result<Scenario> {
    if let Some((_, text)) = BUILT_IN.iter().find(|(n, _)| *n == name_or_path) {
        return Scenario::from_toml(text);
    }
    let path = std::path::Path::new(name_or_path);
    if path.exists() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("could not read scenario {}: {e}", path.display()))?;
        return Scenario::from_toml(&text);
    }
    let names: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
    anyhow::bail!(
        "unknown scenario `{name_or_path}`: not a file, and the built-in ones are {}",
        names.join(", ")
    )
}
