//! The 1 s throughput is one series (issue 40): what report.html draws against the data
//! written and against time, what the comparison page draws against the data written, and
//! what their `--charts` CSV files hold are the same points, those of
//! `hostd_analysis::throughput::of_phase` (each second's Δbytes/Δt of the byte counter, at
//! the phase's own bytes at its end). And every time axis starts at the run's first file:
//! a scenario's idle lead-in squeezes nothing.

use hostd_analysis::throughput::{of_phase, Second};
use hostd_analysis::Options;
use hostd_report::chart_files::{self, ChartFile};
use hostd_report::compare;
#[path = "common/scenario_run.rs"]
mod scenario_run;
use scenario_run::run_of;

/// The rows of `chart`'s CSV whose series is `series` and mark `mark`, as (x, y).
fn points(chart: &ChartFile, series: &str, mark: &str) -> Vec<(f64, f64)> {
    csv::Reader::from_reader(chart.csv.as_bytes())
        .records()
        .map(Result::unwrap)
        .filter(|r| &r[0] == series && &r[1] == mark)
        .map(|r| (r[2].parse().unwrap(), r[4].parse().unwrap()))
        .collect()
}

fn chart<'a>(files: &'a [ChartFile], id: &str) -> &'a ChartFile {
    files
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no chart {id}"))
}

#[test]
fn every_chart_of_throughput_draws_the_one_1_s_series() {
    let root = tempfile::tempdir().unwrap();
    let runs = [
        run_of("x5-thermal", root.path()),
        run_of("p50-slc-13gb", root.path()),
    ];
    for r in &runs {
        let subject = r.subject().unwrap();
        let secs: Vec<Second> = of_phase(&r.run, subject, "write");
        assert!(secs.len() > 50, "{}: {} seconds", r.dir, secs.len());
        let t0 = r.run.files.iter().map(|f| f.start_ns as i64).min().unwrap();
        let by_data: Vec<(f64, f64)> = secs
            .iter()
            .map(|s| (s.bytes as f64 / 1e9, s.rate_bps / 1e9))
            .collect();
        let by_time: Vec<(f64, f64)> = secs
            .iter()
            .map(|s| ((s.end_ns - t0) as f64 / 1e9, s.rate_bps / 1e9))
            .collect();

        // report.html and its chart files.
        let dir = tempfile::tempdir().unwrap();
        let charts = dir.path().join("charts");
        hostd_report::write_report_and_charts(dir.path(), &r.run, &r.analysis, Some(&charts))
            .unwrap();
        let csv = |id: &str| ChartFile {
            id: id.into(),
            svg: String::new(),
            csv: std::fs::read_to_string(charts.join(format!("{id}.csv"))).unwrap(),
        };
        let label = format!("{subject} write");
        assert_eq!(
            points(&csv("chart-throughput-gb"), &label, "point"),
            by_data,
            "{label}: report.html, throughput against data written"
        );
        assert_eq!(
            points(&csv("chart-throughput-time"), &label, "point"),
            by_time,
            "{label}: report.html, throughput against time"
        );
        // The files beside it, as faint marks of their own name.
        let files = points(
            &csv("chart-throughput-gb"),
            &format!("{label} per file"),
            "point",
        );
        assert_eq!(files.len(), r.run.files.len());
    }

    // The comparison page and its chart files: each run's line is its series.
    let c = compare::plan(&runs);
    let (_, files) = chart_files::collecting(|| compare::render(&runs, &c, &[], "t"));
    let by_data = chart(&files, &compare::by_data_id("write"));
    for (r, cr) in runs.iter().zip(&c.runs) {
        let want: Vec<(f64, f64)> = of_phase(&r.run, r.subject().unwrap(), "write")
            .iter()
            .map(|s| (s.bytes as f64 / 1e9, s.rate_bps / 1e9))
            .collect();
        assert_eq!(points(by_data, &cr.label, "point"), want, "{}", cr.label);
    }
}

