//! `hostd compare RUN… --report FILE.html`: several runs on one self-contained page, as a
//! reviewer publishes them — throughput against data written with a line (or band) per run
//! and phase, bus power and temperatures against time from each run's start, bar charts of
//! the headline figures with their 95 % intervals, every run's events with their causes, and
//! the conditions that differ between the runs.
//!
//! What is compared ([`plan`]): each run's *subject* — the target the probe was on, else its
//! first target — in the phases at least two runs share; everything else is named with the
//! reason it was left out. [`figures`] computes the bars, `charts` draws, `tables` lists,
//! and [`side_by_side`] puts the same figures in columns for the terminal and `--json`.

mod charts;
pub mod figures;
pub mod side_by_side;
mod tables;

pub use charts::{bars_id, by_data_id};

use crate::svg::{esc, PALETTE};

/// Colours of the runs: the report's palette, then four of Paul Tol's (a run of ten keeps
/// its own colour; past twelve they repeat).
const EXTRA_COLORS: [&str; 4] = ["#882255", "#44AA99", "#999933", "#332288"];
use hostd_records::events::Analysis;
use hostd_records::{Manifest, RunData};
use serde::Serialize;
use std::fmt::Write;

/// One run given to the comparison.
pub struct CompareRun {
    /// The directory as given on the command line.
    pub dir: String,
    /// `--group-by KEY`'s `KEY=VALUE`, when grouped.
    pub group: Option<String>,
    /// The run's records.
    pub run: RunData,
    /// Their analysis.
    pub analysis: Analysis,
    /// The run's manifest, when readable.
    pub manifest: Option<Manifest>,
}

impl CompareRun {
    /// The target the comparison follows: the probed one, else the first with files.
    pub fn subject(&self) -> Option<&str> {
        let probed = self
            .run
            .probe_target
            .as_deref()
            .filter(|p| self.run.files.iter().any(|f| f.target == *p));
        probed.or_else(|| {
            self.run
                .files
                .iter()
                .min_by_key(|f| (f.target_index, f.start_ns))
                .map(|f| f.target.as_str())
        })
    }

    /// The subject's phases in order of first appearance.
    pub fn phases(&self) -> Vec<String> {
        let subject = self.subject();
        let mut files: Vec<_> = self
            .run
            .files
            .iter()
            .filter(|f| Some(f.target.as_str()) == subject)
            .collect();
        files.sort_by_key(|f| f.start_ns);
        let mut out: Vec<String> = Vec::new();
        for f in files {
            if !out.contains(&f.phase) {
                out.push(f.phase.clone());
            }
        }
        out
    }

    /// The profile's name, when the manifest has one.
    pub fn profile(&self) -> Option<String> {
        self.manifest
            .as_ref()
            .and_then(|m| m.profile_name().map(str::to_string))
    }

    /// When the first file started, host ns (the origin of the time charts).
    pub(crate) fn t0(&self) -> i64 {
        self.run
            .files
            .iter()
            .map(|f| f.start_ns as i64)
            .min()
            .unwrap_or(0)
    }
}

/// What the page compares, with every figure it draws ([`side_by_side`] arranges them for
/// the terminal and `hostd compare --json`).
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The phases compared (each shared by at least two runs).
    pub phases: Vec<String>,
    /// What was left out, each with its reason.
    pub left_out: Vec<String>,
    /// One entry per run, in the order given.
    pub runs: Vec<ComparedRun>,
}

/// One run as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ComparedRun {
    /// The directory as given.
    pub run: String,
    /// Its label on the page (group value or target label, made unique).
    pub label: String,
    /// Its colour on every chart.
    pub color: String,
    /// The target followed.
    pub target: Option<String>,
    /// The profile's name.
    pub profile: Option<String>,
    /// The bar charts' figures of each compared phase this run has.
    pub figures: Vec<figures::PhaseFigures>,
    /// The drive under review (`hostd compare --highlight`): strong on every bar chart.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub under_review: bool,
}

