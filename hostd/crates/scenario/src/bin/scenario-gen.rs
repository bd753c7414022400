//! `scenario-gen NAME|FILE OUT_DIR [--probe-hz HZ] [--seed-offset N] [--no-probe]`:
//! writes a simulated run directory (files.csv, probe.csv, truth.json, manifest.json).
//! `scenario-gen --bench OUT_DIR` writes the analysis benchmark's synthetic 100 GB run
//! (800 files, 1 000 000 probe samples). `scenario-gen --long-24h OUT_DIR` writes the
//! long-run benchmark's synthetic 24-hour run (100 000 files, 86.4 M probe samples at 1 kHz
//! in `probe/` Parquet segments with their summary levels, as `hostd run` writes them).

use hostd_scenario::write::{write_run, ProbeOptions};
use hostd_scenario::{load, simulate, Scenario};

/// The benchmark run: 800 files of 2–248 MB (≈100 GB), a drop at 40 GB.
const BENCH: &str = r#"
name = "bench-100gb"
description = "synthetic 100 GB run for just bench-analysis"
seed = 100
probe_target = "bench"
[device]
vbus_v = 5.0
idle_w = 2.9
active_w = 8.2
ambient_c = 25.0
rth_c_per_w = 6.0
tau_s = 20.0
[[target]]
name = "bench"
phase = "write"
total_gb = 100.0
file_count = 800
file_min_mb = 2.0
file_max_mb = 248.0
overhead_ms = 1.0
[[target.stage]]
rate_gbps = 2.0
jitter = 0.05
until_gb = 40.0
[[target.stage]]
rate_gbps = 1.2
jitter = 0.05
hold_temperature = true
cause = "thermal"
"#;

/// The long-run benchmark: 24 h of 100 000 paced files of 4.3–13 MB (864 GB), slower after
/// 300 GB (thermal).
const LONG_24H: &str = r#"
name = "long-24h"
description = "synthetic 24-hour run for just bench-long-synthetic"
seed = 24
probe_target = "long"
[device]
vbus_v = 5.0
idle_w = 2.9
active_w = 8.2
ambient_c = 25.0
rth_c_per_w = 6.0
tau_s = 600.0
[[target]]
name = "long"
phase = "write"
total_gb = 864.0
file_count = 100000
file_min_mb = 4.32
file_max_mb = 12.96
overhead_ms = 0.0
[[target.stage]]
rate_gbps = 0.012
jitter = 0.05
until_gb = 300.0
[[target.stage]]
rate_gbps = 0.0091857
jitter = 0.05
hold_temperature = true
cause = "thermal"
"#;

fn main() {
    if let Err(e) = run() {
        eprintln!("scenario-gen: error: {e:#}");
        std::process::exit(2);
    }
}

fn run() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: scenario-gen NAME|FILE OUT_DIR [--probe-hz HZ] [--seed-offset N] [--no-probe] [--parquet] | scenario-gen --bench OUT_DIR | scenario-gen --long-24h OUT_DIR";
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let positional: Vec<&String> = {
        let mut v = Vec::new();
        let mut skip = false;
        for a in &args {
            if skip {
                skip = false;
            } else if a == "--probe-hz" || a == "--seed-offset" {
                skip = true;
            } else if !a.starts_with("--") {
                v.push(a);
            }
        }
        v
    };
    let bench = args.iter().any(|a| a == "--bench");
    let long = args.iter().any(|a| a == "--long-24h");
    let (mut sc, out): (Scenario, &String) = if bench || long {
        (
            Scenario::from_toml(if long { LONG_24H } else { BENCH })?,
            positional
                .first()
                .ok_or_else(|| anyhow::anyhow!("{usage}"))?,
        )
    } else {
        anyhow::ensure!(positional.len() == 2, "{usage}");
        (load(positional[0])?, positional[1])
    };
    if let Some(n) = flag("--seed-offset") {
        sc.seed += n
            .parse::<u64>()
            .map_err(|_| anyhow::anyhow!("--seed-offset: not a whole number: {n}"))?;
    }
    let trace = simulate(&sc);
    let mut probe = ProbeOptions::default();
    if let Some(hz) = flag("--probe-hz") {
        probe.rate_hz = hz
            .parse()
            .map_err(|_| anyhow::anyhow!("--probe-hz: not a number: {hz}"))?;
    }
    if bench {
        // Exactly 1 000 000 samples over the run plus lead and tail.
        let seconds = trace.end_ns as f64 * 1e-9 + probe.lead_s + probe.tail_s;
        probe.rate_hz = 1_000_000.0 / seconds;
    }
    if long {
        probe.rate_hz = 1000.0;
    }
    probe.parquet = long || args.iter().any(|a| a == "--parquet");
    let probe = (!args.iter().any(|a| a == "--no-probe")).then_some(probe);
    write_run(std::path::Path::new(out), &sc, &trace, probe)?;
    println!(
        "{}: {} files, {:.1} GB, {:.1} s → {out}",
        sc.name,
        trace.files.len(),
        trace.files.iter().map(|f| f.bytes).sum::<u64>() as f64 / 1e9,
        trace.end_ns as f64 * 1e-9
    );
    Ok(())
}
