//! A private `influxd` for tests (feature `testing`).
//!
//! [`InfluxServer::start`] runs the real server on a free 127.0.0.1 port with a temporary
//! data directory, waits for `/health`, onboards it (org and bucket `throttlescope`) and
//! maps the InfluxQL database `throttlescope` to the bucket. It can be stopped and
//! restarted on the same port and data (outage tests) and is killed when dropped.
//!
//! The binary is `$THROTTLESCOPE_INFLUXD`, else
//! `${THROTTLESCOPE_CACHE:-$HOME/.cache/throttlescope}/influxd/influxd` as built by
//! `scripts/build-influxd.sh` (`just influx-build`). All calls are blocking and safe to
//! make from inside an async runtime (HTTP runs on a helper thread).

use crate::admin::{influxql_rows, Api, BucketIds};
use crate::{Target, Token};
use anyhow::{anyhow, bail, Context as _};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Organisation, bucket and InfluxQL database of a test server.
pub const NAME: &str = "throttlescope";

/// Finds the influxd binary, or explains how to build it.
pub fn influxd_binary() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("THROTTLESCOPE_INFLUXD") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        bail!(
            "THROTTLESCOPE_INFLUXD={} does not exist; run `just influx-build`",
            p.display()
        );
    }
    let cache = match std::env::var_os("THROTTLESCOPE_CACHE") {
        Some(c) => PathBuf::from(c),
        None => {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/throttlescope")
        }
    };
    let p = cache.join("influxd/influxd");
    if p.is_file() {
        return Ok(p);
    }
    bail!(
        "influxd not found at {}: run `just influx-build` (scripts/build-influxd.sh) first, \
         or set THROTTLESCOPE_INFLUXD",
        p.display()
    )
}

/// Runs `f` on a helper thread, so blocking HTTP works inside async tests too.
fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| s.spawn(f).join().expect("helper thread panicked"))
}

fn free_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").context("no free loopback port")?;
    Ok(l.local_addr()?.port())
}

/// A running private influxd (see the module docs).
pub struct InfluxServer {
    binary: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    child: Option<Child>,
    token: Token,
    ids: BucketIds,
}

impl std::fmt::Debug for InfluxServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InfluxServer")
            .field("url", &self.url())
            .field("dir", &self.dir.path())
            .field("running", &self.child.is_some())
            .finish()
    }
}

impl InfluxServer {
    /// Starts, onboards and maps a fresh server. Fails (with how to fix it) when the
    /// influxd binary is missing.
    pub fn start() -> anyhow::Result<InfluxServer> {
        InfluxServer::start_with(true)
    }

    /// Starts a server that is not onboarded yet (for testing onboarding itself); its
    /// [`InfluxServer::token`] is empty until [`InfluxServer::set_token`].
    pub fn start_fresh() -> anyhow::Result<InfluxServer> {
        InfluxServer::start_with(false)
    }

    /// Uses `token` (and looks up the `throttlescope` org and bucket) from now on, e.g.
    /// after onboarding a fresh server by other means.
    pub fn set_token(&mut self, token: Token) -> anyhow::Result<()> {
        let url = self.url();
        let t = token.clone();
        self.ids = off_runtime(|| Api::new(&url, Some(t))?.bucket(NAME, NAME, false))?;
        self.token = token;
        Ok(())
    }

    fn start_with(onboard: bool) -> anyhow::Result<InfluxServer> {
        let binary = influxd_binary()?;
        let dir = tempfile::Builder::new()
            .prefix("throttlescope-influxd-")
            .tempdir()
            .context("cannot create a temporary directory for influxd")?;
        // A port can be taken between probing and binding: try a few.
        let mut last_err = None;
        for _ in 0..5 {
            let port = free_port()?;
            match spawn(&binary, dir.path(), port) {
                Ok(child) => {
                    let mut server = InfluxServer {
                        binary: binary.clone(),
                        dir,
                        port,
                        child: Some(child),
                        token: Token::new(""),
                        ids: BucketIds {
                            org_id: String::new(),
                            bucket_id: String::new(),
                        },
                    };
                    if onboard {
                        server.onboard()?;
                    }
                    return Ok(server);
                }
                Err(e) => last_err = Some(e),
            }
        }
        Err(last_err.unwrap_or_else(|| anyhow!("influxd did not start")))
    }

    fn onboard(&mut self) -> anyhow::Result<()> {
        let url = self.url();
        let (token, ids) = off_runtime(|| -> anyhow::Result<_> {
            let mut api = Api::new(&url, None)?;
            let (token, ids) = api.onboard("throttlescope", "throttlescope-test", NAME, NAME)?;
            api.ensure_dbrp(&ids, NAME)?;
            Ok((token, ids))
        })?;
        self.token = token;
        self.ids = ids;
        Ok(())
    }

    /// Base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The data directory (bolt, engine, sqlite and `influxd.log`).
    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The operator token issued at onboarding.
    pub fn token(&self) -> &Token {
        &self.token
    }

    /// Organisation and bucket IDs.
    pub fn ids(&self) -> &BucketIds {
        &self.ids
    }

    /// A write target for org and bucket `throttlescope`.
    pub fn target(&self) -> Target {
        Target {
            url: self.url(),
            org: NAME.into(),
            bucket: NAME.into(),
            token: self.token.clone(),
        }
    }

    /// A token file (mode 0600) holding the operator token, inside the data directory.
    pub fn token_file(&self) -> anyhow::Result<PathBuf> {
        let p = self.dir.path().join("token");
        self.token.write_to(&p)?;
        Ok(p)
    }

