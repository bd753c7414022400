//! Times reading a 1 M-sample probe.csv (as `scenario-gen --bench` writes) into records
//! and the analysis' columns.
use hostd_records::probe::{self, ProbeSample};
use std::time::Instant;

fn main() {
    let dir = std::env::temp_dir().join(format!("probe-read-speed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut w = probe::Writer::create(&dir).unwrap();
    let r = |x: f64, k: f64| Some((x * k).round() / k);
    let samples: Vec<ProbeSample> = (0..1_000_000i64)
        .map(|i| ProbeSample {
            time_ns: 1_790_000_000_000_000_000 + i * 1_000_000,
            seq: i as u64,
            probe_time_us: 0,
            vbus_v: r(5.0 - (i % 97) as f64 * 1e-4, 1e5),
            current_a: r(1.2 + (i % 13) as f64 * 1e-3, 1e5),
            power_w: r(6.0 + (i % 31) as f64 * 1e-2, 1e4),
            energy_j: r(i as f64 * 6e-3, 1e4),
            charge_c: r(i as f64 * 1.2e-3, 1e4),
            die_temp_c: r(30.0 + (i % 7) as f64 * 0.125, 1e3),
            enclosure_temp_c: r(25.0 + (i % 11) as f64 * 0.01, 1e3),
            vbus_min_v: None,
        })
        .collect();
    w.write(&samples).unwrap();
    w.flush().unwrap();
    let mb = std::fs::metadata(dir.join("probe.csv")).unwrap().len() / 1_000_000;
    let mut times = Vec::new();
    for _ in 0..5 {
        let t0 = Instant::now();
        let series = probe::read_series(&dir).unwrap();
        assert_eq!(series.len(), 1_000_000);
        times.push(t0.elapsed().as_millis());
    }
    times.sort_unstable();
    println!(
        "probe.csv {mb} MB, 1 M samples: read + columns {times:?} ms, median {} ms",
        times[2]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
