//! The probe simulator as a child process: found by [`sim_program`], it
//! announces its pseudo-terminal with a `pty PATH` line (again after every `unplug`) and takes `load F`,
//! `unplug MS` and `quit` on stdin.

use anyhow::Context;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The latest announced pty path and how many were announced.
#[derive(Debug, Default)]
struct Announced {
    generation: u64,
    path: Option<PathBuf>,
    exited: bool,
}

/// A running simulator.
pub struct SimProcess {
    child: Mutex<Child>,
    stdin: Mutex<Option<ChildStdin>>,
    announced: Arc<(Mutex<Announced>, Condvar)>,
}

impl std::fmt::Debug for SimProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimProcess").finish_non_exhaustive()
    }
}

/// Path of the simulator binary: `$THROTTLESCOPE_PROBE_SIM`, next to
/// `hostd`, in the build tree or on `PATH` ([`super::sim_locate`]).
pub fn sim_program() -> anyhow::Result<PathBuf> {
    super::sim_locate::SimSearch::from_process().locate()
}

impl SimProcess {
    /// Starts the simulator with device-model `args` and waits (up to 10 s)
    /// for its first `pty` line.
    pub fn spawn(args: &[String]) -> anyhow::Result<Self> {
        let program = sim_program()?;
        let mut child = Command::new(&program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| {
                format!("could not start the probe simulator {}", program.display())
            })?;
        let stdout = child.stdout.take().context("simulator stdout")?;
        let stdin = child.stdin.take();
        let announced = Arc::new((Mutex::new(Announced::default()), Condvar::new()));
        let shared = Arc::clone(&announced);
        std::thread::Builder::new()
            .name("probe-sim-stdout".into())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if let Some(path) = line.trim().strip_prefix("pty ") {
                        let mut a = shared.0.lock().unwrap_or_else(|e| e.into_inner());
                        a.generation += 1;
                        a.path = Some(PathBuf::from(path.trim()));
                        shared.1.notify_all();
                    } else {
                        tracing::debug!(target: "probe_sim", "{line}");
                    }
                }
                let mut a = shared.0.lock().unwrap_or_else(|e| e.into_inner());
                a.exited = true;
                shared.1.notify_all();
            })
            .context("could not start the simulator reader thread")?;
        let sim = Self {
            child: Mutex::new(child),
            stdin: Mutex::new(stdin),
            announced,
        };
        sim.wait_for_pty(0, Duration::from_secs(10))
            .with_context(|| {
                format!(
                    "the probe simulator {} did not announce its pty",
                    program.display()
                )
            })?;
        Ok(sim)
    }

    /// Waits until a pty newer than `after_generation` is announced; returns
    /// its generation and path.
    pub fn wait_for_pty(
        &self,
        after_generation: u64,
        timeout: Duration,
    ) -> anyhow::Result<(u64, PathBuf)> {
        let deadline = Instant::now() + timeout;
        let (lock, cvar) = &*self.announced;
        let mut a = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if a.generation > after_generation {
                if let Some(path) = &a.path {
                    return Ok((a.generation, path.clone()));
                }
            }
            anyhow::ensure!(!a.exited, "the probe simulator exited");
            let now = Instant::now();
            anyhow::ensure!(now < deadline, "timed out after {timeout:?}");
            a = cvar
                .wait_timeout(a, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The latest announced pty (generation, path).
    pub fn current_pty(&self) -> Option<(u64, PathBuf)> {
        let a = self.announced.0.lock().unwrap_or_else(|e| e.into_inner());
        a.path.clone().map(|p| (a.generation, p))
    }

    /// Sends one command line (`load 0.5`, `unplug 500`, `quit`).
    pub fn command(&self, line: &str) -> anyhow::Result<()> {
        let mut stdin = self.stdin.lock().unwrap_or_else(|e| e.into_inner());
        let pipe = stdin.as_mut().context("simulator stdin already closed")?;
        writeln!(pipe, "{line}")
            .and_then(|_| pipe.flush())
            .context("could not write to the probe simulator")
    }

    /// Sets the simulated drive's activity (0..1).
    pub fn set_load(&self, fraction: f64) -> anyhow::Result<()> {
        self.command(&format!("load {:.3}", fraction.clamp(0.0, 1.0)))
    }

    /// Closes the pty for `ms` milliseconds (then a new one is announced).
    pub fn unplug(&self, ms: u64) -> anyhow::Result<()> {
        self.command(&format!("unplug {ms}"))
    }

    /// Power-on reset of the simulated INA228 (registers to their defaults,
    /// accumulators from 0); the probe core re-initialises it.
    pub fn reset_chip(&self) -> anyhow::Result<()> {
        self.command("reset")
    }

    /// The simulated sampling context answers no ALERT for `ms` milliseconds.
    pub fn stall_sampler(&self, ms: u64) -> anyhow::Result<()> {
        self.command(&format!("stall {ms}"))
    }

    /// Asks the simulator to quit, then waits (killing it after 2 s).
    pub fn shutdown(&self) {
        let _ = self.command("quit");
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).take();
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for SimProcess {
    fn drop(&mut self) {
        self.shutdown();
    }
}
