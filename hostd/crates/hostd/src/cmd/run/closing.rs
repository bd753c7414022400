//! What `hostd run` prints when the run is over: what was measured, the
//! summary (statistics, events, probe), notes and warnings, and where the
//! report and the results are. Short enough for one screen on a `quick` run.

use hostd_records::events::PhaseStats;
use hostd_records::profile::Profile;
use hostd_records::published::Kind;
use hostd_records::Summary;
use hostd_records::TargetInfo;
use hostd_store::SummaryExt;
use std::fmt::Write as _;
use std::path::Path;

/// What was measured, in two lines: "measured: profile quick: demo: 12 files …"
/// and "on: target = /mnt/x/target (rw, direct I/O, io_uring)"; `short` are
/// the targets' short labels. The profile's description says what it does with a target
/// in mode `rw`; where a target's mode runs only part of it (`:write`, `:read`), the first
/// line says instead what each target did: its measured phases from `phases`.
pub fn measured_lines(
    profile: &Profile,
    targets: &[TargetInfo],
    short: &[String],
    phases: &[PhaseStats],
) -> [String; 2] {
    let on: Vec<String> = targets
        .iter()
        .zip(short)
        .map(|(t, short)| {
            let io = if t.scheme == "sim" {
                "simulated".to_string()
            } else if t.direct_io.is_direct() {
                format!("direct I/O, {}", t.engine)
            } else {
                format!("NOT direct I/O, {}", t.engine)
            };
            let name = if *short == t.label {
                t.label.clone()
            } else {
                format!("{short} = {}", t.label)
            };
            format!("{name} ({}, {io})", t.mode)
        })
        .collect();
    let whole = targets.iter().all(|t| t.mode == "rw");
    let measured = if whole {
        format!(
            "measured: profile {}: {}",
            profile.name, profile.description
        )
    } else {
        let did: Vec<String> = targets
            .iter()
            .zip(short)
            .map(|(t, short)| {
                let done: Vec<String> = phases
                    .iter()
                    .filter(|p| p.target == t.label && p.phase != "prepare")
                    .map(|p| {
                        format!(
                            "{} {} in {} files",
                            p.phase,
                            Kind::Data.text(p.bytes as f64),
                            p.files
                        )
                    })
                    .collect();
                let done = if done.is_empty() {
                    "nothing measured".to_string()
                } else {
                    done.join(", ")
                };
                format!("{short} (:{}): {done}", t.mode)
            })
            .collect();
        format!(
            "measured: profile {}, as each target's mode runs it: {}",
            profile.name,
            did.join("; ")
        )
    };
    [measured, format!("on: {}", on.join("; "))]
}

/// `text` with every full target label replaced by its short one (longest
/// first, so no label is replaced inside another).
fn shorten(text: &str, full: &[String], short: &[String]) -> String {
    let mut pairs: Vec<(&String, &String)> =
        full.iter().zip(short).filter(|(f, s)| f != s).collect();
    pairs.sort_by_key(|(f, _)| std::cmp::Reverse(f.len()));
    pairs
        .iter()
        .fold(text.to_string(), |t, (f, s)| t.replace(f.as_str(), s))
}

/// The closing text. Targets are called by their short labels after the
/// "on:" line, which gives each full path once.
pub fn closing(
    profile: &Profile,
    targets: &[TargetInfo],
    summary: &Summary,
    cleanup: &[String],
    out_dir: &Path,
) -> String {
    let full: Vec<String> = targets.iter().map(|t| t.label.clone()).collect();
    let short = hostd_store::labels::short_labels(&full);
    let mut s = String::new();
    // The table and the all-active window with short labels (a long path
    // would be cut to its last 24 characters there).
    let mut shown = summary.clone();
    let short_of = |label: &str| {
        full.iter()
            .position(|f| f == label)
            .map_or(label.to_string(), |i| short[i].clone())
    };
    for p in &mut shown.phases {
        p.target = short_of(&p.target);
    }
    if let Some(w) = &mut shown.window {
        for t in &mut w.targets {
            t.target = short_of(&t.target);
        }
    }
    // "run ID: completed" first, then what was measured, then the rest.
    let body = shown.render();
    let (first, rest) = body.split_once('\n').unwrap_or((&body, ""));
    let _ = writeln!(s, "{first}");
    for line in measured_lines(profile, targets, &short, &summary.phases) {
        let _ = writeln!(s, "{line}");
    }
    for line in summary.conditions.lines() {
        let _ = writeln!(s, "{line}");
    }
    s.push_str(&shorten(rest, &full, &short));
    // Cleanup names the directories it removed: in full.
    for line in cleanup.iter().filter(|l| !l.is_empty()) {
        let _ = writeln!(s, "{line}");
    }
    let report = out_dir.join("report.html");
    if report.is_file() {
        let _ = writeln!(s, "report: {}", report.display());
    }
    let _ = writeln!(s, "results: {}", out_dir.display());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `:write` target of a profile that also reads back: the first line says what the
    /// target did, not the profile's read-back.
    #[test]
    fn a_target_that_runs_part_of_the_profile_says_what_it_did() {
        let profile: Profile = toml::from_str(
            r#"
name = "sustained-100GB"
description = "random 2 MB-2 GB files until 100 GB written, then read back and verify"
kind = "files"
[files]
total = "100GB"
min_size = "2MB"
max_size = "2GB"
[io]
block_size = "1MiB"
queue_depth = 4
phases = ["write", "read"]
"#,
        )
        .unwrap();
        let mut target = TargetInfo::simulated("sim:x5-thermal*5", "write", "x5");
        let phase: PhaseStats = serde_json::from_value(serde_json::json!({
            "target": "sim:x5-thermal*5", "phase": "write", "files": 98,
            "bytes": 100_000_000_000u64, "seconds": 129.7, "start_ns": 0, "end_ns": 1,
            "throughput_bps": 7.7e8, "mean_bps": 1.1e9, "median_bps": 6.5e8,
            "min_bps": 6e8, "max_bps": 2.4e9, "trimmed_mean_bps": 9e8, "bimodal": false,
        }))
        .unwrap();
        let short = ["sim:x5-thermal*5".to_string()];
        let [line, on] = measured_lines(
            &profile,
            std::slice::from_ref(&target),
            &short,
            std::slice::from_ref(&phase),
        );
        assert_eq!(
            line,
            "measured: profile sustained-100GB, as each target's mode runs it: sim:x5-thermal*5 (:write): write 100.0 GB in 98 files"
        );
        assert!(!line.contains("read back"), "{line}");
        assert_eq!(on, "on: sim:x5-thermal*5 (write, simulated)");
        target.mode = "rw".into();
        let [line, _] = measured_lines(&profile, &[target], &short, &[phase]);
        assert!(
            line.ends_with("until 100 GB written, then read back and verify"),
            "{line}"
        );
    }

    #[test]
    fn full_labels_become_short_ones_longest_first() {
        let full = ["/mnt/a/x".to_string(), "/mnt/a/x2".to_string()];
        let short = hostd_store::labels::short_labels(&full);
        assert_eq!(short, ["x", "x2"]);
        assert_eq!(
            shorten("/mnt/a/x2 write and /mnt/a/x read", &full, &short),
            "x2 write and x read"
        );
    }
}
