//! The report opened in headless Chromium (Debian's `chromium`): no console messages at
//! all (the report has no script, so any message is an error such as a blocked network
//! load), every chart present in the DOM with its marks, and the layout as a reader sees
//! it at 1300 px and 800 px: screenshots kept under the cargo target directory
//! (`target/tmp/report-screenshots/`), and a check in the page itself
//! (getBoundingClientRect) that no two labels overlap and nothing leaves its chart or the
//! page. Run by `just test-report` (it needs the browser): `cargo test -p hostd-report
//! --test chromium -- --ignored`.

use hostd_analysis::Options;
use hostd_records::events::Analysis;
use hostd_records::RunData;
use hostd_scenario::write::{write_run, ProbeOptions};
use std::path::{Path, PathBuf};

#[path = "common/browser.rs"]
mod browser;
use browser::{count, layout_problems, run_chromium, svg_element};

/// The run directory `root/SCENARIO` of a simulated scenario (with the probe), analysed,
/// with its `report.html`; returns the directory, its records and their analysis.
fn scenario_report(scenario: &str, root: &Path) -> (PathBuf, RunData, Analysis) {
    let sc = hostd_scenario::load(scenario).unwrap();
    let trace = hostd_scenario::simulate(&sc);
    let dir = root.join(scenario);
    write_run(&dir, &sc, &trace, Some(ProbeOptions::default())).unwrap();
    let (run, analysis) = hostd_analysis::analyze_run_dir(&dir, &Options::default()).unwrap();
    hostd_report::write_report(&dir, &run, &analysis).unwrap();
    (dir, run, analysis)
}

/// A page holding `html` in a temporary directory (kept while the directory lives).
fn page_with(html: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.html");
    std::fs::write(&page, html).unwrap();
    (dir, page)
}

