//! JSON-lines run-directory files (`probe-link.jsonl`, `os-log.jsonl`): one record a line,
//! blank lines skipped, a line that is not a record an error naming its line.

use crate::error::{RecordError, Result};
use serde::de::DeserializeOwned;
use std::path::Path;

/// Parses the text of the JSON-lines file at `path` (`path` names it in errors).
pub(crate) fn parse<T: DeserializeOwned>(path: &Path, text: &str) -> Result<Vec<T>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| RecordError::Json {
                path: path.to_owned(),
                line: i + 1,
                column: e.column(),
                message: e.to_string(),
            })
        })
        .collect()
}

/// Reads and parses `dir/name`.
pub(crate) fn read<T: DeserializeOwned>(dir: &Path, name: &str) -> Result<Vec<T>> {
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path).map_err(|e| RecordError::io(&path, e))?;
    parse(&path, &text)
}
