//! What `hostd run` prints when the run is over: what was measured, the
//! summary (statistics, events, probe), notes and warnings, and where the
//! report and the results are. Short enough for one screen on a `quick` run.

use hostd_records::profile::Profile;
use hostd_records::Summary;
use hostd_records::TargetInfo;
use hostd_store::SummaryExt;
use std::fmt::Write as _;
use std::path::Path;

/// What was measured, in two lines: "measured: profile quick: demo: 12 files …"
/// and "on: target = /mnt/x/target (rw, direct I/O, io_uring)"; `short` are
/// the targets' short labels.
pub fn measured_lines(profile: &Profile, targets: &[TargetInfo], short: &[String]) -> [String; 2] {
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
    [
        format!(
            "measured: profile {}: {}",
            profile.name, profile.description
        ),
        format!("on: {}", on.join("; ")),
    ]
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
    for line in measured_lines(profile, targets, &short) {
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
