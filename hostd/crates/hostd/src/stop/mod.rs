//! Ctrl-C (and SIGTERM on Unix) ends a run cleanly: the first sets the stop
//! flag the run polls, a second while stopping exits at once with status 130.
//! Unix: signal-hook (`unix.rs`); Windows: a console control handler (`windows.rs`).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::on_interrupt;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::on_interrupt;
