//! The probe as a part of `hostd run` ([`Stage::Enrich`]): starts the link and the
//! recorder before the workload (the other parts' probe feeds get the samples as they
//! come), follows the run's events (simulator `load` = min(1, Σ activity levels of the
//! targets)), correlates each file of the probed target
//! with the probe record as the file ends ([`crate::stream::Correlator`], a bounded
//! window of the record; its figures appended to `files-probe.csv`, this part's own file, as
//! they settle), and at the end puts together: the probe's figures on the file records
//! (read back from `files-probe.csv`, with the rows of the files it has none for), the
//! `summary.json` section, the manifest's final alignment and link counters, and the
//! probe's series (read from `probe/` as `hostd analyze` reads it) and link records for
//! the parts after it.

use crate::correlate::Correlation;
use crate::file_figures::{fill_missing_figures, ProbedTarget};
use crate::recorder::{ProbeRecorder, Recording};
use crate::stream::{phase_figures, Correlator};
use anyhow::Context;
use hostd_probe::link::{LinkConfig, LinkReport, ProbeLink, ProbeSource};
use hostd_probe::pb;
use hostd_records::latency::LatencyHistogram;
use hostd_records::manifest::extra;
use hostd_records::port_budget::{self, PortBudget};
use hostd_records::summary::ProbeHealth;
use hostd_records::{FileRecord, RunEvent};
use hostd_store::{ProbeFeed, RunPart, RunRecords, RunStart, Stage};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// Largest alignment uncertainty the run accepts without a warning.
pub const ALIGNMENT_TARGET_NS: f64 = 1e6;
/// Largest energy-balance error accepted without a warning.
pub const BALANCE_TARGET: f64 = 1e-3;

/// How to run the probe.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// Which probe.
    pub source: ProbeSource,
    /// Simulator device-model flags.
    pub sim_args: Vec<String>,
    /// Sample rate in Hz (0: the probe's default).
    pub rate_hz: u32,
    /// Channel bits read on every sample (`hostd_probe::packed::CH_*`; 0: the probe's default).
    pub channels: u32,
    /// Index of the target whose cable the probe sits on (0: the first).
    pub target_index: usize,
    /// The host port's budget the user gave (`--port-budget`), W; it replaces the probe's.
    pub port_budget_w: Option<f64>,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        Self {
            source: ProbeSource::None,
            sim_args: Vec::new(),
            rate_hz: 1000,
            channels: hostd_probe::packed::CH_VBUS | hostd_probe::packed::CH_VSHUNT,
            target_index: 0,
            port_budget_w: None,
        }
    }
}

impl ProbeOptions {
    /// Checks, before anything is written, that the probe can be reached:
    /// the simulator binary exists, the port exists, or `auto` finds one.
    pub fn check(&self) -> anyhow::Result<()> {
        match &self.source {
            ProbeSource::None => Ok(()),
            ProbeSource::Sim => hostd_probe::link::sim::sim_program().map(|_| ()),
            ProbeSource::Port(p) => hostd_probe::link::check_port(p),
            ProbeSource::Auto { serial } => {
                hostd_probe::link::discover(serial.as_deref()).map(|_| ())
            }
        }
    }
}

/// How long a real probe has to deliver its first aligned sample.
const FIRST_SAMPLE_WAIT: Duration = Duration::from_secs(5);
/// The same for the probe simulator: a process hostd starts itself, on a host that may be
/// busy with the very run it serves (under two busy loops and a test suite its first
/// sample took longer than 5 s).
const FIRST_SAMPLE_WAIT_SIM: Duration = Duration::from_secs(20);

