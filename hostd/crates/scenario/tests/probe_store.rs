//! A simulated run written with its probe samples in `probe/` (Parquet segments and summary
//! levels, as `hostd run` writes them) analyses exactly as the same run with `probe.csv`,
//! and `probe/` holds the same samples.

use hostd_analysis::{analyze_run_dir, Options};
use hostd_records::probe_levels::{read_level, Level};
use hostd_scenario::{load, simulate, write::write_run, write::ProbeOptions};

#[test]
fn a_run_with_parquet_samples_analyses_as_the_same_run_with_probe_csv() {
    let sc = load("x5-thermal").unwrap();
    let trace = simulate(&sc);
    let (csv, parquet) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let options = |parquet| ProbeOptions {
        rate_hz: 1000.0,
        parquet,
        ..ProbeOptions::default()
    };
    write_run(csv.path(), &sc, &trace, Some(options(false))).unwrap();
    write_run(parquet.path(), &sc, &trace, Some(options(true))).unwrap();
    assert!(!parquet.path().join("probe.csv").exists());

    let from_csv = hostd_records::probe::read(csv.path()).unwrap();
    let from_parquet = hostd_records::probe_store::read(parquet.path()).unwrap();
    assert!(from_csv.len() > 100_000, "{} samples", from_csv.len());
    // (`probe_time_us` is not in probe.csv; the model gives 0.)
    assert_eq!(format!("{from_parquet:?}"), format!("{from_csv:?}"));

    let (_, a) = analyze_run_dir(csv.path(), &Options::default()).unwrap();
    let (_, b) = analyze_run_dir(parquet.path(), &Options::default()).unwrap();
    assert!(!a.events.is_empty());
    assert_eq!(
        serde_json::to_string(&b).unwrap(),
        serde_json::to_string(&a).unwrap()
    );

    // The levels cover every sample once.
    let ms10 = read_level(parquet.path(), Level::Ms10).unwrap();
    let total: u64 = ms10.iter().map(|r| u64::from(r.samples)).sum();
    assert_eq!(total, from_parquet.len() as u64);
    let s1 = read_level(parquet.path(), Level::S1).unwrap();
    assert_eq!(s1.iter().map(|r| u64::from(r.samples)).sum::<u64>(), total);
}
