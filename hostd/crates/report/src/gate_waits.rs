//! The temperature-gate section: each measured step the gate held before it started, when,
//! how long it waited and how the wait ended (events.json `gate_waits`); absent without a
//! gate.

use crate::svg::esc;
use hostd_records::gate_wait::{GateWait, WaitOutcome};
use std::fmt::Write;

/// A line of totals and a table of the waits; times from `t0` (the run's first I/O, ns).
pub(crate) fn section(waits: &[GateWait], t0: i64) -> String {
    if waits.is_empty() {
        return String::new();
    }
    let total: f64 = waits.iter().map(|w| w.waited_s).sum();
    let timed_out = waits
        .iter()
        .filter(|w| w.outcome == WaitOutcome::TimedOut)
        .count();
    let mut h = String::from(r#"<section id="gate-waits"><h2>Temperature gate</h2>"#);
    let _ = write!(
        h,
        r#"<p>{} steps waited to cool before they started: {total:.1} s in all, {timed_out} timed out.</p>"#,
        waits.len()
    );
    h.push_str(r#"<table id="gate-waits-table"><tr><th class="l">target</th><th class="l">step</th><th>at, s</th><th>waited, s</th><th class="l">outcome</th><th>idle, °C</th><th>from, °C</th><th>to, °C</th></tr>"#);
    let c = |v: Option<f64>| v.map_or("–".to_string(), |c| format!("{c:.1}"));
    for w in waits {
        let _ = write!(
            h,
            r#"<tr><td class="l">{}</td><td class="l">{} #{}</td><td>{:.1}</td><td>{:.1}</td><td class="l">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            esc(&w.target),
            esc(&w.phase),
            w.index,
            (w.start_ns as i64 - t0) as f64 / 1e9,
            w.waited_s,
            w.outcome.text(),
            c(w.idle_c),
            c(w.start_c),
            c(w.end_c)
        );
    }
    h.push_str("</table></section>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_wait_is_a_row_with_its_time_and_outcome_and_nothing_without_a_gate() {
        assert_eq!(section(&[], 0), "");
        let w = |index: u32, waited_s: f64, outcome| GateWait {
            target: "sim:x5".into(),
            phase: "write".into(),
            index,
            start_ns: 3_000_000_000 + u64::from(index) * 10_000_000_000,
            waited_s,
            outcome,
            idle_c: Some(42.4),
            start_c: Some(50.06),
            end_c: None,
        };
        let h = section(
            &[
                w(0, 0.0, WaitOutcome::IdleMeasured),
                w(1, 4.25, WaitOutcome::TimedOut),
            ],
            1_000_000_000,
        );
        assert!(
            h.contains("2 steps waited to cool before they started: 4.2 s in all, 1 timed out"),
            "{h}"
        );
        assert!(
            h.contains(r#"<td class="l">write #1</td><td>12.0</td><td>4.2</td><td class="l">timed out</td><td>42.4</td><td>50.1</td><td>–</td>"#),
            "{h}"
        );
    }
}
