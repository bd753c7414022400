//! The conditions a run was made under that hostd cannot see for itself: the user's notes
//! and `KEY=VALUE` tags (`hostd run --note … --tag …`: the enclosure, the cable, the port,
//! a fan), and the starting state hostd set before the measured part (trim, rest). The
//! manifest and the summary carry them, the report shows them, and the tags become
//! InfluxDB tags on every point of the run.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Tag keys hostd's own points carry: a user tag of the same name would overwrite them.
pub const RESERVED_TAG_KEYS: &[&str] = &["rig", "run", "target", "phase", "probe", "time"];
/// Longest tag key or value, characters (InfluxDB's series key must stay small).
pub const MAX_TAG_LEN: usize = 128;

/// What the user said about a run and what hostd did to the targets before measuring.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Conditions {
    /// Free-text notes, in the order given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// `KEY=VALUE` tags (InfluxDB tags of every point of the run).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// The starting state each target was brought to (trim, rest), one per target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preparation: Vec<Preparation>,
    /// How the I/O engine waited for completions, the method behind every latency and
    /// QD1 figure; `None` in runs made before hostd recorded it (those polled first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<WaitMode>,
}

/// How the I/O engine waited for its completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitMode {
    /// Asleep in the kernel at once, as fio's io_uring engine waits by default: the
    /// figures mean what fio's and CrystalDiskMark's mean.
    Sleep,
    /// Polling for up to 30 µs before sleeping (`hostd run --poll`, profile `io.poll`):
    /// faster at QD1 on fast devices, at more CPU; not comparable with fio's defaults.
    Poll,
}

impl WaitMode {
    /// One line for the summary and the report.
    pub fn describe(self) -> &'static str {
        match self {
            WaitMode::Sleep => {
                "completions waited for asleep in the kernel, as fio's io_uring engine waits by default"
            }
            WaitMode::Poll => {
                "completions POLLED for (--poll): up to 30 µs without sleeping before each wait; \
                 QD1 latency and IOPS are not comparable with fio's or CrystalDiskMark's defaults"
            }
        }
    }
}

impl Conditions {
    /// True when there is nothing to record.
    pub fn is_empty(&self) -> bool {
        self.notes.is_empty()
            && self.tags.is_empty()
            && self.preparation.is_empty()
            && self.wait.is_none()
    }

    /// Notes and tags from the command line's `--note` and `--tag KEY=VALUE` arguments,
    /// refusing a tag InfluxDB or hostd's own tags cannot take (the error names key and value).
    pub fn from_args(notes: &[String], tags: &[String]) -> Result<Conditions, String> {
        let mut c = Conditions {
            notes: notes.to_vec(),
            ..Conditions::default()
        };
        for t in tags {
            let (key, value) = t
                .split_once('=')
                .ok_or_else(|| format!("--tag {t:?}: give KEY=VALUE (e.g. enclosure=Orico-L)"))?;
            check_tag(key, value)?;
            if let Some(old) = c.tags.insert(key.to_string(), value.to_string()) {
                return Err(format!(
                    "--tag key {key:?} is given twice (values {old:?} and {value:?})"
                ));
            }
        }
        Ok(c)
    }

    /// The conditions of a resumed session: the run's notes and tags (its preparation was
    /// for its first session), then this session's: its notes added, its tags added. A
    /// tag the run has keeps its value (every point of the run carries it), so giving it
    /// another is refused, naming both.
    pub fn resumed(run: &Conditions, session: Conditions) -> Result<Conditions, String> {
        let mut c = Conditions {
            notes: run.notes.clone(),
            tags: run.tags.clone(),
            preparation: session.preparation,
            wait: session.wait,
        };
        c.notes.extend(session.notes);
        for (key, value) in session.tags {
            match c.tags.get(&key) {
                Some(old) if *old != value => {
                    return Err(format!(
                        "--tag {key}={value}: the run being resumed has {key}={old}, and every point of a run carries the same tags; resume without it or with {key}={old}"
                    ))
                }
                _ => {
                    c.tags.insert(key, value);
                }
            }
        }
        Ok(c)
    }

