//! The drive's own thermal record as evidence, end to end: the thermal scenario generated
//! to a run directory with a probe, a `drive_log.csv` beside it built from recorded
//! `smartctl --json` answers (fixtures/smartctl), and the run analysed offline as
//! `hostd analyze` does. A drive that logged throttle transitions around the drop raises
//! the thermal call's confidence; one whose counters stood still lowers it.

use hostd_analysis::{analyze_run_dir, Options};
use hostd_drive::smart::parse::thermal_log_of;
use hostd_records::cause::Cause;
use hostd_records::drive_log::{self, DriveLogRecord};
use hostd_records::events::{Analysis, Event};
use hostd_scenario::{load, simulate, write::write_run, write::ProbeOptions};
use std::path::Path;

/// The thermal record in a fixture answer, at `time_ns` for `target`.
fn reading(file: &str, target: &str, time_ns: i64) -> DriveLogRecord {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/smartctl")
        .join(file);
    let json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut r = thermal_log_of(&json).unwrap().record;
    r.time_ns = time_ns;
    r.target = target.to_string();
    r
}

/// The x5-thermal scenario's run directory, analysed with `log` (before, after: fixture
/// files; None: no drive_log.csv) read around its drop.
fn analysed(log: Option<(&str, &str)>) -> (Analysis, Event) {
    let sc = load("x5-thermal").unwrap();
    let trace = simulate(&sc);
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), &sc, &trace, Some(ProbeOptions::default())).unwrap();
    let (_, plain) = analyze_run_dir(dir.path(), &Options::default()).unwrap();
    let drop = plain
        .events
        .iter()
        .find(|e| e.cause == Cause::Thermal)
        .cloned()
        .expect("the thermal scenario's drop is thermal without the drive's record");
    let Some((before, after)) = log else {
        return (plain, drop);
    };
    let run = hostd_records::RunData::read(dir.path()).unwrap();
    let files: Vec<_> = run
        .files
        .iter()
        .filter(|f| f.target == drop.target && f.phase == drop.phase)
        .collect();
    let start = files.iter().map(|f| f.start_ns as i64).min().unwrap();
    let end = files.iter().map(|f| f.end_ns as i64).max().unwrap();
    // Once a second through the phase: the "before" answer until 5 s after the onset,
    // then the "after" answer (the drive counted its throttling as it slowed).
    let mut rows = Vec::new();
    let mut t = start - 1_000_000_000;
    while t <= end + 1_000_000_000 {
        let file = if t < drop.onset_ns + 5_000_000_000 {
            before
        } else {
            after
        };
        rows.push(reading(file, &drop.target, t));
        t += 1_000_000_000;
    }
    drive_log::write(dir.path(), &rows).unwrap();
    let (_, a) = analyze_run_dir(dir.path(), &Options::default()).unwrap();
    let e = a
        .events
        .iter()
        .find(|e| e.target == drop.target && e.onset_ns == drop.onset_ns)
        .cloned()
        .expect("the same drop, found again");
    (a, e)
}

#[test]
fn a_drive_that_logged_throttling_confirms_the_thermal_call_and_one_that_did_not_lowers_it() {
    let (_, plain) = analysed(None);
    assert!(plain.evidence.drive_thermal_log.is_none());
    let (_, confirmed) = analysed(Some((
        "derived/nvme-toshiba-kxg6.before-throttle.json",
        "derived/nvme-toshiba-kxg6.after-throttle.json",
    )));
    let (_, contradicted) = analysed(Some((
        "derived/nvme-toshiba-kxg6.before-throttle.json",
        "derived/nvme-toshiba-kxg6.before-throttle.json",
    )));
    println!(
        "thermal score / confidence: without the drive's record {:.2} / {:.2}, with 3 TMT1 transitions {:.2} / {:.2}, with none {:.2} / {:.2} ({})",
        plain.evidence.scores.get(Cause::Thermal),
        plain.confidence,
        confirmed.evidence.scores.get(Cause::Thermal),
        confirmed.confidence,
        contradicted.evidence.scores.get(Cause::Thermal),
        contradicted.confidence,
        contradicted.cause.as_str()
    );
    // Confirmed: the evidence says what the drive counted, and thermal scores higher.
    assert_eq!(confirmed.cause, Cause::Thermal);
    let d = confirmed.evidence.drive_thermal_log.as_ref().unwrap();
    assert_eq!((d.tmt1_transitions, d.tmt1_time_s), (Some(3), Some(41)));
    assert_eq!(d.warning_temp_time_min, Some(1));
    assert!(
        confirmed.evidence.scores.get(Cause::Thermal)
            > plain.evidence.scores.get(Cause::Thermal) + 0.29,
        "{:#?}",
        confirmed.evidence.reasons
    );
    assert!(confirmed.confidence >= plain.confidence);
    assert!(confirmed
        .evidence
        .reasons
        .iter()
        .any(|r| r.starts_with("✓ thermal: the drive logged 3 TMT1 transition(s), 41 s at TMT1")));
    // Contradicted: the counters stood still; thermal scores lower and says why.
    let d = contradicted.evidence.drive_thermal_log.as_ref().unwrap();
    assert_eq!(
        (d.tmt1_transitions, d.warning_temp_time_min),
        (Some(0), Some(0))
    );
    assert!(
        contradicted.evidence.scores.get(Cause::Thermal)
            < plain.evidence.scores.get(Cause::Thermal) - 0.24,
        "{:#?}",
        contradicted.evidence.reasons
    );
    assert!(contradicted.confidence < plain.confidence);
    assert!(contradicted
        .evidence
        .reasons
        .iter()
        .any(|r| r.starts_with("✗ thermal: the drive logged no throttling")));
}

#[test]
fn a_sata_drive_s_sct_over_limit_events_confirm_and_a_still_count_is_no_evidence_either_way() {
    let (_, plain) = analysed(None);
    let sata = "recorded/usbsunplus-samsung-hd204ui.x.json";
    let (_, confirmed) = analysed(Some((
        sata,
        "derived/usbsunplus-samsung-hd204ui.after-throttle.json",
    )));
    assert_eq!(
        confirmed
            .evidence
            .drive_thermal_log
            .as_ref()
            .unwrap()
            .sct_over_limit_count,
        Some(2)
    );
    assert!(
        confirmed.evidence.scores.get(Cause::Thermal)
            > plain.evidence.scores.get(Cause::Thermal) + 0.29,
        "{:#?}",
        confirmed.evidence.reasons
    );
    // An SCT over-limit count that stood still does not count throttling itself: said,
    // no weight.
    let (_, still) = analysed(Some((sata, sata)));
    assert_eq!(
        still.evidence.scores.get(Cause::Thermal),
        plain.evidence.scores.get(Cause::Thermal)
    );
    assert_eq!(still.confidence, plain.confidence);
    assert!(still
        .evidence
        .reasons
        .iter()
        .any(|r| r.contains("does not report its thermal management counters")));
}
