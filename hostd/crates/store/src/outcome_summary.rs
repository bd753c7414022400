//! `summary.json` and the terminal summary: the run's status, notes and warnings from the
//! workload's outcome, then per target and phase the robust statistics of per-file rates,
//! the fit of time against size, a bimodality warning, corruption totals, and the window in
//! which all targets were active with each target's and the aggregate throughput in it. The
//! figures are the analysis' own (`hostd_analysis::run_summary`, which the analysis part
//! hands to [`SummaryExt::set_figures`]), shown here in MB/s.

use hostd_analysis::event_lines::{wrapped, LINE_WIDTH};
use hostd_records::conditions::WaitMode;
use hostd_records::events::PhaseStats;
use hostd_records::published::Kind;
use hostd_records::units::ByteSize;
use hostd_records::{RunOutcome, TargetInfo};
use std::fmt::Write as _;

/// Per-file rates above this (MB/s) cannot come from any external SSD link
/// today (USB4 v2 / TB5 top out near 10 GB/s); such files are flagged.
pub const IMPLAUSIBLE_MBPS: f64 = 12_000.0;

/// The note of a simulated target played in real time.
const REAL_TIME: &str = "in real time";

/// Phases whose I/Os are at most this big also get an IOPS line.
pub const SMALL_IO: usize = 64 << 10;

use hostd_records::summary::{ActiveWindow, Summary};

/// Computing and rendering [`Summary`] (the record type lives in `hostd-records`).
pub trait SummaryExt {
    /// The summary of a finished run from the workload's outcome: status, times, notes and
    /// warnings; its figures come with [`SummaryExt::set_figures`].
    fn compute(run_id: &str, out: &RunOutcome) -> Summary;
    /// Sets the per-phase figures and the all-active window (the analysis' own), with a
    /// warning for each bimodal phase, each corrupt one, and each rate no external link can
    /// carry on a `targets` entry that is not simulated.
    fn set_figures(
        &mut self,
        phases: Vec<PhaseStats>,
        window: Option<ActiveWindow>,
        targets: &[TargetInfo],
    );
    /// The concise terminal summary.
    fn render(&self) -> String;
}

impl SummaryExt for Summary {
    fn compute(run_id: &str, out: &RunOutcome) -> Summary {
        // Simulated targets are scaled in time on purpose and have no page cache: their
        // scale is a note, and their rates are not judged against real links.
        let simulated: Vec<&TargetInfo> =
            out.targets.iter().filter(|t| t.scheme == "sim").collect();
        // One note per time scale, naming the targets played at it.
        let mut scales: Vec<(String, Vec<&str>)> = Vec::new();
        for t in &simulated {
            let scale = t.engine_note.clone().unwrap_or_else(|| REAL_TIME.into());
            match scales.iter_mut().find(|(s, _)| *s == scale) {
                Some((_, labels)) => labels.push(&t.label),
                None => scales.push((scale, vec![&t.label])),
            }
        }
        // A run played faster states, once, what its modelled time took on the host.
        let took = hostd_records::clock::playback()
            .filter(|_| out.end_ns > out.start_ns)
            .map(|p| format!(": {}", p.took(out.start_ns as i64, out.end_ns as i64)))
            .unwrap_or_default();
        let notes: Vec<String> = scales
            .iter()
            .map(|(scale, labels)| {
                let took = if scale == REAL_TIME {
                    ""
                } else {
                    took.as_str()
                };
                format!("{}: simulated, {scale}{took}", labels.join(", "))
            })
            .collect();
        let warnings: Vec<String> = out
            .warnings
            .iter()
            .filter(|w| {
                !simulated.iter().any(|t| {
                    t.engine_note
                        .as_ref()
                        .is_some_and(|n| **w == format!("target {}: {n}", t.label))
                })
            })
            .cloned()
            .collect();
        Summary {
            format_version: hostd_records::summary::FORMAT_VERSION,
            run_id: run_id.to_string(),
            status: out.status.describe(),
            start_ns: out.start_ns,
            end_ns: out.end_ns,
            phases: Vec::new(),
            window: None,
            warnings,
            notes,
            cleanup: out.cleanup.clone(),
            programs: out.programs.clone(),
            probe_health: None,
            conditions: Default::default(),
            extra: serde_json::Map::new(),
            certify: None,
        }
    }

