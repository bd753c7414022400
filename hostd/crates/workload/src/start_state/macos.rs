//! macOS: no trim of free space a program can ask for (APFS trims free space at mount;
//! `trimforce` needs a reboot), and no per-device counters read here: a clear "not
//! available", and an idle rest becomes a timed one (recorded so).

use super::{TrimError, Trimmed};
use std::path::Path;

/// Not available on macOS.
pub(crate) fn trim_free_space(path: &Path) -> Result<Trimmed, TrimError> {
    Err(TrimError::NotAvailable(format!(
        "macOS has no trim of free space a program can ask for ({}: APFS trims at mount; `trimforce` needs a reboot)",
        path.display()
    )))
}

/// Not available on macOS.
pub(crate) fn discard_device(path: &Path) -> Result<Trimmed, TrimError> {
    Err(TrimError::NotAvailable(format!(
        "macOS has no discard of a whole device a program can ask for ({})",
        path.display()
    )))
}

/// Not read on macOS.
pub(crate) fn io_counters(device: &Path) -> Result<String, String> {
    Err(format!(
        "this build reads no I/O counters on macOS ({}): rested the window only",
        device.display()
    ))
}
