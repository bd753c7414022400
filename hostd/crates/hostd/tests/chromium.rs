//! `hostd compare --report` opened in headless Chromium: runs of several scenarios (different
//! drives; one drive on a direct port and on a hub), plus a directory that is not a run and
//! a run of a newer format, which are named and left out. Every chart the comparison plans
//! is in the DOM; its labels and numbers are those of `hostd compare --json`; the files of
//! `--charts DIR` hold the page's charts and figures. Screenshots are kept under the cargo
//! target directory (`target/tmp/compare-screenshots/`). Run by `just test-report`.

#[path = "../../report/tests/common/browser.rs"]
mod browser;
mod common;

use browser::{count, layout_problems, run_chromium, svg_element};
use common::{assert_ok, hostd};
use hostd_report::compare::figures::METRICS;
use hostd_report::compare::{bars_id, by_data_id};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Writes the scenario `name` (built in, or a file) as a run in `dir`, tagged `setup` and `port`.
fn scenario_run(name: &str, dir: &Path, setup: &str, port: &str) {
    common::generate(name, dir);
    let path = dir.join("manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    m["conditions"] = serde_json::json!({ "tags": { "setup": setup, "port": port } });
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// The repository's `fixtures/` directory.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures")
}

fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compare-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The standalone SVG file with its legend taken off: the chart element as the page has it.
fn chart_of_file(svg: &str) -> String {
    let at = svg.find("<svg y=\"").expect("the chart inside the file");
    let after = at + "<svg y=\"".len();
    let close = svg[after..].find("\" ").unwrap() + after;
    let inner = format!("<svg {}", &svg[close + 2..]);
    inner[..inner.rfind("</svg>").unwrap()]
        .trim_end()
        .to_string()
}

#[test]
#[ignore = "needs Debian's chromium; run by `just test-report`"]
fn a_comparison_of_drives_and_ports_renders_every_chart_with_the_json_figures() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let a_direct = fixtures().join("compare/a-direct.toml");
    let runs = [
        ("x5-thermal", "x5", "x5-direct", "direct"),
        ("p50-slc-13gb", "p50", "p50-direct", "direct"),
        (a_direct.to_str().unwrap(), "a-direct", "a-direct", "direct"),
        ("hub-www-contention", "a-hub", "a-hub", "hub"),
    ];
    let mut args: Vec<String> = Vec::new();
    for (scenario, dir, setup, port) in runs {
        scenario_run(scenario, &w.join(dir), setup, port);
        args.push(w.join(dir).display().to_string());
    }
    // Not a run, and a run of a newer format: named, and the others still compared.
    std::fs::create_dir(w.join("notes")).unwrap();
    scenario_run("steady", &w.join("newer"), "newer", "direct");
    let path = w.join("newer/manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    m["format_version"] = 99.into();
    std::fs::write(&path, m.to_string()).unwrap();
    args.insert(1, w.join("notes").display().to_string());
    args.push(w.join("newer").display().to_string());

    let page = w.join("compare.html");
    let charts = w.join("charts");
    let out = hostd()
        .args(["compare", "--group-by", "setup", "--json", "--report"])
        .arg(&page)
        .arg("--charts")
        .arg(&charts)
        .args(&args)
        .output()
        .unwrap();
    assert_ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("notes left out: not a run directory (no files.csv)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("newer left out") && stderr.contains("newer"),
        "{stderr}"
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let jruns = json["runs"].as_array().unwrap();
    assert_eq!(jruns.len(), 4);
    assert_eq!(json["skipped"].as_array().unwrap().len(), 2);
    // Headed by setup: the labels are the tag's values, in the order given.
    let labels: Vec<&str> = jruns.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "setup=x5-direct",
            "setup=p50-direct",
            "setup=a-direct",
            "setup=a-hub"
        ]
    );
    assert_eq!(
        jruns[3]["target"], "A",
        "the hub run follows its probed drive"
    );
    let phases: Vec<&str> = json["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["write"]);
    // Each run's column of the phase, in the runs' order.
    let columns = json["phases"][0]["runs"].as_array().unwrap();
    let left_out = json["left_out"].to_string();
    assert!(
        left_out.contains("targets C, B left out") || left_out.contains("targets B, C left out"),
        "{left_out}"
    );

    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("not a run directory (no files.csv)") && html.contains(r#"id="skipped""#)
    );
    let (dom, log) = run_chromium(&page, &["--dump-dom".into()]);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    for l in &labels {
        assert!(
            dom.contains(&format!("</span>{l}</span>")),
            "legend key {l}"
        );
    }

    // Throughput against data: each run's 1 s throughput (its byte counter) as a line, the
    // CSV beside it with its points, from the first second to the phase's last byte.
    let by_data = svg_element(&dom, &by_data_id("write"));
    assert_eq!(
        count(by_data, r#"<path class="series seconds""#),
        jruns.len()
    );
    let events: usize = jruns
        .iter()
        .map(|r| r["analysis"]["events"].as_array().unwrap().len())
        .sum();
    assert!(count(by_data, "event-marker") >= 1, "events marked");
    assert_eq!(count(&dom, "<li data-event="), events, "every event listed");
    let csv = std::fs::read_to_string(charts.join(format!("{}.csv", by_data_id("write")))).unwrap();
    for r in jruns {
        let label = r["label"].as_str().unwrap();
        let xs: Vec<f64> = csv
            .lines()
            .filter(|l| l.starts_with(&format!("{label},point,")))
            .map(|l| l.split(',').nth(2).unwrap().parse().unwrap())
            .collect();
        assert!(xs.len() > 20, "{label}: {} seconds", xs.len());
        assert!(
            xs.windows(2).all(|w| w[0] <= w[1]),
            "{label}: data written grows"
        );
        let bytes: f64 = r["analysis"]["phases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["target"] == r["target"] && p["phase"] == "write")
            .map(|p| p["bytes"].as_f64().unwrap())
            .sum();
        let last = xs[xs.len() - 1];
        assert!(
            (last - bytes / 1e9).abs() <= 0.01 * bytes / 1e9,
            "{label}: the line ends at {last} GB of {} GB",
            bytes / 1e9
        );
    }

    // Power and temperatures: a line per run on one time axis.
    for id in ["chart-compare-power", "chart-compare-enclosure"] {
        assert_eq!(
            count(svg_element(&dom, id), r#"<path class="series""#),
            4,
            "{id}"
        );
    }

    // Bars: every figure a run has is a bar with its value as the JSON gives it, written as
    // every output writes it (in the chart's unit, or its own where it differs), a figure
    // of the first drop with the drop's cause; a run without it has "none" and why in its
    // slot. The CSV beside the SVG holds the same numbers as written.
    let mut bar_charts = 0;
    for m in &METRICS {
        let id = bars_id("write", m.key);
        let values: Vec<Option<(f64, f64, f64)>> = columns
            .iter()
            .map(|r| {
                let f = &r["figures"][m.key];
                Some((
                    f["value"].as_f64()?,
                    f["low"].as_f64()?,
                    f["high"].as_f64()?,
                ))
            })
            .collect();
        if values.iter().all(Option::is_none) {
            assert!(
                !dom.contains(&format!(r#"<svg id="{id}""#)),
                "{id} drawn without figures"
            );
            continue;
        }
        bar_charts += 1;
        let unit = m.kind.common_unit(values.iter().flatten().map(|v| v.2));
        let svg = svg_element(&dom, &id);
        let texts: Vec<String> = svg
            .split(r#"class="label bar-value""#)
            .skip(1)
            .map(|s| s[s.find('>').unwrap() + 1..s.find("</text>").unwrap()].to_string())
            .collect();
        // Highest first (the values as the bars hold them; ties in the runs' order).
        let mut want: Vec<(f64, String)> = columns
            .iter()
            .zip(&values)
            .filter_map(|(r, v)| {
                let (v, _, _) = (*v)?;
                let cause = r["drop_cause"]["cause"]
                    .as_str()
                    .filter(|_| m.of_drop)
                    .map(|c| format!(" ({c})"))
                    .unwrap_or_default();
                let drawn = m.kind.unit(v).rounded_in(v, unit);
                Some((drawn, format!("{}{cause}", m.kind.cell(v, unit))))
            })
            .collect();
        want.sort_by(|a, b| b.0.total_cmp(&a.0));
        let want: Vec<String> = want.into_iter().map(|w| w.1).collect();
        assert_eq!(texts, want, "{id}");
        let nones = values.iter().filter(|v| v.is_none()).count();
        assert_eq!(
            count(svg, r#"class="label none""#),
            nones,
            "{id}: a none per empty slot"
        );
        let csv = std::fs::read_to_string(charts.join(format!("{id}.csv"))).unwrap();
        let mut rdr = csv::Reader::from_reader(csv.as_bytes());
        let rows: Vec<csv::StringRecord> = rdr
            .records()
            .map(Result::unwrap)
            .filter(|r| &r[1] == "bar")
            .collect();
        let mut with: Vec<(&str, (f64, f64, f64))> = labels
            .iter()
            .zip(&values)
            .filter_map(|(l, v)| Some((*l, (*v)?)))
            .collect();
        let drawn = |v: f64| m.kind.unit(v).rounded_in(v, unit);
        with.sort_by(|a, b| drawn(b.1 .0).total_cmp(&drawn(a.1 .0)));
        assert_eq!(rows.len(), with.len(), "{id}");
        for (row, (label, (v, lo, hi))) in rows.iter().zip(with) {
            assert_eq!(&row[0], label);
            let own = m.kind.unit(v);
            let num = |k: usize| row[k].parse::<f64>().unwrap();
            for (got, want) in [(num(4), v), (num(5), lo), (num(6), hi)] {
                let want = own.rounded_in(want, unit);
                assert!(
                    (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "{id}: {got} vs {want}"
                );
            }
        }
    }
    assert!(bar_charts >= 8, "{bar_charts} bar charts");

    // Each chart's SVG file is the page's chart with its legend.
    let page_svgs = html.matches("<svg id=\"").count();
    let written: Vec<PathBuf> = std::fs::read_dir(&charts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(
        written
            .iter()
            .filter(|p| p.extension().unwrap() == "svg")
            .count(),
        page_svgs
    );
    for p in written.iter().filter(|p| p.extension().unwrap() == "svg") {
        let id = p.file_stem().unwrap().to_str().unwrap();
        let file = std::fs::read_to_string(p).unwrap();
        let start = html.find(&format!(r#"<svg id="{id}""#)).unwrap();
        let end = html[start..].find("</svg>").unwrap() + start;
        assert_eq!(
            chart_of_file(&file),
            html[start..end + "</svg>".len()],
            "{id}"
        );
        assert!(p.with_extension("csv").exists(), "{id}: data beside it");
    }

    // The conditions that differ are highlighted.
    for row in ["tag port", "tag setup"] {
        assert!(
            dom.contains(&format!(r#"<tr class="differs"><td class="l">{row}</td>"#)),
            "{row}"
        );
    }
    // Laid out as a reader sees it: no two labels overlap, nothing leaves its chart or the page.
    for width in [1300, 800] {
        let (overlaps, outside, _) = layout_problems(&page, width);
        assert!(
            overlaps.is_empty() && outside.is_empty(),
            "{width} px: {overlaps:#?} {outside:#?}"
        );
    }
    run_chromium(
        &page,
        &[
            format!(
                "--screenshot={}",
                screenshot_dir().join("compare-1300.png").display()
            ),
            "--window-size=1300,9000".into(),
            "--hide-scrollbars".into(),
        ],
    );
}

#[test]
#[ignore = "needs Debian's chromium; run by `just test-report`"]
fn runs_with_no_phase_in_common_are_listed_but_not_drawn_on_one_axis() {
    let work = tempfile::tempdir().unwrap();
    let (a, b) = (work.path().join("write"), work.path().join("read"));
    scenario_run("x5-thermal", &a, "w", "direct");
    scenario_run("x5-read-thermal", &b, "r", "direct");
    let page = work.path().join("compare.html");
    let out = hostd()
        .arg("compare")
        .arg("--report")
        .arg(&page)
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert_ok(&out);
    let (dom, log) = run_chromium(&page, &["--dump-dom".into()]);
    assert!(!log.contains(":CONSOLE"));
    assert!(dom.contains(r#"id="no-common-phase""#));
    assert!(dom.contains("The runs have no phase in common"));
    assert!(!dom.contains("chart-compare-gb-") && !dom.contains("chart-bars-"));
    assert!(dom.contains("phase read left out: no other run has it"));
    assert!(dom.contains(r#"id="compare-events""#));
}
