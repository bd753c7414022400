//! InfluxDB line protocol: the [`Point`] type, its builder methods and the encoder.
//!
//! Escaping follows the InfluxDB 2.x line-protocol reference:
//! measurement — `,` and space; tag keys, tag values and field keys — `,`, `=` and space;
//! string field values — `"` and `\`. Values that line protocol cannot carry (line breaks in
//! names, non-finite floats, a name ending in a backslash) are refused with a [`LineError`]
//! instead of being silently altered.

use std::fmt::Write as _;

/// A field value of a [`Point`].
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    /// 64-bit float (encoded as written by Rust's shortest round-trip formatting).
    Float(f64),
    /// Signed 64-bit integer (`123i`).
    Int(i64),
    /// Unsigned 64-bit integer (`123u`).
    UInt(u64),
    /// Boolean (`true` / `false`).
    Bool(bool),
    /// UTF-8 string (quoted, `"` and `\` escaped).
    Str(String),
}

/// `From` for every Rust type a field takes, each into its variant (widened losslessly).
macro_rules! field_value_from {
    ($($t:ty => $variant:ident),+ $(,)?) => {
        $(
            impl From<$t> for FieldValue {
                fn from(v: $t) -> Self {
                    FieldValue::$variant(v.into())
                }
            }
        )+
    };
}

field_value_from!(
    f64 => Float,
    f32 => Float,
    i64 => Int,
    i32 => Int,
    u64 => UInt,
    u32 => UInt,
    bool => Bool,
    &str => Str,
    String => Str,
);

/// Why a point cannot be written as line protocol.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LineError {
    /// The measurement name is empty.
    #[error("measurement name is empty")]
    EmptyMeasurement,
    /// The point has no fields (InfluxDB needs at least one).
    #[error("point in measurement '{0}' has no fields")]
    NoFields(String),
    /// A tag or field key is empty.
    #[error("empty {kind} key in measurement '{measurement}'")]
    EmptyKey {
        /// "tag" or "field".
        kind: &'static str,
        /// The point's measurement.
        measurement: String,
    },
    /// A name or tag value contains a line break, which line protocol cannot carry.
    #[error("{what} {text:?} contains a line break, which line protocol cannot carry")]
    LineBreak {
        /// What the text is (measurement, tag key, …).
        what: &'static str,
        /// The offending text.
        text: String,
    },
    /// A name or tag value ends in a backslash, which would escape the next separator.
    #[error("{what} {text:?} ends in a backslash, which line protocol cannot carry")]
    TrailingBackslash {
        /// What the text is.
        what: &'static str,
        /// The offending text.
        text: String,
    },
    /// A float field is NaN or infinite.
    #[error("field '{field}' of measurement '{measurement}' is not a finite number ({value})")]
    NonFinite {
        /// The point's measurement.
        measurement: String,
        /// The field key.
        field: String,
        /// The value.
        value: f64,
    },
}

/// One InfluxDB point: measurement, tags, fields and a timestamp in Unix nanoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    measurement: String,
    tags: Vec<(String, String)>,
    fields: Vec<(String, FieldValue)>,
    timestamp_ns: Option<i64>,
}

impl Point {
    /// Starts a point in `measurement`.
    pub fn new(measurement: impl Into<String>) -> Self {
        Point {
            measurement: measurement.into(),
            tags: Vec::new(),
            fields: Vec::new(),
            timestamp_ns: None,
        }
    }

    /// Adds (or replaces) a tag. A tag with an empty value is left out when encoding,
    /// as InfluxDB treats a missing tag and an empty one alike.
    pub fn tag(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.set_tag(key, value);
        self
    }

