//! `hostd compare` and `hostd analyze` in the terminal as a reviewer reads them (issue 40
//! items 5 and 6), on run directories of simulated drives: three drives whose targets are
//! named apart (a thermal throttle, an SLC cache, a port's budget) side by side, one column
//! each in the order given; and events that show the signs that decided their cause first,
//! with a source the run did not read said once.

mod common;

use common::{assert_ok, generate, hostd};
use hostd_records::headline::Figure;
use hostd_report::compare::figures::METRICS;
use hostd_testkit::table::row_cells;
use serde_json::Value;
use std::path::Path;

/// Writes scenario `name` as a run in `dir`, tagged `drive=DRIVE` as `hostd run --tag` does.
fn tagged_run(name: &str, dir: &Path, drive: &str) {
    generate(name, dir);
    let path = dir.join("manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    m["conditions"] = serde_json::json!({ "tags": { "drive": drive } });
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// `hostd ARGS…`'s stdout, after checking that it succeeded.
fn stdout(args: &[&str]) -> String {
    let out = hostd().args(args).output().unwrap();
    assert_ok(&out);
    String::from_utf8(out.stdout).unwrap()
}

/// The reason behind a cell "none" with its footnote mark: the table's footnote line of
/// that mark.
fn footnote(table: &str, cell: &str) -> String {
    let mark = cell
        .strip_prefix("none")
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| panic!("{cell:?} is neither a figure nor 'none' with a footnote"));
    table
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{mark} ")))
        .unwrap_or_else(|| panic!("no footnote {mark} in\n{table}"))
        .to_string()
}

/// Three drives given as x5, p50, tb (neither their labels' nor their tags' alphabetical
/// order), their targets named apart: one column each, in that order, headed by the
/// group's label; every figure in every column, equal to the run's own `hostd analyze
/// --json` written through its kind, or "none" and the run's reason; the `--json` of the
/// same shape.
#[test]
fn compare_puts_each_run_in_its_own_column_in_the_order_given() {
    let w = tempfile::tempdir().unwrap();
    let runs = [
        ("x5-thermal", "x5", "thermal"),
        ("p50-slc-13gb", "p50", "slc_cache"),
        ("tb-ssd-4w5-port", "tb", "power"),
    ];
    let dirs: Vec<String> = runs
        .iter()
        .map(|(scenario, drive, _)| {
            let dir = w.path().join(drive);
            tagged_run(scenario, &dir, drive);
            dir.display().to_string()
        })
        .collect();
    let mut args = vec!["compare", "--group-by", "drive"];
    args.extend(dirs.iter().map(String::as_str));
    let table = stdout(&args);
    let labels = ["drive=x5", "drive=p50", "drive=tb"];
    let header = table.lines().next().unwrap();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        labels,
        "one column per run, in the order given, headed by its label:\n{table}"
    );
    assert_eq!(table.lines().nth(1), Some("write"), "{table}");

    args.push("--json");
    let json: Value = serde_json::from_str(&stdout(&args)).unwrap();
    let in_order = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["label"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(in_order(&json["runs"]), labels);
    assert_eq!(json["phases"][0]["phase"], "write");
    assert_eq!(in_order(&json["phases"][0]["runs"]), labels);

    for (k, ((_, _, cause), dir)) in runs.iter().zip(&dirs).enumerate() {
        // The run alone, as `hostd analyze --json` gives it.
        let alone: Value = serde_json::from_str(&stdout(&["analyze", dir, "--json"])).unwrap();
        let h = &alone["headlines"]["series"][0];
        let column = &json["phases"][0]["runs"][k];
        for m in &METRICS {
            let of_json: Figure = serde_json::from_value(column["figures"][m.key].clone())
                .unwrap_or_else(|e| panic!("{}: {e}", m.key));
            if m.key != "mbps_per_w" {
                let own: Figure = serde_json::from_value(h[m.key].clone()).unwrap();
                assert_eq!(of_json, own, "{} {}: --json", labels[k], m.key);
            }
            let cell = &row_cells(&table, &labels, m.title)[k];
            match &of_json {
                Figure::Value { .. } => {
                    assert_eq!(*cell, of_json.text(m.kind), "{} {}", labels[k], m.key)
                }
                Figure::Absent { absent } => {
                    assert_eq!(footnote(&table, cell), *absent, "{} {}", labels[k], m.key)
                }
            }
        }
        let confidence = h["drop_confidence"].as_f64().unwrap();
        assert_eq!(
            column["drop_cause"],
            serde_json::json!({ "cause": cause, "confidence": confidence })
        );
        assert_eq!(
            row_cells(&table, &labels, "cause of the first drop")[k],
            format!("{cause} (confidence {confidence:.2})")
        );
    }
    // The rows reviews publish, each with a value for the run that has one.
    for (row, has) in [
        ("data before the first drop", [true, true, true]),
        ("time to the first drop", [true, true, true]),
        ("SLC cache size", [false, true, false]),
        ("rate after the cache", [false, true, false]),
        ("peak bus power (1 s mean)", [true, true, true]),
    ] {
        let cells = row_cells(&table, &labels, row);
        for ((cell, has), label) in cells.iter().zip(has).zip(labels) {
            assert_eq!(!cell.starts_with("none"), has, "{label} {row}: {cell:?}");
        }
    }
}

/// An event's lines in `text` (wrapped lines joined): its own line, then the lines indented
/// under it.
fn event_block<'a>(text: &'a [String], line: &str) -> Vec<&'a str> {
    let at = text
        .iter()
        .position(|l| l == line)
        .unwrap_or_else(|| panic!("{line:?} not in {text:#?}"));
    text[at + 1..]
        .iter()
        .take_while(|l| l.starts_with(hostd_analysis::event_lines::SIGN_INDENT))
        .map(|l| l[hostd_analysis::event_lines::SIGN_INDENT.len()..].as_ref())
        .collect()
}

