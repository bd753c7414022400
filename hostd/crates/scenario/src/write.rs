//! Writing a simulated run as a run directory: files.csv, counters.csv, the probe's
//! samples (probe.csv, or `probe/` Parquet segments with their summary levels as `hostd run`
//! writes them) and manifest.json through the writers `hostd run` uses (hostd-records), plus truth.json.

use crate::device;
use crate::model::Scenario;
use crate::sim::Trace;
use anyhow::Context;
use hostd_records::counters::CounterRecord;
use hostd_records::{self as records, Manifest, ProbeSample, TargetInfo};
use std::path::Path;

pub use crate::sim::BASE_UNIX_NS;

/// How to write the probe samples.
#[derive(Debug, Clone, Copy)]
pub struct ProbeOptions {
    /// Samples per second.
    pub rate_hz: f64,
    /// Seconds of idle samples before the first file.
    pub lead_s: f64,
    /// Seconds of samples after the last file.
    pub tail_s: f64,
    /// Write `probe/` (Parquet segments and summary levels, as `hostd run` does) instead of
    /// `probe.csv` (as runs before Parquet storage did).
    pub parquet: bool,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            rate_hz: 100.0,
            lead_s: 2.0,
            tail_s: 5.0,
            parquet: false,
        }
    }
}

/// Writes files.csv, counters.csv (and, with `probe`, probe.csv), truth.json and
/// manifest.json into `dir`.
pub fn write_run(
    dir: &Path,
    sc: &Scenario,
    trace: &Trace,
    probe: Option<ProbeOptions>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let mut files = records::files::Writer::create(dir)?;
    for r in &trace.files {
        files.write(r)?;
    }
    drop(files);
    let (labels, samples): (Vec<String>, Vec<Vec<CounterRecord>>) = trace
        .counters
        .iter()
        .map(|(target, s)| {
            let unix = s.iter().map(|&(t, bytes)| CounterRecord {
                time_ns: (BASE_UNIX_NS + t) as u64,
                bytes,
            });
            (target.clone(), unix.collect())
        })
        .unzip();
    records::counters::write(dir, &labels, &samples)?;
    if let Some(p) = probe.filter(|p| p.parquet) {
        write_probe_store(dir, sc, trace, p)?;
    } else if let Some(p) = probe {
        let mut w = records::probe::Writer::create(dir)?;
        let mut err = None;
        probe_batches(sc, trace, p, |batch| {
            if err.is_none() {
                err = w.write(batch).err();
            }
        });
        if let Some(e) = err {
            return Err(e.into());
        }
        w.flush()?;
    }
    if probe.is_some() {
        write_port_timeline(dir, sc, trace)?;
    }
    write_os_log(dir, trace)?;
    let truth: Vec<serde_json::Value> = trace
        .truth
        .iter()
        .map(|e| {
            serde_json::json!({
                "target": e.target, "phase": e.phase, "kind": e.kind, "cause": e.cause,
                "onset_bytes": e.onset_bytes, "onset_ns": BASE_UNIX_NS + e.onset_ns,
                "onset_gb": e.onset_bytes as f64 / 1e9, "total_bytes": e.total_bytes,
                "settle_bytes": e.settle_bytes, "count": e.count,
            })
        })
        .collect();
    std::fs::write(
        dir.join("truth.json"),
        serde_json::to_string_pretty(&serde_json::json!({ "scenario": sc.name, "events": truth }))?
            + "\n",
    )?;
    // The run starts with its first record: the probe's lead, if any.
    let lead_ns = probe.map_or(0, |p| (p.lead_s * 1e9) as i64);
    let start_ns = (BASE_UNIX_NS - lead_ns) as u64;
    records::manifest::write(dir, &manifest(sc, trace, start_ns))?;
    Ok(())
}

/// The run's probe samples in batches of 4 096 (the last one shorter), streamed from the
/// device model: rounded as a real probe's resolution would be, which also keeps the files
/// small.
fn probe_batches(
    sc: &Scenario,
    trace: &Trace,
    p: ProbeOptions,
    mut each: impl FnMut(&[ProbeSample]),
) {
    let mut batch = Vec::with_capacity(4096);
    let mut seq = 0u64;
    let mut charge = 0.0;
    let dt = 1.0 / p.rate_hz;
    let round = |x: f64, decimals: i32| {
        let k = 10f64.powi(decimals);
        Some((x * k).round() / k)
    };
    device::samples(
        &sc.device,
        trace,
        p.rate_hz,
        p.lead_s,
        p.tail_s,
        sc.seed,
        |s| {
            charge += s.current_a * dt;
            batch.push(ProbeSample {
                time_ns: BASE_UNIX_NS + s.t_ns,
                seq,
                probe_time_us: 0,
                vbus_v: round(s.vbus_v, 5),
                current_a: round(s.current_a, 5),
                power_w: round(s.power_w, 4),
                energy_j: round(s.energy_j, 4),
                charge_c: round(charge, 4),
                die_temp_c: round(s.die_temp_c, 3),
                enclosure_temp_c: round(s.enclosure_temp_c, 3),
                vbus_min_v: None,
            });
            if batch.len() == batch.capacity() {
                each(&batch);
                batch.clear();
            }
            seq += 1;
        },
    );
    each(&batch);
}

