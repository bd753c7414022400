//! The units a profile is written in: byte sizes (`2MB`, `2 GiB`, `128KiB`, `4096`) and
//! durations (`"8h"`, `"90s"`, `"1h 30m"`). Their serde forms are the profile's (TOML in
//! `fixtures/profiles/`, JSON in `manifest.json`), so they live with the record types.
//!
//! Decimal prefixes (kB, MB, GB, TB) are powers of 1000, binary ones (KiB, MiB, GiB, TiB)
//! powers of 1024, as disk makers and Stibium use them.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// A number of bytes that parses from `"2MB"`-style strings or plain integers, and is
/// written as the integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize)]
#[serde(transparent)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// The number of bytes.
    pub fn bytes(self) -> u64 {
        self.0
    }
}

/// Parses a size such as `2MB`, `1.5 GiB`, `4096` or `128k` into bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num: String = num.chars().filter(|c| *c != '_').collect();
    if num.is_empty() {
        return Err(format!(
            "`{text}` is not a size (expected e.g. 2MB, 1GiB, 4096)"
        ));
    }
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a size (expected e.g. 2MB, 1GiB, 4096)"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "t" | "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        other => {
            return Err(format!(
                "`{text}`: unknown unit `{other}` (use B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)"
            ))
        }
    };
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(bytes.round() as u64)
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        const UNITS: [(u64, &str); 8] = [
            (1 << 40, "TiB"),
            (1_000_000_000_000, "TB"),
            (1 << 30, "GiB"),
            (1_000_000_000, "GB"),
            (1 << 20, "MiB"),
            (1_000_000, "MB"),
            (1 << 10, "KiB"),
            (1_000, "kB"),
        ];
        for (m, u) in UNITS {
            if b >= m && b % m == 0 {
                return write!(f, "{}{}", b / m, u);
            }
        }
        write!(f, "{b}B")
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// Integer bytes or a size as text; anything else is named as what it is.
        struct SizeVisitor;

        impl serde::de::Visitor<'_> for SizeVisitor {
            type Value = ByteSize;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a size: whole bytes (1048576) or text such as \"1MiB\" or \"2GB\"")
            }

            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<ByteSize, E> {
                Ok(ByteSize(n))
            }

            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<ByteSize, E> {
                u64::try_from(n)
                    .map(ByteSize)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(n), &self))
            }

            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<ByteSize, E> {
                parse_size(s).map(ByteSize).map_err(E::custom)
            }
        }

        d.deserialize_any(SizeVisitor)
    }
}

/// A duration written the way people write it (`"8h"`, `"90s"`, `"1h 30m"`), parsed and
/// written with `humantime`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationText(pub Duration);

impl DurationText {
    /// Seconds.
    pub fn secs_f64(self) -> f64 {
        self.0.as_secs_f64()
    }
}

impl fmt::Display for DurationText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", humantime::format_duration(self.0))
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
        s.collect_str(self)
    }
}

/// Formats bytes with a decimal unit, e.g. `1.60 GB`.
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e12 {
        format!("{:.2} TB", b / 1e12)
    } else if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_and_binary_units_parse() {
        assert_eq!(parse_size("2MB").unwrap(), 2_000_000);
        assert_eq!(parse_size("2 GB").unwrap(), 2_000_000_000);
        assert_eq!(parse_size("1MiB").unwrap(), 1 << 20);
        assert_eq!(parse_size("128KiB").unwrap(), 128 << 10);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("1.5GiB").unwrap(), 3 << 29);
        assert_eq!(parse_size("100_000").unwrap(), 100_000);
    }

    #[test]
    fn garbage_sizes_are_rejected_with_the_text() {
        let e = parse_size("lots").unwrap_err();
        assert!(e.contains("lots"), "{e}");
        let e = parse_size("5 parsecs").unwrap_err();
        assert!(e.contains("parsecs"), "{e}");
    }

    #[test]
    fn display_round_trips() {
        for s in ["2MB", "1GiB", "128KiB", "100GB", "4097B"] {
            let b = parse_size(s).unwrap();
            assert_eq!(parse_size(&ByteSize(b).to_string()).unwrap(), b);
        }
    }

    #[test]
    fn sizes_read_as_text_or_integer_and_write_as_the_integer() {
        let b: ByteSize = serde_json::from_str("\"1MiB\"").unwrap();
        assert_eq!(b, ByteSize(1 << 20));
        assert_eq!(serde_json::to_string(&b).unwrap(), "1048576");
        assert_eq!(serde_json::from_str::<ByteSize>("1048576").unwrap(), b);
    }

    #[test]
    fn a_value_that_is_no_size_is_named_with_what_a_size_is() {
        for (json, what) in [
            ("1048576.0", "floating point `1048576"),
            ("-1", "integer `-1`"),
            ("true", "boolean `true`"),
        ] {
            let e = serde_json::from_str::<ByteSize>(json)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(what) && e.contains("expected a size: whole bytes"),
                "{json}: {e}"
            );
        }
        let e = serde_json::from_str::<ByteSize>("\"5 parsecs\"").unwrap_err();
        assert!(e.to_string().contains("parsecs"), "{e}");
    }

    #[test]
    fn durations_write_back_as_they_read() {
        let d: DurationText = serde_json::from_str("\"1h 30m\"").unwrap();
        assert_eq!(d.0, Duration::from_secs(5400));
        for d in [d, DurationText(Duration::new(90, 1_500))] {
            let text = serde_json::to_string(&d).unwrap();
            assert_eq!(
                serde_json::from_str::<DurationText>(&text).unwrap(),
                d,
                "{text}"
            );
        }
    }
}
