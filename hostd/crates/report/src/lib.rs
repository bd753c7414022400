//! hostd-report: the run's self-contained `report.html` (inline SVG, no script, no
//! network) and the one call `hostd run` and `hostd analyze` make at the end of a run.
//!
//! One module per section of the report, in the order the page shows them: `head`
//! (document head and title), `summary`, `targets`, `conditions`, `charts` (with `time_charts`),
//! `headlines`, `fill_states`, [`latency`], `statistics`, `attribution` (events and their causes) and
//! `overlap`; `view` names and colours what they draw. This file assembles them.

#![warn(missing_docs)]

mod attribution;
pub mod chart_files;
mod charts;
pub mod compare;
mod conditions;
mod drive_log;
mod envelope;
mod fill_states;
mod gate_waits;
mod hbars;
mod head;
mod headlines;
pub mod latency;
mod os_log;
mod overlap;
pub mod part;
mod seconds;
mod statistics;
mod summary_section;
pub mod svg;
mod targets;
mod time_charts;
mod view;

/// Short target labels (shared with the terminal summary).
pub use hostd_store::labels;

pub use part::AnalysisPart;

use anyhow::Context;
use hostd_analysis::Options;
use hostd_records::events::Analysis;
use hostd_records::RunData;
use std::path::Path;

const NS: f64 = 1e9;
/// Width of every chart, px.
const WIDTH: f64 = 960.0;

/// Reads the run directory, analyses it, writes `events.json` and `report.html`, and
/// returns the terminal summary.
pub fn analyze_and_report(dir: &Path) -> anyhow::Result<String> {
    Ok(hostd_analysis::event_lines::text(&analyze_and_write(dir)?))
}

/// Reads the run directory, analyses it, writes `events.json` and `report.html`, and
/// returns the analysis.
pub fn analyze_and_write(dir: &Path) -> anyhow::Result<Analysis> {
    let (run, analysis) = hostd_analysis::analyze_run_dir(dir, &Options::default())
        .with_context(|| format!("could not analyse the run in {}", dir.display()))?;
    hostd_analysis::write_events(dir, &analysis)?;
    write_report(dir, &run, &analysis)?;
    Ok(analysis)
}

/// Analyses records already in memory (`hostd run`), writes `events.json` and `report.html`
/// into `dir`, and returns the analysis — what [`analyze_and_write`] does from the files.
pub fn analyze_and_write_records(dir: &Path, run: &RunData) -> anyhow::Result<Analysis> {
    let analysis = hostd_analysis::analyze(run, &Options::default());
    hostd_analysis::write_events(dir, &analysis)?;
    write_report(dir, run, &analysis)?;
    Ok(analysis)
}

/// The analysis' lines for the end of `hostd run`: what it found, without the per-phase
/// figures and the all-active window, which the run's summary table gives.
pub fn run_summary_lines(a: &Analysis) -> Vec<String> {
    hostd_analysis::event_lines::finding_lines(a, false)
}

/// Marker in every report hostd writes (a `<meta name="generator">`).
pub const GENERATOR_MARKER: &str = r#"<meta name="generator" content="throttlescope hostd">"#;

/// True when `path` does not exist or holds a report hostd wrote (it carries
/// [`GENERATOR_MARKER`]); `hostd analyze` replaces only such files unless forced.
pub fn report_replaceable(path: &Path) -> bool {
    match std::fs::read_to_string(path) {
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        Ok(text) => text.contains(GENERATOR_MARKER),
    }
}

/// Writes `report.html` into the run directory.
pub fn write_report(dir: &Path, run: &RunData, analysis: &Analysis) -> anyhow::Result<()> {
    write_report_and_charts(dir, run, analysis, None).map(|_| ())
}

/// Writes `report.html` into the run directory and, with `charts`, each of its charts as
/// `ID.svg` and `ID.csv` there ([`chart_files`]); returns the chart files written.
pub fn write_report_and_charts(
    dir: &Path,
    run: &RunData,
    analysis: &Analysis,
    charts: Option<&Path>,
) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let title = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "run".into());
    let draw = || render_with(run, analysis, &title, run.probe_target.as_deref());
    let (html, files) = match charts {
        Some(_) => chart_files::collecting(draw),
        None => (draw(), Vec::new()),
    };
    hostd_records::write_atomic(&dir.join("report.html"), html.as_bytes())?;
    match charts {
        Some(d) => chart_files::write_all(d, &files),
        None => Ok(Vec::new()),
    }
}

/// The whole report as one HTML document (no probed target known).
pub fn render(run: &RunData, a: &Analysis, title: &str) -> String {
    render_with(run, a, title, None)
}

