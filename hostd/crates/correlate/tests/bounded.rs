//! Correlation as the run goes ([`Correlator`]): it gives what [`correlate`] gives from
//! the whole record, and what it keeps stays under a fixed bound however long the stream.

use hostd_correlate::{correlate, Correlator, Timeline};
use hostd_records::agg::AggRow;
use hostd_records::probe::ProbeSample;
use hostd_records::FileRecord;

const T0: i64 = 1_800_000_000_000_000_000;
const MS: i64 = 1_000_000;
const S: i64 = 1_000 * MS;

/// A probed file from `start` to `end` (ns after T0).
fn file(phase: &str, index: u32, start: i64, end: i64) -> FileRecord {
    FileRecord::new(
        "t0",
        phase,
        index,
        (T0 + start) as u64,
        (T0 + end) as u64,
        (end - start) as u64 * 100,
    )
}

/// The synthetic probe at 1 kHz: 2 W idle, 6.5 W while a file is in progress, a wobble so
/// that no two bins are alike, the accumulator (the power's running integral) read every
/// 16 samples; the samples in `lost` never arrive.
struct Stream<'a> {
    files: &'a [FileRecord],
    lost: std::ops::Range<u64>,
}

impl Stream<'_> {
    fn power(&self, t: i64) -> f64 {
        // Many files: sorted by start and none longer than 10 s, so only those starting
        // in the 10 s before `t` can be busy.
        let files = if self.files.len() > 100 {
            let from = self
                .files
                .partition_point(|f| (f.start_ns as i64) < t - 10 * S);
            let to = self.files.partition_point(|f| f.start_ns as i64 <= t);
            &self.files[from..to]
        } else {
            self.files
        };
        let busy = files
            .iter()
            .any(|f| f.start_ns as i64 <= t && t < f.end_ns as i64);
        let wobble = 0.25 * ((t - T0) as f64 / 7.3e8).sin();
        if busy {
            6.5 + wobble
        } else {
            2.0 + wobble
        }
    }

    /// Calls `each` with every sample of `[0, len)` in batches of 32, as the link sends
    /// them.
    fn run(&self, len: i64, mut each: impl FnMut(&[ProbeSample])) {
        let (mut energy, mut held) = (0.0, None);
        let mut batch = Vec::with_capacity(32);
        let n = (len / MS) as u64;
        for i in 0..n {
            let time = T0 + i as i64 * MS;
            let power = self.power(time);
            energy += power * 1e-3;
            if i.is_multiple_of(16) {
                held = Some(energy);
            }
            if !self.lost.contains(&i) {
                batch.push(ProbeSample {
                    time_ns: time,
                    seq: i,
                    vbus_v: Some(5.0),
                    current_a: Some(power / 5.0),
                    power_w: Some(power),
                    energy_j: held,
                    die_temp_c: Some(40.0),
                    enclosure_temp_c: Some(30.0 + (time - T0) as f64 / 1e11),
                    ..Default::default()
                });
            }
            if batch.len() == 32 || i + 1 == n {
                each(&batch);
                batch.clear();
            }
        }
    }
}

/// Feeds `stream` to a correlator the way `hostd run` does: a file's start is told once
/// the samples reach it, its end 50 ms before the samples covering it arrive (the link
/// lags the workload), and the ends still untold when the samples stop before the stream
/// is closed (the workload ends before the probe is stopped). Calls `watch` after every
/// batch.
fn streamed(
    stream: &Stream<'_>,
    len: i64,
    mut watch: impl FnMut(&mut Correlator, &[ProbeSample]),
) -> Correlator {
    let mut c = Correlator::new();
    let (mut started, mut ended) = (
        vec![false; stream.files.len()],
        vec![false; stream.files.len()],
    );
    stream.run(len, |batch| {
        let now = batch.last().map_or(0, |s| s.time_ns) + 50 * MS;
        for (k, f) in stream.files.iter().enumerate() {
            if !started[k] && f.start_ns as i64 <= now {
                started[k] = true;
                c.file_started(&f.phase, f.index, f.start_ns as i64);
            }
            if !ended[k] && f.end_ns as i64 <= now {
                ended[k] = true;
                c.file_ended(f);
            }
        }
        for s in batch {
            c.push(s);
        }
        c.advance();
        watch(&mut c, batch);
    });
    for (f, ended) in stream.files.iter().zip(ended) {
        if !ended {
            c.file_ended(f);
        }
    }
    c.flush();
    c
}