    /// One line per note, tag and preparation step, and one if the engine polled, for the
    /// terminal summary.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.tags.is_empty() {
            let tags: Vec<String> = self.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push(format!("tags: {}", tags.join(" ")));
        }
        out.extend(self.notes.iter().map(|n| format!("note: {n}")));
        for p in &self.preparation {
            out.push(format!("{}: {}", p.target, p.describe()));
        }
        // The default (fio's way) goes without saying on the terminal; polling must not.
        if let Some(w @ WaitMode::Poll) = self.wait {
            out.push(format!("engine: {}", w.describe()));
        }
        out
    }
}

/// Refuses a tag key or value InfluxDB cannot take or that would clash with hostd's own
/// tags; the error names the key and the value.
pub fn check_tag(key: &str, value: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("--tag {key}={value}: {why}"));
    if key.is_empty() {
        return bad("the key is empty");
    }
    if key.starts_with('_') {
        return bad("InfluxDB reserves keys that begin with `_` (e.g. _measurement, _field)");
    }
    if RESERVED_TAG_KEYS.contains(&key) {
        return bad(&format!(
            "`{key}` is one of hostd's own tags ({}); choose another key",
            RESERVED_TAG_KEYS.join(", ")
        ));
    }
    if !key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
    {
        return bad("a key may hold only letters, digits, `_`, `-` and `.` (a Flux column name)");
    }
    if value.is_empty() {
        return bad("the value is empty (InfluxDB drops a tag without a value)");
    }
    if value.chars().any(char::is_control) {
        return bad("the value holds a control character (line break, tab)");
    }
    if value.ends_with('\\') {
        return bad("the value ends in a backslash, which line protocol cannot carry");
    }
    if key.chars().count() > MAX_TAG_LEN || value.chars().count() > MAX_TAG_LEN {
        return bad(&format!(
            "keys and values are at most {MAX_TAG_LEN} characters"
        ));
    }
    Ok(())
}

/// The starting state one target was brought to before the measured part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preparation {
    /// Target label.
    pub target: String,
    /// The trim, when one was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<TrimOutcome>,
    /// The rest, when one was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rest: Option<RestOutcome>,
}

impl Preparation {
    /// One line: what was done and what could not be.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = &self.trim {
            parts.push(match t {
                TrimOutcome::Done {
                    method,
                    bytes_trimmed,
                    seconds,
                } => format!(
                    "trimmed with {method}{} in {seconds:.1} s",
                    bytes_trimmed
                        .map(|b| format!(" ({:.1} MB reported)", b as f64 / 1e6))
                        .unwrap_or_default()
                ),
                TrimOutcome::NotAvailable { reason } => format!("trim not available: {reason}"),
                TrimOutcome::Failed { method, reason } => {
                    format!("trim ({method}) failed: {reason}")
                }
            });
        }
        if let Some(r) = &self.rest {
            parts.push(match r.until {
                RestUntil::Time => format!("rested {:.1} s", r.waited_s),
                RestUntil::Idle if r.idle => format!(
                    "rested {:.1} s until the device was idle for {:.0} s",
                    r.waited_s, r.idle_window_s
                ),
                RestUntil::Idle => format!(
                    "rested {:.1} s; the device was NOT idle for {:.0} s before the timeout{}",
                    r.waited_s,
                    r.idle_window_s,
                    r.note
                        .as_ref()
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default()
                ),
            });
        }
        parts.join("; ")
    }
}

/// What a trim did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TrimOutcome {
    /// The free space (or the whole raw device) was trimmed.
    Done {
        /// How: `FITRIM` (fstrim), `BLKDISCARD` (blkdiscard), ….
        method: String,
        /// Bytes the kernel reported trimmed, where it reports them.
        bytes_trimmed: Option<u64>,
        /// How long it took.
        seconds: f64,
    },
    /// This OS or target has no trim hostd can ask for.
    NotAvailable {
        /// Why.
        reason: String,
    },
    /// Asked for, but refused by the filesystem or device.
    Failed {
        /// What was tried.
        method: String,
        /// What the OS said.
        reason: String,
    },
}

