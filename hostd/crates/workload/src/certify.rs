//! Certify runs: the durable journal of completed file steps (what makes a
//! run resumable without losing a verified result) and the evaluation of a
//! profile's `[gates]` into PASS or FAIL.
//!
//! The journal, `RUN_DIR/certify.jsonl` (typed in `hostd_records::certify`), gets one JSON line per file step as
//! it completes, flushed to the device (`fdatasync`) before the next step
//! starts. A step that was running when the process died has no line and is
//! run again on `--resume`; a torn last line (killed mid-write) is ignored.

use crate::profile::certify::p999_latency;
use hostd_records::profile::Gates;
use hostd_records::FileRecord;
use std::collections::BTreeSet;
use std::time::Duration;

use hostd_records::certify::{CorruptAt, GateResult, GateStatus, JournalEntry, Verdict};

/// The journal entry for a finished file step; `None` if the step did not complete.
pub fn entry_from_record(session: u32, rec: &FileRecord) -> Option<JournalEntry> {
    (rec.status == "ok").then(|| JournalEntry {
        session,
        target_index: rec.target_index,
        phase: rec.phase.clone(),
        index: rec.index,
        bytes: rec.bytes,
        seconds: rec.seconds(),
        mbps: rec.mbps,
        verified: rec.verified,
        corrupt_bytes: rec.corrupt_bytes,
        corrupt: rec.corrupt.clone(),
        end_ns: rec.end_ns,
    })
}

/// The keys of the steps already done.
pub fn done(entries: &[JournalEntry]) -> BTreeSet<(usize, String, u32)> {
    entries.iter().map(JournalEntry::key).collect()
}

/// What the run measured besides the journal, for the gates.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Highest temperature, °C, with where it was read.
    pub temperature_c: Option<(f64, String)>,
    /// 99.9th-percentile I/O latency, if the engine recorded latencies.
    pub p999_latency: Option<Duration>,
}

