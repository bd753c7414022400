//! Target specifications from the command line: `DIR[:write|:read|:rw]`,
//! `SCHEME:ARG[:mode]` for registered backends (e.g. `sim:x5-thermal`).

use serde::Serialize;
use std::fmt;
use std::path::PathBuf;

/// What a target does in the measured part of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetMode {
    /// Write the files (measured), no read.
    Write,
    /// Files are written first (unmeasured `prepare` phase), then read (measured).
    Read,
    /// Write, then read back (both measured). The default.
    Rw,
}

impl TargetMode {
    /// Lower-case name as on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetMode::Write => "write",
            TargetMode::Read => "read",
            TargetMode::Rw => "rw",
        }
    }
}

/// One `--target` argument, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetSpec {
    /// The text as given (used as the target's name in records).
    pub label: String,
    /// `dir` for a directory, `raw` for a block device, or a registered scheme (`sim`).
    pub scheme: String,
    /// Directory/device path, or the scheme's argument.
    pub location: String,
    /// What the target does.
    pub mode: TargetMode,
}

impl TargetSpec {
    /// Parses `DIR[:mode]` or `SCHEME:ARG[:mode]`. `schemes` lists the
    /// registered non-directory schemes (a path like `C:` is never a scheme here).
    pub fn parse(text: &str, schemes: &[&str]) -> Result<TargetSpec, String> {
        if text.is_empty() {
            return Err("empty --target".into());
        }
        let (body, mode) = match text.rsplit_once(':') {
            Some((b, "write")) => (b, TargetMode::Write),
            Some((b, "read")) => (b, TargetMode::Read),
            Some((b, "rw")) => (b, TargetMode::Rw),
            _ => (text, TargetMode::Rw),
        };
        if body.is_empty() {
            return Err(format!("--target {text}: no directory before the mode"));
        }
        if let Some((scheme, arg)) = body.split_once(':') {
            if schemes.contains(&scheme) {
                if arg.is_empty() {
                    return Err(format!("--target {text}: `{scheme}:` needs an argument"));
                }
                return Ok(TargetSpec {
                    label: body.to_string(),
                    scheme: scheme.to_string(),
                    location: arg.to_string(),
                    mode,
                });
            }
        }
        Ok(TargetSpec {
            label: body.to_string(),
            scheme: "dir".to_string(),
            location: body.to_string(),
            mode,
        })
    }

    /// The path for `dir`/`raw` targets.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(&self.location)
    }
}

impl fmt::Display for TargetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.label, self.mode.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_with_and_without_mode() {
        let t = TargetSpec::parse("/mnt/x5", &["sim"]).unwrap();
        assert_eq!(
            (t.scheme.as_str(), t.location.as_str(), t.mode),
            ("dir", "/mnt/x5", TargetMode::Rw)
        );
        let t = TargetSpec::parse("/mnt/x5:read", &["sim"]).unwrap();
        assert_eq!((t.location.as_str(), t.mode), ("/mnt/x5", TargetMode::Read));
        let t = TargetSpec::parse("/mnt/a:b:write", &["sim"]).unwrap();
        assert_eq!(
            (t.location.as_str(), t.mode),
            ("/mnt/a:b", TargetMode::Write)
        );
    }

    #[test]
    fn registered_scheme_is_recognised() {
        let t = TargetSpec::parse("sim:x5-thermal:write", &["sim"]).unwrap();
        assert_eq!(
            (t.scheme.as_str(), t.location.as_str(), t.mode),
            ("sim", "x5-thermal", TargetMode::Write)
        );
        let t = TargetSpec::parse("sim:x5", &[]).unwrap();
        assert_eq!(t.scheme, "dir", "unregistered schemes are paths");
        assert!(TargetSpec::parse(":read", &[]).is_err());
        assert!(TargetSpec::parse("sim::rw", &["sim"]).is_err());
    }
}
