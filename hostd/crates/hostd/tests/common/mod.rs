//! Helpers shared by the integration tests that start the probe simulator.

use std::path::PathBuf;

/// The probe simulator `just firmware-build` builds (the justfile exports
/// its path as `THROTTLESCOPE_PROBE_SIM`); panics with the fix when absent.
pub fn sim_path() -> PathBuf {
    let path = std::env::var_os("THROTTLESCOPE_PROBE_SIM")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!("THROTTLESCOPE_PROBE_SIM is not set; build the simulator with `just firmware-build` (the justfile exports it)")
        });
    assert!(
        path.is_file(),
        "{} missing; run `just firmware-build`",
        path.display()
    );
    path
}
