//! CPU seconds this process has used, user and system: `getrusage` on Unix
//! (`unix.rs`), `GetProcessTimes` on Windows (`windows.rs`).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::process_cpu_seconds;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::process_cpu_seconds;
