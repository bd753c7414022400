//! `hostd compare` in the terminal and as `--json`: for each compared phase, one column per
//! run in the order given and one row per figure of the bar charts ([`METRICS`], with the
//! first drop's cause beside its figures). Each cell is the analysis' figure as it is,
//! written through its kind as every other output writes it; a cell without one reads
//! "none" (the run has no such figure) or "–" (the run has no such phase) with a footnote
//! that says why.

use super::figures::{DropCause, PhaseFigures, METRICS};
use super::{CompareRun, Comparison};
use hostd_records::headline::Figure;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One compared phase: each run's figures in it, in the runs' order.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseColumns {
    /// The phase.
    pub phase: String,
    /// One entry per run, in the order given.
    pub runs: Vec<Column>,
}

/// One run in one phase: its label and its figures, or why it has none.
#[derive(Debug, Clone, Serialize)]
pub struct Column {
    /// The run's label (its column's head).
    pub label: String,
    /// Its figures, or why there are none.
    #[serde(flatten)]
    pub cell: Cells,
}

/// A run's figures in a phase, or the reason it has none.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Cells {
    /// The figures, keyed as [`METRICS`], and the first drop's cause.
    Figures {
        /// Figure by key.
        figures: BTreeMap<String, Figure>,
        /// The first drop's cause and confidence, when there is a drop.
        drop_cause: Option<DropCause>,
    },
    /// The run has no such phase.
    Absent {
        /// Why, in words.
        absent: String,
    },
}

/// The comparison's phases side by side: per phase, each run's figures (the page's bars)
/// in the runs' order.
pub fn columns(c: &Comparison) -> Vec<PhaseColumns> {
    c.phases
        .iter()
        .map(|phase| PhaseColumns {
            phase: phase.clone(),
            runs: c
                .runs
                .iter()
                .map(|r| Column {
                    label: r.label.clone(),
                    cell: match r.figures.iter().find(|f| &f.phase == phase) {
                        Some(PhaseFigures {
                            figures,
                            drop_cause,
                            ..
                        }) => Cells::Figures {
                            figures: figures.clone(),
                            drop_cause: *drop_cause,
                        },
                        None => Cells::Absent {
                            absent: format!(
                                "no {phase} phase on {}",
                                r.target.as_deref().unwrap_or("its target")
                            ),
                        },
                    },
                })
                .collect(),
        })
        .collect()
}

/// The label of the row of the first drop's cause, after the figures of that drop.
const CAUSE_ROW: &str = "cause of the first drop";

/// The footnotes of a table: each reason once, numbered in order of first use.
#[derive(Default)]
struct Footnotes(Vec<String>);

impl Footnotes {
    /// `word` marked with the number of `reason`'s footnote: "none¹".
    fn mark(&mut self, word: &str, reason: &str) -> String {
        let n = match self.0.iter().position(|r| r == reason) {
            Some(k) => k + 1,
            None => {
                self.0.push(reason.to_string());
                self.0.len()
            }
        };
        format!("{word}{}", superscript(n))
    }
}

/// `n` in superscript digits: 12 → "¹²".
fn superscript(n: usize) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    n.to_string()
        .chars()
        .map(|d| DIGITS[d.to_digit(10).unwrap_or(0) as usize])
        .collect()
}

/// A row of the table: its label and one cell per run.
type Row = (String, Vec<String>);