    fn set_figures(
        &mut self,
        phases: Vec<PhaseStats>,
        window: Option<ActiveWindow>,
        targets: &[TargetInfo],
    ) {
        for s in &phases {
            // Rates at two levels in time, before and after an event, are what the events
            // say, not two modes that an average would hide.
            if let (true, None, Some(b)) = (s.bimodal, &s.levels_explained_by, s.bimodality) {
                self.warnings.push(format!(
                    "{} {}: per-file rates look bimodal (two groups split at {}, {:.1} spreads apart, and no event between them); the mean of files {} describes neither group — see files.csv",
                    s.target, s.phase, Kind::Rate.text(b.split_at), b.separation, Kind::Rate.text(s.mean_bps)
                ));
            }
            if s.corrupt_blocks > 0 {
                self.warnings.push(format!(
                    "{} {}: {} corrupt blocks, {} corrupt bytes",
                    s.target, s.phase, s.corrupt_blocks, s.corrupt_bytes
                ));
            }
            let is_simulated = targets
                .iter()
                .any(|i| i.scheme == "sim" && i.label == s.target);
            if mbps(s.max_bps) > IMPLAUSIBLE_MBPS && !is_simulated {
                self.warnings.push(format!("{} {}: {:.0} MB/s is faster than any external link: the page cache, not the disk, was measured", s.target, s.phase, mbps(s.max_bps)));
            }
        }
        self.phases = phases;
        self.window = window;
    }

    fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "run {}: {}", self.run_id, self.status);
        // The average (bytes / time) first: the headline's figure; then the per-file
        // statistics, each rate written as everywhere else.
        let _ = writeln!(
            s,
            "{:<24} {:<16} {:>5} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "target",
            "phase",
            "files",
            "data",
            "average",
            "mean/file",
            "median",
            "trim20",
            "theil-sen",
            "min",
            "max"
        );
        let rate = |bps: f64| Kind::Rate.text(bps);
        for p in &self.phases {
            let _ = writeln!(
                s,
                "{:<24} {:<16} {:>5} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}{}",
                truncate(&p.target, 24),
                truncate(&p.phase, 16),
                p.files,
                Kind::Data.text(p.bytes as f64),
                rate(p.throughput_bps),
                rate(p.mean_bps),
                rate(p.median_bps),
                rate(p.trimmed_mean_bps),
                p.theil_sen_bps.map_or_else(|| "-".into(), rate),
                rate(p.min_bps),
                rate(p.max_bps),
                if p.corrupt_blocks > 0 {
                    format!("  CORRUPT {} blocks", p.corrupt_blocks)
                } else {
                    String::new()
                }
            );
        }
        let _ = writeln!(
            s,
            "(average = bytes / time, the headline's; mean/file = mean of the per-file rates; theil-sen = robust rate from time against file size)"
        );
        // Small-block phases (diskmark's RND4K) are judged in I/Os per second.
        for p in &self.phases {
            if let (Some(bs), Some(iops)) = (p.block_size, p.iops) {
                if bs <= SMALL_IO {
                    // At QD1 the wait is the figure's method: fio and CrystalDiskMark
                    // sleep; polling makes it faster and not comparable.
                    let wait = match (p.queue_depth, self.conditions.wait) {
                        (Some(1), Some(WaitMode::Sleep)) => ", waits asleep as fio",
                        (Some(1), Some(WaitMode::Poll)) => ", waits POLLED (--poll)",
                        _ => "",
                    };
                    let _ = writeln!(
                        s,
                        "{:<24} {:<16} {:>9.1}k IOPS  ({} I/Os{}{wait})",
                        truncate(&p.target, 24),
                        truncate(&p.phase, 16),
                        iops / 1e3,
                        ByteSize(bs as u64),
                        p.queue_depth
                            .map(|q| format!(", QD{q}"))
                            .unwrap_or_default()
                    );
                }
            }
        }
        // Latency percentiles of every phase that timed its I/Os.
        if self.phases.iter().any(|p| p.latency.is_some()) {
            let _ = writeln!(
                s,
                "{:<24} {:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  latency µs (±0.1 %)",
                "target", "phase", "p50", "p90", "p99", "p99.9", "p99.99", "max"
            );
            for p in &self.phases {
                if let Some(l) = &p.latency {
                    let us = |ns: u64| format!("{:.1}", ns as f64 / 1e3);
                    let _ = writeln!(
                        s,
                        "{:<24} {:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                        truncate(&p.target, 24),
                        truncate(&p.phase, 16),
                        us(l.p50_ns),
                        us(l.p90_ns),
                        us(l.p99_ns),
                        us(l.p99_9_ns),
                        us(l.p99_99_ns),
                        us(l.max_ns)
                    );
                }
            }
        }
        if let Some(w) = &self.window {
            if w.targets.len() > 1 {
                let _ = writeln!(
                    s,
                    "all {} targets active for {}: aggregate {} ({})",
                    w.targets.len(),
                    Kind::Seconds.text(w.seconds),
                    Kind::Rate.text(w.aggregate_mbps * 1e6),
                    Kind::Data.text(w.aggregate_bytes as f64)
                );
                for t in &w.targets {
                    let _ = writeln!(
                        s,
                        "  {:<24} {:>10}  {}",
                        t.target,
                        Kind::Rate.text(t.mbps * 1e6),
                        Kind::Data.text(t.bytes as f64)
                    );
                }
            }
        }
        // What the run's parts found (analysis, probe), in that order.
        for name in ["analysis", "probe"].into_iter().chain(
            self.extra
                .keys()
                .map(String::as_str)
                .filter(|k| *k != "analysis" && *k != "probe"),
        ) {
            let lines = self
                .extra
                .get(name)
                .and_then(|v| v.get("text"))
                .and_then(|t| t.as_array());
            for line in lines.into_iter().flatten().filter_map(|l| l.as_str()) {
                let _ = writeln!(s, "{line}");
            }
        }
        // What the adaptive workloads found (cache recovery, paced sweep, mixed, duration).
        for line in self.programs.iter().flat_map(|p| &p.text) {
            let _ = writeln!(s, "{line}");
        }
        // Notes and warnings at the summary's width, broken after their ", " as its lines
        // are (a bimodal read's warning ran to 190 columns).
        let said = self.notes.iter().map(|n| format!("note: {n}"));
        let said = said.chain(self.warnings.iter().map(|w| format!("warning: {w}")));
        for line in said.flat_map(|l| wrapped(&l, LINE_WIDTH)) {
            let _ = writeln!(s, "{line}");
        }
        s
    }
}

