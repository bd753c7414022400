//! Windows: the counterpart of fstrim is a volume "retrim" (`defrag X: /L`,
//! `Optimize-Volume -ReTrim`), which needs an elevated shell and the defragmentation
//! service; hostd does not start it itself: a clear "not available" naming the command,
//! and an idle rest becomes a timed one (recorded so).

use super::{TrimError, Trimmed};
use std::path::Path;

/// Not available from hostd on Windows; names the command that does it.
pub(crate) fn trim_free_space(path: &Path) -> Result<Trimmed, TrimError> {
    Err(TrimError::NotAvailable(format!(
        "hostd does not trim on Windows; run `defrag {}: /L` (or Optimize-Volume -ReTrim) in an elevated shell before the run",
        volume_letter(path)
    )))
}

/// Not available from hostd on Windows.
pub(crate) fn discard_device(path: &Path) -> Result<Trimmed, TrimError> {
    Err(TrimError::NotAvailable(format!(
        "hostd does not discard a whole disk on Windows ({})",
        path.display()
    )))
}

/// Not read on Windows.
pub(crate) fn io_counters(device: &Path) -> Result<String, String> {
    Err(format!(
        "this build reads no I/O counters on Windows ({}): rested the window only",
        device.display()
    ))
}

/// The drive letter of `path` (`X` when it has none).
fn volume_letter(path: &Path) -> char {
    path.to_string_lossy()
        .chars()
        .next()
        .filter(char::is_ascii_alphabetic)
        .unwrap_or('X')
}
