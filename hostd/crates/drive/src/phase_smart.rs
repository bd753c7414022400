//! The SMART readings before and after each measured phase (`summary.json` `drive.smart`),
//! taken from the drive feed: a phase's `before` is the drive's latest reading when it
//! starts (the first one, if none has come yet), its `after` the first reading once it has
//! ended (for the last phase, the poller's reading after the run's I/O). A target whose
//! drive gives no reading gets a reading that says why (`available: false`).
//!
//! They are kept in bounded memory: a phase that repeats (the cycles of a `duration` or soak
//! run, hours of them) keeps, per target, phase and `before`/`after`, its first reading, its
//! hottest and its latest. The drive's temperature over the whole run, once a second, is
//! `drive_temp.csv`'s.

use hostd_records::drive_log::DriveLogRecord;
use hostd_store::{DriveData, DriveReading};
use serde::Serialize;

/// NVMe thermal-management counters (SMART / Health log).
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct NvmeThermal {
    /// Minutes above the warning composite temperature.
    pub warning_temp_time_min: Option<u64>,
    /// Minutes above the critical composite temperature.
    pub critical_comp_time_min: Option<u64>,
    /// Transitions into thermal-management level 1 (light throttling).
    pub thermal_temp1_transition_count: Option<u64>,
    /// Transitions into thermal-management level 2 (heavy throttling).
    pub thermal_temp2_transition_count: Option<u64>,
    /// Seconds spent in level 1.
    pub thermal_temp1_total_time_s: Option<u64>,
    /// Seconds spent in level 2.
    pub thermal_temp2_total_time_s: Option<u64>,
}

impl NvmeThermal {
    /// The counters of an NVMe drive's thermal record.
    pub fn of(r: &DriveLogRecord) -> NvmeThermal {
        NvmeThermal {
            warning_temp_time_min: r.warning_temp_time_min,
            critical_comp_time_min: r.critical_comp_time_min,
            thermal_temp1_transition_count: r.tmt1_transitions,
            thermal_temp2_transition_count: r.tmt2_transitions,
            thermal_temp1_total_time_s: r.tmt1_time_s,
            thermal_temp2_total_time_s: r.tmt2_time_s,
        }
    }
}

/// One SMART reading of one drive around a phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SmartReading {
    /// Host Unix ns when read.
    pub time_ns: i64,
    /// Target label.
    pub target: String,
    /// Phase it belongs to.
    pub phase: String,
    /// `before` or `after`.
    pub when: String,
    /// Device queried, if any.
    pub device: Option<String>,
    /// True when smartctl returned SMART data.
    pub available: bool,
    /// Why not, or how the drive was read (through which USB bridge type).
    pub note: Option<String>,
    /// Drive model.
    pub model: Option<String>,
    /// Composite / current temperature, °C.
    pub temperature_c: Option<f64>,
    /// NVMe thermal counters, for NVMe drives (also behind NVMe–USB bridges).
    pub nvme: Option<NvmeThermal>,
}

impl SmartReading {
    /// The drive feed's reading `r`, as the reading `when` (`before`/`after`) `phase`.
    pub fn of(r: &DriveReading, phase: &str, when: &str) -> SmartReading {
        let nvme = r
            .thermal
            .as_ref()
            .filter(|_| r.thermal_kind == Some("nvme"))
            .map(NvmeThermal::of);
        SmartReading {
            time_ns: r.time_ns,
            target: r.target.clone(),
            phase: phase.to_string(),
            when: when.to_string(),
            device: Some(r.device.clone()),
            available: r.temperature_c.is_some() || nvme.is_some(),
            note: r
                .device_type
                .as_ref()
                .map(|b| format!("read through USB bridge type {b}")),
            model: r.model.clone(),
            temperature_c: r.temperature_c,
            nvme,
        }
    }
}

/// Where one target's phase readings come from.
#[derive(Debug)]
enum Source {
    /// Its drive is polled; its latest reading so far.
    Polled {
        disk: Option<String>,
        latest: Option<Box<DriveReading>>,
    },
    /// No reading will come; what the readings say instead.
    NoReading { device: Option<String>, why: String },
}

/// One target of the run, as its phase readings need it.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseTarget {
    /// Label.
    pub label: String,
    /// The disk the poller asks; None when it does not ask this target.
    pub polled: Option<Option<String>>,
    /// Why there is no reading when the poller does not ask it.
    pub not_polled: String,
}

/// A phase reading waiting for the drive's next reading.
#[derive(Debug)]
struct Waiting {
    target: usize,
    phase: String,
    when: &'static str,
    time_ns: i64,
}

