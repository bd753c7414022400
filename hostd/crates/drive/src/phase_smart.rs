//! The SMART readings taken before and after each measured phase, kept in bounded memory: a
//! phase that repeats (the cycles of a `duration` or soak run, hours of them) keeps, per
//! target, phase and `before`/`after`, its first reading, its hottest and its latest. The
//! drive's temperature over the whole run, once a second, is `drive_temp.csv`'s.

use crate::smart::SmartReading;

/// The readings of one (target, phase, `before`/`after`).
#[derive(Debug)]
struct Kept {
    first: SmartReading,
    hottest: Option<SmartReading>,
    latest: Option<SmartReading>,
    taken: u64,
}

/// The kept readings of a run; see the module documentation.
#[derive(Debug, Default)]
pub struct PhaseSmart {
    kept: Vec<Kept>,
}

fn temperature(r: &SmartReading) -> f64 {
    r.temperature_c.unwrap_or(f64::NEG_INFINITY)
}

impl PhaseSmart {
    /// Adds a reading.
    pub fn add(&mut self, r: SmartReading) {
        let same = |k: &&mut Kept| {
            k.first.target == r.target && k.first.phase == r.phase && k.first.when == r.when
        };
        let Some(k) = self.kept.iter_mut().find(same) else {
            self.kept.push(Kept {
                first: r,
                hottest: None,
                latest: None,
                taken: 1,
            });
            return;
        };
        k.taken += 1;
        let hottest = k
            .hottest
            .as_ref()
            .map_or(temperature(&k.first), temperature);
        if temperature(&r) > hottest {
            k.hottest = Some(r.clone());
        }
        k.latest = Some(r);
    }

    /// Readings taken in all.
    pub fn taken(&self) -> u64 {
        self.kept.iter().map(|k| k.taken).sum()
    }

    /// The kept readings, in time order, each once.
    pub fn readings(&self) -> Vec<SmartReading> {
        let mut out: Vec<SmartReading> = Vec::new();
        for k in &self.kept {
            for r in [Some(&k.first), k.hottest.as_ref(), k.latest.as_ref()]
                .into_iter()
                .flatten()
            {
                if !out
                    .iter()
                    .any(|o| o.time_ns == r.time_ns && o.phase == r.phase)
                {
                    out.push(r.clone());
                }
            }
        }
        out.sort_by_key(|r| r.time_ns);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(time_ns: i64, phase: &str, when: &str, c: f64) -> SmartReading {
        SmartReading {
            time_ns,
            target: "t0".into(),
            phase: phase.into(),
            when: when.into(),
            device: Some("/dev/nvme0n1".into()),
            available: true,
            note: None,
            model: None,
            temperature_c: Some(c),
            nvme: None,
        }
    }

    #[test]
    fn a_phase_that_repeats_keeps_its_first_hottest_and_latest_readings() {
        let mut s = PhaseSmart::default();
        // A thousand cycles of write then read, the drive warming to 71 °C at cycle 400.
        for cycle in 0..1_000i64 {
            let c = 40.0 + (cycle.min(400) as f64) * 0.1 - if cycle > 400 { 5.0 } else { 0.0 };
            for (k, (phase, when)) in [
                ("write", "before"),
                ("write", "after"),
                ("read", "before"),
                ("read", "after"),
            ]
            .into_iter()
            .enumerate()
            {
                s.add(reading(cycle * 10 + k as i64, phase, when, c));
            }
        }
        assert_eq!(s.taken(), 4_000);
        let kept = s.readings();
        // Per (phase, when): first, hottest (cycle 400), latest.
        assert_eq!(kept.len(), 12, "{kept:#?}");
        assert!(kept.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
        let hottest = kept
            .iter()
            .map(|r| r.temperature_c.unwrap())
            .fold(f64::MIN, f64::max);
        assert_eq!(hottest, 80.0);
        assert_eq!(kept.last().unwrap().time_ns, 999 * 10 + 3);
        assert_eq!(kept[0].time_ns, 0);
    }

    #[test]
    fn phases_that_run_once_keep_every_reading() {
        let mut s = PhaseSmart::default();
        s.add(reading(1, "write", "before", 40.0));
        s.add(reading(2, "write", "after", 45.0));
        s.add(reading(3, "read", "before", 44.0));
        assert_eq!(s.readings().len(), 3);
        assert_eq!(s.taken(), 3);
    }
}
