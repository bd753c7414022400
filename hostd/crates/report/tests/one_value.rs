//! One value per figure (issue 40): three simulated runs — a thermal throttle (x5), an SLC
//! cache (p50) and a drive held by its port's budget (tb) — through every output: the
//! terminal of `hostd analyze` and of `hostd run`, the table of `hostd compare` and its
//! `--json`, the JSON (`hostd analyze --json`), `report.html`, the comparison page and its
//! charts' CSV files.
//! Each published figure is read back out of each output by its label and must read the
//! same everywhere: the JSON's value written through its kind (`hostd_records::published`),
//! or "none" and the same reason where the run has no such figure.

use hostd_records::events::Analysis;
use hostd_records::headline::{Figure, SeriesHeadline};
use hostd_records::published::Kind;
use hostd_records::{RunData, Summary};
use hostd_report::compare::{self, CompareRun};
use hostd_testkit::table::row_cells;
#[path = "common/scenario_run.rs"]
mod scenario_run;
use hostd_store::SummaryExt;
use scenario_run::run_of;
use std::collections::BTreeMap;

/// The runs: scenario, and what its first drop is.
const RUNS: [(&str, &str); 3] = [
    ("x5-thermal", "thermal"),
    ("p50-slc-13gb", "slc_cache"),
    ("tb-ssd-4w5-port", "power"),
];

/// The headline figures every output publishes, with their kinds.
const FIGURES: [(&str, Kind); 11] = [
    ("average_bps", Kind::Rate),
    ("sustained_bps", Kind::Rate),
    ("drop_bytes", Kind::Data),
    ("drop_s", Kind::Seconds),
    ("after_drop_bps", Kind::Rate),
    ("slc_cache_bytes", Kind::Data),
    ("post_cache_bps", Kind::Rate),
    ("j_per_gb", Kind::JPerGb),
    ("mean_power_w", Kind::Power),
    ("peak_power_w", Kind::Power),
    ("enclosure_max_c", Kind::Temperature),
];

/// The figure `key` of a headline.
fn figure<'a>(h: &'a SeriesHeadline, key: &str) -> &'a Figure {
    match key {
        "average_bps" => &h.average_bps,
        "sustained_bps" => &h.sustained_bps,
        "drop_bytes" => &h.drop_bytes,
        "drop_s" => &h.drop_s,
        "after_drop_bps" => &h.after_drop_bps,
        "slc_cache_bytes" => &h.slc_cache_bytes,
        "post_cache_bps" => &h.post_cache_bps,
        "j_per_gb" => &h.j_per_gb,
        "mean_power_w" => &h.mean_power_w,
        "peak_power_w" => &h.peak_power_w,
        "enclosure_max_c" => &h.enclosure_max_c,
        other => panic!("no figure {other}"),
    }
}

/// What `hostd run` prints at the end: its summary with the analysis' figures and lines.
fn run_terminal(run: &RunData, a: &Analysis) -> String {
    let outcome = hostd_records::RunOutcome {
        status: hostd_records::RunStatus::Completed,
        start_ns: 0,
        end_ns: 0,
        targets: Vec::new(),
        files: run.files.clone(),
        intervals: Vec::new(),
        samples: Vec::new(),
        warnings: Vec::new(),
        cleanup: Vec::new(),
        programs: Vec::new(),
        preparation: Vec::new(),
    };
    let mut summary = Summary::compute("r", &outcome);
    summary.set_figures(a.phases.clone(), None, &[]);
    summary.extra.insert(
        "analysis".into(),
        serde_json::json!({ "text": hostd_report::run_summary_lines(a) }),
    );
    summary.render()
}

/// `text` with the continuation lines of a wrapped line joined to it.
fn logical(text: &str) -> String {
    text.replace(
        &format!("\n{}", hostd_analysis::event_lines::CONTINUATION),
        " ",
    )
}

