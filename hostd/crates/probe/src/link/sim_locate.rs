//! Where the probe simulator binary is: `$THROTTLESCOPE_PROBE_SIM` when set,
//! else next to the running `hostd`, else in a firmware build tree above it
//! (`build/firmware/sim/` of the repository `hostd` was built in), else on
//! `PATH`. When none has it, the error says where it looked and how to build it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// File name of the simulator binary.
pub const SIM_BINARY: &str = "throttlescope-probe-sim";
/// The simulator's place in a firmware build tree, relative to the repository.
pub const SIM_BUILD_PATH: &str = "build/firmware/sim/throttlescope-probe-sim";

/// The places searched, in order.
#[derive(Debug, Clone, Default)]
pub struct SimSearch {
    /// Value of `$THROTTLESCOPE_PROBE_SIM`, if set.
    pub env: Option<OsString>,
    /// The running executable (`hostd`).
    pub exe: Option<PathBuf>,
    /// The repository `hostd` was built from, if known.
    pub repo: Option<PathBuf>,
    /// Value of `$PATH`.
    pub path: Option<OsString>,
}

impl SimSearch {
    /// The search of this process: its environment and executable, and the
    /// repository this crate was compiled in.
    pub fn from_process() -> Self {
        Self {
            env: std::env::var_os(super::source::SIM_ENV),
            exe: std::env::current_exe().ok(),
            repo: Path::new(env!("CARGO_MANIFEST_DIR"))
                .ancestors()
                .nth(3)
                .map(Path::to_path_buf),
            path: std::env::var_os("PATH"),
        }
    }

    /// The candidate paths, in the order they are tried (without the
    /// environment variable, which is taken as given).
    pub fn candidates(&self) -> Vec<PathBuf> {
        let mut c = Vec::new();
        if let Some(dir) = self.exe.as_deref().and_then(Path::parent) {
            c.push(dir.join(SIM_BINARY));
            // hostd/target/{debug,release}/hostd: the repository is above.
            c.extend(dir.ancestors().skip(1).map(|a| a.join(SIM_BUILD_PATH)));
        }
        if let Some(repo) = &self.repo {
            c.push(repo.join(SIM_BUILD_PATH));
        }
        if let Some(path) = &self.path {
            c.extend(std::env::split_paths(path).map(|d| d.join(SIM_BINARY)));
        }
        let mut seen = std::collections::HashSet::new();
        c.retain(|p| seen.insert(p.clone()));
        c
    }

    /// The simulator to run, or an error that says where it looked.
    pub fn locate(&self) -> anyhow::Result<PathBuf> {
        let env = super::source::SIM_ENV;
        if let Some(p) = &self.env {
            let p = PathBuf::from(p);
            anyhow::ensure!(
                is_executable(&p),
                "{env}={} is not an executable file; build the simulator with `just firmware-build` or unset {env}",
                p.display()
            );
            return Ok(p);
        }
        let candidates = self.candidates();
        if let Some(found) = candidates.iter().find(|p| is_executable(p)) {
            return Ok(found.clone());
        }
        let exe_dir = self
            .exe
            .as_deref()
            .and_then(Path::parent)
            .map_or("?".into(), |d| d.display().to_string());
        anyhow::bail!(
            "cannot find the probe simulator {SIM_BINARY}: looked next to hostd ({exe_dir}), in {SIM_BUILD_PATH} \
             of the repositories above it{}, and on PATH ({} places in all). Build it with `just firmware-build` \
             in the throttlescope repository, or point {env} at it.",
            self.repo
                .as_ref()
                .map_or(String::new(), |r| format!(" and of {}", r.display())),
            candidates.len()
        )
    }
}

#[cfg(windows)]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn executable(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn found_in_the_build_tree_above_hostd_without_the_variable() {
        let repo = tempfile::tempdir().unwrap();
        let exe = repo.path().join("hostd/target/release/hostd");
        executable(&exe);
        let sim = repo.path().join(SIM_BUILD_PATH);
        executable(&sim);
        let search = SimSearch {
            exe: Some(exe),
            ..Default::default()
        };
        assert_eq!(search.locate().unwrap(), sim);
    }

    #[test]
    fn next_to_hostd_comes_before_path() {
        let root = tempfile::tempdir().unwrap();
        let exe = root.path().join("bin/hostd");
        executable(&exe);
        executable(&root.path().join("bin").join(SIM_BINARY));
        executable(&root.path().join("other").join(SIM_BINARY));
        let search = SimSearch {
            exe: Some(exe),
            path: Some(root.path().join("other").into_os_string()),
            ..Default::default()
        };
        assert_eq!(
            search.locate().unwrap(),
            root.path().join("bin").join(SIM_BINARY)
        );
    }

    #[test]
    fn found_on_path() {
        let root = tempfile::tempdir().unwrap();
        let sim = root.path().join("tools").join(SIM_BINARY);
        executable(&sim);
        let path =
            std::env::join_paths([root.path().join("empty"), root.path().join("tools")]).unwrap();
        let search = SimSearch {
            exe: Some(root.path().join("elsewhere/hostd")),
            path: Some(path),
            ..Default::default()
        };
        assert_eq!(search.locate().unwrap(), sim);
    }

    #[test]
    fn missing_everywhere_says_where_it_looked_and_how_to_build() {
        let root = tempfile::tempdir().unwrap();
        let search = SimSearch {
            exe: Some(root.path().join("bin/hostd")),
            path: Some(root.path().join("tools").into_os_string()),
            ..Default::default()
        };
        let e = search.locate().unwrap_err().to_string();
        assert!(e.contains("just firmware-build"), "{e}");
        assert!(
            e.contains(&root.path().join("bin").display().to_string()),
            "{e}"
        );
        assert!(e.contains(SIM_BUILD_PATH) && e.contains("PATH"), "{e}");
    }

    #[test]
    fn a_variable_that_names_nothing_is_an_error_not_a_fallback() {
        let root = tempfile::tempdir().unwrap();
        executable(&root.path().join("bin").join(SIM_BINARY));
        let search = SimSearch {
            env: Some(root.path().join("nope").into_os_string()),
            exe: Some(root.path().join("bin/hostd")),
            ..Default::default()
        };
        let e = search.locate().unwrap_err().to_string();
        assert!(
            e.contains("THROTTLESCOPE_PROBE_SIM") && e.contains("nope"),
            "{e}"
        );
    }
}