/// bytes/s → MB/s (10⁶ bytes/s), the unit the terminal shows rates in.
fn mbps(bps: f64) -> f64 {
    bps / 1e6
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let tail: String = s
            .chars()
            .rev()
            .take(n - 1)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("…{tail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A phase's figures as the analysis gives them: `rate` MB/s, and an IOPS figure when
    /// `block_size` is given.
    fn phase(target: &str, name: &str, rate: f64, block_size: Option<usize>) -> PhaseStats {
        let bps = rate * 1e6;
        serde_json::from_value(serde_json::json!({
            "target": target, "phase": name, "files": 2, "bytes": 2_000_000_000u64,
            "seconds": 2e9 / bps, "start_ns": 0, "end_ns": 1, "throughput_bps": bps,
            "mean_bps": bps, "median_bps": bps, "min_bps": bps, "max_bps": bps,
            "trimmed_mean_bps": bps, "bimodal": false, "block_size": block_size,
            "queue_depth": block_size.map(|_| 64),
            "iops": block_size.map(|b| bps / b as f64),
        }))
        .unwrap()
    }

    fn outcome(targets: Vec<TargetInfo>, warnings: Vec<String>) -> RunOutcome {
        RunOutcome {
            status: hostd_records::RunStatus::Completed,
            start_ns: 0,
            end_ns: 0,
            targets,
            files: Vec::new(),
            intervals: Vec::new(),
            samples: Vec::new(),
            warnings,
            cleanup: Vec::new(),
            programs: Vec::new(),
            preparation: Vec::new(),
        }
    }

    #[test]
    fn small_block_phases_get_an_iops_line_and_large_ones_do_not() {
        let mut summary = Summary::compute("r", &outcome(Vec::new(), Vec::new()));
        summary.set_figures(
            vec![
                phase("/mnt/x", "RND4K-QD64-read", 409.6, Some(4096)),
                phase("/mnt/x", "SEQ1M-QD8-read", 1000.0, Some(1 << 20)),
            ],
            None,
            &[],
        );
        let text = summary.render();
        assert!(text.contains("100.0k IOPS  (4KiB I/Os, QD64)"), "{text}");
        assert_eq!(text.matches("IOPS").count(), 1, "{text}");
    }

    #[test]
    fn a_qd1_iops_figure_names_how_the_engine_waited() {
        for (wait, says) in [
            (
                Some(WaitMode::Sleep),
                "(4KiB I/Os, QD1, waits asleep as fio)",
            ),
            (
                Some(WaitMode::Poll),
                "(4KiB I/Os, QD1, waits POLLED (--poll))",
            ),
            (None, "(4KiB I/Os, QD1)\n"),
        ] {
            let mut summary = Summary::compute("r", &outcome(Vec::new(), Vec::new()));
            summary.conditions.wait = wait;
            let mut qd1 = phase("/mnt/x", "RND4K-QD1-read", 40.96, Some(4096));
            qd1.queue_depth = Some(1);
            summary.set_figures(
                vec![qd1, phase("/mnt/x", "RND4K-QD64-read", 409.6, Some(4096))],
                None,
                &[],
            );
            let text = summary.render();
            assert!(text.contains(&format!("10.0k IOPS  {says}")), "{text}");
            // Only QD1's figure depends on the wait.
            assert!(text.contains("100.0k IOPS  (4KiB I/Os, QD64)\n"), "{text}");
        }
    }

    fn target(label: &str, scheme: &str, note: Option<&str>) -> TargetInfo {
        TargetInfo {
            scheme: scheme.into(),
            engine_note: note.map(str::to_string),
            ..TargetInfo::simulated(label, "write", label)
        }
    }

    #[test]
    fn simulated_targets_state_their_time_scale_instead_of_a_page_cache_warning() {
        let scale = "played 10× faster than real time; times and rates are the modelled drive's";
        let targets = vec![
            target("sim:x5-thermal*10", "sim", Some(scale)),
            target("/mnt/x", "dir", None),
        ];
        let out = outcome(
            targets.clone(),
            vec![format!("target sim:x5-thermal*10: {scale}")],
        );
        let mut summary = Summary::compute("r", &out);
        summary.set_figures(
            vec![
                phase("sim:x5-thermal*10", "write", 20_000.0, None),
                phase("/mnt/x", "write", 20_000.0, None),
            ],
            None,
            &targets,
        );
        let text = summary.render();
        assert!(
            text.contains(&format!("note: sim:x5-thermal*10: simulated, {scale}")),
            "{text}"
        );
        let warnings: Vec<&str> = text.lines().filter(|l| l.starts_with("warning:")).collect();
        assert_eq!(warnings.len(), 1, "{text}");
        assert!(
            warnings[0].contains("/mnt/x") && warnings[0].contains("page cache"),
            "{text}"
        );
    }
}