/// Starts a link and its recorder into `dir`; waits for samples (5 s, the simulator 20 s).
pub fn start_probe(
    opts: &ProbeOptions,
    dir: &Path,
    listeners: Vec<ProbeFeed>,
) -> anyhow::Result<(ProbeLink, ProbeRecorder)> {
    let (tx, rx) = mpsc::channel();
    let config = LinkConfig {
        source: opts.source.clone(),
        sim_args: opts.sim_args.clone(),
        start: pb::Start {
            rate_hz: opts.rate_hz,
            die_temp: true,
            channels: opts.channels,
            ..Default::default()
        },
        ..Default::default()
    };
    let link = ProbeLink::start(config, tx)?;
    let recorder = ProbeRecorder::spawn(rx, dir, listeners)?;
    link.wait_for_samples(if link.sim().is_some() {
        FIRST_SAMPLE_WAIT_SIM
    } else {
        FIRST_SAMPLE_WAIT
    })?;
    Ok((link, recorder))
}

#[derive(Default)]
struct Activity {
    levels: Vec<f64>,
    sent: Option<f64>,
}

/// The probe part of a run; see the module documentation.
pub struct ProbePart {
    opts: ProbeOptions,
    link: Option<ProbeLink>,
    recorder: Option<ProbeRecorder>,
    /// The recorder's correlator, told of the probed target's file starts and ends.
    correlator: Option<Arc<Mutex<Correlator>>>,
    /// Label of the target the probe is on, and the probe's name (id or source).
    probed: Option<(String, String)>,
    activity: Mutex<Activity>,
    /// The host port's budget at the start (the manifest's `power_budget`).
    budget: Option<PortBudget>,
}

impl ProbePart {
    /// A part for `opts`.
    pub fn new(opts: ProbeOptions) -> Self {
        Self {
            opts,
            link: None,
            recorder: None,
            correlator: None,
            probed: None,
            activity: Mutex::new(Activity::default()),
            budget: None,
        }
    }

    fn set_activity(&self, target: usize, level: f64) {
        let mut a = self.activity.lock().unwrap_or_else(|e| e.into_inner());
        if a.levels.len() <= target {
            a.levels.resize(target + 1, 0.0);
        }
        a.levels[target] = level;
        let load = a.levels.iter().sum::<f64>().min(1.0);
        if a.sent != Some(load) {
            a.sent = Some(load);
            if let Some(link) = &self.link {
                link.set_load(load);
            }
        }
    }
}