/// The text of HTML: tags left out, a line break a space, entities read.
fn html_text(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        let j = rest[i..].find('>').map_or(rest.len(), |j| i + j + 1);
        if rest[i..j].starts_with("<br") {
            out.push(' ');
        }
        rest = &rest[j..];
    }
    out.push_str(rest);
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// The text of every `<td data-figure="KEY" …>` cell of the rows of `html` whose first
/// cell is `target`, keyed by KEY.
fn cells(html: &str, target: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for row in html.split("<tr>").skip(1) {
        let row = &row[..row.find("</tr>").unwrap_or(row.len())];
        if !row.starts_with(&format!(r#"<td class="l">{target}</td>"#)) {
            continue;
        }
        for cell in row.split(r#"<td data-figure=""#).skip(1) {
            let key = &cell[..cell.find('"').unwrap()];
            let body = &cell[cell.find('>').unwrap() + 1..cell.find("</td>").unwrap()];
            out.insert(key.to_string(), html_text(body));
        }
    }
    out
}

/// The footnote of a cell `word` marked with a superscript number: the text of the
/// table's line that starts with that number.
fn footnote(table: &str, cell: &str, word: &str) -> String {
    let mark = cell
        .strip_prefix(word)
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| panic!("{cell:?} is not {word:?} with a footnote mark"));
    table
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{mark} ")))
        .unwrap_or_else(|| panic!("no footnote {mark} in\n{table}"))
        .to_string()
}