/// A run whose probe began 100 s before its first file (a scenario's idle lead-in): every
/// time axis, of report.html and of the comparison page, starts at the first file, and
/// report.html says what it left out.
#[test]
fn time_axes_start_at_the_first_file() {
    let root = tempfile::tempdir().unwrap();
    let mut runs = [
        run_of("x5-thermal", root.path()),
        run_of("p50-slc-13gb", root.path()),
    ];
    // The workload of the first run 100 s later than its probe's first sample.
    let lead = 100_000_000_000u64;
    let r = &mut runs[0];
    for f in &mut r.run.files {
        (f.start_ns, f.end_ns) = (f.start_ns + lead, f.end_ns + lead);
    }
    for c in r
        .run
        .counters
        .iter_mut()
        .flat_map(|c| c.values_mut())
        .flatten()
    {
        c.time_ns += lead;
    }
    r.analysis = hostd_analysis::analyze(&r.run, &Options::default());
    let t0 = r.run.files.iter().map(|f| f.start_ns as i64).min().unwrap();
    assert!(r.run.probe.as_ref().unwrap().time_ns[0] <= t0 - lead as i64);

    let (html, files) = chart_files::collecting(|| {
        hostd_report::render_with(&runs[0].run, &runs[0].analysis, "x5", Some("x5"))
    });
    for id in ["chart-throughput-time", "chart-power", "chart-temperature"] {
        let c = chart(&files, id);
        let xs: Vec<f64> = csv::Reader::from_reader(c.csv.as_bytes())
            .records()
            .map(Result::unwrap)
            .filter(|r| &r[1] == "point")
            .map(|r| r[2].parse().unwrap())
            .collect();
        assert!(
            !xs.is_empty() && xs.iter().all(|x| *x >= 0.0),
            "{id}: {:?}",
            xs.first()
        );
    }
    let note = &html[html.find(r#"id="lead-in""#).expect("the lead-in is named")..];
    assert!(
        note.contains("s before the run's first step (the drive idle) are left out"),
        "{}",
        &note[..200]
    );

    let c = compare::plan(&runs);
    let (_, files) = chart_files::collecting(|| compare::render(&runs, &c, &[], "t"));
    for id in ["chart-compare-power", "chart-compare-enclosure"] {
        for cr in &c.runs {
            let xs = points(chart(&files, id), &cr.label, "point");
            assert!(
                !xs.is_empty() && xs.iter().all(|p| p.0 >= 0.0),
                "{id} {}",
                cr.label
            );
        }
    }
}

/// The headline bars stand highest first on every chart, whatever the order of the runs,
/// and `--highlight` finds its run by directory, label or group value, and names the runs
/// when it finds none.
#[test]
fn bars_are_sorted_by_value_and_the_drive_under_review_is_found() {
    let root = tempfile::tempdir().unwrap();
    let mut runs = [
        run_of("tb-ssd-4w5-port", root.path()),
        run_of("x5-thermal", root.path()),
        run_of("p50-slc-13gb", root.path()),
    ];
    for (r, g) in runs.iter_mut().zip(["tb", "x5", "p50"]) {
        r.group = Some(format!("drive={g}"));
    }
    let mut c = compare::plan(&runs);
    let err = compare::highlight(&runs, &mut c, "x9").unwrap_err();
    assert!(
        err.contains("drive=x5") && err.contains("x5-thermal"),
        "{err}"
    );
    assert!(c.runs.iter().all(|r| !r.under_review));
    compare::highlight(&runs, &mut c, "x5").unwrap();
    let marked: Vec<&str> = c
        .runs
        .iter()
        .filter(|r| r.under_review)
        .map(|r| r.label.as_str())
        .collect();
    assert_eq!(marked, ["drive=x5"]);
    let mut by_dir = compare::plan(&runs);
    compare::highlight(&runs, &mut by_dir, &runs[2].dir).unwrap();
    assert!(by_dir.runs[2].under_review && !by_dir.runs[1].under_review);

    let (html, files) = chart_files::collecting(|| compare::render(&runs, &c, &[], "t"));
    let mut charts = 0;
    for m in &compare::figures::METRICS {
        let Some(f) = files
            .iter()
            .find(|f| f.id == compare::bars_id("write", m.key))
        else {
            continue;
        };
        charts += 1;
        let rows: Vec<csv::StringRecord> = csv::Reader::from_reader(f.csv.as_bytes())
            .records()
            .map(Result::unwrap)
            .collect();
        let values: Vec<f64> = rows
            .iter()
            .filter(|r| &r[1] == "bar")
            .map(|r| r[4].parse().unwrap())
            .collect();
        assert!(
            values.windows(2).all(|w| w[0] >= w[1]),
            "{}: {values:?}",
            f.id
        );
        // A run without the figure comes after every bar.
        let first_none = rows.iter().position(|r| &r[1] == "none");
        assert!(
            first_none.is_none_or(|k| rows[k..].iter().all(|r| &r[1] == "none")),
            "{}",
            f.id
        );
        // Its row number is its place on the chart, from the top.
        let places: Vec<String> = rows.iter().map(|r| r[2].to_string()).collect();
        let want: Vec<String> = (0..rows.len()).map(|k| k.to_string()).collect();
        assert_eq!(places, want, "{}", f.id);
    }
    assert!(charts >= 8, "{charts} bar charts");
    // The drive under review is named bold on the bars and in the note above them.
    assert!(html.contains(r#"font-weight="bold"><title>drive=x5</title>drive=x5</text>"#));
    assert!(html.contains("the drive under review (drive=x5)"));
}
