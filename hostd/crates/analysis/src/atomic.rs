//! Atomic file replacement: the one way every crate writes a run-directory file
//! that a reader may open at any time (`events.json`, `report.html`, `summary.json`,
//! the manifest, spool batches).

/// Replaces `path` atomically with `bytes` (a fresh temporary file in the
/// same directory, synced, then a rename), so readers never see half a file,
/// a crash leaves the old file or the new one, and no other file is touched.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_data())
        .with_context(|| format!("cannot write {}", path.display()))?;
    // A temporary file is private (0600); the replacement keeps the mode of
    // the file it replaces, or gets the usual 0644 (less the umask) when new.
    let mode = match std::fs::metadata(path) {
        Ok(m) => m.permissions(),
        Err(_) => default_file_permissions(),
    };
    tmp.as_file()
        .set_permissions(mode)
        .with_context(|| format!("cannot set the mode of {}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

/// The permissions `File::create` would give a new file (0666 less the
/// umask; the umask is read from /proc, as setting it to read it races with
/// other threads; 022 where /proc does not say).
fn default_file_permissions() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt as _;
    let mask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022);
    std::fs::Permissions::from_mode(0o666 & !mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn replaces_the_file_keeps_its_mode_and_leaves_nothing_else() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("summary.json");
        write_atomic(&p, b"one").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
