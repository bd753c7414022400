//! Standard output that cannot crash a command. `println!` panics when
//! stdout is gone (`hostd analyze RUN | head -3`, a closed terminal); a
//! command's printed report is a copy of what its files keep, so losing it
//! must neither stop the command nor turn its exit into a panic.

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write error other than a closed pipe has been reported.
static WARNED: AtomicBool = AtomicBool::new(false);

/// Writes `args` to stdout. A reader that left (broken pipe) is ignored;
/// any other failure is logged once and the command goes on.
pub fn write(args: std::fmt::Arguments) {
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        if e.kind() != ErrorKind::BrokenPipe && !WARNED.swap(true, Ordering::Relaxed) {
            tracing::warn!("cannot write to standard output: {e}");
        }
    }
}

/// `print!` through [`write`].
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write(format_args!($($arg)*)) };
}

/// `println!` through [`write`].
macro_rules! outln {
    () => { $crate::out::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write(format_args!("{}\n", format_args!($($arg)*))) };
}
