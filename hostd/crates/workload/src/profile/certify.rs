//! The `certify` profile kind and its pass/fail `[gates]` (issue #12 item 5).
//!
//! ```toml
//! kind = "certify"
//! [certify]
//! passes = 2            # write + verify-read of every file, this many times
//! fraction = 0.5        # of the free space (of the whole device with --raw-device)
//! file_size = "1GiB"
//! [gates]               # at least one; every one must hold for PASS
//! max_corrupt_bytes = 0
//! min_write_mbps = 100.0
//! min_read_mbps = 150.0
//! max_temperature_c = 70.0
//! max_p999_latency = "50ms"
//! ```
//!
//! The types are [`hostd_records::profile`]'s; their checks are kept here, apart from the
//! other kinds', so that profile.rs grows by a match arm only.

use hostd_records::profile::{CertifySpec, Gates};
use std::time::Duration;

/// The keys `[gates]` accepts, for error messages and docs.
pub const GATE_KEYS: &[&str] = &[
    "max_corrupt_bytes",
    "min_write_mbps",
    "min_read_mbps",
    "max_temperature_c",
    "max_p999_latency",
];

/// The latency gate as a duration (validated at load).
pub fn p999_latency(gates: &Gates) -> Option<Duration> {
    gates
        .max_p999_latency
        .as_deref()
        .and_then(|t| parse_duration(t).ok())
}

/// Parses `"250us"`, `"50ms"`, `"1.5s"`, `"2m"`, `"8h"` (one number, one unit).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("\"{text}\" has no unit (ns, us, ms, s, m, h)"))?;
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("\"{text}\" does not start with a number"))?;
    let scale = match unit.trim() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "\"{text}\": unknown unit \"{other}\" (ns, us, ms, s, m, h)"
            ))
        }
    };
    let secs = value * scale;
    if !secs.is_finite() || secs <= 0.0 || secs > 1e9 {
        return Err(format!("\"{text}\" is not a positive duration"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Checks a certify profile's `[certify]` and `[gates]`; `gates` must be
/// given for certify and only for certify.
pub fn validate(
    is_certify: bool,
    spec: Option<&CertifySpec>,
    gates: Option<&Gates>,
) -> Result<(), String> {
    if !is_certify {
        if spec.is_some() {
            return Err("[certify] is only for kind = \"certify\"".into());
        }
        if gates.is_some() {
            return Err("[gates] are only evaluated for kind = \"certify\"".into());
        }
        return Ok(());
    }
    let c =
        spec.ok_or("kind = \"certify\" needs a [certify] section (passes, fraction, file_size)")?;
    if c.passes == 0 || c.passes > 100 {
        return Err(format!(
            "[certify] passes = {} must be between 1 and 100",
            c.passes
        ));
    }
    if !(c.fraction > 0.0 && c.fraction <= 1.0) {
        return Err(format!(
            "[certify] fraction = {} must be above 0 and at most 1",
            c.fraction
        ));
    }
    if c.file_size.0 < super::ALIGN || c.file_size.0 > 1 << 40 {
        return Err(format!(
            "[certify] file_size = \"{}\" must be between 4 KiB and 1 TiB",
            c.file_size
        ));
    }
    let g = gates.filter(|g| !g.is_empty()).ok_or_else(|| {
        format!(
            "kind = \"certify\" needs a [gates] section with at least one gate ({})",
            GATE_KEYS.join(", ")
        )
    })?;
    for (key, v) in [
        ("min_write_mbps", g.min_write_mbps),
        ("min_read_mbps", g.min_read_mbps),
        ("max_temperature_c", g.max_temperature_c),
    ] {
        if let Some(v) = v {
            if !v.is_finite() || (key != "max_temperature_c" && v < 0.0) {
                return Err(format!("[gates] {key} = {v} is not a usable limit"));
            }
        }
    }
    if let Some(text) = &g.max_p999_latency {
        parse_duration(text)
            .map_err(|e| format!("[gates] max_p999_latency = \"{text}\": not a duration: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::ProfileExt;
    use hostd_records::profile::Profile;

    const BASE: &str = r#"
name = "c"
kind = "certify"
[certify]
passes = 1
fraction = 0.5
file_size = "1MiB"
[io]
block_size = "1MiB"
queue_depth = 4
phases = ["write", "read"]
"#;

    fn err(extra: &str) -> String {
        Profile::parse(&format!("{BASE}{extra}"), "my.toml")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn certify_without_gates_is_refused_naming_the_file_and_the_keys() {
        let e = err("");
        assert!(
            e.contains("my.toml") && e.contains("[gates]") && e.contains("max_corrupt_bytes"),
            "{e}"
        );
        assert!(err("[gates]\n").contains("at least one gate"));
    }

    #[test]
    fn a_gate_naming_an_unknown_metric_is_refused_by_name() {
        let e = err("[gates]\nmax_wobble = 3\n");
        assert!(e.contains("my.toml") && e.contains("max_wobble"), "{e}");
    }

    #[test]
    fn an_unparsable_latency_is_refused_with_key_and_value() {
        let e = err("[gates]\nmax_p999_latency = \"fifty\"\n");
        assert!(
            e.contains("my.toml") && e.contains("max_p999_latency = \"fifty\""),
            "{e}"
        );
    }

    #[test]
    fn a_complete_certify_profile_loads() {
        let p = Profile::parse(&format!("{BASE}[gates]\nmax_corrupt_bytes = 0\n"), "x").unwrap();
        assert_eq!(p.gates.unwrap().max_corrupt_bytes, Some(0));
        Profile::load("certify").unwrap();
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("50ms").unwrap(), Duration::from_millis(50));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_duration("8h").unwrap(), Duration::from_secs(8 * 3600));
        for bad in ["fifty", "50", "ms", "5 parsecs", "-1s", "0s", ""] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