/// The rows of one phase.
fn phase_rows(p: &PhaseColumns, notes: &mut Footnotes) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    let last_of_drop = METRICS.iter().rposition(|m| m.of_drop);
    for (k, m) in METRICS.iter().enumerate() {
        let cells = p
            .runs
            .iter()
            .map(|c| match &c.cell {
                Cells::Absent { absent } => notes.mark("–", absent),
                Cells::Figures { figures, .. } => match figures.get(m.key) {
                    Some(f @ Figure::Value { .. }) => f.text(m.kind),
                    Some(Figure::Absent { absent }) => notes.mark("none", absent),
                    None => notes.mark("none", &format!("no figure {}", m.key)),
                },
            })
            .collect();
        rows.push((m.title.to_string(), cells));
        if Some(k) == last_of_drop {
            let cells = p
                .runs
                .iter()
                .map(|c| match &c.cell {
                    Cells::Absent { absent } => notes.mark("–", absent),
                    Cells::Figures {
                        drop_cause: Some(d),
                        ..
                    } => d.text(),
                    Cells::Figures { figures, .. } => {
                        let why = figures
                            .get("drop_bytes")
                            .and_then(Figure::absent_reason)
                            .unwrap_or("no drop");
                        notes.mark("none", why)
                    }
                })
                .collect();
            rows.push((CAUSE_ROW.to_string(), cells));
        }
    }
    rows
}

/// The gap between two columns.
const GAP: &str = "   ";

/// The terminal's comparison: a header of the runs' labels, then per compared phase its
/// name and one row per figure, the footnotes, and each run's events.
pub fn text(runs: &[CompareRun], c: &Comparison) -> String {
    let mut notes = Footnotes::default();
    let phases = columns(c);
    let blocks: Vec<(String, Vec<Row>)> = phases
        .iter()
        .map(|p| (p.phase.clone(), phase_rows(p, &mut notes)))
        .collect();
    let width = |s: &str| s.chars().count();
    let label_w = blocks
        .iter()
        .flat_map(|(_, rows)| rows.iter().map(|(l, _)| width(l) + 2))
        .max()
        .unwrap_or(0);
    let col_w: Vec<usize> = c
        .runs
        .iter()
        .enumerate()
        .map(|(k, r)| {
            blocks
                .iter()
                .flat_map(|(_, rows)| rows.iter().map(move |(_, cells)| width(&cells[k])))
                .chain([width(&r.label)])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w.saturating_sub(width(s))));
    let line = |first: String, cells: &[String]| {
        let mut l = pad(&first, label_w);
        for (cell, w) in cells.iter().zip(&col_w) {
            l.push_str(GAP);
            l.push_str(&pad(cell, *w));
        }
        l.trim_end().to_string()
    };
    let mut s = String::new();
    if !blocks.is_empty() {
        let heads: Vec<String> = c.runs.iter().map(|r| r.label.clone()).collect();
        let _ = writeln!(s, "{}", line(String::new(), &heads));
    }
    for (phase, rows) in &blocks {
        let _ = writeln!(s, "{phase}");
        for (label, cells) in rows {
            let _ = writeln!(s, "{}", line(format!("  {label}"), cells));
        }
    }
    for (k, why) in notes.0.iter().enumerate() {
        let _ = writeln!(s, "{} {why}", superscript(k + 1));
    }
    for (r, cr) in runs.iter().zip(&c.runs) {
        let _ = writeln!(
            s,
            "\n{} ({}, {}):",
            cr.label,
            cr.run,
            cr.target.as_deref().unwrap_or("no files")
        );
        let a = &r.analysis;
        if let Some(l) = hostd_analysis::event_lines::too_little_line(a) {
            let _ = writeln!(s, "  {l}");
        } else if a.events.is_empty() {
            let _ = writeln!(s, "  no throughput changes beyond noise");
        }
        for e in &a.events {
            let event = format!("  {}", hostd_analysis::event_lines::event_line(e));
            for l in hostd_analysis::event_lines::wrapped(
                &event,
                hostd_analysis::event_lines::LINE_WIDTH,
            ) {
                let _ = writeln!(s, "{l}");
            }
        }
    }
    if !c.left_out.is_empty() {
        s.push('\n');
        for l in &c.left_out {
            let _ = writeln!(s, "{l}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footnote_marks_are_superscript_numbers_one_per_reason() {
        let mut n = Footnotes::default();
        assert_eq!(n.mark("none", "a"), "none¹");
        assert_eq!(n.mark("–", "b"), "–²");
        assert_eq!(n.mark("none", "a"), "none¹");
        assert_eq!(superscript(12), "¹²");
    }
}