/// Judges the journal by the gates. `planned` is the number of measured steps.
pub fn evaluate(
    gates: &Gates,
    entries: &[JournalEntry],
    planned: usize,
    seen: &Observed,
) -> Verdict {
    let reads: Vec<&JournalEntry> = entries.iter().filter(|e| e.is_read()).collect();
    let writes: Vec<&JournalEntry> = entries.iter().filter(|e| !e.is_read()).collect();
    let verified: Vec<&JournalEntry> = reads
        .iter()
        .copied()
        .filter(|e| e.verified.is_some())
        .collect();
    let corrupt_bytes: u64 = verified.iter().map(|e| e.corrupt_bytes).sum();
    let mut out = Vec::new();
    if let (Some(max), true) = (gates.max_corrupt_bytes, verified.is_empty()) {
        out.push(GateResult {
            gate: "max_corrupt_bytes".into(),
            limit: format!("≤ {max} B"),
            measured: None,
            status: GateStatus::NotEvaluated,
            detail: if reads.is_empty() {
                "no block was verified (no read ran)".into()
            } else {
                format!(
                    "no block was verified ({} reads; a simulated target moves no data)",
                    reads.len()
                )
            },
        });
    } else if let Some(max) = gates.max_corrupt_bytes {
        out.push(GateResult {
            gate: "max_corrupt_bytes".into(),
            limit: format!("≤ {max} B"),
            measured: Some(format!("{corrupt_bytes} B")),
            status: if corrupt_bytes <= max {
                GateStatus::Pass
            } else {
                GateStatus::Fail
            },
            detail: format!(
                "{} of {} verified reads found corruption",
                verified
                    .iter()
                    .filter(|e| e.verified == Some(false))
                    .count(),
                verified.len()
            ),
        });
    }
    for (gate, limit, list) in [
        ("min_write_mbps", gates.min_write_mbps, &writes),
        ("min_read_mbps", gates.min_read_mbps, &reads),
    ] {
        let Some(limit) = limit else { continue };
        let slowest = list
            .iter()
            .filter(|e| e.seconds > 0.0)
            .min_by(|a, b| a.mbps.total_cmp(&b.mbps));
        out.push(match slowest {
            Some(e) => GateResult {
                gate: gate.into(),
                limit: format!("≥ {limit} MB/s"),
                measured: Some(format!("{:.1} MB/s", e.mbps)),
                status: if e.mbps >= limit {
                    GateStatus::Pass
                } else {
                    GateStatus::Fail
                },
                detail: format!(
                    "slowest file: target {} {} f{:05}.dat ({} bytes in {:.3} s)",
                    e.target_index, e.phase, e.index, e.bytes, e.seconds
                ),
            },
            None => GateResult {
                gate: gate.into(),
                limit: format!("≥ {limit} MB/s"),
                measured: None,
                status: GateStatus::NotEvaluated,
                detail: "no completed file to measure".into(),
            },
        });
    }
    if let Some(limit) = gates.max_temperature_c {
        out.push(match &seen.temperature_c {
            Some((t, from)) => GateResult {
                gate: "max_temperature_c".into(),
                limit: format!("≤ {limit} °C"),
                measured: Some(format!("{t:.1} °C")),
                status: if *t <= limit {
                    GateStatus::Pass
                } else {
                    GateStatus::Fail
                },
                detail: from.clone(),
            },
            None => GateResult {
                gate: "max_temperature_c".into(),
                limit: format!("≤ {limit} °C"),
                measured: None,
                status: GateStatus::NotEvaluated,
                detail: "no temperature data (no probe, and no SMART temperature)".into(),
            },
        });
    }
    if let (Some(text), Some(limit)) = (&gates.max_p999_latency, p999_latency(gates)) {
        out.push(match seen.p999_latency {
            Some(l) => GateResult {
                gate: "max_p999_latency".into(),
                limit: format!("≤ {text}"),
                measured: Some(format!("{:.3} ms", l.as_secs_f64() * 1e3)),
                status: if l <= limit {
                    GateStatus::Pass
                } else {
                    GateStatus::Fail
                },
                detail: "99.9th percentile of the I/O latencies of the slowest phase".into(),
            },
            None => GateResult {
                gate: "max_p999_latency".into(),
                limit: format!("≤ {text}"),
                measured: None,
                status: GateStatus::NotEvaluated,
                detail: "no latency data (no I/O was timed: a simulated target)".into(),
            },
        });
    }
    let corrupt = verified
        .iter()
        .flat_map(|e| {
            e.corrupt.iter().map(|b| CorruptAt {
                target_index: e.target_index,
                file: e.index,
                phase: e.phase.clone(),
                block: *b,
            })
        })
        .collect();
    let steps_done = done(entries).len();
    let status = |s: GateStatus| out.iter().any(|g| g.status == s);
    let result = if status(GateStatus::Fail) {
        // A failed gate stays failed whatever the rest of the run would show.
        "FAIL"
    } else if steps_done < planned {
        "INCOMPLETE"
    } else if status(GateStatus::NotEvaluated) {
        "FAIL"
    } else {
        "PASS"
    };
    Verdict {
        format_version: hostd_records::certify::FORMAT_VERSION,
        result: result.into(),
        gates: out,
        steps_done,
        steps_planned: planned,
        bytes_verified: verified.iter().map(|e| e.bytes).sum(),
        corrupt_bytes,
        corrupt,
        sessions: entries.iter().map(|e| e.session + 1).max().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostd_records::CorruptBlock;

    fn entry(phase: &str, index: u32, mbps: f64, corrupt: u64) -> JournalEntry {
        let read = phase.ends_with("read");
        JournalEntry {
            session: 0,
            target_index: 0,
            phase: phase.into(),
            index,
            bytes: 1 << 20,
            seconds: 1.048_576 / mbps,
            mbps,
            verified: read.then_some(corrupt == 0),
            corrupt_bytes: corrupt,
            corrupt: if corrupt > 0 {
                vec![CorruptBlock {
                    offset: 8192,
                    bad_bytes: corrupt as u32,
                    first_bad_byte: 8200,
                }]
            } else {
                vec![]
            },
            end_ns: 0,
        }
    }

    fn gates() -> Gates {
        Gates {
            max_corrupt_bytes: Some(0),
            min_write_mbps: Some(50.0),
            ..Gates::default()
        }
    }

    /// The journal of file 0 written at `write_mbps` and read back at `read_mbps` with
    /// `corrupt` bad bytes.
    fn one_file(write_mbps: f64, read_mbps: f64, corrupt: u64) -> [JournalEntry; 2] {
        [
            entry("pass1-write", 0, write_mbps, 0),
            entry("pass1-read", 0, read_mbps, corrupt),
        ]
    }

    /// The verdict of [`gates`] on `j`, two steps planned, nothing else observed.
    fn verdict(j: &[JournalEntry]) -> Verdict {
        evaluate(&gates(), j, 2, &Observed::default())
    }

    #[test]
    fn a_clean_complete_run_passes_with_its_measured_values() {
        let j = one_file(80.0, 90.0, 0);
        let v = verdict(&j);
        assert_eq!(v.result, "PASS");
        assert_eq!(v.gates[0].measured.as_deref(), Some("0 B"));
        assert_eq!(v.gates[1].measured.as_deref(), Some("80.0 MB/s"));
    }

    #[test]
    fn one_corrupt_byte_fails_and_is_located() {
        let j = one_file(80.0, 90.0, 1);
        let v = verdict(&j);
        assert_eq!(v.result, "FAIL");
        assert_eq!(v.gates[0].status, GateStatus::Fail);
        assert_eq!(
            (v.corrupt[0].file, v.corrupt[0].block.first_bad_byte),
            (0, 8200)
        );
    }

    #[test]
    fn a_slow_file_fails_the_rate_gate() {
        let j = one_file(20.0, 90.0, 0);
        let v = verdict(&j);
        assert_eq!(
            (v.result.as_str(), v.gates[1].status),
            ("FAIL", GateStatus::Fail)
        );
    }

    #[test]
    fn a_gate_without_data_is_not_evaluated_and_fails_the_run() {
        let g = Gates {
            max_p999_latency: Some("50ms".into()),
            max_temperature_c: Some(60.0),
            ..Gates::default()
        };
        let j = one_file(80.0, 90.0, 0);
        let v = evaluate(&g, &j, 2, &Observed::default());
        assert_eq!(v.result, "FAIL");
        assert!(v.gates.iter().all(|g| g.status == GateStatus::NotEvaluated));
        assert!(v.gates[1].detail.contains("no latency data"));
    }

    #[test]
    fn reads_that_verified_nothing_leave_the_corruption_gate_unevaluated() {
        let mut read = entry("pass1-read", 0, 90.0, 0);
        read.verified = None;
        let j = [entry("pass1-write", 0, 80.0, 0), read];
        let v = verdict(&j);
        assert_eq!(v.gates[0].status, GateStatus::NotEvaluated);
        assert_eq!((v.result.as_str(), v.bytes_verified), ("FAIL", 0));
        // The unverified read is still a read, not a write, for the rate gates.
        assert_eq!(v.gates[1].measured.as_deref(), Some("80.0 MB/s"));
    }

    #[test]
    fn unfinished_runs_are_incomplete_not_passed() {
        let j = [entry("pass1-write", 0, 80.0, 0)];
        assert_eq!(verdict(&j).result, "INCOMPLETE");
    }
}
