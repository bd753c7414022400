//! `hostd analyze` and `hostd compare` as a user runs them: on generated scenario runs, and
//! on malformed input (clear error naming file, row and column; nothing written).

use hostd_scenario::write::write_run;
use std::path::Path;
use std::process::Output;

mod common;
use common::{assert_ok, generate};

/// `hostd ARGS…`, run to its end.
fn hostd(args: &[&str]) -> Output {
    common::hostd().args(args).output().expect("hostd runs")
}

#[test]
fn analyze_json_has_the_documented_shape_and_writes_events_and_report() {
    let d = tempfile::tempdir().unwrap();
    generate("x5-thermal", d.path());
    let out = hostd(&["analyze", d.path().to_str().unwrap(), "--json"]);
    assert_ok(&out);
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON document");
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "cycles",
            "events",
            "format_version",
            "headlines",
            "insufficient",
            "overlap",
            "phases"
        ]
    );
    // Headline figures: each {value, low, high} or {absent: reason}; the thermal fit.
    let h = &v["headlines"]["series"][0];
    for k in [
        "average_bps",
        "sustained_bps",
        "slc_cache_bytes",
        "post_cache_bps",
        "throttle_s",
        "throttle_bytes",
        "throttled_bps",
    ] {
        let f = &h[k];
        assert!(
            (f["low"].as_f64() <= f["value"].as_f64()
                && f["value"].as_f64() <= f["high"].as_f64()
                && f["value"].is_number())
                || f["absent"].is_string(),
            "headline {k}: {f}"
        );
    }
    assert!(
        h["slc_cache_bytes"]["absent"].is_string(),
        "x5 has no SLC drop: {h}"
    );
    assert!(h["throttle_bytes"]["value"].is_number(), "{h}");
    assert!(v["headlines"]["thermal_fit"]["Ok"]["tau_s"]["value"].is_number());
    let e = &v["events"][0];
    for k in [
        "target",
        "phase",
        "kind",
        "onset_bytes",
        "onset_ns",
        "onset_bytes_low",
        "onset_bytes_high",
        "onset_ns_low",
        "onset_ns_high",
        "p_value",
        "permutations",
        "gradual",
        "settle_bytes",
        "relative_change",
        "rate_before_bps",
        "rate_after_bps",
        "cause",
        "confidence",
        "evidence",
    ] {
        assert!(!e[k].is_null(), "event field {k} missing: {e}");
    }
    assert_eq!(e["kind"], "drop");
    assert_eq!(e["cause"], "thermal");
    assert!(e["p_value"].as_f64().unwrap() < 0.01);
    assert!(
        e["onset_bytes_low"].as_u64() <= e["onset_bytes"].as_u64()
            && e["onset_bytes"].as_u64() <= e["onset_bytes_high"].as_u64()
    );
    assert!(v["phases"][0]["bimodal"].as_bool().unwrap());
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("events.json")).unwrap())
            .unwrap();
    assert_eq!(written, v, "events.json is the same document");
    assert!(std::fs::read_to_string(d.path().join("report.html"))
        .unwrap()
        .contains("chart-throughput-gb"));
}

#[test]
fn analyze_summary_names_the_throttle() {
    let d = tempfile::tempdir().unwrap();
    generate("p50-slc-13gb", d.path());
    let out = hostd(&["analyze", d.path().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        text.contains("p50 write dropped at 13.")
            && text.contains("slc_cache")
            && text.contains(" GB, ")
            && text.contains(", p "),
        "{text}"
    );
}

#[test]
fn analyze_tells_a_phases_power_against_the_budget_that_changed_in_it() {
    // The port's advertisement falls from 3.0 A to 1.5 A at 25 GB (the run's timeline).
    let d = tempfile::tempdir().unwrap();
    generate("tb-ssd-port-change", d.path());
    let out = hostd(&["analyze", d.path().to_str().unwrap()]);
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("tb write: bus power peak "))
        .unwrap_or_else(|| panic!("no bus power line: {text}"));
    assert!(
        line.contains("% of the port's 15.0→7.5 W; VBUS min "),
        "{line}"
    );
    assert!(text.contains("power"), "{text}");
    // The report's power chart draws the budget in its two steps.
    let report = std::fs::read_to_string(d.path().join("report.html")).unwrap();
    assert!(
        report.contains("port budget 15.0→7.5 W"),
        "no stepped budget line"
    );
}

#[test]
fn analyze_works_without_probe_csv() {
    let d = tempfile::tempdir().unwrap();
    let sc = hostd_scenario::load("steady").unwrap();
    write_run(d.path(), &sc, &hostd_scenario::simulate(&sc), None).unwrap();
    let out = hostd(&["analyze", d.path().to_str().unwrap(), "--json"]);
    assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["events"].as_array().unwrap().len(), 0);
    assert!(v["phases"][0]["j_per_gb"].is_null());
}

