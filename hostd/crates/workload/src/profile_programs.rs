//! The profile sections of the adaptive workloads (issue #12): `[cache_recovery]`,
//! `[paced_sweep]` and the `duration` of a `files` profile. Kept apart from
//! `profile.rs` so the parser there only names them; their checks live here.

use crate::units::ByteSize;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::time::Duration;

/// A duration written the way people write it (`"8h"`, `"90s"`, `"1h 30m"`),
/// parsed with `humantime`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationText(pub Duration);

impl DurationText {
    /// Seconds.
    pub fn secs_f64(self) -> f64 {
        self.0.as_secs_f64()
    }
}

impl<'de> Deserialize<'de> for DurationText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_duration(text.trim())
            .map(DurationText)
            .map_err(|e| {
                serde::de::Error::custom(format!(
                    "`{text}` is not a duration ({e}; write e.g. \"90s\", \"15m\", \"8h\")"
                ))
            })
    }
}

impl Serialize for DurationText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&humantime::format_duration(self.0).to_string())
    }
}

/// `kind = "cache-recovery"`: write until the fast stage ends, idle, write again.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheRecoverySpec {
    /// Each burst is written as files of this size; a drop is found (and the
    /// bytes written at the fast rate are resolved) to within one chunk.
    pub chunk: ByteSize,
    /// A burst ends after this many bytes even without a drop (the fallback
    /// when the drive has no fast stage this test can exhaust).
    pub limit: ByteSize,
    /// The idle times between bursts, in order (`["5s", "15s", …]`).
    pub pauses: Vec<DurationText>,
    /// A chunk slower than `(1 − drop_fraction)` × the burst's fast rate is
    /// slow; two slow chunks in a row end the burst (default 0.3).
    #[serde(default = "default_drop_fraction")]
    pub drop_fraction: f64,
}

/// `kind = "paced-sweep"`: measure the unthrottled rate, then write at
/// fractions of it, each for a set time.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacedSweepSpec {
    /// Files of this size make up each step (rates are checked per file).
    pub chunk: ByteSize,
    /// How long each step (and the first, unpaced one) writes.
    pub step_time: DurationText,
    /// The paced rates as percentages of the unthrottled rate, in order.
    pub percents: Vec<f64>,
    /// A step is held when every file reached at least `(1 − tolerance)` ×
    /// its paced rate (default 0.1).
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// Stop the sweep at the first step not held (default true).
    #[serde(default = "yes")]
    pub stop_at_first_miss: bool,
}

fn default_drop_fraction() -> f64 {
    0.3
}
fn default_tolerance() -> f64 {
    0.1
}
fn yes() -> bool {
    true
}

/// Longest pause or step, and longest duration run: 30 days.
const MAX_SECONDS: f64 = 30.0 * 86_400.0;

fn check_seconds(d: DurationText, what: &str, allow_zero: bool) -> Result<(), String> {
    let s = d.secs_f64();
    if (!allow_zero && s <= 0.0) || s > MAX_SECONDS {
        return Err(format!(
            "{what} = \"{}\" must be {} and at most 30 days",
            humantime::format_duration(d.0),
            if allow_zero { "≥ 0" } else { "> 0" }
        ));
    }
    Ok(())
}

fn check_chunk(chunk: ByteSize, block: ByteSize, section: &str) -> Result<(), String> {
    if chunk.0 < block.0 || !chunk.0.is_multiple_of(block.0) {
        return Err(format!(
            "[{section}] chunk = \"{chunk}\" must be a positive multiple of [io] block_size {block}"
        ));
    }
    Ok(())
}

impl CacheRecoverySpec {
    /// Checks values that TOML types cannot express.
    pub fn validate(&self, block: ByteSize) -> Result<(), String> {
        check_chunk(self.chunk, block, "cache_recovery")?;
        if self.limit.0 < 4 * self.chunk.0 {
            return Err(format!(
                "[cache_recovery] limit = \"{}\" must be at least 4 chunks ({})",
                self.limit,
                ByteSize(4 * self.chunk.0)
            ));
        }
        if self.limit.0 / self.chunk.0 > 100_000 {
            return Err(format!(
                "[cache_recovery] limit = \"{}\" is more than 100000 chunks of {}",
                self.limit, self.chunk
            ));
        }
        if self.pauses.is_empty() || self.pauses.len() > 100 {
            return Err("[cache_recovery] pauses must list 1 to 100 idle times".into());
        }
        for p in &self.pauses {
            check_seconds(*p, "[cache_recovery] pauses", false)?;
        }
        if !(self.drop_fraction > 0.05 && self.drop_fraction < 0.95) {
            return Err(format!(
                "[cache_recovery] drop_fraction = {} must be between 0.05 and 0.95",
                self.drop_fraction
            ));
        }
        Ok(())
    }
}

impl PacedSweepSpec {
    /// Checks values that TOML types cannot express.
    pub fn validate(&self, block: ByteSize) -> Result<(), String> {
        check_chunk(self.chunk, block, "paced_sweep")?;
        check_seconds(self.step_time, "[paced_sweep] step_time", false)?;
        if self.percents.is_empty() || self.percents.len() > 100 {
            return Err("[paced_sweep] percents must list 1 to 100 rates".into());
        }
        for p in &self.percents {
            if !(*p > 0.0 && *p <= 200.0) {
                return Err(format!(
                    "[paced_sweep] percents: {p} must be in (0, 200] (% of the unthrottled rate)"
                ));
            }
        }
        if !(self.tolerance > 0.0 && self.tolerance < 0.5) {
            return Err(format!(
                "[paced_sweep] tolerance = {} must be between 0 and 0.5",
                self.tolerance
            ));
        }
        Ok(())
    }
}

/// Checks a `[files] duration`.
pub fn validate_duration(d: DurationText) -> Result<(), String> {
    check_seconds(d, "[files] duration", false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct T {
        d: DurationText,
    }

    #[test]
    fn durations_parse_the_way_people_write_them() {
        let t: T = toml::from_str("d = \"1h 30m\"").unwrap();
        assert_eq!(t.d.0, Duration::from_secs(5400));
        let t: T = toml::from_str("d = \"8h\"").unwrap();
        assert_eq!(t.d.secs_f64(), 28_800.0);
    }

    #[test]
    fn an_unparsable_duration_names_its_value() {
        let e = toml::from_str::<T>("d = \"eight hours\"")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("`eight hours` is not a duration"), "{e}");
    }
}
