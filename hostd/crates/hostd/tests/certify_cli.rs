//! `kind = "certify"` and `--resume` refusing bad input (issue #12 "Bad input"): a
//! clear error naming the file, key and value, exit 2, and nothing written — no run
//! directory, no test directory, no journal line. Runs on a directory of this
//! machine's disk (direct I/O), no root needed.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn hostd(args: &[&str]) -> (Output, String) {
    let out = common::hostd().args(args).output().unwrap();
    let text = common::text(&out);
    (out, text)
}

/// Sets `key` of `run`'s manifest.json to `value` (as another hostd, or a user, might
/// have left it); returns the manifest's path.
fn edit_manifest(run: &Path, key: &str, value: Value) -> PathBuf {
    let path = run.join("manifest.json");
    let mut m: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    m[key] = value;
    std::fs::write(&path, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    path
}

const BODY: &str = "name = \"c\"\nkind = \"certify\"\n[certify]\npasses = 1\nfraction = 0.0001\nfile_size = \"1MiB\"\n[io]\nblock_size = \"256KiB\"\nqueue_depth = 2\nphases = [\"write\", \"read\"]\n";

/// Everything in `dir`, recursively, as relative paths.
/// Writes `dir/name`: [`BODY`] sized for a simulated target (1 GiB files, 0.1 % of them
/// verified) with the `[gates]` lines `gates`.
fn sim_profile(dir: &Path, name: &str, gates: &str) -> PathBuf {
    let profile = dir.join(name);
    let body = BODY.replace("0.0001", "0.001").replace("1MiB", "1GiB");
    std::fs::write(&profile, format!("{body}[gates]\n{gates}")).unwrap();
    profile
}

/// `hostd run -q EXTRA… --profile PROFILE --target TARGET --out RUN`.
fn run_profile(profile: &Path, target: &Path, run: &Path, extra: &[&str]) -> (Output, String) {
    let mut args = vec!["run", "-q"];
    args.extend_from_slice(extra);
    args.extend([
        "--profile",
        profile.to_str().unwrap(),
        "--target",
        target.to_str().unwrap(),
        "--out",
        run.to_str().unwrap(),
    ]);
    hostd(&args)
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        out.push(p.strip_prefix(dir).unwrap().to_path_buf());
        if p.is_dir() {
            out.extend(
                listing(&p)
                    .into_iter()
                    .map(|q| p.strip_prefix(dir).unwrap().join(q)),
            );
        }
    }
    out.sort();
    out
}

/// Runs a certify profile with `gates` appended; asserts exit 2, the message
/// holds every one of `expect`, and nothing was written.
fn refused(gates: &str, expect: &[&str]) {
    let dir = common::disk_tempdir();
    let profile = dir.path().join("bad.toml");
    std::fs::write(&profile, format!("{BODY}{gates}")).unwrap();
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let before = listing(dir.path());
    let (out, text) = run_profile(&profile, &target, &dir.path().join("run"), &[]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    for e in expect {
        assert!(text.contains(e), "`{e}` missing from: {text}");
    }
    assert!(
        text.contains(profile.to_str().unwrap()),
        "names the file: {text}"
    );
    assert_eq!(listing(dir.path()), before, "something was written");
}

#[test]
fn certify_without_gates_is_refused() {
    refused("", &["needs a [gates] section", "max_corrupt_bytes"]);
}

#[test]
fn a_gate_naming_an_unknown_metric_is_refused() {
    refused("[gates]\nmax_iops_wobble = 3\n", &["max_iops_wobble"]);
}

#[test]
fn an_unparsable_duration_is_refused() {
    refused(
        "[gates]\nmax_p999_latency = \"soon\"\n",
        &["max_p999_latency = \"soon\"", "not a duration"],
    );
}

/// A finished, kept certify run in `dir/run`.
fn finished_run(dir: &Path) -> (PathBuf, PathBuf) {
    let profile = dir.join("ok.toml");
    std::fs::write(&profile, format!("{BODY}[gates]\nmax_corrupt_bytes = 0\n")).unwrap();
    let target = dir.join("target");
    std::fs::create_dir(&target).unwrap();
    let run = dir.join("run");
    let (out, text) = run_profile(&profile, &target, &run, &["--keep"]);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("certify: PASS"), "{text}");
    (run, target)
}