/// The phase readings of a run, as the drive feed and the phase events come; see the
/// module documentation.
#[derive(Debug, Default)]
pub struct PhaseReadings {
    labels: Vec<String>,
    sources: Vec<Source>,
    waiting: Vec<Waiting>,
    kept: PhaseSmart,
}

impl PhaseReadings {
    /// The readings of a run of `targets` (in the manifest's order).
    pub fn new(targets: Vec<PhaseTarget>) -> PhaseReadings {
        let (labels, sources) = targets
            .into_iter()
            .map(|t| {
                let source = match t.polled {
                    Some(disk) => Source::Polled { disk, latest: None },
                    None => Source::NoReading {
                        device: None,
                        why: t.not_polled,
                    },
                };
                (t.label, source)
            })
            .unzip();
        PhaseReadings {
            labels,
            sources,
            ..Default::default()
        }
    }

    /// A phase of `target` starts (`when` = `before`) or ends (`after`) at record time
    /// `time_ns`.
    pub fn phase(&mut self, target: usize, phase: &str, when: &'static str, time_ns: i64) {
        match self.sources.get(target) {
            None => {}
            Some(Source::NoReading { device, why }) => {
                let r = no_reading(&self.labels[target], device, why, phase, when, time_ns);
                self.kept.add(r);
            }
            Some(Source::Polled {
                latest: Some(r), ..
            }) if when == "before" => self.kept.add(SmartReading::of(r, phase, when)),
            Some(Source::Polled { .. }) => {
                // One waiting reading per (target, phase, when): a drive that stops
                // answering through a long run of repeated phases holds no more than that.
                let same = |w: &Waiting| w.target == target && w.phase == phase && w.when == when;
                if !self.waiting.iter().any(same) {
                    self.waiting.push(Waiting {
                        target,
                        phase: phase.to_string(),
                        when,
                        time_ns,
                    });
                }
            }
        }
    }

    /// What the drive feed delivered.
    pub fn feed(&mut self, data: DriveData<'_>) {
        match data {
            DriveData::Reading(r) => {
                let Some(Source::Polled { latest, .. }) = self.sources.get_mut(r.target_index)
                else {
                    return;
                };
                *latest = Some(Box::new(r.clone()));
                let (mine, rest) = std::mem::take(&mut self.waiting)
                    .into_iter()
                    .partition(|w| w.target == r.target_index);
                self.waiting = rest;
                for w in mine {
                    self.kept.add(SmartReading::of(r, &w.phase, w.when));
                }
            }
            DriveData::Unanswered { target_index, why } => {
                let Some(source) = self.sources.get_mut(target_index) else {
                    return;
                };
                let device = match source {
                    Source::Polled { disk, .. } => disk.clone(),
                    Source::NoReading { device, .. } => device.clone(),
                };
                *source = Source::NoReading {
                    device,
                    why: why.to_string(),
                };
                self.give_up(target_index, why);
            }
        }
    }

    /// The latest reading of each target whose drive has given one, in target order.
    pub fn latest(&self) -> impl Iterator<Item = &DriveReading> {
        self.sources.iter().filter_map(|s| match s {
            Source::Polled { latest, .. } => latest.as_deref(),
            Source::NoReading { .. } => None,
        })
    }

    /// The kept readings once the poller has stopped, in time order, each once; a reading
    /// still waiting then says that the drive gave none.
    pub fn finish(&mut self) -> Vec<SmartReading> {
        for target in 0..self.sources.len() {
            self.give_up(target, "the drive gave no reading after this point");
        }
        self.kept.readings()
    }

    /// Readings taken in all.
    pub fn taken(&self) -> u64 {
        self.kept.taken()
    }

    /// Ends the waiting readings of `target`: none will come, for `why`.
    fn give_up(&mut self, target: usize, why: &str) {
        let device = match &self.sources[target] {
            Source::Polled { disk, .. } => disk.clone(),
            Source::NoReading { device, .. } => device.clone(),
        };
        let (mine, rest) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|w| w.target == target);
        self.waiting = rest;
        for w in mine {
            let r = no_reading(
                &self.labels[target],
                &device,
                why,
                &w.phase,
                w.when,
                w.time_ns,
            );
            self.kept.add(r);
        }
    }
}