/// What a rest waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestUntil {
    /// A set time.
    Time,
    /// The device's I/O counters unchanged for a window, with a timeout.
    Idle,
}

/// What a rest did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestOutcome {
    /// What it waited for.
    pub until: RestUntil,
    /// Seconds waited.
    pub waited_s: f64,
    /// For [`RestUntil::Idle`]: the window the counters had to stay unchanged, s.
    #[serde(default)]
    pub idle_window_s: f64,
    /// For [`RestUntil::Idle`]: whether the device was idle before the timeout.
    #[serde(default)]
    pub idle: bool,
    /// Why idleness could not be watched, if it could not (then the rest is a set time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_and_tags_are_taken_from_the_arguments() {
        let c = Conditions::from_args(
            &["fan on the left".into()],
            &["enclosure=Orico-L".into(), "cable=TB4 0.8m".into()],
        )
        .unwrap();
        assert_eq!(c.notes, ["fan on the left"]);
        assert_eq!(c.tags["enclosure"], "Orico-L");
        assert_eq!(c.tags["cable"], "TB4 0.8m");
        assert_eq!(c.lines()[0], "tags: cable=TB4 0.8m enclosure=Orico-L");
    }

    #[test]
    fn a_resumed_session_keeps_the_runs_notes_and_tags_and_adds_its_own() {
        let args = |notes: &[&str], tags: &[&str]| {
            let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
            Conditions::from_args(&s(notes), &s(tags)).unwrap()
        };
        let mut run = args(&["fan on"], &["enclosure=Orico-L"]);
        run.preparation.push(Preparation {
            target: "t0".into(),
            trim: None,
            rest: None,
        });
        let c = Conditions::resumed(&run, args(&["after the power cut"], &["cable=TB4"])).unwrap();
        assert_eq!(c.notes, ["fan on", "after the power cut"]);
        assert_eq!(c.tags["enclosure"], "Orico-L");
        assert_eq!(c.tags["cable"], "TB4");
        assert!(c.preparation.is_empty(), "the first session's preparation");
        // The same tag again is fine; another value is refused, naming both.
        let same = Conditions::resumed(&run, args(&[], &["enclosure=Orico-L"])).unwrap();
        assert_eq!(same.tags.len(), 1);
        let e = Conditions::resumed(&run, args(&[], &["enclosure=Sabrent"])).unwrap_err();
        assert!(
            e.contains("enclosure=Sabrent") && e.contains("enclosure=Orico-L"),
            "{e}"
        );
    }

    #[test]
    fn a_tag_influxdb_cannot_take_is_refused_naming_key_and_value() {
        for (arg, why) in [
            ("_measurement=x", "reserves"),
            ("run=mine", "hostd's own tags"),
            ("en closure=x", "only letters"),
            ("enclosure=", "value is empty"),
            ("enclosure=a\nb", "control character"),
            ("enclosure=a\\", "backslash"),
            ("=x", "key is empty"),
        ] {
            let e = Conditions::from_args(&[], &[arg.to_string()]).unwrap_err();
            assert!(e.contains(why), "{arg}: {e}");
            assert!(e.contains(&format!("--tag {arg}")), "{arg}: {e}");
        }
        let e = Conditions::from_args(&[], &["enclosure".into()]).unwrap_err();
        assert!(e.contains("KEY=VALUE"), "{e}");
        let e = Conditions::from_args(&[], &["a=1".into(), "a=2".into()]).unwrap_err();
        assert!(e.contains("twice"), "{e}");
    }

    #[test]
    fn empty_conditions_are_left_out_of_json_and_read_back_as_empty() {
        let c: Conditions = serde_json::from_str("{}").unwrap();
        assert!(c.is_empty());
        assert_eq!(serde_json::to_string(&c).unwrap(), "{}");
    }
}
