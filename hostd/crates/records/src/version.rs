//! Format versions. JSON files carry their own `format_version`; the CSV files' versions are
//! recorded in `manifest.json` `formats` (file name → version), since a version line would
//! break every CSV tool. A file or an entry without a version is version 1. A reader refuses
//! a version newer than its own with [`RecordError::NewerFormat`]; an older one it reads.

use crate::error::{RecordError, Result};
use crate::run_files::{Version, RUN_FILES};
use std::collections::BTreeMap;
use std::path::Path;

/// The version each run-directory file whose version the manifest keeps is written in by
/// this build, keyed by file name (what `manifest.json` `formats` records): the
/// [`Version::InManifest`] files of [`RUN_FILES`].
pub fn current() -> BTreeMap<String, u32> {
    RUN_FILES
        .iter()
        .filter_map(|f| match f.version {
            Version::InManifest(v) => Some((f.name.to_string(), v)),
            _ => None,
        })
        .collect()
}

/// Checks the version `dir/manifest.json` records for the CSV `name` against `supported`.
/// No manifest, or no entry, means version 1 (directories written before versions).
pub fn check_csv(dir: &Path, name: &str, supported: u32) -> Result<()> {
    let text = match std::fs::read_to_string(dir.join(crate::manifest::FILE_NAME)) {
        Ok(t) => t,
        Err(_) => return Ok(()),
    };
    // Leniently: a manifest this build cannot otherwise read must not hide the CSV.
    let found = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("formats")?.get(name)?.as_u64())
        .unwrap_or(1);
    check(&dir.join(name), found, supported)
}

/// Refuses `found` when newer than `supported`.
pub(crate) fn check(path: &Path, found: u64, supported: u32) -> Result<()> {
    if found > u64::from(supported) {
        return Err(RecordError::NewerFormat {
            path: path.to_path_buf(),
            found: u32::try_from(found).unwrap_or(u32::MAX),
            supported,
        });
    }
    Ok(())
}

/// Reads a JSON file, refusing a `format_version` newer than `supported` before looking at
/// the rest (a newer shape would otherwise give a confusing field error).
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path, supported: u32) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| RecordError::io(path, e))?;
    parse_json(path, &text, supported)
}

/// [`read_json`] of text already read from `path`.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
    supported: u32,
) -> Result<T> {
    #[derive(serde::Deserialize)]
    struct Version {
        #[serde(default)]
        format_version: Option<u64>,
    }
    if let Ok(Version {
        format_version: Some(v),
    }) = serde_json::from_str::<Version>(text)
    {
        check(path, v, supported)?;
    }
    serde_json::from_str(text).map_err(|e| RecordError::json(path, e))
}

/// Writes a JSON document (pretty, newline-terminated) atomically.
pub(crate) fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| RecordError::write(path, std::io::Error::other(e)))?;
    bytes.push(b'\n');
    crate::csvio::write_atomic(path, &bytes)
}

/// Serde default of a `format_version` field absent from an old file.
pub(crate) fn one() -> u32 {
    1
}
