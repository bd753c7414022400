//! The report opened in headless Chromium (Debian's `chromium`): no console messages at
//! all (the report has no script, so any message is an error such as a blocked network
//! load), every chart present in the DOM with its marks, and a screenshot saved.
//! Run by `just test-report` (it needs the browser): `cargo test -p hostd-report --test
//! chromium -- --ignored`.

use hostd_analysis::Options;
use hostd_scenario::write::{write_run, ProbeOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--enable-logging=stderr",
    "--v=0",
];

fn chromium() -> String {
    std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".into())
}

/// Runs Chromium on `page` with `extra` flags and a fresh profile; returns (stdout, stderr).
fn run_chromium(page: &Path, extra: &[String], profile: &Path) -> (String, String) {
    let out = Command::new(chromium())
        .args(CHROMIUM_FLAGS)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "could not start {} (install Debian's chromium: just setup): {e}",
                chromium()
            )
        });
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn report_for(scenario: &str, root: &Path) -> PathBuf {
    let sc = hostd_scenario::load(scenario).unwrap();
    let trace = hostd_scenario::simulate(&sc);
    let dir = root.join(scenario);
    write_run(&dir, &sc, &trace, Some(ProbeOptions::default())).unwrap();
    let (run, analysis) = hostd_analysis::analyze_run_dir(&dir, &Options::default()).unwrap();
    hostd_report::write_report(&dir, &run, &analysis).unwrap();
    dir.join("report.html")
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

/// The `<svg id="ID" …>…</svg>` element of the dumped DOM.
fn svg_element<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!(r#"<svg id="{id}""#))
        .unwrap_or_else(|| panic!("chart {id} missing from the DOM"));
    let end = dom[start..].find("</svg>").expect("svg closed") + start;
    &dom[start..end]
}

#[test]
#[ignore = "needs Debian's chromium; run by `just test-report`"]
fn report_renders_in_chromium_without_console_messages_and_with_all_charts() {
    let root =
        std::env::temp_dir().join(format!("throttlescope-report-test-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    for (scenario, files, series) in [("x5-thermal", 100, 1), ("hub-www-contention", 150, 3)] {
        let page = report_for(scenario, &root);
        let profile = tempfile::tempdir().unwrap();
        let (dom, log) = run_chromium(&page, &["--dump-dom".into()], profile.path());
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
        assert!(
            count(by_gb, "event-marker") >= 1,
            "{scenario}: events marked"
        );
        let by_time = svg_element(&dom, "chart-throughput-time");
        assert_eq!(
            count(by_time, r#"class="series""#),
            series,
            "{scenario}: one series per target"
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
        let shot = root.join(format!("{scenario}.png"));
        let profile = tempfile::tempdir().unwrap();
        run_chromium(
            &page,
            &[
                format!("--screenshot={}", shot.display()),
                "--window-size=1050,2700".into(),
            ],
            profile.path(),
        );
        let png = std::fs::read(&shot).expect("screenshot written");
        assert!(
            png.starts_with(b"\x89PNG") && png.len() > 20_000,
            "{scenario}: screenshot looks empty"
        );
        println!("screenshot: {}", shot.display());
    }
}

#[test]
#[ignore = "needs Debian's chromium; run by `just test-report`"]
fn console_check_catches_a_blocked_network_load() {
    // The check above must be able to fail: a page that tries the network is caught.
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("bad.html");
    std::fs::write(
        &page,
        r#"<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:"></head><body><img src="http://127.0.0.1:9/x.png"></body></html>"#,
    )
    .unwrap();
    let profile = tempfile::tempdir().unwrap();
    let (_, log) = run_chromium(&page, &["--dump-dom".into()], profile.path());
    assert!(
        log.lines().any(|l| l.contains(":CONSOLE")),
        "a blocked load must show in the log:\n{log}"
    );
}