/// The whole record, as [`correlate`] reads it, and its 10 ms bins.
fn whole(stream: &Stream<'_>, len: i64) -> (Timeline, Vec<AggRow>) {
    let (mut t, mut bins) = (Timeline::new(), Vec::new());
    stream.run(len, |batch| {
        batch.iter().for_each(|s| bins.extend(t.push(s)))
    });
    bins.extend(t.flush());
    (t, bins)
}

#[test]
fn streaming_correlation_is_the_whole_records_correlation() {
    let mut files = vec![
        // Back to back, then one that overlaps both (its energy is shared).
        file("write", 0, 3 * S + 17 * MS, 9 * S + 503 * MS),
        file("write", 1, 9 * S + 503 * MS, 14 * S + 2 * MS),
        file("write", 2, 8 * S, 11 * S + 250_001),
        // Three minutes, far longer than the window kept behind the newest sample.
        file("read", 0, 20 * S + 5 * MS, 200 * S + 333 * MS),
        // Across the samples lost at 230 s, and one past the end of the record.
        file("read", 1, 228 * S, 233 * S),
        file("read", 2, 236 * S, 250 * S),
    ];
    files.sort_by_key(|f| f.end_ns);
    let stream = Stream {
        files: &files,
        lost: 230_000..230_041,
    };
    let len = 240 * S;
    let (t, bins) = whole(&stream, len);
    let reference = correlate(&t, &files);
    let mut c = streamed(&stream, len, |_, _| {});
    let got = c
        .finish(&files, |each| {
            bins.iter().for_each(each);
            Ok(())
        })
        .unwrap();
    assert_eq!(got, reference);
    // Not a vacuous equality: energies, shares, a balance with a gap left out.
    let b = got.balance.unwrap();
    assert!(b.uncovered_s > 0.0 && b.relative_error < 1e-3, "{b:?}");
    assert_eq!(b.files_outside_probe, 1);
    let long = &got.files[3].figures;
    assert_eq!(
        (got.files[3].phase.as_str(), got.files[3].index),
        ("read", 0)
    );
    assert!(long.energy_j.unwrap() > 6.0 * 180.0, "{long:?}");
    assert!(got.files[0].figures.energy_share_j < got.files[0].figures.energy_j);
    assert_eq!(got.phases.len(), 2);
    assert_eq!(c.late_files, 0);
}

#[test]
fn a_long_stream_keeps_a_bounded_window_and_exact_per_file_energy() {
    // Two hours at 1 kHz (7.2 M samples); a 2 s file every 10 minutes.
    let files: Vec<FileRecord> = (0..12)
        .map(|k| {
            let start = k * 600 * S + 300 * S + k * 7 * MS;
            file("write", k as u32, start, start + 2 * S + 123 * MS)
        })
        .collect();
    let stream = Stream {
        files: &files,
        lost: 0..0,
    };
    let len = 2 * 3600 * S;
    // The accumulator readings around each file, kept by the test for the direct
    // computation: (host ns, J) at each change of the reading.
    let mut near: Vec<Vec<(i64, f64)>> = vec![Vec::new(); files.len()];
    let (mut retained_max, mut samples) = (0, 0u64);
    let mut c = streamed(&stream, len, |c, batch| {
        retained_max = retained_max.max(c.retained());
        samples += batch.len() as u64;
        for s in batch {
            for (f, near) in files.iter().zip(near.iter_mut()) {
                let (a, b) = (f.start_ns as i64 - S, f.end_ns as i64 + S);
                if (a..b).contains(&s.time_ns) && near.last().map(|r| r.1) != s.energy_j {
                    near.push((s.time_ns, s.energy_j.unwrap()));
                }
            }
        }
    });
    assert_eq!(samples, 7_200_000);
    // A fixed bound (a few seconds of the record), not a share of the 7.2 M samples:
    // without the window the timeline would hold over 7 M elements here.
    assert!(retained_max < 20_000, "{retained_max} elements retained");
    assert_eq!(c.files_done(), files.len());
    let got = c.finish(&files, |_| Ok(())).unwrap();
    for ((f, e), near) in files.iter().zip(&got.files).zip(&near) {
        let at = |t: i64| hostd_records::energy::energy_at(near, t).unwrap();
        let direct = at(f.end_ns as i64) - at(f.start_ns as i64);
        assert_eq!(e.figures.energy_j, Some(direct), "{} #{}", f.phase, f.index);
        // About 2.123 s at 6.5 ± 0.25 W.
        assert!((13.0..14.5).contains(&direct), "{direct} J");
    }
}