#[test]
fn malformed_files_csv_is_refused_with_row_and_column_and_nothing_written() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("files.csv"),
        "target,phase,index,start_ns,end_ns,bytes\nA,write,0,0,1000,5\nA,write,1,1000,2000,5x\n",
    )
    .unwrap();
    let out = hostd(&["analyze", d.path().to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("line 3, column `bytes`") && err.contains("5x"),
        "{err}"
    );
    assert!(!d.path().join("events.json").exists() && !d.path().join("report.html").exists());
}

#[test]
fn missing_column_and_missing_file_are_named() {
    let d = tempfile::tempdir().unwrap();
    let out = hostd(&["analyze", d.path().to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("files.csv"),
        "missing files.csv is named"
    );
    std::fs::write(
        d.path().join("files.csv"),
        "target,phase,index,start_ns,end_ns,bytes\nA,write,0,0,1000,5\n",
    )
    .unwrap();
    std::fs::write(d.path().join("probe.csv"), "time_ns,power_w\n1,2\n").unwrap();
    let out = hostd(&["analyze", d.path().to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("probe.csv") && err.contains("enclosure_temp_c"),
        "{err}"
    );
}

#[test]
fn compare_puts_runs_side_by_side() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    generate("x5-thermal", a.path());
    generate("steady", b.path());
    let out = hostd(&[
        "compare",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_ok(&out);
    // Matched by phase though their targets are named apart: one row, both columns.
    let header: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["x5", "steady"], "{text}");
    let average = text
        .lines()
        .find(|l| l.starts_with("  average rate "))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(average.matches(" GB/s [").count(), 2, "{average}");
    assert!(
        text.contains("thermal") && text.contains("no throughput changes beyond noise"),
        "{text}"
    );
    let out = hostd(&["compare", a.path().to_str().unwrap()]);
    assert!(!out.status.success(), "one run is not a comparison");
}

#[test]
fn analyze_does_not_replace_files_it_did_not_write_unless_forced() {
    let d = tempfile::tempdir().unwrap();
    generate("steady", d.path());
    std::fs::write(d.path().join("report.html"), "my own notes").unwrap();
    let dir = d.path().to_str().unwrap();
    let out = hostd(&["analyze", dir]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("not written by hostd"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join("report.html")).unwrap(),
        "my own notes"
    );
    assert!(
        !d.path().join("events.json").exists(),
        "nothing written when refusing"
    );
    assert!(
        hostd(&["analyze", dir, "--no-report"]).status.success(),
        "events.json alone is fine"
    );
    assert!(hostd(&["analyze", dir, "--force"]).status.success());
    assert!(
        hostd(&["analyze", dir]).status.success(),
        "a report hostd wrote is replaced"
    );
    let out = hostd(&["analyze", dir, "--link-ceiling-gbps=-3"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("positive"));
}

/// Records flow once: `hostd run` analyses the records it holds in memory and never reads
/// its run directory back; `hostd analyze` reads the same records from the files. Both
/// must give the same analysis, to the last field, for one run with a probe and two targets.
#[test]
fn run_in_memory_and_analyze_from_the_files_give_the_same_analysis() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("run");
    let o = common::hostd()
        .args(["run", "-q", "--profile", "quick", "--seed", "3"])
        .args(["--probe", "sim", "--probe-on", "1"])
        .args(["--target", "sim:x5-thermal*20:write"])
        .args(["--target", "sim:steady*20:write", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_ok(&o);
    let in_memory: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("events.json")).unwrap()).unwrap();
    // The in-memory path had the probe's samples and knew the probed target.
    let phase_of = |target: &str| {
        in_memory["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["target"] == target)
            .unwrap_or_else(|| panic!("no phase of {target}"))
            .clone()
    };
    let probed = phase_of("sim:x5-thermal*20");
    assert!(probed["mean_power_w"].as_f64().unwrap() > 0.0, "{probed}");
    let other = phase_of("sim:steady*20");
    assert!(other["mean_power_w"].is_null(), "{other}");

    let a = hostd(&["analyze", out.to_str().unwrap(), "--json"]);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let from_files: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(from_files, in_memory);
}

#[test]
fn the_latency_report_from_memory_and_from_the_hlog_files_is_the_same() {
    // Two real targets with direct I/O, so both threads time their I/Os.
    let work = common::disk_tempdir();
    let (a, b, out) = common::two_targets_and_a_run(work.path());
    let profile = common::small_profile(work.path(), 6, "4MB");
    let targets = [
        format!("{}:write", a.display()),
        format!("{}:read", b.display()),
    ];
    assert_ok(
        &common::hostd_run(&profile, targets, &out)
            .args(["--seed", "4"])
            .output()
            .unwrap(),
    );
    // `hostd run` drew the report from the histograms in memory.
    let in_memory = std::fs::read_to_string(out.join("report.html")).unwrap();
    let section = |html: &str| -> String {
        let start = html
            .find(r#"<section id="latency">"#)
            .expect("a latency section");
        let len = html[start..].find("</section>").unwrap();
        html[start..start + len].to_string()
    };
    let lat = section(&in_memory);
    assert!(lat.contains(r#"id="chart-latency-time""#), "{lat}");
    assert!(
        lat.contains(r#"<td class="l">target 0 write</td>"#),
        "{lat}"
    );
    assert!(lat.contains(r#"<td class="l">target 1 read</td>"#), "{lat}");
    let events = std::fs::read(out.join("events.json")).unwrap();

    // `hostd analyze` reads the .hlog files into the same records: the same report.
    let a = hostd(&["analyze", out.to_str().unwrap()]);
    assert_ok(&a);
    let from_files = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_eq!(section(&from_files), lat);
    if let Some(at) = from_files
        .bytes()
        .zip(in_memory.bytes())
        .position(|(x, y)| x != y)
    {
        let around = |s: &str| s[at.saturating_sub(200)..(at + 200).min(s.len())].to_string();
        panic!(
            "the reports differ at byte {at}:\nfrom files: {}\nin memory:  {}",
            around(&from_files),
            around(&in_memory)
        );
    }
    assert_eq!(from_files.len(), in_memory.len());
    assert_eq!(std::fs::read(out.join("events.json")).unwrap(), events);
}

/// `--charts DIR`: every chart of report.html as DIR/ID.svg (the page's chart, standalone)
/// with its data as DIR/ID.csv: on the throughput chart, a row per file (its series `LABEL
/// per file`) under the 1 s throughput's points.
#[test]
fn analyze_writes_every_chart_of_the_report_as_svg_and_csv() {
    let d = tempfile::tempdir().unwrap();
    generate("x5-thermal", d.path());
    let charts = d.path().join("charts");
    let out = hostd(&[
        "analyze",
        d.path().to_str().unwrap(),
        "--charts",
        charts.to_str().unwrap(),
    ]);
    assert_ok(&out);
    let html = std::fs::read_to_string(d.path().join("report.html")).unwrap();
    let ids: Vec<&str> = html
        .split(r#"<svg id=""#)
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    assert!(ids.len() >= 5, "{ids:?}");
    for id in &ids {
        let svg = std::fs::read_to_string(charts.join(format!("{id}.svg"))).unwrap();
        assert!(svg.contains(&format!(r#"id="{id}""#)) && svg.starts_with("<?xml"));
        assert!(charts.join(format!("{id}.csv")).exists(), "{id}.csv");
    }
    let files = common::csv_rows(&d.path().join("files.csv")).len() - 1;
    let csv = std::fs::read_to_string(charts.join("chart-throughput-gb.csv")).unwrap();
    let rows = |series: &str| {
        csv.lines()
            .filter(|l| l.starts_with(&format!("{series},point,")))
            .count()
    };
    assert_eq!(rows("x5 write per file"), files);
    assert!(rows("x5 write") > 50, "the 1 s throughput:\n{csv}");
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains(&format!("wrote {} charts as SVG and CSV", ids.len())));
}

/// A directory that is not a run, or a run of a newer format, is named with the reason and
/// the others are still compared; with fewer than two left there is nothing to compare.
#[test]
fn compare_names_what_it_cannot_read_and_compares_the_rest() {
    let w = tempfile::tempdir().unwrap();
    let (a, b, newer, junk) = (
        w.path().join("a"),
        w.path().join("b"),
        w.path().join("newer"),
        w.path().join("junk"),
    );
    generate("x5-thermal", &a);
    generate("steady", &b);
    generate("steady", &newer);
    std::fs::create_dir(&junk).unwrap();
    let path = newer.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    m["format_version"] = 99.into();
    std::fs::write(&path, m.to_string()).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let page = w.path().join("c.html");
    let out = hostd(&[
        "compare",
        &s(&a),
        &s(&junk),
        &s(&newer),
        &s(&b),
        "--report",
        &s(&page),
        "--json",
    ]);
    assert_ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{} left out: not a run directory (no files.csv)",
            junk.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("{} left out: ", newer.display())) && err.contains("99"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
    assert_eq!(v["skipped"][0]["run"], s(&junk));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#"<ul id="skipped">"#) && html.contains("not a run directory"));
    assert!(html.contains(r#"id="chart-compare-gb-write""#));
    let out = hostd(&["compare", &s(&a), &s(&junk)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("fewer than two runs to compare"),
        "{err}"
    );
}
