//! Times building and encoding the `probe` points of 1 M samples (the live path).
use hostd_influx::schema::{sample_point, RunTags};
use hostd_records::ProbeSample;
use std::time::Instant;

fn main() {
    let tags = RunTags {
        rig: "bench".into(),
        run: "r1".into(),
        probe: Some("p0".into()),
    };
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
        })
        .collect();
    let mut best = f64::MAX;
    let mut bytes = 0;
    for _ in 0..5 {
        let t0 = Instant::now();
        let mut out = String::with_capacity(1 << 20);
        bytes = 0;
        for s in &samples {
            sample_point(&tags, s).write_line(&mut out).unwrap();
            out.push('\n');
            if out.len() > 1 << 20 {
                bytes += out.len();
                out.clear();
            }
        }
        bytes += out.len();
        best = best.min(t0.elapsed().as_secs_f64());
    }
    println!("probe points: 1 M built and encoded in {best:.3} s (best of 5), {bytes} bytes");
}
