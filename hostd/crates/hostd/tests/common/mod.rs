//! Helpers shared by the integration tests that start the probe simulator.
#![allow(dead_code)] // each test file uses its own subset

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::time::Duration;

/// The `hostd` binary this crate builds, as a command to add arguments to.
pub fn hostd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hostd"))
}

/// `hostd run -q --profile PROFILE --target T… --out OUT`: the run every test starts from;
/// the caller adds its own arguments and runs it.
pub fn hostd_run<T: AsRef<OsStr>>(
    profile: impl AsRef<OsStr>,
    targets: impl IntoIterator<Item = T>,
    out: &Path,
) -> Command {
    let mut cmd = hostd();
    // `--probe sim` finds the simulator, built when a plain `cargo test` runs (a caller's
    // own `.env` overrides it).
    cmd.env(hostd_testkit::probe_sim::ENV, sim_path());
    cmd.args(["run", "-q", "--profile"]).arg(profile);
    for t in targets {
        cmd.arg("--target").arg(t);
    }
    cmd.arg("--out").arg(out);
    cmd
}

/// Points `cmd` at the private influxd `server` (URL and token file; no token from the
/// environment).
pub fn to_influx<'c>(
    cmd: &'c mut Command,
    server: &hostd_influx::testing::InfluxServer,
) -> &'c mut Command {
    cmd.args(["--influx-url", &server.url(), "--influx-token-file"])
        .arg(server.token_file().unwrap())
        .env_remove("INFLUX_TOKEN")
}

/// A temporary directory on a real disk (tmpfs has no direct I/O):
/// `$THROTTLESCOPE_TEST_DIR`, else /var/tmp.
pub fn disk_tempdir() -> tempfile::TempDir {
    let base = std::env::var("THROTTLESCOPE_TEST_DIR").unwrap_or_else(|_| "/var/tmp".into());
    tempfile::tempdir_in(base).expect("tempdir on disk")
}

/// A [`disk_tempdir`] with an empty `target/` in it, and where a run's results go
/// (`run/`, not created): (scratch, target, run directory).
pub fn disk_target() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let work = disk_tempdir();
    let (target, run) = (work.path().join("target"), work.path().join("run"));
    std::fs::create_dir(&target).unwrap();
    (work, target, run)
}