    /// True while the process runs.
    pub fn is_running(&mut self) -> bool {
        match &mut self.child {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// Stops the server gracefully (SIGTERM; SIGKILL after 15 s). Data stays.
    pub fn stop(&mut self) -> anyhow::Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        // SAFETY: kill(2) on the PID of a child we own and have not reaped.
        #[cfg(unix)]
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
        }
        #[cfg(windows)] // no SIGTERM: the server is ended at once
        child.kill()?;
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        child.kill()?;
        child.wait()?;
        Ok(())
    }

    /// Kills the server at once (SIGKILL), like a crash. Data stays.
    pub fn kill(&mut self) -> anyhow::Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill()?;
            child.wait()?;
        }
        Ok(())
    }

    /// Starts the server again on the same port and data directory; waits for `/health`.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        self.stop()?;
        // The port was ours a moment ago; retry briefly while the kernel releases it.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match spawn(&self.binary, self.dir.path(), self.port) {
                Ok(c) => {
                    self.child = Some(c);
                    return Ok(());
                }
                Err(e) if Instant::now() < deadline => {
                    tracing::debug!("influxd restart: {e:#}; retrying");
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// An API client with the operator token (call from a plain thread).
    pub fn api(&self) -> anyhow::Result<Api> {
        Api::new(&self.url(), Some(self.token.clone()))
    }

    /// Runs an InfluxQL query against database `throttlescope`.
    pub fn influxql(&self, query: &str) -> anyhow::Result<Value> {
        off_runtime(|| self.api()?.influxql(NAME, query))
    }

    /// Runs a Flux query; returns annotated CSV.
    pub fn flux(&self, query: &str) -> anyhow::Result<String> {
        off_runtime(|| self.api()?.flux(NAME, query))
    }

    /// Rows of the first series of an InfluxQL query.
    pub fn rows(&self, query: &str) -> anyhow::Result<Vec<Vec<Value>>> {
        Ok(influxql_rows(&self.influxql(query)?))
    }

    /// Number of points of `measurement` that have `field` (0 when there are none).
    pub fn count(&self, measurement: &str, field: &str) -> anyhow::Result<u64> {
        let rows = self.rows(&format!("SELECT count(\"{field}\") FROM \"{measurement}\""))?;
        Ok(rows
            .first()
            .and_then(|r| r.get(1))
            .and_then(Value::as_u64)
            .unwrap_or(0))
    }

    /// Process id of the running server (`None` while stopped).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The log of the server (stdout and stderr of every start).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("influxd.log")).unwrap_or_default()
    }
}

impl Drop for InfluxServer {
    fn drop(&mut self) {
        let _ = self.kill();
    }
}

/// Whether the influxd answering on `port` is the one started on `dir`: its command line
/// (Go's `/debug/pprof/cmdline`, on by default) names the data directory.
fn started_on(port: u16, dir: &Path) -> bool {
    use std::io::{Read, Write};
    let ask = || -> std::io::Result<String> {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port))?;
        s.set_read_timeout(Some(Duration::from_secs(2)))?;
        s.write_all(b"GET /debug/pprof/cmdline HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
        let mut answer = Vec::new();
        s.read_to_end(&mut answer)?;
        Ok(String::from_utf8_lossy(&answer).into_owned())
    };
    ask().is_ok_and(|a| a.contains(&*dir.join("influxd.bolt").to_string_lossy()))
}

/// Starts influxd and waits for `/health`; on failure kills it and returns its log tail.
fn spawn(binary: &Path, dir: &Path, port: u16) -> anyhow::Result<Child> {
    let log_path = dir.join("influxd.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("cannot open {}", log_path.display()))?;
    let mut child = Command::new(binary)
        .arg("run")
        .arg("--bolt-path")
        .arg(dir.join("influxd.bolt"))
        .arg("--engine-path")
        .arg(dir.join("engine"))
        .arg("--sqlite-path")
        .arg(dir.join("influxd.sqlite"))
        .arg("--http-bind-address")
        .arg(format!("127.0.0.1:{port}"))
        .args([
            "--reporting-disabled",
            "--ui-disabled",
            "--log-level",
            "warn",
        ])
        .env("INFLUXD_CONFIG_PATH", dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let healthy = off_runtime(|| -> anyhow::Result<bool> {
        let api = Api::new(&url, None)?;
        while Instant::now() < deadline {
            if let Some(status) = child.try_wait()? {
                bail!("influxd exited with {status} before becoming healthy");
            }
            if api.healthy() {
                // Another test's influxd may hold the port (taken between probing and
                // binding, ours then fails to bind): only ours was started on `dir`.
                if !started_on(port, dir) {
                    bail!("127.0.0.1:{port} is answered by another influxd");
                }
                return Ok(true);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(false)
    });
    let failure = match healthy {
        Ok(true) => return Ok(child),
        Ok(false) => anyhow!("influxd on {url} not healthy after 60 s"),
        Err(e) => e,
    };
    let _ = child.kill();
    let _ = child.wait();
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    let tail: Vec<&str> = log.lines().rev().take(15).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(failure.context(format!("influxd log tail:\n{}", tail.join("\n"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_held_by_another_influxd_is_refused_not_taken_for_ours() {
        let theirs = InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"));
        let ours = tempfile::tempdir().unwrap();
        let binary = influxd_binary().unwrap();
        let err = spawn(&binary, ours.path(), theirs.port())
            .expect_err("a second influxd on a taken port must not pass for a started one");
        assert!(
            format!("{err:#}").contains("answered by another influxd")
                || format!("{err:#}").contains("exited"),
            "{err:#}"
        );
        assert!(started_on(theirs.port(), theirs.dir.path()));
        assert!(!started_on(theirs.port(), ours.path()));
    }
}