/// The link's snapshot once a probe that reads CC has said what the port offers: an
/// advertisement past its debounce (tCCDebounce, at most 200 ms) or a PD contract, at most
/// 1 s after its samples began (an open or unreadable port waits that long; a later change
/// goes on the timeline).
fn port_snapshot(link: &ProbeLink) -> hostd_probe::link::LinkSnapshot {
    let waited = std::time::Instant::now();
    loop {
        let snap = link.snapshot();
        let sensing = snap.port_sensing == hostd_probe::port::PortSensing::Present;
        let settled = snap.port_status.as_ref().is_some_and(|st| {
            st.pd_contract || hostd_probe::port::budget(Some(st), None).budget_w.is_some()
        });
        if !sensing || settled || waited.elapsed() > Duration::from_secs(1) {
            return snap;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The live view's budget and where it comes from ([`PortBudget::describe`]) with the
/// headroom: "budget 15.0 W (PD contract 5 V 3 A), headroom 4.00 W (27 %)", "…, over it by
/// 0.10 W (2 %)", "…, at it" (within 0.005 W: never "−0.00 W"), or "budget
/// unknown".
pub fn budget_part(budget: &PortBudget, power_w: Option<f64>) -> String {
    let said = budget.describe();
    match (budget.budget_w, power_w) {
        (Some(b), Some(p)) => {
            // Rounded as written, so that the words and the figure agree.
            let headroom = ((b - p) * 100.0).round() / 100.0;
            let share = (100.0 * headroom / b).round().abs();
            if headroom > 0.0 {
                format!("{said}, headroom {headroom:.2} W ({share:.0} %)")
            } else if headroom < 0.0 {
                format!("{said}, over it by {:.2} W ({share:.0} %)", -headroom)
            } else {
                format!("{said}, at it")
            }
        }
        _ => said,
    }
}

/// The live-view line for a link snapshot, its fields most telling first (a narrow
/// terminal cuts the last): a lost probe, the power with `budget` (the port's, when the run
/// knows one: [`budget_part`]), VBUS, the temperatures, then the link's gaps and reconnects.
pub fn live_line(snap: &hostd_probe::link::LinkSnapshot, budget: Option<&str>) -> String {
    let fmt = |v: Option<f64>, unit: &str, prec: usize| {
        v.map_or("–".to_string(), |v| format!("{v:.prec$} {unit}"))
    };
    let latest = snap.latest;
    let state = if snap.connected {
        ""
    } else {
        "PROBE DISCONNECTED (reconnecting)  "
    };
    let budget = budget.map(|b| format!("  {b}")).unwrap_or_default();
    format!(
        "probe: {state}{}{budget}  {}  enclosure {}  die {}  gaps {}  reconnects {}",
        fmt(latest.and_then(|s| s.power_w), "W", 2),
        fmt(latest.and_then(|s| s.vbus_v), "V", 2),
        fmt(latest.and_then(|s| s.enclosure_temp_c), "°C", 1),
        fmt(latest.and_then(|s| s.die_temp_c), "°C", 1),
        snap.stats.sequence.gaps,
        snap.reconnects
    )
}

impl RunPart for ProbePart {
    fn name(&self) -> &str {
        // Its manifest section is `extra.probe`.
        extra::PROBE
    }

    fn stage(&self) -> Stage {
        Stage::Enrich
    }

    fn on_event(&self, event: &RunEvent) -> anyhow::Result<()> {
        match event {
            RunEvent::Activity {
                target_index,
                level,
                ..
            } => self.set_activity(*target_index, *level),
            RunEvent::FileStart {
                target_index,
                phase,
                index,
                time_ns,
                ..
            } if *target_index == self.opts.target_index => {
                if let Some(c) = &self.correlator {
                    let mut c = c.lock().unwrap_or_else(|e| e.into_inner());
                    c.file_started(phase, *index, *time_ns as i64);
                }
            }
            RunEvent::FileEnd(f) if self.probed.as_ref().is_some_and(|p| p.0 == f.target) => {
                if let Some(c) = &self.correlator {
                    c.lock().unwrap_or_else(|e| e.into_inner()).file_ended(f);
                }
            }
            RunEvent::RunEnd { .. } => {
                let n = self
                    .activity
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .levels
                    .len();
                (0..n).for_each(|t| self.set_activity(t, 0.0));
            }
            _ => {}
        }
        Ok(())
    }

    /// Bus power, voltage, temperatures and link state, and the port's budget.
    fn live_status(&self) -> Option<String> {
        let snap = self.link.as_ref()?.snapshot();
        let budget = hostd_probe::port::budget(snap.port_status.as_ref(), self.opts.port_budget_w);
        let budget = budget_part(&budget, snap.latest.and_then(|s| s.power_w));
        Some(live_line(&snap, Some(&budget)))
    }

    fn start(&mut self, run: &mut RunStart<'_>) -> anyhow::Result<Option<Value>> {
        let manifest = &*run.manifest;
        let (link, recorder) = start_probe(&self.opts, run.dir, std::mem::take(run.probe_feeds))
            .with_context(|| format!("probe {}", self.opts.source))?;
        let snap = port_snapshot(&link);
        self.link = Some(link);
        self.correlator = Some(recorder.correlator());
        self.recorder = Some(recorder);
        // The analysis uses probe evidence only for the target the probe is on.
        let probed = manifest
            .targets
            .get(self.opts.target_index)
            .map(|t| t.label.clone());
        let probe_name = snap
            .identity
            .as_ref()
            .map(|i| i.probe_id.clone())
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| self.opts.source.to_string());
        if let Some(c) = &self.correlator {
            // The `probe` column of the figures it settles into files-probe.csv.
            c.lock()
                .unwrap_or_else(|e| e.into_inner())
                .set_probe(&probe_name);
        }
        self.probed = probed.clone().map(|t| (t, probe_name));
        let budget = hostd_probe::port::budget(snap.port_status.as_ref(), self.opts.port_budget_w);
        if budget.budget_w.is_none() {
            // The run's summary warns of it once, at the end; here only for `-v`.
            tracing::info!(
                "the host port's {}: bus power is not judged against a budget",
                budget.describe()
            );
        }
        let rest = json!({
            (port_budget::MANIFEST_KEY): budget,
            "port": snap.port,
            "identity": snap.identity,
            "rate_hz": self.opts.rate_hz,
            "requested_rate_hz": self.opts.rate_hz,
            "channels": hostd_probe::packed::channel_names(self.opts.channels),
            // One conversion per sample: the rate the probe chose (DeviceInfo
            // after Start); `final.achieved_rate_hz` is what it achieved.
            "conversion_rate_hz": snap.identity.as_ref().map(|i| i.conversion_rate_hz),
            "max_rate_hz": snap.identity.as_ref().map(|i| i.max_rate_hz),
            "sim_args": self.opts.sim_args,
        });
        self.budget = Some(budget);
        Ok(Some(extra::value(&extra::ProbeSection {
            source: self.opts.source.to_string(),
            target: probed,
            probe_id: snap.identity.as_ref().map(|i| i.probe_id.clone()),
            rest: rest.as_object().cloned().unwrap_or_default(),
        })))
    }

    fn finish(&mut self, records: &mut RunRecords<'_>) -> anyhow::Result<()> {
        let RunRecords {
            dir,
            outcome,
            summary,
            data: run,
            probe_link,
            ..
        } = records;
        let report = self.link.take().map(ProbeLink::stop).unwrap_or_default();
        let mut recording = match self.recorder.take() {
            Some(r) => r.finish()?,
            None => Recording::default(),
        };
        // One probe measures one target's cable: only that target's files get its figures
        // (and share its energy); the others have no probe. The recorder appended each
        // probed file's figures to files-probe.csv as they settled: read them back once,
        // and add the rows of the files with none (other targets, files never told of).
        let (probed_target, probe_name) = self.probed.clone().unwrap_or_default();
        self.correlator = None;
        hostd_records::files_probe::read_streamed(dir, &mut run.files)
            .context("cannot read the probe's figures back from files-probe.csv")?;
        let probed = ProbedTarget {
            target: &probed_target,
            probe: &probe_name,
        };
        let filled = fill_missing_figures(&mut run.files, probed);
        if let Some(w) = recording.figures.as_mut() {
            w.append(&filled);
            if let Some(failure) = w.failure() {
                summary.warnings.push(format!(
                    "files-probe.csv: {failure}; those files have no probe figures in this run's analysis"
                ));
            }
        }
        let files: Vec<&FileRecord> = run
            .files
            .iter()
            .filter(|f| f.target == probed_target)
            .collect();
        let energy: HashMap<(i64, i64), Option<f64>> = files
            .iter()
            .map(|f| {
                let e = f.probe.as_deref().and_then(|p| p.energy_j);
                ((f.start_ns as i64, f.end_ns as i64), e)
            })
            .collect();
        let files: Vec<FileRecord> = files.into_iter().cloned().collect();
        let phases = phase_figures(
            &files,
            |a, b| energy.get(&(a, b)).copied().flatten(),
            |each| {
                hostd_records::probe_levels::for_each_stored(
                    dir,
                    hostd_records::probe_levels::Level::Ms10,
                    each,
                )
                .context("cannot read the probe's 10 ms level back")
            },
        )?;
        drop(files);
        let correlation = Correlation {
            files: Vec::new(),
            phases,
            balance: recording.correlator.balance().cloned(),
        };
        let unprobed: Vec<String> = outcome
            .targets
            .iter()
            .map(|t| t.label.clone())
            .filter(|l| *l != probed_target)
            .collect();
        // For the analysis and the report after this part: the series `hostd
        // analyze` reads (every sample of a short run, a summary level of a long one), and
        // the budget in force at each time, as `hostd analyze` reads it.
        let series = hostd_records::run::probe_series(dir)
            .context("cannot read the probe's series back from probe/")?;
        *probe_link = hostd_records::probe_link::read(dir)
            .context("cannot read the probe's link events back from probe-link.jsonl")?;
        let timeline = port_budget::BudgetTimeline::of_run(self.budget.as_ref(), probe_link);
        // Each phase's energy, power and enclosure figures are the analysis' headline
        // figures, printed with them; the probe's lines say how it measured.
        let mut section = probe_section(&report, &recording, &correlation);
        section["text"] = json!(summary_lines(&report, &correlation, &unprobed));
        section["no_probe"] = json!(unprobed);
        // For the manifest's probe section once the run can merge it there.
        section["manifest"] = final_manifest_section(&report);
        summary
            .warnings
            .extend(probe_warnings(&report, &correlation));
        summary
            .warnings
            .extend(lag_warning(&recording.delivery_lag));
        summary.extra.insert("probe".into(), section);
        summary.probe_health = Some(probe_health(&report, self.opts.rate_hz));
        run.probe = (!series.is_empty()).then_some(series);
        run.probe_target = Some(probed_target);
        run.port_budget = self.budget.clone();
        run.budget_timeline = timeline;
        if let Some(b) = self.budget.as_ref().filter(|b| b.budget_w.is_none()) {
            summary.warnings.push(format!(
                "the host port's {}: power is judged by VBUS only (--port-budget WATTS gives one)",
                b.describe()
            ));
        }
        Ok(())
    }
}

/// The `summary.json` `probe` section.
pub fn probe_section(report: &LinkReport, rec: &Recording, c: &Correlation) -> Value {
    json!({
        "link": report,
        "alignment_uncertainty_ns": alignment_uncertainty_ns(report),
        "samples": rec.samples,
        "agg_rows": rec.agg_rows,
        "energy_balance": c.balance,
        "phases": c.phases,
        "listener_errors": rec.listener_errors,
        "delivery_lag": rec.delivery_lag.stats(),
        "text": summary_lines(report, c, &[]),
    })
}

/// The run's alignment uncertainty: the largest the fit reported once it
/// had drift, else the latest.
pub fn alignment_uncertainty_ns(report: &LinkReport) -> Option<f64> {
    report
        .stats
        .alignment_uncertainty_max_ns
        .or(report.stats.alignment.map(|a| a.uncertainty_ns))
}

/// The typed health totals of the link and the probe (summary.json `probe_health`).
pub fn probe_health(report: &LinkReport, rate_hz: u32) -> ProbeHealth {
    let probe = report.probe.as_ref();
    ProbeHealth {
        samples: probe.map(|p| p.samples_taken),
        dropped: probe.map(|p| p.samples_dropped),
        i2c_errors: probe.map(|p| u64::from(p.i2c_errors)),
        overflows: probe.map(|p| u64::from(p.ring_overflows) + u64::from(p.tx_overflows)),
        crc_errors: report.stats.frames.crc_errors,
        seq_gaps: report.stats.sequence.gaps,
        reconnects: report.reconnects.len() as u64,
        alignment_uncertainty_ns: alignment_uncertainty_ns(report),
        sample_rate_hz: Some(f64::from(rate_hz)),
    }
}

/// Human summary lines (also printed by `hostd run`): how the probe measured (link,
/// sampling, energy balance); `unprobed` are the targets the probe was not on, which get
/// one "no probe" line. Each phase's energy, power and enclosure figures are the analysis'
/// (`hostd_analysis::event_lines::headline_lines`), not repeated here.
pub fn summary_lines(report: &LinkReport, c: &Correlation, unprobed: &[String]) -> Vec<String> {
    let mut lines = Vec::new();
    if !unprobed.is_empty() {
        lines.push(format!(
            "probe {}: no probe (it is on another target)",
            unprobed.join(", ")
        ));
    }
    let seq = report.stats.sequence;
    lines.push(format!(
        "probe link: {} samples, {} gaps ({} missing, {} reported dropped by the probe), {} CRC failures, {} reconnects, alignment ±{}",
        seq.received,
        seq.gaps,
        seq.missing,
        seq.probe_reported_drops,
        report.stats.frames.crc_errors,
        report.reconnects.len(),
        alignment_uncertainty_ns(report).map_or("unknown".into(), |u| format!("{:.3} ms", u / 1e6))
    ));
    if let Some(p) = &report.probe {
        if p.conversion_rate_hz > 0.0 {
            lines.push(format!(
                "probe sampling: {:.0} Hz achieved of {:.0} Hz converted ({} Hz asked), {} missed conversions, {} chip resets, DIAG flags: {}",
                p.achieved_rate_hz,
                p.conversion_rate_hz,
                p.requested_rate_hz,
                p.missed_slots,
                report.resets.iter().map(|r| u64::from(r.resets)).sum::<u64>(),
                match diag_names(report) {
                    d if d.is_empty() => "none".to_string(),
                    d => d.join(", "),
                }
            ));
        }
    }
    if let Some(b) = &c.balance {
        lines.push(format!(
            "energy: accumulator {:.2} J; power × time {:.2} J in files + {:.2} J idle: closes to {:.3} %{}",
            b.covered_accumulator_j,
            b.files_j,
            b.idle_j,
            b.relative_error * 100.0,
            if b.uncovered_s > 0.0 {
                format!(" ({:.2} s without samples left out; whole run {:.2} J)", b.uncovered_s, b.accumulator_j)
            } else {
                String::new()
            }
        ));
    }
    lines
}

/// A delivery lag past which the temperature gate and the steady-state thermometer are said
/// to have seen the probe late: the thermometer takes one reading a second, so a reading a
/// second late is one reading behind. Quiet, the lag is the probe's USB batching and the
/// bin (tens of ms).
const LATE_NS: u64 = 1_000_000_000;

/// Says when the probe's readings reached the temperature gate, the thermometer and InfluxDB
/// late (a loaded host): their 99th percentile delivery lag past [`LATE_NS`].
fn lag_warning(lag: &LatencyHistogram) -> Option<String> {
    let p99 = lag.quantile_ns(0.99);
    (!lag.is_empty() && p99 > LATE_NS).then(|| {
        format!(
            "probe readings reached the gate and thermometer late: {:.1} s at p99, {:.1} s at most (host busy; the recorded series is intact)",
            p99 as f64 / 1e9,
            lag.max_ns() as f64 / 1e9
        )
    })
}

fn probe_warnings(report: &LinkReport, c: &Correlation) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(u) = alignment_uncertainty_ns(report) {
        if u > ALIGNMENT_TARGET_NS {
            w.push(format!(
                "probe alignment uncertainty {:.2} ms exceeds 1 ms",
                u / 1e6
            ));
        }
    } else {
        w.push("probe clock was never aligned (no sync replies)".into());
    }
    let seq = report.stats.sequence;
    if seq.gaps > 0 {
        w.push(format!(
            "probe stream had {} gaps ({} samples missing)",
            seq.gaps, seq.missing
        ));
    }
    for r in &report.resets {
        w.push(format!(
            "probe INA228 reset {} time(s) at sample {} and was re-initialised (accumulator epoch {}); energy carried across, up to {:.1} ms of it not measured",
            r.resets,
            r.first_seq,
            r.epoch,
            r.unmeasured_us.unwrap_or(0) as f64 / 1e3
        ));
    }
    let diag = diag_names(report);
    if !diag.is_empty() {
        w.push(format!(
            "probe INA228 raised DIAG flags: {}",
            diag.join(", ")
        ));
    }
    if let Some(p) = report.probe.filter(|p| p.missed_slots > 0) {
        w.push(format!(
            "probe missed {} conversions (its sampling fell behind)",
            p.missed_slots
        ));
    }
    if let Some(o) = &report.disconnected_at_end {
        w.push(format!(
            "probe still disconnected when the run ended: {}",
            o.reason
        ));
    }
    for r in &report.reconnects {
        w.push(format!(
            "probe disconnected for {:.0} ms ({} samples lost): {}",
            r.gap_ms, r.samples_lost, r.reason
        ));
    }
    if let Some(b) = &c.balance {
        if b.relative_error > BALANCE_TARGET {
            w.push(format!(
                "energy balance off by {:.3} %",
                b.relative_error * 100.0
            ));
        }
    }
    w
}

/// Final alignment and link counters for the manifest's `probe` section.
pub fn final_manifest_section(report: &LinkReport) -> Value {
    json!({
        "alignment_uncertainty_ns": alignment_uncertainty_ns(report),
        "alignment": report.stats.alignment,
        "frames": report.stats.frames,
        "messages": report.stats.messages,
        "sequence": report.stats.sequence,
        "probe": report.probe,
        "reconnects": report.reconnects.len(),
        "achieved_rate_hz": report.probe.map(|p| p.achieved_rate_hz),
        "conversion_rate_hz": report.probe.map(|p| p.conversion_rate_hz),
        "delivered_rate_hz": report.stats.delivered_rate_hz,
        "missed_slots": report.probe.map(|p| p.missed_slots),
        "chip_resets": report.resets,
        "diag_flags": diag_names(report),
    })
}

/// DIAG_ALRT flags seen by the probe (its Status, else the batches).
fn diag_names(report: &LinkReport) -> Vec<&'static str> {
    let bits = report.probe.map_or(0, |p| p.diag) | report.stats.diag_flags;
    hostd_probe::link::diag_flag_names(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_stream_is_a_warning_with_its_figures_and_a_quiet_one_is_not() {
        let mut lag = LatencyHistogram::new();
        assert_eq!(lag_warning(&lag), None);
        for _ in 0..98 {
            lag.record(40_000_000);
        }
        lag.record(900_000_000);
        assert_eq!(lag_warning(&lag), None, "1 % at 0.9 s");
        lag.record(2_500_000_000);
        lag.record(2_500_000_000);
        let w = lag_warning(&lag).expect("2 % at 2.5 s");
        assert!(w.contains("2.5 s at p99, 2.5 s at most"), "{w}");
    }

    #[test]
    fn the_live_view_shows_the_budget_its_source_and_the_headroom() {
        let b = PortBudget::user(4.5);
        assert_eq!(
            budget_part(&b, Some(4.05)),
            "budget 4.5 W (--port-budget), headroom 0.45 W (10 %)"
        );
        // Held at the budget and a little over it (the meter's tolerance): no headroom.
        assert_eq!(
            budget_part(&b, Some(4.6)),
            "budget 4.5 W (--port-budget), over it by 0.10 W (2 %)"
        );
        // At the budget to the last digit written: no "−0.00 W (−0 %)" (issue 40).
        for p in [4.5, 4.501, 4.4999, 4.504] {
            assert_eq!(
                budget_part(&b, Some(p)),
                "budget 4.5 W (--port-budget), at it",
                "{p} W"
            );
        }
        assert_eq!(
            budget_part(&PortBudget::user(15.0), Some(14.98)),
            "budget 15.0 W (--port-budget), headroom 0.02 W (0 %)"
        );
        assert_eq!(budget_part(&b, None), "budget 4.5 W (--port-budget)");
        assert_eq!(
            budget_part(&PortBudget::unknown(), Some(3.0)),
            "budget unknown"
        );
        // In the live line the budget stands beside the power, a lost probe before both.
        let mut snap = hostd_probe::link::LinkSnapshot {
            connected: true,
            ..Default::default()
        };
        let line = live_line(&snap, Some("budget 4.5 W, at it"));
        assert!(
            line.starts_with("probe: –  budget 4.5 W, at it  –  enclosure"),
            "{line}"
        );
        snap.connected = false;
        assert!(
            live_line(&snap, None).starts_with("probe: PROBE DISCONNECTED (reconnecting)  –  –")
        );
        // The probe's PD decoder read the contract: its terms are the budget.
        let status = hostd_probe::pb::PortStatus {
            pd_contract: true,
            vbus_mv: 5010,
            contract: Some(hostd_probe::pb::PdContract {
                mv: 5000,
                ma: 3000,
                mw: 15000,
                supply: hostd_probe::pb::PdSupply::Fixed as i32,
                object_position: 1,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            budget_part(&hostd_probe::port::budget(Some(&status), None), Some(11.0)),
            "budget 15.0 W (PD contract 5 V 3 A), headroom 4.00 W (27 %)"
        );
    }
}
