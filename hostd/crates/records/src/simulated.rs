//! The target of a simulated run (`scenario-gen`, `--target sim:…`): what its manifest
//! entry holds when no filesystem or device stands behind it.

use crate::manifest::{DirectIo, TargetInfo};

impl TargetInfo {
    /// A simulated target: scheme `sim`, engine `simulated`, direct I/O (nothing is cached),
    /// and no filesystem, device, capacity, engine note or link; set those that a
    /// simulation has with struct update syntax.
    pub fn simulated(label: &str, mode: &str, path: &str) -> TargetInfo {
        TargetInfo {
            label: label.into(),
            scheme: "sim".into(),
            mode: mode.into(),
            path: path.into(),
            test_dir: None,
            fs_type: None,
            mount_point: None,
            device: None,
            device_model: None,
            capacity_bytes: None,
            free_bytes: None,
            direct_io: DirectIo::Direct,
            engine: "simulated".into(),
            engine_note: None,
            link: None,
        }
    }

    /// A simulated target (scheme `sim`).
    pub fn is_simulated(&self) -> bool {
        self.scheme == "sim"
    }
}