/// The whole report as one HTML document; `probed` is the target the probe
/// was on (the others show "no probe"). The latency section draws `run.latency`.
pub fn render_with(run: &RunData, a: &Analysis, title: &str, probed: Option<&str>) -> String {
    let targets = view::Targets::of(run);
    let views = view::series_views(run, &targets);
    let t0 = run
        .files
        .iter()
        .map(|f| f.start_ns as i64)
        .min()
        .unwrap_or(0);
    let events = view::event_views(a, &views, &targets, t0);
    let probed_short = probed.map(|p| targets.short(p));
    let mut h = head::head(title);
    h.push_str(&summary_section::section(a, &events));
    h.push_str(&targets::section(run, &targets, probed));
    h.push_str(&conditions::section(&run.conditions));
    h.push_str(&gate_waits::section(&a.gate_waits, t0));
    h.push_str(&charts::section(run, &events, &views, t0, probed_short));
    h.push_str(&drive_log::section(run, &targets));
    h.push_str(&headlines::section(a, &targets));
    h.push_str(&fill_states::section(run, a, &targets, WIDTH));
    h.push_str(&latency::section(&run.latency, t0, WIDTH));
    h.push_str(&statistics::section(a, &targets, probed));
    h.push_str(&attribution::section(a, &events));
    h.push_str(&os_log::section(run.os_log.as_deref(), t0, &targets));
    h.push_str(&overlap::section(a, t0, &targets));
    h.push_str(r#"<p class="note">How every number is computed: docs/methodology.md in the throttlescope repository.</p></body></html>"#);
    h.push('\n');
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `hostd run` hands the report its latency histograms in memory: a run directory
    /// without latency logs still gets the section; `hostd analyze` reads the logs into
    /// the same records ([`RunData::read`]) and draws the same report.
    #[test]
    fn the_latency_section_is_drawn_from_the_records_in_memory_as_from_the_logs() {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../records/tests/fixtures/run-format1");
        let from_files = RunData::read(&fixture).unwrap();
        assert_eq!(from_files.latency.files.len(), 6);
        let analysis = hostd_analysis::analyze(&from_files, &Options::default());
        let memory = tempfile::tempdir().unwrap();
        let run_dir = memory.path().join("run-format1");
        std::fs::create_dir(&run_dir).unwrap();
        write_report(&run_dir, &from_files, &analysis).unwrap();
        assert!(!run_dir.join(hostd_records::latency::FILES_LOG).exists());
        let html = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
        assert!(
            html.contains(r#"id="chart-latency-time""#),
            "no latency over time"
        );
        // The write phase: its 3 files' 7 I/Os merged.
        assert!(
            html.contains(r#"<td class="l">target 0 write</td><td>7</td>"#),
            "no write percentiles"
        );
        // Without the histograms, no section.
        let mut without = from_files.clone();
        without.latency = Default::default();
        assert!(!render(&without, &analysis, "r").contains(r#"id="latency""#));
    }

    /// A run of 20 000 files: each phase's files are drawn as an envelope (band and mean),
    /// not one mark each, and the report stays small; a run of a few files keeps its marks.
    #[test]
    fn many_files_are_drawn_as_envelopes_and_the_report_stays_small() {
        let many = |n: u32| {
            let mut files = Vec::new();
            let mut t = 1_700_000_000_000_000_000u64;
            for i in 0..n {
                for phase in ["write", "read"] {
                    // 20 MB at 2 GB/s for the first 30 %, then 0.7 GB/s.
                    let rate = if phase == "read" || i < n * 3 / 10 {
                        2e9
                    } else {
                        0.7e9
                    };
                    let bytes = 20_000_000 + u64::from(i % 7) * 1_000_000;
                    let end = t + (bytes as f64 / rate * 1e9) as u64;
                    files.push(hostd_records::FileRecord::new(
                        "/mnt/ssd", phase, i, t, end, bytes,
                    ));
                    t = end + 1_000_000;
                }
            }
            let mut run = RunData {
                files,
                ..Default::default()
            };
            run.sort();
            let a = hostd_analysis::analyze(&run, &Options::default());
            render(&run, &a, "many")
        };
        let html = many(10_000);
        assert!(html.len() < 2_000_000, "{} bytes", html.len());
        assert!(html.contains("series envelope"));
        assert!(html.contains("20000 files: each target and phase with more than 2000 files"));
        // No per-file tooltip on either chart.
        assert!(!html.contains("file 9999:"), "a mark per file");
        let few = many(50);
        assert!(!few.contains("series envelope"));
        assert!(few.contains("file 49:"));
    }

    #[test]
    fn what_the_os_logged_is_listed_with_its_time_and_target_and_absent_when_not_read() {
        use hostd_records::os_log::{OsLogKind, OsLogRecord};
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../records/tests/fixtures/run-format1");
        let mut run = RunData::read(&fixture).unwrap();
        let analysis = hostd_analysis::analyze(&run, &Options::default());
        assert!(!render(&run, &analysis, "r").contains(r#"id="os-log""#));
        let t0 = run.files.iter().map(|f| f.start_ns as i64).min().unwrap();
        let rec = |dt: i64, target: Option<&str>, line: &str| OsLogRecord {
            time_ns: t0 + dt,
            kind: OsLogKind::IoError,
            target: target.map(str::to_string),
            device: Some("sdb".into()),
            source: "kernel".into(),
            line: line.into(),
        };
        run.os_log = Some(vec![
            rec(
                1_500_000_000,
                Some("target"),
                "blk_update_request: I/O error, dev sdb, sector 8",
            ),
            rec(
                2_000_000_000,
                None,
                "usb 3-1: USB disconnect, device number 4 <x>",
            ),
        ]);
        let html = render(&run, &analysis, "r");
        assert!(html.contains(r#"<section id="os-log"><h2>What the operating system saw</h2>"#));
        assert!(html.contains(r#"<tr><td>1.500</td><td class="l">target</td><td class="l">io_error</td><td class="l">blk_update_request: I/O error, dev sdb, sector 8</td></tr>"#), "{html}");
        assert!(html.contains("(another device)") && html.contains("device number 4 &lt;x&gt;"));
        run.os_log = Some(Vec::new());
        assert!(render(&run, &analysis, "r").contains("logged no USB or storage trouble"));
    }

    #[test]
    fn headline_figures_thermal_fit_and_drive_temperature_are_in_the_report() {
        let sc = hostd_scenario::load("x5-thermal").unwrap();
        let trace = hostd_scenario::simulate(&sc);
        let d = tempfile::tempdir().unwrap();
        hostd_scenario::write::write_run(
            d.path(),
            &sc,
            &trace,
            Some(hostd_scenario::write::ProbeOptions::default()),
        )
        .unwrap();
        let start = hostd_scenario::write::BASE_UNIX_NS;
        let mut csv = String::from("time_ns,target,temperature_c\n");
        for k in 0..120 {
            csv.push_str(&format!(
                "{},x5,{}\n",
                start + k * 1_000_000_000,
                45 + (k / 4).min(25)
            ));
        }
        std::fs::write(d.path().join("drive_temp.csv"), csv).unwrap();
        let (run, a) =
            hostd_analysis::analyze_run_dir(d.path(), &hostd_analysis::Options::default()).unwrap();
        let html = render(&run, &a, "x5");
        for want in [
            r#"id="headline-table""#,
            r#"id="thermal-fit""#,
            "thermal resistance",
            "first throttle predicted after",
            r#"id="chart-drive-temperature""#,
            "x5 drive (SMART)",
        ] {
            assert!(html.contains(want), "{want} missing");
        }
        assert!(!html.contains(r#"id="no-drive-temp""#));
        // No drive_log.csv: no thermal-record section.
        assert!(!html.contains(r#"id="drive-log""#));
        // The drive's thermal record: its counters first and last, and what they grew by.
        std::fs::write(
            d.path().join("drive_log.csv"),
            format!(
                "time_ns,target,warning_temp_time_min,tmt1_transitions,tmt1_time_s,sensors\n{},x5,0,9,100,1=35\n{},x5,1,12,141,1=41\n",
                start,
                start + 60_000_000_000
            ),
        )
        .unwrap();
        let (run, a) =
            hostd_analysis::analyze_run_dir(d.path(), &hostd_analysis::Options::default()).unwrap();
        let html = render(&run, &a, "x5");
        for want in [
            r#"id="drive-log-table""#,
            "<td class=\"l\">TMT1 transitions</td><td>9</td><td>12</td><td>3</td>",
            "<td class=\"l\">s at TMT1</td><td>100</td><td>141</td><td>41</td>",
            "2 readings over 60 s: logged 3 TMT1 transition(s), 41 s at TMT1, 1 min above the warning temperature",
            "the drive logged 3 TMT1 transition(s)",
        ] {
            assert!(html.contains(want), "{want} missing");
        }
        std::fs::remove_file(d.path().join("drive_log.csv")).unwrap();
        // Without the drive's readings the report says so instead of drawing nothing.
        std::fs::remove_file(d.path().join("drive_temp.csv")).unwrap();
        let (run, a) =
            hostd_analysis::analyze_run_dir(d.path(), &hostd_analysis::Options::default()).unwrap();
        assert!(render(&run, &a, "x5").contains(r#"id="no-drive-temp""#));
    }
}