#[test]
fn resume_of_a_run_from_another_hostd_version_is_refused() {
    let dir = common::disk_tempdir();
    let (run, _) = finished_run(dir.path());
    let path = edit_manifest(&run, "hostd_version", "0.0.1-elsewhere".into());
    let before = listing(dir.path());
    let journal = std::fs::read(run.join("certify.jsonl")).unwrap();
    let (out, text) = hostd(&["run", "-q", "--resume", run.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    for e in [path.to_str().unwrap(), "hostd_version", "0.0.1-elsewhere"] {
        assert!(text.contains(e), "`{e}` missing from: {text}");
    }
    assert_eq!(listing(dir.path()), before, "something was written");
    assert_eq!(std::fs::read(run.join("certify.jsonl")).unwrap(), journal);
}

#[test]
fn resume_on_another_target_is_refused() {
    let dir = common::disk_tempdir();
    let (run, _) = finished_run(dir.path());
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let before = listing(dir.path());
    let (out, text) = hostd(&[
        "run",
        "-q",
        "--resume",
        run.to_str().unwrap(),
        "--target",
        other.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    for e in [
        "manifest.json",
        "key targets",
        "another target",
        other.to_str().unwrap(),
    ] {
        assert!(text.contains(e), "`{e}` missing from: {text}");
    }
    assert_eq!(listing(dir.path()), before, "something was written");
}

#[test]
fn resume_of_a_run_that_is_not_certify_is_refused() {
    let dir = common::disk_tempdir();
    let run = dir.path().join("run");
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let (out, text) = run_profile(Path::new("quick"), &target, &run, &[]);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let before = listing(dir.path());
    let (out, text) = hostd(&["run", "-q", "--resume", run.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("only certify runs can be resumed"), "{text}");
    assert_eq!(listing(dir.path()), before);
}

#[test]
fn verify_of_a_run_that_kept_nothing_is_refused() {
    let dir = common::disk_tempdir();
    let (run, _) = finished_run(dir.path());
    edit_manifest(&run, "keep", false.into());
    let (out, text) = hostd(&["verify", run.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("key keep = false"), "{text}");
    assert!(!listing(&run)
        .iter()
        .any(|p| p.to_string_lossy().starts_with("verify-")));
}

#[test]
fn a_clean_kept_run_verifies_clean() {
    let dir = common::disk_tempdir();
    let (run, _) = finished_run(dir.path());
    let (out, text) = hostd(&["verify", run.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("0 corrupt bytes") && text.contains("result: clean"),
        "{text}"
    );
}

#[test]
fn certify_on_a_simulated_target_cannot_pass_a_corruption_gate() {
    // A simulated target moves no data: its reads verify nothing, so "zero corrupt
    // bytes" is not evaluated and the run fails rather than claim it.
    let dir = common::disk_tempdir();
    let profile = sim_profile(
        dir.path(),
        "sim.toml",
        "max_corrupt_bytes = 0\nmin_write_mbps = 100.0\n",
    );
    let run = dir.path().join("run");
    let (out, text) = run_profile(&profile, Path::new("sim:steady*20"), &run, &[]);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("certify: FAIL"), "{text}");
    assert!(text.contains("no block was verified"), "{text}");
    let v = common::read_json(&run.join("certify.json"));
    assert_eq!(v["gates"][0]["status"], "not_evaluated");
    assert_eq!(v["gates"][1]["status"], "pass", "{v}");
}

#[test]
fn the_temperature_gate_is_judged_by_the_probes_highest_enclosure_reading() {
    let dir = common::disk_tempdir();
    let profile = sim_profile(dir.path(), "hot.toml", "max_temperature_c = 30.0\n");
    let run = dir.path().join("run");
    common::sim_path(); // built, or a panic that says how
    let target = Path::new("sim:x5-gradual*20");
    let (out, text) = run_profile(&profile, target, &run, &["--probe", "sim"]);
    assert_eq!(out.status.code(), Some(3), "{text}");
    let summary = common::read_json(&run.join("summary.json"));
    let hottest = summary["extra"]["probe"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["temp_max_c"].as_f64())
        .fold(f64::MIN, f64::max);
    assert!(
        hottest > 30.0,
        "the simulated X5 heats past 30 °C: {hottest}"
    );
    let v = common::read_json(&run.join("certify.json"));
    let gate = &v["gates"][0];
    assert_eq!(gate["status"], "fail", "{v}");
    assert_eq!(gate["measured"], format!("{hottest:.1} °C"), "{v}");
    assert!(gate["detail"]
        .as_str()
        .unwrap()
        .contains("enclosure (probe)"));
}

#[test]
fn resume_of_a_completed_run_is_refused() {
    let dir = common::disk_tempdir();
    let (run, _) = finished_run(dir.path());
    let before = listing(dir.path());
    let (out, text) = hostd(&["run", "-q", "--resume", run.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("steps are done already"), "{text}");
    assert_eq!(listing(dir.path()), before, "something was written");
}

/// `--resume` takes the profile the manifest recorded: a run with steps left resumes with
/// it, and the new session's manifest records the same profile, and the run's notes and
/// tags with this session's added.
#[test]
fn resume_of_an_unfinished_run_finishes_it_with_the_recorded_profile() {
    let dir = common::disk_tempdir();
    let (run, _) = finished_run(dir.path());
    let journal = std::fs::read_to_string(run.join("certify.jsonl")).unwrap();
    let steps = journal.lines().count();
    let first_half: String = journal
        .lines()
        .take(steps / 2)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(run.join("certify.jsonl"), first_half).unwrap();
    // The run's notes and tags, as `--note` and `--tag` record them.
    edit_manifest(
        &run,
        "conditions",
        serde_json::json!({"notes": ["fan on"], "tags": {"enclosure": "Orico-L"}}),
    );
    // A session cannot change a tag every point of the run carries.
    let before = listing(dir.path());
    let r = run.to_str().unwrap();
    let (out, text) = hostd(&["run", "-q", "--resume", r, "--tag", "enclosure=Sabrent"]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("enclosure=Orico-L"), "{text}");
    assert_eq!(listing(dir.path()), before, "something was written");
    let (out, text) = hostd(&["run", "-q", "--resume", r, "--note", "after the power cut"]);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(&format!("certify: PASS ({steps} of {steps} steps"))
            && text.contains("2 sessions"),
        "{text}"
    );
    let session = hostd_records::manifest::read(&run.join("resume-1")).unwrap();
    assert_eq!(session.conditions.notes, ["fan on", "after the power cut"]);
    assert_eq!(session.conditions.tags["enclosure"], "Orico-L");
    let recorded = hostd_records::manifest::read(&run).unwrap().profile;
    let resumed = hostd_records::manifest::read(&run.join("resume-1"))
        .unwrap()
        .profile;
    assert_eq!(resumed, recorded);
    assert!(
        matches!(&recorded, Some(hostd_records::RecordedProfile::Known(p)) if p.name == "c"),
        "{recorded:?}"
    );
}

/// A manifest whose `profile` is missing, has a key this hostd does not know, or holds a
/// value out of range: `--resume` refuses it naming the file and the key, writing nothing.
#[test]
fn resume_with_a_recorded_profile_it_cannot_use_is_refused() {
    let dir = common::disk_tempdir();
    let (run, _) = finished_run(dir.path());
    let profile = common::read_json(&run.join("manifest.json"))["profile"].clone();
    let with = |section: &str, key: &str, value: Value| {
        let mut p = profile.clone();
        p[section][key] = value;
        p
    };
    for (recorded, expect) in [
        (Value::Null, "key profile is null"),
        (
            with("io", "wobble", 3.into()),
            "key profile: unknown field `wobble`",
        ),
        (
            with("certify", "passes", 0.into()),
            "key profile is invalid: [certify] passes = 0",
        ),
    ] {
        let path = edit_manifest(&run, "profile", recorded);
        let before = listing(dir.path());
        let (out, text) = hostd(&["run", "-q", "--resume", run.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{text}");
        for e in [path.to_str().unwrap(), expect] {
            assert!(text.contains(e), "`{e}` missing from: {text}");
        }
        assert_eq!(listing(dir.path()), before, "something was written");
    }
}

/// The p99.9 latency gate reads the slowest phase's `latency.p99_9_ns` from the run's own
/// timing of every I/O: a limit below it fails with that value, a generous one passes.
#[test]
fn the_latency_gate_is_judged_by_the_slowest_phases_p99_9() {
    let dir = common::disk_tempdir();
    for (limit, code) in [("1ns", 3), ("60s", 0)] {
        let profile = dir.path().join(format!("lat-{limit}.toml"));
        std::fs::write(
            &profile,
            format!("{BODY}[gates]\nmax_corrupt_bytes = 0\nmax_p999_latency = \"{limit}\"\n"),
        )
        .unwrap();
        let target = dir.path().join(format!("target-{limit}"));
        std::fs::create_dir(&target).unwrap();
        let run = dir.path().join(format!("run-{limit}"));
        let (out, text) = run_profile(&profile, &target, &run, &[]);
        assert_eq!(out.status.code(), Some(code), "{text}");
        let summary = common::read_json(&run.join("summary.json"));
        let slowest = summary["phases"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["latency"]["p99_9_ns"].as_u64())
            .max()
            .expect("every phase of a real target is timed");
        let v = common::read_json(&run.join("certify.json"));
        let gate = v["gates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["gate"] == "max_p999_latency")
            .expect("the latency gate is judged")
            .clone();
        assert_eq!(
            gate["status"],
            if code == 0 { "pass" } else { "fail" },
            "{v}"
        );
        assert_eq!(
            gate["measured"],
            format!("{:.3} ms", slowest as f64 / 1e6),
            "{v}"
        );
    }
}