/// The tooltip of each bar and each empty slot of the SVG element `id` in `html`.
fn chart_titles(html: &str, id: &str) -> Vec<String> {
    let start = html
        .find(&format!(r#"<svg id="{id}""#))
        .unwrap_or_else(|| panic!("no chart {id}"));
    let svg = &html[start..start + html[start..].find("</svg>").unwrap()];
    svg.split("<title>")
        .skip(1)
        .map(|t| html_text(&t[..t.find("</title>").unwrap()]))
        .collect()
}

#[test]
fn every_figure_reads_the_same_in_every_output() {
    let root = tempfile::tempdir().unwrap();
    let runs: Vec<CompareRun> = RUNS.iter().map(|(s, _)| run_of(s, root.path())).collect();
    let plan = compare::plan(&runs);
    let (page, charts) =
        hostd_report::chart_files::collecting(|| compare::render(&runs, &plan, &[], "one value"));
    let csv: BTreeMap<&str, &str> = charts
        .iter()
        .map(|c| (c.id.as_str(), c.csv.as_str()))
        .collect();
    let compare_table = compare::side_by_side::text(&runs, &plan);
    let compare_json = serde_json::to_value(compare::side_by_side::columns(&plan)).unwrap();
    let labels: Vec<String> = plan.runs.iter().map(|r| r.label.clone()).collect();

    for (k, ((r, (scenario, cause)), compared)) in runs.iter().zip(RUNS).zip(&plan.runs).enumerate()
    {
        let a = &r.analysis;
        let probed = r.run.probe_target.as_deref().or(r.subject());
        let report = hostd_report::render_with(&r.run, a, scenario, probed);
        let analyze = logical(&hostd_analysis::event_lines::text(a));
        let run_term = logical(&run_terminal(&r.run, a));
        let json = hostd_records::events::to_json(a);
        let h = &a.headlines.series[0];
        let p = &a.phases[0];
        let (target, phase) = (h.target.as_str(), h.phase.as_str());
        let short = hostd_report::labels::short_labels(&[target.to_string()])[0].clone();
        let section = |id: &str| {
            let start = report.find(&format!(r#"<section id="{id}">"#)).unwrap();
            &report[start..start + report[start..].find("</section>").unwrap()]
        };
        let report_cells = cells(section("headlines"), &short);
        let tag = |what: &str| format!("{scenario} {what}");

        // The first drop, whatever its cause, with that cause.
        assert_eq!(h.drop_cause.map(|c| c.as_str()), Some(cause), "{scenario}");

        // The JSON: the headline's figures as computed, each once: the figures that
        // `phases[]` also holds are the same numbers there.
        let jh = &json["headlines"]["series"][0];
        let jp = &json["phases"][0];
        let value = |k: &str| jh[k]["value"].as_f64();
        assert_eq!(value("average_bps"), jp["throughput_bps"].as_f64());
        assert_eq!(value("j_per_gb"), jp["j_per_gb"].as_f64());
        assert_eq!(value("mean_power_w"), jp["mean_power_w"].as_f64());
        assert_eq!(value("peak_power_w"), jp["port"]["peak_w"].as_f64());
        assert_eq!(jh["drop_cause"], cause);

        for (key, kind) in FIGURES {
            let f = figure(h, key);
            let want = f.text(kind);
            // JSON: the same figure, written through its kind.
            let from_json: Figure = serde_json::from_value(jh[key].clone()).unwrap();
            assert_eq!(from_json.text(kind), want, "{}", tag(key));
            // report.html: its cell.
            assert_eq!(
                report_cells.get(key),
                Some(&want),
                "{}: report cell",
                tag(key)
            );
            // The comparison page: its bar's (or empty slot's) tooltip.
            let id = compare::bars_id(phase, key);
            let titles = chart_titles(&page, &id);
            let label = &compared.label;
            let drop_cause = matches!(key, "drop_bytes" | "drop_s" | "after_drop_bps")
                .then(|| format!(" ({cause})"))
                .unwrap_or_default();
            let title = match f {
                Figure::Value { .. } => {
                    let m = compare::figures::METRICS
                        .iter()
                        .find(|m| m.key == key)
                        .unwrap();
                    format!("{label}: {} {want}{drop_cause}", m.title)
                }
                Figure::Absent { absent } => absent.clone(),
            };
            assert!(
                titles.contains(&title),
                "{}: comparison chart {id}: {title:?} not in {titles:#?}",
                tag(key)
            );
            // The chart's CSV: its bar's numbers, or "none" and the reason.
            let rows: Vec<Vec<String>> = csv::Reader::from_reader(csv[id.as_str()].as_bytes())
                .records()
                .map(|r| r.unwrap().iter().map(str::to_string).collect())
                .filter(|r: &Vec<String>| &r[0] == label)
                .collect();
            assert_eq!(rows.len(), 1, "{}: {rows:?}", tag(key));
            let row = &rows[0];
            match f {
                Figure::Value { value, low, high } => {
                    let header = csv[id.as_str()].lines().next().unwrap();
                    let u = kind.unit(*value);
                    assert!(header.contains(&format!("y ({})", u.name)), "{header}");
                    assert_eq!(row[1], "bar");
                    assert_eq!(
                        format!("{} {} [{}–{}]", row[4], u.name, row[5], row[6]),
                        want,
                        "{}: CSV",
                        tag(key)
                    );
                    assert_eq!(
                        (u.num(*low), u.num(*high)),
                        (row[5].clone(), row[6].clone())
                    );
                }
                Figure::Absent { absent } => {
                    assert_eq!((row[1].as_str(), &row[7]), ("none", absent), "{}", tag(key))
                }
            }
            // `hostd compare`: its column's cell in the figure's row, or "none" with a
            // footnote that gives the reason; its `--json`: the figure itself.
            let title = compare::figures::METRICS
                .iter()
                .find(|m| m.key == key)
                .unwrap()
                .title;
            let cell = &row_cells(&compare_table, &labels, title)[k];
            match f {
                Figure::Value { .. } => assert_eq!(cell, &want, "{}: compare", tag(key)),
                Figure::Absent { absent } => {
                    assert_eq!(
                        footnote(&compare_table, cell, "none"),
                        *absent,
                        "{}",
                        tag(key)
                    )
                }
            }
            let column = &compare_json[0]["runs"][k];
            assert_eq!(column["label"], compared.label.as_str());
            let from_json: Figure = serde_json::from_value(column["figures"][key].clone()).unwrap();
            assert_eq!(&from_json, f, "{}: compare --json", tag(key));
        }
        assert_eq!(
            row_cells(&compare_table, &labels, "cause of the first drop")[k],
            format!("{cause} (confidence {:.2})", h.drop_confidence.unwrap()),
            "{scenario}"
        );
        assert_eq!(
            compare_json[0]["runs"][k]["drop_cause"],
            serde_json::json!({"cause": cause, "confidence": h.drop_confidence.unwrap()})
        );

        // The terminals: `hostd analyze` and `hostd run` print the same headline lines,
        // each figure under its label.
        let fig = |key: &str| {
            let (_, kind) = FIGURES.iter().find(|f| f.0 == key).unwrap();
            figure(h, key).text(*kind)
        };
        let mut labelled = vec![
            format!(
                "{target} {phase} headline: average {}, sustained (median of the last third) {}",
                fig("average_bps"),
                fig("sustained_bps")
            ),
            format!(
                "{target} {phase}: writes fall after {} ({}) to {}: {cause} (confidence {:.2})",
                fig("drop_bytes"),
                fig("drop_s"),
                fig("after_drop_bps"),
                h.drop_confidence.unwrap()
            ),
            format!(
                "{target} {phase} energy {}, bus power mean {}, peak {} (highest 1 s mean), enclosure max {} (1 s mean)",
                fig("j_per_gb"),
                fig("mean_power_w"),
                fig("peak_power_w"),
                fig("enclosure_max_c")
            ),
        ];
        if h.slc_cache_bytes.get().is_some() {
            labelled.push(format!(
                "; SLC cache {}, then {}",
                fig("slc_cache_bytes"),
                fig("post_cache_bps")
            ));
        }
        for (name, text) in [("hostd analyze", &analyze), ("hostd run", &run_term)] {
            for want in &labelled {
                assert!(
                    text.contains(want.as_str()),
                    "{scenario} {name}: {want:?} not in\n{text}"
                );
            }
        }
        // Under each event, the signs that decided its cause and no other rule: the full
        // list is the JSON's (and the report's fold).
        let indent = hostd_analysis::event_lines::SIGN_INDENT;
        for e in &a.events {
            let ev = &e.evidence;
            assert!((1..=4).contains(&ev.deciding.len()), "{scenario}: {ev:#?}");
            for (name, text) in [("hostd analyze", &analyze), ("hostd run", &run_term)] {
                for d in &ev.deciding {
                    assert!(
                        text.contains(&format!("\n{indent}{d}\n")),
                        "{scenario} {name}: {d:?} not in\n{text}"
                    );
                }
                for r in ev.reasons.iter().filter(|r| !ev.deciding.contains(r)) {
                    assert!(
                        !text.contains(&format!("{indent}{r}")),
                        "{scenario} {name}: {r:?} is not a deciding sign"
                    );
                }
            }
        }
        // The per-phase lines lead with the average, the headline's: `hostd analyze`'s …
        let avg = Kind::Rate.text(p.throughput_bps);
        assert!(
            analyze.contains(&format!(
                " — average {avg}, mean of files {}",
                Kind::Rate.text(p.mean_bps)
            )),
            "{scenario}: {analyze}"
        );
        // … and `hostd run`'s table: its row's first rate is the average.
        let row = run_term
            .lines()
            .find(|l| l.starts_with(&format!("{target} ")) && l.contains(" GB/s"))
            .unwrap();
        let words: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            [words[3], words[4]].join(" "),
            Kind::Data.text(p.bytes as f64),
            "{row}"
        );
        assert_eq!([words[5], words[6]].join(" "), avg, "{row}");
        assert_eq!(fig("average_bps").split(" [").next(), Some(avg.as_str()));
        // Two levels in time split by the drop are no bimodality warning.
        assert!(
            !p.bimodal || p.levels_explained_by.is_some(),
            "{scenario}: {p:?}"
        );
        if scenario == "x5-thermal" {
            // Its rates are the gap test's two groups, before and after the throttle.
            assert!(p.bimodal, "{scenario}: {p:?}");
        }
        assert!(!run_term.contains("bimodal"), "{scenario}: {run_term}");
        assert!(!analyze.contains("BIMODAL"), "{scenario}: {analyze}");
        // report.html's statistics table: the same average and J/GB.
        let stats = cells(section("statistics"), &short);
        for (key, v, unit) in [
            (
                "average_bps",
                avg.clone(),
                Kind::Rate.unit(p.throughput_bps).name,
            ),
            ("j_per_gb", Kind::JPerGb.text(p.j_per_gb.unwrap()), "J/GB"),
        ] {
            // A cell in its column's unit (named in the header) or naming its own.
            let cell = &stats[key];
            let read = if cell.contains(' ') {
                cell.clone()
            } else {
                format!("{cell} {unit}")
            };
            assert_eq!(read, v, "{scenario} statistics {key}");
        }
    }
}