/// Writes the samples to `probe/` with their 10 ms and 1 s levels, binned by the probe
/// crate's aggregator as `hostd run`'s recorder bins them; one batch in memory at a time.
fn write_probe_store(
    dir: &Path,
    sc: &Scenario,
    trace: &Trace,
    p: ProbeOptions,
) -> anyhow::Result<()> {
    use hostd_records::binning::Aggregator;
    use records::probe_levels::{self, Level};
    let mut samples = records::probe_store::Writer::create(dir)?;
    let mut levels = probe_levels::Writer::new(dir);
    let mut ms10 = Aggregator::new(Level::Ms10.width_ns());
    let mut s1 = Aggregator::new(Level::S1.width_ns());
    let mut err = None;
    probe_batches(sc, trace, p, |batch| {
        if err.is_some() {
            return;
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for s in batch {
            a.extend(ms10.push(s));
            b.extend(s1.push(s));
        }
        err = samples
            .write(batch)
            .and_then(|()| levels.write(&a, &b))
            .err();
    });
    if let Some(e) = err {
        return Err(e.into());
    }
    let (a, b): (Vec<_>, Vec<_>) = (
        ms10.flush().into_iter().collect(),
        s1.flush().into_iter().collect(),
    );
    levels.write(&a, &b)?;
    samples.finish()?;
    levels.finish()?;
    Ok(())
}

/// The manifest of a simulated run: the shape `hostd run` writes, with `sim` targets and
/// the scenario's name under `extra.scenario`.
fn manifest(sc: &Scenario, trace: &Trace, start_ns: u64) -> Manifest {
    let targets = sc
        .targets
        .iter()
        .map(|t| TargetInfo::simulated(&t.name, &t.phase, &format!("sim:{}:{}", t.name, t.phase)))
        .collect();
    let mut m = Manifest::new(&format!("scenario-{}", sc.name), start_ns, targets);
    m.hostd_version = env!("CARGO_PKG_VERSION").into();
    m.command_line = vec!["scenario-gen".into(), sc.name.clone()];
    m.seed = sc.seed;
    m.probe_target = Some(sc.probe_target.clone());
    m.set_section(
        records::manifest::extra::SCENARIO,
        &records::manifest::extra::ScenarioSection {
            name: sc.name.clone(),
            simulated: true,
            end_ns: Some(BASE_UNIX_NS + trace.end_ns),
        },
    );
    if let Some(budget) = port_budget(&sc.device) {
        let mut probe = records::manifest::extra::ProbeSection {
            source: "scenario".into(),
            target: Some(sc.probe_target.clone()),
            ..Default::default()
        };
        probe.rest.insert(
            records::port_budget::MANIFEST_KEY.into(),
            records::manifest::extra::value(&budget),
        );
        m.set_section(records::manifest::extra::PROBE, &probe);
    }
    m
}

/// The port's advertisement changes on the run's timeline (`probe-link.jsonl`, kind
/// `port`, as `hostd run` records a `PortStatus`), when a stage changed it.
fn write_port_timeline(dir: &Path, sc: &Scenario, trace: &Trace) -> anyhow::Result<()> {
    let mut text = String::new();
    for step in &trace.port {
        let dev = sc.device.with_port_current(Some(step.current_a));
        let Some(budget) = port_budget(&dev) else {
            continue;
        };
        let mut r = records::probe_link::LinkRecord::new("port", BASE_UNIX_NS + step.t_ns);
        r.nested.insert(
            records::port_budget::MANIFEST_KEY.into(),
            serde_json::to_value(&budget)?,
        );
        text.push_str(&r.to_line());
        text.push('\n');
    }
    if !text.is_empty() {
        let path = dir.join(records::probe_link::FILE_NAME);
        std::fs::write(&path, text)
            .with_context(|| format!("could not write {}", path.display()))?;
    }
    Ok(())
}

/// The lines the scenario's stages logged (`os-log.jsonl`, as `hostd run`'s OS-log part
/// writes them), when any.
fn write_os_log(dir: &Path, trace: &Trace) -> anyhow::Result<()> {
    if trace.os_log.is_empty() {
        return Ok(());
    }
    let lines: Vec<records::os_log::OsLogRecord> = trace
        .os_log
        .iter()
        .map(|l| records::os_log::OsLogRecord {
            time_ns: BASE_UNIX_NS + l.t_ns,
            kind: l.kind,
            target: Some(l.target.clone()),
            device: None,
            source: "kernel".into(),
            line: l.line.clone(),
        })
        .collect();
    records::os_log::write(dir, &lines)?;
    Ok(())
}

/// The budget a probe would record for the device's port: the advertised current at 5 V;
/// with a PD contract, its terms (`pd_contract_v`, and `port_current_a` as its current), as
/// a probe that decodes PD reads them. None without a port model.
fn port_budget(d: &crate::DeviceModel) -> Option<records::port_budget::PortBudget> {
    use records::port_budget::{BudgetSource, PortBudget};
    let a = d.port_current_a?;
    let name = match a {
        a if a <= 0.9 => "default",
        a if a <= 1.5 => "1.5A",
        _ => "3.0A",
    };
    let mut b = PortBudget {
        budget_w: Some(a * 5.0),
        source: BudgetSource::Cc,
        advertisement: Some(name.into()),
        advertised_a: Some(a),
        vbus_v: Some(d.pd_contract_v.unwrap_or(d.vbus_v)),
        pd_contract: d.pd_contract_v.is_some(),
        ..PortBudget::unknown()
    };
    if let Some(v) = d.pd_contract_v {
        // Under a contract the Rp on CC is no budget: the contract's terms are. The source
        // offers Fixed 5 V first and the contract's voltage second, as the probe
        // simulator's does (firmware/sim/pd_line.c).
        b.budget_w = Some(v * a);
        b.source = BudgetSource::PdContract;
        b.advertisement = None;
        b.advertised_a = None;
        b.contract_v = Some(v);
        b.contract_a = Some(a);
        b.contract_w = Some(v * a);
        b.contract_supply = Some("fixed".into());
        b.contract_object = Some(if v == 5.0 { 1 } else { 2 });
    }
    Some(b)
}