/// Decides what is compared and computes the figures.
pub fn plan(runs: &[CompareRun]) -> Comparison {
    let labels = labels(runs);
    let mut phases: Vec<String> = Vec::new();
    for r in runs {
        for p in r.phases() {
            let shared =
                runs.len() == 1 || runs.iter().filter(|o| o.phases().contains(&p)).count() >= 2;
            if shared && !phases.contains(&p) {
                phases.push(p);
            }
        }
    }
    let mut left_out = Vec::new();
    let profiles: Vec<Option<String>> = runs.iter().map(CompareRun::profile).collect();
    if profiles.iter().any(|p| p != &profiles[0]) {
        let named: Vec<String> = runs
            .iter()
            .zip(&labels)
            .map(|(r, l)| format!("{l}: {}", r.profile().unwrap_or_else(|| "none".into())))
            .collect();
        left_out.push(format!(
            "The runs' profiles differ ({}): only the phases they share are compared.",
            named.join(", ")
        ));
    }
    for (r, label) in runs.iter().zip(&labels) {
        let alone: Vec<String> = r
            .phases()
            .into_iter()
            .filter(|p| !phases.contains(p))
            .collect();
        if !alone.is_empty() {
            left_out.push(format!(
                "{label}: phase {} left out: no other run has it.",
                alone.join(", ")
            ));
        }
        let subject = r.subject().unwrap_or("");
        let mut others: Vec<&str> = Vec::new();
        for f in &r.run.files {
            if f.target != subject && !others.contains(&f.target.as_str()) {
                others.push(&f.target);
            }
        }
        if !others.is_empty() {
            left_out.push(format!(
                "{label}: target{} {} left out: the comparison follows each run's probed (else first) target, here {subject}.",
                if others.len() == 1 { "" } else { "s" },
                others.join(", ")
            ));
        }
        if r.run.files.is_empty() {
            left_out.push(format!("{label}: no files: nothing to compare."));
        }
    }
    if phases.is_empty() && runs.len() > 1 {
        left_out.insert(
            0,
            "The runs have no phase in common: no chart puts them on one axis.".into(),
        );
    }
    let compared = runs
        .iter()
        .zip(labels)
        .enumerate()
        .map(|(k, (r, label))| ComparedRun {
            run: r.dir.clone(),
            label,
            color: PALETTE
                .iter()
                .chain(&EXTRA_COLORS)
                .nth(k % (PALETTE.len() + EXTRA_COLORS.len()))
                .map_or("#000", |c| *c)
                .into(),
            target: r.subject().map(str::to_string),
            profile: r.profile(),
            figures: r
                .phases()
                .into_iter()
                .filter(|p| phases.contains(p))
                .map(|p| figures::of(r, &p))
                .collect(),
            under_review: false,
        })
        .collect();
    Comparison {
        phases,
        left_out,
        runs: compared,
    }
}

/// Marks the runs `run` names as under review (`hostd compare --highlight RUN`): a run
/// directory as given (or the same directory by another path), a run's label, or the value
/// of its group (`x5` for `drive=x5`); every run of a group that matches. An error names the
/// runs when none matches.
pub fn highlight(runs: &[CompareRun], c: &mut Comparison, run: &str) -> Result<(), String> {
    let same_dir = |dir: &str| {
        let canon = |p: &str| std::fs::canonicalize(p).ok();
        dir == run || canon(dir).is_some_and(|d| Some(d) == canon(run))
    };
    let mut found = false;
    for (r, cr) in runs.iter().zip(&mut c.runs) {
        let value = r
            .group
            .as_deref()
            .and_then(|g| g.split_once('='))
            .map(|g| g.1);
        if same_dir(&r.dir)
            || cr.label == run
            || r.group.as_deref() == Some(run)
            || value == Some(run)
        {
            cr.under_review = true;
            found = true;
        }
    }
    if found {
        return Ok(());
    }
    let named: Vec<String> = runs
        .iter()
        .zip(&c.runs)
        .map(|(r, cr)| format!("{} ({})", cr.label, r.dir))
        .collect();
    Err(format!(
        "--highlight {run}: no run is that directory, label or group value (the runs: {})",
        named.join(", ")
    ))
}

