//! An event's signs as the rules write them: each line with the cause it weighs for or
//! against and what it did to that cause's score, the sources that could not be read, and
//! the deciding signs, chosen from them by weight once every rule has scored.

use hostd_records::cause::Cause;
use hostd_records::events::{Evidence, Source, DECIDING_MAX};

/// One line of an event's reasons with its weight.
struct Sign {
    /// The line as listed: "✓ thermal: …".
    text: String,
    /// The cause it weighs for or against; `None` for a note of no cause.
    cause: Option<Cause>,
    /// What it added to the cause's score (> 0) or took off it (< 0); 0 when it weighed
    /// nothing (a rule not met, or not checked).
    weight: f64,
}

/// The signs of one event, in the order the rules wrote them, and the sources they could
/// not read.
#[derive(Default)]
pub(crate) struct Signs {
    signs: Vec<Sign>,
    unread: Vec<Source>,
}

impl Signs {
    /// A line of no cause and no weight (what was found, the drive's own temperature).
    pub fn note(&mut self, text: String) {
        self.signs.push(Sign {
            text,
            cause: None,
            weight: 0.0,
        });
    }

    /// A rule of `cause`: ✓ and `weight` when met, ✗ and nothing when not.
    pub fn rule(&mut self, cause: Cause, weight: f64, met: bool, words: &str) {
        let mark = if met { "✓" } else { "✗" };
        self.signs.push(Sign {
            text: format!("{mark} {}: {words}", cause.as_str()),
            cause: Some(cause),
            weight: if met { weight } else { 0.0 },
        });
    }

    /// A sign against `cause` that took `weight` off its score: a ✗ line.
    pub fn against(&mut self, cause: Cause, weight: f64, words: &str) {
        self.signs.push(Sign {
            text: format!("✗ {}: {words}", cause.as_str()),
            cause: Some(cause),
            weight: -weight,
        });
    }

    /// A source the event's rules could not read: said once for the run, not as a line here.
    pub fn unread(&mut self, source: Source) {
        if !self.unread.contains(&source) {
            self.unread.push(source);
        }
    }

    /// The signs that decided `cause`: those that carried its score, heaviest first (in the
    /// rules' order where they weigh the same), and the heaviest against it, at most
    /// [`DECIDING_MAX`] in all. For `unknown` (`best`: the best-scoring cause and its score,
    /// `bar`: the score a cause needed), a line saying so and what carried the best score.
    fn deciding(&self, cause: Cause, best: Option<(Cause, f64)>, bar: f64) -> Vec<String> {
        let of = |c: Cause| self.signs.iter().filter(move |s| s.cause == Some(c));
        let carried = |c: Cause| {
            let mut v: Vec<&Sign> = of(c).filter(|s| s.weight > 0.0).collect();
            v.sort_by(|a, b| b.weight.total_cmp(&a.weight));
            v
        };
        if cause == Cause::Unknown {
            return match best.filter(|b| b.1 > 0.0) {
                None => vec!["no rule found a sign of any cause".into()],
                Some((c, score)) => std::iter::once(format!(
                    "no cause reached {bar:.2}: the best, {} {score:.2}, rests on",
                    c.as_str()
                ))
                .chain(
                    carried(c)
                        .into_iter()
                        .take(DECIDING_MAX - 1)
                        .map(|s| s.text.clone()),
                )
                .collect(),
            };
        }
        let against = of(cause)
            .filter(|s| s.weight < 0.0)
            .min_by(|a, b| a.weight.total_cmp(&b.weight));
        let mut out: Vec<String> = carried(cause)
            .into_iter()
            .take(DECIDING_MAX - usize::from(against.is_some()))
            .map(|s| s.text.clone())
            .collect();
        out.extend(against.map(|s| s.text.clone()));
        out
    }

    /// Puts the lines, the deciding ones for `cause` and the unread sources into `ev`.
    pub fn into_evidence(
        self,
        ev: &mut Evidence,
        cause: Cause,
        best: Option<(Cause, f64)>,
        bar: f64,
    ) {
        ev.deciding = self.deciding(cause, best, bar);
        ev.unread = self.unread;
        ev.unread.sort();
        ev.reasons = self.signs.into_iter().map(|s| s.text).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Five signs for thermal, one against it and one for the SLC cache: the deciding ones
    /// are the three heaviest for and the one against, whatever their words; ties keep the
    /// rules' order.
    #[test]
    fn the_deciding_signs_are_the_heaviest_for_the_cause_and_the_heaviest_against() {
        let mut s = Signs::default();
        s.note("found".into());
        s.rule(Cause::Thermal, 0.15, true, "a");
        s.rule(Cause::Thermal, 0.35, true, "b");
        s.rule(Cause::Thermal, 0.9, false, "c");
        s.rule(Cause::SlcCache, 0.9, true, "d");
        s.rule(Cause::Thermal, 0.2, true, "e");
        s.rule(Cause::Thermal, 0.2, true, "f");
        s.against(Cause::Thermal, 0.1, "g");
        s.against(Cause::Thermal, 0.25, "h");
        s.unread(Source::OsLog);
        s.unread(Source::OsLog);
        let mut ev = Evidence::default();
        s.into_evidence(&mut ev, Cause::Thermal, Some((Cause::Thermal, 0.65)), 0.5);
        assert_eq!(
            ev.deciding,
            [
                "✓ thermal: b",
                "✓ thermal: e",
                "✓ thermal: f",
                "✗ thermal: h"
            ]
        );
        assert_eq!(ev.reasons.len(), 9);
        assert_eq!(ev.unread, [Source::OsLog]);
    }

    /// Without a sign against, four for; an `unknown` event says what the best cause
    /// rested on, and that none reached the bar.
    #[test]
    fn an_unknown_event_names_the_best_cause_and_what_it_rested_on() {
        let mut s = Signs::default();
        for (k, w) in [0.1, 0.2, 0.3, 0.4, 0.5].into_iter().enumerate() {
            s.rule(Cause::Power, w, true, &format!("p{k}"));
        }
        let mut ev = Evidence::default();
        s.into_evidence(&mut ev, Cause::Power, Some((Cause::Power, 1.5)), 0.5);
        assert_eq!(ev.deciding.len(), DECIDING_MAX);
        assert_eq!(ev.deciding[0], "✓ power: p4");

        let mut s = Signs::default();
        s.rule(Cause::Thermal, 0.15, true, "alone");
        s.rule(Cause::Thermal, 0.35, false, "plateau");
        let mut ev = Evidence::default();
        s.into_evidence(&mut ev, Cause::Unknown, Some((Cause::Thermal, 0.15)), 0.5);
        assert_eq!(
            ev.deciding,
            [
                "no cause reached 0.50: the best, thermal 0.15, rests on",
                "✓ thermal: alone"
            ]
        );
        let mut ev = Evidence::default();
        Signs::default().into_evidence(&mut ev, Cause::Unknown, None, 0.5);
        assert_eq!(ev.deciding, ["no rule found a sign of any cause"]);
    }
}