#[test]
#[ignore = "needs Debian's chromium; run by `just test-report`"]
fn report_renders_in_chromium_without_console_messages_and_with_all_charts() {
    let root =
        std::env::temp_dir().join(format!("throttlescope-report-test-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    for (scenario, files, series) in [("x5-thermal", 100, 1), ("hub-www-contention", 150, 3)] {
        let page = scenario_report(scenario, &root).0.join("report.html");
        let (dom, log) = run_chromium(&page, &["--dump-dom".into()]);
        let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
        assert!(
            console.is_empty(),
            "{scenario}: console messages: {console:#?}"
        );
        let by_gb = svg_element(&dom, "chart-throughput-gb");
        assert!(
            count(by_gb, "<circle") >= files,
            "{scenario}: one point per file"
        );
        assert_eq!(
            count(by_gb, r#"<path class="series seconds""#),
            series,
            "{scenario}: the 1 s throughput of each target"
        );
        assert!(
            count(by_gb, "event-marker") >= 1,
            "{scenario}: events marked"
        );
        let by_time = svg_element(&dom, "chart-throughput-time");
        assert_eq!(
            count(by_time, r#"<path class="series seconds""#),
            series,
            "{scenario}: one 1 s line per target"
        );
        assert!(
            count(by_time, r#"<g class="files""#) == series,
            "{scenario}: each target's files under its line"
        );
        for id in ["chart-power", "chart-temperature"] {
            let c = svg_element(&dom, id);
            assert!(
                c.contains("<path class=\"series\" d=\"M"),
                "{scenario}: {id} has a line"
            );
            assert!(
                count(c, "event-marker") >= 1,
                "{scenario}: {id} marks the events"
            );
        }
        assert!(
            count(svg_element(&dom, "chart-histogram"), "<rect") > 5,
            "{scenario}: histogram bars"
        );
        assert!(dom.contains(r#"id="stats-table""#) && dom.contains(r#"id="attribution""#));
    }
}

/// Where screenshots are kept for a person to look at.
fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
#[ignore = "needs Debian's chromium; run by `just test-report`"]
fn report_layout_has_no_overlapping_labels_at_1300_and_800_px_and_screenshots_are_kept() {
    let root = tempfile::tempdir().unwrap();
    let shots = screenshot_dir();
    let mut failures = Vec::new();
    for scenario in [
        "x5-thermal",
        "hub-www-contention",
        "p50-slc-13gb",
        "extreme-pro-slc-30gb",
    ] {
        let (dir, run, mut analysis) = scenario_report(scenario, root.path());
        let mut pages = vec![(scenario.to_string(), dir.join("report.html"))];
        if scenario == "x5-thermal" {
            // A variable number of events, some close together: a dozen copies of the
            // drop, 0.3 GB and 0.2 s apart, must still be drawn without overlap.
            let first = analysis.events[0].clone();
            for k in 1..12 {
                let mut e = first.clone();
                e.onset_bytes += k * 300_000_000;
                e.onset_ns += k as i64 * 200_000_000;
                analysis.events.push(e);
            }
            let many = root.path().join("many-events");
            std::fs::create_dir_all(&many).unwrap();
            for f in ["files.csv", "probe.csv", "manifest.json"] {
                let _ = std::fs::copy(dir.join(f), many.join(f));
            }
            hostd_report::write_report(&many, &run, &analysis).unwrap();
            pages.push(("x5-thermal-12-events".into(), many.join("report.html")));
        }
        for (name, page) in &pages {
            let (scenario, page) = (name.as_str(), page.as_path());
            // The page itself beside its screenshots, to open by hand.
            std::fs::copy(page, shots.join(format!("{scenario}.html"))).unwrap();
            for width in [1300u32, 800] {
                let shot = shots.join(format!("{scenario}-{width}.png"));
                run_chromium(
                    page,
                    &[
                        format!("--screenshot={}", shot.display()),
                        format!("--window-size={width},3600"),
                        "--hide-scrollbars".into(),
                    ],
                );
                let png = std::fs::read(&shot).expect("screenshot written");
                assert!(
                    png.starts_with(b"\x89PNG") && png.len() > 20_000,
                    "{scenario}: screenshot looks empty"
                );
                println!("screenshot: {}", shot.display());
                let (overlaps, outside, page_size) = layout_problems(page, width);
                for o in overlaps {
                    failures.push(format!("{scenario} at {width} px: overlap {o}"));
                }
                for o in outside {
                    failures.push(format!("{scenario} at {width} px: outside {o}"));
                }
                let (sw, cw) = (
                    page_size["scrollWidth"].as_f64().unwrap(),
                    page_size["clientWidth"].as_f64().unwrap(),
                );
                if sw > cw {
                    failures.push(format!(
                        "{scenario} at {width} px: the page is {sw} px wide in a {cw} px window"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs Debian's chromium; run by `just test-report`"]
fn layout_check_catches_overlapping_labels() {
    // The check above must be able to fail: two labels drawn at one place are caught.
    let (_dir, page) = page_with(
        r#"<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"></head><body><svg id="c" class="chart" viewBox="0 0 300 100" width="300" height="100"><text x="10" y="20">first label</text><text x="14" y="22">second label</text><text x="290" y="90">leaves the chart</text></svg></body></html>"#,
    );
    let (overlaps, outside, _) = layout_problems(&page, 800);
    assert_eq!(overlaps.len(), 1, "{overlaps:?}");
    assert_eq!(outside.len(), 1, "{outside:?}");
}

#[test]
#[ignore = "needs Debian's chromium; run by `just test-report`"]
fn console_check_catches_a_blocked_network_load() {
    // The check above must be able to fail: a page that tries the network is caught.
    let (_dir, page) = page_with(
        r#"<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:"></head><body><img src="http://127.0.0.1:9/x.png"></body></html>"#,
    );
    let (_, log) = run_chromium(&page, &["--dump-dom".into()]);
    assert!(
        log.lines().any(|l| l.contains(":CONSOLE")),
        "a blocked load must show in the log:\n{log}"
    );
}
