//! `hostd run --note … --tag KEY=VALUE …`: the notes and tags in every output (manifest,
//! summary, the printed summary, the report, InfluxDB tags on every point of the run), the
//! tags `hostd run` refuses before writing anything, and `hostd compare --group-by KEY`.

use hostd_influx::testing::InfluxServer;

mod common;
use common::{assert_ok, disk_target, hostd, hostd_run, read_json, small_profile, text, to_influx};

#[test]
fn notes_and_tags_are_in_the_manifest_summary_report_and_on_every_influxdb_point() {
    let server = InfluxServer::start().expect("private influxd (run `just influx-build` first)");
    let (work, target, run) = disk_target();
    let mut cmd = hostd_run(small_profile(work.path(), 3, "2MB"), [&target], &run);
    cmd.args(["--note", "fan on the left", "--note", "room 24 °C"])
        .args(["--tag", "enclosure=Orico L", "--tag", "cable=TB4-0.8m"]);
    let out = to_influx(&mut cmd, &server).output().unwrap();
    assert_ok(&out);
    let printed = text(&out);
    assert!(
        printed.contains("tags: cable=TB4-0.8m enclosure=Orico L")
            && printed.contains("note: fan on the left"),
        "{printed}"
    );
    for file in ["manifest.json", "summary.json"] {
        let c = &read_json(&run.join(file))["conditions"];
        assert_eq!(c["tags"]["enclosure"], "Orico L", "{file}: {c}");
        assert_eq!(c["tags"]["cable"], "TB4-0.8m", "{file}: {c}");
        assert_eq!(c["notes"][1], "room 24 °C", "{file}: {c}");
    }
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        html.contains(r#"<td class="l">enclosure</td><td class="l">Orico L</td>"#)
            && html.contains("<li>room 24 °C</li>"),
        "no conditions section in the report"
    );

    // Every measurement the run wrote carries the tags: no point of the run lacks them.
    let measurements = server.rows("SHOW MEASUREMENTS").unwrap();
    assert!(measurements.len() >= 4, "{measurements:?}");
    for m in measurements {
        let m = m[0].as_str().unwrap();
        let all = server
            .rows(&format!("SELECT count(*) FROM \"{m}\""))
            .unwrap();
        let tagged = server
            .rows(&format!(
                "SELECT count(*) FROM \"{m}\" WHERE \"enclosure\" = 'Orico L' AND \"cable\" = 'TB4-0.8m'"
            ))
            .unwrap();
        assert!(!all.is_empty(), "{m}: no points");
        assert_eq!(all, tagged, "{m}: points without the tags");
    }
    assert_eq!(
        server.count("file", "mbps").unwrap(),
        6,
        "3 written, 3 read"
    );
    let notes = server.rows("SELECT \"notes\" FROM \"run\"").unwrap();
    assert_eq!(notes[0][1], "fan on the left | room 24 °C");
    let values = server
        .rows("SHOW TAG VALUES FROM \"file\" WITH KEY = \"enclosure\"")
        .unwrap();
    assert_eq!(values[0][1], "Orico L");
}

#[test]
fn a_tag_influxdb_cannot_take_is_refused_before_anything_is_written() {
    let (work, target, run) = disk_target();
    for (tag, why) in [
        ("_field=x", "InfluxDB reserves keys that begin with `_`"),
        ("target=mine", "one of hostd's own tags"),
        ("my enclosure=x", "only letters, digits"),
        ("enclosure=", "the value is empty"),
        ("enclosure", "KEY=VALUE"),
    ] {
        let out = hostd_run(small_profile(work.path(), 1, "1MB"), [&target], &run)
            .args(["--tag", tag])
            .output()
            .unwrap();
        let err = text(&out);
        assert_eq!(out.status.code(), Some(2), "{tag}: {err}");
        assert!(err.contains(why) && err.contains(tag), "{tag}: {err}");
        assert!(!run.exists(), "{tag}: a run directory was created");
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "{tag}");
    }
}

#[test]
fn compare_heads_runs_by_a_tag_in_the_order_given() {
    let (work, target, _) = disk_target();
    let profile = small_profile(work.path(), 2, "1MB");
    let mut runs = Vec::new();
    for (name, enclosure) in [
        ("a", "Sabrent"),
        ("b", "Orico"),
        ("c", "Sabrent"),
        ("d", ""),
    ] {
        let run = work.path().join(name);
        let mut cmd = hostd_run(&profile, [&target], &run);
        if !enclosure.is_empty() {
            cmd.args(["--tag", &format!("enclosure={enclosure}")]);
        }
        assert_ok(&cmd.output().unwrap());
        runs.push(run.to_str().unwrap().to_string());
    }
    let mut args = vec![
        "compare".to_string(),
        "--group-by".into(),
        "enclosure".into(),
    ];
    args.extend(runs.iter().cloned());
    let out = hostd().args(&args).output().unwrap();
    assert_ok(&out);
    let header = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    // In the order given, each headed by its tag's value (two of one value by their
    // directories' names).
    let at = |s: &str| {
        header
            .find(s)
            .unwrap_or_else(|| panic!("{s} not in {header}"))
    };
    let order = [
        at("enclosure=Sabrent (a)"),
        at("enclosure=Orico"),
        at("enclosure=Sabrent (c)"),
        at("enclosure=(none)"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{header}");

    args.push("--json".into());
    let out = hostd().args(&args).output().unwrap();
    assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let groups: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["group"].as_str().unwrap())
        .collect();
    assert_eq!(groups, ["Sabrent", "Orico", "Sabrent", "(none)"]);
    assert_eq!(v["runs"][1]["tags"]["enclosure"], "Orico");
    assert_eq!(v["runs"][1]["label"], "enclosure=Orico");

    let out = hostd()
        .args(["compare", "--group-by", "cable", &runs[0], &runs[1]])
        .output()
        .unwrap();
    assert!(
        !out.status.success() && text(&out).contains("none of the 2 runs has a tag cable"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_fill_level_of_100_percent_and_a_rest_window_beyond_its_timeout_are_refused_before_anything_is_written(
) {
    let (work, target, run) = disk_target();
    let full = work.path().join("full.toml");
    std::fs::write(
        &full,
        "name = \"full\"\nkind = \"fill-states\"\n[fill_states]\nlevels = [0, 50, 100]\nwrite = \"64MiB\"\nfile_size = \"8MiB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\"]\n",
    )
    .unwrap();
    let out = hostd_run(&full, [&target], &run).output().unwrap();
    let err = text(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("[fill_states] levels: 100 % is 100 % or more"),
        "{err}"
    );
    let out = hostd_run(small_profile(work.path(), 1, "1MB"), [&target], &run)
        .args(["--rest", "idle:9:5"])
        .output()
        .unwrap();
    let err = text(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--rest idle:9:5") && err.contains("at most the timeout"),
        "{err}"
    );
    assert!(!run.exists(), "a run directory was created");
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}
