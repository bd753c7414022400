//! False events on steady devices through the whole analysis (both views, stalls), measured
//! on the simulation the stall finder's own false-alarm test plays
//! (`stall::tests::false_alarms_on_steady_lumpy_devices_…`): 1 000 steady 60 s runs at each
//! of three lumpiness levels of a device throttled in 100 ms slices (2.0 or 3.1 MB per
//! interval, an empty interval with probability q), now with the files (8–12 MB) cut from
//! that byte stream. Any event on any of them is a false event. The same at 300 s (3 000
//! intervals, where the view over time kept 100 ms intervals only up to 1 000 before issue
//! 44), 50 runs per level, none with an event.

use hostd_analysis::{analyze, Options};
use hostd_records::counters::CounterRecord;
use hostd_records::{FileRecord, RunData};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const TICK: i64 = 100_000_000;

/// `n` intervals of 2.0 or 3.1 MB, 0 with probability `q` (as the stall test draws them).
fn lumpy(n: usize, q: f64, rng: &mut ChaCha8Rng) -> Vec<f64> {
    (0..n)
        .map(|_| {
            if rng.gen_bool(q) {
                0.0
            } else if rng.gen_bool(0.3) {
                3.1e6
            } else {
                2.0e6
            }
        })
        .collect()
}

/// The run of a byte stream moving `per_tick[k]` bytes in interval k: its counter and its
/// files of 8–12 MB back to back (each ends where the stream reaches its last byte).
fn run_of(per_tick: &[f64], sizes: &mut ChaCha8Rng) -> RunData {
    let mut counter = vec![CounterRecord {
        time_ns: 0,
        bytes: 0,
    }];
    let mut cum = 0.0;
    for (k, b) in per_tick.iter().enumerate() {
        cum += b;
        counter.push(CounterRecord {
            time_ns: (k as u64 + 1) * TICK as u64,
            bytes: cum as u64,
        });
    }
    // Time at which the stream reached `x` bytes (linear inside an interval).
    let time_at = |x: f64| -> u64 {
        let i = counter.partition_point(|c| (c.bytes as f64) < x);
        if i == 0 {
            return 0;
        }
        let (a, b) = (counter[i - 1], counter[i.min(counter.len() - 1)]);
        let span = (b.bytes - a.bytes).max(1) as f64;
        a.time_ns + ((x - a.bytes as f64) / span * (b.time_ns - a.time_ns) as f64) as u64
    };
    let mut files = Vec::new();
    let (mut x, mut start) = (0.0, 0u64);
    loop {
        let size = sizes.gen_range(8e6..12e6f64).round();
        if x + size > cum {
            break;
        }
        x += size;
        let end = time_at(x);
        files.push(FileRecord::new(
            "t",
            "write",
            files.len() as u32,
            start,
            end,
            size as u64,
        ));
        start = end;
    }
    RunData {
        files,
        counters: Some([("t".to_string(), counter)].into_iter().collect()),
        ..Default::default()
    }
}

#[test]
fn steady_lumpy_devices_give_no_event_of_any_kind() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut sizes = ChaCha8Rng::seed_from_u64(12);
    let mut events = [0usize; 3];
    let mut runs_with = [0usize; 3];
    let mut kinds = Vec::new();
    let n = std::env::var("FALSE_ALARM_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    for (i, q) in [0.05, 0.15, 0.25].into_iter().enumerate() {
        for _ in 0..n {
            let run = run_of(&lumpy(600, q, &mut rng), &mut sizes);
            let a = analyze(&run, &Options::default());
            if !a.events.is_empty() {
                runs_with[i] += 1;
                events[i] += a.events.len();
                kinds.extend(a.events.iter().map(|e| {
                    format!(
                        "q={q}: {} [{:?}; {}]",
                        e.evidence.text, e.found_by.view, e.found_by.other_view
                    )
                }));
            }
        }
    }
    eprintln!(
        "steady lumpy runs ({n} per level, q = 0.05, 0.15, 0.25): runs with an event {runs_with:?}, events {events:?}"
    );
    for k in kinds.iter().take(20) {
        eprintln!("  {k}");
    }
    // The stall finder alone allows 1 % per level (its test's bound); the whole analysis
    // no more.
    assert!(runs_with.iter().all(|&r| r * 100 <= n), "{runs_with:?}");
}

/// Long steady runs (issue 44): 300 s of lumpy intervals, 3 000 of them, in full 100 ms
/// intervals (the view over time coarsened past 1 000 before): 50 runs per level, none
/// with an event.
#[test]
fn long_steady_lumpy_runs_give_no_event() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let mut sizes = ChaCha8Rng::seed_from_u64(22);
    let mut found = Vec::new();
    for q in [0.05, 0.15, 0.25] {
        for _ in 0..50 {
            let run = run_of(&lumpy(3000, q, &mut rng), &mut sizes);
            let a = analyze(&run, &Options::default());
            found.extend(
                a.events
                    .iter()
                    .map(|e| format!("q={q}: {}", e.evidence.text)),
            );
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}
