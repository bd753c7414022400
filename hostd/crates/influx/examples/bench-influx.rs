//! `just bench-influx`: write throughput of hostd's writer against a private local influxd,
//! side by side with the official Python `influxdb-client` (synchronous, gzip, batches of
//! 5 000; `examples/bench_influx_official.py`) writing the same probe points (8 fields, 3
//! tags) to the same server, rounds alternating, each round under its own `run` tag and
//! counted back by a query. For each it reports points/s and the CPU use of influxd and of
//! the client (100 % = one core busy), so "influxd is the limit" can be read off.
//!
//! Usage: bench-influx [POINTS] [ROUNDS] (default 1 000 000 points, 3 rounds). The Python
//! side runs when `BENCH_INFLUX_PYTHON` names an interpreter with `influxdb_client`
//! (the `just bench-influx` recipe makes one in a venv).

use hostd_influx::testing::InfluxServer;
use hostd_influx::{Point, Writer, WriterConfig};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// CPU seconds of another process: read from /proc, which only Linux has.
#[cfg(not(unix))]
fn cpu_seconds(pid: &str) -> anyhow::Result<f64> {
    anyhow::bail!("CPU seconds of process {pid}: /proc/PID/stat exists only on Linux")
}

/// CPU seconds (user + system) of process `pid` so far, from `/proc/PID/stat`.
#[cfg(unix)]
fn cpu_seconds(pid: &str) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces) start at field 3.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>()? + f[12].parse::<f64>()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Ok(ticks / hz)
}

/// One client's round: wall seconds, client CPU seconds, influxd CPU seconds.
#[derive(Debug, Clone, Copy)]
struct Round {
    secs: f64,
    client_cpu: f64,
    server_cpu: f64,
}

fn probe_point(run: &str, i: i64) -> Point {
    let t0_ns = 1_700_000_000_000_000_000i64;
    Point::new("probe")
        .tag("rig", "bench")
        .tag("run", run)
        .tag("probe", "p0")
        .field("seq", i)
        .field("vbus_v", 5.0 + (i % 97) as f64 * 1e-4)
        .field("current_a", 1.2 + (i % 89) as f64 * 1e-4)
        .field("power_w", 6.0 + (i % 83) as f64 * 1e-3)
        .field("energy_j", i as f64 * 1.2e-3)
        .field("charge_c", i as f64 * 2.4e-4)
        .field("die_temp_c", 41.0 + (i % 71) as f64 * 1e-2)
        .field("enclosure_temp_c", 38.0 + (i % 67) as f64 * 1e-2)
        .timestamp_ns(t0_ns + i * 200_000)
}

fn rust_round(server: &InfluxServer, spool: &Path, run: &str, n: i64) -> anyhow::Result<Round> {
    let pid = server.pid().expect("influxd running").to_string();
    let (s0, c0) = (cpu_seconds(&pid)?, cpu_seconds("self")?);
    let start = Instant::now();
    let mut cfg = WriterConfig::new(server.target(), Some(spool.to_path_buf()));
    cfg.batch_size = 5_000;
    let writer = Writer::start(cfg)?;
    let mut chunk = Vec::with_capacity(5_000);
    for i in 0..n {
        chunk.push(probe_point(run, i));
        if chunk.len() == 5_000 {
            writer.write_all(&chunk)?;
            chunk.clear();
        }
    }
    writer.write_all(&chunk)?;
    let report = writer.close(Duration::from_secs(600));
    let secs = start.elapsed().as_secs_f64();
    anyhow::ensure!(report.is_complete(), "{}", report.summary());
    Ok(Round {
        secs,
        client_cpu: cpu_seconds("self")? - c0,
        server_cpu: cpu_seconds(&pid)? - s0,
    })
}

fn python_round(server: &InfluxServer, python: &str, run: &str, n: i64) -> anyhow::Result<Round> {
    let pid = server.pid().expect("influxd running").to_string();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/bench_influx_official.py");
    let t = server.target();
    let s0 = cpu_seconds(&pid)?;
    let out = Command::new(python)
        .arg(script)
        .arg(server.url())
        .arg(server.token_file()?)
        .args([&t.org, &t.bucket, &n.to_string(), run])
        .output()?;
    let server_cpu = cpu_seconds(&pid)? - s0;
    anyhow::ensure!(
        out.status.success(),
        "the official client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    Ok(Round {
        secs: v["seconds"].as_f64().unwrap_or(f64::NAN),
        client_cpu: v["cpu_seconds"].as_f64().unwrap_or(f64::NAN),
        server_cpu,
    })
}

fn count_run(server: &InfluxServer, run: &str) -> anyhow::Result<u64> {
    let rows = server.rows(&format!(
        "SELECT count(\"seq\") FROM \"probe\" WHERE \"run\" = '{run}'"
    ))?;
    Ok(rows
        .first()
        .and_then(|r| r.get(1))
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0))
}

/// "mean (min–max)" of points/s over the rounds, and the mean CPU shares.
fn describe(name: &str, n: i64, rounds: &[Round]) -> (f64, String) {
    let rates: Vec<f64> = rounds.iter().map(|r| n as f64 / r.secs).collect();
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    let (lo, hi) = rates
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), r| (lo.min(*r), hi.max(*r)));
    let share = |f: fn(&Round) -> f64| {
        100.0 * rounds.iter().map(|r| f(r) / r.secs).sum::<f64>() / rounds.len() as f64
    };
    (
        mean,
        format!(
            "{name:<28} {:>8.0} points/s (rounds {:.0}–{:.0}); CPU: client {:>3.0} %, influxd {:>3.0} %",
            mean,
            lo,
            hi,
            share(|r| r.client_cpu),
            share(|r| r.server_cpu)
        ),
    )
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let n: i64 = args
        .get(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let rounds: usize = args
        .get(2)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(3)
        .max(1);
    let python = std::env::var("BENCH_INFLUX_PYTHON")
        .ok()
        .filter(|p| !p.is_empty());
    let server = InfluxServer::start()?;
    let dir = tempfile::tempdir()?;
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let run = format!("bench-hostd-{round}");
        ours.push(rust_round(&server, &dir.path().join(&run), &run, n)?);
        let counted = count_run(&server, &run)?;
        anyhow::ensure!(counted == n as u64, "{run}: wrote {n}, counted {counted}");
        if let Some(py) = &python {
            let run = format!("bench-python-{round}");
            theirs.push(python_round(&server, py, &run, n)?);
            let counted = count_run(&server, &run)?;
            anyhow::ensure!(counted == n as u64, "{run}: wrote {n}, counted {counted}");
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!(
        "bench-influx: {n} probe points (8 fields, 3 tags) per client and round, batches of 5 000, gzip, \
         {rounds} round(s) alternating, one private influxd, {cores} cores; every point counted back"
    );
    let (ours_rate, line) = describe("hostd-influx Writer", n, &ours);
    println!("  {line}");
    if theirs.is_empty() {
        println!(
            "  (official client skipped: set BENCH_INFLUX_PYTHON, as `just bench-influx` does)"
        );
    } else {
        let (theirs_rate, line) = describe("influxdb-client (Python)", n, &theirs);
        println!("  {line}");
        println!("  ratio: {:.2}×", ours_rate / theirs_rate);
    }
    Ok(())
}
