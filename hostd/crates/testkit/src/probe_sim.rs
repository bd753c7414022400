//! The probe simulator for tests: `$THROTTLESCOPE_PROBE_SIM` when set (the justfile sets
//! it), else the repository's firmware build, built or brought up to date first
//! (`cmake -S firmware -B build/firmware`, as `just firmware-build` does). A plain
//! `cargo test` in `hostd/` then needs no recipe. Test binaries run at once, so the build
//! runs under a lock file; the path is found once per process. `hostd` and the probe
//! link look in the same build tree when the variable is not set.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The variable `hostd --probe sim` and the tests read.
pub const ENV: &str = "THROTTLESCOPE_PROBE_SIM";

/// The simulator's path; panics with what failed and how to fix it when it can be neither
/// found nor built (no CMake, Ninja or nanopb: `scripts/setup.sh` installs them).
pub fn path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| match std::env::var_os(ENV) {
        Some(p) => {
            let p = PathBuf::from(p);
            assert!(p.is_file(), "{ENV}={} is not a file; run `just firmware-build`", p.display());
            p
        }
        None => build().unwrap_or_else(|e| {
            panic!("{ENV} is not set and the simulator could not be built: {e}; run `just firmware-build` (scripts/setup.sh installs what it needs)")
        }),
    })
    .clone()
}

/// The repository this crate lies in (`hostd/crates/testkit` → three levels up).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(3)
        .expect("hostd/crates/testkit lies in a repository")
        .to_path_buf()
}

/// Configures (once) and builds the firmware tree's simulator target under a lock.
fn build() -> Result<PathBuf, String> {
    let repo = repo();
    let build = repo.join("build/firmware");
    std::fs::create_dir_all(&build).map_err(|e| format!("{}: {e}", build.display()))?;
    let lock = std::fs::File::create(build.join(".test-build.lock"))
        .map_err(|e| format!("lock file: {e}"))?;
    lock.lock().map_err(|e| format!("lock: {e}"))?;
    let run = |args: &[&str]| -> Result<(), String> {
        let out = Command::new("cmake")
            .args(args)
            .current_dir(&repo)
            .output()
            .map_err(|e| format!("cmake: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "cmake {}: {}{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    if !build.join("build.ninja").exists() {
        run(&[
            "-S",
            "firmware",
            "-B",
            "build/firmware",
            "-G",
            "Ninja",
            "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
        ])?;
    }
    run(&[
        "--build",
        "build/firmware",
        "--target",
        "throttlescope-probe-sim",
    ])?;
    let sim = build.join("sim/throttlescope-probe-sim");
    sim.is_file()
        .then_some(sim)
        .ok_or_else(|| "the build made no sim/throttlescope-probe-sim".into())
}
