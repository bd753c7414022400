//! Byte sizes written the way people write them: `2MB`, `2 GiB`, `128KiB`, `4096`.
//!
//! Decimal prefixes (kB, MB, GB, TB) are powers of 1000, binary ones (KiB, MiB,
//! GiB, TiB) powers of 1024, as disk makers and Stibium use them.

use serde::{Deserialize, Deserializer};
use std::fmt;

/// A number of bytes that parses from `"2MB"`-style strings or plain integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, serde::Serialize)]
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
            if b >= m && b.is_multiple_of(m) {
                return write!(f, "{}{}", b / m, u);
            }
        }
        write!(f, "{b}B")
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(ByteSize(n)),
            Raw::Text(s) => parse_size(&s)
                .map(ByteSize)
                .map_err(serde::de::Error::custom),
        }
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
}
