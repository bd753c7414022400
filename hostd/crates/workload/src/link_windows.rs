//! The link a target's drive sits on, on Windows: not read yet, and said so
//! rather than guessed (the Linux answer comes from sysfs, [`crate::link`]).

use crate::link::{none, LinkInfo};
use std::path::Path;

/// The link of the drive holding `path`: unknown on Windows.
pub fn link_for_path(path: &Path) -> LinkInfo {
    none(format!(
        "the bus and link speed of the drive holding {} are not read on Windows yet (unknown)",
        path.display()
    ))
}
