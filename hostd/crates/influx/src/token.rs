//! The API token: read from `INFLUX_TOKEN` or a file, never printed.

use std::fmt;
use std::path::Path;

/// Environment variable holding the InfluxDB API token.
pub const TOKEN_ENV: &str = "INFLUX_TOKEN";

/// An InfluxDB API token. `Debug` and `Display` print `Token(<redacted>)`, so a token can
/// be kept in configuration structs that are logged without leaking it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// Wraps a token string (surrounding whitespace is trimmed).
    pub fn new(secret: impl Into<String>) -> Self {
        Token(secret.into().trim().to_owned())
    }

    /// Reads the token from `file` if given, else from `INFLUX_TOKEN`.
    pub fn resolve(file: Option<&Path>) -> anyhow::Result<Token> {
        if let Some(path) = file {
            return Token::from_file(path);
        }
        match std::env::var(TOKEN_ENV) {
            Ok(v) if !v.trim().is_empty() => Ok(Token::new(v)),
            _ => anyhow::bail!(
                "no InfluxDB token: set {TOKEN_ENV} or pass --influx-token-file FILE \
                 (`hostd influx setup` writes one)"
            ),
        }
    }

    /// Reads the token from a file (first non-empty line).
    pub fn from_file(path: &Path) -> anyhow::Result<Token> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            anyhow::anyhow!("cannot read InfluxDB token file {}: {e}", path.display())
        })?;
        let line = text.lines().map(str::trim).find(|l| !l.is_empty());
        match line {
            Some(l) => Ok(Token::new(l)),
            None => anyhow::bail!("InfluxDB token file {} is empty", path.display()),
        }
    }

    /// The secret itself, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Writes the token to `path` (one line) with mode 0600, creating or truncating it.
    pub fn write_to(&self, path: &Path) -> anyhow::Result<()> {
        write_secret(path, &self.0)
    }

    /// The `Authorization` header value.
    pub fn header_value(&self) -> String {
        format!("Token {}", self.0)
    }
}

/// Writes `secret` and a newline to a new file `path` with mode 0600; fails if the file
/// exists.
pub fn write_secret_new(path: &Path, secret: &str) -> anyhow::Result<()> {
    write_secret_impl(path, secret, true)
}

/// Writes `secret` and a newline to `path` with mode 0600 (created or truncated; an
/// existing file's mode is tightened to 0600 too). For files the caller owns.
pub fn write_secret(path: &Path, secret: &str) -> anyhow::Result<()> {
    write_secret_impl(path, secret, false)
}

fn write_secret_impl(path: &Path, secret: &str, new: bool) -> anyhow::Result<()> {
    use std::io::Write as _;
    #[cfg(unix)]
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true);
    // Unix: owner only. Windows: the file inherits the ACL of its directory
    // (the user's profile is private to the user).
    #[cfg(unix)]
    opts.mode(0o600);
    if new {
        opts.create_new(true);
    } else {
        opts.create(true).truncate(true);
    }
    let mut f = opts
        .open(path)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    #[cfg(unix)]
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    f.write_all(secret.as_bytes())?;
    f.write_all(b"\n")?;
    Ok(())
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_never_show_the_secret() {
        let t = Token::new("s3cr3t-token-value");
        assert!(!format!("{t:?}").contains("s3cr3t"));
        assert!(!format!("{t}").contains("s3cr3t"));
        assert!(!format!("{:#?}", Some(&t)).contains("s3cr3t"));
        assert_eq!(t.header_value(), "Token s3cr3t-token-value");
    }

    #[test]
    #[cfg(unix)]
    fn written_token_files_are_private_and_read_back() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("token");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        Token::new("abc").write_to(&p).unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(Token::from_file(&p).unwrap().expose(), "abc");
    }

    #[test]
    fn reads_first_non_empty_line_of_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("token");
        std::fs::write(&p, "\n  abc==  \nsecond\n").unwrap();
        assert_eq!(Token::from_file(&p).unwrap().expose(), "abc==");
        std::fs::write(&p, "\n \n").unwrap();
        let err = Token::from_file(&p).unwrap_err().to_string();
        assert!(err.contains("is empty"), "{err}");
        let err = Token::from_file(&dir.path().join("missing"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot read InfluxDB token file"), "{err}");
    }
}