/// The reading of a drive that gave none: why, at the phase's own time.
fn no_reading(
    label: &str,
    device: &Option<String>,
    why: &str,
    phase: &str,
    when: &str,
    time_ns: i64,
) -> SmartReading {
    SmartReading {
        time_ns,
        target: label.to_string(),
        phase: phase.to_string(),
        when: when.to_string(),
        device: device.clone(),
        available: false,
        note: Some(why.to_string()),
        model: None,
        temperature_c: None,
        nvme: None,
    }
}

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
                let same = |o: &SmartReading| {
                    (o.time_ns, &o.target, &o.phase, &o.when)
                        == (r.time_ns, &r.target, &r.phase, &r.when)
                };
                if !out.iter().any(same) {
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

    /// The feed's reading of target `i` at `time_ns`, `c` °C, with an NVMe record whose TMT1
    /// count is `tmt1`.
    fn polled(i: usize, time_ns: i64, c: f64, tmt1: u64) -> DriveReading {
        DriveReading {
            target_index: i,
            target: format!("t{i}"),
            time_ns,
            device: format!("/dev/sd{}", (b'a' + i as u8) as char),
            device_type: Some("sntasmedia".into()),
            model: Some("X5".into()),
            temperature_c: Some(c),
            thermal_kind: Some("nvme"),
            thermal: Some(DriveLogRecord {
                tmt1_transitions: Some(tmt1),
                ..Default::default()
            }),
        }
    }

    fn target(i: usize, polled: Option<Option<String>>) -> PhaseTarget {
        PhaseTarget {
            label: format!("t{i}"),
            polled,
            not_polled: format!("target is not on a block device (t{i}); no SMART"),
        }
    }

    #[test]
    fn before_is_the_latest_reading_and_after_the_first_one_past_the_end() {
        let mut p = PhaseReadings::new(vec![target(0, Some(Some("/dev/sda".into())))]);
        // The write phase starts before the drive's first reading: it takes that one.
        p.phase(0, "write", "before", 5);
        p.feed(DriveData::Reading(&polled(0, 10, 40.0, 1)));
        p.feed(DriveData::Reading(&polled(0, 20, 45.0, 2)));
        p.phase(0, "write", "after", 25);
        p.phase(0, "read", "before", 26);
        assert_eq!(
            p.taken(),
            2,
            "the read's before is the 20 ns reading, at once"
        );
        // The write's after waits for the next reading; the last is the one after the stop.
        p.feed(DriveData::Reading(&polled(0, 30, 47.0, 3)));
        p.phase(0, "read", "after", 35);
        p.feed(DriveData::Reading(&polled(0, 40, 44.0, 3)));
        let kept = p.finish();
        let got: Vec<(&str, &str, i64, Option<f64>)> = kept
            .iter()
            .map(|r| {
                (
                    r.phase.as_str(),
                    r.when.as_str(),
                    r.time_ns,
                    r.temperature_c,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("write", "before", 10, Some(40.0)),
                ("read", "before", 20, Some(45.0)),
                ("write", "after", 30, Some(47.0)),
                ("read", "after", 40, Some(44.0)),
            ]
        );
        let r = &kept[0];
        assert!(r.available);
        assert_eq!(r.device.as_deref(), Some("/dev/sda"));
        assert_eq!(r.model.as_deref(), Some("X5"));
        assert_eq!(
            r.note.as_deref(),
            Some("read through USB bridge type sntasmedia")
        );
        assert_eq!(
            r.nvme.as_ref().unwrap().thermal_temp1_transition_count,
            Some(1)
        );
    }

    #[test]
    fn a_drive_that_gives_no_reading_says_why_at_each_phase() {
        let mut p = PhaseReadings::new(vec![
            target(0, None),
            target(1, Some(Some("/dev/vdb".into()))),
        ]);
        p.phase(0, "write", "before", 5);
        p.phase(1, "write", "before", 5);
        // Detection finds no temperature on the second: its waiting reading says so.
        let why = "a virtio virtual disk, which has no SMART: /dev/vdb: …";
        p.feed(DriveData::Unanswered {
            target_index: 1,
            why,
        });
        p.phase(0, "write", "after", 9);
        p.phase(1, "write", "after", 9);
        let kept = p.finish();
        assert_eq!(kept.len(), 4, "{kept:#?}");
        assert!(kept
            .iter()
            .all(|r| !r.available && r.temperature_c.is_none()));
        for r in &kept {
            let (device, note) = if r.target == "t0" {
                (None, "target is not on a block device (t0); no SMART")
            } else {
                (Some("/dev/vdb"), why)
            };
            assert_eq!(
                (r.device.as_deref(), r.note.as_deref()),
                (device, Some(note))
            );
            assert_eq!(r.time_ns, if r.when == "before" { 5 } else { 9 });
        }
    }

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
