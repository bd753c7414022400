//! Helpers shared by the integration tests that start the probe simulator.
#![allow(dead_code)] // each test file uses its own subset

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

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

/// Writes `dir/paced.toml`: a paced video profile, about 6 s of writes whatever the disk.
pub fn paced_profile(dir: &std::path::Path) -> PathBuf {
    let profile = dir.join("paced.toml");
    std::fs::write(
        &profile,
        "name = \"paced\"\ndescription = \"paced frames\"\nkind = \"video\"\n[video]\nframe_size = \"256KB\"\nfps = 50.0\nseconds = 3.0\nclips = 2\n[io]\nblock_size = \"256KiB\"\nqueue_depth = 1\nphases = [\"write\"]\nverify = false\n",
    )
    .unwrap();
    profile
}

/// The result of [`run_with_unplug`]: the scratch directory (kept alive here)
/// and where the run wrote its results.
pub struct UnplugRun {
    /// Scratch directory on disk holding `target/` and `run/`.
    pub work: tempfile::TempDir,
    /// The run directory.
    pub run: PathBuf,
    /// What `hostd run` wrote to stderr.
    pub stderr: String,
}

/// `hostd run -q` of a paced video profile (about 6 s of writes whatever the
/// disk) with the probe simulator on a fresh link, unplugged for 500 ms
/// 2.5 s into the run; asserts that the run succeeded. `configure` adds the
/// caller's own arguments.
pub fn run_with_unplug(prefix: &str, configure: impl FnOnce(&mut Command)) -> UnplugRun {
    let work = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/var/tmp")
        .unwrap();
    let (target, run, link) = (
        work.path().join("target"),
        work.path().join("run"),
        work.path().join("probe"),
    );
    std::fs::create_dir(&target).unwrap();
    let profile = paced_profile(work.path());
    let mut sim = Command::new(sim_path())
        .arg("--link")
        .arg(&link)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut sim_out = BufReader::new(sim.stdout.take().unwrap());
    let mut line = String::new();
    sim_out.read_line(&mut line).unwrap();
    assert!(line.starts_with("pty "), "simulator said {line:?}");
    let drain = std::thread::spawn(move || sim_out.lines().count());

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hostd"));
    cmd.args(["run", "-q", "--probe"])
        .arg(&link)
        .arg("--profile")
        .arg(&profile)
        .arg("--target")
        .arg(&target)
        .arg("--out")
        .arg(&run);
    configure(&mut cmd);
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let mut stdin = sim.stdin.take().unwrap();
    writeln!(stdin, "unplug 500").unwrap();
    stdin.flush().unwrap();
    let out = child.wait_with_output().unwrap();
    writeln!(stdin, "quit").unwrap();
    drop(stdin);
    let _ = sim.wait();
    let _ = drain.join();
    assert!(
        out.status.success(),
        "hostd run failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    UnplugRun {
        work,
        run,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub mod realdev;
