//! Headless Chromium (Debian's `chromium`, or `$CHROMIUM`) for the tests that open a page
//! hostd wrote: shared by the report's and the comparison's browser tests.
#![allow(dead_code)] // each test file uses its own subset

use std::path::Path;
use std::process::Command;

/// Headless, offline, logging the console to stderr.
pub const CHROMIUM_FLAGS: &[&str] = &[
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

/// The browser: `$CHROMIUM`, else `chromium`.
pub fn chromium() -> String {
    std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".into())
}

/// Runs Chromium on `page` with `extra` flags and a fresh profile; returns (stdout, stderr).
pub fn run_chromium(page: &Path, extra: &[String]) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chromium())
        .args(CHROMIUM_FLAGS)
        .arg(format!("--user-data-dir={}", profile.path().display()))
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

/// Occurrences of `needle` in `hay`.
pub fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

/// The `<svg id="ID" …>…</svg>` element of the dumped DOM.
pub fn svg_element<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!(r#"<svg id="{id}""#))
        .unwrap_or_else(|| panic!("chart {id} missing from the DOM"));
    let end = dom[start..].find("</svg>").expect("svg closed") + start;
    &dom[start..end]
}
