//! Times writing 1 M probe samples to probe.csv (the run's hot path) and 100 k files.csv rows.
use hostd_records::files::{self, FileRecord};
use hostd_records::probe::{self, ProbeSample};
use std::time::Instant;

fn main() {
    let dir = std::env::temp_dir().join(format!("probe-write-speed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let samples: Vec<ProbeSample> = (0..1_000_000i64)
        .map(|i| ProbeSample {
            time_ns: 1_790_000_000_000_000_000 + i * 1_000_000,
            seq: i as u64,
            probe_time_us: 0,
            vbus_v: Some(5.0 - (i % 97) as f64 * 1e-4),
            current_a: Some(1.2 + (i % 13) as f64 * 1e-3),
            power_w: Some(6.0 + (i % 31) as f64 * 1e-2),
            energy_j: Some(i as f64 * 6e-3),
            charge_c: (i % 2 == 0).then_some(i as f64 * 1.2e-3),
            die_temp_c: Some(30.0 + (i % 7) as f64 * 0.125),
            enclosure_temp_c: Some(25.0 + (i % 11) as f64 * 0.01),
            vbus_min_v: None,
        })
        .collect();
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t0 = Instant::now();
        let mut w = probe::Writer::create(&dir).unwrap();
        for chunk in samples.chunks(1000) {
            w.write(chunk).unwrap();
        }
        w.flush().unwrap();
        best = best.min(t0.elapsed().as_secs_f64());
    }
    println!(
        "probe.csv: 1 M samples written in {:.3} s (best of 5)",
        best
    );
    let recs: Vec<FileRecord> = (0..100_000u32)
        .map(|i| {
            FileRecord::new(
                "/mnt/a",
                "write",
                i,
                1_000 * u64::from(i),
                1_000 * u64::from(i) + 999,
                1 << 20,
            )
        })
        .collect();
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t0 = Instant::now();
        files::write_all(&dir, &recs).unwrap();
        best = best.min(t0.elapsed().as_secs_f64());
    }
    println!("files.csv: 100 k rows written in {:.3} s (best of 3)", best);
    std::fs::remove_dir_all(&dir).unwrap();
}
