//! The checks of the adaptive workloads' profile sections (issue #12): `[cache_recovery]`,
//! `[paced_sweep]` and the `duration` of a `files` profile (their types are
//! [`hostd_records::profile`]'s). Kept apart from `profile.rs` so its validation only
//! names them.

use hostd_records::profile::{CacheRecoverySpec, PacedSweepSpec};
use hostd_records::units::ByteSize;
use hostd_records::units::DurationText;

/// Longest pause or step, and longest duration run: 30 days.
const MAX_SECONDS: f64 = 30.0 * 86_400.0;

fn check_seconds(d: DurationText, what: &str, allow_zero: bool) -> Result<(), String> {
    let s = d.secs_f64();
    if (!allow_zero && s <= 0.0) || s > MAX_SECONDS {
        return Err(format!(
            "{what} = \"{d}\" must be {} and at most 30 days",
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

/// Checks a `[cache_recovery]` section's values that TOML types cannot express.
pub fn validate_cache_recovery(spec: &CacheRecoverySpec, block: ByteSize) -> Result<(), String> {
    check_chunk(spec.chunk, block, "cache_recovery")?;
    if spec.limit.0 < 4 * spec.chunk.0 {
        return Err(format!(
            "[cache_recovery] limit = \"{}\" must be at least 4 chunks ({})",
            spec.limit,
            ByteSize(4 * spec.chunk.0)
        ));
    }
    if spec.limit.0 / spec.chunk.0 > 100_000 {
        return Err(format!(
            "[cache_recovery] limit = \"{}\" is more than 100000 chunks of {}",
            spec.limit, spec.chunk
        ));
    }
    if spec.pauses.is_empty() || spec.pauses.len() > 100 {
        return Err("[cache_recovery] pauses must list 1 to 100 idle times".into());
    }
    for p in &spec.pauses {
        check_seconds(*p, "[cache_recovery] pauses", false)?;
    }
    if !(spec.drop_fraction > 0.05 && spec.drop_fraction < 0.95) {
        return Err(format!(
            "[cache_recovery] drop_fraction = {} must be between 0.05 and 0.95",
            spec.drop_fraction
        ));
    }
    Ok(())
}

/// Checks a `[paced_sweep]` section's values that TOML types cannot express.
pub fn validate_paced_sweep(spec: &PacedSweepSpec, block: ByteSize) -> Result<(), String> {
    check_chunk(spec.chunk, block, "paced_sweep")?;
    check_seconds(spec.step_time, "[paced_sweep] step_time", false)?;
    if spec.percents.is_empty() || spec.percents.len() > 100 {
        return Err("[paced_sweep] percents must list 1 to 100 rates".into());
    }
    for p in &spec.percents {
        if !(*p > 0.0 && *p <= 200.0) {
            return Err(format!(
                "[paced_sweep] percents: {p} must be in (0, 200] (% of the unthrottled rate)"
            ));
        }
    }
    if !(spec.tolerance > 0.0 && spec.tolerance < 0.5) {
        return Err(format!(
            "[paced_sweep] tolerance = {} must be between 0 and 0.5",
            spec.tolerance
        ));
    }
    Ok(())
}

/// Checks a `[files] duration`.
pub fn validate_duration(d: DurationText) -> Result<(), String> {
    check_seconds(d, "[files] duration", false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::time::Duration;

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