/// A smartctl (for `THROTTLESCOPE_SMARTCTL`) that prints the recorded answer `fixture`
/// (under `fixtures/smartctl`) for any device and type: this machine's disk answers none.
#[cfg(unix)] // a shell script
pub fn replay_smartctl(dir: &Path, fixture: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let answer = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/smartctl")
        .join(fixture);
    let script = dir.join("smartctl");
    std::fs::write(&script, format!("#!/bin/sh\ncat '{}'\n", answer.display())).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// Two empty target directories `a` and `b` in `work` and the path of a run directory
/// `run` beside them (not created).
pub fn two_targets_and_a_run(work: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let (a, b) = (work.join("a"), work.join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    (a, b, work.join("run"))
}

/// Writes `dir/small.toml`: `count` files of 1 MB to `max`, written then read back.
pub fn small_profile(dir: &Path, count: u32, max: &str) -> PathBuf {
    let p = dir.join("small.toml");
    std::fs::write(
        &p,
        format!("name = \"small\"\ndescription = \"test\"\nkind = \"files\"\n[files]\ncount = {count}\nmin_size = \"1MB\"\nmax_size = \"{max}\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\", \"read\"]\n"),
    )
    .unwrap();
    p
}

/// What a command wrote, stdout then stderr.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Asserts that a command succeeded, showing what it wrote when it did not.
#[track_caller]
pub fn assert_ok(o: &Output) {
    assert!(o.status.success(), "{:?}:\n{}", o.status, text(o));
}

/// The rows of a run-directory CSV file (header first), through the csv reader.
pub fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_path(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    r.records()
        .map(|x| x.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// The records (rows after the header) of a run-directory CSV file.
pub fn record_count(path: &Path) -> u64 {
    csv_rows(path).len().saturating_sub(1) as u64
}

/// The probe samples of a run directory: its `probe/` Parquet segments, or an older run's
/// `probe.csv`.
#[allow(dead_code)]
pub fn probe_samples(dir: &Path) -> Vec<hostd_records::ProbeSample> {
    if hostd_records::probe_store::exists(dir) {
        hostd_records::probe_store::read(dir)
    } else {
        hostd_records::probe::read(dir)
    }
    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// The 10 ms probe bins of a run directory (`probe/levels-*.parquet`, or an older run's
/// `probe_agg.csv`): what the `probe_agg` measurement gets.
#[allow(dead_code)]
pub fn agg_rows(dir: &Path) -> u64 {
    use hostd_records::probe_levels::{read_level, Level};
    read_level(dir, Level::Ms10)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .len() as u64
}

/// A JSON file of the run directory.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(
        &std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

/// The probe simulator: `$THROTTLESCOPE_PROBE_SIM` (the justfile's), else the repository's
/// firmware build, built first when needed (`hostd_testkit::probe_sim`).
pub fn sim_path() -> PathBuf {
    hostd_testkit::probe_sim::path()
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

/// The probe simulator serving a pty behind the symlink `link` (as a USB probe's
/// /dev/serial/by-id name is), taking commands (`unplug 500`, …) on its stdin.
pub struct SimOnLink {
    sim: Child,
    stdin: ChildStdin,
    drain: std::thread::JoinHandle<usize>,
}

impl SimOnLink {
    /// Starts the simulator and waits until it has made its pty.
    pub fn start(link: &Path) -> SimOnLink {
        SimOnLink::start_with(link, &[])
    }

    /// Starts the simulator with device-model `args` (`--port-current-a 3`, …) and waits
    /// until it has made its pty.
    pub fn start_with(link: &Path, args: &[&str]) -> SimOnLink {
        let mut sim = Command::new(sim_path())
            .arg("--link")
            .arg(link)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut sim_out = BufReader::new(sim.stdout.take().unwrap());
        let mut line = String::new();
        sim_out.read_line(&mut line).unwrap();
        assert!(line.starts_with("pty "), "simulator said {line:?}");
        let drain = std::thread::spawn(move || sim_out.lines().count());
        let stdin = sim.stdin.take().unwrap();
        SimOnLink { sim, stdin, drain }
    }

    /// Sends one command line.
    pub fn command(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Tells the simulator to quit and waits for it.
    pub fn quit(mut self) {
        writeln!(self.stdin, "quit").unwrap();
        drop(self.stdin);
        let _ = self.sim.wait();
        let _ = self.drain.join();
    }
}

/// `hostd run -q` of a paced video profile (about 6 s of writes whatever the
/// disk) with the probe simulator (started with `sim_args`) on a fresh link;
/// `configure` adds the caller's own arguments and `during` acts on the simulator
/// while hostd runs (given the run directory). Asserts that the run succeeded.
pub fn run_with_probe(
    prefix: &str,
    sim_args: &[&str],
    configure: impl FnOnce(&mut Command),
    during: impl FnOnce(&mut SimOnLink, &Path),
) -> UnplugRun {
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
    let mut sim = SimOnLink::start_with(&link, sim_args);

    let mut cmd = hostd_run(&profile, [&target], &run);
    cmd.arg("--probe").arg(&link);
    configure(&mut cmd);
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    during(&mut sim, &run);
    let out = child.wait_with_output().unwrap();
    sim.quit();
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

/// [`run_with_probe`] with the probe unplugged for 500 ms 2.5 s into the run.
pub fn run_with_unplug(prefix: &str, configure: impl FnOnce(&mut Command)) -> UnplugRun {
    run_with_probe(prefix, &[], configure, |sim, _| {
        std::thread::sleep(Duration::from_millis(2500));
        sim.command("unplug 500");
    })
}

#[cfg(target_os = "linux")]
pub mod realdev;

/// Writes the scenario `name` (built in, or a TOML file) as a run directory in `dir`, with
/// the probe's samples at the default rate (`scenario-gen NAME DIR`).
pub fn generate(name: &str, dir: &Path) {
    let sc = hostd_scenario::load(name).unwrap();
    hostd_scenario::write::write_run(
        dir,
        &sc,
        &hostd_scenario::simulate(&sc),
        Some(hostd_scenario::write::ProbeOptions::default()),
    )
    .unwrap();
}
