//! The one error type of every reader and writer: it names the file, and for a bad cell or
//! JSON value the line and column, worded for the person who has to fix it.

use std::path::PathBuf;

/// A problem reading or writing a run-directory file.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file could not be opened or read.
    #[error("could not read {path}: {error}")]
    Io {
        /// File concerned.
        path: PathBuf,
        /// Underlying error (in the message, not chained, so it is printed once).
        error: std::io::Error,
    },
    /// The file could not be created or written.
    #[error("could not write {path}: {error}")]
    Write {
        /// File concerned.
        path: PathBuf,
        /// Underlying error.
        error: std::io::Error,
    },
    /// The CSV structure itself is broken.
    #[error("{path}: line {line}: malformed CSV: {message}")]
    Csv {
        /// File concerned.
        path: PathBuf,
        /// 1-based line (0 when the reader could not tell).
        line: u64,
        /// What the CSV reader said.
        message: String,
    },
    /// A required column is missing from the header.
    #[error("{path}: missing required column `{column}` (header has: {header})")]
    MissingColumn {
        /// File concerned.
        path: PathBuf,
        /// The missing column.
        column: String,
        /// The header as found.
        header: String,
    },
    /// A CSV cell could not be parsed.
    #[error("{path}: line {line}, column `{column}`: {message} (found {value:?})")]
    BadValue {
        /// File concerned.
        path: PathBuf,
        /// 1-based line number in the file (the header is line 1).
        line: u64,
        /// Column name.
        column: String,
        /// The offending text.
        value: String,
        /// What was expected.
        message: String,
    },
    /// A JSON file does not have the expected shape.
    #[error("{path}: line {line}, column {column}: {message}")]
    Json {
        /// File concerned.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column (character in the line).
        column: usize,
        /// What serde said.
        message: String,
    },
    /// `manifest.json`'s `profile` is not a profile this build reads (a key it does not
    /// know, one missing, a value of another type): what `--resume` and `verify`, which
    /// need its meaning, say ([`crate::Manifest::readable_profile`]); readers that need only
    /// its name read the run.
    #[error("{path}: key profile: {message} (not a profile this hostd reads: written by another hostd version, or edited)")]
    Profile {
        /// File concerned.
        path: PathBuf,
        /// What serde said.
        message: String,
    },
    /// A latency log (`.hlog`) could not be parsed.
    #[error("{path}: {message}")]
    Log {
        /// File concerned.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The file has a header but no rows (where rows are required).
    #[error("{path}: no rows after the header")]
    Empty {
        /// File concerned.
        path: PathBuf,
    },
    /// The file was written by a newer hostd in a format this one does not know.
    #[error("{path} is in format version {found}, newer than this hostd reads (up to {supported}); use a newer hostd")]
    NewerFormat {
        /// File concerned.
        path: PathBuf,
        /// The version the file declares.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
    /// The file lacks something the run directory does not hold elsewhere either.
    #[error("{path}: {message}")]
    Incomplete {
        /// File concerned.
        path: PathBuf,
        /// What is missing and where it was looked for.
        message: String,
    },
}

impl RecordError {
    pub(crate) fn io(path: &std::path::Path, error: std::io::Error) -> Self {
        RecordError::Io {
            path: path.to_path_buf(),
            error,
        }
    }

    pub(crate) fn write(path: &std::path::Path, error: impl Into<std::io::Error>) -> Self {
        RecordError::Write {
            path: path.to_path_buf(),
            error: error.into(),
        }
    }

    pub(crate) fn json(path: &std::path::Path, e: serde_json::Error) -> Self {
        Self::json_at_line(path, e.line(), &e)
    }

    /// A JSON error at `line` of the file (a JSON-lines file parses each line alone, so
    /// serde's own line is always 1 there).
    pub(crate) fn json_at_line(path: &std::path::Path, line: usize, e: &serde_json::Error) -> Self {
        RecordError::Json {
            path: path.to_path_buf(),
            line,
            column: e.column(),
            // serde's own text ends in " at line L column C": said once, above.
            message: e
                .to_string()
                .split(" at line ")
                .next()
                .unwrap_or_default()
                .to_string(),
        }
    }
}

/// Result of the records crate.
pub type Result<T> = std::result::Result<T, RecordError>;
