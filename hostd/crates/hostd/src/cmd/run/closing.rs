//! What `hostd run` prints when the run is over: what was measured, the
//! summary (statistics, events, probe), notes and warnings, and where the
//! report and the results are. Short enough for one screen on a `quick` run.

use hostd_store::Summary;
use hostd_workload::events::TargetInfo;
use hostd_workload::Profile;
use std::fmt::Write as _;
use std::path::Path;

/// "measured: profile quick (demo: 12 files …) on /mnt/x (write+read, direct I/O, io_uring)".
pub fn measured_line(profile: &Profile, targets: &[TargetInfo]) -> String {
    let on: Vec<String> = targets
        .iter()
        .map(|t| {
            let io = if t.scheme == "sim" {
                "simulated".to_string()
            } else if t.direct_io.is_direct() {
                format!("direct I/O, {}", t.engine)
            } else {
                format!("NOT direct I/O, {}", t.engine)
            };
            format!("{} ({}, {io})", t.label, t.mode)
        })
        .collect();
    format!(
        "measured: profile {} ({}) on {}",
        profile.name,
        profile.description,
        on.join(", ")
    )
}

/// The closing text.
pub fn closing(
    profile: &Profile,
    targets: &[TargetInfo],
    summary: &Summary,
    cleanup: &[String],
    out_dir: &Path,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", measured_line(profile, targets));
    s.push_str(&summary.render());
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