/// A run of four events: each shows under its line the signs that decided its cause, as
/// the analysis chose them (at most four, all of its cause), and no other; the full list
/// stays in events.json and behind the report's fold; the OS log the run did not read is one
/// line, not one per event; no value reads "+0.000".
#[test]
fn each_event_shows_its_deciding_signs_first_and_an_unread_source_once() {
    let w = tempfile::tempdir().unwrap();
    let dir = w.path().join("osc");
    generate("x5-oscillating", &dir);
    let text = stdout(&["analyze", dir.to_str().unwrap()]);
    let joined = text.replace(
        &format!("\n{}", hostd_analysis::event_lines::CONTINUATION),
        " ",
    );
    let lines: Vec<String> = joined.lines().map(str::to_string).collect();
    let events: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("events.json")).unwrap()).unwrap();
    let events = events["events"].as_array().unwrap();
    assert!(events.len() >= 3, "{text}");
    for e in events {
        let ev = &e["evidence"];
        let shown = event_block(&lines, ev["text"].as_str().unwrap());
        let deciding: Vec<&str> = ev["deciding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap())
            .collect();
        assert!(
            (1..=4).contains(&shown.len()),
            "{} sign lines under the event:\n{text}",
            shown.len()
        );
        assert_eq!(shown, deciding, "{text}");
        let reasons: Vec<&str> = ev["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert!(reasons.len() > shown.len(), "the full list is longer");
        // Each a rule of the event's cause: those that carried it, and at most one against.
        let cause = e["cause"].as_str().unwrap();
        for d in &deciding {
            assert!(reasons.contains(d), "{d:?} is one of the rules checked");
            assert!(
                d.starts_with(&format!("✓ {cause}: ")) || d.starts_with(&format!("✗ {cause}: ")),
                "{d:?} is not a sign of {cause}"
            );
        }
        assert!(deciding.iter().filter(|d| d.starts_with('✗')).count() <= 1);
        assert!(
            !reasons.iter().any(|r| r.contains("was not read")),
            "{reasons:#?}"
        );
        assert!(ev["unread"]
            .as_array()
            .unwrap()
            .contains(&Value::from("os_log")));
    }
    let unread = "the operating system's log was not read";
    assert_eq!(text.matches(unread).count(), 1, "{text}");
    assert!(
        !text.contains("+0.000") && !text.contains("-0.000"),
        "{text}"
    );

    // report.html: the deciding signs outside the fold, every rule inside it.
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let section = &html[html.find(r#"<section id="attribution">"#).unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert_eq!(section.matches(unread).count(), 1, "once for the run");
    let blocks: Vec<&str> = section.split(r#"<div class="event""#).skip(1).collect();
    assert_eq!(blocks.len(), events.len());
    for (block, e) in blocks.iter().zip(events) {
        let (open, fold) = block.split_once("<details>").expect("a fold");
        assert_eq!(
            open.matches(r#"<li class="deciding">"#).count(),
            e["evidence"]["deciding"].as_array().unwrap().len()
        );
        let fold = &fold[..fold.find("</details>").unwrap()];
        assert_eq!(
            fold.matches("<li>").count(),
            e["evidence"]["reasons"].as_array().unwrap().len()
        );
    }
}