    /// [`Point::tag`] in place.
    pub fn set_tag(&mut self, key: impl Into<String>, value: impl Into<String>) {
        let key = key.into();
        let value = value.into();
        match self.tags.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.tags.push((key, value)),
        }
    }

    /// Adds (or replaces) a field.
    pub fn field(mut self, key: impl Into<String>, value: impl Into<FieldValue>) -> Self {
        self.set_field(key, value);
        self
    }

    /// [`Point::field`] in place.
    pub fn set_field(&mut self, key: impl Into<String>, value: impl Into<FieldValue>) {
        let key = key.into();
        let value = value.into();
        match self.fields.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.fields.push((key, value)),
        }
    }

    /// Sets the timestamp (Unix nanoseconds).
    pub fn timestamp_ns(mut self, ns: i64) -> Self {
        self.timestamp_ns = Some(ns);
        self
    }

    /// The measurement name.
    pub fn measurement(&self) -> &str {
        &self.measurement
    }

    /// The tags in insertion order.
    pub fn tags(&self) -> &[(String, String)] {
        &self.tags
    }

    /// The fields in insertion order.
    pub fn fields(&self) -> &[(String, FieldValue)] {
        &self.fields
    }

    /// The timestamp, if set.
    pub fn time_ns(&self) -> Option<i64> {
        self.timestamp_ns
    }

    /// Encodes the point as one line (without the trailing newline).
    pub fn to_line(&self) -> Result<String, LineError> {
        let mut out = String::with_capacity(128);
        self.write_line(&mut out)?;
        Ok(out)
    }

    /// Appends the encoded point (without a trailing newline) to `out`. On error `out` is
    /// left as it was.
    pub fn write_line(&self, out: &mut String) -> Result<(), LineError> {
        self.write_line_timed(out, None)
    }

    /// Like [`Point::write_line`], with the timestamp put on the host's timeline when the
    /// run's records played faster (`playback`, see [`crate::WriterConfig::playback`]).
    pub fn write_line_timed(
        &self,
        out: &mut String,
        playback: Option<&hostd_records::clock::Playback>,
    ) -> Result<(), LineError> {
        let start = out.len();
        let result = self.encode(out, playback);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    fn encode(
        &self,
        out: &mut String,
        playback: Option<&hostd_records::clock::Playback>,
    ) -> Result<(), LineError> {
        if self.measurement.is_empty() {
            return Err(LineError::EmptyMeasurement);
        }
        if self.fields.is_empty() {
            return Err(LineError::NoFields(self.measurement.clone()));
        }
        check_text("measurement", &self.measurement)?;
        escape_into(out, &self.measurement, &[',', ' ']);

        let mut tags: Vec<&(String, String)> =
            self.tags.iter().filter(|(_, v)| !v.is_empty()).collect();
        tags.sort_by(|a, b| a.0.cmp(&b.0));
        for (k, v) in tags {
            self.check_key("tag", k)?;
            check_text("tag value", v)?;
            out.push(',');
            escape_into(out, k, &[',', '=', ' ']);
            out.push('=');
            escape_into(out, v, &[',', '=', ' ']);
        }

        out.push(' ');
        for (i, (k, v)) in self.fields.iter().enumerate() {
            self.check_key("field", k)?;
            if i > 0 {
                out.push(',');
            }
            escape_into(out, k, &[',', '=', ' ']);
            out.push('=');
            match v {
                FieldValue::Float(f) => {
                    if !f.is_finite() {
                        return Err(LineError::NonFinite {
                            measurement: self.measurement.clone(),
                            field: k.clone(),
                            value: *f,
                        });
                    }
                    // Display of f64 is the shortest round-trip form, never exponential.
                    let _ = write!(out, "{f}");
                }
                FieldValue::Int(n) => {
                    let _ = write!(out, "{n}i");
                }
                FieldValue::UInt(n) => {
                    let _ = write!(out, "{n}u");
                }
                FieldValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                FieldValue::Str(s) => {
                    out.push('"');
                    for c in s.chars() {
                        if c == '"' || c == '\\' {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                    out.push('"');
                }
            }
        }

        if let Some(ts) = self.timestamp_ns {
            let ts = playback.map_or(ts, |p| p.real_ns(ts));
            let _ = write!(out, " {ts}");
        }
        Ok(())
    }

    fn check_key(&self, kind: &'static str, key: &str) -> Result<(), LineError> {
        if key.is_empty() {
            return Err(LineError::EmptyKey {
                kind,
                measurement: self.measurement.clone(),
            });
        }
        check_text(
            if kind == "tag" {
                "tag key"
            } else {
                "field key"
            },
            key,
        )
    }
}

fn check_text(what: &'static str, text: &str) -> Result<(), LineError> {
    if text.contains(['\n', '\r']) {
        return Err(LineError::LineBreak {
            what,
            text: text.to_owned(),
        });
    }
    if text.ends_with('\\') {
        return Err(LineError::TrailingBackslash {
            what,
            text: text.to_owned(),
        });
    }
    Ok(())
}

fn escape_into(out: &mut String, text: &str, special: &[char]) {
    for c in text.chars() {
        if special.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_all_field_types_and_sorts_tags() {
        let p = Point::new("probe")
            .tag("run", "r1")
            .tag("rig", "bench")
            .field("power_w", 6.9)
            .field("seq", 42i64)
            .field("bytes", 7u64)
            .field("verified", true)
            .field("note", "ok")
            .timestamp_ns(1_700_000_000_000_000_000);
        assert_eq!(
            p.to_line().unwrap(),
            "probe,rig=bench,run=r1 power_w=6.9,seq=42i,bytes=7u,verified=true,note=\"ok\" 1700000000000000000"
        );
    }

    #[test]
    fn escapes_measurement_tags_fields_and_strings() {
        let p = Point::new("my meas,x=1")
            .tag("tag key,=", "/Volumes/My Disk,a=b")
            .field("field key=", "say \"hi\" c:\\dir")
            .timestamp_ns(1);
        assert_eq!(
            p.to_line().unwrap(),
            r#"my\ meas\,x=1,tag\ key\,\==/Volumes/My\ Disk\,a\=b field\ key\=="say \"hi\" c:\\dir" 1"#
        );
    }

    #[test]
    fn floats_never_use_exponents_and_keep_precision() {
        let p = Point::new("m")
            .field("tiny", 1e-9)
            .field("huge", 1e21)
            .field("whole", 3.0);
        assert_eq!(
            p.to_line().unwrap(),
            "m tiny=0.000000001,huge=1000000000000000000000,whole=3"
        );
        let x = 0.1 + 0.2;
        let line = Point::new("m").field("x", x).to_line().unwrap();
        let text = line.strip_prefix("m x=").unwrap();
        assert_eq!(text.parse::<f64>().unwrap(), x);
    }

    #[test]
    fn empty_tag_values_are_left_out_and_tags_replace() {
        let p = Point::new("m")
            .tag("phase", "")
            .tag("t", "a")
            .tag("t", "b")
            .field("v", 1i64);
        assert_eq!(p.to_line().unwrap(), "m,t=b v=1i");
    }

    #[test]
    fn refuses_what_line_protocol_cannot_carry() {
        assert_eq!(
            Point::new("").field("v", 1i64).to_line(),
            Err(LineError::EmptyMeasurement)
        );
        assert!(matches!(
            Point::new("m").to_line(),
            Err(LineError::NoFields(_))
        ));
        assert!(matches!(
            Point::new("m").field("v", f64::NAN).to_line(),
            Err(LineError::NonFinite { .. })
        ));
        assert!(matches!(
            Point::new("m").field("v", f64::INFINITY).to_line(),
            Err(LineError::NonFinite { .. })
        ));
        assert!(matches!(
            Point::new("m").tag("t", "a\nb").field("v", 1i64).to_line(),
            Err(LineError::LineBreak { .. })
        ));
        assert!(matches!(
            Point::new("m").tag("t", "a\\").field("v", 1i64).to_line(),
            Err(LineError::TrailingBackslash { .. })
        ));
        assert!(matches!(
            Point::new("m").field("", 1i64).to_line(),
            Err(LineError::EmptyKey { kind: "field", .. })
        ));
        assert!(matches!(
            Point::new("m").tag("", "x").field("v", 1i64).to_line(),
            Err(LineError::EmptyKey { kind: "tag", .. })
        ));
    }

    #[test]
    fn failed_encoding_leaves_the_buffer_unchanged() {
        let mut buf = String::from("keep\n");
        let err = Point::new("m")
            .field("a", 1i64)
            .field("b", f64::NAN)
            .write_line(&mut buf);
        assert!(err.is_err());
        assert_eq!(buf, "keep\n");
    }

    #[test]
    fn string_fields_may_hold_line_breaks_and_unicode() {
        let p = Point::new("event").field("text", "a\nb °C");
        assert_eq!(p.to_line().unwrap(), "event text=\"a\nb °C\"");
    }
}