/// Each run's label: its group (`KEY=VALUE`) or its subject target's label, with its
/// directory's name added where two runs would read the same.
fn labels(runs: &[CompareRun]) -> Vec<String> {
    let base: Vec<String> = runs
        .iter()
        .map(|r| {
            r.group
                .clone()
                .or_else(|| {
                    r.subject()
                        .map(|s| crate::labels::short_labels(&[s.to_string()])[0].clone())
                })
                .unwrap_or_else(|| "(no files)".into())
        })
        .collect();
    let dir_name = |d: &str| {
        std::path::Path::new(d)
            .file_name()
            .map_or(d.to_string(), |n| n.to_string_lossy().into_owned())
    };
    let mut out: Vec<String> = base
        .iter()
        .zip(runs)
        .map(|(b, r)| {
            if base.iter().filter(|o| *o == b).count() > 1 {
                format!("{b} ({})", dir_name(&r.dir))
            } else {
                b.clone()
            }
        })
        .collect();
    // Still the same (one directory name twice): number them.
    for k in 0..out.len() {
        if out[..k].contains(&out[k]) {
            out[k] = format!("{} #{}", out[k], k + 1);
        }
    }
    out
}

/// The comparison page; `skipped` are the directories that could not be compared, each
/// with its reason.
pub fn render(
    runs: &[CompareRun],
    c: &Comparison,
    skipped: &[(String, String)],
    title: &str,
) -> String {
    let mut h = crate::head::head_titled("throttlescope comparison", title);
    h.push_str(&tables::runs_section(runs, c, skipped));
    h.push_str(&tables::conditions_section(runs, c));
    let numbers = tables::event_numbers(runs);
    if c.phases.is_empty() {
        h.push_str(r#"<section id="charts"><p class="note" id="no-common-phase">No phase in common: nothing is drawn on a shared axis (see above).</p></section>"#);
    } else {
        h.push_str(&charts::by_data_section(runs, c, &numbers));
        h.push_str(&charts::time_section(runs, c, &numbers));
        h.push_str(&charts::bars_section(c));
    }
    h.push_str(&tables::events_section(runs, c, &numbers));
    let _ = write!(
        h,
        r#"<p class="note">Brackets and whiskers: 95 % intervals (onsets: the onset's 99.9 % interval). How every number is computed: docs/methodology.md, "Headline figures" and "Comparing runs", in the throttlescope repository. {}</p></body></html>"#,
        esc(&format!("{} runs compared.", runs.len()))
    );
    h.push('\n');
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_of(scenario: &str, dir: &std::path::Path) -> CompareRun {
        let sc = hostd_scenario::load(scenario).unwrap();
        let trace = hostd_scenario::simulate(&sc);
        hostd_scenario::write::write_run(
            dir,
            &sc,
            &trace,
            Some(hostd_scenario::write::ProbeOptions::default()),
        )
        .unwrap();
        let (run, analysis) =
            hostd_analysis::analyze_run_dir(dir, &hostd_analysis::Options::default()).unwrap();
        CompareRun {
            dir: dir.display().to_string(),
            group: None,
            run,
            analysis,
            manifest: hostd_records::manifest::read(dir).ok(),
        }
    }

    /// Two runs of one drive read the same label: each gets its directory's name. A hub run
    /// is followed on its probed drive and its other targets are named as left out; the
    /// bars hold the analysis' own headline figures.
    #[test]
    fn runs_are_labelled_apart_and_followed_on_their_probed_target() {
        let d = tempfile::tempdir().unwrap();
        let runs = [
            run_of("x5-thermal", &d.path().join("one")),
            run_of("x5-thermal", &d.path().join("two")),
            run_of("hub-www-contention", &d.path().join("hub")),
        ];
        let c = plan(&runs);
        let labels: Vec<&str> = c.runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["x5 (one)", "x5 (two)", "A"]);
        assert_eq!(c.phases, ["write"]);
        assert_eq!(c.runs[2].target.as_deref(), Some("A"));
        assert!(
            c.left_out
                .iter()
                .any(|l| l.starts_with("A: targets") && l.contains("here A")),
            "{:?}",
            c.left_out
        );
        let avg = &c.runs[0].figures[0].figures["average_bps"];
        assert_eq!(
            Some(avg),
            runs[0]
                .analysis
                .headlines
                .series
                .first()
                .map(|s| &s.average_bps)
        );
        assert!(c.runs[0].figures[0].figures["j_per_gb"].get().is_some());
        let html = render(&runs, &c, &[], "t");
        assert!(
            html.contains(r#"id="chart-compare-gb-write""#)
                && html.contains(r#"id="chart-bars-write-average-bps""#)
        );
        assert!(
            !html.contains("envelope"),
            "three runs of a few hundred files: every file drawn"
        );
    }

    /// Runs with no phase in common: the page says so and draws no shared axis.
    #[test]
    fn runs_without_a_common_phase_are_not_drawn_together() {
        let d = tempfile::tempdir().unwrap();
        let runs = [
            run_of("x5-thermal", &d.path().join("w")),
            run_of("x5-read-thermal", &d.path().join("r")),
        ];
        let c = plan(&runs);
        assert!(c.phases.is_empty());
        assert!(c.left_out[0].contains("no phase in common"));
        let html = render(
            &runs,
            &c,
            &[("junk".into(), "not a run directory".into())],
            "t",
        );
        assert!(html.contains(r#"id="no-common-phase""#) && !html.contains("chart-compare-gb"));
        assert!(html.contains("<li><b>junk</b>: not a run directory</li>"));
    }

    /// Past 2 000 files on one chart, or more than six runs, each run is drawn as its band
    /// and mean, not file by file; a few runs of a few files keep their points.
    #[test]
    fn large_comparisons_are_drawn_as_bands() {
        let synthetic = |name: &str, n: u32| {
            let mut t = 1_700_000_000_000_000_000u64;
            let files = (0..n)
                .map(|i| {
                    let rate = if i < n / 3 { 2e9 } else { 0.8e9 };
                    let bytes = 20_000_000 + u64::from(i % 5) * 1_000_000;
                    let end = t + (bytes as f64 / rate * 1e9) as u64;
                    let f = hostd_records::FileRecord::new("/mnt/ssd", "write", i, t, end, bytes);
                    t = end + 1_000_000;
                    f
                })
                .collect();
            let mut run = RunData {
                files,
                ..Default::default()
            };
            run.sort();
            let analysis = hostd_analysis::analyze(&run, &hostd_analysis::Options::default());
            CompareRun {
                dir: name.into(),
                group: None,
                run,
                analysis,
                manifest: None,
            }
        };
        let page = |runs: &[CompareRun]| render(runs, &plan(runs), &[], "t");
        let big = [synthetic("a", 1200), synthetic("b", 1200)];
        let html = page(&big);
        assert!(
            html.contains("2400 files of 2 runs on this chart") && html.contains("series envelope")
        );
        assert!(!html.contains("file 1199:"), "a mark per file");
        assert!(html.len() < 300_000, "{} bytes", html.len());
        let many: Vec<CompareRun> = (0..7).map(|k| synthetic(&format!("r{k}"), 60)).collect();
        assert!(page(&many).contains("420 files of 7 runs on this chart"));
        let few = [synthetic("a", 60), synthetic("b", 60)];
        let html = page(&few);
        assert!(!html.contains("series envelope") && html.contains("file 59:"));
    }
}