#[test]
fn many_small_files_settle_as_they_go_and_what_is_held_stays_bounded() {
    // Ten minutes at 1 kHz; 6 000 files of 40-100 ms, back to back in bursts, and every
    // fifth overlapping the one before (two workers): shares split, idle between bursts.
    let mut files = Vec::new();
    let mut t = 2 * S;
    for k in 0..6_000u32 {
        let len = (40 + (k * 37) % 61) as i64 * MS;
        let start = if k % 5 == 4 { t - 25 * MS } else { t };
        files.push(file("write", k, start, start + len));
        t = start + len + if k % 50 == 49 { 700 * MS } else { 3 * MS };
    }
    let len = t + 3 * S;
    files.sort_by_key(|f| f.start_ns);
    assert!(files.last().unwrap().end_ns as i64 - T0 < len);
    let stream = Stream {
        files: &files,
        lost: 0..0,
    };
    let (timeline, bins) = whole(&stream, len);
    let reference = correlate(&timeline, &files);
    drop(timeline);

    // As `hostd run` takes them: the settled figures after every batch.
    let (mut settled, mut held_max) = (Vec::new(), 0);
    let mut c = streamed(&stream, len, |c, _| {
        settled.extend(c.take_settled());
        held_max = held_max.max(c.retained());
    });
    // Final as the run went: all but the files of the last few seconds.
    let during = settled.len();
    assert!(during + 100 >= files.len(), "{during} of {}", files.len());
    settled.extend(c.take_settled());
    assert_eq!(settled.len(), files.len());
    // Bounded: a few seconds of the record and the files overlapping them, as in the 2 h
    // stream, not the 6 000 files.
    assert!(held_max < 20_000, "{held_max}");
    let by_key: std::collections::HashMap<u32, _> = settled.iter().map(|f| (f.index, f)).collect();
    for want in &reference.files {
        assert_eq!(*by_key[&want.index], *want, "file {}", want.index);
    }
    let balance = c.balance().cloned();
    assert_eq!(balance, reference.balance);
    assert!(balance.unwrap().idle_j > 0.0);
    let energy: std::collections::HashMap<(i64, i64), Option<f64>> = files
        .iter()
        .map(|f| {
            let e = by_key[&f.index].figures.energy_j;
            ((f.start_ns as i64, f.end_ns as i64), e)
        })
        .collect();
    let phases = hostd_correlate::stream::phase_figures(
        &files,
        |a, b| energy[&(a, b)],
        |each| {
            bins.iter().for_each(each);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(phases, reference.phases);
}

#[test]
fn a_probe_that_goes_silent_holds_back_at_most_a_minute_of_files() {
    // Ten seconds of samples, then none while the run goes on for five minutes with a
    // 100 ms file every 200 ms (the probe unplugged, the workload not).
    let files: Vec<FileRecord> = (0..1_500u32)
        .map(|k| {
            let start = 2 * S + k as i64 * 200 * MS;
            file("write", k, start, start + 100 * MS)
        })
        .collect();
    let stream = Stream {
        files: &files,
        lost: 10_000..u64::MAX,
    };
    let mut c = Correlator::new();
    let (mut told, mut settled) = (0, Vec::new());
    stream.run(10 * S, |batch| {
        batch.iter().for_each(|s| {
            c.push(s);
        });
        let now = batch.last().map_or(0, |s| s.time_ns) + 50 * MS;
        while told < files.len() && files[told].end_ns as i64 <= now {
            c.file_started(
                &files[told].phase,
                files[told].index,
                files[told].start_ns as i64,
            );
            c.file_ended(&files[told]);
            told += 1;
        }
        c.advance();
    });
    // The rest of the run, told as it happens, no samples.
    for f in &files[told..] {
        c.file_started(&f.phase, f.index, f.start_ns as i64);
        c.file_ended(f);
        settled.extend(c.take_settled());
    }
    // What waits is the last minute of files (60 s at 5 a second), not the five minutes.
    let waiting = files.len() - c.files_done();
    assert!((295..=305).contains(&waiting), "{waiting} files waiting");
    // The ten seconds of record (about 2 700 elements) and that minute of files.
    assert!(c.retained() < 3_100, "{}", c.retained());
    // Those given up have what there is: no energy, no share.
    let after: Vec<_> = settled.iter().filter(|f| f.index > 100).collect();
    assert!(!after.is_empty());
    assert!(after
        .iter()
        .all(|f| f.figures.energy_j.is_none() && f.figures.energy_share_j.is_none()));
    c.flush();
    settled.extend(c.take_settled());
    assert_eq!(settled.len(), files.len());
    // The files in the ten seconds of samples kept their energy.
    let early = settled
        .iter()
        .filter(|f| f.figures.energy_j.is_some())
        .count();
    assert!((35..=45).contains(&early), "{early} with energy");
}
